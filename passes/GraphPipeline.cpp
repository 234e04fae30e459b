//===- GraphPipeline.cpp - The graph optimisation pipeline ----------------===//
#include "passes/GraphPipeline.h"

#include "dialects/Cuvil/Transforms/Passes.h"
#include "plugins/PluginRegistry.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassRegistry.h"

#include "llvm/Support/Format.h"

#include <algorithm>
#include <cstdlib>

namespace mlir::cuvil {

const char *phaseName(PipelinePhase phase) {
  switch (phase) {
  case PipelinePhase::Cleanup: return "cleanup";
  case PipelinePhase::ShapePropagation: return "shape-propagation";
  case PipelinePhase::GraphOptimization: return "graph-optimization";
  case PipelinePhase::Fusion: return "fusion";
  case PipelinePhase::MemoryPlanning: return "memory-planning";
  }
  return "";
}

namespace {

using Options = GraphPipelineOptions;

std::vector<PipelineStep> makeSteps() {
  std::vector<PipelineStep> steps = {
      {"simplify", PipelinePhase::Cleanup, 10,
       "folders and canonicalization patterns (identities, view chains)",
       [](OpPassManager &pm, const Options &) { pm.addPass(createCuvilSimplifyPass()); }},
      {"fold-constants", PipelinePhase::Cleanup, 20,
       "evaluate ops whose operands are all constants",
       [](OpPassManager &pm, const Options &) { pm.addPass(createCuvilFoldConstantsPass()); }},
      {"dead-code-elimination", PipelinePhase::Cleanup, 30,
       "remove unused side-effect-free ops (effects are kept)",
       [](OpPassManager &pm, const Options &) { pm.addPass(createCuvilDeadCodeEliminationPass()); }},
      {"shape-propagation", PipelinePhase::ShapePropagation, 10,
       "refine dynamic dimensions from the ops' shape rules",
       [](OpPassManager &pm, const Options &) { pm.addPass(createCuvilInferShapesPass()); }},
      {"simplify", PipelinePhase::ShapePropagation, 20,
       "fold what known shapes make trivial",
       [](OpPassManager &pm, const Options &) { pm.addPass(createCuvilSimplifyPass()); }},
      {"unroll-loops", PipelinePhase::ShapePropagation, 30,
       "loops whose trip count is known (a counter against a static size) become straight-line code",
       [](OpPassManager &pm, const Options &) {
         pm.addPass(createCuvilUnrollLoopsPass());
         // The copies' counters fold and their shapes refine.
         pm.addPass(createCuvilFoldConstantsPass());
         pm.addPass(createCuvilInferShapesPass());
         pm.addPass(createCuvilSimplifyPass());
       }},
      {"fold-batch-norm", PipelinePhase::GraphOptimization, 10,
       "batch norm into conv/linear weights, else a per-channel scale and shift",
       [](OpPassManager &pm, const Options &o) {
         pm.addPass(createCuvilFoldBatchNormPass({/*remarks=*/o.fusionRemarks}));
       }},
      {"decompose-conv-transpose", PipelinePhase::GraphOptimization, 15,
       "transposed convolutions whose kernel is their stride as 1x1 convolutions and a reshuffle",
       [](OpPassManager &pm, const Options &) { pm.addPass(createCuvilDecomposeConvTransposePass()); }},
      {"recognize-composites", PipelinePhase::GraphOptimization, 20,
       "softmax and layer norm written out in elementary ops become single ops",
       [](OpPassManager &pm, const Options &) { pm.addPass(createCuvilRecognizeCompositesPass()); }},
      {"dead-code-elimination", PipelinePhase::GraphOptimization, 90,
       "drop the weights and statistics folding replaced",
       [](OpPassManager &pm, const Options &) { pm.addPass(createCuvilDeadCodeEliminationPass()); }},
      {"fusion", PipelinePhase::Fusion, 10,
       "conv/GEMM epilogues (bias, residual add, activation) and element-wise chains",
       [](OpPassManager &pm, const Options &o) {
         pm.addPass(createCuvilFusePass({/*remarks=*/o.fusionRemarks}));
       }},
      {"dead-code-elimination", PipelinePhase::Fusion, 90,
       "drop what fusion left unused",
       [](OpPassManager &pm, const Options &) { pm.addPass(createCuvilDeadCodeEliminationPass()); }},
      {"memory-planning", PipelinePhase::MemoryPlanning, 10,
       "one arena per function: liveness-based reuse and in-place element-wise results",
       [](OpPassManager &pm, const Options &o) {
         pm.addPass(createCuvilPlanMemoryPass({/*report=*/o.memoryReport, /*inPlace=*/true}));
       }},
      {"lifetime-check", PipelinePhase::MemoryPlanning, 20,
       "verify the plan: no tensor used after its buffer was reused",
       [](OpPassManager &pm, const Options &) { pm.addPass(createCuvilCheckLifetimesPass()); }},
  };
  return steps;
}

const std::vector<PipelineStep> &builtInSteps() {
  static const std::vector<PipelineStep> steps = makeSteps();
  return steps;
}

// Plugins may not take a built-in step's name; set before main, so before
// any plugin loads.
[[maybe_unused]] const bool reservedNamesSet = [] {
  std::set<std::string> names;
  for (const PipelineStep &s : builtInSteps())
    names.insert(s.name);
  ::cuvil::plugin::setReservedStepNames(std::move(names));
  return true;
}();

} // namespace

std::vector<PipelineStep> graphPipelineSteps() {
  std::vector<PipelineStep> steps = builtInSteps();
  for (const ::cuvil::plugin::PluginStep &p : ::cuvil::plugin::pluginSteps()) {
    const ::cuvil::plugin::PipelinePass &r = p.registration;
    steps.push_back({r.name, static_cast<PipelinePhase>(static_cast<int>(r.phase)), r.priority,
                     r.description,
                     [&p](OpPassManager &pm, const Options &o) {
                       pm.addPass(::cuvil::plugin::createPluginStepPass(p, o.target));
                     },
                     "plugin " + p.plugin});
  }
  // Built-in priorities are distinct within a phase; a plugin's step comes
  // after a built-in one of its priority, plugins in load order.
  std::vector<size_t> order(steps.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    const PipelineStep &a = steps[x], &b = steps[y];
    if (a.phase != b.phase)
      return a.phase < b.phase;
    return a.priority != b.priority ? a.priority < b.priority : x < y;
  });
  std::vector<PipelineStep> sorted;
  for (size_t i : order)
    sorted.push_back(std::move(steps[i]));
  return sorted;
}

