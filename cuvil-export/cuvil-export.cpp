//===- cuvil-export.cpp - A model to libinference.so ----------------------===//
//
// cuvil-export --model MODEL --target x86_64|aarch64 --output libinference.so
//              [--cpu NAME | --device-profile NAME|FILE] [--input-shape SPEC]...
//              [--strategy graph_fusion|autotune|hybrid] [--tuning-db FILE]
//              [--disable-optimization NAME[,NAME...]] [--emit mlir|llvm|asm|obj|so]
//              [--emit-header FILE] [--depfile FILE] [--kernel-report FILE.json]
//              [--cache-dir DIR] [--remote-cache redis://HOST:PORT] [--cache-max-size SIZE]
//              [--cache-explain] [--cache-stats]
//
// A thin main over the compile driver (driver/CompileDriver.h), which loads
// the model, runs the graph pipeline and the target's code generation, and
// writes every output atomically: after a failure the output path is
// untouched.
//
//===----------------------------------------------------------------------===//
#include "cache/CompileCache.h"
#include "cache/Invocation.h"
#include "driver/CompileDriver.h"
#include "plugins/PluginRegistry.h"
#include "support/LargeStack.h"
#include "support/Staging.h"
#include "support/Crash/CrashRecovery.h"
#include "support/Tool/ToolSupport.h"
#include "targets/Target.h"
#include "targets/Targets.h"
#include "llvm/Support/raw_ostream.h"
#include <spdlog/spdlog.h>

#include <cctype>
#include <cstdlib>
#include <cstdio>

using namespace cuvil;

