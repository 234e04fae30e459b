//===- ConstantValues.h - Reading and naming constants in graph passes ----===//
//
// What the passes that compute new weights from old ones (batch-norm
// folding, transposed convolutions as 1x1 ones, constant folding) share:
// a constant's value, and a resource name for a weight derived from it.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_DIALECTS_CUVIL_TRANSFORMS_CONSTANTVALUES_H
#define CUVIL_DIALECTS_CUVIL_TRANSFORMS_CONSTANTVALUES_H

#include "dialects/Cuvil/Reference/Evaluator.h"

#include <optional>
#include <string>

namespace mlir::cuvil {

/// The value of `v` when a cuvil.constant defines it (its diagnostics
/// silenced: a constant the evaluator cannot read is simply not one).
std::optional<reference::Tensor> constantValue(Value v);

/// "conv1.weight" + "bn_folded" -> "conv1.weight.bn_folded" when `from` is a
/// named blob, else `fallback` + "." + `suffix`.
std::string derivedResourceName(Value from, StringRef suffix, StringRef fallback = "folded");

} // namespace mlir::cuvil

#endif // CUVIL_DIALECTS_CUVIL_TRANSFORMS_CONSTANTVALUES_H
