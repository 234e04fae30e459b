//===- NormOps.td - cuvil.norm.* normalisation -------------*- tablegen -*-===//
//
// Inference-mode normalisation layers. Batch norm uses running statistics;
// layer and group norm compute statistics from the input (biased variance).
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_DIALECT_CUVIL_IR_NORMOPS_TD
#define CUVIL_DIALECT_CUVIL_IR_NORMOPS_TD

include "dialects/Cuvil/IR/CuvilBase.td"

def Cuvil_BatchNormOp : Cuvil_Op<"norm.batch_norm", [Pure, AttrSizedOperandSegments]> {
  let summary = "Eval-mode batch normalisation with running statistics.";
  let description = [{
    `y = (x - mean) / sqrt(var + eps) * weight + bias` per channel (dim 1).
    `input` is `[N, C, ...]` (rank >= 2); `mean`, `var` and the optional
    `weight` and `bias` are `[C]`.

    ```mlir
    %y = cuvil.norm.batch_norm %x, %mean, %var weight %g bias %b {eps = 1.0e-05 : f64}
        : (tensor<1x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
        -> tensor<1x64x56x56xf32>
    ```
  }];
  let arguments = (ins Cuvil_FloatTensor:$input, Cuvil_FloatTensor:$mean,
                       Cuvil_FloatTensor:$var,
                       Optional<Cuvil_FloatTensor>:$weight,
                       Optional<Cuvil_FloatTensor>:$bias,
                       DefaultValuedAttr<F64Attr, "1.0e-5">:$eps);
  let results = (outs Cuvil_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $mean `,` $var (`weight` $weight^)? (`bias` $bias^)? attr-dict
    `:` functional-type(operands, results)
  }];
}

def Cuvil_LayerNormOp : Cuvil_Op<"norm.layer_norm", [Pure, AttrSizedOperandSegments]> {
  let summary = "Normalises over the trailing `normalized_shape` dimensions.";
  let description = [{
    `torch.nn.functional.layer_norm`: mean and biased variance over the last
    `len(normalized_shape)` dimensions, which must equal `normalized_shape`;
    the optional `weight` and `bias` have shape `normalized_shape`.

    ```mlir
    %y = cuvil.norm.layer_norm %x weight %g bias %b {normalized_shape = array<i64: 256>, eps = 1.0e-05 : f64}
        : (tensor<2x128x256xf32>, tensor<256xf32>, tensor<256xf32>) -> tensor<2x128x256xf32>
    ```
  }];
  let arguments = (ins Cuvil_FloatTensor:$input,
                       Optional<Cuvil_FloatTensor>:$weight,
                       Optional<Cuvil_FloatTensor>:$bias,
                       DenseI64ArrayAttr:$normalized_shape,
                       DefaultValuedAttr<F64Attr, "1.0e-5">:$eps);
  let results = (outs Cuvil_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`weight` $weight^)? (`bias` $bias^)? attr-dict
    `:` functional-type(operands, results)
  }];
}

def Cuvil_GroupNormOp : Cuvil_Op<"norm.group_norm", [Pure, AttrSizedOperandSegments]> {
  let summary = "Normalises groups of channels.";
  let description = [{
    `torch.nn.functional.group_norm`: `input` is `[N, C, ...]`; the `C`
    channels form `num_groups` groups (which must divide `C`), each
    normalised over its channels and all spatial positions. `weight` and
    `bias` are `[C]`.

    ```mlir
    %y = cuvil.norm.group_norm %x weight %g bias %b {num_groups = 8 : i64, eps = 1.0e-05 : f64}
        : (tensor<2x32x16x16xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<2x32x16x16xf32>
    ```
  }];
  let arguments = (ins Cuvil_FloatTensor:$input,
                       Optional<Cuvil_FloatTensor>:$weight,
                       Optional<Cuvil_FloatTensor>:$bias,
                       I64Attr:$num_groups,
                       DefaultValuedAttr<F64Attr, "1.0e-5">:$eps);
  let results = (outs Cuvil_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`weight` $weight^)? (`bias` $bias^)? attr-dict
    `:` functional-type(operands, results)
  }];
}

#endif // CUVIL_DIALECT_CUVIL_IR_NORMOPS_TD
