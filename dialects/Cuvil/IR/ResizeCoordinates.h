//===- ResizeCoordinates.h - Where resized samples come from ----*- C++ -*-===//
//
// The source coordinates of cuvil.tensor.resize, shared by the reference
// evaluator and the code generators so that both pick the same inputs with
// the same weights (they depend on rounding, which must match PyTorch's).
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_DIALECTS_CUVIL_IR_RESIZECOORDINATES_H
#define CUVIL_DIALECTS_CUVIL_IR_RESIZECOORDINATES_H

#include "dialects/Cuvil/IR/CuvilOps.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

namespace mlir::cuvil {

/// Source coordinates of one resized dimension, computed as PyTorch's CPU
/// kernels do (UpSample.h): nearest modes in f32; linear in the opmath type
/// `T` (f32, or f64 for f64 inputs) so that rounding picks the same inputs.
struct ResizeAxis {
  std::vector<int64_t> lo, hi;     ///< nearest: lo only
  std::vector<double> wLo, wHi;    ///< linear weights
};

template <typename T>
ResizeAxis resizeAxis(ResizeMode mode, int64_t in, int64_t out,
                      std::optional<double> scale, bool alignCorners) {
  ResizeAxis axis;
  // compute_scales_value: 1 / scale when PyTorch was given one, else in / out.
  auto step = [&]() -> T {
    return scale && *scale > 0 ? static_cast<T>(1.0 / *scale)
                               : static_cast<T>(in) / static_cast<T>(out);
  };
  for (int64_t o = 0; o < out; ++o) {
    switch (mode) {
    case ResizeMode::Nearest: {
      int64_t i;
      if (out == in)
        i = o;
      else if (out == 2 * in)
        i = o >> 1;
      else
        i = static_cast<int64_t>(std::floor(static_cast<float>(o) * static_cast<float>(step())));
      axis.lo.push_back(std::min(i, in - 1));
      break;
    }
    case ResizeMode::NearestExact: {
      float src = static_cast<float>((static_cast<double>(o) + 0.5) * static_cast<float>(step()));
      axis.lo.push_back(std::min(static_cast<int64_t>(std::floor(src)), in - 1));
      break;
    }
    case ResizeMode::Linear: {
      if (out == in) {
        axis.lo.push_back(o);
        axis.hi.push_back(o);
        axis.wLo.push_back(1);
        axis.wHi.push_back(0);
        break;
      }
      T ratio = alignCorners ? (out > 1 ? static_cast<T>(in - 1) / static_cast<T>(out - 1) : T(0))
                             : step();
      T src = alignCorners ? ratio * static_cast<T>(o)
                           : ratio * (static_cast<T>(o) + T(0.5)) - T(0.5);
      if (src < 0)
        src = 0;
      int64_t i0 = static_cast<int64_t>(src);
      T l1 = std::min(std::max(src - static_cast<T>(i0), T(0)), T(1));
      axis.lo.push_back(i0);
      axis.hi.push_back(i0 + (i0 < in - 1 ? 1 : 0));
      axis.wLo.push_back(static_cast<double>(T(1) - l1));
      axis.wHi.push_back(static_cast<double>(l1));
      break;
    }
    }
  }
  return axis;
}

} // namespace mlir::cuvil

#endif // CUVIL_DIALECTS_CUVIL_IR_RESIZECOORDINATES_H
