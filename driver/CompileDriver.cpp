//===- CompileDriver.cpp - One compile driver for every tool --------------===//
#include "driver/CompileDriver.h"
#include "plugins/PluginRegistry.h"

#include "cache/CompileCache.h"
#include "cache/Invocation.h"
#include "driver/CodeUnits.h"
#include "driver/RuntimeHeader.h"
#include "driver/WeightsPlan.h"
#include "frontend/loader/ModelLoader.h"
#include "passes/InitAll.h"
#include "support/AtomicFile.h"
#include "support/Staging.h"
#include "support/Crash/CrashRecovery.h"
#include "support/Tool/ToolSupport.h"
#include "targets/ModelInterface.h"
#include "targets/Target.h"
#include "targets/Targets.h"
#include "tuning/DeviceProfiles.h"
#include "tuning/TuningDatabase.h"

#include "dialects/Cuvil/IR/CuvilDialect.h"
#include "dialects/Cuvil/IR/WeightDerivations.h"
#include "dialects/Cuvil/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Support/BLAKE3.h"
#include "llvm/Support/xxhash.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <map>
#include <cstdlib>
#include <cstdio>
#include <regex>
#include <sys/stat.h>
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
    return ::cuvil::withId(::cuvil::inputError("internal error in " + stage + "; the IR the failing pass was given, "
                                               "and the pass, are in '" + run.reproducer +
                                               "' (rerun: cuvil-opt " + run.reproducer + " --run-reproducer)"),
                           "CUVIL-E-INTERNAL");
  if (run.failed)
    return stageError(stage);
  return Status();
}

/// Cuvil's own attributes (names, memory plan) have no LLVM meaning.
void dropCuvilAttributes(ModuleOp module) {
  module->removeAttr(kCompileStageAttrName);
  module->removeAttr(kCalibrationTableAttrName);
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

/// The side outputs (header, depfile) of a finished compile, staged with
/// the main one.
Status stageSideOutputs(const CompileOptions &options, ::cuvil::OutputSet &outputs) {
  if (!options.emitHeader.empty())
    if (Status s = outputs.add(options.emitHeader, headerText(options.symbolPrefix)); !s)
      return s;
  if (!options.depfile.empty())
    if (Status s = outputs.add(options.depfile, depfileText(options.output, options.model)); !s)
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

Status stageKernelReport(const CompileOptions &options, const CompileResult &result,
                         ::cuvil::OutputSet &outputs) {
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
  // Which functions were compiled and which came from the compile cache.
  llvm::json::Array units;
  for (const auto &[name, cached] : result.units)
    units.push_back(llvm::json::Object{{"function", name}, {"from_cache", cached}});
  report["code_units"] = std::move(units);
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(report))) << "\n";
  return outputs.add(options.kernelReport, text);
}

/// The files a compile for `target` runs: this executable, the target's
/// runtime archives and tuning database.
std::vector<std::string> compilerFilesOf(const TargetBackend &target) {
  static int anchor;
  std::vector<std::string> files = target.cacheKeyFiles();
  files.insert(files.begin(), llvm::sys::fs::getMainExecutable(nullptr, &anchor));
  return files;
}

/// The compiler's own identity: its version and the files whose bytes end
/// up in what it writes (compilerFilesOf).
void addCompilerIdentity(::cuvil::cache::KeyMaterial &m, const TargetBackend &target) {
  m.add("version", ::cuvil::versionText());
  for (const std::string &f : compilerFilesOf(target)) {
    llvm::sys::fs::file_status st;
    m.add("file", llvm::sys::fs::status(f, st)
                      ? f + " missing"
                      : f + " " + std::to_string(st.getSize()) + " " +
                            std::to_string(st.getLastModificationTime().time_since_epoch().count()));
  }
}

/// The LLVM triple a target compiles for (its cache key's "target=").
std::string tripleOf(const TargetBackend &target) {
  for (const std::string &p : target.cacheKeyParts())
    if (llvm::StringRef(p).starts_with("target="))
      return p.substr(7);
  return "";
}

