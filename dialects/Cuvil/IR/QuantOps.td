//===- QuantOps.td - The cuvil.quant family --------------*- tablegen -*-===//
//
// Quantized tensors are tensors of their storage type (i8, ui8, i32) whose
// meaning is given by a #cuvil.quant (scale, zero point, per tensor or per
// channel) on the op that makes or reads them: real = (q - zero_point) *
// scale. The arithmetic is PyTorch's own (CPU, no FBGEMM), bit for bit.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_DIALECT_CUVIL_IR_QUANTOPS_TD
#define CUVIL_DIALECT_CUVIL_IR_QUANTOPS_TD

include "dialects/Cuvil/IR/CuvilBase.td"

def Cuvil_QuantStorageTensor : Cuvil_TensorOf<[I8, UI8, I32],
    "ranked tensor of i8, ui8 or i32 (quantized storage)">;

def Cuvil_QuantizeOp : Cuvil_Op<"quant.quantize", [Pure, Cuvil_Elementwise], /*inferTypes=*/0> {
  let summary = "Real values to quantized storage: clamp(zero_point + round(x / scale)).";
  let description = [{
    `torch.quantize_per_tensor` / `torch.quantize_per_channel`: with the
    float reciprocal of the scale, `q = clamp(zero_point + nearbyint(x *
    (1.0f / scale)), qmin, qmax)` in float, ties to even, as PyTorch
    computes it. Where that sum is NaN or beyond the int64 range (NaN,
    +-inf, huge values) PyTorch's conversion yields qmin on x86, and so does
    this op (QuantArithmetic.h). The result's element type is the storage:
    `i8` (qint8), `ui8` (quint8) or `i32` (qint32).

    ```mlir
    %q = cuvil.quant.quantize %x {params = #cuvil.quant<scale = [0.05], zero_point = [128]>} : tensor<4xf32> -> tensor<4xui8>
    ```
  }];
  let arguments = (ins Cuvil_FloatTensor:$input, Cuvil_QuantParamsAttr:$params);
  let results = (outs Cuvil_QuantStorageTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def Cuvil_DequantizeOp : Cuvil_Op<"quant.dequantize", [Pure, Cuvil_Elementwise], /*inferTypes=*/0> {
  let summary = "Quantized storage to real values: (q - zero_point) * scale.";
  let description = [{
    `Tensor.dequantize()`: `float(scale) * float(q - zero_point)` in float,
    as PyTorch computes it.

    ```mlir
    %x = cuvil.quant.dequantize %q {params = #cuvil.quant<scale = [0.05], zero_point = [128]>} : tensor<4xui8> -> tensor<4xf32>
    ```
  }];
  let arguments = (ins Cuvil_QuantStorageTensor:$input, Cuvil_QuantParamsAttr:$params);
  let results = (outs Cuvil_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def Cuvil_RequantizeOp : Cuvil_Op<"quant.requantize", [Pure, Cuvil_Elementwise], /*inferTypes=*/0> {
  let summary = "Quantized storage to other quantization parameters (or storage type).";
  let description = [{
    PyTorch's `requantize_val`: dequantize with `input_params`, then
    quantize with `output_params`, each as PyTorch computes it (an int32
    accumulator to int8 activations, a change of scale between layers).

    ```mlir
    %r = cuvil.quant.requantize %acc {input_params = #cuvil.quant<scale = [0.001], zero_point = [0]>, output_params = #cuvil.quant<scale = [0.05], zero_point = [0]>} : tensor<4xi32> -> tensor<4xi8>
    ```
  }];
  let arguments = (ins Cuvil_QuantStorageTensor:$input, Cuvil_QuantParamsAttr:$input_params,
                       Cuvil_QuantParamsAttr:$output_params);
  let results = (outs Cuvil_QuantStorageTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

#endif // CUVIL_DIALECT_CUVIL_IR_QUANTOPS_TD
