// RUN: cuvil-opt %s --split-input-file --cuvil-validate-rewrites=timeout-ms=5000 -o /dev/null 2>&1 | FileCheck %s
// A time limit too short to prove anything leaves rewrites unknown, never
// refuted (checked index by index, the encoding's facts must follow the
// index: exp(x[0]) > 0, not only exp(x[i]) > 0).
// RUN: cuvil-opt %s --split-input-file --cuvil-validate-rewrites=timeout-ms=10 -o /dev/null 2>&1 | FileCheck %s --check-prefix=TINY --implicit-check-not="is wrong" --implicit-check-not=counterexample
// TINY: rewrite validation (Z3, 10 ms per check):
// RUN: not cuvil-opt %s --split-input-file --cuvil-validate-rewrites=test-plant-wrong-rewrites -o /dev/null 2>&1 | FileCheck %s --check-prefix=WRONG
// RUN: not cuvil-opt %s --cuvil-validate-rewrites=steps=nonsense -o /dev/null 2>&1 | FileCheck %s --check-prefix=USAGE

// Translation validation: each rewrite the graph passes apply is proved by
// Z3 at the moment it happens, or refuted with a counterexample.

// Folds are exact in IEEE arithmetic: x + -0.0 -> x, relu(relu(x)).
// CHECK-LABEL: rewrite validation (Z3, 5000 ms per check):
//       CHECK:   proved  fold cuvil.act.relu  {{.*}}IEEE floating point
//       CHECK:   proved  fold cuvil.math.add  {{.*}}IEEE floating point
//       CHECK:   proved  fuse elementwise group
//       CHECK: 3 proved, 0 refuted, 0 unknown
// The planted rewrites are wrong: x + +0.0 -> x turns +0.0 into -0.0 (why
// the real folder drops only -0.0) and a - b -> b - a.
//       WRONG: error: rewrite 'test: x + 0.0 -> x' is wrong (refuted in IEEE floating point): at index [{{[0-9, ]+}}] the op gives 0.0 and its replacement -0.0; %arg0 = -0.0
//       WRONG: error: rewrite 'test: a - b -> b - a' is wrong
//       WRONG: refuted test: a - b -> b - a
//  WRONG-NEXT:   counterexample: at index
//       WRONG: refuted test: x + 0.0 -> x
func.func @folds(%x: tensor<2x3xf32>, %y: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %nz = cuvil.constant dense<-0.0> : tensor<f32>
  %pz = cuvil.constant dense<0.0> : tensor<f32>
  %a = cuvil.math.add %x, %nz : tensor<2x3xf32>, tensor<f32> -> tensor<2x3xf32>
  %r0 = cuvil.act.relu %a : tensor<2x3xf32>
  %r1 = cuvil.act.relu %r0 : tensor<2x3xf32>
  %k = cuvil.math.add %r1, %pz : tensor<2x3xf32>, tensor<f32> -> tensor<2x3xf32>
  %s = cuvil.math.sub %x, %y : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  return %k, %s : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// A recognized softmax is an algebraic identity only (exp(x) / sum(exp(x))
// overflows where the stable softmax does not): proved in real arithmetic.
// CHECK-LABEL: rewrite validation
//       CHECK:   proved  recognize softmax  1 use   real arithmetic
//       CHECK: 1 proved, 0 refuted, 0 unknown
func.func @softmax(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %e = cuvil.math.exp %x : tensor<2x3xf32>
  %s = cuvil.reduce.sum %e dims [1] keepdim : tensor<2x3xf32> -> tensor<2x1xf32>
  %y = cuvil.math.div %e, %s : tensor<2x3xf32>, tensor<2x1xf32> -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// Batch norm folded into a convolution's weights: the folded numbers stand
// for the pass's formulas over the batch norm's constants, and the
// convolution is a sum of products: proved in real arithmetic.
// CHECK-LABEL: rewrite validation
//       CHECK:   proved  fold batch norm into weights  1 use   real arithmetic
func.func @conv_bn(%x: tensor<1x1x3x3xf32>) -> tensor<1x2x3x3xf32> {
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

// What the encoding does not unroll is unknown, with the reason.
// CHECK-LABEL: rewrite validation
//       CHECK:   unknown recognize softmax  1 use   real arithmetic
//  CHECK-NEXT:     reason: not encoded: 'cuvil.reduce.sum' reduces 100 elements, more than the 64 the encoding unrolls
func.func @big_softmax(%x: tensor<100xf32>) -> tensor<100xf32> {
  %e = cuvil.math.exp %x : tensor<100xf32>
  %s = cuvil.reduce.sum %e dims [0] keepdim : tensor<100xf32> -> tensor<1xf32>
  %y = cuvil.math.div %e, %s : tensor<100xf32>, tensor<1xf32> -> tensor<100xf32>
  return %y : tensor<100xf32>
}

// USAGE: error: cuvil-validate-rewrites: unknown step 'nonsense'
