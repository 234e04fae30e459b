//===- NpuOps.td - The cuvil_npu dialect -------------------*- tablegen -*-===//
//
// The virtual NPU at two levels: `cuvil_npu.segment` (a part of the graph
// the partitioner gave the NPU, still cuvil ops) and `cuvil_npu.program`
// (the same part scheduled: the command stream of targets/NPU/ARCHITECTURE.md,
// one op per command, encoded as runtime/include/cuvil/npu_isa.h says).
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_TARGETS_NPU_IR_NPUOPS_TD
#define CUVIL_TARGETS_NPU_IR_NPUOPS_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/RegionKindInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Npu_Dialect : Dialect {
  let name = "cuvil_npu";
  let cppNamespace = "::mlir::cuvil::npu";
  let summary = "Cuvil's virtual NPU: partitioned segments and their command streams.";
  let description = [{
    The NPU of targets/NPU/ARCHITECTURE.md: a 2-D MAC array, three on-chip
    SRAMs (weights, activations, int32 accumulators), two DMA units (LOAD
    from DRAM, STORE to DRAM) and a vector unit, driven by a command stream.
    `cuvil_npu.segment` holds the cuvil ops of one part of the model that
    runs on the NPU; `cuvil_npu.program` holds its commands, in stream order,
    with the machine configuration they were scheduled for. Addresses and
    sizes are bytes; on-chip addresses start at 0 in each SRAM.
  }];
}

class Npu_Op<string mnemonic, list<Trait> traits = []> : Op<Npu_Dialect, mnemonic, traits>;

def Npu_SegmentOp : Npu_Op<"segment", [IsolatedFromAbove, SingleBlockImplicitTerminator<"YieldOp">]> {
  let summary = "A part of the model that runs on the NPU, before scheduling.";
  let description = [{
    The region's block takes the segment's inputs and yields its outputs;
    it holds the cuvil ops the partitioner placed on the NPU (int8
    convolutions, linear layers, sums and pooling of static shape, and the
    views between them), in their original order.
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$inputs, StrAttr:$sym_name);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$sym_name `(` $inputs `)` attr-dict-with-keyword `:` functional-type($inputs, $results) $body";
  let hasVerifier = 1;
}

def Npu_YieldOp : Npu_Op<"yield", [Pure, Terminator, HasParent<"SegmentOp">]> {
  let summary = "The outputs of a segment.";
  let arguments = (ins Variadic<AnyRankedTensor>:$values);
  let builders = [OpBuilder<(ins), [{ /* no outputs */ }]>];
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

def Npu_ProgramOp : Npu_Op<"program", [IsolatedFromAbove, NoTerminator, SingleBlock]> {
  let summary = "A scheduled segment: the NPU's command stream.";
  let description = [{
    Runs its commands (the ops of its region, in order) on the NPU with the
    inputs as DRAM regions 0..I-1 and the results as regions I..I+O-1,
    the program's constants (`constants`: packed weights and epilogue
    tables) as region I+O and a scratch buffer of `scratch_bytes` as region
    I+O+1. `config` is the machine (cuvil_npu_config's 16 words: array_k,
    array_n, wbuf/abuf/acc bytes, their banks, DRAM bytes per cycle, DRAM
    latency, burst, vector lanes, clock MHz, alignment, 2 reserved).
    `layers` names the model's ops the commands belong to (their `layer`),
    `layer_kinds` their kinds and `layer_macs` their useful
    multiply-accumulates.
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$inputs, StrAttr:$sym_name,
                       DenseI32ArrayAttr:$config, ElementsAttr:$constants, I64Attr:$scratch_bytes,
                       StrArrayAttr:$layers, StrArrayAttr:$layer_kinds, DenseI64ArrayAttr:$layer_macs);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$sym_name `(` $inputs `)` attr-dict-with-keyword `:` functional-type($inputs, $results) $body";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The number of DRAM regions the commands may name.
    int64_t numRegions() { return getInputs().size() + getNumResults() + 2; }
    int64_t constantsRegion() { return getInputs().size() + getNumResults(); }
    int64_t scratchRegion() { return constantsRegion() + 1; }
  }];
}

// Every command: `wait` = for each unit (load, store, mac, vec), the number
// of that unit's commands (from the program's start) that must have
// completed before it starts; `layer` = index into the program's layers, -1
// for none.
class Npu_CommandOp<string mnemonic, dag fields> : Npu_Op<mnemonic, [HasParent<"ProgramOp">]> {
  let arguments = !con((ins DenseI32ArrayAttr:$wait, I32Attr:$layer), fields);
  let assemblyFormat = "attr-dict";
  let hasVerifier = 1;
}

def Npu_LoadOp : Npu_CommandOp<"load", (ins I32Attr:$region, I32Attr:$dram_offset, StrAttr:$space,
    I32Attr:$sram_addr, DenseI32ArrayAttr:$shape, DenseI32ArrayAttr:$dram_strides,
    DenseI32ArrayAttr:$sram_strides)> {
  let summary = "DMA from DRAM into the weight or activation buffer (LOAD unit).";
  let description = [{
    `shape` = [planes, rows, bytes per row]; `dram_strides` and
    `sram_strides` = [plane stride, row stride] in bytes. `space` is
    "wbuf" or "abuf".
  }];
}

