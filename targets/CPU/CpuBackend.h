//===- CpuBackend.h - CPU code generation as a target backend ---*- C++ -*-===//
//
// The TargetBackend of every CPU architecture: the shared lowering
// (CpuPipeline.h), LLVM's code generation and lld (Codegen.h). Each
// architecture's folder gives its CpuTargetSpec and registers itself with
// registerCpuTarget.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_TARGETS_CPU_CPUBACKEND_H
#define CUVIL_TARGETS_CPU_CPUBACKEND_H

#include "targets/CPU/Codegen.h"
#include "targets/Target.h"

namespace mlir::cuvil {

/// Registers the CPU architecture `spec` as a target.
void registerCpuTarget(CpuTargetSpec spec, std::string description);

} // namespace mlir::cuvil

#endif // CUVIL_TARGETS_CPU_CPUBACKEND_H
