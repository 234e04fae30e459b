// RUN: cuvil-opt %s --split-input-file --cuvil-promote-accumulators | FileCheck %s

// A max over the last dimension as linalg's loops leave it: the running
// value, at an index defined outside the reduction loop, becomes the loop's
// iter_arg (loaded once before, stored once after).
// CHECK-LABEL: func.func @row_max
//       CHECK:   scf.parallel (%[[I:.*]]) =
//       CHECK:     %[[INIT:.*]] = memref.load %arg1[%[[I]]] : memref<4xf32>
//       CHECK:     %[[R:.*]] = scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[INIT]]) -> (f32) {
//       CHECK:       %[[X:.*]] = memref.load %arg0[%[[I]], %[[J]]] : memref<4x128xf32>
//       CHECK:       %[[M:.*]] = arith.maximumf %[[ACC]], %[[X]] : f32
//       CHECK:       scf.yield %[[M]] : f32
//       CHECK:     memref.store %[[R]], %arg1[%[[I]]] : memref<4xf32>
func.func @row_max(%x: memref<4x128xf32>, %y: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c128 = arith.constant 128 : index
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    scf.for %j = %c0 to %c128 step %c1 {
      %acc = memref.load %y[%i] : memref<4xf32>
      %v = memref.load %x[%i, %j] : memref<4x128xf32>
      %m = arith.maximumf %acc, %v : f32
      memref.store %m, %y[%i] : memref<4xf32>
    }
    scf.reduce
  }
  return
}

// -----

// A sum over two dimensions (global average pooling's): the inner loop
// first, then the outer one, whose body is then a load, that loop and a
// store.
// CHECK-LABEL: func.func @plane_sum
//       CHECK:   %[[INIT:.*]] = memref.load %arg1[%[[C:.*]]] : memref<8xf32>
//       CHECK:   %[[OUTER:.*]] = scf.for %{{.*}} iter_args(%[[A:.*]] = %[[INIT]]) -> (f32) {
//       CHECK:     %[[INNER:.*]] = scf.for %{{.*}} iter_args(%[[B:.*]] = %[[A]]) -> (f32) {
//       CHECK:       arith.addf %[[B]], %{{.*}} : f32
//       CHECK:     scf.yield %[[INNER]] : f32
//       CHECK:   memref.store %[[OUTER]], %arg1[%[[C]]] : memref<8xf32>
func.func @plane_sum(%x: memref<8x7x7xf32>, %y: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c7 = arith.constant 7 : index
  %c8 = arith.constant 8 : index
  scf.parallel (%c) = (%c0) to (%c8) step (%c1) {
    scf.for %h = %c0 to %c7 step %c1 {
      scf.for %w = %c0 to %c7 step %c1 {
        %acc = memref.load %y[%c] : memref<8xf32>
        %v = memref.load %x[%c, %h, %w] : memref<8x7x7xf32>
        %s = arith.addf %acc, %v : f32
        memref.store %s, %y[%c] : memref<8xf32>
      }
    }
    scf.reduce
  }
  return
}

// -----

// Arg-max: two running values (the best value and its index), two iter_args.
// CHECK-LABEL: func.func @arg_max
//       CHECK:   %[[V0:.*]] = memref.load %arg1[%c0] : memref<1xf32>
//       CHECK:   %[[I0:.*]] = memref.load %arg2[%c0] : memref<1xi64>
//       CHECK:   %[[R:.*]]:2 = scf.for %{{.*}} iter_args(%[[V:.*]] = %[[V0]], %[[I:.*]] = %[[I0]]) -> (f32, i64) {
//       CHECK:   memref.store %[[R]]#0, %arg1[%c0] : memref<1xf32>
//       CHECK:   memref.store %[[R]]#1, %arg2[%c0] : memref<1xi64>
func.func @arg_max(%x: memref<16xf32>, %best: memref<1xf32>, %at: memref<1xi64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  scf.for %j = %c0 to %c16 step %c1 {
    %v = memref.load %best[%c0] : memref<1xf32>
    %i = memref.load %at[%c0] : memref<1xi64>
    %x_j = memref.load %x[%j] : memref<16xf32>
    %j64 = arith.index_cast %j : index to i64
    %gt = arith.cmpf ogt, %x_j, %v : f32
    %nv = arith.select %gt, %x_j, %v : f32
    %ni = arith.select %gt, %j64, %i : i64
    memref.store %nv, %best[%c0] : memref<1xf32>
    memref.store %ni, %at[%c0] : memref<1xi64>
  }
  return
}

// -----

// Left as they are: an element-wise loop (the store's index varies), a
// load after the store, a second read of the buffer elsewhere, a call (it
// may touch any buffer), and an accumulator read by an inner loop.
// CHECK-LABEL: func.func @not_accumulators
//   CHECK-NOT:   iter_args
func.func private @opaque()
func.func @not_accumulators(%x: memref<16xf32>, %y: memref<16xf32>, %z: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  scf.for %j = %c0 to %c16 step %c1 {
    %v = memref.load %x[%j] : memref<16xf32>
    memref.store %v, %y[%j] : memref<16xf32>
  }
  scf.for %j = %c0 to %c16 step %c1 {
    %v = memref.load %x[%j] : memref<16xf32>
    memref.store %v, %z[%c0] : memref<1xf32>
    %a = memref.load %z[%c0] : memref<1xf32>
  }
  scf.for %j = %c0 to %c16 step %c1 {
    %a = memref.load %z[%c0] : memref<1xf32>
    %b = memref.load %z[%c0] : memref<1xf32>
    %s = arith.addf %a, %b : f32
    memref.store %s, %z[%c0] : memref<1xf32>
  }
  scf.for %j = %c0 to %c16 step %c1 {
    %a = memref.load %z[%c0] : memref<1xf32>
    %v = memref.load %x[%j] : memref<16xf32>
    %s = arith.addf %a, %v : f32
    func.call @opaque() : () -> ()
    memref.store %s, %z[%c0] : memref<1xf32>
  }
  scf.for %j = %c0 to %c16 step %c1 {
    %a = memref.load %z[%c0] : memref<1xf32>
    scf.for %k = %c0 to %c16 step %c1 {
      %b = memref.load %z[%c0] : memref<1xf32>
      %v = memref.load %x[%k] : memref<16xf32>
    }
    %s = arith.addf %a, %a : f32
    memref.store %s, %z[%c0] : memref<1xf32>
  }
  return
}
