//===- Aliasing.h - Which cuvil values share storage ------------*- C++ -*-===//
//
// cuvil IR has value semantics, but a compiled model lets view ops
// (reshape, flatten, squeeze, unsqueeze, transpose, permute, expand, slice,
// select) reuse their input's buffer instead of copying. This analysis
// gives each value its storage root (the value whose buffer it views) and
// says whether a view is contiguous (a plain reinterpretation of the
// root's bytes) or strided (transposed, broadcast, or a non-leading slice).
// Fusion legality, the lifetime checker and the memory planner use it.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_DIALECT_CUVIL_ANALYSIS_ALIASING_H
#define CUVIL_DIALECT_CUVIL_ANALYSIS_ALIASING_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"

namespace mlir::cuvil {

/// True for ops whose result may view their first operand's storage.
bool isViewOp(Operation *op);

/// True for a view whose result is the same bytes in the same order as
/// (a prefix range of) its input: reshapes, size-1 squeezes/unsqueezes,
/// permutations that only move size-1 dimensions, slices and selects whose
/// dimension has only size-1 dimensions before it.
bool isContiguousView(Operation *op);

/// The value whose storage `v` views (follows view ops); `v` itself when
/// it is not a view.
Value storageRoot(Value v);

/// The first strided (non-contiguous) view on the way from `v` to its
/// storage root, or null when every step is contiguous.
Operation *firstStridedView(Value v);

} // namespace mlir::cuvil

#endif // CUVIL_DIALECT_CUVIL_ANALYSIS_ALIASING_H
