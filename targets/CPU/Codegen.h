//===- Codegen.h - LLVM IR to objects and shared libraries ------*- C++ -*-===//
//
// In-process: LLVM's target machines turn the model's LLVM IR into an
// object (after LLVM's O3 pipeline), and lld links it with the runtime
// archive into libinference.so, exporting only cuvil_* and depending only
// on libc and libm. Both steps are deterministic for identical inputs.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_TARGETS_CPU_CODEGEN_H
#define CUVIL_TARGETS_CPU_CODEGEN_H

#include "support/Status.h"

#include "llvm/IR/Module.h"
#include "llvm/Target/TargetMachine.h"

#include <functional>
#include <string>
#include <vector>

namespace mlir::cuvil {

/// A CPU target as LLVM and the linker see it.
struct CpuTarget {
  std::string name;     ///< "x86_64", "aarch64"
  std::string triple;   ///< "x86_64-unknown-linux-gnu"
  std::string cpu;      ///< LLVM CPU name
  std::string features; ///< LLVM feature string ("+avx2,+fma,...")
  std::string emulation;  ///< lld -m
  std::vector<std::string> systemLibraries; ///< libc.so.6, libm.so.6 of the target
  std::string runtimeArchive; ///< libcuvil_runtime.a for the target
  std::string exportsMap;     ///< runtime/exports.map
};

/// What one CPU architecture's folder (targets/X86_64, targets/AArch64)
/// says about it; the rest of CPU code generation is shared.
struct CpuTargetSpec {
  std::string name, triple, emulation;
  std::vector<std::string> systemLibraries;
  std::string runtimeArchive; ///< relative to the runtime directory
  /// Fills t.cpu and t.features for the user's `cpu` ("" = the default).
  std::function<void(const std::string &cpu, CpuTarget &t)> chooseCpu;
};

/// The target of `spec` for `cpu` (an unknown CPU name is a usage error),
/// with `features` ("+dotprod,..."; a device profile's) on top of the CPU's.
::cuvil::Result<CpuTarget> makeCpuTarget(const CpuTargetSpec &spec, const std::string &cpu,
                                         const std::string &features = "");

/// The features of `target` that the runtime checks at load time (LLVM
/// names among those the runtime knows).
std::vector<std::string> requiredFeatures(const CpuTarget &target);

/// LLVM's O3 pipeline on `module`, for `machine` (every target's code:
/// the CPUs' and the CUDA kernels').
void runO3(llvm::Module &module, llvm::TargetMachine &machine);

enum class OutputKind { Assembly, Object };

/// Optimises `module` (O3) for `target` and emits assembly or an object.
::cuvil::Result<std::string> emitMachineCode(llvm::Module &module, const CpuTarget &target,
                                             OutputKind kind);

/// Links `objects` (in order; empty ones are skipped) with the target's
/// runtime into a shared library at `outputPath` (a temporary path: the
/// caller renames it into place), its SONAME `soname` (what programs linked
/// with it will look for), the C API exported as cuvil_* or, with a
/// `symbolPrefix`, as PREFIX_* only.
::cuvil::Status linkSharedLibrary(const std::vector<std::string> &objects, const CpuTarget &target,
                                  const std::string &outputPath, const std::string &soname,
                                  const std::string &symbolPrefix);

/// `objects` as one relocatable object (ld -r), through temporary files
/// next to `nextTo`.
::cuvil::Result<std::string> combineObjects(const std::vector<std::string> &objects,
                                            const CpuTarget &target, const std::string &nextTo);

/// The C API's function names (cuvil_abi_version, ...), from the exports map.
std::vector<std::string> runtimeApiFunctions();

/// runtime/exports.map: the linker version script of every library.
const char *runtimeExportsMapText();

} // namespace mlir::cuvil

#endif // CUVIL_TARGETS_CPU_CODEGEN_H
