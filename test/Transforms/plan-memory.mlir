// RUN: cuvil-opt %s --split-input-file --cuvil-plan-memory --cuvil-check-lifetimes | FileCheck %s
// RUN: cuvil-opt %s --split-input-file --cuvil-plan-memory=report=1 -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT
// RUN: cuvil-opt %s --split-input-file --cuvil-plan-memory='in-place=0' --cuvil-check-lifetimes | FileCheck %s --check-prefix=NOINPLACE

// A chain a -> b -> c -> d of 4 KiB tensors: a dies at b, so c reuses a's
// bytes; the element-wise ops write in place of their dying operand, so
// the whole chain lives in one buffer.
// REPORT: cuvil-plan-memory: @chain: 1 buffers (2 results in place), arena 4.0 KiB, liveness lower bound 4.0 KiB (arena/bound 1.000x), all intermediates 12.0 KiB (3.00x the arena)
// CHECK-LABEL: func @chain
// CHECK-SAME: cuvil.memory.arena_bytes = 4096 : i64, cuvil.memory.lower_bound_bytes = 4096 : i64, cuvil.memory.total_bytes = 12288 : i64
// CHECK: cuvil.gemm.linear {{.*}} {cuvil.memory.offset = 0 : i64}
// CHECK: cuvil.act.relu {{.*}} {cuvil.memory.offset = 0 : i64}
// CHECK: cuvil.math.neg {{.*}} {cuvil.memory.offset = 0 : i64}
// Without in-place writes: two buffers alternate.
// NOINPLACE-LABEL: func @chain
// NOINPLACE-SAME: cuvil.memory.arena_bytes = 8192
// NOINPLACE: cuvil.gemm.linear {{.*}} {cuvil.memory.offset = 0 : i64}
// NOINPLACE: cuvil.act.relu {{.*}} {cuvil.memory.offset = 4096 : i64}
// NOINPLACE: cuvil.math.neg {{.*}} {cuvil.memory.offset = 0 : i64}
func.func @chain(%x: tensor<32x32xf32>, %w: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %a = cuvil.gemm.linear %x, %w : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %b = cuvil.act.relu %a : tensor<32x32xf32>
  %c = cuvil.math.neg %b : tensor<32x32xf32>
  %d = cuvil.gemm.linear %c, %w : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  return %d : tensor<32x32xf32>
}

// -----

// A view keeps its root alive: %t (a transpose of %a) is read by the last
// op, so %a's buffer cannot be reused by %b; the inputs, the constant and
// the returned value get no offset. The transpose is strided, so %b may not
// overwrite %a in place.
// CHECK-LABEL: func @views
// CHECK-SAME: cuvil.memory.arena_bytes = 8192
// CHECK: %[[A:.*]] = cuvil.act.relu %arg0 {cuvil.memory.offset = [[OA:[0-9]+]] : i64}
// CHECK: cuvil.shape.transpose %[[A]]
// CHECK-NOT: cuvil.memory.offset
// CHECK: cuvil.act.sigmoid %[[A]] {cuvil.memory.offset = {{[0-9]+}} : i64}
// CHECK: cuvil.math.add
// CHECK-NOT: cuvil.memory.offset
// CHECK: return
func.func @views(%x: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %a = cuvil.act.relu %x : tensor<32x32xf32>
  %t = cuvil.shape.transpose %a {dim0 = 0 : i64, dim1 = 1 : i64} : tensor<32x32xf32> -> tensor<32x32xf32>
  %b = cuvil.act.sigmoid %a : tensor<32x32xf32>
  %c = cuvil.math.add %b, %t : tensor<32x32xf32>, tensor<32x32xf32> -> tensor<32x32xf32>
  return %c : tensor<32x32xf32>
}

// -----

// Results of control flow are left to the code of their branches; what
// the branches read from outside stays alive across the scf.if.
// REPORT: cuvil-plan-memory: @branches: 1 buffers (0 results in place), {{.*}}, 2 values left to their producers (dynamic shapes, control-flow results)
// CHECK-LABEL: func @branches
// CHECK: %[[A:.*]] = cuvil.act.relu %arg0 {cuvil.memory.offset = 0 : i64}
// CHECK: scf.if
// CHECK-NOT: cuvil.memory.offset
// CHECK: return
func.func @branches(%x: tensor<32x32xf32>, %flag: i1) -> (tensor<32x32xf32>, tensor<32x32xf32>) {
  %a = cuvil.act.relu %x : tensor<32x32xf32>
  %r:2 = scf.if %flag -> (tensor<32x32xf32>, tensor<32x32xf32>) {
    %n = cuvil.math.neg %a : tensor<32x32xf32>
    scf.yield %n, %a : tensor<32x32xf32>, tensor<32x32xf32>
  } else {
    scf.yield %a, %a : tensor<32x32xf32>, tensor<32x32xf32>
  }
  %s = cuvil.act.sigmoid %r#0 : tensor<32x32xf32>
  return %s, %r#1 : tensor<32x32xf32>, tensor<32x32xf32>
}
