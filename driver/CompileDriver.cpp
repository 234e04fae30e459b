//===- CompileDriver.cpp - One compile driver for every tool --------------===//
#include "driver/CompileDriver.h"

#include "driver/CompileCache.h"
#include "driver/RuntimeHeader.h"
#include "frontend/loader/ModelLoader.h"
#include "passes/InitAll.h"
#include "support/AtomicFile.h"
#include "support/Crash/CrashRecovery.h"
#include "support/Tool/ToolSupport.h"
#include "targets/ModelInterface.h"
#include "targets/Target.h"
#include "targets/Targets.h"

#include "dialects/Cuvil/IR/CuvilDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <regex>
#include <unistd.h>

namespace mlir::cuvil {

using ::cuvil::Error;
using ::cuvil::Result;
using ::cuvil::Status;

std::optional<EmitKind> parseEmitKind(const std::string &s) {
  if (s == "mlir") return EmitKind::Mlir;
  if (s == "llvm") return EmitKind::Llvm;
  if (s == "asm") return EmitKind::Asm;
  if (s == "obj") return EmitKind::Object;
  if (s == "so") return EmitKind::SharedLibrary;
  return std::nullopt;
}

const char *emitKindName(EmitKind kind) {
  switch (kind) {
  case EmitKind::Mlir: return "mlir";
  case EmitKind::Llvm: return "llvm";
  case EmitKind::Asm: return "asm";
  case EmitKind::Object: return "obj";
  case EmitKind::SharedLibrary: return "so";
  }
  return "?";
}

namespace {

constexpr llvm::StringLiteral kStageKernels = "kernels";

/// Marks the module as having reached a stage (cuvil.compile_stage), so
/// that the driver resumes there when given it back.
struct MarkCompileStagePass final
    : public PassWrapper<MarkCompileStagePass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(MarkCompileStagePass)
  explicit MarkCompileStagePass(std::string stage) : stage(std::move(stage)) {}
  StringRef getArgument() const override { return "cuvil-mark-compile-stage"; }
  void runOnOperation() override {
    getOperation()->setAttr(kCompileStageAttrName, StringAttr::get(&getContext(), stage));
  }
  std::string stage;
};

/// A pipeline that cannot be built (cuvil-opt --cuvil-compile with an
/// unknown target): fails with the message when it runs.
struct FailingPass final : public PassWrapper<FailingPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(FailingPass)
  explicit FailingPass(std::string message) : message(std::move(message)) {}
  StringRef getArgument() const override { return "cuvil-compile-error"; }
  void runOnOperation() override {
    getOperation().emitError() << message;
    signalPassFailure();
  }
  std::string message;
};

} // namespace

/// The model's entry: the only public function with a body, or `forward`.
FailureOr<func::FuncOp> entryFunction(ModuleOp module) {
  SmallVector<func::FuncOp> candidates;
  for (func::FuncOp f : module.getOps<func::FuncOp>())
    if (!f.isExternal() && f.isPublic())
      candidates.push_back(f);
  if (candidates.size() == 1)
    return candidates.front();
  for (func::FuncOp f : candidates)
    if (f.getSymName() == "forward")
      return f;
  return failure();
}

namespace {

Error stageError(const std::string &stage, const std::string &detail = "") {
  return ::cuvil::inputError(stage + " failed" + (detail.empty() ? " (see the diagnostics above)"
                                                                 : ": " + detail));
}

/// The phases of one compile, timed (-vv) and, on a terminal once the
/// compile has taken a second, shown as a progress line.
class PhaseClock {
public:
  explicit PhaseClock(bool progress) : progress_(progress && isatty(2)) {}
  ~PhaseClock() { finish(); }
  void begin(const std::string &phase) {
    end();
    phase_ = phase;
    phaseStart_ = std::chrono::steady_clock::now();
    ++index_;
    if (progress_ && seconds(start_) >= 1.0) {
      std::fprintf(stderr, "\r\033[Kcuvil-export: [%d] %s...", index_, phase.c_str());
      shown_ = true;
    }
  }
  void end() {
    if (!phase_.empty())
      spdlog::debug("phase '{}': {:.3f} s", phase_, seconds(phaseStart_));
    phase_.clear();
  }
  void finish() {
    end();
    if (shown_)
      std::fprintf(stderr, "\r\033[K");
    shown_ = false;
  }

private:
  static double seconds(std::chrono::steady_clock::time_point from) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - from).count();
  }
  bool progress_, shown_ = false;
  int index_ = 0;
  std::string phase_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now(), phaseStart_;
};

