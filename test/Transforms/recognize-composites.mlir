// RUN: cuvil-opt %s --split-input-file --cuvil-recognize-composites --cuvil-dce | FileCheck %s

// CHECK-LABEL: func @softmax_stable
func.func @softmax_stable(%x: tensor<4x10xf32>) -> tensor<4x10xf32> {
  // CHECK-NEXT: %[[S:.*]] = cuvil.act.softmax %arg0 {dim = 1 : i64} : tensor<4x10xf32>
  // CHECK-NEXT: return %[[S]]
  %m = cuvil.reduce.max %x dims [1] keepdim : tensor<4x10xf32> -> tensor<4x1xf32>
  %z = cuvil.math.sub %x, %m : tensor<4x10xf32>, tensor<4x1xf32> -> tensor<4x10xf32>
  %e = cuvil.math.exp %z : tensor<4x10xf32>
  %s = cuvil.reduce.sum %e dims [1] keepdim : tensor<4x10xf32> -> tensor<4x1xf32>
  %y = cuvil.math.div %e, %s : tensor<4x10xf32>, tensor<4x1xf32> -> tensor<4x10xf32>
  return %y : tensor<4x10xf32>
}

// -----

// CHECK-LABEL: func @softmax_plain
func.func @softmax_plain(%x: tensor<4x10xf32>) -> tensor<4x10xf32> {
  // CHECK-NEXT: cuvil.act.softmax %arg0 {dim = 0 : i64}
  %e = cuvil.math.exp %x : tensor<4x10xf32>
  %s = cuvil.reduce.sum %e dims [0] keepdim : tensor<4x10xf32> -> tensor<1x10xf32>
  %y = cuvil.math.div %e, %s : tensor<4x10xf32>, tensor<1x10xf32> -> tensor<4x10xf32>
  return %y : tensor<4x10xf32>
}

// -----

// Not a softmax: the sum runs over another dimension than the max.
// CHECK-LABEL: func @not_softmax
func.func @not_softmax(%x: tensor<4x10xf32>) -> tensor<4x10xf32> {
  // CHECK-NOT: cuvil.act.softmax
  %e = cuvil.math.exp %x : tensor<4x10xf32>
  %s = cuvil.reduce.sum %e dims [0] : tensor<4x10xf32> -> tensor<10xf32>
  %y = cuvil.math.div %e, %s : tensor<4x10xf32>, tensor<10xf32> -> tensor<4x10xf32>
  return %y : tensor<4x10xf32>
}

// -----

