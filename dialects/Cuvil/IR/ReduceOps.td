//===- ReduceOps.td - cuvil.reduce.* reductions ------------*- tablegen -*-===//
//
// Reductions over a sorted list of distinct dimensions. `keepdim` keeps the
// reduced dimensions with size 1. Result element types follow PyTorch: sums
// and products of integers and bools are i64, `any`/`all` give i1, arg
// reductions give i64 indices.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_DIALECT_CUVIL_IR_REDUCEOPS_TD
#define CUVIL_DIALECT_CUVIL_IR_REDUCEOPS_TD

include "dialects/Cuvil/IR/CuvilBase.td"

// `kind` is the cuvil::ReduceKind whose rules (operand element kinds, result
// element type) the op follows.
class Cuvil_ReduceOp<string name, string kind, string formula, dag extraAttrs = (ins)>
    : Cuvil_Op<"reduce." # name, [Pure]> {
  let summary = "Reduces `dims` with " # formula # ".";
  let description = "Reduces the listed dimensions (sorted, distinct, "
      # "normalised) with " # formula # ". An empty list reduces nothing. With "
      # "`keepdim` the reduced dimensions stay as size 1."
      # "\n\n```mlir\n%s = cuvil.reduce." # name
      # " %x dims [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>\n```";
  let arguments = !con((ins Cuvil_Tensor:$input, DenseI64ArrayAttr:$dims,
                            UnitAttr:$keepdim), extraAttrs);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat = [{
    $input `dims` $dims (`keepdim` $keepdim^)? attr-dict `:` type($input) `->` type($result)
  }];
  let cuvilExtraDef = [{
    ::llvm::LogicalResult $cppClass::inferResultTypes(Adaptor adaptor,
        ::mlir::cuvil::EmitErrorFn emitError,
        ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return ::mlir::cuvil::inferReduceResult(adaptor.getInput(), adaptor.getDims(),
          adaptor.getKeepdim(), ::mlir::cuvil::ReduceKind::}] # kind # [{,
          emitError, types);
    }
  }];
}

def Cuvil_SumOp : Cuvil_ReduceOp<"sum", "Sum", "a sum (i64 for integers and bools)">;
def Cuvil_ProdOp : Cuvil_ReduceOp<"prod", "Sum", "a product (i64 for integers and bools)">;
def Cuvil_MeanOp : Cuvil_ReduceOp<"mean", "FloatOnly", "the arithmetic mean (NaN for empty)">;
def Cuvil_MaxOp : Cuvil_ReduceOp<"max", "SameType", "the maximum, NaN-propagating (amax)">;
def Cuvil_MinOp : Cuvil_ReduceOp<"min", "SameType", "the minimum, NaN-propagating (amin)">;
def Cuvil_AnyOp : Cuvil_ReduceOp<"any", "Bool", "logical or of non-zero tests">;
def Cuvil_AllOp : Cuvil_ReduceOp<"all", "Bool", "logical and of non-zero tests">;
def Cuvil_VarOp : Cuvil_ReduceOp<"var", "FloatOnly",
    "the variance sum((x - mean)^2) / (n - correction)",
    (ins DefaultValuedAttr<I64Attr, "1">:$correction)>;
def Cuvil_StdOp : Cuvil_ReduceOp<"std", "FloatOnly",
    "the standard deviation sqrt(var) with `correction`",
    (ins DefaultValuedAttr<I64Attr, "1">:$correction)>;

class Cuvil_ArgReduceOp<string name, string formula>
    : Cuvil_Op<"reduce." # name, [Pure]> {
  let summary = "Index of the " # formula # " along `dim` (i64).";
  let description = "`torch." # name # "`: the index of the first " # formula
      # " along `dim` (NaN counts as the extreme value). Without `dim` the "
      # "input is flattened and the result is 0-d (`keepdim` then keeps every "
      # "dimension as size 1).\n\n```mlir\n%i = cuvil.reduce." # name
      # " %x dim 1 : tensor<4x10xf32> -> tensor<4xi64>\n```";
  let arguments = (ins Cuvil_Tensor:$input, OptionalAttr<I64Attr>:$dim,
                       UnitAttr:$keepdim);
  let results = (outs Cuvil_IndexTensor:$result);
  let assemblyFormat = [{
    $input (`dim` $dim^)? (`keepdim` $keepdim^)? attr-dict `:` type($input) `->` type($result)
  }];
}

def Cuvil_CumulativeOp : Cuvil_Op<"reduce.cumulative", [Pure]> {
  let summary = "Running sum, product, max, min or logsumexp along `dim`.";
  let description = [{
    `torch.cumsum`, `cumprod`, `cummax`/`cummin` (values), `logcumsumexp`:
    element `i` along `dim` combines elements `0..i`. The result has the
    input's type (the importer converts integers to int64 for sums and
    products first, as PyTorch does); `max` and `min` propagate NaN;
    `logsumexp` needs floats. A 0-d input is its own result.

    ```mlir
    %s = cuvil.reduce.cumulative %x {dim = 1 : i64, kind = #cuvil<scan_kind sum>} : tensor<3x5xf32> -> tensor<3x5xf32>
    ```
  }];
  let arguments = (ins Cuvil_Tensor:$input, I64Attr:$dim, Cuvil_ScanKindAttr:$kind);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def Cuvil_CumulativeIndexOp : Cuvil_Op<"reduce.cumulative_index", [Pure]> {
  let summary = "Index of the running max or min along `dim` (i64).";
  let description = [{
    The indices of `torch.cummax`/`cummin`: for each `i` along `dim`, the
    position in `0..i` of the running extreme, the last one on ties (and of
    the last NaN, which counts as the extreme), as PyTorch.

    ```mlir
    %i = cuvil.reduce.cumulative_index %x {dim = 0 : i64, kind = #cuvil<scan_kind max>} : tensor<5xf32> -> tensor<5xi64>
    ```
  }];
  let arguments = (ins Cuvil_Tensor:$input, I64Attr:$dim, Cuvil_ScanKindAttr:$kind);
  let results = (outs Cuvil_IndexTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def Cuvil_ArgmaxOp : Cuvil_ArgReduceOp<"argmax", "maximum">;
def Cuvil_ArgminOp : Cuvil_ArgReduceOp<"argmin", "minimum">;

#endif // CUVIL_DIALECT_CUVIL_IR_REDUCEOPS_TD