def Npu_StoreOp : Npu_CommandOp<"store", (ins I32Attr:$region, I32Attr:$dram_offset, StrAttr:$space,
    I32Attr:$sram_addr, DenseI32ArrayAttr:$shape, DenseI32ArrayAttr:$dram_strides,
    DenseI32ArrayAttr:$sram_strides)> {
  let summary = "DMA from the activation buffer to DRAM (STORE unit).";
}

def Npu_MatmulOp : Npu_CommandOp<"matmul", (ins StrAttr:$mode, I32Attr:$in_addr,
    DenseI32ArrayAttr:$in_shape, I32Attr:$w_addr, I32Attr:$acc_addr, DenseI32ArrayAttr:$out_shape,
    DenseI32ArrayAttr:$kernel, DenseI32ArrayAttr:$stride, DenseI32ArrayAttr:$dilation,
    DenseI32ArrayAttr:$pad, I32Attr:$pad_value, UnitAttr:$accumulate, UnitAttr:$fp16)> {
  let summary = "A tile on the MAC array: u8 x s8 into int32 sums, or f16 x f16 into f32 sums.";
  let description = [{
    `mode`: "conv" (input [ci][ih][iw] in ABUF, weights [ci*kh*kw][co] in
    WBUF), "depthwise" (weights [kh*kw][c], ci == co) or "gemm" (input
    [m][k], weights [k][n]: in_shape [k, m, 1], out_shape [n, m, 1]).
    `in_shape` = [ci, ih, iw], `out_shape` = [co, oh, ow]; the sums go to
    ACC as [oh*ow][co] int32. `pad` = [top, left]: the window of output
    (y, x) starts at input row y*sh - top, column x*sw - left of the tile;
    taps outside the tile read `pad_value` (the input's zero point).
    `fp16`: the array's FP16 mode (half rate): input and weights are
    binary16 (2 bytes each), `pad_value` a binary16's bits, and the sums
    f32, added in the reduction's order (npu_isa.h).
  }];
}

def Npu_RequantOp : Npu_CommandOp<"requant", (ins StrAttr:$mode, I32Attr:$acc_addr, I32Attr:$pixels,
    I32Attr:$channels, I32Attr:$table_addr, I32Attr:$out_addr, StrAttr:$layout, I32Attr:$out_plane,
    I32Attr:$y_zero, I32Attr:$y_min, I32Attr:$y_max, UnitAttr:$relu, UnitAttr:$out_f16)> {
  let summary = "Sums to outputs on the vector unit: the requantize epilogue.";
  let description = [{
    `mode`: "qnnpack", "onednn", "f32", "f32_onednn" or "float" (npu_isa.h).
    The table in WBUF holds {offset, multiplier, bias} per channel. "float"
    takes an FP16 product's f32 sums: plus the bias, then `relu`, written
    as f32 or (`out_f16`) as binary16. `layout`
    "planes" writes out[c * out_plane + p], "rows" writes out[p * channels + c].
  }];
}

def Npu_AddOp : Npu_CommandOp<"add", (ins StrAttr:$mode, I32Attr:$a_addr, I32Attr:$b_addr,
    I32Attr:$out_addr, I32Attr:$count, UnitAttr:$relu, DenseI32ArrayAttr:$params)> {
  let summary = "A quantized element-wise sum on the vector unit.";
  let description = [{
    `mode` "float" or "qnnpack"; `params` = [sa bits, za, sb bits, zb,
    1/sy bits, y_zero, y_min, y_max, a multiplier, b multiplier, shift,
    zero-point product, remainder mask, remainder threshold] (npu_isa.h).
  }];
}

def Npu_PoolOp : Npu_CommandOp<"pool", (ins StrAttr:$mode, I32Attr:$in_addr,
    DenseI32ArrayAttr:$in_shape, I32Attr:$out_addr, DenseI32ArrayAttr:$out_shape,
    DenseI32ArrayAttr:$kernel, DenseI32ArrayAttr:$stride, DenseI32ArrayAttr:$dilation,
    DenseI32ArrayAttr:$pad, I32Attr:$x_zero, I32Attr:$y_zero, I32Attr:$y_min, I32Attr:$y_max,
    F32Attr:$ratio, UnitAttr:$count_include_pad, UnitAttr:$round_first)> {
  let summary = "Max or average pooling of whole channel planes on the vector unit.";
  let description = [{
    `mode`: "max", "avg" or "avg_qnnpack"; `in_shape` = [c, ih, iw],
    `out_shape` = [oh, ow].
  }];
}

def Npu_BarrierOp : Npu_CommandOp<"barrier", (ins)> {
  let summary = "Every later command starts after every earlier one completed.";
}

#endif // CUVIL_TARGETS_NPU_IR_NPUOPS_TD
