// RUN: cuvil-opt %s -split-input-file -canonicalize | FileCheck %s
// RUN: cuvil-opt %s -split-input-file --cuvil-simplify --cuvil-dce | FileCheck %s

// Tests the cuvil folders and canonicalization patterns, including the cases
// they must leave alone.

// CHECK-LABEL: func.func @relu_relu
//  CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
//       CHECK:   %[[R:.*]] = cuvil.act.relu %[[X]]
//   CHECK-NOT:   cuvil.act.relu
//       CHECK:   return %[[R]]
func.func @relu_relu(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = cuvil.act.relu %x : tensor<4xf32>
  %1 = cuvil.act.relu %0 : tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @neg_neg
//  CHECK-SAME: (%[[X:.*]]: tensor<4xi32>)
//   CHECK-NOT:   cuvil.math.neg
//       CHECK:   return %[[X]]
func.func @neg_neg(%x: tensor<4xi32>) -> tensor<4xi32> {
  %0 = cuvil.math.neg %x : tensor<4xi32>
  %1 = cuvil.math.neg %0 : tensor<4xi32>
  return %1 : tensor<4xi32>
}

// -----

// Tests that x + 0 folds for integers and x + -0.0 for floats, but x + 0.0
// (which turns -0.0 into +0.0) and a broadcasting add do not.
// CHECK-LABEL: func.func @add_zero
//  CHECK-SAME: (%[[I:.*]]: tensor<4xi64>, %[[F:.*]]: tensor<4xf32>)
//       CHECK:   %[[PZ:.*]] = cuvil.constant dense<0.000000e+00> : tensor<f32>
//       CHECK:   %[[Z:.*]] = cuvil.constant dense<0> : tensor<1x4xi64>
//       CHECK:   %[[KEEP:.*]] = cuvil.math.add %[[F]], %[[PZ]]
//       CHECK:   %[[BCAST:.*]] = cuvil.math.add %[[I]], %[[Z]]
//       CHECK:   return %[[I]], %[[F]], %[[KEEP]], %[[BCAST]]
func.func @add_zero(%i: tensor<4xi64>, %f: tensor<4xf32>) -> (tensor<4xi64>, tensor<4xf32>, tensor<4xf32>, tensor<1x4xi64>) {
  %zi = cuvil.constant dense<0> : tensor<i64>
  %nz = cuvil.constant dense<-0.0> : tensor<f32>
  %pz = cuvil.constant dense<0.0> : tensor<f32>
  %z2 = cuvil.constant dense<0> : tensor<1x4xi64>
  %0 = cuvil.math.add %i, %zi : tensor<4xi64>, tensor<i64> -> tensor<4xi64>
  %1 = cuvil.math.add %nz, %f : tensor<f32>, tensor<4xf32> -> tensor<4xf32>
  %2 = cuvil.math.add %f, %pz : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  %3 = cuvil.math.add %i, %z2 : tensor<4xi64>, tensor<1x4xi64> -> tensor<1x4xi64>
  return %0, %1, %2, %3 : tensor<4xi64>, tensor<4xf32>, tensor<4xf32>, tensor<1x4xi64>
}

// -----

// CHECK-LABEL: func.func @sub_mul_identity
//  CHECK-SAME: (%[[F:.*]]: tensor<4xf32>)
//   CHECK-NOT:   cuvil.math
//       CHECK:   return %[[F]], %[[F]]
func.func @sub_mul_identity(%f: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %z = cuvil.constant dense<0.0> : tensor<f32>
  %one = cuvil.constant dense<1.0> : tensor<4xf32>
  %0 = cuvil.math.sub %f, %z : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  %1 = cuvil.math.mul %one, %f : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// Tests that x * 1 is kept when the constant changes the result type.
// CHECK-LABEL: func.func @mul_promotes
//       CHECK:   cuvil.math.mul
func.func @mul_promotes(%i: tensor<4xi32>) -> tensor<4xf32> {
  %one = cuvil.constant dense<1.0> : tensor<f32>
  %0 = cuvil.math.mul %i, %one : tensor<4xi32>, tensor<f32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @not_not
//  CHECK-SAME: (%[[B:.*]]: tensor<4xi1>, %[[F:.*]]: tensor<4xf32>)
//       CHECK:   %[[N1:.*]] = cuvil.logic.logical_not %[[F]]
//       CHECK:   %[[N2:.*]] = cuvil.logic.logical_not %[[N1]]
//       CHECK:   return %[[B]], %[[N2]]
func.func @not_not(%b: tensor<4xi1>, %f: tensor<4xf32>) -> (tensor<4xi1>, tensor<4xi1>) {
  %0 = cuvil.logic.logical_not %b : tensor<4xi1> -> tensor<4xi1>
  %1 = cuvil.logic.logical_not %0 : tensor<4xi1> -> tensor<4xi1>
  %2 = cuvil.logic.logical_not %f : tensor<4xf32> -> tensor<4xi1>
  %3 = cuvil.logic.logical_not %2 : tensor<4xi1> -> tensor<4xi1>
  return %1, %3 : tensor<4xi1>, tensor<4xi1>
}

// -----

// CHECK-LABEL: func.func @reshape_chain
//  CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
//       CHECK:   %[[R:.*]] = cuvil.shape.reshape %[[X]] {shape = array<i64: 4, 6>} : tensor<2x3x4xf32> -> tensor<4x6xf32>
//       CHECK:   return %[[X]], %[[R]]
func.func @reshape_chain(%x: tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<4x6xf32>) {
  %0 = cuvil.shape.reshape %x {shape = array<i64: 2, 3, 4>} : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  %1 = cuvil.shape.reshape %x {shape = array<i64: 24>} : tensor<2x3x4xf32> -> tensor<24xf32>
  %2 = cuvil.shape.reshape %1 {shape = array<i64: 4, 6>} : tensor<24xf32> -> tensor<4x6xf32>
  return %0, %2 : tensor<2x3x4xf32>, tensor<4x6xf32>
}

// -----

// Tests that statically shaped flatten, squeeze and unsqueeze become
// reshapes (and then collapse), while a dynamic flatten stays.
// CHECK-LABEL: func.func @views_to_reshape
//  CHECK-SAME: (%[[X:.*]]: tensor<1x3x1xf32>, %[[D:.*]]: tensor<?x3xf32>)
//       CHECK:   %[[R:.*]] = cuvil.shape.reshape %[[X]] {shape = array<i64: 3, 1, 1>} : tensor<1x3x1xf32> -> tensor<3x1x1xf32>
//       CHECK:   %[[F:.*]] = cuvil.shape.flatten %[[D]]
//       CHECK:   return %[[R]], %[[F]]
func.func @views_to_reshape(%x: tensor<1x3x1xf32>, %d: tensor<?x3xf32>) -> (tensor<3x1x1xf32>, tensor<?xf32>) {
  %0 = cuvil.shape.squeeze %x {dims = array<i64: 0, 2>} : tensor<1x3x1xf32> -> tensor<3xf32>
  %1 = cuvil.shape.unsqueeze %0 {dim = 1 : i64} : tensor<3xf32> -> tensor<3x1xf32>
  %2 = cuvil.shape.flatten %1 {start_dim = 0 : i64, end_dim = 1 : i64} : tensor<3x1xf32> -> tensor<3xf32>
  %3 = cuvil.shape.reshape %2 {shape = array<i64: 3, 1, 1>} : tensor<3xf32> -> tensor<3x1x1xf32>
  %4 = cuvil.shape.flatten %d {start_dim = 0 : i64, end_dim = 1 : i64} : tensor<?x3xf32> -> tensor<?xf32>
  return %3, %4 : tensor<3x1x1xf32>, tensor<?xf32>
}

// -----

// CHECK-LABEL: func.func @permutes
//  CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
//       CHECK:   %[[P:.*]] = cuvil.shape.permute %[[X]] {dims = array<i64: 1, 2, 0>}
//       CHECK:   return %[[X]], %[[P]], %[[X]]
func.func @permutes(%x: tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<3x4x2xf32>, tensor<2x3x4xf32>) {
  %0 = cuvil.shape.permute %x {dims = array<i64: 2, 0, 1>} : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  %1 = cuvil.shape.permute %0 {dims = array<i64: 1, 2, 0>} : tensor<4x2x3xf32> -> tensor<2x3x4xf32>
  %2 = cuvil.shape.permute %0 {dims = array<i64: 2, 0, 1>} : tensor<4x2x3xf32> -> tensor<3x4x2xf32>
  %3 = cuvil.shape.transpose %x {dim0 = 1 : i64, dim1 = 1 : i64} : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  return %1, %2, %3 : tensor<2x3x4xf32>, tensor<3x4x2xf32>, tensor<2x3x4xf32>
}

// -----

// CHECK-LABEL: func.func @identities
//  CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>, %[[D:.*]]: tensor<?x3xf32>)
//       CHECK:   %[[E:.*]] = cuvil.shape.expand %[[D]]
//       CHECK:   return %[[X]], %[[X]], %[[X]], %[[X]], %[[E]]
func.func @identities(%x: tensor<2x3xf32>, %d: tensor<?x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<?x3xf32>) {
  %0 = cuvil.shape.expand %x {shape = array<i64: 2, 3>} : tensor<2x3xf32> -> tensor<2x3xf32>
  %1 = cuvil.tensor.cast %x : tensor<2x3xf32> -> tensor<2x3xf32>
  %2 = cuvil.tensor.concat %x {dim = 0 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %3 = cuvil.tensor.slice %x {dim = 1 : i64, start = 0 : i64, end = 9223372036854775807 : i64} : tensor<2x3xf32> -> tensor<2x3xf32>
  %4 = cuvil.shape.expand %d {shape = array<i64: -1, 3>} : tensor<?x3xf32> -> tensor<?x3xf32>
  return %0, %1, %2, %3, %4 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<?x3xf32>
}

// -----

// Tests that a strided or offset slice is not mistaken for the identity.
// CHECK-LABEL: func.func @slices_kept
//       CHECK-COUNT-2: cuvil.tensor.slice
func.func @slices_kept(%x: tensor<6xf32>) -> (tensor<3xf32>, tensor<5xf32>) {
  %0 = cuvil.tensor.slice %x {dim = 0 : i64, start = 0 : i64, end = 6 : i64, step = 2 : i64} : tensor<6xf32> -> tensor<3xf32>
  %1 = cuvil.tensor.slice %x {dim = 0 : i64, start = 1 : i64, end = 6 : i64} : tensor<6xf32> -> tensor<5xf32>
  return %0, %1 : tensor<3xf32>, tensor<5xf32>
}

// -----

// Tests that the size of a static dimension folds to a constant.
// CHECK-LABEL: func.func @dim_static
//       CHECK:   %[[C:.*]] = cuvil.constant dense<4> : tensor<i64>
//       CHECK:   return %[[C]]
func.func @dim_static(%x: tensor<?x4xf32>) -> tensor<i64> {
  %0 = cuvil.shape.dim %x {dim = 1 : i64} : tensor<?x4xf32> -> tensor<i64>
  return %0 : tensor<i64>
}

// -----

// Tests that transposes become permutes, so that a transpose undone by
// another cancels, and that a permutation moving only unit dimensions is
// a reshape.
// CHECK-LABEL: func.func @transpose_chains
//  CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>, %[[U:.*]]: tensor<1x5x1x6xf32>)
//       CHECK:   %[[P:.*]] = cuvil.shape.permute %[[X]] {dims = array<i64: 2, 1, 0>}
//       CHECK:   %[[R:.*]] = cuvil.shape.reshape %[[U]] {shape = array<i64: 5, 1, 6, 1>}
//       CHECK:   return %[[X]], %[[P]], %[[R]]
func.func @transpose_chains(%x: tensor<2x3x4xf32>, %u: tensor<1x5x1x6xf32>) -> (tensor<2x3x4xf32>, tensor<4x3x2xf32>, tensor<5x1x6x1xf32>) {
  %0 = cuvil.shape.transpose %x {dim0 = 0 : i64, dim1 = 2 : i64} : tensor<2x3x4xf32> -> tensor<4x3x2xf32>
  %1 = cuvil.shape.transpose %0 {dim0 = 0 : i64, dim1 = 2 : i64} : tensor<4x3x2xf32> -> tensor<2x3x4xf32>
  %2 = cuvil.shape.permute %u {dims = array<i64: 1, 0, 3, 2>} : tensor<1x5x1x6xf32> -> tensor<5x1x6x1xf32>
  return %1, %0, %2 : tensor<2x3x4xf32>, tensor<4x3x2xf32>, tensor<5x1x6x1xf32>
}

// -----

// Run-time sizes that became constants (--specialize, static dimensions):
// a factory folds to a splat, an iota to its values; a size still known
// only at run time is left alone.
// CHECK-LABEL: func.func @run_time_sizes_fold
//   CHECK-DAG:   %[[Z:.*]] = cuvil.constant dense<0.000000e+00> : tensor<2x5xf32>
//   CHECK-DAG:   %[[I:.*]] = cuvil.constant dense<[0, 1, 2, 3, 4]> : tensor<5xi64>
//       CHECK:   %[[D:.*]] = cuvil.tensor.iota %{{.*}} : tensor<i64> -> tensor<?xi64>
//       CHECK:   return %[[Z]], %[[I]], %[[D]]
func.func @run_time_sizes_fold(%x: tensor<5x8xf32>, %y: tensor<?xf32>) -> (tensor<2x5xf32>, tensor<5xi64>, tensor<?xi64>) {
  %two = cuvil.constant dense<2> : tensor<i64>
  %n = cuvil.shape.dim %x {dim = 0 : i64} : tensor<5x8xf32> -> tensor<i64>
  %zero = cuvil.constant dense<0.0> : tensor<f32>
  %0 = cuvil.shape.expand_dynamic %zero, [%two, %n] : tensor<f32>, [tensor<i64>, tensor<i64>] -> tensor<2x5xf32>
  %1 = cuvil.tensor.iota %n : tensor<i64> -> tensor<5xi64>
  %m = cuvil.shape.dim %y {dim = 0 : i64} : tensor<?xf32> -> tensor<i64>
  %2 = cuvil.tensor.iota %m : tensor<i64> -> tensor<?xi64>
  return %0, %1, %2 : tensor<2x5xf32>, tensor<5xi64>, tensor<?xi64>
}

// -----

// x ^ 2 of a float tensor is x * x; other exponents, integer bases and a
// result of another type (an integer base with a float exponent) stay
// powers.
// CHECK-LABEL: func.func @pow_two
//  CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[I:.*]]: tensor<4xi64>, %[[H:.*]]: tensor<2x4xf32>)
//       CHECK:   %[[SQ:.*]] = cuvil.math.mul %[[X]], %[[X]] : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
//       CHECK:   %[[CUBE:.*]] = cuvil.math.pow %[[X]], %{{.*}} : tensor<4xf32>, tensor<f32>
//       CHECK:   %[[IP:.*]] = cuvil.math.pow %[[I]], %{{.*}} : tensor<4xi64>, tensor<i64>
//       CHECK:   %[[PROM:.*]] = cuvil.math.pow %[[I]], %{{.*}} : tensor<4xi64>, tensor<f32>
//       CHECK:   %[[SH:.*]] = cuvil.math.mul %[[H]], %[[H]]
//       CHECK:   return %[[SQ]], %[[CUBE]], %[[IP]], %[[PROM]], %[[SH]]
func.func @pow_two(%x: tensor<4xf32>, %i: tensor<4xi64>, %h: tensor<2x4xf32>)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<4xi64>, tensor<4xf32>, tensor<2x4xf32>) {
  %two = cuvil.constant dense<2.0> : tensor<f32>
  %three = cuvil.constant dense<3.0> : tensor<f32>
  %itwo = cuvil.constant dense<2> : tensor<i64>
  %rtwo = cuvil.constant dense<2.0> : tensor<4xf32>
  %0 = cuvil.math.pow %x, %two : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  %1 = cuvil.math.pow %x, %three : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  %2 = cuvil.math.pow %i, %itwo : tensor<4xi64>, tensor<i64> -> tensor<4xi64>
  %3 = cuvil.math.pow %i, %two : tensor<4xi64>, tensor<f32> -> tensor<4xf32>
  %4 = cuvil.math.pow %h, %rtwo : tensor<2x4xf32>, tensor<4xf32> -> tensor<2x4xf32>
  return %0, %1, %2, %3, %4 : tensor<4xf32>, tensor<4xf32>, tensor<4xi64>, tensor<4xf32>, tensor<2x4xf32>
}
