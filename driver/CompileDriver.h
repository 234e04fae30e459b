//===- CompileDriver.h - One compile driver for every tool ------*- C++ -*-===//
//
// load -> graph pipeline (strategy) -> [quantize] -> kernel choice ->
// target lowering -> LLVM IR with the model descriptor -> code -> link,
// with one options struct and the cache key computed here, in one place.
// cuvil-export is a thin main over compile(); cuvil-opt's `cuvil-compile`
// pipeline is built by the same buildCompilePipeline. Targets are reached
// only through the registry (targets/Target.h).
//
// Any stage can be the output (--emit mlir|llvm|asm|obj|so). `mlir` is the
// cuvil IR after the graph pipeline and the kernel choice, every kernel op
// with its #cuvil.kernel, and the module marked cuvil.compile_stage =
// "kernels": given back to the driver (edited or not), it resumes there.
// Deterministic: the same model, target and options give the same bytes.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_DRIVER_COMPILEDRIVER_H
#define CUVIL_DRIVER_COMPILEDRIVER_H

#include "passes/GraphPipeline.h"
#include "targets/Target.h"
#include "support/Status.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/JSON.h"

#include <optional>
#include <string>
#include <vector>

namespace cuvil::cache {
class CompileCache;
struct KeyMaterial;
} // namespace cuvil::cache

namespace mlir::cuvil {

class TargetBackend;
struct TargetOptions;

enum class EmitKind { Mlir, Llvm, Asm, Object, SharedLibrary };
/// "mlir", "llvm", "asm", "obj", "so".
std::optional<EmitKind> parseEmitKind(const std::string &name);
const char *emitKindName(EmitKind kind);

/// Everything a compile takes: what changes the output first, then where
/// the outputs go.
/// MLIR's debugging aids, on every pass manager of a compile.
struct PassDebugOptions {
  bool printIrBeforeAll = false, printIrAfterAll = false;
  std::vector<std::string> printIrAfter; ///< pass arguments (cuvil-fuse-elementwise, ...)
  bool timing = false;                   ///< per-pass times on stderr
  bool progress = false;                 ///< a progress line on a terminal after a second
};

struct CompileOptions {
  std::string model; ///< .pt, .mlir or .mlirbc
  std::vector<std::string> inputShapes;
  std::string target = "x86_64";
  std::string cpu; ///< "" = the target's default
  /// A built-in device profile's name or a profile file: the CPU and
  /// features to compile for (instead of --cpu).
  std::string deviceProfile;
  std::string strategy = "graph_fusion";
  /// --specialize (hybrid): "seq=128,256[;batch=1]", sizes that get a static
  /// copy of the graph, chosen at run time.
  std::string specialize;
  /// --strategy autotune: the tuning database whose records configure the
  /// kernels (the heuristics configure the kernels it lacks).
  std::string tuningDb;
  /// A model PyTorch quantized: the engine whose integer arithmetic to
  /// reproduce, "onednn" or "qnnpack"; "" the target's own (qnnpack on
  /// aarch64, onednn on x86_64), as PyTorch picks by default.
  std::string quantizedEngine;
  EmitKind emit = EmitKind::SharedLibrary;
  std::string modelName; ///< "" = the model file's stem
  std::string soname;    ///< "" = the output's file name
  std::string symbolPrefix; ///< "" = the C API as cuvil_*, else as PREFIX_* (and its header)
  bool instrument = false;  ///< time every kernel call (cuvil_model_profile_*)
  /// A remark for each op the lowering rules send to the general lowering.
  bool loweringRemarks = false;
  /// What the library is the build of, kept in it (set by compile(); the
  /// compile cache checks it before serving a library).
  std::string libraryIdentity;
  GraphPipelineOptions graph;

