// RUN: cuvil-opt %s --split-input-file --convert-cuvil-to-linalg --verify-diagnostics | FileCheck %s

// Run-time sizes (the hybrid strategy): views, transposes and reductions
// take them from their operands.

// One run-time size in the result: what the static ones leave of the
// element count.
// CHECK-LABEL: func @unsqueeze
// CHECK: %[[N:.*]] = tensor.dim %arg0, %c1
// CHECK: %[[TOTAL:.*]] = arith.muli %{{.*}}, %[[N]]
// CHECK: %[[SIZE:.*]] = arith.divui %[[TOTAL]], %c2
// CHECK: tensor.collapse_shape %arg0 {{\[\[}}0, 1]] : tensor<2x?xf32> into tensor<?xf32>
// CHECK: tensor.expand_shape {{.*}} output_shape [2, %[[SIZE]], 1] : tensor<?xf32> into tensor<2x?x1xf32>
func.func @unsqueeze(%m: tensor<2x?xf32>) -> tensor<2x?x1xf32> {
  %0 = cuvil.shape.unsqueeze %m {dim = 2 : i64} : tensor<2x?xf32> -> tensor<2x?x1xf32>
  return %0 : tensor<2x?x1xf32>
}

// -----

// CHECK-LABEL: func @transpose
// CHECK: %[[N:.*]] = tensor.dim %arg0, %c1
// CHECK: tensor.empty(%[[N]]) : tensor<2x32x?xf32>
// CHECK: linalg.transpose
func.func @transpose(%x: tensor<2x?x32xf32>) -> tensor<2x32x?xf32> {
  %0 = cuvil.shape.transpose %x {dim0 = 1 : i64, dim1 = 2 : i64} : tensor<2x?x32xf32> -> tensor<2x32x?xf32>
  return %0 : tensor<2x32x?xf32>
}

// -----

// A mean over a run-time dimension divides by its run-time count.
// CHECK-LABEL: func @mean
// CHECK: %[[N:.*]] = tensor.dim %arg0, %c1
// CHECK: %[[I:.*]] = arith.index_castui %[[N]] : index to i64
// CHECK: arith.uitofp %[[I]] : i64 to f32
// CHECK: linalg.generic
// CHECK: arith.divf
func.func @mean(%x: tensor<2x?x32xf32>) -> tensor<2x32xf32> {
  %0 = cuvil.reduce.mean %x dims [1] : tensor<2x?x32xf32> -> tensor<2x32xf32>
  return %0 : tensor<2x32xf32>
}

// -----

// Flattening a run-time size with a static one while another run-time size
// passes: the sizes cannot be paired in order, so it does not lower (a
// compile error, never a wrong size).
func.func @flatten_merges(%x: tensor<?x4x?xf32>) -> tensor<?x?xf32> {
  // expected-error@+1 {{failed to legalize operation 'cuvil.shape.flatten'}}
  %0 = cuvil.shape.flatten %x {start_dim = 0 : i64, end_dim = 1 : i64} : tensor<?x4x?xf32> -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// A causal mask cut to a run-time length: the end is the other tensor's
// dimension itself (so it keeps its bounds), clamped to the mask's size.
// CHECK-LABEL: func @slice_to
// CHECK: tensor.from_elements
// CHECK: %[[T:.*]] = tensor.dim %arg1, %c1{{.*}} : tensor<1x?x64xf32>
// CHECK-NEXT: %[[END:.*]] = arith.minui %[[T]], %c256
// CHECK: tensor.extract_slice %arg0[0, 0] [%[[END]], 256] [1, 1] : tensor<256x256xf32> to tensor<?x256xf32>
func.func @slice_to(%mask: tensor<256x256xf32>, %x: tensor<1x?x64xf32>) -> tensor<?x256xf32> {
  %t = cuvil.shape.dim %x {dim = 1 : i64} : tensor<1x?x64xf32> -> tensor<i64>
  %0 = cuvil.tensor.slice_to %mask, %t {dim = 0 : i64} : tensor<256x256xf32>, tensor<i64> -> tensor<?x256xf32>
  return %0 : tensor<?x256xf32>
}
