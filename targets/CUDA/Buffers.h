//===- Buffers.h - What the CUDA passes ask of a buffer ---------*- C++ -*-===//
#ifndef CUVIL_TARGETS_CUDA_BUFFERS_H
#define CUVIL_TARGETS_CUDA_BUFFERS_H

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include <algorithm>

namespace mlir::cuvil::cuda {

/// The library constant (weights) a buffer is a view of, if any: the host
/// code holds its host address, the kernels need the device copy's.
inline memref::GetGlobalOp constantRoot(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (auto global = dyn_cast<memref::GetGlobalOp>(def))
      return global;
    auto view = dyn_cast<ViewLikeOpInterface>(def);
    if (!view)
      return {};
    v = view.getViewSource();
  }
  return {};
}

/// Bytes of one element in memory: index is 64-bit, i1 one byte.
inline int64_t elementBytes(Type t) {
  if (t.isIndex())
    return 8;
  return std::max<int64_t>(1, t.getIntOrFloatBitWidth() / 8);
}

/// Bytes of a buffer of static shape.
inline int64_t bufferBytes(MemRefType type) { return type.getNumElements() * elementBytes(type.getElementType()); }

} // namespace mlir::cuvil::cuda

#endif // CUVIL_TARGETS_CUDA_BUFFERS_H
