// cuvil-opt's cuvil-compile pipeline is the driver's (buildCompilePipeline):
// the graph pipeline, the target's kernel choice (the module marked as at
// stage "kernels"), the lowering; with pass-pipeline options.
// RUN: cuvil-opt %s --cuvil-compile="target=x86_64 stop-after=graph" | FileCheck %s --check-prefix=GRAPH
// RUN: cuvil-opt %s --cuvil-compile="target=x86_64 stop-after=kernels" | FileCheck %s --check-prefix=KERNELS
// RUN: cuvil-opt %s --cuvil-compile="target=x86_64" | FileCheck %s --check-prefix=LLVM
// RUN: cuvil-opt %s --cuvil-compile="target=x86_64 stop-after=graph disable=fusion" | FileCheck %s --check-prefix=NOFUSE
// RUN: not cuvil-opt %s --cuvil-compile="target=riscv" 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not cuvil-opt %s --cuvil-compile="stop-after=asm" 2>&1 | FileCheck %s --check-prefix=STAGE

// GRAPH-NOT: cuvil.compile_stage
// GRAPH: cuvil.fused.group
// GRAPH-NOT: cuvil.kernel =

// KERNELS: module attributes {cuvil.compile_stage = "kernels"}
// KERNELS: cuvil.gemm.linear {{.*}}cuvil.kernel = #cuvil.kernel<kernel = "linear"

// LLVM: llvm.func @forward(
// LLVM: llvm.call @cuvil_rt_linear_f32

// NOFUSE-NOT: cuvil.fused.group

// UNKNOWN: error: cuvil-compile: unknown target 'riscv' (registered: aarch64, cuda, npu, x86_64; see --list-targets)
// STAGE: error: cuvil-compile: stop-after must be graph, kernels or llvm, got 'asm'

func.func @forward(%x: tensor<4x16xf32>) -> tensor<4x8xf32> {
  %w = cuvil.constant dense<0.5> : tensor<8x16xf32>
  %b = cuvil.constant dense<0.25> : tensor<8xf32>
  %0 = cuvil.gemm.linear %x, %w, %b : (tensor<4x16xf32>, tensor<8x16xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = cuvil.act.relu %0 : tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}