/// --mlir-print-ir-* and --mlir-timing on `pm`.
void applyDebugOptions(PassManager &pm, const PassDebugOptions &d) {
  if (d.timing)
    pm.enableTiming();
  if (d.printIrBeforeAll || d.printIrAfterAll || !d.printIrAfter.empty()) {
    pm.getContext()->disableMultithreading(); // module-scope printing
    auto named = [d](Pass *pass) {
      return llvm::is_contained(d.printIrAfter, pass->getArgument().str());
    };
    pm.enableIRPrinting([d](Pass *, Operation *) { return d.printIrBeforeAll; },
                        [d, named](Pass *pass, Operation *) { return d.printIrAfterAll || named(pass); },
                        /*printModuleScope=*/true, /*printAfterOnlyOnChange=*/false);
  }
}

/// Runs `pm`; a crash caught under --crash-reproducer is an internal error.
Status runPipeline(PassManager &pm, ModuleOp module, const std::string &stage,
                   const PassDebugOptions &debug = {}) {
  applyDebugOptions(pm, debug);
  ::cuvil::PipelineRun run = ::cuvil::runPassManager(pm, module);
  if (run.crashed)
    return ::cuvil::inputError("internal error in " + stage + "; the IR the failing pass was given, "
                               "and the pass, are in '" + run.reproducer +
                               "' (rerun: cuvil-opt " + run.reproducer + " --run-reproducer)");
  if (run.failed)
    return stageError(stage);
  return Status();
}

/// Cuvil's own attributes (names, memory plan) have no LLVM meaning.
void dropCuvilAttributes(ModuleOp module) {
  module->removeAttr(kCompileStageAttrName);
  module.walk([](LLVM::LLVMFuncOp f) {
    auto ownOf = [](DictionaryAttr attrs) {
      SmallVector<StringAttr> names;
      if (attrs)
        for (NamedAttribute a : attrs)
          if (a.getName().strref().starts_with("cuvil."))
            names.push_back(a.getName());
      return names;
    };
    for (unsigned i = 0; i < f.getNumArguments(); ++i)
      for (StringAttr name : ownOf(f.getArgAttrDict(i)))
        f.removeArgAttr(i, name);
    SmallVector<StringAttr> own;
    for (NamedAttribute a : f->getDiscardableAttrs())
      if (a.getName().strref().starts_with("cuvil."))
        own.push_back(a.getName());
    for (StringAttr name : own)
      f->removeAttr(name);
  });
}

std::string modelNameOf(const CompileOptions &options) {
  return options.modelName.empty() ? llvm::sys::path::stem(options.model).str() : options.modelName;
}

/// The header of a library: cuvil/runtime.h, and with a symbol prefix its
/// functions declared again as PREFIX_* under the prefix's own guard (the
/// types stay runtime.h's, so the headers of several models go together).
std::string headerText(const std::string &prefix) {
  std::string text = runtimeHeaderText();
  if (prefix.empty())
    return text;
  const std::string from = "typedef struct cuvil_model cuvil_model;\n";
  size_t begin = text.find(from), end = text.rfind("#ifdef __cplusplus\n}");
  std::string decls = begin == std::string::npos || end == std::string::npos || end < begin
                          ? std::string()
                          : text.substr(begin + from.size(), end - begin - from.size());
  static const std::regex function(R"(\bcuvil_([a-z0-9_]+)\()");
  decls = std::regex_replace(decls, function, prefix + "_$1(");
  std::string guard = llvm::StringRef(prefix).upper() + "_CUVIL_API_H";
  return text + "\n/* The C API of the library exported with --symbol-prefix " + prefix +
         ": the functions above, named " + prefix + "_* (the library has no cuvil_* ones). */\n#ifndef " +
         guard + "\n#define " + guard + "\n\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n" + decls +
         "#ifdef __cplusplus\n}\n#endif\n\n#endif /* " + guard + " */\n";
}

