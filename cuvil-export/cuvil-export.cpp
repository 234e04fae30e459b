//===- cuvil-export.cpp - A model to libinference.so ----------------------===//
//
// cuvil-export --model MODEL --target x86_64|aarch64 --output libinference.so
//              [--cpu NAME] [--input-shape SPEC]... [--strategy graph_fusion]
//              [--disable-optimization NAME[,NAME...]] [--emit mlir|llvm|asm|obj|so]
//              [--emit-header FILE] [--depfile FILE] [--cache-dir DIR]
//
// Loads the model (.pt, .mlir, .mlirbc), runs the graph pipeline and the
// target's code generation, and writes the artifact atomically: after a
// failure the output path is untouched.
//
//===----------------------------------------------------------------------===//
#include "frontend/loader/ModelLoader.h"
#include "passes/InitAll.h"
#include "support/AtomicFile.h"
#include "support/Crash/CrashRecovery.h"
#include "support/Tool/ToolSupport.h"
#include "targets/CPU/Codegen.h"
#include "targets/Target.h"
#include "targets/CompileCache.h"
#include "targets/Export.h"
#include "targets/Targets.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/raw_ostream.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdlib>
#include <set>

using namespace cuvil;

namespace {

const char *kTool = "cuvil-export";

struct Options {
  std::string model, target, output, cpu, emit = "so", emitHeader, depfile, strategy = "graph_fusion";
  std::string cacheDir, crashReproducer;
  std::vector<std::string> inputShapes, disabled;
  bool fusionRemarks = false;
  LogOptions log;
};

std::optional<mlir::cuvil::EmitKind> parseEmit(const std::string &s) {
  using mlir::cuvil::EmitKind;
  if (s == "mlir") return EmitKind::Mlir;
  if (s == "llvm") return EmitKind::Llvm;
  if (s == "asm") return EmitKind::Asm;
  if (s == "obj") return EmitKind::Object;
  if (s == "so") return EmitKind::SharedLibrary;
  return std::nullopt;
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

/// Writes the side outputs (header, depfile) of a finished export.
int writeSideOutputs(const Options &opt) {
  if (!opt.emitHeader.empty())
    if (Status s = writeFileAtomically(opt.emitHeader, mlir::cuvil::runtimeHeaderText()); !s)
      return reportError(kTool, s.error());
  if (!opt.depfile.empty())
    if (Status s = writeFileAtomically(opt.depfile, depfileText(opt.output, opt.model)); !s)
      return reportError(kTool, s.error());
  return kExitSuccess;
}

/// The cache key of this export (nothing: no cache, or the target is
/// invalid, which the export itself then reports).
std::optional<std::string> cacheKey(const Options &opt, const std::set<std::string> &disabled,
                                    const std::string &modelName) {
  Result<std::unique_ptr<mlir::cuvil::TargetBackend>> target =
      mlir::cuvil::createTargetBackend(opt.target, mlir::cuvil::TargetOptions{opt.cpu});
  if (!target)
    return std::nullopt;
  std::vector<std::string> parts = (*target)->cacheKeyParts();
  for (std::string p : {"target-name=" + opt.target, "emit=" + opt.emit, "strategy=" + opt.strategy,
                        "name=" + modelName, "version=" + versionText()})
    parts.push_back(p);
  for (const std::string &d : disabled)
    parts.push_back("disable=" + d);
  for (const std::string &shape : opt.inputShapes)
    parts.push_back("shape=" + shape);
  std::string self =
      llvm::sys::fs::getMainExecutable(nullptr, reinterpret_cast<void *>(&writeSideOutputs));
  std::vector<std::string> files = (*target)->cacheKeyFiles();
  files.insert(files.begin(), self);
  return mlir::cuvil::CompileCache::key(opt.model, parts, files);
}

int run(const Options &opt) {
  std::optional<mlir::cuvil::EmitKind> emit = parseEmit(opt.emit);
  if (!emit)
    return reportError(kTool, usageError("--emit must be mlir, llvm, asm, obj or so, got '" + opt.emit + "'"));
  if (!mlir::cuvil::lookupTarget(opt.target))
    return reportError(kTool, usageError("--target: unknown target '" + opt.target + "' (registered: " +
                                         mlir::cuvil::targetNameList() + "; see --list-targets)"));
  if (opt.strategy != "graph_fusion")
    return reportError(kTool, usageError("--strategy " + opt.strategy +
                                         " is not available yet (graph_fusion is)"));
  std::set<std::string> disabled(opt.disabled.begin(), opt.disabled.end());
  std::string unknown;
  if (!mlir::cuvil::checkOptimizationNames(disabled, unknown))
    return reportError(kTool, usageError("--disable-optimization: " + unknown));
  for (const std::string &out : {opt.output, opt.emitHeader, opt.depfile})
    if (!out.empty())
      if (Status s = checkOutputPath(out); !s)
        return reportError(kTool, s.error());
  if (sameFile(opt.model, opt.output))
    return reportError(kTool, usageError("the output '" + opt.output + "' is the input model"));

  auto start = std::chrono::steady_clock::now();
  std::string modelName = llvm::sys::path::stem(opt.model).str();
  // Remarks come from compiling: a request for them bypasses the cache.
  const char *cacheEnv = std::getenv("CUVIL_CACHE_DIR");
  mlir::cuvil::CompileCache cache(opt.fusionRemarks ? ""
                                  : !opt.cacheDir.empty() ? opt.cacheDir
                                  : cacheEnv             ? cacheEnv
                                                         : "");
  std::optional<std::string> key;
  if (cache.enabled())
    key = cacheKey(opt, disabled, modelName);
  if (key)
    if (std::optional<std::string> hit = cache.lookup(*key)) {
      if (Status s = writeFileAtomically(opt.output, *hit); !s)
        return reportError(kTool, s.error());
      if (*emit == mlir::cuvil::EmitKind::SharedLibrary) // as the linker leaves it
        llvm::sys::fs::setPermissions(opt.output, llvm::sys::fs::all_read | llvm::sys::fs::all_exe |
                                                      llvm::sys::fs::owner_write);
      spdlog::info("wrote '{}' from the compile cache (entry {})", opt.output, *key);
      return writeSideOutputs(opt);
    }

  mlir::DialectRegistry registry;
  mlir::cuvil::registerAllDialects(registry);
  mlir::cuvil::registerTargetDialects(registry);
  mlir::MLIRContext context(registry, mlir::MLIRContext::Threading::DISABLED);
  cuvil::trackCrashContext(context);
  context.loadAllAvailableDialects();
  context.printOpOnDiagnostic(false);
  // Diagnostics as "file:line:col: error: ..." with the model's own
  // source lines (call sites as notes).
  llvm::SourceMgr sourceMgr;
  mlir::SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context, llvm::errs());

  LoadOptions load;
  load.inputShapes = opt.inputShapes;
  load.eliminateDeadCode = !disabled.count("dead-code-elimination");
  Result<mlir::OwningOpRef<mlir::ModuleOp>> module = loadModel(context, opt.model, load);
  if (!module)
    return reportError(kTool, module.error());
  spdlog::info("loaded '{}'", opt.model);

  mlir::cuvil::ExportOptions options;
  options.target = opt.target;
  options.cpu = opt.cpu;
  options.emit = *emit;
  options.graph.disabled = disabled;
  options.graph.fusionRemarks = opt.fusionRemarks;
  options.modelName = modelName;
  Result<mlir::cuvil::ExportResult> result = mlir::cuvil::exportModel(**module, options, opt.output);
  if (!result)
    return reportError(kTool, result.error());

  if (*emit == mlir::cuvil::EmitKind::SharedLibrary) {
    std::error_code ec = llvm::sys::fs::rename(result->libraryTempPath, opt.output);
    if (ec)
      llvm::sys::fs::remove(result->libraryTempPath);
    llvm::sys::DontRemoveFileOnSignal(result->libraryTempPath);
    if (ec)
      return reportError(kTool, ioError("cannot write '" + opt.output + "': " + ec.message()));
  } else if (Status s = writeFileAtomically(opt.output, result->bytes); !s) {
    return reportError(kTool, s.error());
  }
  if (key) {
    if (*emit == mlir::cuvil::EmitKind::SharedLibrary) {
      if (auto written = llvm::MemoryBuffer::getFile(opt.output, /*IsText=*/false,
                                                     /*RequiresNullTerminator=*/false))
        cache.store(*key, (*written)->getBuffer().str());
    } else {
      cache.store(*key, result->bytes);
    }
  }
  if (int rc = writeSideOutputs(opt); rc != kExitSuccess)
    return rc;
  auto done = std::chrono::steady_clock::now();
  spdlog::info("wrote '{}' for {} in {:.2f} s (arena {} bytes, CPU features: {})", opt.output,
               opt.target, std::chrono::duration<double>(done - start).count(),
               result->arenaBytes, fmt::join(result->requiredFeatures, ","));
  return kExitSuccess;
}

} // namespace

