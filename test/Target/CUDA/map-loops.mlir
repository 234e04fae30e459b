// RUN: cuvil-opt %s --cuvil-cuda-map-loops | FileCheck %s
// RUN: cuvil-opt %s --cuvil-cuda-map-loops --gpu-kernel-outlining --cuvil-cuda-lower-launches | FileCheck %s --check-prefix=LAUNCH
// RUN: cuvil-opt %s --cuvil-cuda-map-loops="emulate=1" --cuvil-cuda-emulate-launches | FileCheck %s --check-prefix=EMULATE

// The CUDA copy of a model function, as loops on buffers: views, constants
// and index arithmetic stay on the host; each scf.parallel is a launch of
// 256-thread blocks over its iterations (the grid folded where the bounds
// are constants); a sequential loop (the mean) runs in a one-thread launch;
// the scalar it leaves, read by the next launch, passes through a device
// global of its own; so does the run-time check's status, which the
// runtime reads back (cuvil_rt_cuda_status) while the function returns 0.

memref.global "private" constant @bias : memref<8xf32> = dense<1.0>

// CHECK-LABEL: func.func @forward__cuda
// CHECK-DAG: %[[SPILL:.*]] = memref.get_global @forward__cuda_spill : memref<f32>
// CHECK-DAG: %[[STATUS:.*]] = memref.get_global @forward__cuda_spill_0 : memref<i32>
// CHECK-DAG: %[[BIAS:.*]] = memref.get_global @bias
// CHECK-DAG: %[[MEAN:.*]] = memref.view %arg2[%c32
// The first loop: 32 iterations, one block of 256 threads, each thread
// delinearizes its index and guards the tail.
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}}) threads({{.*}}) in (%{{.*}} = %c256
// CHECK: %[[LIN:.*]] = arith.addi
// CHECK: %[[IN:.*]] = arith.cmpi slt, %[[LIN]], %c32
// CHECK: scf.if %[[IN]] {
// CHECK: arith.remsi %[[LIN]], %c8
// CHECK: arith.divsi %[[LIN]], %c8
// CHECK: memref.load %[[BIAS]]
// CHECK: gpu.terminator
// The mean: one thread; its result stored for the next launch.
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %{{.*}}, {{.*}} = %{{.*}}, {{.*}} = %{{.*}}) threads
// CHECK: scf.for
// CHECK: memref.store %{{.*}}, %[[MEAN]][]
// CHECK: %[[M:.*]] = memref.load %[[MEAN]][]
// CHECK-NEXT: memref.store %[[M]], %[[SPILL]][]
// CHECK: gpu.terminator
// The second loop reads the mean back in each thread.
// CHECK: gpu.launch
// CHECK: scf.if
// CHECK-NEXT: %[[MB:.*]] = memref.load %[[SPILL]][]
// CHECK: arith.subf %{{.*}}, %[[MB]]
// The status: computed in a one-thread launch, read back by the runtime.
// CHECK: gpu.launch
// CHECK: %[[BAD:.*]] = arith.select
// CHECK-NEXT: memref.store %[[BAD]], %[[STATUS]][]
// CHECK: %[[P:.*]] = memref.extract_aligned_pointer_as_index %[[STATUS]]
// CHECK: %[[D:.*]] = call @cuvil_rt_cuda_global(%[[P]], %c4_i64)
// CHECK: call @cuvil_rt_cuda_status(%[[D]])
// CHECK: %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK: return %[[ZERO]] : i32
// CHECK: memref.global "private" @forward__cuda_spill : memref<f32> = dense<0.000000e+00>
// CHECK: memref.global "private" @forward__cuda_spill_0 : memref<i32> = dense<0>

