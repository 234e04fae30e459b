// RUN: cuvil-opt %s --cuvil-cuda-clone-entry | FileCheck %s
// RUN: cuvil-opt %s --cuvil-cuda-clone-entry="keep-cpu=0" | FileCheck %s --check-prefix=STUB
// RUN: cuvil-opt %s --cuvil-cuda-clone-entry="in-place=1" | FileCheck %s --check-prefix=INPLACE
// RUN: cuvil-opt %s --cuvil-cuda-clone-entry --cuvil-cuda-clone-entry | FileCheck %s --check-prefix=TWICE

// The CUDA copy of each model function: NAME__cuda, marked for the device,
// without the CPU kernel choices (its ops take the general lowering); the
// CPU function keeps them. keep-cpu=0 (--target cuda) leaves the CPU
// function a stub that returns zeros; in-place (the emulation) marks the
// function itself. A second run copies nothing again; private functions
// are not models.

// CHECK-LABEL: func.func @forward(
// CHECK-NOT: cuvil.device
// CHECK: cuvil.gemm.linear{{.*}}cuvil.kernel
// CHECK-LABEL: func.func @forward__cuda(
// CHECK-SAME: cuvil.device = "cuda"
// CHECK-NOT: cuvil.kernel
// CHECK: cuvil.gemm.linear
// CHECK-NOT: cuvil.kernel
// CHECK: return
// CHECK-NOT: helper__cuda

// STUB-LABEL: func.func @forward(
// STUB-NEXT: %[[Z:.*]] = arith.constant dense<0.000000e+00> : tensor<2x4xf32>
// STUB-NEXT: return %[[Z]]
// STUB-LABEL: func.func @forward__cuda(
// STUB: cuvil.gemm.linear

// INPLACE-LABEL: func.func @forward(
// INPLACE-SAME: cuvil.device = "cuda"
// INPLACE-NOT: cuvil.kernel
// INPLACE-NOT: __cuda

// TWICE-COUNT-1: func.func @forward__cuda(
// TWICE-NOT: forward__cuda__cuda

func.func @forward(%x: tensor<2x8xf32>, %w: tensor<4x8xf32>) -> tensor<2x4xf32> {
  %y = cuvil.gemm.linear %x, %w {cuvil.kernel = #cuvil.kernel<kernel = "linear", variant = "weight_rows", source = "heuristics", reason = "test">} : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

func.func private @helper(%x: tensor<2xf32>) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}