std::vector<std::string> optimizationNames() {
  std::set<std::string> names;
  for (const PipelineStep &s : graphPipelineSteps())
    names.insert(s.name);
  return {names.begin(), names.end()};
}

bool checkOptimizationNames(const std::set<std::string> &names, std::string &error) {
  std::vector<std::string> known = optimizationNames();
  for (const std::string &n : names)
    if (!std::binary_search(known.begin(), known.end(), n)) {
      error = "unknown optimization '" + n + "'; the known ones are:";
      for (const std::string &k : known)
        error += " " + k;
      return false;
    }
  return true;
}

void buildGraphPipeline(OpPassManager &pm, const GraphPipelineOptions &options) {
  OpPassManager &fpm = pm.nest<func::FuncOp>();
  if (options.graphStats)
    fpm.addPass(createCuvilGraphStatsPass({/*record=*/true}));
  for (const PipelineStep &s : graphPipelineSteps())
    if (!options.disabled.count(s.name))
      s.add(fpm, options);
  if (options.graphStats)
    fpm.addPass(createCuvilGraphStatsPass());
}

void printGraphPipeline(llvm::raw_ostream &os, const GraphPipelineOptions &options) {
  os << "graph pipeline (strategy graph_fusion):\n";
  std::optional<PipelinePhase> phase;
  int index = 0;
  for (const PipelineStep &s : graphPipelineSteps()) {
    if (phase != s.phase) {
      phase = s.phase;
      os << "  phase " << phaseName(s.phase) << "\n";
    }
    bool off = options.disabled.count(s.name);
    os << llvm::format("    %2d. %-24s", ++index, s.name.c_str()) << " priority "
       << llvm::format("%-3d", s.priority) << " " << s.description
       << (s.origin.empty() ? "" : "  [" + s.origin + "]") << (off ? "  [disabled]" : "") << "\n";
  }
}

