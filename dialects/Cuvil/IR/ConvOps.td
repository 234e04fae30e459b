//===- ConvOps.td - cuvil.conv.* convolutions --------------*- tablegen -*-===//
//
// Convolutions over NC[spatial] inputs with PyTorch's weight layouts. One
// class per spatial rank keeps the op names PyTorch's while the rules and
// the reference implementation are shared.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_DIALECT_CUVIL_IR_CONVOPS_TD
#define CUVIL_DIALECT_CUVIL_IR_CONVOPS_TD

include "dialects/Cuvil/IR/CuvilBase.td"

class Cuvil_ConvOpBase<string name, int spatialRank> : Cuvil_Op<"conv." # name, [Pure]> {
  let arguments = (ins Cuvil_FloatTensor:$input, Cuvil_FloatTensor:$weight,
                       Optional<Cuvil_FloatTensor>:$bias,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
                       DenseI64ArrayAttr:$dilation,
                       DefaultValuedAttr<I64Attr, "1">:$groups);
  let results = (outs Cuvil_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? `stride` $stride `padding` $padding
    `dilation` $dilation (`groups` $groups^)? attr-dict
    `:` functional-type(operands, results)
  }];
  let cuvilExtraDecl = [{
    /// Number of spatial dimensions.
    static constexpr int64_t kSpatialRank = }] # spatialRank # [{;
  }];
}

class Cuvil_ConvOp<string name, int spatialRank> : Cuvil_ConvOpBase<name, spatialRank> {
  let summary = "Convolution (cross-correlation) over " # spatialRank
      # " spatial dimension(s).";
  let description = "`torch.nn.functional." # name # "`: `input` is `[N, C_in, "
      # "spatial...]`, `weight` is `[C_out, C_in / groups, kernel...]`, the "
      # "optional `bias` is `[C_out]`. `stride`, `padding` (symmetric, added on "
      # "both sides) and `dilation` have one entry per spatial dimension. "
      # "Output size per dimension: `(in + 2 * pad - dil * (k - 1) - 1) / stride + 1`."
      # "\n\n```mlir\n%y = cuvil.conv." # name
      # " %x, %w, %b stride [2, 2] padding [3, 3] dilation [1, 1]\n"
      # "    : (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>, tensor<64xf32>) -> tensor<1x64x112x112xf32>\n```";
}

def Cuvil_Conv1DOp : Cuvil_ConvOp<"conv1d", 1>;
def Cuvil_Conv2DOp : Cuvil_ConvOp<"conv2d", 2>;

class Cuvil_ConvTransposeOp<string name, int spatialRank>
    : Cuvil_ConvOpBase<name, spatialRank> {
  let summary = "Transposed convolution over " # spatialRank # " spatial dimension(s).";
  let description = "`torch.nn.functional." # name # "`: the gradient of a "
      # "convolution with respect to its input. `input` is `[N, C_in, spatial...]`, "
      # "`weight` is `[C_in, C_out / groups, kernel...]`, the optional `bias` is "
      # "`[C_out]`. Output size per dimension: `(in - 1) * stride - 2 * pad + "
      # "dil * (k - 1) + output_padding + 1`; `output_padding` must be smaller "
      # "than `stride` or `dilation`."
      # "\n\n```mlir\n%y = cuvil.conv." # name
      # " %x, %w stride [2, 2] padding [1, 1] dilation [1, 1] output_padding [1, 1]\n"
      # "    : (tensor<1x16x8x8xf32>, tensor<16x8x3x3xf32>) -> tensor<1x8x16x16xf32>\n```";
  let arguments = (ins Cuvil_FloatTensor:$input, Cuvil_FloatTensor:$weight,
                       Optional<Cuvil_FloatTensor>:$bias,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
                       DenseI64ArrayAttr:$dilation,
                       DenseI64ArrayAttr:$output_padding,
                       DefaultValuedAttr<I64Attr, "1">:$groups);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? `stride` $stride `padding` $padding
    `dilation` $dilation `output_padding` $output_padding (`groups` $groups^)?
    attr-dict `:` functional-type(operands, results)
  }];
}

def Cuvil_ConvTranspose1DOp : Cuvil_ConvTransposeOp<"conv_transpose1d", 1>;
def Cuvil_ConvTranspose2DOp : Cuvil_ConvTransposeOp<"conv_transpose2d", 2>;

#endif // CUVIL_DIALECT_CUVIL_IR_CONVOPS_TD
