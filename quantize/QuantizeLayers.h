//===- QuantizeLayers.h - Annotated layers to their precision ---*- C++ -*-===//
//
// cuvil-quantize decides, layer by layer, a precision and (for int8) the
// activation parameters, and writes them as attributes on the float op
// (cuvil.precision, cuvil.quant.input/output/weight: CuvilDialect.h). The
// pass cuvil-quantize-layers then rewrites each annotated conv2d / linear:
//   int8       quantize(input) -> cuvil.quant.conv2d|linear with the weights
//              quantized at compile time (per output channel, symmetric,
//              [-127, 127], unless cuvil.quant.weight says otherwise) ->
//              dequantize; the result keeps the float type;
//   fp16/bf16  the input rounded through f16/bf16 and the weights stored
//              rounded, accumulation in f32;
//   fp32       unchanged;
//   an add (cuvil.quant.input / .rhs / .output for its operands and sum)
//              int8: quantize both -> cuvil.quant.add (a relu that is its
//              only user folded in) -> dequantize; otherwise unchanged.
// Then it folds what the rewrite makes redundant: quantize(dequantize(q, P),
// P) is q, and a relu of a dequantized value whose zero point is the
// storage's minimum (nothing below zero to clip) is that value.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_QUANTIZE_QUANTIZELAYERS_H
#define CUVIL_QUANTIZE_QUANTIZELAYERS_H

#include "dialects/Cuvil/IR/CuvilDialect.h"
#include "dialects/Cuvil/Transforms/Passes.h"
#include "quantize/Calibration.h"
#include "support/Tensor.h"

#include "mlir/Pass/Pass.h"

#include <memory>

namespace mlir::cuvil {

std::unique_ptr<Pass> createCuvilQuantizeLayersPass();
void registerQuantizePasses();

/// Symmetric weight parameters on `grid`: per output channel (axis 0) or
/// one for the whole tensor (axis -1).
QuantParamsAttr weightQuantParams(MLIRContext *ctx, const ::cuvil::Tensor &w,
                                  ::cuvil::quant::QuantGrid grid, bool perChannel);


/// The weights as i8 with parameters `p` (PyTorch's rounding).
::cuvil::Tensor quantizeWeightTensor(const ::cuvil::Tensor &w, QuantParamsAttr p);

} // namespace mlir::cuvil

#endif // CUVIL_QUANTIZE_QUANTIZELAYERS_H
