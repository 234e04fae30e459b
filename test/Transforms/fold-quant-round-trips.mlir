// RUN: cuvil-opt %s -split-input-file --cuvil-fold-quant-round-trips | FileCheck %s

// A max pool between two quantized layers runs on the storage; the relu of
// an output whose zero point is the storage's minimum clips nothing; the
// quantize of the pooled value with the same parameters folds.
// CHECK-LABEL: func.func @between_layers
//       CHECK:   %[[P:.*]] = cuvil.pool.max_pool2d %arg0 {{.*}} : tensor<1x2x4x4xui8> -> tensor<1x2x2x2xui8>
//   CHECK-NOT:   cuvil.act.relu
//   CHECK-NOT:   cuvil.quant.quantize
//       CHECK:   return %[[P]]
func.func @between_layers(%q: tensor<1x2x4x4xui8>) -> tensor<1x2x2x2xui8> {
  %d = cuvil.quant.dequantize %q {params = #cuvil.quant<scale = [0.1], zero_point = [0]>} : tensor<1x2x4x4xui8> -> tensor<1x2x4x4xf32>
  %r = cuvil.act.relu %d : tensor<1x2x4x4xf32>
  %m = cuvil.pool.max_pool2d %r kernel [2, 2] stride [2, 2] padding [0, 0] dilation [1, 1] : tensor<1x2x4x4xf32> -> tensor<1x2x2x2xf32>
  %y = cuvil.quant.quantize %m {params = #cuvil.quant<scale = [0.1], zero_point = [0]>} : tensor<1x2x2x2xf32> -> tensor<1x2x2x2xui8>
  return %y : tensor<1x2x2x2xui8>
}

// -----

// A relu that clips (zero point 10 of ui8) stays in float, and so do the
// round trip around it; a requantization to other parameters stays too.
// CHECK-LABEL: func.func @clipping_relu
//       CHECK:   cuvil.quant.dequantize
//       CHECK:   cuvil.act.relu
//       CHECK:   cuvil.quant.quantize %{{.*}} {params = #cuvil.quant<scale = [0.2], zero_point = [10]>}
func.func @clipping_relu(%q: tensor<4xui8>) -> tensor<4xui8> {
  %d = cuvil.quant.dequantize %q {params = #cuvil.quant<scale = [0.1], zero_point = [10]>} : tensor<4xui8> -> tensor<4xf32>
  %r = cuvil.act.relu %d : tensor<4xf32>
  %y = cuvil.quant.quantize %r {params = #cuvil.quant<scale = [0.2], zero_point = [10]>} : tensor<4xf32> -> tensor<4xui8>
  return %y : tensor<4xui8>
}
