// RUN: cuvil-opt %s --split-input-file --cuvil-hoist-row-loads | FileCheck %s

// A bilinear resize along rows: the row index and weight, which do not
// depend on the column, are loaded once per row before an inner loop over
// the columns (that loop then only streams along rows).
// CHECK-LABEL: func.func @resize_rows
// CHECK: scf.parallel (%[[C:.*]], %[[H:.*]]) = (%{{.*}}, %{{.*}}) to (%{{.*}}, %{{.*}}) step (%{{.*}}, %{{.*}}) {
// CHECK-NEXT: %[[I:.*]] = memref.load %arg1[%[[H]]] : memref<6xindex>
// CHECK-NEXT: %[[W:.*]] = memref.load %arg2[%[[H]]] : memref<6xf32>
// CHECK-NEXT: scf.for %[[X:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT: %[[V:.*]] = memref.load %arg0[%[[C]], %[[I]], %[[X]]] : memref<4x3x128xf32>
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[W]], %[[V]] : f32
// CHECK-NEXT: memref.store %[[M]], %arg3[%[[C]], %[[H]], %[[X]]] : memref<4x6x128xf32>
func.func @resize_rows(%x: memref<4x3x128xf32>, %rows: memref<6xindex>, %weights: memref<6xf32>, %y: memref<4x6x128xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c6 = arith.constant 6 : index
  %c128 = arith.constant 128 : index
  scf.parallel (%c, %h, %w) = (%c0, %c0, %c0) to (%c4, %c6, %c128) step (%c1, %c1, %c1) {
    %i = memref.load %rows[%h] : memref<6xindex>
    %wt = memref.load %weights[%h] : memref<6xf32>
    %v = memref.load %x[%c, %i, %w] : memref<4x3x128xf32>
    %m = arith.mulf %wt, %v : f32
    memref.store %m, %y[%c, %h, %w] : memref<4x6x128xf32>
    scf.reduce
  }
  return
}

// -----

// Left alone: a load from the buffer the body stores to (in place), and a
// last dimension of run-time size (it may run no iteration).
// CHECK-LABEL: func.func @in_place
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) =
// CHECK-NOT: scf.for
func.func @in_place(%y: memref<4x128xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c128 = arith.constant 128 : index
  scf.parallel (%r, %w) = (%c0, %c0) to (%c4, %c128) step (%c1, %c1) {
    %first = memref.load %y[%r, %c0] : memref<4x128xf32>
    %v = memref.load %y[%r, %w] : memref<4x128xf32>
    %s = arith.addf %first, %v : f32
    memref.store %s, %y[%r, %w] : memref<4x128xf32>
    scf.reduce
  }
  return
}

// CHECK-LABEL: func.func @run_time_columns
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) =
// CHECK-NOT: scf.for
func.func @run_time_columns(%x: memref<4x?xf32>, %b: memref<4xf32>, %y: memref<4x?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.parallel (%r, %w) = (%c0, %c0) to (%c4, %n) step (%c1, %c1) {
    %bias = memref.load %b[%r] : memref<4xf32>
    %v = memref.load %x[%r, %w] : memref<4x?xf32>
    %s = arith.addf %bias, %v : f32
    memref.store %s, %y[%r, %w] : memref<4x?xf32>
    scf.reduce
  }
  return
}
