// RUN: cuvil-opt %s --cuvil-cuda-map-loops | FileCheck %s
// RUN: cuvil-opt %s --cuvil-cuda-map-loops="emulate=1" | FileCheck %s --check-prefix=EMULATE

// A kernel of the CPU runtime (here the sort) runs on the host between
// launches: its buffers are copied from the device before it and back
// after; the C library's math in device code becomes libdevice's. The
// emulation keeps both as they are.

func.func private @cuvil_rt_sort_f32(memref<8xf32>, memref<8xf32>)
func.func private @hypotf(f32, f32) -> f32

// CHECK-LABEL: func.func @forward__cuda
// CHECK: gpu.launch
// CHECK: func.call @__nv_hypotf
// CHECK: gpu.terminator
// CHECK: %[[IN:.*]] = memref.alloc() : memref<8xf32>
// CHECK: %[[INP:.*]] = memref.extract_aligned_pointer_as_index %[[IN]]
// CHECK: %[[INDEV:.*]] = memref.extract_aligned_pointer_as_index %arg1
// CHECK: call @cuvil_rt_cuda_read(%[[INDEV]], %[[INP]], %c32_i64)
// CHECK: %[[OUT:.*]] = memref.alloc() : memref<8xf32>
// CHECK: call @cuvil_rt_cuda_read
// CHECK: call @cuvil_rt_sort_f32(%[[IN]], %[[OUT]])
// CHECK: call @cuvil_rt_cuda_write(%[[INP]], %[[INDEV]], %c32_i64)
// CHECK: memref.dealloc %[[IN]]
// CHECK: call @cuvil_rt_cuda_write
// CHECK: memref.dealloc %[[OUT]]
// CHECK: func.func private @__nv_hypotf(f32, f32) -> f32

// EMULATE-LABEL: func.func @forward__cuda
// EMULATE: func.call @hypotf
// EMULATE-NOT: cuvil_rt_cuda
// EMULATE: call @cuvil_rt_sort_f32(%arg1, %arg2)
func.func @forward__cuda(%x: memref<8xf32>, %mid: memref<8xf32>, %out: memref<8xf32>) attributes {cuvil.device = "cuda"} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %v = memref.load %x[%i] : memref<8xf32>
    %h = func.call @hypotf(%v, %v) : (f32, f32) -> f32
    memref.store %h, %mid[%i] : memref<8xf32>
    scf.reduce
  }
  func.call @cuvil_rt_sort_f32(%mid, %out) : (memref<8xf32>, memref<8xf32>) -> ()
  return
}