/// "" when `bytes` is an ELF file of `type` (ET_REL, ET_DYN) for the
/// machine of `triple` and, with an `identity`, holds it in its
/// .cuvil.identity section; else what it is not.
std::string checkElf(llvm::StringRef bytes, unsigned type, const std::string &triple,
                     const std::string *identity) {
  auto object = llvm::object::ObjectFile::createObjectFile(llvm::MemoryBufferRef(bytes, "entry"));
  if (!object)
    return "not an ELF object: " + llvm::toString(object.takeError());
  auto *elf = llvm::dyn_cast<llvm::object::ELF64LEObjectFile>(object->get());
  if (!elf)
    return "not a 64-bit little-endian ELF object";
  llvm::Triple want(triple);
  unsigned machine = want.getArch() == llvm::Triple::aarch64 ? llvm::ELF::EM_AARCH64 : llvm::ELF::EM_X86_64;
  const auto &header = elf->getELFFile().getHeader();
  if (header.e_machine != machine || header.e_type != type)
    return "an ELF object of another kind or machine";
  if (!identity)
    return "";
  for (const llvm::object::SectionRef &section : elf->sections()) {
    llvm::Expected<llvm::StringRef> name = section.getName();
    if (!name) {
      llvm::consumeError(name.takeError());
      continue;
    }
    if (*name != ".cuvil.identity")
      continue;
    llvm::Expected<llvm::StringRef> contents = section.getContents();
    if (!contents) {
      llvm::consumeError(contents.takeError());
      return "its identity cannot be read";
    }
    // The key's parts, then what the compile read from the model itself.
    return contents->starts_with(*identity) ? "" : "the library of another build";
  }
  return "not a Cuvil library (no .cuvil.identity)";
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

namespace {

/// Where a library is written before it is renamed to `outputPath`: in
/// this run's staging directory (removed should the process fail, be
/// interrupted or crash; cleaned by the next run should it be killed).
Result<std::string> stagedLibraryPath(const std::string &outputPath) {
  Result<std::string> resolved = ::cuvil::resolveOutputPath(outputPath);
  if (!resolved)
    return resolved.error();
  return ::cuvil::stagingPathFor(*resolved);
}

/// A weights plan's cache entry: a header line with the JSON's length, the
/// JSON (the plan and what the build reported), the linked image.
constexpr llvm::StringLiteral kPlanMagic = "cuvil-weights-plan 1 ";

std::string planPayload(const WeightsPlan &plan, const CompileResult &result, const std::string &image,
                        const std::string &modelPath) {
  llvm::json::Object reported{{"arena_bytes", result.arenaBytes},
                              {"weights_bytes", static_cast<int64_t>(result.weightsBytes)},
                              {"cpu", result.cpu},
                              {"required_features", llvm::json::Array(result.requiredFeatures)},
                              {"kernels", llvm::json::Array(result.kernels)},
                              {"graph_plan_bytes", result.graphPlanBytes},
                              {"lower_bound_bytes", result.lowerBoundBytes},
                              {"no_reuse_bytes", result.noReuseBytes}};
  // The structure leaves the model's path out (a fine-tuned model is saved
  // under a new name); a library that holds it (a run-time check's
  // message, say) serves only models of that path.
  if (!modelPath.empty() && llvm::StringRef(image).contains(modelPath))
    reported["model_path"] = modelPath;
  std::string json;
  llvm::raw_string_ostream os(json);
  os << llvm::json::Value(llvm::json::Object{{"plan", plan.toJson()}, {"result", std::move(reported)}});
  os.flush();
  return kPlanMagic.str() + std::to_string(json.size()) + "\n" + json + image;
}

/// The JSON and the image of a plan entry, or nothing.
std::optional<std::pair<llvm::StringRef, llvm::StringRef>> splitPlanPayload(llvm::StringRef payload) {
  if (!payload.consume_front(kPlanMagic))
    return std::nullopt;
  auto [count, rest] = payload.split('\n');
  uint64_t n = 0;
  if (count.getAsInteger(10, n) || n > rest.size())
    return std::nullopt;
  return std::make_pair(rest.take_front(n), rest.drop_front(n));
}

/// The key of a model structure's weights plan: the output's key with the
/// structure's digest in place of the model file's, and the sizes of the
/// slots of the model's name and the SONAME in place of the names (both
/// are placed after the link).
std::optional<::cuvil::cache::KeyMaterial> planKeyMaterial(const CompileOptions &options, ModuleOp module) {
  std::optional<::cuvil::cache::KeyMaterial> m =
      outputKeyMaterial(options, "structure-" + structureDigest(module, options.model));
  if (!m || m->parts.empty() || m->parts.front() != "level=lib")
    return m;
  m->parts.front() = "level=plan";
  for (std::string &p : m->parts)
    if (llvm::StringRef(p).starts_with("name="))
      p = "name-slot=" + std::to_string(nameSlotBytes(modelNameOf(options).size()));
    else if (llvm::StringRef(p).starts_with("soname="))
      p = "soname-slot=" + std::to_string(nameSlotBytes(sonameOf(options, options.output).size()));
  return m;
}

/// The library of `module` from a weights plan entry: its weights made from
/// the model's tensors, placed in the entry's linked image.
Result<CompileResult> compileFromPlan(llvm::StringRef payload, ModuleOp module, const TargetBackend &target,
                                      const std::string &outputPath, const std::string &identity,
                                      const llvm::StringMap<DenseResourceElementsAttr> &tensors,
                                      const std::string &modelPath, const std::string &modelName,
                                      const std::string &soname) {
  std::optional<std::pair<llvm::StringRef, llvm::StringRef>> parts = splitPlanPayload(payload);
  if (!parts)
    return ::cuvil::inputError("a malformed weights plan entry");
  llvm::Expected<llvm::json::Value> json = llvm::json::parse(parts->first);
  if (!json) {
    llvm::consumeError(json.takeError());
    return ::cuvil::inputError("a malformed weights plan entry");
  }
  const llvm::json::Object *o = json->getAsObject();
  const llvm::json::Value *planJson = o ? o->get("plan") : nullptr;
  const llvm::json::Object *reported = o ? o->getObject("result") : nullptr;
  if (!planJson || !reported)
    return ::cuvil::inputError("a malformed weights plan entry");
  if (std::optional<llvm::StringRef> path = reported->getString("model_path"); path && *path != modelPath)
    return ::cuvil::inputError("its library holds the path of the model it was built from, '" + path->str() + "'");
  Result<WeightsPlan> plan = WeightsPlan::fromJson(*planJson);
  if (!plan)
    return plan.error();
  auto started = std::chrono::steady_clock::now();
  Result<std::unique_ptr<ReplayedWeights>> replayed = replayWeightsPlan(*plan, tensors, modelName, module.getContext());
  spdlog::debug("weights plan: {} weights made in {:.3f} s", plan->symbols.size(),
                std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  if (!replayed)
    return replayed.error();
  WeightsTable &table = (*replayed)->table;
  table.identity = identity;
  table.soname = soname;
  Result<std::string> temp = stagedLibraryPath(outputPath);
  if (!temp)
    return temp.error();
  if (Status s = target.placeWeights(parts->second, table, *temp); !s) {
    llvm::sys::fs::remove(*temp);
    ::cuvil::releaseStaged(*temp);
    return s.error();
  }
  CompileResult result;
  result.libraryTempPath = *temp;
  result.arenaBytes = reported->getInteger("arena_bytes").value_or(0);
  result.weightsBytes = 0; // the model's, not its name
  for (const WeightsTable::Symbol &s : table.symbols)
    if (s.name != kModelNameSymbol)
      result.weightsBytes += s.bytes.size();
  if (std::optional<llvm::StringRef> cpu = reported->getString("cpu"))
    result.cpu = cpu->str();
  if (const llvm::json::Array *f = reported->getArray("required_features"))
    for (const llvm::json::Value &v : *f)
      if (std::optional<llvm::StringRef> s = v.getAsString())
        result.requiredFeatures.push_back(s->str());
  if (const llvm::json::Array *k = reported->getArray("kernels"))
    result.kernels = *k;
  result.graphPlanBytes = reported->getInteger("graph_plan_bytes").value_or(0);
  result.lowerBoundBytes = reported->getInteger("lower_bound_bytes").value_or(0);
  result.noReuseBytes = reported->getInteger("no_reuse_bytes").value_or(0);
  result.weightsReplayed = true;
  result.replayedWeights = plan->symbols.size();
  result.replayedDerivations = plan->derivations();
  return result;
}

} // namespace

Result<CompileResult> compileModule(ModuleOp module, const CompileOptions &options,
                                    const std::string &outputPath,
                                    ::cuvil::cache::CompileCache *cache) {
  MLIRContext *ctx = module.getContext();
  Result<std::unique_ptr<TargetBackend>> backend =
      createTargetBackend(options.target, targetOptionsOf(options));
  if (!backend)
    return backend.error();
  const TargetBackend &target = **backend;
  FailureOr<func::FuncOp> entry = entryFunction(module);
  if (failed(entry))
    return ::cuvil::inputError("the model must have one public function (or one named 'forward')");
  std::string entryName = entry->getSymName().str();
  std::string modelName = modelNameOf(options);
  PhaseClock clock(options.debug.progress);
  // What the library says it is the build of: the key's parts, then what
  // the model itself says it was built from.
  // Padded as if the model's name and the SONAME filled their slots: the
  // identity is as long in every build of one weights plan key.
  std::string soname = sonameOf(options, outputPath);
  auto identityOf = [&](ModuleOp m) {
    std::string identity = options.libraryIdentity;
    if (!identity.empty()) {
      auto table = m->getAttrOfType<StringAttr>(kCalibrationTableAttrName);
      identity += "calibration-table=" + (table && !table.getValue().empty() ? table.getValue().str() : "none") + "\n";
      identity.append(nameSlotBytes(modelName.size()) - modelName.size() + nameSlotBytes(soname.size()) - soname.size(),
                      '\n');
    }
    return identity;
  };

  // A model fresh from the importer, built into a cache: a model of the
  // same structure built before left a weights plan, which makes this
  // library from the cached image and this model's tensors alone.
  std::optional<::cuvil::cache::KeyMaterial> planKey;
  llvm::StringMap<DenseResourceElementsAttr> modelTensorsByKey;
  std::string planIdentity;
  if (cache && cache->enabled() && options.emit == EmitKind::SharedLibrary &&
      !module->getAttr(kCompileStageAttrName)) {
    clock.begin("weights plan");
    if (WeightDerivations *log = weightDerivations(ctx))
      log->clear();
    planKey = planKeyMaterial(options, module);
    modelTensorsByKey = modelTensors(module);
    planIdentity = identityOf(module);
    std::string triple = tripleOf(target);
    if (planKey)
      if (std::optional<::cuvil::cache::CacheHit> hit = cache->lookup(
              ::cuvil::cache::EntryKind::WeightsPlan, *planKey, [&](llvm::StringRef payload) -> std::string {
                auto parts = splitPlanPayload(payload);
                if (!parts)
                  return "not a weights plan";
                // Copied: the image lies at any alignment in the entry.
                return checkElf(parts->second.str(), llvm::ELF::ET_DYN, triple, nullptr);
              })) {
        Result<CompileResult> r = compileFromPlan(hit->payload, module, target, outputPath, planIdentity,
                                                  modelTensorsByKey, options.model, modelName, soname);
        if (r)
          return r;
        spdlog::info("compile cache: the weights plan of this structure does not serve ({}): compiling",
                     r.error().message);
      }
  }
  // Run-time sizes are the hybrid strategy's: the others compile one shape.
  if (options.strategy != "hybrid")
    for (auto [i, type] : llvm::enumerate(entry->getArgumentTypes()))
      if (auto t = llvm::dyn_cast<RankedTensorType>(type); t && !t.hasStaticShape()) {
        std::string shape;
        llvm::raw_string_ostream os(shape);
        os << t;
        return ::cuvil::usageError(
            "input " + std::to_string(i) + " has a dynamic shape (" + shape + "): --strategy " +
            options.strategy + " compiles one shape; give every dimension with --input-shape, or "
            "compile the run-time sizes with --strategy hybrid (bounds as in 0=batch:1..64x16xf32)");
      }

  // The graph pipeline, unless the IR is past it (an --emit mlir output).
  auto stage = module->getAttrOfType<StringAttr>(kCompileStageAttrName);
  if (!stage && !options.specialize.empty()) {
    clock.begin("shape specialisation");
    PassManager specialize(ctx);
    CuvilSpecializeShapesPassOptions so;
    so.sizes = options.specialize;
    specialize.addPass(createCuvilSpecializeShapesPass(so));
    if (Status s = runPipeline(specialize, module, "specialising shapes (--specialize)", options.debug); !s)
      return s.error();
  }
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
    // Dynamic outputs' largest sizes (cuvil-run-time-shape-arguments), in
    // order: the capacity a caller's buffer needs.
    if (auto maxima = f->getAttrOfType<ArrayAttr>("cuvil.output_max_shapes")) {
      size_t next = 0;
      for (TensorSignature &o : interface->outputs) {
        if (!o.isDynamic() || next >= maxima.size())
          continue;
        auto shape = llvm::dyn_cast<DenseI64ArrayAttr>(maxima[next++]);
        if (!shape || size_t(shape.size()) < o.shape.size() || llvm::is_contained(shape.asArrayRef(), -1))
          continue; // no bound: the caller gives its capacity
        o.maxShape.assign(shape.asArrayRef().begin(), shape.asArrayRef().begin() + o.shape.size());
        o.minShape.clear();
        for (int64_t d : o.shape)
          o.minShape.push_back(d < 0 ? 0 : d);
      }
    }
  }
  // A device target's copy of the model function (--target cuda) and its
  // kernels: the descriptor's device part; the arena serves both.
  DescriptorInfo deviceInfo;
  if (auto cuda = module->getAttrOfType<DictionaryAttr>("cuvil.cuda")) {
    deviceInfo.cudaFunction = entryName + "__cuda";
    if (auto fallback = cuda.getAs<BoolAttr>("cpu_fallback"))
      deviceInfo.cudaCpuFallback = fallback.getValue();
    if (auto kernels = cuda.getAs<ArrayAttr>("kernels"))
      for (auto k : kernels.getAsValueRange<StringAttr>())
        deviceInfo.cudaKernels.push_back(k.str());
    if (auto images = cuda.getAs<ArrayAttr>("images"))
      for (auto image : images.getAsRange<DictionaryAttr>()) {
        DescriptorInfo::CudaImage i;
        i.cubin = image.getAs<StringAttr>("kind").getValue() == "cubin";
        i.sm = image.getAs<IntegerAttr>("sm").getInt();
        i.bytes = image.getAs<StringAttr>("data").getValue().str();
        deviceInfo.cudaImages.push_back(std::move(i));
      }
    module->removeAttr("cuvil.cuda");
    if (auto f = module.lookupSymbol<LLVM::LLVMFuncOp>(deviceInfo.cudaFunction)) {
      if (auto arena = f->getAttrOfType<IntegerAttr>("cuvil.arena_bytes"))
        result.arenaBytes = std::max<int64_t>(result.arenaBytes, arena.getInt());
      // The CPU function may be a stub without the model's checks.
      if (auto messages = f->getAttrOfType<ArrayAttr>("cuvil.failure_messages");
          messages && interface->failureMessages.empty())
        for (auto m : messages.getAsValueRange<StringAttr>())
          interface->failureMessages.push_back(m.str());
    }
  }
  // What the model itself says it was built from goes into the identity
  // after the key's parts (a function of the model's bytes, so the key
  // still decides).
  std::string identity = identityOf(module);
  dropCuvilAttributes(module);
  // Objects and libraries take the weights as an object of their own: the
  // code does not depend on their values (the text stages keep them).
  WeightsTable weights;
  std::string nameBytes; // the model's name in its slot, when the table has it
  bool placedNames = (options.emit == EmitKind::Object || options.emit == EmitKind::SharedLibrary) &&
                     target.hasWeightsTable();
  if (options.emit == EmitKind::Object || options.emit == EmitKind::SharedLibrary)
    if (Status s = target.extractWeights(module, weights); !s)
      return s.error();
  result.weightsBytes = weights.totalBytes(); // the model's, not its name
  if (placedNames) {
    nameBytes = modelName;
    nameBytes.resize(nameSlotBytes(modelName.size()), '\0');
    weights.symbols.push_back({kModelNameSymbol, 1, llvm::ArrayRef<char>(nameBytes.data(), nameBytes.size()), {}});
    if (options.emit == EmitKind::SharedLibrary)
      weights.soname = soname;
  }
  weights.identity = identity;

  // LLVM IR with the descriptor the runtime reads.
  clock.begin("translation to LLVM IR");
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule = translateModuleToLLVMIR(module, llvmContext, modelName);
  if (!llvmModule)
    return stageError("translating to LLVM IR");
  DescriptorInfo info = std::move(deviceInfo);
  info.target = target.name();
  info.cpu = target.cpu();
  info.requiredFeatures = target.requiredFeatures();
  info.arenaBytes = result.arenaBytes;
  info.modelNameSlot = placedNames ? nameBytes.size() : 0;
  result.requiredFeatures = info.requiredFeatures;
  std::string error;
  if (failed(addModelDescriptor(*llvmModule, entryName, *interface, info, error)))
    return stageError("building the model descriptor", error);
  if (options.emit == EmitKind::Llvm) {
    llvm::raw_string_ostream os(result.bytes);
    llvmModule->print(os, nullptr);
    return result;
  }

  if (options.emit == EmitKind::Asm) {
    clock.begin("LLVM code generation");
    Result<std::string> code = target.emitCode(*llvmModule, CodeKind::Assembly);
    if (!code)
      return code.error();
    result.bytes = std::move(*code);
    return result;
  }

  // Objects: one per function and one of data, each from the cache when
  // the same code was compiled before (its key is its LLVM IR, the
  // weights left out, and the machine).
  clock.begin("LLVM code generation");
  std::vector<CodeUnit> units = splitIntoUnits(*llvmModule);
  bool useCache = cache && cache->enabled();
  std::string triple = tripleOf(target);
  ::cuvil::cache::KeyMaterial machine;
  for (const std::string &p : target.cacheKeyParts())
    machine.parts.push_back(p);
  addCompilerIdentity(machine, target);
  std::vector<std::string> objects;
  llvm::BLAKE3 codeDigest;
  for (CodeUnit &unit : units) {
    ::cuvil::cache::KeyMaterial material;
    if (useCache) {
      std::string ir;
      llvm::raw_string_ostream os(ir);
      unit.module->print(os, nullptr);
      material.add("level", "code");
      material.add("unit", unit.name);
      material.add("ir", ::cuvil::cache::digest(ir));
      material.parts.insert(material.parts.end(), machine.parts.begin(), machine.parts.end());
      codeDigest.update(llvm::arrayRefFromStringRef(material.key()));
      if (std::optional<::cuvil::cache::CacheHit> hit =
              cache->lookup(::cuvil::cache::EntryKind::Code, material, [&](llvm::StringRef payload) {
                return checkElf(payload, llvm::ELF::ET_REL, triple, nullptr);
              })) {
        objects.push_back(hit->payload.str());
        result.units.push_back({unit.name, true});
        continue;
      }
    }
    Result<std::string> code = target.emitCode(*unit.module, CodeKind::Object);
    if (!code)
      return code.error();
    if (useCache)
      cache->store(::cuvil::cache::EntryKind::Code, material, *code);
    objects.push_back(std::move(*code));
    result.units.push_back({unit.name, false});
  }
  if (useCache) {
    result.codeKey = llvm::toHex(codeDigest.final(), /*LowerCase=*/true);
    result.codeFromCache = llvm::all_of(result.units, [](const auto &u) { return u.second; });
    // For --cache-explain only: a fast checksum is enough.
    uint64_t h = 0;
    for (const WeightsTable::Symbol &w : weights.symbols)
      h = h * 1000003 ^ llvm::xxh3_64bits(llvm::arrayRefFromStringRef(llvm::StringRef(w.bytes.data(), w.bytes.size())));
    result.weightsDigest = llvm::utohexstr(h, /*LowerCase=*/true);
  }
  if (options.emit == EmitKind::Object) {
    clock.begin("writing the weights");
    Result<std::string> weightsObject = target.emitWeights(weights);
    if (!weightsObject)
      return weightsObject.error();
    objects.push_back(std::move(*weightsObject));
    Result<std::string> combined = target.combineObjects(objects, outputPath);
    if (!combined)
      return combined.error();
    result.bytes = std::move(*combined);
    return result;
  }

  // Link next to the output; the caller renames the file into place.
  clock.begin("linking");
  Result<std::string> temp = stagedLibraryPath(outputPath);
  if (!temp)
    return temp.error();
  // Should the linker fail to write (lld ends a write error, a full disk,
  // with a fatal error), the report names the output.
  std::string linking = "linking '" + outputPath + "'";
  ::cuvil::CrashFrame frame(linking);
  // The weights go in as the library is written (the target places them).
  LinkOptions link{sonameOf(options, outputPath), options.symbolPrefix};
  link.weights = &weights;
  std::string image;
  if (planKey)
    link.linkedImage = &image;
  if (Status s = target.link(objects, *temp, link); !s) {
    llvm::sys::fs::remove(*temp);
    ::cuvil::releaseStaged(*temp);
    // The link writes the staged file: the error names the output.
    if (s.error().code == ::cuvil::kExitIOError && !llvm::StringRef(s.error().message).starts_with("cannot"))
      return ::cuvil::ioError("cannot write '" + outputPath + "': " + s.error().message);
    return s.error();
  }
  result.libraryTempPath = *temp;
  // The weights plan, for the next build of this structure.
  if (planKey && !image.empty()) {
    Result<WeightsPlan> plan = buildWeightsPlan(weights, modelTensorsByKey, ctx);
    if (plan && identity == planIdentity)
      cache->store(::cuvil::cache::EntryKind::WeightsPlan, *planKey, planPayload(*plan, result, image, options.model));
    else
      spdlog::info("compile cache: no weights plan for this model ({}): a build with new weights compiles again",
                   plan ? std::string("its identity changed in the compile") : plan.error().message);
  }
  return result;
}

std::optional<::cuvil::cache::KeyMaterial> outputKeyMaterial(const CompileOptions &options,
                                                              const std::string &knownModelDigest,
                                                              std::vector<std::string> *compilerFiles) {
  Result<std::unique_ptr<TargetBackend>> target =
      createTargetBackend(options.target, targetOptionsOf(options));
  if (!target)
    return std::nullopt;
  std::string modelDigest = knownModelDigest;
  if (modelDigest.empty()) {
    // Read, not mapped: a model truncated meanwhile is then no SIGBUS.
    std::optional<std::string> digest = ::cuvil::cache::digestFile(options.model);
    if (!digest)
      return std::nullopt;
    modelDigest = *digest;
  }
  ::cuvil::cache::KeyMaterial m;
  m.add("level", "lib");
  m.add("model", modelDigest);
  for (const std::string &p : (*target)->cacheKeyParts())
    m.parts.push_back(p);
  m.add("target-name", options.target);
  m.add("emit", emitKindName(options.emit));
  m.add("strategy", options.strategy);
  m.add("specialize", options.specialize);
  m.add("name", modelNameOf(options));
  m.add("soname", sonameOf(options, options.output));
  m.add("symbol-prefix", options.symbolPrefix);
  m.add("quantized-engine", quantizedEngineOf(options));
  m.add("instrument", options.instrument ? "1" : "0");
  for (const std::string &d : options.graph.disabled)
    m.add("disable", d);
  for (const std::string &shape : options.inputShapes)
    m.add("shape", shape);
  // A loaded plugin changes what the pipeline does: its file's digest and
  // its steps' names (a plugin that cannot be read leaves the output
  // uncached).
  std::set<std::string> pluginFiles;
  for (const ::cuvil::plugin::PluginStep &p : ::cuvil::plugin::pluginSteps()) {
    m.add("plugin-step", p.registration.name);
    pluginFiles.insert(p.path);
  }
  for (const std::string &path : pluginFiles) {
    std::optional<std::string> digest = ::cuvil::cache::digestFile(path);
    if (!digest)
      return std::nullopt;
    m.add("plugin", *digest);
  }
  addCompilerIdentity(m, **target);
  if (compilerFiles)
    *compilerFiles = compilerFilesOf(**target);
  return m;
}

TargetOptions targetOptionsOf(const CompileOptions &options) {
  TargetOptions t{options.cpu, options.instrument};
  t.loweringRemarks = options.loweringRemarks;
  t.partitionReport = options.npuPartitionReport;
  t.targetOptions = options.targetOptions;
  t.cudaArch = options.cudaArch;
  if (!options.deviceProfile.empty())
    if (::cuvil::Result<::cuvil::tuning::DeviceProfile> p = ::cuvil::tuning::loadDeviceProfile(options.deviceProfile)) {
      t.cpu = p->cpu();
      t.features = ::cuvil::tuning::featureString(*p);
      for (const ::cuvil::tuning::CacheLevel &c : p->caches())
        if (c.level() == 2)
          t.cacheBytes = c.size_bytes();
    }
  if (options.strategy != "graph_fusion")
    t.tuningDb = options.tuningDb;
  return t;
}

Status checkCompileOptions(const CompileOptions &options) {
  if (options.target.find(',') != std::string::npos) {
    if (::cuvil::Result<std::unique_ptr<TargetBackend>> t = createTargetBackend(options.target, targetOptionsOf(options)); !t)
      return ::cuvil::usageError("--target: " + t.error().message);
  } else if (!lookupTarget(options.target)) {
    return ::cuvil::usageError("--target: unknown target '" + options.target + "' (registered: " +
                               targetNameList() + "; see --list-targets)");
  }
  if (!options.cudaArch.empty() && options.target.find("cuda") == std::string::npos)
    return ::cuvil::usageError("--cuda-arch: only --target cuda (or x86_64,cuda) compiles CUDA kernels (this "
                               "build's target is " + options.target + ")");
  if (!options.cudaArch.empty())
    if (::cuvil::Result<std::unique_ptr<TargetBackend>> t = createTargetBackend(options.target, targetOptionsOf(options)); !t)
      return t.error();
  if (options.strategy != "graph_fusion" && options.strategy != "autotune" &&
      options.strategy != "hybrid")
    return ::cuvil::usageError("--strategy: unknown strategy '" + options.strategy +
                               "' (the strategies: graph_fusion, autotune, hybrid)");
  if (!options.specialize.empty() && options.strategy != "hybrid")
    return ::cuvil::usageError("--specialize adds static copies of a model with run-time dimensions: it "
                               "needs --strategy hybrid (this build's strategy is " + options.strategy + ")");
  if (options.strategy == "autotune" && options.tuningDb.empty())
    return ::cuvil::usageError("--strategy autotune takes its kernel configurations from a tuning "
                               "database: give one with --tuning-db FILE (made by cuvil-autotune tune)");
  if (options.strategy == "graph_fusion" && !options.tuningDb.empty())
    return ::cuvil::usageError("--tuning-db is read by --strategy autotune and hybrid (this build's "
                               "strategy is " + options.strategy + ")");
  if (!options.tuningDb.empty())
    if (::cuvil::Result<::cuvil::tuning::TuningDatabase> db = ::cuvil::tuning::readTuningDatabase(options.tuningDb); !db)
      return db.error();
  if (!options.deviceProfile.empty()) {
    if (!options.cpu.empty())
      return ::cuvil::usageError("--cpu and --device-profile both name the machine: give one of them");
    ::cuvil::Result<::cuvil::tuning::DeviceProfile> p = ::cuvil::tuning::loadDeviceProfile(options.deviceProfile);
    if (!p)
      return p.error();
    if (p->target() != options.target)
      return ::cuvil::usageError("--device-profile '" + options.deviceProfile + "' is a profile of a " +
                                 p->target() + " device, not of --target " + options.target);
    if (::cuvil::Result<std::unique_ptr<TargetBackend>> t = createTargetBackend(options.target, targetOptionsOf(options)); !t)
      return ::cuvil::usageError("--device-profile '" + options.deviceProfile + "': " + t.error().message);
  }
  if (!options.npuPartitionReport.empty() && options.target != "npu")
    return ::cuvil::usageError("--npu-partition-report: only --target npu partitions a model (this build's "
                               "target is " + options.target + ")");
  if (!options.targetOptions.empty())
    if (::cuvil::Result<std::unique_ptr<TargetBackend>> t = createTargetBackend(options.target, targetOptionsOf(options)); !t)
      return t.error();
  if (Status s = ::cuvil::checkInputShapes(options.inputShapes); !s)
    return s;
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
       {toStdout ? std::string() : options.output, options.emitHeader, options.depfile, options.kernelReport,
        options.npuPartitionReport})
    if (!out.empty())
      if (Status s = ::cuvil::checkOutputPath(out); !s)
        return s;
  if (::cuvil::sameFile(options.model, options.output))
    return ::cuvil::usageError("the output '" + options.output + "' is the input model");
  // Two outputs of one run in one file would overwrite each other.
  std::vector<std::pair<const char *, std::string>> outputs;
  for (const auto &[flag, path] : {std::pair<const char *, std::string>{"--output", toStdout ? "" : options.output},
                                   {"--emit-header", options.emitHeader},
                                   {"--depfile", options.depfile},
                                   {"--kernel-report", options.kernelReport},
                                   {"--npu-partition-report", options.npuPartitionReport}}) {
    if (path.empty())
      continue;
    Result<std::string> resolved = ::cuvil::resolveOutputPath(path);
    if (!resolved)
      return resolved.error();
    for (const auto &[otherFlag, other] : outputs)
      if (other == *resolved || ::cuvil::sameFile(other, *resolved))
        return ::cuvil::usageError(std::string(flag) + " '" + path + "' is the same file as " + otherFlag +
                                   ": give each output its own path");
    outputs.emplace_back(flag, *resolved);
    if (::cuvil::sameFile(options.model, *resolved))
      return ::cuvil::usageError(std::string(flag) + " '" + path + "' is the input model");
  }
  return Status();
}

