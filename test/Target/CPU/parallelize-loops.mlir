// RUN: cuvil-opt %s --split-input-file --cuvil-parallelize-loops='min-work=64' | FileCheck %s

// An outer parallel loop with enough work becomes a call of the runtime
// with an outlined body over [begin, end) of its first dimension. The
// buffers it uses travel in the closure as their descriptors' aligned
// pointers, the global's too (a body naming it would be another function
// for every layer); the constant is recreated in the body.
// CHECK-LABEL: func.func @scale
//       CHECK:   %[[CL:.*]] = memref.alloca() : memref<64xi64>
//       CHECK:   %[[D0:.*]] = builtin.unrealized_conversion_cast %arg0 : memref<16x8xf32> to !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>
//       CHECK:   %[[P0:.*]] = llvm.extractvalue %[[D0]][1]
//       CHECK:   %[[I0:.*]] = llvm.ptrtoint %[[P0]] : !llvm.ptr to i64
//       CHECK:   memref.store %[[I0]], %[[CL]][%c0{{.*}}]
//       CHECK:   memref.store %{{.*}}, %[[CL]][%c1{{.*}}]
//       CHECK:   memref.store %{{.*}}, %[[CL]][%c2{{.*}}]
//       CHECK:   %[[F:.*]] = constant @__cuvil_parallel_0
//       CHECK:   call @cuvil_rt_parallel_for_current(%c16_i64, %[[F]], %[[CL]])
//   CHECK-NOT:   scf.parallel
//       CHECK: func.func private @__cuvil_parallel_0(%[[C:.*]]: memref<64xi64>, %[[B:.*]]: i64, %[[E:.*]]: i64)
//   CHECK-NOT:   memref.get_global
//       CHECK:   arith.constant 2.000000e+00 : f32
//       CHECK:   memref.load %[[C]]
//       CHECK:   llvm.inttoptr
//       CHECK:   llvm.insertvalue
//       CHECK:   builtin.unrealized_conversion_cast {{.*}} to memref<16x8xf32>
//       CHECK:   %[[LO:.*]] = arith.index_cast %[[B]]
//       CHECK:   %[[HI:.*]] = arith.index_cast %[[E]]
//       CHECK:   scf.parallel (%{{.*}}, %{{.*}}) = (%{{.*}}, %{{.*}}) to (%{{.*}}, %{{.*}})
//       CHECK:     arith.mulf
memref.global "private" constant @bias : memref<8xf32> = dense<1.0>
func.func @scale(%x: memref<16x8xf32>, %y: memref<16x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %two = arith.constant 2.0 : f32
  %b = memref.get_global @bias : memref<8xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c16, %c8) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<16x8xf32>
    %w = memref.load %b[%j] : memref<8xf32>
    %m = arith.mulf %v, %two : f32
    %s = arith.addf %m, %w : f32
    memref.store %s, %y[%i, %j] : memref<16x8xf32>
    scf.reduce
  }
  return
}

// -----

// Too little work (4 iterations x a few ops < 64): stays where it is.
// CHECK-LABEL: func.func @tiny
//       CHECK:   scf.parallel
//   CHECK-NOT:   call
func.func @tiny(%x: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %v = memref.load %x[%i] : memref<4xf32>
    memref.store %v, %x[%i] : memref<4xf32>
    scf.reduce
  }
  return
}

// -----

// A bound known only at run time: stays serial.
// CHECK-LABEL: func.func @dynamic_bound
//       CHECK:   scf.parallel
//   CHECK-NOT:   call
func.func @dynamic_bound(%x: memref<1024xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = memref.load %x[%i] : memref<1024xf32>
    %w = arith.addf %v, %v : f32
    %u = arith.mulf %w, %w : f32
    memref.store %u, %x[%i] : memref<1024xf32>
    scf.reduce
  }
  return
}

// -----

// A batch of one: the first dimension has a single iteration, so the
// channels (the first dimension with more than one) are split.
// CHECK-LABEL: func.func @batch_of_one
//       CHECK:   call @cuvil_rt_parallel_for_current(%c6_i64,
//       CHECK: func.func private @__cuvil_parallel_0
//       CHECK:   %[[LO:.*]] = arith.index_cast %arg1
//       CHECK:   %[[HI:.*]] = arith.index_cast %arg2
//       CHECK:   %[[B:.*]] = arith.addi %{{.*}}, %{{.*}}
//       CHECK:   %[[E:.*]] = arith.minsi
//       CHECK:   scf.parallel (%{{.*}}, %{{.*}}, %{{.*}}) = (%c0{{.*}}, %[[B]], %c0{{.*}}) to (%c1{{.*}}, %[[E]], %c8{{.*}})
func.func @batch_of_one(%x: memref<1x6x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %c8 = arith.constant 8 : index
  scf.parallel (%n, %c, %i) = (%c0, %c0, %c0) to (%c1, %c6, %c8) step (%c1, %c1, %c1) {
    %v = memref.load %x[%n, %c, %i] : memref<1x6x8xf32>
    %m = arith.mulf %v, %v : f32
    memref.store %m, %x[%n, %c, %i] : memref<1x6x8xf32>
    scf.reduce
  }
  return
}
