//===- Passes.td - NPU code generation passes --------------*- tablegen -*-===//
#ifndef CUVIL_TARGETS_NPU_PASSES_TD
#define CUVIL_TARGETS_NPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def NpuPartitionPass : Pass<"cuvil-npu-partition", "::mlir::ModuleOp"> {
  let summary = "Places the ops the NPU runs in cuvil_npu.segment ops; the rest stays on the host CPU.";
  let description = [{
    Walks each function's ops in order and gives the NPU every run of ops
    it supports (int8 convolutions, depthwise convolutions and linear
    layers with constant weights, quantized sums, max and average pooling
    of 8-bit tensors, static shapes, tiles that fit the configuration's
    SRAM; views between them), outlined into a `cuvil_npu.segment` whose
    inputs and outputs are the transfers at its boundaries. Every other op
    stays on the host, with the reason: an op the NPU lacks, a float or
    FP16 op, a dynamic shape, weights that are not constants, an op inside
    control flow, a tile that does not fit. `report=FILE` writes the
    placement of every op as JSON (`--npu-partition-report`); `remarks`
    emits a remark at each op left on the host.
  }];
  let options = [
    Option<"config", "config", "std::string", "\"npu-32x32\"", "the NPU configuration (ARCHITECTURE.md)">,
    Option<"report", "report", "std::string", "\"\"", "write the placement of every op here (JSON)">,
    Option<"remarks", "remarks", "bool", "false", "a remark at each op left on the host, with the reason">,
  ];
  let dependentDialects = ["::mlir::cuvil::npu::NpuDialect"];
}

def NpuSchedulePass : Pass<"cuvil-npu-schedule", "::mlir::ModuleOp"> {
  let summary = "Schedules each cuvil_npu.segment into a cuvil_npu.program (the command stream).";
  let description = [{
    Places the segment's tensors in DRAM (inputs and outputs are the call's
    buffers, intermediates a scratch buffer) and each op's weights and
    epilogue tables in the program's constants, then tiles every op to the
    SRAM sizes: convolutions and linear layers by output-channel tiles (the
    weights of one tile in half the weight buffer) and bands of output rows
    (their input rows, halo included, in a quarter of the activation
    buffer, their int32 sums in half the accumulator buffer); the loop
    order keeps whichever operand would cost more DMA to fetch again
    resident (weight reuse). Tiles alternate between two halves of each
    buffer (double buffering: the load of tile i+1 and the store of tile
    i-1 run while tile i computes), and each command waits exactly for the
    commands whose bytes it touches (a dependency tracker over SRAM and
    DRAM ranges), so the stream is free of races by construction.
    `double-buffering=false` uses one half only, for comparison.
  }];
  let options = [
    Option<"config", "config", "std::string", "\"npu-32x32\"", "the NPU configuration (ARCHITECTURE.md)">,
    Option<"doubleBuffering", "double-buffering", "bool", "true", "alternate tiles between buffer halves">,
  ];
  let dependentDialects = ["::mlir::cuvil::npu::NpuDialect"];
}

def NpuLowerProgramsPass : Pass<"cuvil-npu-lower-programs", "::mlir::ModuleOp"> {
  let summary = "Turns each cuvil_npu.program into its binary command stream and a runtime call.";
  let description = [{
    Serializes the program (runtime/include/cuvil/npu_isa.h: header,
    commands, regions, layers, constants, strings) into a constant the
    weights object holds, and replaces the op with a call of
    `cuvil_rt_npu_segment_N(params, program, scratch, buffers...)` (N: its
    inputs and outputs), which runs it on the runtime's NPU backend (the
    simulator, runtime/npu). Runs on tensors, before bufferization; the
    scratch buffer is placed in the arena like any intermediate.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect", "::mlir::bufferization::BufferizationDialect",
                           "::mlir::memref::MemRefDialect", "::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
}

#endif // CUVIL_TARGETS_NPU_PASSES_TD
