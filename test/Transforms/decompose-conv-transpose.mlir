// RUN: cuvil-opt %s --split-input-file --cuvil-decompose-conv-transpose | FileCheck %s
// (Numerically: the import tests' U-Net against PyTorch, import.unet_*.)

// 2x2 / 2 (U-Net's upsampling): 2 input channels, 1 output channel. The
// weights w[ci, 0, a, b] become the rows (a, b) of a 1x1 convolution:
// row (0, 0) = [w[0,0,0,0], w[1,0,0,0]] = [1, 5], row (0, 1) = [2, 6],
// row (1, 0) = [3, 7], row (1, 1) = [4, 8]; the bias 0.5 on each row.
// CHECK-LABEL: func @k2s2
func.func @k2s2(%x: tensor<1x2x3x4xf32>) -> tensor<1x1x6x8xf32> {
  // CHECK-DAG: %[[W:.*]] = cuvil.constant dense<{{\[\[\[\[}}1.000000e+00]], {{\[\[}}5.000000e+00]]], {{\[\[\[}}2.000000e+00]], {{\[\[}}6.000000e+00]]], {{\[\[\[}}3.000000e+00]], {{\[\[}}7.000000e+00]]], {{\[\[\[}}4.000000e+00]], {{\[\[}}8.000000e+00]]]]> : tensor<4x2x1x1xf32>
  // CHECK-DAG: %[[B:.*]] = cuvil.constant dense<5.000000e-01> : tensor<4xf32>
  //     CHECK: %[[C:.*]] = cuvil.conv.conv2d %arg0, %[[W]], %[[B]] stride [1, 1] padding [0, 0] dilation [1, 1] : (tensor<1x2x3x4xf32>, tensor<4x2x1x1xf32>, tensor<4xf32>) -> tensor<1x4x3x4xf32>
  //     CHECK: %[[S:.*]] = cuvil.shape.reshape %[[C]] {shape = array<i64: 1, 1, 2, 2, 3, 4>} : tensor<1x4x3x4xf32> -> tensor<1x1x2x2x3x4xf32>
  //     CHECK: %[[P:.*]] = cuvil.shape.permute %[[S]] {dims = array<i64: 0, 1, 4, 2, 5, 3>} : tensor<1x1x2x2x3x4xf32> -> tensor<1x1x3x2x4x2xf32>
  //     CHECK: %[[Y:.*]] = cuvil.shape.reshape %[[P]] {shape = array<i64: 1, 1, 6, 8>} : tensor<1x1x3x2x4x2xf32> -> tensor<1x1x6x8xf32>
  // CHECK-NOT: conv_transpose2d
  //     CHECK: return %[[Y]]
  %w = cuvil.constant dense<[[[[1.0, 2.0], [3.0, 4.0]]], [[[5.0, 6.0], [7.0, 8.0]]]]> : tensor<2x1x2x2xf32>
  %b = cuvil.constant dense<[0.5]> : tensor<1xf32>
  %y = cuvil.conv.conv_transpose2d %x, %w, %b stride [2, 2] padding [0, 0] dilation [1, 1] output_padding [0, 0] : (tensor<1x2x3x4xf32>, tensor<2x1x2x2xf32>, tensor<1xf32>) -> tensor<1x1x6x8xf32>
  return %y : tensor<1x1x6x8xf32>
}

// -----

// Kept: a kernel larger than the stride (blocks overlap), padding, groups,
// weights that are not constants.
// CHECK-LABEL: func @kept
// CHECK-COUNT-4: cuvil.conv.conv_transpose2d
func.func @kept(%x: tensor<1x2x3x3xf32>, %wv: tensor<2x1x2x2xf32>) -> (tensor<1x1x7x7xf32>, tensor<1x1x4x4xf32>, tensor<1x2x6x6xf32>, tensor<1x1x6x6xf32>) {
  %w3 = cuvil.constant dense<1.0> : tensor<2x1x3x3xf32>
  %w2 = cuvil.constant dense<1.0> : tensor<2x1x2x2xf32>
  %a = cuvil.conv.conv_transpose2d %x, %w3 stride [2, 2] padding [0, 0] dilation [1, 1] output_padding [0, 0] : (tensor<1x2x3x3xf32>, tensor<2x1x3x3xf32>) -> tensor<1x1x7x7xf32>
  %b = cuvil.conv.conv_transpose2d %x, %w2 stride [2, 2] padding [1, 1] dilation [1, 1] output_padding [0, 0] : (tensor<1x2x3x3xf32>, tensor<2x1x2x2xf32>) -> tensor<1x1x4x4xf32>
  %c = cuvil.conv.conv_transpose2d %x, %w2 stride [2, 2] padding [0, 0] dilation [1, 1] output_padding [0, 0] groups 2 : (tensor<1x2x3x3xf32>, tensor<2x1x2x2xf32>) -> tensor<1x2x6x6xf32>
  %d = cuvil.conv.conv_transpose2d %x, %wv stride [2, 2] padding [0, 0] dilation [1, 1] output_padding [0, 0] : (tensor<1x2x3x3xf32>, tensor<2x1x2x2xf32>) -> tensor<1x1x6x6xf32>
  return %a, %b, %c, %d : tensor<1x1x7x7xf32>, tensor<1x1x4x4xf32>, tensor<1x2x6x6xf32>, tensor<1x1x6x6xf32>
}
