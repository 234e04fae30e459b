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
    as PyTorch computes it. `fused` (per tensor) is the dequantization of
    PyTorch's vectorized x86 kernels that compute in float (quantized
    hardswish, sigmoid, tanh, leaky_relu, elu on the onednn engine): `fma(
    float(scale), float(q), float(scale) * float(-zero_point))`, which
    rounds twice and differs in the last bit for some values.

    ```mlir
    %x = cuvil.quant.dequantize %q {params = #cuvil.quant<scale = [0.05], zero_point = [128]>} : tensor<4xui8> -> tensor<4xf32>
    ```
  }];
  let arguments = (ins Cuvil_QuantStorageTensor:$input, Cuvil_QuantParamsAttr:$params, UnitAttr:$fused);
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

def Cuvil_QuantLinearOp : Cuvil_Op<"quant.linear", [Pure], /*inferTypes=*/0> {
  let summary = "A quantized linear layer: int32 accumulation, then a requantize epilogue.";
  let description = [{
    `torch.ao.nn.quantized.Linear` as PyTorch's QNNPACK engine computes it:
    `acc[m][n] = sum_k (x[m][k] - zx) * (w[n][k] - zw[n])` in int32; the
    float bias quantized to int32 with scale `sx * sw[n]` (as `quantize`
    does, zero point 0) and added; then `y = clamp(zy + nearbyint(float(acc)
    * (float(sw[n]) * float(sx) / float(sy))), qmin, qmax)` in float, ties
    to even (QuantArithmetic.h). `x` is `[M, K]`, `w` is `[N, K]` (weights
    per tensor or per output channel, axis 0), `bias` is `[N]` f32.

    `arithmetic = "onednn"` reproduces PyTorch's onednn engine instead
    (its reciprocal scales, `1 / s` rounded to float): with `r = float(1 /
    sx) * float(1 / sw[n])`, `y = clamp(nearbyint((float(acc) + bias[n] *
    r) * (float(1 / sy) / r) + float(zy)))`, each step rounded to float
    (QuantArithmetic.h); an f32 result is `(float(acc) + bias[n] * r) *
    (1 / r)`. `arithmetic = "qnnpack"` names the default.

    With an f32 result and no `output_params` the epilogue dequantizes
    the sums instead of requantizing them: `y = float(acc) * (float(sx) *
    float(sw[n]))` (what `cuvil-quantize` gives a layer whose output only
    float ops read: no rounding of the output to 8 bits).

    ```mlir
    %y = cuvil.quant.linear %x, %w, %b {input_params = #cuvil.quant<scale = [0.03], zero_point = [120]>,
           weight_params = #cuvil.quant<scale = [0.005], zero_point = [0]>,
           output_params = #cuvil.quant<scale = [0.08], zero_point = [100]>}
         : (tensor<5x37xui8>, tensor<7x37xi8>, tensor<7xf32>) -> tensor<5x7xui8>
    ```
  }];
  let arguments = (ins Cuvil_QuantStorageTensor:$input, Cuvil_QuantStorageTensor:$weight,
                       Optional<Cuvil_FloatTensor>:$bias, Cuvil_QuantParamsAttr:$input_params,
                       Cuvil_QuantParamsAttr:$weight_params,
                       OptionalAttr<Cuvil_QuantParamsAttr>:$output_params,
                       OptionalAttr<StrAttr>:$arithmetic);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` `(` type($input) `,` type($weight) (`,` type($bias)^)? `)` `->` type($result)
  }];
}

def Cuvil_QuantLinearDynamicOp : Cuvil_Op<"quant.linear_dynamic", [Pure], /*inferTypes=*/0> {
  let summary = "A dynamically quantized linear layer: the input quantized at run time by its own range.";
  let description = [{
    `quantized::linear_dynamic` (`torch.ao.nn.quantized.dynamic.Linear`,
    what `quantize_dynamic` makes of `nn.Linear` and of LSTM/GRU
    projections) as PyTorch computes it: the float input `x` `[M, K]` is
    quantized to u8 with parameters chosen from its range on every call
    (PyTorch's `ChooseQuantizationParams`: the range widened to contain 0,
    `[0, 255]`, `[0, 127]` with `reduce_range`), multiplied in int32 with
    the int8 weights `[N, K]` (per tensor or per output channel, axis 0),
    and the sums dequantized to f32 with the float bias `[N]`.

    The arithmetic names the engine: `"qnnpack"` quantizes as
    `quantize_per_tensor` and computes `float(acc) * (float(sw[n]) *
    float(sx)) + bias[n]` (QNNPACK ignores `reduce_range`); `"onednn"`
    quantizes as oneDNN's reorder, `nearbyint(x * float(1 / sx) + zx)`, and
    computes `(float(acc) + bias[n] * r) * (1 / r)` with `r = float(1 / sx)
    * float(1 / sw[n])`. `relu` clamps the result at 0. A NaN or an
    infinity in the input makes every output NaN (PyTorch refuses such an
    input).

    ```mlir
    %y = cuvil.quant.linear_dynamic %x, %w, %b {weight_params = #cuvil.quant<scale = [0.005], zero_point = [0]>,
           arithmetic = "onednn", reduce_range}
         : (tensor<5x37xf32>, tensor<7x37xi8>, tensor<7xf32>) -> tensor<5x7xf32>
    ```
  }];
  let arguments = (ins F32Tensor:$input, Cuvil_QuantStorageTensor:$weight,
                       Optional<F32Tensor>:$bias, Cuvil_QuantParamsAttr:$weight_params,
                       StrAttr:$arithmetic, UnitAttr:$reduce_range, UnitAttr:$relu);
  let results = (outs F32Tensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` `(` type($input) `,` type($weight) (`,` type($bias)^)? `)` `->` type($result)
  }];
}

