//===- ConstantValues.h - Reading and naming constants in graph passes ----===//
//
// What the passes that compute new weights from old ones (batch-norm
// folding, transposed convolutions as 1x1 ones, constant folding) share:
// a constant's value, and a resource name for a weight derived from it.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_DIALECTS_CUVIL_TRANSFORMS_CONSTANTVALUES_H
#define CUVIL_DIALECTS_CUVIL_TRANSFORMS_CONSTANTVALUES_H

#include "dialects/Cuvil/IR/WeightDerivations.h"
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

/// Whether `v` is a constant that holds weights: a floating-point resource
/// of 64 bytes or more (what a model's structure leaves out: the driver's
/// WeightsPlan.h), or one made from such. Smaller tensors are part of the
/// structure, values and all, so rewrites may still decide on them.
bool holdsWeights(Value v);

/// `t` as a resource named `name` whatever its size (a bool tensor, which a
/// resource cannot hold, as a dense attribute): what a pass makes of weights
/// stays opaque to later rewrites, which a redeploy with new weights would
/// not run again (WeightDerivations.h).
ElementsAttr weightAttrFromTensor(const reference::Tensor &t, RankedTensorType type, StringRef name);

/// A replayed input's bytes as a tensor of its type; failure when they do
/// not fit it.
FailureOr<reference::Tensor> tensorOfBytes(const WeightBytes &in);

} // namespace mlir::cuvil

#endif // CUVIL_DIALECTS_CUVIL_TRANSFORMS_CONSTANTVALUES_H
