// RUN: cuvil-opt %s --split-input-file --cuvil-collapse-parallel-dims | FileCheck %s

// An element-wise op on a [8, 960, 6, 8] tensor: one loop of 368640
// elements (its innermost loop of 8 was too short for the vectorizer).
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @elementwise
// CHECK: %[[X:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0, 1, 2, 3]] : tensor<8x960x6x8xf32> into tensor<368640xf32>
// CHECK: %[[G:.*]] = linalg.generic {{{.*}}iterator_types = ["parallel"]} ins(%[[X]] : tensor<368640xf32>)
// CHECK: tensor.expand_shape %[[G]] {{\[\[}}0, 1, 2, 3]] {{.*}} : tensor<368640xf32> into tensor<8x960x6x8xf32>
func.func @elementwise(%x: tensor<8x960x6x8xf32>) -> tensor<8x960x6x8xf32> {
  %e = tensor.empty() : tensor<8x960x6x8xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<8x960x6x8xf32>) outs(%e : tensor<8x960x6x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c3 = arith.constant 3.0 : f32
    %s = arith.addf %a, %c3 : f32
    linalg.yield %s : f32
  } -> tensor<8x960x6x8xf32>
  return %r : tensor<8x960x6x8xf32>
}

// -----

// A per-channel bias: the spatial dimensions, which the bias does not
// read, become one; batch and channel stay (the bias reads the channel
// alone, so it cannot join them).
#x = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#b = affine_map<(d0, d1, d2, d3) -> (d1)>
// CHECK-LABEL: func.func @bias
// CHECK: tensor.collapse_shape %arg0 {{\[\[}}0], [1], [2, 3]] : tensor<2x16x7x9xf32> into tensor<2x16x63xf32>
// CHECK: linalg.generic {{{.*}}iterator_types = ["parallel", "parallel", "parallel"]}
func.func @bias(%x: tensor<2x16x7x9xf32>, %bias: tensor<16xf32>) -> tensor<2x16x7x9xf32> {
  %e = tensor.empty() : tensor<2x16x7x9xf32>
  %r = linalg.generic {indexing_maps = [#x, #b, #x], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %bias : tensor<2x16x7x9xf32>, tensor<16xf32>) outs(%e : tensor<2x16x7x9xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<2x16x7x9xf32>
  return %r : tensor<2x16x7x9xf32>
}

// -----

// Left alone: a transpose (no run of dimensions in the same order in both
// maps), run-time sizes, and a kept reduced dimension (index 0 in a map).
#in = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#tr = affine_map<(d0, d1, d2) -> (d2, d1, d0)>
// CHECK-LABEL: func.func @transpose
// CHECK-NOT: tensor.collapse_shape
// CHECK: linalg.generic {{{.*}}iterator_types = ["parallel", "parallel", "parallel"]}
func.func @transpose(%x: tensor<4x5x6xf32>) -> tensor<6x5x4xf32> {
  %e = tensor.empty() : tensor<6x5x4xf32>
  %r = linalg.generic {indexing_maps = [#in, #tr], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<4x5x6xf32>) outs(%e : tensor<6x5x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<6x5x4xf32>
  return %r : tensor<6x5x4xf32>
}

// CHECK-LABEL: func.func @dynamic
// CHECK-NOT: tensor.collapse_shape
#d = affine_map<(d0, d1) -> (d0, d1)>
func.func @dynamic(%x: tensor<?x256xf32>, %e: tensor<?x256xf32>) -> tensor<?x256xf32> {
  %r = linalg.generic {indexing_maps = [#d, #d], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<?x256xf32>) outs(%e : tensor<?x256xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.mulf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<?x256xf32>
  return %r : tensor<?x256xf32>
}

// CHECK-LABEL: func.func @kept_reduction
// CHECK-NOT: tensor.collapse_shape
#k0 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#k1 = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
func.func @kept_reduction(%x: tensor<4x5x6xf32>, %e: tensor<4x5x1xf32>) -> tensor<4x5x1xf32> {
  %r = linalg.generic {indexing_maps = [#k0, #k1], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<4x5x6xf32>) outs(%e : tensor<4x5x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  } -> tensor<4x5x1xf32>
  return %r : tensor<4x5x1xf32>
}