def Cuvil_QuantConv2DOp : Cuvil_Op<"quant.conv2d", [Pure], /*inferTypes=*/0> {
  let summary = "A quantized 2-D convolution: int32 accumulation, then a requantize epilogue.";
  let description = [{
    `torch.ao.nn.quantized.Conv2d` as PyTorch's QNNPACK engine computes it,
    with the arithmetic of `cuvil.quant.linear`: centred int32 products
    summed over the window (padding reads the input's zero point, i.e.
    contributes nothing), the float bias quantized with scale `sx * sw[co]`,
    the float requantize epilogue. Input NCHW, weights `[Cout, Cin/groups,
    KH, KW]` per tensor or per output channel (axis 0). An f32 result without
    `output_params` dequantizes the sums, as for `cuvil.quant.linear`, and
    `arithmetic = "onednn"` is oneDNN's epilogue as there.

    ```mlir
    %y = cuvil.quant.conv2d %x, %w, %b stride [1, 1] padding [1, 1] dilation [1, 1]
           {input_params = ..., weight_params = ..., output_params = ...}
         : (tensor<1x4x8x8xui8>, tensor<8x4x3x3xi8>, tensor<8xf32>) -> tensor<1x8x8x8xui8>
    ```
  }];
  let arguments = (ins Cuvil_QuantStorageTensor:$input, Cuvil_QuantStorageTensor:$weight,
                       Optional<Cuvil_FloatTensor>:$bias,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
                       DenseI64ArrayAttr:$dilation, DefaultValuedAttr<I64Attr, "1">:$groups,
                       Cuvil_QuantParamsAttr:$input_params, Cuvil_QuantParamsAttr:$weight_params,
                       OptionalAttr<Cuvil_QuantParamsAttr>:$output_params,
                       OptionalAttr<StrAttr>:$arithmetic);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? `stride` $stride `padding` $padding `dilation` $dilation
    (`groups` $groups^)? attr-dict `:` functional-type(operands, results)
  }];
}

