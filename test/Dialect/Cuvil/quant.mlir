// RUN: cuvil-opt %s --split-input-file | cuvil-opt | FileCheck %s

// Round trip of the cuvil.quant family and #cuvil.quant.
// CHECK-LABEL: func.func @round_trip
//       CHECK:   cuvil.quant.quantize %{{.*}} {params = #cuvil.quant<scale = [0.05], zero_point = [128]>} : tensor<2x3xf32> -> tensor<2x3xui8>
//       CHECK:   cuvil.quant.dequantize %{{.*}} {params = #cuvil.quant<scale = [0.1, 0.2, 0.3], zero_point = [0, 1, -1], axis = 1>} : tensor<2x3xi8> -> tensor<2x3xf32>
//       CHECK:   cuvil.quant.requantize %{{.*}} {input_params = #cuvil.quant<scale = [0.001], zero_point = [0]>, output_params = #cuvil.quant<scale = [0.05], zero_point = [-3]>} : tensor<2x3xi32> -> tensor<2x3xi8>
func.func @round_trip(%x: tensor<2x3xf32>, %c: tensor<2x3xi8>, %acc: tensor<2x3xi32>) -> (tensor<2x3xui8>, tensor<2x3xf32>, tensor<2x3xi8>) {
  %q = cuvil.quant.quantize %x {params = #cuvil.quant<scale = [0.05], zero_point = [128]>} : tensor<2x3xf32> -> tensor<2x3xui8>
  %d = cuvil.quant.dequantize %c {params = #cuvil.quant<scale = [0.1, 0.2, 0.3], zero_point = [0, 1, -1], axis = 1>} : tensor<2x3xi8> -> tensor<2x3xf32>
  %r = cuvil.quant.requantize %acc {input_params = #cuvil.quant<scale = [0.001], zero_point = [0]>, output_params = #cuvil.quant<scale = [0.05], zero_point = [-3]>} : tensor<2x3xi32> -> tensor<2x3xi8>
  return %q, %d, %r : tensor<2x3xui8>, tensor<2x3xf32>, tensor<2x3xi8>
}

// -----

// CHECK-LABEL: func.func @linear
//       CHECK:   cuvil.quant.linear %{{.*}}, %{{.*}}, %{{.*}} {input_params = #cuvil.quant<scale = [0.03], zero_point = [120]>, output_params = #cuvil.quant<scale = [0.08], zero_point = [100]>, weight_params = #cuvil.quant<scale = [0.005, 0.006], zero_point = [0, 0], axis = 0>} : (tensor<5x37xui8>, tensor<2x37xi8>, tensor<2xf32>) -> tensor<5x2xui8>
//       CHECK:   cuvil.quant.linear %{{.*}}, %{{.*}} {{.*}} : (tensor<5x37xui8>, tensor<2x37xi8>) -> tensor<5x2xui8>
func.func @linear(%x: tensor<5x37xui8>, %w: tensor<2x37xi8>, %b: tensor<2xf32>) -> (tensor<5x2xui8>, tensor<5x2xui8>) {
  %0 = cuvil.quant.linear %x, %w, %b {input_params = #cuvil.quant<scale = [0.03], zero_point = [120]>, weight_params = #cuvil.quant<scale = [0.005, 0.006], zero_point = [0, 0], axis = 0>, output_params = #cuvil.quant<scale = [0.08], zero_point = [100]>} : (tensor<5x37xui8>, tensor<2x37xi8>, tensor<2xf32>) -> tensor<5x2xui8>
  %1 = cuvil.quant.linear %x, %w {input_params = #cuvil.quant<scale = [0.03], zero_point = [120]>, weight_params = #cuvil.quant<scale = [0.005], zero_point = [0]>, output_params = #cuvil.quant<scale = [0.08], zero_point = [100]>} : (tensor<5x37xui8>, tensor<2x37xi8>) -> tensor<5x2xui8>
  return %0, %1 : tensor<5x2xui8>, tensor<5x2xui8>
}

// -----

// CHECK-LABEL: func.func @conv
//       CHECK:   cuvil.quant.conv2d %{{.*}}, %{{.*}}, %{{.*}} stride [1, 1] padding [1, 1] dilation [1, 1] groups 2 {{{.*}}} : (tensor<1x4x8x8xui8>, tensor<6x2x3x3xi8>, tensor<6xf32>) -> tensor<1x6x8x8xui8>
func.func @conv(%x: tensor<1x4x8x8xui8>, %w: tensor<6x2x3x3xi8>, %b: tensor<6xf32>) -> tensor<1x6x8x8xui8> {
  %0 = cuvil.quant.conv2d %x, %w, %b stride [1, 1] padding [1, 1] dilation [1, 1] groups 2 {input_params = #cuvil.quant<scale = [0.03], zero_point = [120]>, weight_params = #cuvil.quant<scale = [0.005], zero_point = [0]>, output_params = #cuvil.quant<scale = [0.08], zero_point = [100]>} : (tensor<1x4x8x8xui8>, tensor<6x2x3x3xi8>, tensor<6xf32>) -> tensor<1x6x8x8xui8>
  return %0 : tensor<1x6x8x8xui8>
}

// -----

// Quantized average pooling and the arithmetic attributes round-trip.
// CHECK-LABEL: func.func @pool_and_engines
//       CHECK:   cuvil.quant.avg_pool2d %{{.*}} kernel [3, 3] stride [1, 1] padding [1, 1] {count_include_pad, input_params = #cuvil.quant<scale = [0.043], zero_point = [17]>, output_params = #cuvil.quant<scale = [0.043], zero_point = [17]>, round_before_zero_point} : tensor<1x4x6x6xui8> -> tensor<1x4x6x6xui8>
//       CHECK:   cuvil.quant.add %{{.*}}, %{{.*}} {arithmetic = "qnnpack"
func.func @pool_and_engines(%x: tensor<1x4x6x6xui8>) -> (tensor<1x4x6x6xui8>, tensor<1x4x6x6xui8>) {
  %p = cuvil.quant.avg_pool2d %x kernel [3, 3] stride [1, 1] padding [1, 1] {input_params = #cuvil.quant<scale = [0.043], zero_point = [17]>, output_params = #cuvil.quant<scale = [0.043], zero_point = [17]>, count_include_pad, round_before_zero_point} : tensor<1x4x6x6xui8> -> tensor<1x4x6x6xui8>
  %s = cuvil.quant.add %p, %x {arithmetic = "qnnpack", lhs_params = #cuvil.quant<scale = [0.043], zero_point = [17]>, rhs_params = #cuvil.quant<scale = [0.043], zero_point = [17]>, output_params = #cuvil.quant<scale = [0.06], zero_point = [3]>} : (tensor<1x4x6x6xui8>, tensor<1x4x6x6xui8>) -> tensor<1x4x6x6xui8>
  return %p, %s : tensor<1x4x6x6xui8>, tensor<1x4x6x6xui8>
}

// -----

// CHECK-LABEL: func.func @linear_dynamic_round_trip
//       CHECK:   cuvil.quant.linear_dynamic %{{.*}}, %{{.*}}, %{{.*}} {arithmetic = "onednn", reduce_range, relu, weight_params = #cuvil.quant<scale = [0.005, 0.006], zero_point = [0, 0], axis = 0>} : (tensor<5x37xf32>, tensor<2x37xi8>, tensor<2xf32>) -> tensor<5x2xf32>
//       CHECK:   cuvil.quant.linear_dynamic %{{.*}}, %{{.*}} {arithmetic = "qnnpack", weight_params = #cuvil.quant<scale = [0.005], zero_point = [0]>} : (tensor<5x37xf32>, tensor<2x37xi8>) -> tensor<5x2xf32>
func.func @linear_dynamic_round_trip(%x: tensor<5x37xf32>, %w: tensor<2x37xi8>, %b: tensor<2xf32>) -> (tensor<5x2xf32>, tensor<5x2xf32>) {
  %0 = cuvil.quant.linear_dynamic %x, %w, %b {arithmetic = "onednn", reduce_range, relu, weight_params = #cuvil.quant<scale = [0.005, 0.006], zero_point = [0, 0], axis = 0>} : (tensor<5x37xf32>, tensor<2x37xi8>, tensor<2xf32>) -> tensor<5x2xf32>
  %1 = cuvil.quant.linear_dynamic %x, %w {arithmetic = "qnnpack", weight_params = #cuvil.quant<scale = [0.005], zero_point = [0]>} : (tensor<5x37xf32>, tensor<2x37xi8>) -> tensor<5x2xf32>
  return %0, %1 : tensor<5x2xf32>, tensor<5x2xf32>
}
