// REQUIRES: ptxas
// (libdevice, for the exp, comes with the CUDA toolkit that has ptxas)
// RUN: cuvil-opt %s --split-input-file --cuvil-cuda-serialize-kernels="archs=sm_90,sm_80 ptxas=none" --verify-diagnostics | FileCheck %s
// RUN: not cuvil-opt %s --split-input-file --cuvil-cuda-serialize-kernels="archs=sm_70 ptxas=none" 2>&1 | FileCheck %s --check-prefix=ARCH
// ARCH: archs: 'sm_70' is not a list of sm_80, sm_86, sm_89, sm_90

// The kernels to PTX for each architecture (sorted; without ptxas every
// architecture's PTX is kept), the gpu.modules gone, the kernels named in
// order, exp from libdevice.
// CHECK: module attributes {cuvil.cuda = {cpu_fallback = false, images = [{data = "{{.*}}.target sm_80{{.*}}.entry cuvil_cuda_k0{{.*}}", kind = "ptx", sm = 80 : i32}, {data = "{{.*}}.target sm_90{{.*}}", kind = "ptx", sm = 90 : i32}], kernels = ["cuvil_cuda_k0", "cuvil_cuda_k1"]}}
// CHECK-NOT: gpu.module
module attributes {gpu.container_module} {
  gpu.module @a {
    gpu.func @cuvil_cuda_k0(%n: index, %p: memref<16xf32>) kernel attributes {cuvil.param_slots = 6 : i64} {
      %t = gpu.thread_id x
      %x = memref.load %p[%t] : memref<16xf32>
      %y = math.exp %x : f32
      memref.store %y, %p[%t] : memref<16xf32>
      gpu.return
    }
  }
  gpu.module @b {
    gpu.func @cuvil_cuda_k1(%p: memref<4xf32>) kernel {
      gpu.return
    }
  }
}

// -----

// A kernel whose launches lay out other parameters than the lowering's.
module attributes {gpu.container_module} {
  gpu.module @a {
    // expected-error @+1 {{kernel cuvil_cuda_k0 takes 6 parameters after the NVVM lowering, its launches pass 5 8-byte slots}}
    gpu.func @cuvil_cuda_k0(%n: index, %p: memref<16xf32>) kernel attributes {cuvil.param_slots = 5 : i64} {
      gpu.return
    }
  }
}