/// The library's SONAME: --soname, else the output's file name (so that a
/// library renamed libmlp.so and linked with -lmlp is found as that).
std::string quantizedEngineOf(const CompileOptions &options) {
  if (!options.quantizedEngine.empty())
    return options.quantizedEngine;
  return options.target == "aarch64" ? "qnnpack" : "onednn";
}

std::string sonameOf(const CompileOptions &options, const std::string &outputPath) {
  if (!options.soname.empty())
    return options.soname;
  std::string name = llvm::sys::path::filename(outputPath).str();
  return name.empty() ? "libinference.so" : name;
}

/// "libinference.so: model.pt" for Make.
std::string depfileText(const std::string &output, const std::string &model) {
  auto escape = [](const std::string &p) {
    std::string out;
    for (char c : p) {
      if (c == ' ' || c == '#')
        out += '\\';
      if (c == '$')
        out += '$';
      out += c;
    }
    return out;
  };
  return escape(output) + ": " + escape(model) + "\n";
}

/// The side outputs (header, depfile) of a finished compile.
Status writeSideOutputs(const CompileOptions &options) {
  if (!options.emitHeader.empty())
    if (Status s = ::cuvil::writeFileAtomically(options.emitHeader, headerText(options.symbolPrefix)); !s)
      return s;
  if (!options.depfile.empty())
    if (Status s = ::cuvil::writeFileAtomically(options.depfile,
                                                depfileText(options.output, options.model));
        !s)
      return s;
  return Status();
}

/// The kernel report as a table for people (-v).
std::string kernelTable(const llvm::json::Array &report) {
  std::string out;
  llvm::raw_string_ostream os(out);
  os << llvm::formatv("{0,-4} {1,-22} {2,-44} {3,-32} {4}\n", "#", "op", "shape (inputs -> output)",
                      "kernel/variant", "why");
  int index = 0;
  for (const llvm::json::Value &v : report) {
    const llvm::json::Object &e = *v.getAsObject();
    std::string shape;
    if (const llvm::json::Array *inputs = e.getArray("inputs"))
      for (size_t i = 0; i < std::min<size_t>(2, inputs->size()); ++i)
        shape += (i ? ", " : "") + (*inputs)[i].getAsString().value_or("").str();
    shape += " -> " + e.getString("output").value_or("").str();
    std::string kv = e.getString("kernel").value_or("").str();
    if (StringRef variant = e.getString("variant").value_or(""); !variant.empty())
      kv += "/" + variant.str();
    std::string why = e.getString("reason").value_or("").str();
    if (StringRef source = e.getString("source").value_or(""); !source.empty() && source != "heuristics")
      why = "[" + source.str() + "] " + why;
    if (StringRef epi = e.getString("epilogue").value_or(""); !epi.empty())
      why += " (epilogue " + epi.str() + ")";
    StringRef op = e.getString("op").value_or("");
    op.consume_front("cuvil.");
    os << llvm::formatv("{0,-4} {1,-22} {2,-44} {3,-32} {4}\n", ++index, op, shape, kv, why);
  }
  return out;
}

Status writeKernelReport(const CompileOptions &options, const CompileResult &result) {
  const llvm::json::Array &kernels = result.kernels;
  if (!kernels.empty())
    spdlog::info("kernels of '{}':\n{}", options.model, kernelTable(kernels));
  if (options.kernelReport.empty())
    return Status();
  llvm::json::Object report{{"model", options.model},
                            {"target", options.target},
                            {"cpu", result.cpu},
                            {"kernels", llvm::json::Array(kernels)},
                            {"memory", llvm::json::Object{
                                           {"arena_bytes", result.arenaBytes},
                                           {"graph_plan_bytes", result.graphPlanBytes},
                                           {"lower_bound_bytes", result.lowerBoundBytes},
                                           {"no_reuse_bytes", result.noReuseBytes}}}};
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(report))) << "\n";
  return ::cuvil::writeFileAtomically(options.kernelReport, text);
}

} // namespace

