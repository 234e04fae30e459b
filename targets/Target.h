//===- Target.h - The interface of a code generator and its registry -*- C++ -*-===//
//
// A target turns cuvil IR (after the graph pipeline) into a library for one
// kind of machine. The compile driver (Export.cpp) knows targets only
// through this interface and finds them by name in the registry, so that a
// new target is one folder and one registration line (targets/README.md).
// Modelled on IREE's TargetBackend: a registered TargetInfo names the
// target and configures a TargetBackend from the user's options; the
// backend owns everything after the graph pipeline.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_TARGETS_TARGET_H
#define CUVIL_TARGETS_TARGET_H

#include "support/Status.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/JSON.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace mlir::cuvil {

/// What the user chose for a target (cuvil-export --cpu ...).
struct TargetOptions {
  std::string cpu;         ///< "" = the target's default
  bool instrument = false; ///< time every kernel call (cuvil-export --instrument)
  /// LLVM features on top of the CPU's ("+avx512f,+fma"; a device
  /// profile's), "" = the CPU's own.
  std::string features = {};
  /// A tuning database whose records for this device configure the kernels
  /// (--strategy autotune), "" = none.
  std::string tuningDb = {};
  /// The device profile's cache per core (L2 bytes; 0 = unknown): the
  /// heuristics size what must stay in cache by it.
  uint64_t cacheBytes = 0;
  /// A remark for each op that takes the general lowering because a
  /// condition of its kernels' lowering rules fails (cuvil-export
  /// --lowering-remarks).
  bool loweringRemarks = false;
  /// A target that partitions a model between devices writes where each
  /// op went, and why, here (cuvil-export --npu-partition-report).
  std::string partitionReport = {};
  /// KEY=VALUE options of the target itself (cuvil-export --target-option);
  /// a target refuses keys it does not know.
  std::vector<std::string> targetOptions = {};
  /// The CUDA architectures (--cuda-arch sm_80,sm_90), "" = the target's
  /// default.
  std::string cudaArch = {};
};

enum class CodeKind { Assembly, Object };

/// What a library's identity is made of.
struct WeightsTable;

struct LinkOptions {
  std::string soname;       ///< the SONAME programs linked with it look for
  std::string symbolPrefix; ///< "" (cuvil_*), else the C API is exported as PREFIX_*
  /// The weights the library defines (the objects are the code's only):
  /// the target places them as it links.
  const WeightsTable *weights = nullptr;
  /// Where to keep the linked image before the weights are placed (for
  /// placeWeights on a later build with other weights); null: not kept.
  std::string *linkedImage = nullptr;
};

/// The model's weights, moved out of the code (TargetBackend::extractWeights)
/// to be linked as an object of their own: code compiled once serves every
/// set of weights of the same graph, and a redeploy with new weights only
/// relinks.
struct WeightsTable {
  struct Symbol {
    std::string name;       ///< what the code refers to
    uint64_t alignment = 1;
    llvm::ArrayRef<char> bytes; ///< owned by the MLIR context of the module
    /// The constant the bytes are (a resource's key leads to how the
    /// compiler made it: WeightDerivations.h); null when not known.
    mlir::Attribute value;
  };
  std::vector<Symbol> symbols;
  /// What the library is the build of (the compile cache checks it before
  /// serving a library): kept, unloaded, in a section of its own.
  std::string identity;
  /// The library's SONAME, written after the link into a slot of
  /// nameSlotBytes(soname.size()) bytes (linked as a placeholder): one
  /// linked image serves every output name; "" links LinkOptions::soname.
  std::string soname;
  uint64_t totalBytes() const;
};

/// The bytes of the slot a name of `length` characters is placed in after
/// the link (the model's name, the SONAME): the name, NUL, padding to a
/// multiple of 64. Names of one slot size share a linked image.
inline uint64_t nameSlotBytes(size_t length) { return (uint64_t(length) + 1 + 63) / 64 * 64; }

/// The weights table's symbol of the model's name (the descriptor's
/// model_name), when the target places weights after the link.
inline constexpr const char *kModelNameSymbol = "cuvil_rt_model_name";

/// A target configured for one machine.
class TargetBackend {
public:
  virtual ~TargetBackend();

  /// The registered name ("x86_64").
  virtual std::string name() const = 0;
  /// The resolved machine: the CPU or device name the code is tuned for.
  virtual std::string cpu() const = 0;
  /// The device a tuning record must be for to be used here
  /// (tuning::deviceKey: triple, CPU, features). Default: name/cpu.
  virtual std::string deviceKey() const;
  /// The features the runtime must find at load time (the descriptor's list).
  virtual std::vector<std::string> requiredFeatures() const = 0;
  /// Everything about this configuration that changes the output ("key=value"
  /// strings), and the files it links whose identity counts, for the
  /// compile cache.
  virtual std::vector<std::string> cacheKeyParts() const = 0;
  virtual std::vector<std::string> cacheKeyFiles() const = 0;

