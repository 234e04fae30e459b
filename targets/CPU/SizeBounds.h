//===- SizeBounds.h - Upper bounds of run-time sizes ------------*- C++ -*-===//
//
// A hybrid model's buffers have sizes known only at run time, computed from
// its inputs' dynamic dimensions, whose bounds the model function's
// arguments carry (cuvil.dim_bounds). The arena is planned at the largest
// size each buffer can take: this evaluates an index value's upper bound
// through the ops that size computations are made of (dims of arguments,
// allocations and views, arithmetic, affine maps, min/max).
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_TARGETS_CPU_SIZEBOUNDS_H
#define CUVIL_TARGETS_CPU_SIZEBOUNDS_H

#include "mlir/IR/Value.h"

#include <optional>

namespace mlir::cuvil::cpu {

/// The largest value `size` (an index or integer value >= 0) can take, or
/// nullopt when it cannot be bounded.
std::optional<int64_t> upperBound(Value size);

/// The largest size dimension `dim` of `shaped` (a memref or tensor) can
/// take: its static size, else the bound of its run-time size.
std::optional<int64_t> dimUpperBound(Value shaped, int64_t dim);

} // namespace mlir::cuvil::cpu

#endif // CUVIL_TARGETS_CPU_SIZEBOUNDS_H