void buildCompilePipeline(OpPassManager &pm, const TargetBackend &target,
                          const GraphPipelineOptions &graph, CompileStage stopAfter) {
  buildGraphPipeline(pm, graph);
  if (stopAfter == CompileStage::Graph)
    return;
  target.buildKernelChoicePipeline(pm);
  pm.addPass(std::make_unique<MarkCompileStagePass>(kStageKernels.str()));
  if (stopAfter == CompileStage::Kernels)
    return;
  target.buildLoweringPipeline(pm);
}

namespace {

struct CompilePipelineOptions : public PassPipelineOptions<CompilePipelineOptions> {
  Option<std::string> target{*this, "target", llvm::cl::desc("The registered target"),
                             llvm::cl::init("x86_64")};
  Option<std::string> cpu{*this, "cpu", llvm::cl::desc("The CPU (the target's default if empty)")};
  Option<std::string> stopAfter{*this, "stop-after",
                                llvm::cl::desc("graph, kernels or llvm (the default)"),
                                llvm::cl::init("llvm")};
  ListOption<std::string> disable{*this, "disable",
                                  llvm::cl::desc("Graph optimizations to switch off")};
};

} // namespace

void registerCompilePipelines() {
  PassPipelineRegistration<CompilePipelineOptions>(
      "cuvil-compile",
      "cuvil-export's pipeline from cuvil IR: the graph pipeline, the target's kernel choice, "
      "its lowering to the LLVM dialect (stop-after=graph|kernels|llvm)",
      [](OpPassManager &pm, const CompilePipelineOptions &o) {
        CompileStage stage = o.stopAfter == "graph"     ? CompileStage::Graph
                             : o.stopAfter == "kernels" ? CompileStage::Kernels
                                                        : CompileStage::Llvm;
        if (o.stopAfter != "graph" && o.stopAfter != "kernels" && o.stopAfter != "llvm") {
          pm.addPass(std::make_unique<FailingPass>("cuvil-compile: stop-after must be graph, "
                                                   "kernels or llvm, got '" +
                                                   o.stopAfter + "'"));
          return;
        }
        GraphPipelineOptions graph;
        graph.disabled.insert(o.disable.begin(), o.disable.end());
        Result<std::unique_ptr<TargetBackend>> target =
            createTargetBackend(o.target, TargetOptions{o.cpu});
        if (!target) {
          pm.addPass(std::make_unique<FailingPass>("cuvil-compile: " + target.error().message));
          return;
        }
        buildCompilePipeline(pm, **target, graph, stage);
      });
}

