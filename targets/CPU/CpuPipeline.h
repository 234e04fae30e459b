//===- CpuPipeline.h - cuvil IR to the LLVM dialect for CPUs ----*- C++ -*-===//
//
// After the graph pipeline: cuvil -> linalg on tensors -> one-shot
// bufferization (function boundaries, identity layouts, results as out
// parameters) -> intermediates into one arena argument -> loops -> the LLVM
// dialect with bare-pointer calling convention. The function then takes
// (inputs..., outputs..., arena) as plain pointers.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_TARGETS_CPU_CPUPIPELINE_H
#define CUVIL_TARGETS_CPU_CPUPIPELINE_H

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"

#include <functional>
#include <string>

namespace mlir::cuvil {

/// Adds the kernel choice: a #cuvil.kernel on every kernel op without one,
/// from the records of `device` in `tuningDb` (when given), then the
/// built-in heuristics (cuvil-choose-cpu-kernels).
/// `cacheBytes` (a device profile's L2; 0: the heuristics' default) sizes
/// the tensors a banded pair keeps out of memory.
void buildCpuKernelChoicePipeline(OpPassManager &pm, const std::string &tuningDb = "",
                                  const std::string &device = "", uint64_t cacheBytes = 0,
                                  bool remarks = false);

/// Adds the lowering from cuvil IR (after the graph pipeline and the kernel
/// choice) to the LLVM dialect.
/// `testOverlapBuffers`: the planner's mutation test (every buffer at
/// offset 0), which cuvil-verify-lifetimes must catch.
/// `deviceCode`, when given, adds passes where the code is loops on buffers
/// (the arena planned, before the loops go to threads and kernels): a
/// device target takes the functions it marked there.
void buildCpuLoweringPipeline(OpPassManager &pm, bool instrument = false, bool testOverlapBuffers = false,
                              const std::function<void(OpPassManager &)> &deviceCode = {});

/// Dialects and external models (bufferization interfaces, LLVM
/// translation) the lowering needs.
void registerCpuLoweringDialects(DialectRegistry &registry);

/// Registers `cuvil-lower-to-llvm` (the kernel choice, then the lowering)
/// and the CPU passes.
void registerCpuLoweringPipeline();

} // namespace mlir::cuvil

#endif // CUVIL_TARGETS_CPU_CPUPIPELINE_H
