// RUN: cuvil-opt %s --cuvil-unroll-loops --split-input-file | FileCheck %s
// RUN: not cuvil-opt %s --cuvil-unroll-loops=test-drop-carried=1 --split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=MUTATION

// A counter against a constant (what shape specialisation leaves of
// `for t in range(x.size(1))`): three copies of the body, each reading the
// one before; the results are the third's. The condition is not copied.
// CHECK-LABEL: func.func @counted
// CHECK-NOT: scf.while
// CHECK-NOT: cuvil.logic.lt
// CHECK: %[[A1:.*]] = cuvil.math.add %arg0, %arg1
// CHECK: %[[T1:.*]] = cuvil.act.tanh %[[A1]]
// CHECK: %[[A2:.*]] = cuvil.math.add %[[T1]], %arg1
// CHECK: %[[T2:.*]] = cuvil.act.tanh %[[A2]]
// CHECK: %[[A3:.*]] = cuvil.math.add %[[T2]], %arg1
// CHECK: %[[T3:.*]] = cuvil.act.tanh %[[A3]]
// CHECK-NOT: cuvil.act.tanh
// CHECK: return %[[T3]]

// The planted bug (every trip reads the initial values) is caught: trip 2
// no longer depends on trip 1.
// MUTATION: error: control-flow flattening 'unroll scf.while (3 trips)' lost a dependency: after trip 2, loop value #1 of scf.while no longer depends on trip 1's loop value #1
func.func @counted(%h0: tensor<4xf32>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %zero = cuvil.constant dense<0> : tensor<i64>
  %three = cuvil.constant dense<3> : tensor<i64>
  %r:2 = scf.while (%i = %zero, %h = %h0) : (tensor<i64>, tensor<4xf32>) -> (tensor<i64>, tensor<4xf32>) {
    %lt = cuvil.logic.lt %i, %three : tensor<i64>, tensor<i64> -> tensor<i1>
    %go = tensor.extract %lt[] : tensor<i1>
    scf.condition(%go) %i, %h : tensor<i64>, tensor<4xf32>
  } do {
  ^bb0(%i: tensor<i64>, %h: tensor<4xf32>):
    %s = cuvil.math.add %h, %x : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    %t = cuvil.act.tanh %s : tensor<4xf32>
    %one = cuvil.constant dense<1> : tensor<i64>
    %n = cuvil.math.add %i, %one : tensor<i64>, tensor<i64> -> tensor<i64>
    scf.yield %n, %t : tensor<i64>, tensor<4xf32>
  }
  return %r#1 : tensor<4xf32>
}

// -----

// A loop that never runs: its results are its initial values.
// CHECK-LABEL: func.func @never
// CHECK-NOT: scf.while
// CHECK-NOT: cuvil.act.tanh
// CHECK: return %arg0
func.func @never(%h0: tensor<4xf32>) -> tensor<4xf32> {
  %five = cuvil.constant dense<5> : tensor<i64>
  %three = cuvil.constant dense<3> : tensor<i64>
  %r:2 = scf.while (%i = %five, %h = %h0) : (tensor<i64>, tensor<4xf32>) -> (tensor<i64>, tensor<4xf32>) {
    %lt = cuvil.logic.lt %i, %three : tensor<i64>, tensor<i64> -> tensor<i1>
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

// The condition forwards a value it computes: each trip's body reads it,
// and the results are what it forwards after the last trip (two trips:
// h -> 2h -> tanh -> 2h -> tanh -> 2h).
// CHECK-LABEL: func.func @forwarding
// CHECK-NOT: scf.while
// CHECK: %[[D1:.*]] = cuvil.math.add %arg0, %arg0
// CHECK: %[[T1:.*]] = cuvil.act.tanh %[[D1]]
// CHECK: %[[D2:.*]] = cuvil.math.add %[[T1]], %[[T1]]
// CHECK: %[[T2:.*]] = cuvil.act.tanh %[[D2]]
// CHECK: %[[D3:.*]] = cuvil.math.add %[[T2]], %[[T2]]
// CHECK: return %[[D3]]
// MUTATION: error: control-flow flattening 'unroll scf.while (2 trips)' lost a dependency: after trip 2, loop value #1 of scf.while no longer depends on trip 1's loop value #1
func.func @forwarding(%h0: tensor<4xf32>) -> tensor<4xf32> {
  %zero = cuvil.constant dense<0> : tensor<i64>
  %two = cuvil.constant dense<2> : tensor<i64>
  %r:2 = scf.while (%i = %zero, %h = %h0) : (tensor<i64>, tensor<4xf32>) -> (tensor<i64>, tensor<4xf32>) {
    %lt = cuvil.logic.lt %i, %two : tensor<i64>, tensor<i64> -> tensor<i1>
    %go = tensor.extract %lt[] : tensor<i1>
    %d = cuvil.math.add %h, %h : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    scf.condition(%go) %i, %d : tensor<i64>, tensor<4xf32>
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

// A condition on tensor data: the trip count is not known, the loop stays.
// CHECK-LABEL: func.func @data_dependent
// CHECK: scf.while
func.func @data_dependent(%h0: tensor<4xf32>, %limit: tensor<i64>) -> tensor<4xf32> {
  %zero = cuvil.constant dense<0> : tensor<i64>
  %r:2 = scf.while (%i = %zero, %h = %h0) : (tensor<i64>, tensor<4xf32>) -> (tensor<i64>, tensor<4xf32>) {
    %lt = cuvil.logic.lt %i, %limit : tensor<i64>, tensor<i64> -> tensor<i1>
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

// More trips than max-trip-count (16): the loop stays.
// CHECK-LABEL: func.func @long
// CHECK: scf.while
func.func @long(%h0: tensor<4xf32>) -> tensor<4xf32> {
  %zero = cuvil.constant dense<0> : tensor<i64>
  %many = cuvil.constant dense<100> : tensor<i64>
  %r:2 = scf.while (%i = %zero, %h = %h0) : (tensor<i64>, tensor<4xf32>) -> (tensor<i64>, tensor<4xf32>) {
    %lt = cuvil.logic.lt %i, %many : tensor<i64>, tensor<i64> -> tensor<i1>
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
