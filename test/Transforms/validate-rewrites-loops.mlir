// RUN: cuvil-opt %s --split-input-file --cuvil-validate-rewrites=steps=simplify,unroll-loops -o /dev/null 2>&1 | FileCheck %s
// RUN: not cuvil-opt %s --split-input-file --cuvil-validate-rewrites="steps=unroll-loops test-plant-wrong-rewrites" -o /dev/null 2>&1 | FileCheck %s --check-prefix=WRONG

// Rewrites of loops are announced to the translation validator like every
// graph rewrite. A loop whose trip count the constants decide is unrolled
// into the encoding (bounded, 16 trips), so unrolling it is proved; any
// other loop's results are free, so its rewrites are unknown with that
// reason, never refuted (they used to be: a free tensor "differs" from any
// replacement). The flattening check covers their dependencies
// (verify-flattening.mlir).
// An unrolling whose trips read the loop's initial values (planted) is
// refuted by Z3, after the flattening check's error.
// WRONG: error: control-flow flattening 'unroll scf.while (2 trips)' lost a dependency
// WRONG: error: rewrite 'unroll scf.while' is wrong (refuted in IEEE floating point): at index [{{.*}}] the op gives

// CHECK: rewrite validation (Z3, 500 ms per check):
// CHECK: proved  unroll scf.while
// CHECK: 1 proved, 0 refuted, 0 unknown
// CHECK: rewrite validation (Z3, 500 ms per check):
// CHECK: unknown WhileUnusedResult
// CHECK-NEXT: reason: not encoded: control flow: {{.*}}; the flattening check covers its dependencies
// CHECK: 0 proved, 0 refuted, 1 unknown

// A counted loop: unrolled.
func.func @counted(%h0: tensor<4xf32>) -> tensor<4xf32> {
  %zero = cuvil.constant dense<0> : tensor<i64>
  %two = cuvil.constant dense<2> : tensor<i64>
  %r:2 = scf.while (%i = %zero, %h = %h0) : (tensor<i64>, tensor<4xf32>) -> (tensor<i64>, tensor<4xf32>) {
    %lt = cuvil.logic.lt %i, %two : tensor<i64>, tensor<i64> -> tensor<i1>
    %go = tensor.extract %lt[] : tensor<i1>
    scf.condition(%go) %i, %h : tensor<i64>, tensor<4xf32>
  } do {
  ^bb0(%i: tensor<i64>, %h: tensor<4xf32>):
    %t = cuvil.act.tanh %h : tensor<4xf32>
    %one = cuvil.constant dense<1> : tensor<i64>
    %n = cuvil.math.add %i, %one : tensor<i64>, tensor<i64> -> tensor<i64>
    scf.yield %n, %t : tensor<i64>, tensor<4xf32>
  }
  return %r#1 : tensor<4xf32>
}

// -----

// A loop on tensor data whose flag nobody reads afterwards: the result is
// dropped (MLIR's WhileUnusedResult).
func.func @data(%h0: tensor<4xf32>, %flag0: tensor<i1>) -> tensor<4xf32> {
  %r:2 = scf.while (%f = %flag0, %h = %h0) : (tensor<i1>, tensor<4xf32>) -> (tensor<i1>, tensor<4xf32>) {
    %go = tensor.extract %f[] : tensor<i1>
    scf.condition(%go) %f, %h : tensor<i1>, tensor<4xf32>
  } do {
  ^bb0(%f2: tensor<i1>, %h2: tensor<4xf32>):
    %t = cuvil.act.tanh %h2 : tensor<4xf32>
    %s = cuvil.reduce.sum %t dims [0] : tensor<4xf32> -> tensor<f32>
    %z = cuvil.constant dense<0.5> : tensor<f32>
    %g = cuvil.logic.gt %s, %z : tensor<f32>, tensor<f32> -> tensor<i1>
    scf.yield %g, %t : tensor<i1>, tensor<4xf32>
  }
  return %r#1 : tensor<4xf32>
}
