// RUN: cuvil-opt %s --split-input-file --convert-cuvil-to-linalg --verify-diagnostics | FileCheck %s

// A broadcasting add: one generic, the smaller operand read through a
// broadcasting map, operands converted to the result type (i64 -> f32).
// CHECK-DAG: #[[$ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$ROW:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func @add_broadcast
// CHECK: linalg.generic {indexing_maps = [#[[$ID]], #[[$ROW]], #[[$ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK: arith.sitofp {{.*}} : i64 to f32
// CHECK: arith.addf
func.func @add_broadcast(%x: tensor<2x3xf32>, %b: tensor<3xi64>) -> tensor<2x3xf32> {
  %0 = cuvil.math.add %x, %b : tensor<2x3xf32>, tensor<3xi64> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// relu keeps NaN (maximumf propagates it); comparisons of unsigned 8-bit
// tensors use unsigned predicates on signless i8.
// CHECK-LABEL: func @relu_and_unsigned
// CHECK-SAME: (%{{.*}}: tensor<4xf32>, %{{.*}}: tensor<4xi8>, %{{.*}}: tensor<4xi8>) -> (tensor<4xf32>, tensor<4xi1>)
// CHECK: arith.maximumf
// CHECK: arith.cmpi ult
func.func @relu_and_unsigned(%x: tensor<4xf32>, %a: tensor<4xui8>, %b: tensor<4xui8>) -> (tensor<4xf32>, tensor<4xi1>) {
  %0 = cuvil.act.relu %x : tensor<4xf32>
  %1 = cuvil.logic.lt %a, %b : tensor<4xui8>, tensor<4xui8> -> tensor<4xi1>
  return %0, %1 : tensor<4xf32>, tensor<4xi1>
}

// -----

// A fusion group is inlined: its ops stay adjacent.
// CHECK-LABEL: func @group
// CHECK-NOT: cuvil.
// CHECK: linalg.matmul_transpose_b
// CHECK: arith.addf
// CHECK: arith.maximumf
func.func @group(%x: tensor<2x8xf32>, %w: tensor<4x8xf32>, %b: tensor<4xf32>) -> tensor<2x4xf32> {
  %0 = cuvil.fused.group gemm (%x, %w, %b) : (tensor<2x8xf32>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<2x4xf32> {
  ^bb0(%a: tensor<2x8xf32>, %wt: tensor<4x8xf32>, %bias: tensor<4xf32>):
    %l = cuvil.gemm.linear %a, %wt, %bias : (tensor<2x8xf32>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<2x4xf32>
    %r = cuvil.act.relu %l : tensor<2x4xf32>
    cuvil.fused.yield %r : tensor<2x4xf32>
  }
  return %0 : tensor<2x4xf32>
}

// -----

// Ops without a lowering yet are reported at their location, all at once.
func.func @unsupported(%x: tensor<2x4xf32>, %s: tensor<2xi64>) -> tensor<?x?xf32> {
  // expected-error @+1 {{'cuvil.shape.reshape_dynamic' is not supported by the CPU code generator yet}}
  %0 = cuvil.shape.reshape_dynamic %x, %s : tensor<2x4xf32>, tensor<2xi64> -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// Functions the math dialect lacks call the C library, declared once per
// module with the f32 name; f16 goes through f32 and back.
// CHECK-LABEL: func.func private @erfcf(f32) -> f32
// CHECK-NOT: func.func private @erfcf
// CHECK-LABEL: func @libm_calls
// CHECK: linalg.generic
// CHECK: func.call @erfcf(%{{.*}}) : (f32) -> f32
// CHECK: linalg.generic
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK-NEXT: func.call @erfcf
// CHECK-NEXT: arith.truncf %{{.*}} : f32 to f16
// CHECK: linalg.generic
// CHECK: func.call @hypot(%{{.*}}, %{{.*}}) : (f64, f64) -> f64
func.func @libm_calls(%x: tensor<4xf32>, %h: tensor<4xf16>, %d: tensor<4xf64>) -> (tensor<4xf32>, tensor<4xf16>, tensor<4xf64>) {
  %0 = cuvil.math.erfc %x : tensor<4xf32>
  %1 = cuvil.math.erfc %h : tensor<4xf16>
  %2 = cuvil.math.hypot %d, %d : tensor<4xf64>, tensor<4xf64> -> tensor<4xf64>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xf16>, tensor<4xf64>
}

// -----

// Shifts by the width or more: 0 to the left, the sign bit to the right.
// CHECK-LABEL: func @shifts
// CHECK: arith.cmpi uge
// CHECK: arith.shli
// CHECK: arith.cmpi uge
// CHECK: arith.shrsi
func.func @shifts(%x: tensor<4xi32>, %s: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>) {
  %0 = cuvil.math.shift_left %x, %s : tensor<4xi32>, tensor<4xi32> -> tensor<4xi32>
  %1 = cuvil.math.shift_right %x, %s : tensor<4xi32>, tensor<4xi32> -> tensor<4xi32>
  return %0, %1 : tensor<4xi32>, tensor<4xi32>
}

// -----

// Special functions are calls of the runtime's double-precision
// cuvil_special_<name>, f32 widened and narrowed around them.
//       CHECK: func.func private @cuvil_special_digamma(f64) -> f64
//       CHECK: func.func private @cuvil_special_zeta(f64, f64) -> f64
// CHECK-LABEL: func.func @special
//       CHECK: arith.extf %{{.*}} : f32 to f64
//       CHECK: call @cuvil_special_zeta(%{{.*}}, %{{.*}}) : (f64, f64) -> f64
//       CHECK: arith.truncf %{{.*}} : f64 to f32
//   CHECK-NOT: arith.extf
//       CHECK: call @cuvil_special_digamma(%{{.*}}) : (f64) -> f64
func.func @special(%x: tensor<4xf32>, %q: tensor<4xf32>, %d: tensor<3xf64>) -> (tensor<4xf32>, tensor<3xf64>) {
  %0 = cuvil.math.special2 %x, %q {function = "zeta"} : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %1 = cuvil.math.special %d {function = "digamma"} : tensor<3xf64>
  return %0, %1 : tensor<4xf32>, tensor<3xf64>
}