  /// Fails, naming the input or op, when `entry` is beyond this target (the
  /// CPU compiles static shapes only). Runs after the graph pipeline.
  virtual ::cuvil::Status checkModel(func::FuncOp entry) const;
  /// Kernel choices as data: passes that write a kernel configuration
  /// (#cuvil.kernel) on each op the target has kernels for, keeping those
  /// already present. Runs after checkModel; `cuvil-export --emit mlir`
  /// writes the IR at this point. Default: none.
  virtual void buildKernelChoicePipeline(OpPassManager &pm) const;
  /// The kernel report of IR after the kernel choice: one JSON object per
  /// kernel op (op, location, inputs, output, kernel, variant, source,
  /// reason, epilogue). Default: none.
  virtual llvm::json::Array kernelReport(ModuleOp module) const;
  /// cuvil IR (kernels chosen) to the LLVM dialect; the entry takes inputs..., outputs...,
  /// arena as bare pointers and returns a status (model_abi.h).
  virtual void buildLoweringPipeline(OpPassManager &pm) const = 0;
  /// Whether extractWeights/emitWeights/placeWeights keep weights (and the
  /// model's name, the SONAME) out of the linked code. Default: no.
  virtual bool hasWeightsTable() const;
  /// Moves the weights of `module` (the LLVM dialect, after the lowering)
  /// into `table`, leaving declarations the code refers to. Default: keeps
  /// them in the code (an empty table).
  virtual ::cuvil::Status extractWeights(ModuleOp module, WeightsTable &table) const;
  /// The object that defines `table`'s symbols (and holds its identity).
  /// Default: only an empty table (no object).
  virtual ::cuvil::Result<std::string> emitWeights(const WeightsTable &table) const;
  /// LLVM IR (with the model descriptor) to assembly or an object.
  virtual ::cuvil::Result<std::string> emitCode(llvm::Module &module, CodeKind kind) const = 0;
  /// Objects (code, then weights) as one relocatable object (--emit obj),
  /// through temporary files next to `nextTo`.
  virtual ::cuvil::Result<std::string> combineObjects(const std::vector<std::string> &objects,
                                                      const std::string &nextTo) const = 0;
  /// The objects to a shared library at `path` (a temporary file the driver
  /// renames into place).
  virtual ::cuvil::Status link(const std::vector<std::string> &objects, const std::string &path,
                               const LinkOptions &options) const = 0;
  /// Writes to `path` the library whose linked image (LinkOptions::
  /// linkedImage) is `image`, with `table`'s weights and identity (the
  /// identity as long as the image's). Default: an error.
  virtual ::cuvil::Status placeWeights(llvm::StringRef image, const WeightsTable &table,
                                       const std::string &path) const;
};

/// A registered target.
struct TargetInfo {
  std::string name;        ///< what --target takes
  std::string description; ///< one line, for --list-targets
  /// The dialects and interface models its lowering needs.
  std::function<void(DialectRegistry &)> registerDialects;
  /// Its passes and named pipelines, for cuvil-opt (may be empty).
  std::function<void()> registerPasses;
  /// The backend for `options`; a usage error for options it rejects.
  std::function<::cuvil::Result<std::unique_ptr<TargetBackend>>(const TargetOptions &)> create;
  /// A device target that can carry the code of a CPU target as its
  /// fallback (--target x86_64,cuda): the backend for both, given the CPU
  /// target's name. Empty for the others.
  std::function<::cuvil::Result<std::unique_ptr<TargetBackend>>(const TargetOptions &, const std::string &host)>
      createWithHost = {};
};

/// Adds a target (a name registered twice keeps the first).
void registerTarget(TargetInfo info);
/// The target named `name`, or null.
const TargetInfo *lookupTarget(const std::string &name);
/// Every registered target, by name.
std::vector<const TargetInfo *> registeredTargets();
/// "x86_64, aarch64" for messages.
std::string targetNameList();

/// Configures the target `name`: an unknown name is a usage error listing
/// the registered ones. Two names with a comma ("x86_64,cuda") are a device
/// target with a CPU target's code as its fallback, in one library.
::cuvil::Result<std::unique_ptr<TargetBackend>> createTargetBackend(const std::string &name,
                                                                    const TargetOptions &options);

} // namespace mlir::cuvil

#endif // CUVIL_TARGETS_TARGET_H
