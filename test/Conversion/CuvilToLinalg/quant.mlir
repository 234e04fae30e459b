// RUN: cuvil-opt %s --split-input-file --convert-cuvil-to-linalg | FileCheck %s

// Per tensor: one generic with the float reciprocal of the scale and the
// zero point as constants; ties to even; NaN and values past int64 to qmin;
// clamped in i64, stored as (signless) i8.
// CHECK-LABEL: func.func @quantize_per_tensor
//       CHECK:   linalg.generic
//       CHECK:     arith.mulf %{{.*}}, %{{.*}} : f32
//       CHECK:     math.roundeven
//       CHECK:     arith.addf
//       CHECK:     arith.cmpf ogt
//       CHECK:     arith.cmpf olt
//       CHECK:     arith.fptosi %{{.*}} : f32 to i64
//       CHECK:     arith.maxsi
//       CHECK:     arith.minsi
//       CHECK:     arith.trunci %{{.*}} : i64 to i8
//       CHECK:   -> tensor<4xi8>
func.func @quantize_per_tensor(%x: tensor<4xf32>) -> tensor<4xui8> {
  %q = cuvil.quant.quantize %x {params = #cuvil.quant<scale = [0.05], zero_point = [128]>} : tensor<4xf32> -> tensor<4xui8>
  return %q : tensor<4xui8>
}

// -----

// Per channel: the parameters are [C, 1] constants broadcast along axis 0;
// dequantizing per channel computes in int64 and double, as PyTorch does.
// CHECK-LABEL: func.func @dequantize_per_channel
//   CHECK-DAG:   arith.constant dense<[{{\[}}1.000000e-01], [2.000000e-01], [3.000000e-01]]> : tensor<3x1xf64>
//   CHECK-DAG:   arith.constant dense<{{\[}}[0], [1], [-1]]> : tensor<3x1xi64>
//       CHECK:   linalg.generic
//       CHECK:     arith.extsi %{{.*}} : i8 to i64
//       CHECK:     arith.subi
//       CHECK:     arith.sitofp %{{.*}} : i64 to f64
//       CHECK:     arith.mulf %{{.*}}, %{{.*}} : f64
//       CHECK:     arith.truncf %{{.*}} : f64 to f32
func.func @dequantize_per_channel(%q: tensor<3x4xi8>) -> tensor<3x4xf32> {
  %d = cuvil.quant.dequantize %q {params = #cuvil.quant<scale = [0.1, 0.2, 0.3], zero_point = [0, 1, -1], axis = 0>} : tensor<3x4xi8> -> tensor<3x4xf32>
  return %d : tensor<3x4xf32>
}

// -----

// A quantized linear layer: one contraction of centred int32 products
// (the weights' zero points per output channel as an [N] constant), then
// one epilogue: the bias quantized to int32 with scale sx * sw, added, and
// requantized with the float multiplier sw * sx / sy per channel.
// CHECK-LABEL: func.func @linear
//   CHECK-DAG:   %[[ZW:.*]] = arith.constant dense<[0, 1]> : tensor<2xi32>
//   CHECK-DAG:   %[[INIT:.*]] = linalg.fill ins(%{{.*}} : i32) outs(%{{.*}} : tensor<5x2xi32>)
//       CHECK:   %[[ACC:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]{{.*}} ins(%arg0, %arg1, %[[ZW]] : tensor<5x37xi8>, tensor<2x37xi8>, tensor<2xi32>) outs(%[[INIT]] : tensor<5x2xi32>)
//       CHECK:     arith.extui %{{.*}} : i8 to i32
//       CHECK:     arith.extsi %{{.*}} : i8 to i32
//       CHECK:     arith.muli
//       CHECK:     arith.addi
//       CHECK:   linalg.generic {{.*}} ins(%[[ACC]], %arg2, %{{.*}}, %{{.*}} : tensor<5x2xi32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>)
//       CHECK:     math.roundeven
//       CHECK:     arith.trunci %{{.*}} : i64 to i32
//       CHECK:     arith.addi
//       CHECK:     arith.sitofp %{{.*}} : i32 to f32
//       CHECK:     math.roundeven
//       CHECK:     arith.trunci %{{.*}} : i64 to i8
func.func @linear(%x: tensor<5x37xui8>, %w: tensor<2x37xi8>, %b: tensor<2xf32>) -> tensor<5x2xui8> {
  %0 = cuvil.quant.linear %x, %w, %b {input_params = #cuvil.quant<scale = [0.03], zero_point = [120]>, weight_params = #cuvil.quant<scale = [0.005, 0.006], zero_point = [0, 1], axis = 0>, output_params = #cuvil.quant<scale = [0.08], zero_point = [100]>} : (tensor<5x37xui8>, tensor<2x37xi8>, tensor<2xf32>) -> tensor<5x2xui8>
  return %0 : tensor<5x2xui8>
}

// -----

// A quantized convolution: the input padded with its zero point (120 as
// i8 is 120; 200 would be -56), split by group, one contraction over
// (n, g, cog, oh, ow, cig, kh, kw), collapsed back, then the epilogue.
// CHECK-LABEL: func.func @conv
//       CHECK:   tensor.pad %arg0 low[0, 0, 1, 1] high[0, 0, 1, 1]
//       CHECK:     tensor.yield %{{.*}} : i8
//       CHECK:   tensor.expand_shape {{.*}} into tensor<1x2x2x10x10xi8>
//       CHECK:   tensor.expand_shape %arg1 {{.*}} into tensor<2x3x2x3x3xi8>
//       CHECK:   linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]
//       CHECK:   tensor.collapse_shape {{.*}} into tensor<1x6x8x8xi32>
//       CHECK:   linalg.generic
//       CHECK:     math.roundeven
//       CHECK:   -> tensor<1x6x8x8xi8>
func.func @conv(%x: tensor<1x4x8x8xui8>, %w: tensor<6x2x3x3xi8>) -> tensor<1x6x8x8xui8> {
  %0 = cuvil.quant.conv2d %x, %w stride [1, 1] padding [1, 1] dilation [1, 1] groups 2 {input_params = #cuvil.quant<scale = [0.03], zero_point = [120]>, weight_params = #cuvil.quant<scale = [0.005], zero_point = [0]>, output_params = #cuvil.quant<scale = [0.08], zero_point = [100]>} : (tensor<1x4x8x8xui8>, tensor<6x2x3x3xi8>) -> tensor<1x6x8x8xui8>
  return %0 : tensor<1x6x8x8xui8>
}

// -----

// An f32 result (no output_params): the epilogue dequantizes the sums,
// float(acc) * (float(sx) * float(sw)), with no rounding to storage.
// CHECK-LABEL: func.func @linear_f32
//       CHECK:   linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
//       CHECK:   linalg.generic
//       CHECK:     arith.sitofp %{{.*}} : i32 to f32
//  CHECK-NEXT:     arith.constant 1.49999993E-4 : f32
//  CHECK-NEXT:     arith.mulf
//  CHECK-NEXT:     linalg.yield %{{.*}} : f32
//   CHECK-NOT:   math.roundeven
func.func @linear_f32(%x: tensor<5x37xui8>, %w: tensor<2x37xi8>) -> tensor<5x2xf32> {
  %0 = cuvil.quant.linear %x, %w {input_params = #cuvil.quant<scale = [0.03], zero_point = [120]>, weight_params = #cuvil.quant<scale = [0.005], zero_point = [0]>} : (tensor<5x37xui8>, tensor<2x37xi8>) -> tensor<5x2xf32>
  return %0 : tensor<5x2xf32>
}

// -----

// qadd: one generic over both operands; each dequantized as PyTorch's
// vectorized kernel does, fma(scale, float(q), scale * -zero_point) (ui8
// widened unsigned), the sum in float, max with 0 for relu, then quantized
// as quantize does; the sum of two dequantized 8-bit values is finite and
// small, so the result is clamped in float and converted through i32 (no
// NaN or int64 guards: the loop vectorizes).
// CHECK-LABEL: func.func @add_relu
//       CHECK:   linalg.generic
//  CHECK-SAME:     ins(%{{.*}}, %{{.*}} : tensor<2x4xi8>, tensor<2x4xi8>)
//       CHECK:     arith.extui %{{.*}} : i8 to i32
//       CHECK:     arith.sitofp %{{.*}} : i32 to f32
//       CHECK:     arith.mulf
//       CHECK:     math.fma
//       CHECK:     arith.extsi %{{.*}} : i8 to i32
//       CHECK:     math.fma
//       CHECK:     arith.addf
//       CHECK:     arith.maximumf
//       CHECK:     math.roundeven
//       CHECK:     arith.maximumf
//       CHECK:     arith.minimumf
//       CHECK:     arith.fptosi %{{.*}} : f32 to i32
//       CHECK:     arith.trunci %{{.*}} : i32 to i8
//   CHECK-NOT:     i64
//       CHECK:   -> tensor<2x4xi8>
func.func @add_relu(%a: tensor<2x4xui8>, %b: tensor<2x4xi8>) -> tensor<2x4xui8> {
  %y = cuvil.quant.add %a, %b {lhs_params = #cuvil.quant<scale = [0.05], zero_point = [128]>,
         rhs_params = #cuvil.quant<scale = [0.04], zero_point = [-3]>,
         output_params = #cuvil.quant<scale = [0.06], zero_point = [0]>, relu}
       : (tensor<2x4xui8>, tensor<2x4xi8>) -> tensor<2x4xui8>
  return %y : tensor<2x4xui8>
}

// -----

// Scales that could take the sum past int32 keep quantize's guards.
// CHECK-LABEL: func.func @add_far
//       CHECK:   arith.cmpf ogt
//       CHECK:   arith.fptosi %{{.*}} : f32 to i64
func.func @add_far(%a: tensor<4xui8>, %b: tensor<4xui8>) -> tensor<4xui8> {
  %y = cuvil.quant.add %a, %b {lhs_params = #cuvil.quant<scale = [1.0e6], zero_point = [0]>,
         rhs_params = #cuvil.quant<scale = [1.0], zero_point = [0]>,
         output_params = #cuvil.quant<scale = [1.0e-6], zero_point = [0]>}
       : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  return %y : tensor<4xui8>
}

// -----

// quant.avg_pool2d: the input padded with its zero point, one window-sum
// generic in int32 over a shape-only [KH, KW] operand, then the rounding
// with each position's multiplier (a [OH, OW] constant: padding not
// counted, so the corners divide by 4).
// CHECK-LABEL: func.func @avg_pool
//       CHECK:   tensor.pad
//       CHECK:   linalg.generic
//  CHECK-SAME:     iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]
//       CHECK:     arith.subi
//       CHECK:     arith.addi
//       CHECK:   arith.constant dense<{{.*}}> : tensor<4x4xf32>
//       CHECK:   linalg.generic
//       CHECK:     arith.sitofp
//       CHECK:     arith.mulf
//       CHECK:     arith.addf
//       CHECK:     math.roundeven
func.func @avg_pool(%x: tensor<1x2x4x4xui8>) -> tensor<1x2x4x4xui8> {
  %y = cuvil.quant.avg_pool2d %x kernel [3, 3] stride [1, 1] padding [1, 1] {input_params = #cuvil.quant<scale = [0.1], zero_point = [5]>, output_params = #cuvil.quant<scale = [0.1], zero_point = [5]>} : tensor<1x2x4x4xui8> -> tensor<1x2x4x4xui8>
  return %y : tensor<1x2x4x4xui8>
}

// -----

// QNNPACK's pooling: every position divides by the whole window (one
// multiplier, padding counted), float(sx) / (float(sy) * 9), which for a
// scale of 0.043 is one ulp below float(1/9); rounded before the zero point.
// CHECK-LABEL: func.func @avg_pool_qnnpack
//       CHECK:   arith.constant dense<0.111111104> : tensor<4x4xf32>
//       CHECK:   linalg.generic
//       CHECK:     arith.sitofp
//       CHECK:     arith.mulf
//       CHECK:     math.roundeven
//       CHECK:     arith.addf
func.func @avg_pool_qnnpack(%x: tensor<1x2x4x4xui8>) -> tensor<1x2x4x4xui8> {
  %y = cuvil.quant.avg_pool2d %x kernel [3, 3] stride [1, 1] padding [1, 1] {arithmetic = "qnnpack", count_include_pad, input_params = #cuvil.quant<scale = [0.043], zero_point = [5]>, output_params = #cuvil.quant<scale = [0.043], zero_point = [5]>} : tensor<1x2x4x4xui8> -> tensor<1x2x4x4xui8>
  return %y : tensor<1x2x4x4xui8>
}

// -----

// quant.linear_dynamic (onednn): the input's range in one reduction, the
// parameters in a generic without loops (scale in f64, zero point nudged
// to an integer, oneDNN's float(1 / scale)), the input quantized and
// centred in i32, the int32 contraction, then (float(acc) + b * r) * (1 / r)
// with NaN where the range was not finite.
// CHECK-LABEL: func.func @linear_dynamic
//       CHECK:   linalg.generic
//  CHECK-SAME:     iterator_types = ["reduction", "reduction"]
//       CHECK:     arith.minimumf
//       CHECK:     arith.maximumf
//       CHECK:   linalg.generic
//  CHECK-SAME:     iterator_types = []
//       CHECK:     arith.divf %{{.*}}, %{{.*}} : f64
//       CHECK:     math.roundeven %{{.*}} : f64
//       CHECK:   linalg.generic
//       CHECK:     arith.mulf
//       CHECK:     arith.addf
//       CHECK:     math.roundeven
//       CHECK:     arith.fptosi %{{.*}} : f32 to i32
//       CHECK:   linalg.generic
//  CHECK-SAME:     iterator_types = ["parallel", "parallel", "reduction"]
//       CHECK:     arith.muli
//       CHECK:   linalg.generic
//       CHECK:     arith.sitofp
//       CHECK:     arith.divf
//       CHECK:     arith.select
func.func @linear_dynamic(%x: tensor<3x5xf32>, %w: tensor<4x5xi8>, %b: tensor<4xf32>) -> tensor<3x4xf32> {
  %y = cuvil.quant.linear_dynamic %x, %w, %b {arithmetic = "onednn", reduce_range, weight_params = #cuvil.quant<scale = [0.01], zero_point = [0]>} : (tensor<3x5xf32>, tensor<4x5xi8>, tensor<4xf32>) -> tensor<3x4xf32>
  return %y : tensor<3x4xf32>
}

// -----

// quant.mul: the centred operands' int32 product (the scale broadcast
// along the input's pixels), requantized with one float multiplier and
// clamped at the output's zero point for relu.
// CHECK-LABEL: func.func @mul
//       CHECK:   linalg.generic
//  CHECK-SAME:     ins(%{{.*}}, %{{.*}} : tensor<1x8x1x1xi8>, tensor<1x8x4x4xi8>) outs(%{{.*}} : tensor<1x8x4x4xi8>)
//       CHECK:     arith.subi
//       CHECK:     arith.subi
//       CHECK:     arith.muli
//       CHECK:     arith.sitofp
//       CHECK:     arith.mulf
//       CHECK:     math.roundeven
//       CHECK:     arith.maxsi
//       CHECK:     arith.minsi
func.func @mul(%s: tensor<1x8x1x1xui8>, %x: tensor<1x8x4x4xui8>) -> tensor<1x8x4x4xui8> {
  %y = cuvil.quant.mul %s, %x {lhs_params = #cuvil.quant<scale = [0.004], zero_point = [0]>, rhs_params = #cuvil.quant<scale = [0.02], zero_point = [3]>, output_params = #cuvil.quant<scale = [0.015], zero_point = [5]>, relu} : (tensor<1x8x1x1xui8>, tensor<1x8x4x4xui8>) -> tensor<1x8x4x4xui8>
  return %y : tensor<1x8x4x4xui8>
}

// -----

// A fused dequantization: fma(s, q, s * -z) with the premultiplied zero
// point a constant.
// CHECK-LABEL: func.func @dequantize_fused
//       CHECK:   linalg.generic
//       CHECK:     arith.sitofp
//       CHECK:     math.fma %{{.*}}, %{{.*}}, %{{.*}} : f32
func.func @dequantize_fused(%q: tensor<4xui8>) -> tensor<4xf32> {
  %x = cuvil.quant.dequantize %q {fused, params = #cuvil.quant<scale = [0.05], zero_point = [128]>} : tensor<4xui8> -> tensor<4xf32>
  return %x : tensor<4xf32>
}