Result<CompileResult> compileModule(ModuleOp module, const CompileOptions &options,
                                    const std::string &outputPath) {
  MLIRContext *ctx = module.getContext();
  Result<std::unique_ptr<TargetBackend>> backend =
      createTargetBackend(options.target, TargetOptions{options.cpu, options.instrument});
  if (!backend)
    return backend.error();
  const TargetBackend &target = **backend;
  FailureOr<func::FuncOp> entry = entryFunction(module);
  if (failed(entry))
    return ::cuvil::inputError("the model must have one public function (or one named 'forward')");
  std::string entryName = entry->getSymName().str();
  std::string modelName = modelNameOf(options);
  PhaseClock clock(options.debug.progress);

  // The graph pipeline, unless the IR is past it (an --emit mlir output).
  auto stage = module->getAttrOfType<StringAttr>(kCompileStageAttrName);
  if (!stage) {
    clock.begin("graph optimisation");
    PassManager graph(ctx);
    buildCompilePipeline(graph, target, options.graph, CompileStage::Graph);
    if (Status s = runPipeline(graph, module, "the graph optimisation pipeline", options.debug); !s)
      return s.error();
  } else if (stage.getValue() != kStageKernels) {
    return ::cuvil::inputError("the model's IR is at compile stage '" + stage.getValue().str() +
                               "'; cuvil-export continues from 'kernels' (its --emit mlir output)");
  }
  CompileResult result;
  auto planned = [&](StringRef name) -> int64_t {
    auto a = (*entry)->getAttrOfType<IntegerAttr>(name);
    return a ? a.getInt() : 0;
  };
  result.graphPlanBytes = planned("cuvil.memory.arena_bytes");
  result.lowerBoundBytes = planned("cuvil.memory.lower_bound_bytes");
  result.noReuseBytes = planned("cuvil.memory.total_bytes");
  FailureOr<ModelInterface> interface = readModelInterface(*entry, modelName);
  if (failed(interface))
    return stageError("reading the model's inputs and outputs");
  if (Status s = target.checkModel(*entry); !s)
    return s.error();

  // Kernel choices (those in the IR are kept), then the report.
  clock.begin("kernel choice");
  PassManager choose(ctx);
  target.buildKernelChoicePipeline(choose);
  choose.addPass(std::make_unique<MarkCompileStagePass>(kStageKernels.str()));
  if (Status s = runPipeline(choose, module, "choosing kernels for " + options.target, options.debug); !s)
    return s.error();
  result.kernels = target.kernelReport(module);
  result.cpu = target.cpu();
  if (options.emit == EmitKind::Mlir) {
    llvm::raw_string_ostream os(result.bytes);
    module.print(os);
    return result;
  }

  // Lowering to the LLVM dialect.
  clock.begin("lowering to the LLVM dialect");
  PassManager lower(ctx);
  target.buildLoweringPipeline(lower);
  if (Status s = runPipeline(lower, module, "lowering to " + options.target + " code", options.debug); !s)
    return s.error();
  if (auto f = module.lookupSymbol<LLVM::LLVMFuncOp>(entryName)) {
    if (auto arena = f->getAttrOfType<IntegerAttr>("cuvil.arena_bytes"))
      result.arenaBytes = arena.getInt();
    // Run-time checks: the function returns their status (RuntimeChecks.h).
    if (auto messages = f->getAttrOfType<ArrayAttr>("cuvil.failure_messages"))
      for (auto m : messages.getAsValueRange<StringAttr>())
        interface->failureMessages.push_back(m.str());
  }
  dropCuvilAttributes(module);
  // Objects and libraries take the weights as an object of their own: the
  // code does not depend on their values (the text stages keep them).
  WeightsTable weights;
  if (options.emit == EmitKind::Object || options.emit == EmitKind::SharedLibrary)
    if (Status s = target.extractWeights(module, weights); !s)
      return s.error();
  result.weightsBytes = weights.totalBytes();

  // LLVM IR with the descriptor the runtime reads.
  clock.begin("translation to LLVM IR");
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule = translateModuleToLLVMIR(module, llvmContext, modelName);
  if (!llvmModule)
    return stageError("translating to LLVM IR");
  DescriptorInfo info;
  info.target = target.name();
  info.cpu = target.cpu();
  info.requiredFeatures = target.requiredFeatures();
  info.arenaBytes = result.arenaBytes;
  result.requiredFeatures = info.requiredFeatures;
  std::string error;
  if (failed(addModelDescriptor(*llvmModule, entryName, *interface, info, error)))
    return stageError("building the model descriptor", error);
  if (options.emit == EmitKind::Llvm) {
    llvm::raw_string_ostream os(result.bytes);
    llvmModule->print(os, nullptr);
    return result;
  }

  clock.begin("LLVM code generation");
  Result<std::string> code =
      target.emitCode(*llvmModule, options.emit == EmitKind::Asm ? CodeKind::Assembly : CodeKind::Object);
  if (!code)
    return code.error();
  if (options.emit == EmitKind::Asm) {
    result.bytes = std::move(*code);
    return result;
  }
  clock.begin("writing the weights");
  Result<std::string> weightsObject = target.emitWeights(weights);
  if (!weightsObject)
    return weightsObject.error();
  if (options.emit == EmitKind::Object) {
    Result<std::string> combined = target.combineObjects({*code, *weightsObject}, outputPath);
    if (!combined)
      return combined.error();
    result.bytes = std::move(*combined);
    return result;
  }

  // Link next to the output; the caller renames the file into place.
  clock.begin("linking");
  llvm::SmallString<256> temp;
  if (std::error_code ec = llvm::sys::fs::createUniqueFile(outputPath + ".tmp.%%%%%%", temp))
    return ::cuvil::ioError("cannot create a temporary file next to '" + outputPath +
                            "': " + ec.message());
  // Removed should the process crash or be killed before the rename.
  llvm::sys::RemoveFileOnSignal(temp);
  if (Status s = target.link({*code, *weightsObject}, std::string(temp),
                             LinkOptions{sonameOf(options, outputPath), options.symbolPrefix});
      !s) {
    llvm::sys::fs::remove(temp);
    llvm::sys::DontRemoveFileOnSignal(temp);
    return s.error();
  }
  result.libraryTempPath = std::string(temp);
  return result;
}

