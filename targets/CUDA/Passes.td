//===- Passes.td - CUDA code generation passes -------------*- tablegen -*-===//
#ifndef CUVIL_TARGETS_CUDA_PASSES_TD
#define CUVIL_TARGETS_CUDA_PASSES_TD

include "mlir/Pass/PassBase.td"

def CudaCloneEntryPass : Pass<"cuvil-cuda-clone-entry", "::mlir::ModuleOp"> {
  let summary = "Copies each model function as the CUDA one (`NAME__cuda`, marked cuvil.device = cuda).";
  let description = [{
    The library keeps its CPU code (the fallback of `--target x86_64,cuda`)
    and gains a copy of the model function that the CUDA passes turn into
    host code launching kernels. The copy drops the CPU kernel choices
    (`#cuvil.kernel`): its convolutions, linear layers and matrix products
    take the general lowering to loops, which become GPU threads. Runs
    after the kernel choice, before the CPU lowering. `in-place` marks the
    model function itself instead (the emulation: its launches then run as
    loops on the CPU).
  }];
  let options = [
    Option<"inPlace", "in-place", "bool", "false", "mark the model function itself, no copy (emulation)">,
    Option<"keepCpu", "keep-cpu", "bool", "true", "keep the model's CPU code (x86_64,cuda); without it (cuda) the CPU function is a stub the runtime never calls, so neither its code nor its packed weights are in the library">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def CudaMapLoopsPass : Pass<"cuvil-cuda-map-loops", "::mlir::ModuleOp"> {
  let summary = "Turns the loops of each CUDA function into gpu.launch ops: parallel loops one thread per iteration.";
  let description = [{
    Works on functions marked cuvil.device = "cuda", after the linalg ops
    became loops on buffers. Ops stay on the host when they only compute
    addresses or sizes (views of buffers, constants, index arithmetic on
    host values); everything else runs on the device. Each top-level
    `scf.parallel` becomes a launch of `block-size` threads per block over
    its iterations (linearized, each thread delinearizes its own); other
    device ops (sequential loops, branches on tensor data, scalar loads)
    run in a one-thread launch together with the device ops that use their
    values. A value computed on the device that host code needs (a status,
    a size) is an error naming the op.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", "256", "threads per block of a parallel loop's launch">,
    Option<"emulate", "emulate", "bool", "false", "the host reads device globals directly (the launches are to run as loops on the CPU: cuvil-cuda-emulate-launches)">,
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect", "::mlir::arith::ArithDialect", "::mlir::scf::SCFDialect"];
}

def CudaEmulateLaunchesPass : Pass<"cuvil-cuda-emulate-launches", "::mlir::ModuleOp"> {
  let summary = "Runs each gpu.launch as loops over its blocks and threads on the CPU (tests the CUDA lowering without a GPU).";
  let description = [{
    A kernel of cuvil-cuda-map-loops has no shared memory and no barriers:
    its threads are independent, so running them one after the other is
    one of the schedules a GPU may take. With `--target cuda
    --target-option emulate=1` the model's own function goes through
    cuvil-cuda-map-loops (`emulate`) and this pass, and the library runs
    on the CPU: the import tests compare it with PyTorch, which checks the
    grouping into launches, the grids, each thread's indices and the
    values passed between launches and to the host.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect", "::mlir::arith::ArithDialect"];
}

def CudaLowerLaunchesPass : Pass<"cuvil-cuda-lower-launches", "::mlir::ModuleOp"> {
  let summary = "Replaces gpu.launch_func with calls of the runtime's cuvil_rt_cuda_launch, kernels numbered.";
  let description = [{
    Numbers every kernel (`gpu.func` of the outlined `gpu.module`s) in
    order and renames it `cuvil_cuda_kN`, then writes each launch as a call
    `cuvil_rt_cuda_launch(N, grid, block, params, count)`: the params are
    8-byte slots in the order the NVVM lowering expands the kernel's
    arguments (a buffer as its allocated and aligned pointers, offset,
    sizes and strides; a scalar in the slot's low bytes). Buffers that are
    the library's constants (weights) get the device address the runtime
    gives for them (`cuvil_rt_cuda_global`).
  }];
  let dependentDialects = ["::mlir::func::FuncDialect", "::mlir::memref::MemRefDialect", "::mlir::arith::ArithDialect"];
}

def CudaSerializeKernelsPass : Pass<"cuvil-cuda-serialize-kernels", "::mlir::ModuleOp"> {
  let summary = "Compiles the gpu.modules to PTX (LLVM's NVPTX back end) and cubins (ptxas), as the module's cuvil.cuda attribute.";
  let description = [{
    Lowers every kernel to NVVM (`convert-gpu-to-nvvm`, 64-bit indices),
    links the kernels into one LLVM module with libdevice (the math
    functions; found under the CUDA toolkit), and generates PTX for each
    architecture of `archs`. Where `ptxas` is found (`ptxas=PATH`, else
    PATH, CUDA_PATH and /usr/local/cuda/bin) each architecture's PTX is
    assembled into a cubin, which also checks it; a PTX that ptxas refuses
    is an error with its message. The module attribute `cuvil.cuda` holds
    the kernels' names and the images (kind, architecture, bytes): the
    cubins and the PTX of the newest architecture (for the driver to
    compile on newer devices). The gpu.modules are removed.
  }];
  let options = [
    Option<"archs", "archs", "std::string", "\"sm_80,sm_90\"", "the architectures, comma-separated (sm_80, sm_86, sm_89, sm_90)">,
    Option<"ptxas", "ptxas", "std::string", "\"\"", "the ptxas to assemble and check the PTX with (default: found; none: skipped)">,
    Option<"requirePtxas", "require-ptxas", "bool", "false", "fail when no ptxas is found instead of embedding PTX only">,
    Option<"keepPtx", "keep-ptx", "bool", "false", "embed the PTX of every architecture, not only the newest's">,
    Option<"cpuFallback", "cpu-fallback", "bool", "false", "the library's CPU code runs where no suitable device is (--target x86_64,cuda)">,
  ];
  let dependentDialects = ["::mlir::NVVM::NVVMDialect", "::mlir::LLVM::LLVMDialect", "::mlir::cf::ControlFlowDialect",
                           "::mlir::gpu::GPUDialect", "::mlir::memref::MemRefDialect", "::mlir::arith::ArithDialect"];
}

#endif // CUVIL_TARGETS_CUDA_PASSES_TD
