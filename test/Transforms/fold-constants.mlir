// RUN: cuvil-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(cuvil-fold-constants))' | FileCheck %s
// RUN: cuvil-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(cuvil-fold-constants{max-elements=2}))' | FileCheck %s --check-prefix=SMALL

// Tests that chains of ops on constants fold to one constant with the
// evaluator's values, and that unused operand constants disappear.
// CHECK-LABEL: func.func @chain
//  CHECK-NEXT:   %[[C:.*]] = cuvil.constant dense<{{\[}}[2, 4], [6, 8], [10, 12]]> : tensor<3x2xi64>
//  CHECK-NEXT:   return %[[C]]
// SMALL-LABEL: func.func @chain
//       SMALL:   cuvil.math.mul
func.func @chain() -> tensor<3x2xi64> {
  %a = cuvil.constant dense<[1, 2, 3, 4, 5, 6]> : tensor<6xi64>
  %two = cuvil.constant dense<2> : tensor<i64>
  %0 = cuvil.math.mul %a, %two : tensor<6xi64>, tensor<i64> -> tensor<6xi64>
  %1 = cuvil.shape.reshape %0 {shape = array<i64: 3, -1>} : tensor<6xi64> -> tensor<3x2xi64>
  return %1 : tensor<3x2xi64>
}

// -----

// Tests float folding with type promotion and a resource-backed constant.
// CHECK-LABEL: func.func @resource
//       CHECK:   %[[C:.*]] = cuvil.constant dense<[1.500000e+00, 2.500000e+00]> : tensor<2xf32>
//       CHECK:   return %[[C]]
func.func @resource() -> tensor<2xf32> {
  %w = cuvil.constant dense_resource<weights> : tensor<2xi32>
  %h = cuvil.constant dense<0.5> : tensor<f32>
  %0 = cuvil.math.add %w, %h : tensor<2xi32>, tensor<f32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      weights: "0x040000000100000002000000"
    }
  }
#-}

// -----

// Tests that ops with a non-constant operand are left alone.
// CHECK-LABEL: func.func @not_constant
//  CHECK-SAME: (%[[X:.*]]: tensor<2xf32>)
//       CHECK:   %[[C:.*]] = cuvil.constant
//       CHECK:   cuvil.math.add %[[X]], %[[C]]
func.func @not_constant(%x: tensor<2xf32>) -> tensor<2xf32> {
  %c = cuvil.constant dense<1.0> : tensor<2xf32>
  %0 = cuvil.math.add %x, %c : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Tests that an op whose evaluation fails stays (and fails at run time), with
// no diagnostic at compile time.
// CHECK-LABEL: func.func @out_of_range
//       CHECK:   cuvil.tensor.index_select
func.func @out_of_range() -> tensor<1xf32> {
  %x = cuvil.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %i = cuvil.constant dense<[7]> : tensor<1xi64>
  %0 = cuvil.tensor.index_select %x, %i {dim = 0 : i64} : tensor<2xf32>, tensor<1xi64> -> tensor<1xf32>
  return %0 : tensor<1xf32>
}

// -----

// Past max-elements a rearrangement of one constant still folds (it never
// holds more than its source: a 3-D convolution's import slices its kernel,
// which the convolution kernels need as a constant); other ops do not.
// SMALL-LABEL: func.func @rearranged
//  SMALL-NEXT:   %[[C:.*]] = cuvil.constant dense<{{\[}}[2.000000e+00, 5.000000e+00], [3.000000e+00, 6.000000e+00]]> : tensor<2x2xf32>
//  SMALL-NEXT:   %[[M:.*]] = cuvil.math.mul %[[C]], %[[C]]
//  SMALL-NEXT:   return %[[M]]
func.func @rearranged() -> tensor<2x2xf32> {
  %w = cuvil.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %s = cuvil.tensor.slice %w {dim = 1 : i64, start = 1 : i64, end = 3 : i64} : tensor<2x3xf32> -> tensor<2x2xf32>
  %p = cuvil.shape.permute %s {dims = array<i64: 1, 0>} : tensor<2x2xf32> -> tensor<2x2xf32>
  %m = cuvil.math.mul %p, %p : tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>
  return %m : tensor<2x2xf32>
}