std::optional<std::string> compileCacheKey(const CompileOptions &options) {
  Result<std::unique_ptr<TargetBackend>> target =
      createTargetBackend(options.target, TargetOptions{options.cpu, options.instrument});
  if (!target)
    return std::nullopt;
  std::vector<std::string> parts = (*target)->cacheKeyParts();
  for (std::string p : {"target-name=" + options.target, std::string("emit=") + emitKindName(options.emit),
                        "strategy=" + options.strategy, "name=" + modelNameOf(options),
                        "soname=" + sonameOf(options, options.output),
                        "symbol-prefix=" + options.symbolPrefix,
                        "quantized-engine=" + quantizedEngineOf(options),
                        std::string("instrument=") + (options.instrument ? "1" : "0"),
                        "version=" + ::cuvil::versionText()})
    parts.push_back(p);
  for (const std::string &d : options.graph.disabled)
    parts.push_back("disable=" + d);
  for (const std::string &shape : options.inputShapes)
    parts.push_back("shape=" + shape);
  // The compiler itself: the executable this driver runs in.
  static int anchor;
  std::string self = llvm::sys::fs::getMainExecutable(nullptr, &anchor);
  std::vector<std::string> files = (*target)->cacheKeyFiles();
  files.insert(files.begin(), self);
  return CompileCache::key(options.model, parts, files);
}

Status checkCompileOptions(const CompileOptions &options) {
  if (!lookupTarget(options.target))
    return ::cuvil::usageError("--target: unknown target '" + options.target + "' (registered: " +
                               targetNameList() + "; see --list-targets)");
  if (options.strategy != "graph_fusion")
    return ::cuvil::usageError("--strategy " + options.strategy +
                               " is not available yet (graph_fusion is)");
  std::string unknown;
  if (!checkOptimizationNames(options.graph.disabled, unknown))
    return ::cuvil::usageError("--disable-optimization: " + unknown);
  // -o - is stdout, for the text stages only.
  bool toStdout = options.output == "-";
  if (toStdout && options.emit != EmitKind::Mlir && options.emit != EmitKind::Llvm &&
      options.emit != EmitKind::Asm)
    return ::cuvil::usageError("-o -: only text (--emit mlir, llvm or asm) goes to stdout, not a " +
                               std::string(emitKindName(options.emit)) + " file");
  if (toStdout && !options.depfile.empty())
    return ::cuvil::usageError("--depfile needs an output file, not -o -");
  for (const std::string &out :
       {toStdout ? std::string() : options.output, options.emitHeader, options.depfile, options.kernelReport})
    if (!out.empty())
      if (Status s = ::cuvil::checkOutputPath(out); !s)
        return s;
  if (::cuvil::sameFile(options.model, options.output))
    return ::cuvil::usageError("the output '" + options.output + "' is the input model");
  return Status();
}

