//===- RunTimeSizes.h - What is known of a run-time size --------*- C++ -*-===//
//
// Ops that build tensors of run-time sizes (cuvil.shape.expand_dynamic,
// cuvil.tensor.iota) take each size as a 0-d i64 tensor computed from
// dynamic dimensions (cuvil.shape.dim) and constants. These answer, from
// that computation, what the verifier, the run-time checks and the
// lowering need: a constant value, a size that cannot be negative, a size
// that is a given tensor's dimension.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_DIALECT_CUVIL_IR_RUNTIMESIZES_H
#define CUVIL_DIALECT_CUVIL_IR_RUNTIMESIZES_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Value.h"

#include <optional>

namespace mlir::cuvil {

/// `size` seen through what does not change it: integer casts, and a fused
/// group (its result is what its body yields, a body argument the group's
/// input).
Value lookThroughSize(Value size);

/// The value of a 0-d integer size that is a constant (or the size of a
/// static dimension).
std::optional<int64_t> constantSize(Value size);

/// Whether `size` is `tensor`'s dimension `dim` (a cuvil.shape.dim of it,
/// through integer casts), or the same constant as that static dimension.
bool isDimOf(Value size, Value tensor, int64_t dim);

/// Whether a view from `from` to `to` keeps its run-time sizes in order:
/// the static sizes between them (and before the first, after the last)
/// have equal products on both sides. Squeeze, unsqueeze and views that
/// keep a batch and a sequence length do; flatten([?, 4, ?], 0, 1), which
/// merges a run-time size with a static one, does not.
bool keepsRunTimeSizesInOrder(RankedTensorType from, RankedTensorType to);

/// Whether two sizes are the same run-time value: one value, dimensions of
/// one tensor, or equal constants.
bool isSameSize(Value a, Value b);

/// Whether dimension `dim` of `tensor` is `size`: that dimension read by
/// cuvil.shape.dim, or the size a tensor of run-time sizes
/// (cuvil.shape.expand_dynamic, cuvil.tensor.iota) was made with.
bool dimIsSize(Value tensor, int64_t dim, Value size);

/// Whether `size` can never be negative: dimensions, constants >= 0, and
/// sums, products, maxima, minima and floor divisions by positive
/// constants of such sizes.
bool isNonNegativeSize(Value size);

/// Whether `size` is computed from constants and dimension sizes only (not
/// from tensor data): the compiled code can bound it by the inputs' bounds.
bool isComputedFromShapes(Value size);

} // namespace mlir::cuvil

#endif // CUVIL_DIALECT_CUVIL_IR_RUNTIMESIZES_H
