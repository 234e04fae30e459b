// RUN: cuvil-opt %s --split-input-file --convert-cuvil-to-linalg | FileCheck %s

// Fusion survives into code generation: a fusion group's element-wise
// chain (sigmoid, mul, broadcast mul: SiLU then a per-channel scale)
// becomes one loop nest, one linalg.generic reading x and the scale once.
// CHECK-LABEL: func.func @silu_scale
//   CHECK-NOT:   linalg.generic
//       CHECK:   linalg.generic {{.*}} ins(%arg0, %arg1 : tensor<4x64xf32>, tensor<64xf32>)
//       CHECK:     math.exp
//       CHECK:     arith.divf
//       CHECK:     arith.mulf
//       CHECK:     arith.mulf
//       CHECK:     linalg.yield
//   CHECK-NOT:   linalg.generic
//       CHECK:   return
func.func @silu_scale(%x: tensor<4x64xf32>, %s: tensor<64xf32>) -> tensor<4x64xf32> {
  %0 = cuvil.fused.group elementwise(%x, %s) : (tensor<4x64xf32>, tensor<64xf32>) -> tensor<4x64xf32> {
  ^bb0(%a: tensor<4x64xf32>, %b: tensor<64xf32>):
    %1 = cuvil.act.sigmoid %a : tensor<4x64xf32>
    %2 = cuvil.math.mul %a, %1 : tensor<4x64xf32>, tensor<4x64xf32> -> tensor<4x64xf32>
    %3 = cuvil.math.mul %2, %b : tensor<4x64xf32>, tensor<64xf32> -> tensor<4x64xf32>
    cuvil.fused.yield %3 : tensor<4x64xf32>
  }
  return %0 : tensor<4x64xf32>
}

// -----

// Only inside a group: the same chain without a group stays three loop
// nests (what fuses is the graph pipeline's decision, not the lowering's),
// and a group does not reach into ops outside it.
// CHECK-LABEL: func.func @outside
// CHECK-COUNT-3: linalg.generic
//   CHECK-NOT:   linalg.generic
func.func @outside(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %1 = cuvil.act.sigmoid %x : tensor<4x64xf32>
  %2 = cuvil.math.mul %x, %1 : tensor<4x64xf32>, tensor<4x64xf32> -> tensor<4x64xf32>
  %0 = cuvil.fused.group elementwise(%2) : (tensor<4x64xf32>) -> tensor<4x64xf32> {
  ^bb0(%a: tensor<4x64xf32>):
    %3 = cuvil.act.relu %a : tensor<4x64xf32>
    cuvil.fused.yield %3 : tensor<4x64xf32>
  }
  return %0 : tensor<4x64xf32>
}
