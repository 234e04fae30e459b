//===- NpuBackend.h - The npu target ----------------------------*- C++ -*-===//
#ifndef CUVIL_TARGETS_NPU_NPUBACKEND_H
#define CUVIL_TARGETS_NPU_NPUBACKEND_H

#include "targets/Target.h"

namespace mlir::cuvil {

/// Registers --target npu (the x86_64 target must be registered first: it
/// is the host).
void registerNpuTarget();

} // namespace mlir::cuvil

#endif // CUVIL_TARGETS_NPU_NPUBACKEND_H