// The textbook layer norm with an affine transform.
// CHECK-LABEL: func @layer_norm_affine
func.func @layer_norm_affine(%x: tensor<2x5x8xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<2x5x8xf32> {
  // CHECK-NEXT: %[[N:.*]] = cuvil.norm.layer_norm %arg0 weight %arg1 bias %arg2 {eps = 9.9999997473787516E-6 : f64, normalized_shape = array<i64: 8>}
  // CHECK-NEXT: return %[[N]]
  %eps = cuvil.constant dense<1.0e-5> : tensor<f32>
  %mean = cuvil.reduce.mean %x dims [2] keepdim : tensor<2x5x8xf32> -> tensor<2x5x1xf32>
  %d = cuvil.math.sub %x, %mean : tensor<2x5x8xf32>, tensor<2x5x1xf32> -> tensor<2x5x8xf32>
  %sq = cuvil.math.mul %d, %d : tensor<2x5x8xf32>, tensor<2x5x8xf32> -> tensor<2x5x8xf32>
  %var = cuvil.reduce.mean %sq dims [2] keepdim : tensor<2x5x8xf32> -> tensor<2x5x1xf32>
  %ve = cuvil.math.add %var, %eps : tensor<2x5x1xf32>, tensor<f32> -> tensor<2x5x1xf32>
  %r = cuvil.math.rsqrt %ve : tensor<2x5x1xf32>
  %n = cuvil.math.mul %d, %r : tensor<2x5x8xf32>, tensor<2x5x1xf32> -> tensor<2x5x8xf32>
  %s = cuvil.math.mul %n, %w : tensor<2x5x8xf32>, tensor<8xf32> -> tensor<2x5x8xf32>
  %y = cuvil.math.add %s, %b : tensor<2x5x8xf32>, tensor<8xf32> -> tensor<2x5x8xf32>
  return %y : tensor<2x5x8xf32>
}

// -----

// var(correction = 0) and d / sqrt(v + eps), over the last two dims.
// CHECK-LABEL: func @layer_norm_var
func.func @layer_norm_var(%x: tensor<2x5x8xf32>) -> tensor<2x5x8xf32> {
  // CHECK-NEXT: cuvil.norm.layer_norm %arg0 {eps = 1.000000e-03 : f64, normalized_shape = array<i64: 5, 8>}
  %eps = cuvil.constant dense<1.0e-3> : tensor<f64>
  %mean = cuvil.reduce.mean %x dims [1, 2] keepdim : tensor<2x5x8xf32> -> tensor<2x1x1xf32>
  %d = cuvil.math.sub %x, %mean : tensor<2x5x8xf32>, tensor<2x1x1xf32> -> tensor<2x5x8xf32>
  %var = cuvil.reduce.var %x dims [1, 2] keepdim {correction = 0 : i64} : tensor<2x5x8xf32> -> tensor<2x1x1xf32>
  %ve = cuvil.math.add %var, %eps : tensor<2x1x1xf32>, tensor<f64> -> tensor<2x1x1xf32>
  %sd = cuvil.math.sqrt %ve : tensor<2x1x1xf32>
  %y = cuvil.math.div %d, %sd : tensor<2x5x8xf32>, tensor<2x1x1xf32> -> tensor<2x5x8xf32>
  return %y : tensor<2x5x8xf32>
}

// -----

// Not layer norms: the unbiased variance; dims that are not trailing.
// CHECK-LABEL: func @not_layer_norm
func.func @not_layer_norm(%x: tensor<2x5x8xf32>) -> (tensor<2x5x8xf32>, tensor<2x5x8xf32>) {
  // CHECK-NOT: cuvil.norm.layer_norm
  %eps = cuvil.constant dense<1.0e-5> : tensor<f32>
  %mean = cuvil.reduce.mean %x dims [2] keepdim : tensor<2x5x8xf32> -> tensor<2x5x1xf32>
  %d = cuvil.math.sub %x, %mean : tensor<2x5x8xf32>, tensor<2x5x1xf32> -> tensor<2x5x8xf32>
  %var = cuvil.reduce.var %x dims [2] keepdim : tensor<2x5x8xf32> -> tensor<2x5x1xf32>
  %ve = cuvil.math.add %var, %eps : tensor<2x5x1xf32>, tensor<f32> -> tensor<2x5x1xf32>
  %r = cuvil.math.rsqrt %ve : tensor<2x5x1xf32>
  %y = cuvil.math.mul %d, %r : tensor<2x5x8xf32>, tensor<2x5x1xf32> -> tensor<2x5x8xf32>
  %mean1 = cuvil.reduce.mean %x dims [1] keepdim : tensor<2x5x8xf32> -> tensor<2x1x8xf32>
  %d1 = cuvil.math.sub %x, %mean1 : tensor<2x5x8xf32>, tensor<2x1x8xf32> -> tensor<2x5x8xf32>
  %sq1 = cuvil.math.mul %d1, %d1 : tensor<2x5x8xf32>, tensor<2x5x8xf32> -> tensor<2x5x8xf32>
  %var1 = cuvil.reduce.mean %sq1 dims [1] keepdim : tensor<2x5x8xf32> -> tensor<2x1x8xf32>
  %ve1 = cuvil.math.add %var1, %eps : tensor<2x1x8xf32>, tensor<f32> -> tensor<2x1x8xf32>
  %r1 = cuvil.math.rsqrt %ve1 : tensor<2x1x8xf32>
  %y1 = cuvil.math.mul %d1, %r1 : tensor<2x5x8xf32>, tensor<2x1x8xf32> -> tensor<2x5x8xf32>
  return %y, %y1 : tensor<2x5x8xf32>, tensor<2x5x8xf32>
}
