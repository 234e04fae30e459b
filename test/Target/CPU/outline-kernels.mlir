// RUN: cuvil-opt %s --cuvil-outline-kernels | FileCheck %s

// Two loop nests with the same code over different buffers become one
// kernel called twice, named by its code; the constants are cloned into it,
// the buffers passed. A buffer of run-time size (no bare pointer carries
// its sizes) crosses as its base, a memref<1xf32> at the same address, and
// its sizes, and the kernel rebuilds it; one with a non-identity layout
// stays inline. Parallel bodies are named by their code.
//       CHECK: func.func private @[[$P:cuvil_parallel_[0-9a-f]{16}]]
// CHECK-LABEL: func.func @model
//       CHECK:   %[[G:.*]] = memref.get_global @w
//       CHECK:   call @[[K:cuvil_kernel_[0-9a-f]{16}]](%arg0, %[[G]], %arg1)
//       CHECK:   call @[[K]](%arg1, %[[G]], %arg2)
//       CHECK:   %[[BASE:.*]] = memref.reinterpret_cast %arg3 to offset: [0], sizes: [1], strides: [1] : memref<?xf32> to memref<1xf32>
//       CHECK:   %[[N:.*]] = memref.dim %arg3, %{{.*}} : memref<?xf32>
//       CHECK:   call @[[D:cuvil_kernel_[0-9a-f]{16}]](%{{.*}}, %[[BASE]], %[[N]])
//       CHECK:   scf.for
//       CHECK:     memref.store {{.*}} : memref<?xf32, strided<[2]>>
//       CHECK:   constant @[[$P]]
//   CHECK-NOT:   scf.parallel
//       CHECK:   return
//       CHECK: func.func private @[[K]](%{{.*}}: memref<8xf32>, %{{.*}}: memref<8xf32>, %{{.*}}: memref<8xf32>)
//       CHECK:   arith.constant 8 : index
//       CHECK:   scf.parallel
//       CHECK:   return
//       CHECK: func.func private @[[D]](%{{.*}}: index, %[[B:.*]]: memref<1xf32>, %[[S:.*]]: index)
//       CHECK:   %[[V:.*]] = memref.reinterpret_cast %[[B]] to offset: [0], sizes: [%[[S]]], strides: [1]
//       CHECK:   %[[M:.*]] = memref.cast %[[V]] : memref<?xf32, strided<[1]>> to memref<?xf32>
//       CHECK:   scf.for
//       CHECK:     memref.store {{.*}}, %[[M]]
//   CHECK-NOT: func.func private @cuvil_kernel
memref.global "private" constant @w : memref<8xf32> = dense<1.0>
func.func private @__cuvil_parallel_0(%closure: memref<64xi64>, %b: i64, %e: i64) {
  return
}
func.func @model(%x: memref<8xf32>, %y: memref<8xf32>, %z: memref<8xf32>, %d: memref<?xf32>, %e: memref<?xf32, strided<[2]>>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %w = memref.get_global @w : memref<8xf32>
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %a = memref.load %x[%i] : memref<8xf32>
    %b = memref.load %w[%i] : memref<8xf32>
    %s = arith.addf %a, %b : f32
    memref.store %s, %y[%i] : memref<8xf32>
  }
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %a = memref.load %y[%i] : memref<8xf32>
    %b = memref.load %w[%i] : memref<8xf32>
    %s = arith.addf %a, %b : f32
    memref.store %s, %z[%i] : memref<8xf32>
  }
  %one = arith.constant 1.0 : f32
  %n = memref.dim %d, %c0 : memref<?xf32>
  scf.for %i = %c0 to %n step %c1 {
    memref.store %one, %d[%i] : memref<?xf32>
  }
  scf.for %i = %c0 to %c8 step %c1 {
    memref.store %one, %e[%i] : memref<?xf32, strided<[2]>>
  }
  %f = constant @__cuvil_parallel_0 : (memref<64xi64>, i64, i64) -> ()
  return
}
