//===- CudaBackend.h - The cuda target --------------------------*- C++ -*-===//
#ifndef CUVIL_TARGETS_CUDA_CUDABACKEND_H
#define CUVIL_TARGETS_CUDA_CUDABACKEND_H

#include "targets/Target.h"

namespace mlir::cuvil {

/// Registers --target cuda (x86_64 must be registered first: it is the
/// host, and with --target x86_64,cuda the fallback).
void registerCudaTarget();

} // namespace mlir::cuvil

#endif // CUVIL_TARGETS_CUDA_CUDABACKEND_H