  std::string output;
  std::string emitHeader;   ///< also write cuvil/runtime.h here
  std::string depfile;      ///< also write a Make dependency file here
  std::string kernelReport; ///< also write the kernel report (JSON) here
  std::string npuPartitionReport; ///< --target npu: also write where each op runs, and why (JSON)
  std::vector<std::string> targetOptions; ///< the target's own KEY=VALUE options
  std::string cudaArch; ///< --target cuda: the architectures (sm_80,sm_90), "" = the target's default
  std::string cacheDir;     ///< "" = no compile cache (CUVIL_CACHE_DIR)
  std::string remoteCache;  ///< "" or redis://HOST:PORT (CUVIL_REMOTE_CACHE)
  uint64_t cacheMaxBytes = 0; ///< 0 = the default (5 GiB; CUVIL_CACHE_MAX_SIZE)
  bool cacheExplain = false;  ///< say which part of the key changed since the last build
  bool cacheStats = false;    ///< print the cache's hits and misses per level afterwards
  /// The digest of this run's invocation (cache/Invocation.h), recorded with
  /// the build so that bin/cuvil-export answers the same run without
  /// starting the compiler; "" when the run prints more than a build does.
  std::string invocation;
  /// Files the tool read besides the model (pass plugins): watched with it.
  std::vector<std::string> inputFiles;
  PassDebugOptions debug;
};

/// The compile stage an IR has reached (cuvil.compile_stage).
enum class CompileStage { Graph, Kernels, Llvm };

/// The passes from cuvil IR to `stopAfter`: the graph pipeline, the
/// target's kernel choice (the module is then marked "kernels"), the
/// target's lowering to the LLVM dialect.
void buildCompilePipeline(OpPassManager &pm, const TargetBackend &target,
                          const GraphPipelineOptions &graph, CompileStage stopAfter);

/// Registers cuvil-opt's `cuvil-compile` pipeline (options: target, cpu,
/// stop-after=graph|kernels|llvm, disable=...), built by
/// buildCompilePipeline.
void registerCompilePipelines();

/// What a compile of a loaded module produced: the artifact's bytes (for
/// .so: the path of a temporary file holding it, renamed into place by the
/// caller).
struct CompileResult {
  std::string bytes;
  std::string libraryTempPath; ///< EmitKind::SharedLibrary only
  int64_t arenaBytes = 0;
  uint64_t weightsBytes = 0; ///< in the weights object (linked separately)
  std::string cpu; ///< the machine the target resolved
  std::vector<std::string> requiredFeatures;
  llvm::json::Array kernels; ///< the kernel report's entries
  /// The graph-level memory plan's figures (cuvil-plan-memory: a report;
  /// the arena itself is planned by the target on the buffers the code
  /// has): planned peak, lower bound, all intermediates without reuse.
  int64_t graphPlanBytes = 0, lowerBoundBytes = 0, noReuseBytes = 0;
  /// With a compile cache: the key of the code (weights left out), whether
  /// it came from the cache, and the digest of the weights.
  std::string codeKey, weightsDigest;
  bool codeFromCache = false;
  /// The code units (functions, and the data) and whether each came from
  /// the cache.
  std::vector<std::pair<std::string, bool>> units;
  /// Made by a cached weights plan (WeightsPlan.h): its weights and the
  /// transforms replayed to make them.
  bool weightsReplayed = false;
  size_t replayedWeights = 0, replayedDerivations = 0;
};

/// Compiles `module` (cuvil IR, one public function) for `options`.
/// `outputPath` names where the library will go (its temporary file is made
/// next to it). Diagnostics go to the context's handler; the Error says
/// which stage failed.
/// The model's entry: the only public function with a body, or the one
/// named `forward`; failure when there is neither.
FailureOr<func::FuncOp> entryFunction(ModuleOp module);

/// With `cache`, the code object is looked up by the code it is compiled
/// from (the weights left out: a redeploy with new weights relinks cached
/// code) and stored there.
::cuvil::Result<CompileResult> compileModule(ModuleOp module, const CompileOptions &options,
                                             const std::string &outputPath,
                                             ::cuvil::cache::CompileCache *cache = nullptr);

/// What the key of a whole output is made of: the model file's digest,
/// every option that changes the output, the target's resolved machine, the
/// compiler's identity. Nothing when the target cannot be configured or the
/// model read (the compile then reports that itself). `knownModelDigest`:
/// the model's digest when known already (the file unchanged since the last
/// build), else the file is hashed. `compilerFiles`, when given, receives
/// the files of the compiler's identity (this executable, the target's
/// runtime archives and tuning database), which the build record watches.
std::optional<::cuvil::cache::KeyMaterial> outputKeyMaterial(const CompileOptions &options,
                                                              const std::string &knownModelDigest = "",
                                                              std::vector<std::string> *compilerFiles = nullptr);

/// The target options `options` select: the CPU and features (of the
/// device profile, when one is named), instrumentation, the tuning
/// database. A profile that cannot be read is left to checkCompileOptions.
TargetOptions targetOptionsOf(const CompileOptions &options);

/// Checks the options before any work: a usage error (exit 2) names the
/// flag.
::cuvil::Status checkCompileOptions(const CompileOptions &options);

/// The whole job: checks, the cache, load, compile, and every output
/// written atomically (after a failure no output path is touched).
::cuvil::Status compile(const CompileOptions &options);

} // namespace mlir::cuvil

#endif // CUVIL_DRIVER_COMPILEDRIVER_H
