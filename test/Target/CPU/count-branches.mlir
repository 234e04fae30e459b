// RUN: cuvil-opt %s --cuvil-count-branches | FileCheck %s

// Every arm of the model's control flow with a source line starts with a
// counter call; the entry registers the arms' names once. An if without an
// else gets an empty one (its else still counts); a branch without a model
// line (the compiler's own shape dispatch, line 0) is not counted.
// CHECK: func.func private @cuvil_rt_branch(i64)
// CHECK: func.func private @cuvil_rt_branch_sites(memref<82xi8>, i64)
// The names, NUL-separated: "m.py:12 if then", "m.py:12 if else",
// "m.py:15 if then", "m.py:15 if else", "m.py:20 loop body".
// CHECK: memref.global "private" constant @__cuvil_branch_arms_forward : memref<82xi8> = dense<[109, 46, 112, 121, 58, 49, 50, 32, 105, 102, 32, 116, 104, 101, 110, 0, 109, 46, 112, 121, 58, 49, 50, 32, 105, 102, 32, 101, 108, 115, 101, 0, 109, 46, 112, 121, 58, 49, 53, 32, 105, 102, 32, 116, 104, 101, 110, 0, 109, 46, 112, 121, 58, 49, 53, 32, 105, 102, 32, 101, 108, 115, 101, 0, 109, 46, 112, 121, 58, 50, 48, 32, 108, 111, 111, 112, 32, 98, 111, 100, 121, 0]>
// CHECK-LABEL: func.func @forward
// CHECK: %[[T:.*]] = memref.get_global @__cuvil_branch_arms_forward
// CHECK: %[[N:.*]] = arith.constant 5 : i64
// CHECK: call @cuvil_rt_branch_sites(%[[T]], %[[N]])
// CHECK: scf.if
// CHECK-NEXT: %[[A0:.*]] = arith.constant 0 : i64
// CHECK-NEXT: call @cuvil_rt_branch(%[[A0]])
// CHECK: } else {
// CHECK-NEXT: %[[A1:.*]] = arith.constant 1 : i64
// CHECK-NEXT: call @cuvil_rt_branch(%[[A1]])
// CHECK: scf.if
// CHECK-NEXT: arith.constant 2 : i64
// CHECK-NEXT: call @cuvil_rt_branch
// CHECK-NEXT: } else {
// CHECK-NEXT: arith.constant 3 : i64
// CHECK-NEXT: call @cuvil_rt_branch
// CHECK: scf.while
// CHECK: } do {
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.constant 4 : i64
// CHECK-NEXT: call @cuvil_rt_branch
// The dispatch branch (line 0) has no counter.
// CHECK: scf.if
// CHECK-NOT: call @cuvil_rt_branch(
// CHECK: return
func.func @forward(%x: tensor<4xf32>, %c: i1, %d: i1) -> tensor<4xf32> {
  %a = scf.if %c -> (tensor<4xf32>) {
    %r = cuvil.act.relu %x : tensor<4xf32>
    scf.yield %r : tensor<4xf32>
  } else {
    scf.yield %x : tensor<4xf32>
  } loc("m.py":12:0)
  scf.if %d {
  } loc("m.py":15:0)
  %zero = cuvil.constant dense<0> : tensor<i64>
  %two = cuvil.constant dense<2> : tensor<i64>
  %w:2 = scf.while (%i = %zero, %h = %a) : (tensor<i64>, tensor<4xf32>) -> (tensor<i64>, tensor<4xf32>) {
    %lt = cuvil.logic.lt %i, %two : tensor<i64>, tensor<i64> -> tensor<i1>
    %go = tensor.extract %lt[] : tensor<i1>
    scf.condition(%go) %i, %h : tensor<i64>, tensor<4xf32>
  } do {
  ^bb0(%i: tensor<i64>, %h: tensor<4xf32>):
    %t = cuvil.act.tanh %h : tensor<4xf32>
    %one = cuvil.constant dense<1> : tensor<i64>
    %n = cuvil.math.add %i, %one : tensor<i64>, tensor<i64> -> tensor<i64>
    scf.yield %n, %t : tensor<i64>, tensor<4xf32>
  } loc("m.py":20:0)
  %b = scf.if %c -> (tensor<4xf32>) {
    scf.yield %w#1 : tensor<4xf32>
  } else {
    scf.yield %x : tensor<4xf32>
  } loc("model.pt":0:0)
  return %b : tensor<4xf32>
}
