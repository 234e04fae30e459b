//===- BatchNormFolding.h - The algebra of folding a batch norm -----------===//
//
// An inference batch norm y = (x - mean) / sqrt(var + eps) * weight + bias is
// x * scale + shift per channel; before a convolution or linear layer it
// folds into that layer's weights (each scaled by its output channel's
// scale) and bias (bias * scale + shift). The formulas are templates so the
// pass computes them in double and the rewrite validator (verify/) in solver
// terms: what is proved is the code the pass runs.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_DIALECTS_CUVIL_TRANSFORMS_BATCHNORMFOLDING_H
#define CUVIL_DIALECTS_CUVIL_TRANSFORMS_BATCHNORMFOLDING_H

#include "mlir/IR/Operation.h"

namespace mlir::cuvil {

template <typename T> struct ScaleShift {
  T scale, shift;
};

/// `sqrt` and `div` are the arithmetic's (std::sqrt and / for double).
template <typename T, typename Sqrt, typename Div>
ScaleShift<T> batchNormScaleShift(const T &mean, const T &var, const T &weight, const T &bias,
                                  const T &eps, Sqrt sqrt, Div div) {
  T scale = div(weight, sqrt(var + eps));
  return {scale, bias - mean * scale};
}

/// A weight element of the layer before the batch norm, folded.
template <typename T> T foldedWeight(const T &w, const ScaleShift<T> &s) { return w * s.scale; }
/// The layer's bias (0 without one), folded.
template <typename T> T foldedBias(const T &b, const ScaleShift<T> &s) {
  return b * s.scale + s.shift;
}

/// The output channel that element `flat` (row-major) of `producer`'s weight
/// feeds; -1 when the batch norm cannot fold into `producer` (not a conv or
/// linear layer, or a linear layer whose features are not dimension 1).
int64_t foldedChannel(Operation *producer, ArrayRef<int64_t> weightShape, int64_t flat);

} // namespace mlir::cuvil

#endif
