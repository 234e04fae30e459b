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

// -----

// torch.zeros(t + 1, 4) with t = x.size(1): the size is rebuilt from the
// dimension (so the buffer keeps the input's bounds), the fill value
// broadcast by a generic. t + 1 cannot be negative: no check.
// CHECK-LABEL: func @factory
// CHECK: %[[N:.*]] = arith.addi %dim{{.*}}, %c1{{.*}} : index
// CHECK: %[[E:.*]] = tensor.empty(%[[N]]) : tensor<?x4xf32>
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<f32>) outs(%[[E]] : tensor<?x4xf32>)
// CHECK-NOT: cuvil.check
func.func @factory(%x: tensor<1x?x8xf32>) -> tensor<?x4xf32> {
  %t = cuvil.shape.dim %x {dim = 1 : i64} : tensor<1x?x8xf32> -> tensor<i64>
  %one = cuvil.constant dense<1> : tensor<i64>
  %n = cuvil.math.add %t, %one : tensor<i64>, tensor<i64> -> tensor<i64>
  %four = cuvil.constant dense<4> : tensor<i64>
  %zero = cuvil.constant dense<0.0> : tensor<f32>
  %0 = cuvil.shape.expand_dynamic %zero, [%n, %four] : tensor<f32>, [tensor<i64>, tensor<i64>] -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// x.expand(n, -1, -1) of a class token: the new leading dimension takes the
// run-time size, the others keep the input's.
// CHECK-LABEL: func @expand_batch
// CHECK: %[[E:.*]] = tensor.empty(%[[B:.*]]) : tensor<?x1x8xf32>
// CHECK: linalg.generic {indexing_maps = [#[[IN:.*]], #[[OUT:.*]]], {{.*}} ins(%arg0 : tensor<1x1x8xf32>) outs(%[[E]]
func.func @expand_batch(%cls: tensor<1x1x8xf32>, %x: tensor<?x5x8xf32>) -> tensor<?x1x8xf32> {
  %b = cuvil.shape.dim %x {dim = 0 : i64} : tensor<?x5x8xf32> -> tensor<i64>
  %one = cuvil.constant dense<1> : tensor<i64>
  %eight = cuvil.constant dense<8> : tensor<i64>
  %0 = cuvil.shape.expand_dynamic %cls, [%b, %one, %eight] : tensor<1x1x8xf32>, [tensor<i64>, tensor<i64>, tensor<i64>] -> tensor<?x1x8xf32>
  return %0 : tensor<?x1x8xf32>
}

// -----

// A run-time dimension that keeps its own size (not a static 1) takes the
// input's (nothing is read out of bounds); a size that is not that
// dimension is compared with it at run time, into the status.
// CHECK-LABEL: func @expand_checked
// CHECK: %[[OWN:.*]] = tensor.dim %arg0, %{{.*}} : tensor<?x3xf32>
// CHECK: %[[WANT:.*]] = tensor.dim %arg1, %{{.*}} : tensor<?xf32>
// CHECK-NEXT: %[[BAD:.*]] = arith.cmpi ne, %[[WANT]], %[[OWN]]
// CHECK: arith.select %[[BAD]]
// CHECK: tensor.empty(%[[OWN]]) : tensor<?x3xf32>
func.func @expand_checked(%x: tensor<?x3xf32>, %y: tensor<?xf32>) -> tensor<?x3xf32> {
  %n = cuvil.shape.dim %y {dim = 0 : i64} : tensor<?xf32> -> tensor<i64>
  %three = cuvil.constant dense<3> : tensor<i64>
  %0 = cuvil.shape.expand_dynamic %x, [%n, %three] : tensor<?x3xf32>, [tensor<i64>, tensor<i64>] -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

// -----

// torch.arange(t - 2): t - 2 may be negative, so the count is clamped at 0
// and a negative one fails the run (PyTorch raises).
// CHECK-LABEL: func @iota
// CHECK: %[[N:.*]] = arith.subi %{{.*}}, %{{.*}} : index
// CHECK: %[[NEG:.*]] = arith.cmpi slt, %[[N]], %[[ZERO:.*]] : index
// CHECK-NEXT: %[[CLAMPED:.*]] = arith.maxsi %[[N]], %[[ZERO]]
// CHECK: arith.select %[[NEG]]
// CHECK: %[[E:.*]] = tensor.empty(%[[CLAMPED]]) : tensor<?xi64>
// CHECK: linalg.generic {{.*}} outs(%[[E]] : tensor<?xi64>)
// CHECK: linalg.index 0
// CHECK: arith.index_cast {{.*}} : index to i64
func.func @iota(%x: tensor<1x?x8xf32>) -> tensor<?xi64> {
  %t = cuvil.shape.dim %x {dim = 1 : i64} : tensor<1x?x8xf32> -> tensor<i64>
  %two = cuvil.constant dense<2> : tensor<i64>
  %n = cuvil.math.sub %t, %two : tensor<i64>, tensor<i64> -> tensor<i64>
  %0 = cuvil.tensor.iota %n : tensor<i64> -> tensor<?xi64>
  return %0 : tensor<?xi64>
}

// -----

// A view keeping two run-time sizes (mask[None, None] of a t x t mask):
// one reassociation group per run-time size, so that tensor.dim of the
// result folds to the right size.
// CHECK-LABEL: func @unsqueeze_two
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1], [2]] output_shape [1, %{{.*}}, %{{.*}}] : tensor<?x?xf32> into tensor<1x?x?xf32>
func.func @unsqueeze_two(%m: tensor<?x?xf32>) -> tensor<1x?x?xf32> {
  %0 = cuvil.shape.unsqueeze %m {dim = 0 : i64} : tensor<?x?xf32> -> tensor<1x?x?xf32>
  return %0 : tensor<1x?x?xf32>
}