Status compile(const CompileOptions &options) {
  if (Status s = checkCompileOptions(options); !s)
    return s;
  auto start = std::chrono::steady_clock::now();

  // Remarks and kernel reports come from compiling: asking for them
  // bypasses the cache.
  const char *cacheEnv = std::getenv("CUVIL_CACHE_DIR");
  bool compileOnly = options.graph.fusionRemarks || !options.kernelReport.empty();
  CompileCache cache(compileOnly                 ? ""
                     : !options.cacheDir.empty() ? options.cacheDir
                     : cacheEnv                  ? cacheEnv
                                                 : "");
  std::optional<std::string> key;
  if (cache.enabled() && options.output != "-") // stdout: compiled every time
    key = compileCacheKey(options);
  if (key)
    if (std::optional<std::string> hit = cache.lookup(*key)) {
      if (Status s = ::cuvil::writeFileAtomically(options.output, *hit); !s)
        return s;
      if (options.emit == EmitKind::SharedLibrary) // as the linker leaves it
        llvm::sys::fs::setPermissions(options.output, llvm::sys::fs::all_read |
                                                          llvm::sys::fs::all_exe |
                                                          llvm::sys::fs::owner_write);
      spdlog::info("wrote '{}' from the compile cache (entry {})", options.output, *key);
      return writeSideOutputs(options);
    }

  DialectRegistry registry;
  registerAllDialects(registry);
  registerTargetDialects(registry);
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  ::cuvil::trackCrashContext(context);
  context.loadAllAvailableDialects();
  context.printOpOnDiagnostic(false);
  // Diagnostics as "file:line:col: error: ..." with the model's own
  // source lines (call sites as notes).
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context, llvm::errs());

  ::cuvil::LoadOptions load;
  load.inputShapes = options.inputShapes;
  load.eliminateDeadCode = !options.graph.disabled.count("dead-code-elimination");
  load.quantizedEngine = quantizedEngineOf(options);
  Result<OwningOpRef<ModuleOp>> module = ::cuvil::loadModel(context, options.model, load);
  if (!module)
    return module.error();
  spdlog::info("loaded '{}'", options.model);

  Result<CompileResult> result = compileModule(**module, options, options.output);
  if (!result)
    return result.error();

  if (options.emit == EmitKind::SharedLibrary) {
    std::error_code ec = llvm::sys::fs::rename(result->libraryTempPath, options.output);
    if (ec)
      llvm::sys::fs::remove(result->libraryTempPath);
    llvm::sys::DontRemoveFileOnSignal(result->libraryTempPath);
    if (ec)
      return ::cuvil::ioError("cannot write '" + options.output + "': " + ec.message());
  } else if (options.output == "-") {
    llvm::outs() << result->bytes;
    llvm::outs().flush();
  } else if (Status s = ::cuvil::writeFileAtomically(options.output, result->bytes); !s) {
    return s;
  }
  if (key) {
    if (options.emit == EmitKind::SharedLibrary) {
      if (auto written = llvm::MemoryBuffer::getFile(options.output, /*IsText=*/false,
                                                     /*RequiresNullTerminator=*/false))
        cache.store(*key, (*written)->getBuffer().str());
    } else {
      cache.store(*key, result->bytes);
    }
  }
  if (Status s = writeSideOutputs(options); !s)
    return s;
  if (Status s = writeKernelReport(options, *result); !s)
    return s;
  auto done = std::chrono::steady_clock::now();
  spdlog::info("wrote '{}' for {} in {:.2f} s (arena {} bytes; graph-level plan {} bytes, lower "
               "bound {}, {} without reuse; CPU features: {})",
               options.output, options.target, std::chrono::duration<double>(done - start).count(),
               result->arenaBytes, result->graphPlanBytes, result->lowerBoundBytes,
               result->noReuseBytes, fmt::join(result->requiredFeatures, ","));
  return Status();
}

} // namespace mlir::cuvil
