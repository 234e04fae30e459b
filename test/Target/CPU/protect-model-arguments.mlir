// RUN: cuvil-opt %s --split-input-file --cuvil-protect-model-arguments | FileCheck %s

// Inputs are read-only; an input returned as it is becomes a copy, so the
// output has a buffer of its own that bufferization cannot drop.
// CHECK-LABEL: func @identity
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32> {bufferization.writable = false})
// CHECK: %[[E:.*]] = tensor.empty() : tensor<2x3xf32>
// CHECK: %[[C:.*]] = linalg.copy ins(%[[X]] : tensor<2x3xf32>) outs(%[[E]] : tensor<2x3xf32>)
// CHECK: return %[[C]]
func.func @identity(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  return %x : tensor<2x3xf32>
}

// -----

// Returned twice: each output its own copy. Computed results stay as they are.
// CHECK-LABEL: func @twice
// CHECK-COUNT-2: linalg.copy
// CHECK: return
func.func @twice(%x: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
  return %x, %x : tensor<f32>, tensor<f32>
}

// -----

// CHECK-LABEL: func @computed
// CHECK-NOT: linalg.copy
// CHECK: return %{{.*}} : tensor<4xf32>
func.func @computed(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// A computed value returned twice: the first position keeps it, the
// second gets a copy (bufferization would give both one buffer).
// CHECK-LABEL: func @computed_twice
// CHECK: %[[R:.*]] = linalg.generic
// CHECK: %[[C:.*]] = linalg.copy ins(%[[R]] : tensor<4xf32>)
// CHECK: return %[[R]], %[[C]]
func.func @computed_twice(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<4xf32>
  return %r, %r : tensor<4xf32>, tensor<4xf32>
}