namespace {

struct PipelineCLOptions : public PassPipelineOptions<PipelineCLOptions> {
  ListOption<std::string> disable{*this, "disable",
                                  llvm::cl::desc("Optimizations to switch off, by name")};
  Option<bool> fusionRemarks{*this, "fusion-remarks",
                             llvm::cl::desc("Explain every rejected fusion"),
                             llvm::cl::init(false)};
  Option<bool> graphStats{*this, "graph-stats",
                          llvm::cl::desc("Print op counts before and after, on stderr"),
                          llvm::cl::init(false)};
  Option<bool> memoryReport{*this, "memory-report",
                            llvm::cl::desc("Print the memory plan's summary, on stderr"),
                            llvm::cl::init(false)};
  Option<std::string> target{*this, "target",
                             llvm::cl::desc("The target plugin constraints see (x86_64, aarch64)"),
                             llvm::cl::init("")};

  GraphPipelineOptions toOptions() const {
    GraphPipelineOptions o;
    o.target = target;
    o.disabled.insert(disable.begin(), disable.end());
    o.fusionRemarks = fusionRemarks;
    o.graphStats = graphStats;
    o.memoryReport = memoryReport;
    return o;
  }
};

/// `--cuvil-print-pipeline[='disable=a,b']`: prints the pipeline to stderr
/// and leaves the IR alone.
struct PrintPipelinePass : public PassWrapper<PrintPipelinePass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(PrintPipelinePass)
  PrintPipelinePass() = default;
  PrintPipelinePass(const PrintPipelinePass &other) : PassWrapper(other) {}
  StringRef getArgument() const override { return "cuvil-print-pipeline"; }
  StringRef getDescription() const override {
    return "Prints the graph pipeline's phases and steps (with 'disable=...' applied)";
  }
  ListOption<std::string> disable{*this, "disable",
                                  llvm::cl::desc("Optimizations to show as switched off")};
  void runOnOperation() override {
    GraphPipelineOptions o;
    o.disabled.insert(disable.begin(), disable.end());
    std::string error;
    if (!checkOptimizationNames(o.disabled, error)) {
      emitError(UnknownLoc::get(&getContext())) << error;
      return signalPassFailure();
    }
    printGraphPipeline(llvm::errs(), o);
  }
};

/// Stands in for a pipeline that could not be built: fails, with the
/// reason, when the pipeline runs (a builder has no error channel).
struct PipelineErrorPass : public PassWrapper<PipelineErrorPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(PipelineErrorPass)
  explicit PipelineErrorPass(std::string message) : message(std::move(message)) {}
  StringRef getArgument() const override { return "cuvil-pipeline-error"; }
  void runOnOperation() override {
    emitError(getOperation().getLoc()) << message;
    signalPassFailure();
  }
  std::string message;
};

} // namespace

void registerGraphPipeline() {
  PassPipelineRegistration<PipelineCLOptions>(
      "cuvil-graph-optimize",
      "The graph_fusion strategy's graph pipeline (phases: cleanup, shape propagation, graph "
      "optimization, fusion, memory planning); 'disable=NAME,...' switches steps off",
      [](OpPassManager &pm, const PipelineCLOptions &cl) {
        // Unknown names are reported when the pipeline runs: the builder
        // has no error channel, so the pipeline is one failing step instead.
        GraphPipelineOptions o = cl.toOptions();
        std::string error;
        if (!checkOptimizationNames(o.disabled, error)) {
          pm.addPass(std::make_unique<PipelineErrorPass>("cuvil-graph-optimize: " + error));
          return;
        }
        buildGraphPipeline(pm, o);
      });
  PassRegistration<PrintPipelinePass>();
}

} // namespace mlir::cuvil