namespace {

const char *kTool = "cuvil-export";

struct Options {
  mlir::cuvil::CompileOptions compile;
  std::string emit = "so", crashReproducer;
  std::vector<std::string> disabled, plugins;
  std::string cacheMaxSize;
  LogOptions log;
};

int run(Options &opt) {
  std::optional<mlir::cuvil::EmitKind> emit = mlir::cuvil::parseEmitKind(opt.emit);
  if (!emit)
    return reportError(kTool, usageError("--emit must be mlir, llvm, asm, obj or so, got '" + opt.emit + "'"));
  opt.compile.emit = *emit;
  if (!opt.cacheMaxSize.empty()) {
    std::optional<uint64_t> n = cuvil::cache::parseSize(opt.cacheMaxSize);
    if (!n || *n == 0)
      return reportError(kTool, usageError("--cache-max-size: '" + opt.cacheMaxSize +
                                           "' is not a size (e.g. 5G, 500M, 100K)"));
    opt.compile.cacheMaxBytes = *n;
  }
  for (const std::string &path : opt.plugins) {
    std::string error;
    int code = 1;
    if (!cuvil::plugin::loadPlugin(path, error, code))
      return reportError(kTool, Error{error, static_cast<ExitCode>(code), "CUVIL-E-PLUGIN"});
  }
  opt.compile.graph.disabled.insert(opt.disabled.begin(), opt.disabled.end());
  opt.compile.graph.target = opt.compile.target;
  if (Status s = mlir::cuvil::compile(opt.compile); !s)
    return reportError(kTool, s.error());
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
  app.add_option("--model", opt.compile.model, "The model: .pt, .mlir or .mlirbc")->required();
  mlir::cuvil::registerAllTargets();
  app.add_option("--target", opt.compile.target,
                 "The target to compile for: " + mlir::cuvil::targetNameList() +
                     " (--list-targets); x86_64,cuda: one library with both, the CUDA code where a "
                     "suitable GPU is, the CPU code elsewhere")
      ->required();
  app.add_flag_callback(
      "--list-targets",
      [] {
        for (const mlir::cuvil::TargetInfo *t : mlir::cuvil::registeredTargets())
          std::printf("%-10s %s\n", t->name.c_str(), t->description.c_str());
        throw CLI::Success();
      },
      "List the targets this cuvil-export can compile for, and exit");
  app.add_option("--output,-o", opt.compile.output, "The output file (libinference.so, or the --emit stage)")
      ->required();
  app.add_option("--quantized-engine", opt.compile.quantizedEngine,
                 "A model PyTorch quantized: the engine whose integer arithmetic to reproduce "
                 "bit for bit, onednn or qnnpack (default: qnnpack for aarch64, onednn for "
                 "x86_64, as PyTorch's own defaults there)")
      ->check(CLI::IsMember({"onednn", "qnnpack"}));
  app.add_option("--cpu", opt.compile.cpu,
                 "CPU to compile for (LLVM name, e.g. sapphirerapids, neoverse-n1). x86_64 "
                 "default: this machine's CPU; aarch64 default: Armv8.2-A with NEON and dotprod");
  app.add_option("--input-shape", opt.compile.inputShapes,
                 "Input shape INDEX_OR_NAME=DIMxDIM...xDTYPE for .pt models (see cuvil-import); "
                 "run-time dimensions (?, seq, seq:1..512) need --strategy hybrid");
  app.add_option("--device-profile", opt.compile.deviceProfile,
                 "The machine to compile for, as a device profile: a built-in name (x86-64-v3, "
                 "x86-64-v4, sapphirerapids, znver4, aarch64-v8.2, neoverse-n1) or a file written by "
                 "`cuvil-autotune profile` (its CPU and features; instead of --cpu)");
  app.add_option("--strategy", opt.compile.strategy,
                 "Compilation strategy: graph_fusion (default: graph fusion, built-in kernel "
                 "heuristics), autotune (kernel configurations from --tuning-db, the heuristics "
                 "for the kernels it lacks) or hybrid (dimensions given as '?', SYMBOL or "
                 "SYMBOL:MIN..MAX in --input-shape are run-time sizes, checked against their "
                 "bounds at every call; the static parts compile as with graph_fusion, the arena "
                 "is planned at the maxima)");
  app.add_option("--specialize", opt.compile.specialize,
                 "With --strategy hybrid: sizes of run-time dimensions to compile a static copy "
                 "of the model for, chosen at run time when the inputs have exactly those sizes "
                 "(other sizes run the generic code): SYMBOL=SIZE[,SIZE...], several symbols "
                 "separated by ';' give every combination (at most 16), e.g. seq=128,256");
  app.add_option("--tuning-db", opt.compile.tuningDb,
                 "With --strategy autotune: the tuning database (cuvil-autotune tune) whose records "
                 "for this target, CPU and compiler configure the kernels; --kernel-report says "
                 "where each configuration came from");
  app.add_option("--disable-optimization", opt.disabled,
                 "Graph optimizations to switch off (see cuvil-opt --cuvil-print-pipeline)")
      ->delimiter(',');
  app.add_option("--load-pass-plugin", opt.plugins,
                 "A Cuvil pass plugin (a shared library built against the SDK with cuvil/Plugin.h): "
                 "its passes join the graph pipeline by phase and priority, under their constraints "
                 "(repeatable; the plugin's file is part of the cache key)");
  app.add_option("--emit", opt.emit,
                 "What to write: so (default), obj, asm, llvm (LLVM IR), or mlir: the cuvil IR "
                 "after the graph pipeline with every kernel op's configuration "
                 "(#cuvil.kernel), which cuvil-export compiles again, edited or not");
  app.add_option("--soname", opt.compile.soname,
                 "The library's SONAME, the name programs linked with it look for (default: the "
                 "output's file name)");
  app.add_option("--symbol-prefix", opt.compile.symbolPrefix,
                 "Export the C API as PREFIX_abi_version, PREFIX_model_create, ... instead of "
                 "cuvil_*, so that several models link into one program (--emit-header then "
                 "declares those names)")
      ->check([](const std::string &p) -> std::string {
        bool ok = !p.empty() && (std::isalpha(static_cast<unsigned char>(p[0])) || p[0] == '_');
        for (char c : p)
          ok &= std::isalnum(static_cast<unsigned char>(c)) || c == '_';
        return ok ? "" : "a C identifier (letters, digits, _; not starting with a digit), got '" + p + "'";
      });
  app.add_flag("--instrument", opt.compile.instrument,
               "Time every kernel call of the library, per layer (named by the model's module "
               "paths where the layer has weights): cuvil_model_profile_*, cuvil-run --profile");
  app.add_option("--emit-header", opt.compile.emitHeader, "Also write the C header (cuvil/runtime.h) here");
  app.add_option("--depfile", opt.compile.depfile, "Also write a Make dependency file here");
  app.add_option("--kernel-report", opt.compile.kernelReport,
                 "Also write the kernel report here (JSON): every convolution, linear layer, "
                 "matrix product and pooling with its shapes, the kernel and configuration "
                 "chosen, by whom and why (-v prints it as a table)");
  app.add_option("--npu-partition-report", opt.compile.npuPartitionReport,
                 "--target npu: also write where each op runs (NPU segment or host CPU) and, for each op "
                 "left on the host, why (JSON)");
  app.add_option("--target-option", opt.compile.targetOptions,
                 "An option of the target itself, KEY=VALUE, repeatable (npu: double-buffering=0|1, to "
                 "measure what double buffering hides; cuda: ptxas=PATH|none, the ptxas that assembles and "
                 "checks the kernels)");
  app.add_option("--cuda-arch", opt.compile.cudaArch,
                 "--target cuda or x86_64,cuda: the GPU architectures to compile the kernels for, "
                 "comma-separated (sm_80, sm_86, sm_89, sm_90; default sm_80,sm_90): a cubin for each "
                 "(with the CUDA toolkit's ptxas) and the newest one's PTX, which the driver compiles "
                 "for newer GPUs");
  app.add_flag("--fusion-remarks", opt.compile.graph.fusionRemarks, "Explain every op that was not fused");
  app.add_flag("--lowering-remarks", opt.compile.loweringRemarks,
               "A remark for each op a runtime kernel could run that takes the general lowering (linalg) "
               "instead, naming the failing condition of each of its lowering rules (the rules: cuvil-opt "
               "--cuvil-print-lowering-table)");
  app.add_option("--cache-dir", opt.compile.cacheDir,
                 "Compile cache directory (default: $CUVIL_CACHE_DIR; none when unset): an export "
                 "seen before is copied from it; one whose model differs only in its weights "
                 "relinks the cached code with the new weights. Created 0700; refused when "
                 "other users can write to it");
  app.add_option("--remote-cache", opt.compile.remoteCache,
                 "A compile cache shared on a Redis server, redis://HOST:PORT (default: "
                 "$CUVIL_REMOTE_CACHE): asked after a local miss, given what is compiled; an "
                 "unreachable or slow server means compiling locally");
  app.add_option("--cache-max-size", opt.cacheMaxSize,
                 "Size limit of the cache directory, e.g. 5G, 500M (default: "
                 "$CUVIL_CACHE_MAX_SIZE, else 5G); least recently used entries go first");
  app.add_flag("--cache-explain", opt.compile.cacheExplain,
               "Say which part of the cache key (model, weights, options, compiler...) changed "
               "since the last export to the same output");
  app.add_flag("--cache-stats", opt.compile.cacheStats,
               "After the export, print the cache's hits and misses per level (whole outputs, "
               "code objects), this export's and the directory's totals (see also cuvil-cache)");
  app.add_flag("--mlir-print-ir-before-all", opt.compile.debug.printIrBeforeAll,
               "Print the IR before every pass (stderr)");
  app.add_flag("--mlir-print-ir-after-all", opt.compile.debug.printIrAfterAll,
               "Print the IR after every pass (stderr)");
  app.add_option("--mlir-print-ir-after", opt.compile.debug.printIrAfter,
                 "Print the IR after these passes (their cuvil-opt names, e.g. cuvil-fuse-elementwise)")
      ->delimiter(',');
  app.add_flag("--mlir-timing", opt.compile.debug.timing, "Print each pass's time (stderr)");
  app.add_option("--crash-reproducer", opt.crashReproducer,
                 "Should the compiler fail internally, write the IR the failing pass was given "
                 "(DIR/reproducer.mlir, for cuvil-opt --run-reproducer) and the stack trace here");
  addCommonOptions(app, opt.log);
  if (int rc = parseCommandLine(app, argc, argv); rc >= 0)
    return rc;
  // A run that prints no more than a build does can be answered by
  // bin/cuvil-export without the compiler next time (cache/Invocation.h).
  const mlir::cuvil::PassDebugOptions &debug = opt.compile.debug;
  if (!opt.compile.cacheExplain && !opt.compile.cacheStats && !debug.printIrBeforeAll && !debug.printIrAfterAll &&
      debug.printIrAfter.empty() && !debug.timing)
    opt.compile.invocation = cuvil::cache::invocationDigest(std::vector<std::string>(argv + 1, argv + argc));
  opt.compile.inputFiles = opt.plugins;
  cuvil::installCrashHandlers(kTool, opt.crashReproducer);
  setupLogging(kTool, opt.log);
  opt.compile.debug.progress = true; // shown on a terminal only, after a second
  // A large stack for MLIR's recursive parsing and passes (LargeStack.h).
  int rc = cuvil::runOnLargeStack([&] { return run(opt); });
  // Done, every output published: leave without the static destructors of
  // LLVM and MLIR (milliseconds of a warm export from the cache), as clang
  // does; what they would flush is flushed here.
  llvm::outs().flush();
  llvm::errs().flush();
  spdlog::shutdown();
  std::fflush(nullptr);
  cuvil::removeStagingDirectories();
  std::_Exit(rc);
}
