// RUN: cuvil-opt %s --cuvil-verify-flattening -o %t.mlir 2>&1 | FileCheck %s
// RUN: FileCheck %s --check-prefix=IR < %t.mlir
// RUN: not cuvil-opt %s --cuvil-verify-flattening=test-plant-wrong-if-conversion=1 -o /dev/null 2>&1 | FileCheck %s --check-prefix=WRONG-IF
// RUN: not cuvil-opt %s --cuvil-verify-flattening=test-drop-carried=1 -o /dev/null 2>&1 | FileCheck %s --check-prefix=WRONG-UNROLL

// Every way the graph passes flatten control flow, each checked to keep the
// dependencies of the flattened op's results: an if on a constant becomes
// its branch, an if choosing between values defined above becomes a
// select, a counted loop is unrolled.
// CHECK: flattening check: 3 rewrite(s) of control flow
// CHECK-DAG: 1  ConvertTrivialIfToSelect (scf.if)
// CHECK-DAG: 1  RemoveStaticCondition (scf.if)
// CHECK-DAG: 1  unroll scf.while (2 trips) (scf.while)
// CHECK: 3 checked, 0 violations

// IR-LABEL: func.func @forward
// IR-NOT: scf.
// IR: arith.select
// IR: return

// The planted if-conversion keeps only the then-branch: the select's result
// no longer depends on the condition nor on what the else-branch chose.
// WRONG-IF-DAG: error: control-flow flattening 'test: if-conversion to the then-branch' lost a dependency: result #0 of scf.if no longer depends on the result of tensor.extract
// WRONG-IF-DAG: error: control-flow flattening 'test: if-conversion to the then-branch' lost a dependency: result #0 of scf.if no longer depends on the function's input #1
// WRONG-IF-DAG: scf.if %c
// WRONG-IF: VIOLATION test: if-conversion to the then-branch: result #0 of scf.if no longer depends on
// WRONG-IF: 2 checked, 2 violations

// WRONG-UNROLL: error: control-flow flattening 'unroll scf.while (2 trips)' lost a dependency: after trip 2, loop value #1 of scf.while no longer depends on trip 1's loop value #1
// WRONG-UNROLL: 3 checked, 2 violations
func.func @forward(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %always = arith.constant true
  %a = scf.if %always -> (tensor<4xf32>) {
    %t = cuvil.act.tanh %x : tensor<4xf32>
    scf.yield %t : tensor<4xf32>
  } else {
    scf.yield %x : tensor<4xf32>
  }
  %s = cuvil.reduce.sum %a dims [0] : tensor<4xf32> -> tensor<f32>
  %zero = cuvil.constant dense<0.0> : tensor<f32>
  %gt = cuvil.logic.gt %s, %zero : tensor<f32>, tensor<f32> -> tensor<i1>
  %c = tensor.extract %gt[] : tensor<i1>
  %b = scf.if %c -> (tensor<4xf32>) {
    scf.yield %a : tensor<4xf32>
  } else {
    scf.yield %y : tensor<4xf32>
  }
  %i0 = cuvil.constant dense<0> : tensor<i64>
  %n = cuvil.constant dense<2> : tensor<i64>
  %r:2 = scf.while (%i = %i0, %h = %b) : (tensor<i64>, tensor<4xf32>) -> (tensor<i64>, tensor<4xf32>) {
    %lt = cuvil.logic.lt %i, %n : tensor<i64>, tensor<i64> -> tensor<i1>
    %go = tensor.extract %lt[] : tensor<i1>
    scf.condition(%go) %i, %h : tensor<i64>, tensor<4xf32>
  } do {
  ^bb0(%i: tensor<i64>, %h: tensor<4xf32>):
    %m = cuvil.math.mul %h, %x : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    %one = cuvil.constant dense<1> : tensor<i64>
    %next = cuvil.math.add %i, %one : tensor<i64>, tensor<i64> -> tensor<i64>
    scf.yield %next, %m : tensor<i64>, tensor<4xf32>
  }
  return %r#1 : tensor<4xf32>
}