def Cuvil_QuantAddOp : Cuvil_Op<"quant.add", [Pure, Cuvil_Elementwise], /*inferTypes=*/0> {
  let summary = "A quantized element-wise sum (a residual connection), optionally with relu.";
  let description = [{
    `torch.ops.quantized.add` / `add_relu` as PyTorch's vectorized x86
    kernel computes them: each operand dequantized with one rounding,
    `fma(float(scale), float(q), float(scale) * float(-zero_point))`, the
    sum in float, `max(sum, 0)` with `relu`, then quantized with
    `output_params` (`clamp(zero_point + nearbyint(sum * (1.0f / scale)))`,
    ties to even). Operands and result are 8-bit storage of one shape,
    quantized per tensor. That is the onednn engine's arithmetic;
    `arithmetic = "qnnpack"` reproduces QNNPACK's instead (ui8 only): both
    operands scaled by fixed-point multipliers of `2^-shift` derived from
    `sa / sy` and `sb / sy`, the remainder rounding half away from zero,
    `relu` clamping at the output's zero point (QuantArithmetic.h).

    ```mlir
    %y = cuvil.quant.add %a, %b {lhs_params = #cuvil.quant<scale = [0.05], zero_point = [128]>,
           rhs_params = #cuvil.quant<scale = [0.04], zero_point = [0]>,
           output_params = #cuvil.quant<scale = [0.06], zero_point = [0]>, relu}
         : (tensor<1x64x56x56xui8>, tensor<1x64x56x56xui8>) -> tensor<1x64x56x56xui8>
    ```
  }];
  let arguments = (ins Cuvil_QuantStorageTensor:$lhs, Cuvil_QuantStorageTensor:$rhs,
                       Cuvil_QuantParamsAttr:$lhs_params, Cuvil_QuantParamsAttr:$rhs_params,
                       Cuvil_QuantParamsAttr:$output_params, UnitAttr:$relu,
                       OptionalAttr<StrAttr>:$arithmetic);
  let results = (outs Cuvil_QuantStorageTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` `(` type($lhs) `,` type($rhs) `)` `->` type($result)
  }];
}

def Cuvil_QuantMulOp : Cuvil_Op<"quant.mul", [Pure, Cuvil_Elementwise], /*inferTypes=*/0> {
  let summary = "A quantized element-wise product (broadcasting), optionally with relu.";
  let description = [{
    `torch.ops.quantized.mul` / `mul_relu` as PyTorch computes them on
    every engine and path (its x86 kernels, vectorized or not): the
    centred operands multiplied in int32, `c = (a - za) * (b - zb)`, then
    `y = clamp(zy + nearbyint(float(c) * m))` with `m = (float(sa) *
    float(sb)) * (1.0f / float(sy))`, ties to even; `relu` clamps at `zy`.
    Operands broadcast NumPy-style (a squeeze-excitation scale `[N, C, 1,
    1]` times its input); 8-bit storage of one type, per tensor.

    ```mlir
    %y = cuvil.quant.mul %s, %x {lhs_params = #cuvil.quant<scale = [0.004], zero_point = [0]>,
           rhs_params = #cuvil.quant<scale = [0.02], zero_point = [3]>,
           output_params = #cuvil.quant<scale = [0.015], zero_point = [0]>}
         : (tensor<1x72x1x1xui8>, tensor<1x72x12x12xui8>) -> tensor<1x72x12x12xui8>
    ```
  }];
  let arguments = (ins Cuvil_QuantStorageTensor:$lhs, Cuvil_QuantStorageTensor:$rhs,
                       Cuvil_QuantParamsAttr:$lhs_params, Cuvil_QuantParamsAttr:$rhs_params,
                       Cuvil_QuantParamsAttr:$output_params, UnitAttr:$relu);
  let results = (outs Cuvil_QuantStorageTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` `(` type($lhs) `,` type($rhs) `)` `->` type($result)
  }];
}

def Cuvil_QuantAvgPool2DOp : Cuvil_Op<"quant.avg_pool2d", [Pure], /*inferTypes=*/0> {
  let summary = "Quantized 2-D average pooling, rounded as PyTorch's quantized kernels round it.";
  let description = [{
    `avg_pool2d` / `adaptive_avg_pool2d` on a quantized tensor (windows of
    one size): per window the int32 sum `acc` of `q - zx` over the taps
    inside the input (padding contributes nothing), the divisor `d` the
    window's size (`count_include_pad`, the taps in the padded input) or its
    taps inside the input, the multiplier `m = float(float(sx) /
    float(sy)) / float(d)`, then `y = clamp(nearbyint(float(acc) * m +
    float(zy)))` in float (PyTorch's x86 kernels on NCHW tensors);
    `round_before_zero_point` gives `y = clamp(nearbyint(float(acc) * m) +
    zy)` (its kernels on channels-last tensors, what quantized convolutions
    return). `arithmetic = "qnnpack"` is QNNPACK's average pooling (what
    the qnnpack engine runs for `avg_pool2d` and `adaptive_avg_pool2d` of
    ui8 tensors, whatever their layout): the divisor always the whole
    window (`count_include_pad` required: QNNPACK ignores PyTorch's flag),
    `m = float(sx) / (float(sy) * float(kh * kw))`, rounded before the zero
    point. Input and result NCHW, 8-bit storage, per tensor.

    ```mlir
    %y = cuvil.quant.avg_pool2d %x kernel [3, 3] stride [1, 1] padding [1, 1]
           {input_params = #cuvil.quant<scale = [0.05], zero_point = [3]>,
            output_params = #cuvil.quant<scale = [0.05], zero_point = [3]>, count_include_pad}
         : tensor<1x8x10x10xui8> -> tensor<1x8x10x10xui8>
    ```
  }];
  let arguments = (ins Cuvil_QuantStorageTensor:$input, DenseI64ArrayAttr:$kernel_size,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
                       UnitAttr:$count_include_pad, Cuvil_QuantParamsAttr:$input_params,
                       Cuvil_QuantParamsAttr:$output_params, UnitAttr:$round_before_zero_point,
                       OptionalAttr<StrAttr>:$arithmetic);
  let results = (outs Cuvil_QuantStorageTensor:$result);
  let assemblyFormat = [{
    $input `kernel` $kernel_size `stride` $stride `padding` $padding attr-dict `:` type($input) `->` type($result)
  }];
}

#endif // CUVIL_DIALECT_CUVIL_IR_QUANTOPS_TD