// The emulation: each launch as loops over blocks z, y, x and threads z,
// y, x; the host reads the globals itself and returns the status.
// EMULATE-LABEL: func.func @forward__cuda
// EMULATE-DAG: %[[STATUS:.*]] = memref.get_global @forward__cuda_spill_0 : memref<i32>
// EMULATE: scf.for
// EMULATE-NEXT: scf.for
// EMULATE-NEXT: scf.for
// EMULATE-NEXT: scf.for
// EMULATE-NEXT: scf.for
// EMULATE-NEXT: scf.for %{{.*}} = %{{.*}} to %c256
// EMULATE-NOT: gpu.
// EMULATE-NOT: cuvil_rt_cuda
// EMULATE: %[[S:.*]] = memref.load %[[STATUS]][] : memref<i32>
// EMULATE-NEXT: return %[[S]] : i32

// LAUNCH-LABEL: func.func @forward__cuda
// Every buffer: allocated and aligned pointers, offset, sizes, strides (a
// 2-d one 7 slots, a 1-d one 5); the constant's device address from the
// runtime. The first kernel: 5 indices and three buffers, 24 slots.
// LAUNCH: %[[B:.*]] = memref.extract_aligned_pointer_as_index %{{.*}} : memref<8xf32>
// LAUNCH: call @cuvil_rt_cuda_global(%[[B]], %c32_i64)
// LAUNCH: %[[SLOTS:.*]] = memref.reinterpret_cast %{{.*}} to offset: [0], sizes: [1], strides: [1] : memref<24xi64> to memref<1xi64>
// LAUNCH: call @cuvil_rt_cuda_launch(%c0_i32, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[SLOTS]], %c24_i32)
// LAUNCH: call @cuvil_rt_cuda_launch(%c1_i32
// LAUNCH: call @cuvil_rt_cuda_launch(%c2_i32
// LAUNCH: call @cuvil_rt_cuda_launch(%c3_i32
// LAUNCH: call @cuvil_rt_cuda_status
// LAUNCH-NOT: gpu.launch_func
// LAUNCH: gpu.module @forward__cuda_kernel
// LAUNCH: gpu.func @cuvil_cuda_k0(%{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: memref<4x8xf32>, %{{.*}}: memref<8xf32>, %{{.*}}: memref<4x8xf32>) kernel
// LAUNCH: gpu.func @cuvil_cuda_k1
// LAUNCH: func.func private @cuvil_rt_cuda_launch(i32, i64, i64, i64, i64, i64, i64, memref<1xi64>, i32)

func.func @forward__cuda(%in: memref<4x8xf32>, %out: memref<4x8xf32>, %arena: memref<64xi8>) -> i32
    attributes {cuvil.device = "cuda"} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %bias = memref.get_global @bias : memref<8xf32>
  %sum = memref.view %arena[%c0][] : memref<64xi8> to memref<4x8xf32>
  %c32 = arith.constant 32 : index
  %mean = memref.view %arena[%c32][] : memref<64xi8> to memref<f32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c8) step (%c1, %c1) {
    %x = memref.load %in[%i, %j] : memref<4x8xf32>
    %b = memref.load %bias[%j] : memref<8xf32>
    %y = arith.addf %x, %b : f32
    memref.store %y, %sum[%i, %j] : memref<4x8xf32>
    scf.reduce
  }
  %total = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> f32 {
    %row = scf.for %j = %c0 to %c8 step %c1 iter_args(%r = %acc) -> f32 {
      %x = memref.load %sum[%i, %j] : memref<4x8xf32>
      %n = arith.addf %r, %x : f32
      scf.yield %n : f32
    }
    scf.yield %row : f32
  }
  memref.store %total, %mean[] : memref<f32>
  %m = memref.load %mean[] : memref<f32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c8) step (%c1, %c1) {
    %x = memref.load %sum[%i, %j] : memref<4x8xf32>
    %y = arith.subf %x, %m : f32
    memref.store %y, %out[%i, %j] : memref<4x8xf32>
    scf.reduce
  }
  %nan = arith.cmpf uno, %m, %m : f32
  %c1_i32 = arith.constant 1 : i32
  %c0_i32 = arith.constant 0 : i32
  %status = arith.select %nan, %c1_i32, %c0_i32 : i32
  return %status : i32
}