namespace {

/// What a library says it is the build of: the key's parts but the
/// compiler's files (whose times differ between identical compilers).
std::string identityText(const ::cuvil::cache::KeyMaterial &m) {
  std::string text = "cuvil library\n";
  for (const std::string &p : m.parts)
    if (!llvm::StringRef(p).starts_with("file="))
      text += p + "\n";
  return text;
}

std::string envOr(const std::string &value, const char *name) {
  const char *env = std::getenv(name);
  return !value.empty() ? value : env ? env : "";
}

/// --cache-explain: which parts of the key differ from the last build of
/// the same output.
void explainCache(const std::string &output, const std::optional<::cuvil::cache::KeyMaterial> &before,
                  const ::cuvil::cache::KeyMaterial &now, bool outputHit) {
  auto byName = [](const ::cuvil::cache::KeyMaterial &m) {
    std::map<std::string, std::string> out;
    for (const std::string &p : m.parts) {
      size_t eq = p.find('=');
      std::string &v = out[p.substr(0, eq)];
      v += (v.empty() ? "" : ", ") + (eq == std::string::npos ? "" : p.substr(eq + 1));
    }
    return out;
  };
  auto shorten = [](const std::string &v) { return v.size() > 40 ? v.substr(0, 16) + "..." : v; };
  std::string text;
  if (!before) {
    text = "no earlier build of '" + output + "' in this cache";
  } else {
    std::map<std::string, std::string> a = byName(*before), b = byName(now);
    std::vector<std::string> changes;
    for (const auto &[name, value] : b)
      if (!::cuvil::cache::isBuildRecordPart(name + "=") && a[name] != value)
        changes.push_back(name + " (" + shorten(a[name]) + " -> " + shorten(value) + ")");
    for (const auto &[name, value] : a)
      if (!b.count(name) && !::cuvil::cache::isBuildRecordPart(name + "="))
        changes.push_back(name + " (" + shorten(value) + " -> none)");
    if (changes.empty()) {
      text = "nothing changed since the last build of '" + output + "'";
    } else {
      text = "since the last build of '" + output + "': ";
      for (size_t i = 0; i < changes.size(); ++i)
        text += (i ? "; " : "") + changes[i];
      if (!outputHit && b.count("code") && a.count("code")) {
        bool sameCode = a["code"] == b["code"], sameWeights = a["weights"] == b["weights"];
        text += sameCode ? "; the code is the same (relinked with "
                         : "; the code changed (compiled again";
        text += sameWeights ? std::string(sameCode ? "the same weights)" : ", the same weights)")
                            : std::string(sameCode ? "new weights)" : ", new weights)");
      }
    }
  }
  std::fprintf(stderr, "cuvil-export: cache: %s\n", text.c_str());
}

void printCacheStats(const ::cuvil::cache::CompileCache &cache, const std::string &dir) {
  using ::cuvil::cache::EntryKind;
  ::cuvil::cache::DirectoryStats totals = ::cuvil::cache::directoryStats(dir);
  std::fprintf(stderr, "cuvil-export: cache statistics (this export; all exports into '%s'):\n",
               dir.c_str());
  std::fprintf(stderr, "  %-6s %9s %9s %9s %9s %9s   %s\n", "level", "hits", "remote", "misses",
               "corrupt", "refused", "entries");
  for (EntryKind kind : {EntryKind::Library, EntryKind::Code, EntryKind::WeightsPlan}) {
    const ::cuvil::cache::LevelCounters &c = cache.counters(kind);
    std::string level = ::cuvil::cache::entryKindName(kind);
    auto total = [&](const char *name) { return (long long)totals.counters[level + "." + name]; };
    std::fprintf(stderr, "  %-6s %4lld/%-4lld %4lld/%-4lld %4lld/%-4lld %4lld/%-4lld %4lld/%-4lld   %lld, %s\n",
                 level.c_str(), (long long)c.hits, total("hits"), (long long)c.remoteHits,
                 total("remote_hits"), (long long)c.misses, total("misses"), (long long)c.corrupt,
                 total("corrupt"), (long long)c.refused, total("refused"),
                 (long long)totals.entries[int(kind)],
                 ::cuvil::cache::formatBytes(totals.bytes[int(kind)]).c_str());
  }
}

/// The last build of this output had this very key and left the output as
/// it still is: nothing to write.
bool outputUpToDate(const std::optional<::cuvil::cache::KeyMaterial> &last,
                    const ::cuvil::cache::KeyMaterial &material, const std::string &output) {
  if (!last)
    return false;
  std::string recorded = ::cuvil::cache::partValue(*last, "output-file");
  return ::cuvil::cache::keyOfRecord(*last).parts == material.parts && !recorded.empty() &&
         recorded == ::cuvil::cache::fileStateText(output);
}

} // namespace