int main(int argc, char **argv) {
  Options opt;
  CLI::App app{"Compiles a model (TorchScript .pt, or cuvil IR .mlir/.mlirbc) into a standalone "
               "shared library (libinference.so) with the C API of cuvil/runtime.h.\n\n"
               "Exit status: 0 success, 1 the model cannot be compiled, 2 usage error, "
               "3 I/O error. The output is written atomically.",
               kTool};
  app.add_option("--model", opt.model, "The model: .pt, .mlir or .mlirbc")->required();
  mlir::cuvil::registerAllTargets();
  app.add_option("--target", opt.target,
                 "The target to compile for: " + mlir::cuvil::targetNameList() + " (--list-targets)")
      ->required();
  app.add_flag_callback(
      "--list-targets",
      [] {
        for (const mlir::cuvil::TargetInfo *t : mlir::cuvil::registeredTargets())
          std::printf("%-10s %s\n", t->name.c_str(), t->description.c_str());
        throw CLI::Success();
      },
      "List the targets this cuvil-export can compile for, and exit");
  app.add_option("--output,-o", opt.output, "The output file (libinference.so, or the --emit stage)")
      ->required();
  app.add_option("--cpu", opt.cpu,
                 "CPU to compile for (LLVM name, e.g. sapphirerapids, neoverse-n1). x86_64 "
                 "default: this machine's CPU; aarch64 default: Armv8.2-A with NEON and dotprod");
  app.add_option("--input-shape", opt.inputShapes,
                 "Input shape INDEX_OR_NAME=DIMxDIM...xDTYPE for .pt models (see cuvil-import)");
  app.add_option("--strategy", opt.strategy, "Compilation strategy (graph_fusion)");
  app.add_option("--disable-optimization", opt.disabled,
                 "Graph optimizations to switch off (see cuvil-opt --cuvil-print-pipeline)")
      ->delimiter(',');
  app.add_option("--emit", opt.emit, "What to write: mlir, llvm, asm, obj or so (default)");
  app.add_option("--emit-header", opt.emitHeader, "Also write the C header (cuvil/runtime.h) here");
  app.add_option("--depfile", opt.depfile, "Also write a Make dependency file here");
  app.add_flag("--fusion-remarks", opt.fusionRemarks, "Explain every op that was not fused");
  app.add_option("--cache-dir", opt.cacheDir,
                 "Reuse earlier exports with the same model, target, CPU, options and compiler "
                 "from this directory (default: $CUVIL_CACHE_DIR; none when unset)");
  app.add_option("--crash-reproducer", opt.crashReproducer,
                 "Should the compiler fail internally, write the IR the failing pass was given "
                 "(DIR/reproducer.mlir, for cuvil-opt --run-reproducer) and the stack trace here");
  addCommonOptions(app, opt.log);
  if (int rc = parseCommandLine(app, argc, argv); rc >= 0)
    return rc;
  cuvil::installCrashHandlers(kTool, opt.crashReproducer);
  setupLogging(kTool, opt.log);
  return run(opt);
}
