// RUN: cuvil-opt %s --cuvil-canonicalize | FileCheck %s
// RUN: not cuvil-opt %s --cuvil-canonicalize=test-plant-wrong-if-conversion=1 -o /dev/null 2>&1 | FileCheck %s --check-prefix=WRONG

// The code generators' canonicalization: MLIR's patterns (here the if that
// only chooses between values becomes a select), each rewrite of control
// flow checked for the dependencies of its results.
// CHECK-LABEL: func.func @choose
// CHECK-NOT: scf.if
// CHECK: %[[S:.*]] = arith.select %{{.*}}, %arg0, %arg1 : tensor<4xf32>
// CHECK: return %[[S]]

// A planted if-conversion that keeps only the then-branch is caught: the
// result no longer depends on the condition nor on the else-branch's value.
// WRONG-DAG: error: control-flow flattening 'test: if-conversion to the then-branch' lost a dependency: result #0 of scf.if no longer depends on the function's input #1
// WRONG-DAG: error: control-flow flattening 'test: if-conversion to the then-branch' lost a dependency: result #0 of scf.if no longer depends on the result of tensor.extract
func.func @choose(%x: tensor<4xf32>, %y: tensor<4xf32>, %flag: tensor<i1>) -> tensor<4xf32> {
  %c = tensor.extract %flag[] : tensor<i1>
  %r = scf.if %c -> (tensor<4xf32>) {
    scf.yield %x : tensor<4xf32>
  } else {
    scf.yield %y : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
