// RUN: cuvil-opt %s --split-input-file --cuvil-run-time-shape-arguments | FileCheck %s

// The dynamic input becomes a pointer plus its size in the trailing i64
// array; the output's copy writes the result's size into the output's
// slot and runs only when it fits the capacity there, else the function
// returns the capacity message's status. The output's bound is recorded.
// CHECK-LABEL: func @model
// CHECK-SAME: (%[[X:.*]]: memref<1xf32> {cuvil.dim_bounds
// CHECK-SAME: %[[Y:.*]]: memref<1xf32>, %[[SIZES:.*]]: memref<2xi64>) -> i32
// CHECK-SAME: cuvil.failure_messages = ["an output's buffer is too small
// CHECK-SAME: cuvil.output_max_shapes = [array<i64: 64, 8>]
// CHECK: %[[N64:.*]] = memref.load %[[SIZES]][%c0
// CHECK: %[[N:.*]] = arith.index_cast %[[N64]]
// CHECK: memref.reinterpret_cast %[[X]] to offset: [0], sizes: [%[[N]], 8], strides: [8, 1]
// CHECK: %[[CAP64:.*]] = memref.load %[[SIZES]][%c1
// CHECK: %[[CAP:.*]] = arith.index_cast %[[CAP64]]
// CHECK: memref.store %{{.*}}, %[[SIZES]][%c1
// CHECK: %[[FITS:.*]] = arith.cmpi ule, %{{.*}}, %[[CAP]]
// CHECK: scf.if
// CHECK: memref.reinterpret_cast %[[Y]]
// CHECK: linalg.copy
// CHECK: else
// CHECK: arith.constant 1 : i32
// CHECK: return %{{.*}} : i32
func.func @model(%x: memref<?x8xf32> {cuvil.dim_bounds = array<i64: 1, 64, 8, 8>, cuvil.dim_symbols = ["n", ""]},
                 %y: memref<?x8xf32>) {
  linalg.copy ins(%x : memref<?x8xf32>) outs(%y : memref<?x8xf32>)
  return
}

// -----

// A model that already returns a status keeps its own failures first.
// CHECK-LABEL: func @with_status
// CHECK-SAME: cuvil.failure_messages = ["index out of range", "an output's buffer
// CHECK: arith.cmpi ne
// CHECK: arith.select
func.func @with_status(%x: memref<?xf32> {cuvil.dim_bounds = array<i64: 0, 16>, cuvil.dim_symbols = ["n"]},
                       %y: memref<?xf32>, %s: i32) -> i32 attributes {cuvil.failure_messages = ["index out of range"]} {
  linalg.copy ins(%x : memref<?xf32>) outs(%y : memref<?xf32>)
  return %s : i32
}
