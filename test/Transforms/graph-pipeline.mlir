// RUN: cuvil-opt %s --cuvil-graph-optimize | FileCheck %s
// RUN: cuvil-opt %s --cuvil-graph-optimize='disable=dead-code-elimination' | FileCheck %s --check-prefix=NODCE
// RUN: cuvil-opt %s --cuvil-print-pipeline='disable=dead-code-elimination' -o /dev/null 2>&1 | FileCheck %s --check-prefix=PRINT
// RUN: not cuvil-opt %s --cuvil-graph-optimize='disable=no-such-thing' 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// The pipeline removes dead pure code and folds identities, keeps effects;
// with dead-code elimination disabled nothing dead is removed.
// CHECK-LABEL: func @f
// NODCE-LABEL: func @f
func.func @f(%x: tensor<4xf32>, %ok: tensor<i1>) -> tensor<4xf32> {
  // CHECK-NOT: cuvil.act.sigmoid
  // NODCE: cuvil.act.sigmoid
  %unused = cuvil.act.sigmoid %x : tensor<4xf32>
  // CHECK: cuvil.effect.assert
  // NODCE: cuvil.effect.assert
  cuvil.effect.assert %ok, "AssertionError: bad" : tensor<i1>
  // A same-dtype cast is an identity.
  // CHECK-NOT: cuvil.tensor.cast
  %c = cuvil.tensor.cast %x : tensor<4xf32> -> tensor<4xf32>
  %r = cuvil.act.relu %c : tensor<4xf32>
  // CHECK: %[[R:.*]] = cuvil.act.relu %arg0
  // CHECK: return %[[R]]
  return %r : tensor<4xf32>
}

// PRINT: graph pipeline (strategy graph_fusion):
// PRINT-NEXT: phase cleanup
// PRINT-NEXT: 1. simplify
// PRINT-NEXT: 2. fold-constants
// PRINT-NEXT: 3. dead-code-elimination {{.*}} [disabled]
// PRINT-NEXT: phase shape-propagation
// PRINT-NEXT: 4. shape-propagation

// UNKNOWN: error: cuvil-graph-optimize: unknown optimization 'no-such-thing'; the known ones are: dead-code-elimination decompose-conv-transpose fold-batch-norm fold-constants fusion lifetime-check memory-planning recognize-composites shape-propagation simplify
