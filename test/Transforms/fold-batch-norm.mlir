// RUN: cuvil-opt %s --split-input-file --cuvil-fold-batch-norm='remarks=1' --verify-diagnostics | FileCheck %s

// Folded into the conv: W' = W * s, b' = b * s + t with
// s = weight / sqrt(var + eps) = [2/2, 4/1] = [1, 4] and
// t = bias - mean * s = [0.25 - 1, 0 - 8] = [-0.75, -8]:
// W' = [1, 8], b' = [0.5 - 0.75, -4 - 8] = [-0.25, -12].
// CHECK-LABEL: func @conv
func.func @conv(%x: tensor<1x1x3x3xf32>) -> tensor<1x2x3x3xf32> {
  // CHECK-DAG: %[[W:.*]] = cuvil.constant dense<{{\[\[\[\[}}1.000000e+00]]], {{\[\[\[}}8.000000e+00]]]]> : tensor<2x1x1x1xf32>
  // CHECK-DAG: %[[B:.*]] = cuvil.constant dense<[-2.500000e-01, -1.200000e+01]> : tensor<2xf32>
  // CHECK: %[[Y:.*]] = cuvil.conv.conv2d %arg0, %[[W]], %[[B]]
  // CHECK-NOT: batch_norm
  // CHECK: return %[[Y]]
  %w = cuvil.constant dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %b = cuvil.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %mean = cuvil.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %var = cuvil.constant dense<[3.0, 0.0]> : tensor<2xf32>
  %g = cuvil.constant dense<[2.0, 4.0]> : tensor<2xf32>
  %beta = cuvil.constant dense<[0.25, 0.0]> : tensor<2xf32>
  %c = cuvil.conv.conv2d %x, %w, %b stride [1, 1] padding [0, 0] dilation [1, 1] : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  %y = cuvil.norm.batch_norm %c, %mean, %var weight %g bias %beta {eps = 1.0 : f64} : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  return %y : tensor<1x2x3x3xf32>
}

// -----

// A linear without bias gets one; s = 1/sqrt(1 + 0) = 1, t = -mean.
// CHECK-LABEL: func @linear
func.func @linear(%x: tensor<4x3xf32>) -> tensor<4x2xf32> {
  // CHECK: %[[B:.*]] = cuvil.constant dense<[-1.000000e+00, -2.000000e+00]>
  // CHECK: cuvil.gemm.linear %arg0, %{{.*}}, %[[B]]
  // CHECK-NOT: batch_norm
  %w = cuvil.constant dense<1.0> : tensor<2x3xf32>
  %mean = cuvil.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %var = cuvil.constant dense<1.0> : tensor<2xf32>
  %l = cuvil.gemm.linear %x, %w : (tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<4x2xf32>
  %y = cuvil.norm.batch_norm %l, %mean, %var {eps = 0.0 : f64} : (tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}

// -----

// Not foldable into weights: the conv has another user, or the input is an
// add; both become x * s + t with [C, 1, 1] constants.
// CHECK-LABEL: func @scale_shift
func.func @scale_shift(%x: tensor<1x2x3x3xf32>, %w: tensor<2x2x1x1xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) {
  %mean = cuvil.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %var = cuvil.constant dense<[3.0, 8.0]> : tensor<2xf32>
  %a = cuvil.math.add %x, %x : tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32> -> tensor<1x2x3x3xf32>
  // CHECK: %[[S:.*]] = cuvil.constant dense<{{\[\[\[}}5.000000e-01]], {{\[\[}}0.333333343]]]> : tensor<2x1x1xf32>
  // CHECK: %[[T:.*]] = cuvil.constant dense<{{\[\[\[}}-5.000000e-01]], {{\[\[}}-0.666666686]]]> : tensor<2x1x1xf32>
  // CHECK: %[[M:.*]] = cuvil.math.mul %{{.*}}, %[[S]]
  // CHECK: cuvil.math.add %[[M]], %[[T]]
  // expected-remark @+1 {{batch norm kept as a per-channel scale and shift: its input comes from 'cuvil.math.add'}}
  %y = cuvil.norm.batch_norm %a, %mean, %var {eps = 1.0 : f64} : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  %c = cuvil.conv.conv2d %x, %w stride [1, 1] padding [0, 0] dilation [1, 1] : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x3x3xf32>
  // expected-remark @+1 {{batch norm kept as a per-channel scale and shift: its input comes from 'cuvil.conv.conv2d', which has other users}}
  %z = cuvil.norm.batch_norm %c, %mean, %var {eps = 1.0 : f64} : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  %s = cuvil.math.add %z, %c : tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32> -> tensor<1x2x3x3xf32>
  return %y, %s : tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>
}

// -----

// Statistics that are not constants: the batch norm stays.
// CHECK-LABEL: func @dynamic_stats
func.func @dynamic_stats(%x: tensor<1x2x3x3xf32>, %mean: tensor<2xf32>) -> tensor<1x2x3x3xf32> {
  %var = cuvil.constant dense<1.0> : tensor<2xf32>
  // CHECK: cuvil.norm.batch_norm
  // expected-remark @+1 {{batch norm not folded: its statistics, weight or bias are not constants}}
  %y = cuvil.norm.batch_norm %x, %mean, %var : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  return %y : tensor<1x2x3x3xf32>
}