// -----

// Concatenation along a run-time dimension: the result's size is the sum.
// CHECK-LABEL: func @concat_run_time
// CHECK: %[[A:.*]] = tensor.dim %arg0, %{{.*}}
// CHECK: %[[B:.*]] = tensor.dim %arg1, %{{.*}}
// CHECK: %[[SUM:.*]] = arith.addi %[[A]], %[[B]]
// CHECK: tensor.empty(%[[SUM]]) : tensor<2x?xf32>
// CHECK: tensor.insert_slice %arg0 into {{.*}}[0, 0] [2, %{{.*}}] [1, 1]
// CHECK: %[[AT:.*]] = arith.addi %c0{{.*}}, %{{.*}} : index
// CHECK: tensor.insert_slice %arg1 into {{.*}}[0, %[[AT]]] [2, %{{.*}}] [1, 1]
func.func @concat_run_time(%a: tensor<2x?xf32>, %b: tensor<2x?xf32>) -> tensor<2x?xf32> {
  %0 = cuvil.tensor.concat %a, %b {dim = 1 : i64} : (tensor<2x?xf32>, tensor<2x?xf32>) -> tensor<2x?xf32>
  return %0 : tensor<2x?xf32>
}

// -----

// x[:, t] along a run-time dimension: the index is checked against, and
// clamped to, the dimension's run-time size; the other run-time sizes are
// the input's.
// CHECK-LABEL: func @index_select_run_time
// CHECK: %[[N:.*]] = tensor.dim %arg0, %c1
// CHECK: arith.index_cast %[[N]] : index to i64
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction"]
// CHECK: arith.select
// CHECK: %[[B:.*]] = tensor.dim %arg0, %c0
// CHECK: tensor.empty(%[[B]]) : tensor<?x1x4xf32>
// CHECK: linalg.generic
// CHECK: arith.minsi
// CHECK: tensor.extract %arg0
func.func @index_select_run_time(%x: tensor<?x?x4xf32>, %t: tensor<1xi64>) -> tensor<?x1x4xf32> {
  %0 = cuvil.tensor.index_select %x, %t {dim = 1 : i64} : tensor<?x?x4xf32>, tensor<1xi64> -> tensor<?x1x4xf32>
  return %0 : tensor<?x1x4xf32>
}
