// RUN: cuvil-opt %s --cuvil-simplify | FileCheck %s

// cuvil-simplify folds and rewrites like canonicalize (the shared cases are
// in Dialect/Cuvil/canonicalize.mlir, run with both) but removes nothing
// that a fold or pattern did not replace: an unused op stays, and so does
// an op that a fold made unused.
// CHECK-LABEL: func @keeps_dead_ops
//  CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
func.func @keeps_dead_ops(%x: tensor<4xf32>) -> tensor<2x2xf32> {
  // CHECK: %[[UNUSED:.*]] = cuvil.act.sigmoid %[[X]]
  %unused = cuvil.act.sigmoid %x : tensor<4xf32>
  // relu(relu(x)) -> relu(x): the outer relu is replaced, the inner kept.
  // CHECK: %[[R:.*]] = cuvil.act.relu %[[X]]
  // CHECK-NOT: cuvil.act.relu
  %r0 = cuvil.act.relu %x : tensor<4xf32>
  %r1 = cuvil.act.relu %r0 : tensor<4xf32>
  // reshape(reshape(x)) -> one reshape of x; the first reshape stays, unused.
  // CHECK: cuvil.shape.reshape %[[R]] {shape = array<i64: 4, 1>}
  // CHECK: %[[FINAL:.*]] = cuvil.shape.reshape %[[R]] {shape = array<i64: 2, 2>}
  %a = cuvil.shape.reshape %r1 {shape = array<i64: 4, 1>} : tensor<4xf32> -> tensor<4x1xf32>
  %b = cuvil.shape.reshape %a {shape = array<i64: 2, 2>} : tensor<4x1xf32> -> tensor<2x2xf32>
  // CHECK: return %[[FINAL]]
  return %b : tensor<2x2xf32>
}
