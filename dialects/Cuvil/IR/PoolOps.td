//===- PoolOps.td - cuvil.pool.* pooling -------------------*- tablegen -*-===//
//
// Max, average and adaptive-average pooling over NC[spatial] inputs, one op
// per spatial rank with shared rules.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_DIALECT_CUVIL_IR_POOLOPS_TD
#define CUVIL_DIALECT_CUVIL_IR_POOLOPS_TD

include "dialects/Cuvil/IR/CuvilBase.td"

class Cuvil_PoolOpBase<string name, int spatialRank, list<Trait> traits = []>
    : Cuvil_Op<"pool." # name, !listconcat(traits, [Pure])> {
  let results = (outs Cuvil_Tensor:$result);
  let cuvilExtraDecl = [{
    /// Number of spatial dimensions.
    static constexpr int64_t kSpatialRank = }] # spatialRank # [{;
  }];
}

class Cuvil_MaxPoolOp<string name, int spatialRank> : Cuvil_PoolOpBase<name, spatialRank> {
  let summary = "Max pooling over " # spatialRank # " spatial dimension(s).";
  let description = "`torch.nn.functional." # name # "`: `input` is `[N, C, "
      # "spatial...]`; windows of `kernel_size` (spaced by `dilation`) move by "
      # "`stride`; padding positions never win. With `ceil_mode` the output "
      # "size rounds up, but no window may start in the right padding. Padding "
      # "must be at most half the kernel size."
      # "\n\n```mlir\n%y = cuvil.pool." # name
      # " %x kernel [3, 3] stride [2, 2] padding [1, 1] dilation [1, 1]\n"
      # "    : tensor<1x64x112x112xf32> -> tensor<1x64x56x56xf32>\n```";
  let arguments = (ins Cuvil_Tensor:$input,
                       DenseI64ArrayAttr:$kernel_size, DenseI64ArrayAttr:$stride,
                       DenseI64ArrayAttr:$padding, DenseI64ArrayAttr:$dilation,
                       UnitAttr:$ceil_mode);
  let assemblyFormat = [{
    $input `kernel` $kernel_size `stride` $stride `padding` $padding
    `dilation` $dilation (`ceil_mode` $ceil_mode^)? attr-dict
    `:` type($input) `->` type($result)
  }];
}

def Cuvil_MaxPool1DOp : Cuvil_MaxPoolOp<"max_pool1d", 1>;
def Cuvil_MaxPool2DOp : Cuvil_MaxPoolOp<"max_pool2d", 2>;

class Cuvil_AvgPoolOp<string name, int spatialRank> : Cuvil_PoolOpBase<name, spatialRank> {
  let summary = "Average pooling over " # spatialRank # " spatial dimension(s).";
  let description = "`torch.nn.functional." # name # "`: like max pooling "
      # "without dilation. The divisor is `divisor_override` when given, else "
      # "the window size including padding (`count_include_pad`) or only the "
      # "elements inside the input. Windows that `ceil_mode` adds past the "
      # "padded input are clipped."
      # "\n\n```mlir\n%y = cuvil.pool." # name
      # " %x kernel [2, 2] stride [2, 2] padding [0, 0] count_include_pad\n"
      # "    : tensor<1x64x8x8xf32> -> tensor<1x64x4x4xf32>\n```";
  let arguments = (ins Cuvil_FloatTensor:$input,
                       DenseI64ArrayAttr:$kernel_size, DenseI64ArrayAttr:$stride,
                       DenseI64ArrayAttr:$padding, UnitAttr:$ceil_mode,
                       UnitAttr:$count_include_pad,
                       OptionalAttr<I64Attr>:$divisor_override);
  let assemblyFormat = [{
    $input `kernel` $kernel_size `stride` $stride `padding` $padding
    (`ceil_mode` $ceil_mode^)? (`count_include_pad` $count_include_pad^)?
    (`divisor` $divisor_override^)? attr-dict `:` type($input) `->` type($result)
  }];
}

def Cuvil_AvgPool1DOp : Cuvil_AvgPoolOp<"avg_pool1d", 1>;
def Cuvil_AvgPool2DOp : Cuvil_AvgPoolOp<"avg_pool2d", 2>;

class Cuvil_AdaptiveAvgPoolOp<string name, int spatialRank>
    : Cuvil_PoolOpBase<name, spatialRank> {
  let summary = "Adaptive average pooling to a fixed output size ("
      # spatialRank # " spatial dimension(s)).";
  let description = "`torch.nn.functional." # name # "`: output cell `i` of "
      # "a dimension of size `in` averages input `[floor(i * in / out), "
      # "ceil((i + 1) * in / out))`."
      # "\n\n```mlir\n%y = cuvil.pool." # name
      # " %x output_size [1, 1] : tensor<1x512x7x7xf32> -> tensor<1x512x1x1xf32>\n```";
  let arguments = (ins Cuvil_FloatTensor:$input, DenseI64ArrayAttr:$output_size);
  let assemblyFormat = [{
    $input `output_size` $output_size attr-dict `:` type($input) `->` type($result)
  }];
}

def Cuvil_AdaptiveAvgPool1DOp : Cuvil_AdaptiveAvgPoolOp<"adaptive_avg_pool1d", 1>;
def Cuvil_AdaptiveAvgPool2DOp : Cuvil_AdaptiveAvgPoolOp<"adaptive_avg_pool2d", 2>;

#endif // CUVIL_DIALECT_CUVIL_IR_POOLOPS_TD
