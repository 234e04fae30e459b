// RUN: cuvil-opt %s --split-input-file --cuvil-dce | FileCheck %s

// Unused pure ops go, including chains that only feed them; effects stay
// with everything they use.
// CHECK-LABEL: func @chains
func.func @chains(%x: tensor<4xf32>, %c: tensor<i1>) -> tensor<4xf32> {
  // CHECK-NOT: cuvil.act.sigmoid
  // CHECK-NOT: cuvil.act.tanh
  %dead0 = cuvil.act.sigmoid %x : tensor<4xf32>
  %dead1 = cuvil.act.tanh %dead0 : tensor<4xf32>
  // CHECK: %[[P:.*]] = cuvil.act.relu
  // CHECK: cuvil.effect.print "x = {}" %[[P]]
  // CHECK: cuvil.effect.assert
  %p = cuvil.act.relu %x : tensor<4xf32>
  cuvil.effect.print "x = {}" %p : tensor<4xf32>
  cuvil.effect.assert %c, "AssertionError: bad input" : tensor<i1>
  // CHECK: %[[Y:.*]] = cuvil.math.neg
  // CHECK: return %[[Y]]
  %y = cuvil.math.neg %x : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// A data-dependent if that only computes unused values is dead; one that
// prints is not, and keeps what its branches use from outside.
// CHECK-LABEL: func @branches
func.func @branches(%x: tensor<4xf32>, %flag: i1) -> tensor<4xf32> {
  // CHECK: %[[E:.*]] = cuvil.math.exp
  // CHECK-NOT: cuvil.math.log
  %e = cuvil.math.exp %x : tensor<4xf32>
  %l = cuvil.math.log %x : tensor<4xf32>
  // CHECK: scf.if
  // CHECK-NEXT: cuvil.effect.print "{}" %[[E]]
  // CHECK-NOT: scf.if
  scf.if %flag {
    cuvil.effect.print "{}" %e : tensor<4xf32>
  }
  %r = scf.if %flag -> tensor<4xf32> {
    scf.yield %l : tensor<4xf32>
  } else {
    scf.yield %x : tensor<4xf32>
  }
  return %x : tensor<4xf32>
}