Status compile(const CompileOptions &requested) {
  if (Status s = checkCompileOptions(requested); !s)
    return s;
  auto start = std::chrono::steady_clock::now();
  CompileOptions options = requested;

  ::cuvil::cache::CacheOptions cacheOptions;
  cacheOptions.dir = envOr(options.cacheDir, "CUVIL_CACHE_DIR");
  cacheOptions.remote = envOr(options.remoteCache, "CUVIL_REMOTE_CACHE");
  if (options.cacheMaxBytes)
    cacheOptions.maxBytes = options.cacheMaxBytes;
  else if (std::string env = envOr("", "CUVIL_CACHE_MAX_SIZE"); !env.empty()) {
    if (std::optional<uint64_t> n = ::cuvil::cache::parseSize(env))
      cacheOptions.maxBytes = *n;
    else
      spdlog::warn("CUVIL_CACHE_MAX_SIZE: '{}' is not a size (e.g. 5G, 500M); using {}", env,
                   ::cuvil::cache::formatBytes(cacheOptions.maxBytes));
  }
  // stdout is compiled every time.
  bool useCache = options.output != "-" && (!cacheOptions.dir.empty() || !cacheOptions.remote.empty());
  ::cuvil::cache::CompileCache cache(useCache ? cacheOptions : ::cuvil::cache::CacheOptions());
  std::string outputName = options.output;
  if (useCache) {
    llvm::SmallString<256> absolute(options.output);
    llvm::sys::fs::make_absolute(absolute);
    outputName = std::string(absolute);
  }
  // The last build of this output: its model digest serves again while the
  // model file is as it was then (no need to hash it).
  std::optional<::cuvil::cache::KeyMaterial> lastBuild =
      cache.enabled() ? cache.lastBuild(outputName) : std::nullopt;
  std::string modelFile = ::cuvil::cache::fileStateText(options.model);
  std::string knownDigest;
  if (lastBuild && !modelFile.empty() && ::cuvil::cache::partValue(*lastBuild, "model-file") == modelFile)
    knownDigest = ::cuvil::cache::partValue(*lastBuild, "model");

  // The key of the whole output, and the identity the library keeps.
  PhaseClock clock(/*progress=*/false); // -vv: where a build from the cache spends its time
  clock.begin(knownDigest.empty() ? "the output's key (the model file's digest)" : "the output's key");
  std::vector<std::string> compilerFiles; // watched by the build record
  std::optional<::cuvil::cache::KeyMaterial> material = outputKeyMaterial(options, knownDigest, &compilerFiles);
  clock.end();
  if (material)
    options.libraryIdentity = identityText(*material);
  bool cacheOn = cache.enabled() && material;
  // Remarks and kernel reports come from compiling: asking for them
  // skips whole outputs (the code level still serves).
  bool compileOnly = options.graph.fusionRemarks || options.loweringRemarks || !options.kernelReport.empty() ||
                     !options.npuPartitionReport.empty();
  auto finishCache = [&](const ::cuvil::cache::KeyMaterial &build, bool outputHit) {
    if (!cacheOn)
      return;
    if (options.cacheExplain)
      explainCache(options.output, lastBuild, build, outputHit);
    // What the model and the output were like, for the next build.
    ::cuvil::cache::KeyMaterial record = build;
    if (!modelFile.empty())
      record.add("model-file", modelFile);
    if (std::string out = ::cuvil::cache::fileStateText(options.output); !out.empty())
      record.add("output-file", out);
    if (!options.invocation.empty() && !compileOnly) {
      // What bin/cuvil-export checks to answer the same run again without
      // the compiler (cache/Invocation.h): every file the build read or
      // wrote besides the output.
      std::vector<std::string> watched{options.model};
      watched.insert(watched.end(), options.inputFiles.begin(), options.inputFiles.end());
      for (const std::string *f : {&options.tuningDb, &options.deviceProfile, &options.emitHeader, &options.depfile})
        if (!f->empty())
          watched.push_back(*f);
      watched.insert(watched.end(), compilerFiles.begin(), compilerFiles.end());
      if (llvm::none_of(watched, [](const std::string &f) { return f.find('\n') != std::string::npos; })) {
        record.add("invocation", options.invocation);
        for (const std::string &f : watched)
          record.add("watch", ::cuvil::cache::watchValue(f));
      }
    }
    cache.recordBuild(outputName, record);
    cache.flushStats();
    if (options.cacheStats)
      printCacheStats(cache, cacheOptions.dir);
  };

  if (cacheOn && !compileOnly && outputUpToDate(lastBuild, *material, options.output)) {
    ::cuvil::OutputSet outputs;
    if (Status s = stageSideOutputs(options, outputs); !s)
      return s;
    if (Status s = outputs.commit(); !s)
      return s;
    spdlog::info("'{}' is up to date: the last build of it, with the same key (entry {})", options.output,
                 material->key());
    cache.countUpToDate(::cuvil::cache::EntryKind::Library);
    finishCache(*material, /*outputHit=*/true);
    return Status();
  }
  if (cacheOn && !compileOnly) {
    std::string triple;
    if (auto t = createTargetBackend(options.target, targetOptionsOf(options)))
      triple = tripleOf(**t);
    ::cuvil::cache::PayloadCheck check;
    if (options.emit == EmitKind::SharedLibrary || options.emit == EmitKind::Object)
      check = [&](llvm::StringRef payload) {
        return checkElf(payload,
                        options.emit == EmitKind::SharedLibrary ? llvm::ELF::ET_DYN : llvm::ELF::ET_REL,
                        triple, &options.libraryIdentity);
      };
    if (std::optional<::cuvil::cache::CacheHit> hit =
            cache.lookup(::cuvil::cache::EntryKind::Library, *material, check)) {
      ::cuvil::OutputSet outputs;
      if (Status s = outputs.add(options.output,
                                 std::string_view(hit->payload.data(), hit->payload.size()),
                                 options.emit == EmitKind::SharedLibrary ? 0777 : 0666); // as the linker leaves it
          !s)
        return s;
      if (Status s = stageSideOutputs(options, outputs); !s)
        return s;
      if (Status s = outputs.commit(); !s)
        return s;
      spdlog::info("wrote '{}' from the compile cache (entry {})", options.output,
                   material->key());
      finishCache(*material, /*outputHit=*/true);
      return Status();
    }
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
  clock.begin("loading the model");
  Result<OwningOpRef<ModuleOp>> module = ::cuvil::loadModel(context, options.model, load);
  if (!module)
    return module.error();
  clock.end();
  spdlog::info("loaded '{}'", options.model);

  Result<CompileResult> result =
      compileModule(**module, options, options.output, cacheOn ? &cache : nullptr);
  if (!result)
    return result.error();

  // Every output of the run is staged, then all are published together: a
  // failure on the way (a full disk at the header) keeps the old ones.
  ::cuvil::OutputSet outputs;
  if (options.emit == EmitKind::SharedLibrary) {
    if (Status s = outputs.adopt(options.output, result->libraryTempPath); !s)
      return s;
  } else if (options.output == "-") {
    llvm::outs() << result->bytes;
    llvm::outs().flush();
  } else if (Status s = outputs.add(options.output, result->bytes); !s) {
    return s;
  }
  if (Status s = stageSideOutputs(options, outputs); !s)
    return s;
  if (Status s = stageKernelReport(options, *result, outputs); !s)
    return s;
  clock.begin("publishing the outputs");
  if (Status s = outputs.commit(); !s)
    return s;
  clock.begin("storing in the cache");
  if (cacheOn) {
    // A library the weights plan made is not stored whole (the plan makes
    // it again in a fraction of a second, and a hundred megabytes of
    // weights per redeploy would fill the cache), unless it replaces a
    // corrupt or foreign entry under its key.
    const ::cuvil::cache::LevelCounters &libLookups = cache.counters(::cuvil::cache::EntryKind::Library);
    if (!compileOnly && (!result->weightsReplayed || libLookups.corrupt + libLookups.refused > 0)) {
      if (options.emit == EmitKind::SharedLibrary) {
        if (auto written = llvm::MemoryBuffer::getFile(options.output, /*IsText=*/false,
                                                       /*RequiresNullTerminator=*/false))
          cache.store(::cuvil::cache::EntryKind::Library, *material, (*written)->getBuffer());
      } else {
        cache.store(::cuvil::cache::EntryKind::Library, *material, result->bytes);
      }
    }
    ::cuvil::cache::KeyMaterial build = *material;
    if (!result->codeKey.empty()) {
      build.add("code", result->codeKey);
      build.add("weights", result->weightsDigest);
      std::vector<std::string> compiled;
      for (const auto &[name, cached] : result->units)
        if (!cached)
          compiled.push_back(name);
      if (compiled.empty())
        spdlog::info("compile cache: code from the cache ({} units); weights {} linked separately",
                     result->units.size(), ::cuvil::cache::formatBytes(result->weightsBytes));
      else
        spdlog::info("compile cache: code compiled: {} of {} units ({}); weights {} linked separately",
                     compiled.size(), result->units.size(), fmt::join(compiled, ", "),
                     ::cuvil::cache::formatBytes(result->weightsBytes));
    }
    if (result->weightsReplayed) {
      spdlog::info("compile cache: weights made by the cached plan of this model structure ({} weights, {} "
                   "transforms replayed; {}) into its cached linked code: no graph pipeline, lowering or code "
                   "generation",
                   result->replayedWeights, result->replayedDerivations,
                   ::cuvil::cache::formatBytes(result->weightsBytes));
    }
    finishCache(build, /*outputHit=*/false);
  }
  clock.end();
  auto done = std::chrono::steady_clock::now();
  spdlog::info("wrote '{}' for {} in {:.2f} s (arena {} bytes; graph-level plan {} bytes, lower "
               "bound {}, {} without reuse; CPU features: {})",
               options.output, options.target, std::chrono::duration<double>(done - start).count(),
               result->arenaBytes, result->graphPlanBytes, result->lowerBoundBytes,
               result->noReuseBytes, fmt::join(result->requiredFeatures, ","));
  return Status();
}

} // namespace mlir::cuvil
