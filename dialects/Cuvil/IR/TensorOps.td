//===- TensorOps.td - constants, casts and data movement ---*- tablegen -*-===//
//
// `cuvil.constant` plus the `cuvil.tensor.*` family: casts, concatenation,
// slicing, indexing, padding and embedding lookups.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_DIALECT_CUVIL_IR_TENSOROPS_TD
#define CUVIL_DIALECT_CUVIL_IR_TENSOROPS_TD

include "dialects/Cuvil/IR/CuvilBase.td"

def Cuvil_ConstantOp : Cuvil_Op<"constant", [Pure, ConstantLike]> {
  let summary = "A tensor constant (weights, buffers, literals).";
  let description = [{
    Holds a `DenseElementsAttr` (small literals) or a
    `DenseResourceElementsAttr` (weights, stored as resource blobs so that the
    IR stays small and the data is not uniqued).

    ```mlir
    %c = cuvil.constant dense<[1.0, 2.0]> : tensor<2xf32>
    %w = cuvil.constant dense_resource<conv1.weight> : tensor<64x3x7x7xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

def Cuvil_CastOp : Cuvil_Op<"tensor.cast", [Pure, Cuvil_Elementwise], /*inferTypes=*/0> {
  let summary = "Converts elements to the result's element type.";
  let description = [{
    `Tensor.to(dtype)`: floats to integers truncate toward zero, integers
    narrow modulo 2^bits, anything to `i1` tests `!= 0`. Shapes are equal.

    ```mlir
    %y = cuvil.tensor.cast %x : tensor<4xi64> -> tensor<4xf32>
    ```
  }];
  let arguments = (ins Cuvil_Tensor:$input);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasFolder = 1;
  // The result element type is a free choice: no type inference; verify()
  // checks that the shapes are compatible.
}

def Cuvil_ConcatOp : Cuvil_Op<"tensor.concat", [Pure]> {
  let summary = "Concatenates tensors along `dim`.";
  let description = [{
    `torch.cat`: all operands have one rank and one element type and equal
    sizes except along `dim`.

    ```mlir
    %y = cuvil.tensor.concat %a, %b {dim = 1 : i64} : (tensor<1x16x8x8xf32>, tensor<1x32x8x8xf32>) -> tensor<1x48x8x8xf32>
    ```
  }];
  let arguments = (ins Variadic<Cuvil_Tensor>:$inputs, I64Attr:$dim);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat = "$inputs attr-dict `:` functional-type($inputs, $result)";
  let hasFolder = 1;
}

def Cuvil_SliceOp : Cuvil_Op<"tensor.slice", [Pure]> {
  let summary = "x[start:end:step] along `dim`, with Python's index rules.";
  let description = [{
    Negative `start`/`end` count from the end; both are clamped to
    `[0, size]` (so `end = 9223372036854775807` means "to the end"); `step`
    is positive. The result size along `dim` is
    `max(0, ceil((end - start) / step))`.

    ```mlir
    %y = cuvil.tensor.slice %x {dim = 1 : i64, start = 0 : i64, end = -1 : i64, step = 2 : i64}
        : tensor<2x9xf32> -> tensor<2x4xf32>
    ```
  }];
  let arguments = (ins Cuvil_Tensor:$input, I64Attr:$dim, I64Attr:$start,
                       I64Attr:$end, DefaultValuedAttr<I64Attr, "1">:$step);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasFolder = 1;
}

def Cuvil_SliceToOp : Cuvil_Op<"tensor.slice_to", [Pure]> {
  let summary = "x[..., :n, ...] along `dim`, with `n` known at run time.";
  let description = [{
    A slice from the start whose end is a run-time size (a 0-d integer
    tensor, e.g. `cuvil.shape.dim` of another tensor: `mask[:, :, :T, :T]`
    with `T = x.size(1)`), with Python's rules: a negative end counts from
    the end, and the end is clamped to `[0, size]`. The result's size along
    `dim` is dynamic.

    ```mlir
    %y = cuvil.tensor.slice_to %mask, %t {dim = 2 : i64} : tensor<1x1x256x256xf32>, tensor<i64> -> tensor<1x1x?x256xf32>
    ```
  }];
  let arguments = (ins Cuvil_Tensor:$input, Cuvil_IndexTensor:$size, I64Attr:$dim);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat = "$input `,` $size attr-dict `:` type($input) `,` type($size) `->` type($result)";
}

def Cuvil_IotaOp : Cuvil_Op<"tensor.iota", [Pure]> {
  let summary = "0, 1, ..., n - 1 for a count `n` known only at run time.";
  let description = [{
    What `torch.arange` with a run-time bound is built from (positions
    `torch.arange(t)` of a sequence of run-time length, the rows and
    columns of a run-time causal mask). A negative count is a run-time
    error (PyTorch's "upper bound and larger bound inconsistent with step
    sign"). A constant count gives a static result and folds.

    ```mlir
    %i = cuvil.tensor.iota %n : tensor<i64> -> tensor<?xi64>
    ```
  }];
  let arguments = (ins 0DTensorOf<[I64]>:$count);
  let results = (outs 1DTensorOf<[I64]>:$result);
  let assemblyFormat = "$count attr-dict `:` type($count) `->` type($result)";
  let hasFolder = 1;
}

def Cuvil_SelectOp : Cuvil_Op<"tensor.select", [Pure]> {
  let summary = "x.select(dim, index): removes `dim`, keeping one index.";
  let description = [{
    A negative `index` counts from the end; it must be in range.

    ```mlir
    %y = cuvil.tensor.select %x {dim = 0 : i64, index = -1 : i64} : tensor<4x8xf32> -> tensor<8xf32>
    ```
  }];
  let arguments = (ins Cuvil_Tensor:$input, I64Attr:$dim, I64Attr:$index);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def Cuvil_IndexSelectOp : Cuvil_Op<"tensor.index_select", [Pure]> {
  let summary = "Picks entries along `dim` by a 1-D (or 0-d) index tensor.";
  let description = [{
    `torch.index_select`: result size along `dim` is the number of indices.
    Negative indices count from the end; out-of-range ones are a run-time
    error.

    ```mlir
    %y = cuvil.tensor.index_select %x, %i {dim = 0 : i64} : tensor<10x4xf32>, tensor<3xi64> -> tensor<3x4xf32>
    ```
  }];
  let arguments = (ins Cuvil_Tensor:$input, Cuvil_IndexTensor:$index, I64Attr:$dim);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat = [{
    $input `,` $index attr-dict `:` type($input) `,` type($index) `->` type($result)
  }];
}

def Cuvil_GatherOp : Cuvil_Op<"tensor.gather", [Pure]> {
  let summary = "torch.gather: out[i][j] = input[index[i][j]][j] (dim 0).";
  let description = [{
    `index` has the rank of `input` and no size larger than the input's in
    dimensions other than `dim`; the result has `index`'s shape.

    ```mlir
    %y = cuvil.tensor.gather %x, %i {dim = 1 : i64} : tensor<3x5xf32>, tensor<3x2xi64> -> tensor<3x2xf32>
    ```
  }];
  let arguments = (ins Cuvil_Tensor:$input, Cuvil_IndexTensor:$index, I64Attr:$dim);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat = [{
    $input `,` $index attr-dict `:` type($input) `,` type($index) `->` type($result)
  }];
}

def Cuvil_ScatterOp : Cuvil_Op<"tensor.scatter", [Pure]> {
  let summary = "torch.scatter / scatter_reduce: src written at index along dim.";
  let description = [{
    The result is `input` with, for every position `p` of `index`,
    `result[p with dim := index[p]] = combine(that element, src[p])`.
    `index` and `src` have the rank of `input`; `index` is no larger than
    `src` in any dimension, nor than `input` outside `dim`. `reduce` is
    `none` (replace; with repeated indices the last write wins), `sum`,
    `prod`, `mean`, `amax` or `amin`; with `include_self = false` the
    targeted elements of `input` do not take part (scatter_reduce's flag).
    `mean` divides by the number of values combined (floor division for
    integers). Out-of-range indices are a run-time error.

    ```mlir
    %y = cuvil.tensor.scatter %x, %i, %s {dim = 0 : i64, reduce = #cuvil<scatter_reduce sum>}
        : tensor<5x3xf32>, tensor<2x3xi64>, tensor<2x3xf32> -> tensor<5x3xf32>
    ```
  }];
  let arguments = (ins Cuvil_Tensor:$input, Cuvil_IndexTensor:$index, Cuvil_Tensor:$src, I64Attr:$dim,
                       DefaultValuedAttr<Cuvil_ScatterReduceAttr,
                                         "::mlir::cuvil::ScatterReduce::None">:$reduce,
                       DefaultValuedAttr<BoolAttr, "true">:$include_self);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat = [{
    $input `,` $index `,` $src attr-dict `:` type($input) `,` type($index) `,` type($src) `->` type($result)
  }];
}

def Cuvil_SortOp : Cuvil_Op<"tensor.sort", [Pure]> {
  let summary = "torch.sort: values and their original indices along `dim`.";
  let description = [{
    Stable: equal elements keep their order. NaN is greater than every
    number (last ascending, first `descending`). A 0-d input is its own
    result with index 0. topk, argsort, kthvalue, median and quantile are
    built on it.

    ```mlir
    %v, %i = cuvil.tensor.sort %x {dim = 1 : i64, descending} : tensor<3x5xf32> -> tensor<3x5xf32>, tensor<3x5xi64>
    ```
  }];
  let arguments = (ins Cuvil_Tensor:$input, I64Attr:$dim, UnitAttr:$descending);
  let results = (outs Cuvil_Tensor:$values, Cuvil_IndexTensor:$indices);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($values) `,` type($indices)";
}

def Cuvil_PadOp : Cuvil_Op<"tensor.pad", [Pure]> {
  let summary = "torch.nn.functional.pad with constant, reflect, replicate or circular mode.";
  let description = [{
    `pad` lists (before, after) pairs starting from the last dimension, as
    PyTorch does. Constant padding may be negative (cropping). Reflect needs
    pads smaller than the dimension; circular pads at most the dimension.

    ```mlir
    %y = cuvil.tensor.pad %x {pad = array<i64: 1, 1, 2, 0>, mode = #cuvil<pad_mode reflect>}
        : tensor<1x3x8x8xf32> -> tensor<1x3x10x10xf32>
    ```
  }];
  let arguments = (ins Cuvil_Tensor:$input, DenseI64ArrayAttr:$pad,
                       DefaultValuedAttr<Cuvil_PadModeAttr,
                                         "::mlir::cuvil::PadMode::Constant">:$mode,
                       DefaultValuedAttr<F64Attr, "0.0">:$value);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def Cuvil_ResizeOp : Cuvil_Op<"tensor.resize", [Pure]> {
  let summary = "Resamples the spatial dimensions of [N, C, spatial...] (torch interpolate).";
  let description = [{
    `torch.nn.functional.interpolate` over 1 to 3 spatial dimensions: the
    result is `[N, C] + size`. `nearest` takes input `floor(o * s)`,
    `nearest_exact` takes `floor((o + 0.5) * s)` (both clamped to the input),
    `linear` interpolates between the two nearest inputs along every spatial
    dimension (linear, bilinear, trilinear). The input step `s` is
    `(in - 1) / (out - 1)` with `align_corners` (linear only), else
    `1 / scale` when `scales` gives PyTorch's scale factor for the dimension
    (0 stands for none), else `in / out`. Coordinates are computed in f32, as PyTorch does, so
    that rounding picks the same input elements.

    ```mlir
    %y = cuvil.tensor.resize %x linear size [16, 16] align_corners
        : tensor<1x3x8x8xf32> -> tensor<1x3x16x16xf32>
    ```
  }];
  let arguments = (ins Cuvil_Tensor:$input, Cuvil_ResizeModeAttr:$mode,
                       DenseI64ArrayAttr:$size, OptionalAttr<DenseF64ArrayAttr>:$scales,
                       UnitAttr:$align_corners);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat = [{
    $input custom<ResizeMode>($mode) `size` $size (`scales` $scales^)?
    (`align_corners` $align_corners^)? attr-dict `:` type($input) `->` type($result)
  }];
}

def Cuvil_EmbeddingOp : Cuvil_Op<"tensor.embedding", [Pure]> {
  let summary = "Looks up rows of `weight` by integer `indices`.";
  let description = [{
    `torch.nn.functional.embedding`: `weight` is `[num, dim]`, the result is
    `indices.shape + [dim]`. Out-of-range indices are a run-time error.
    `padding_idx` only matters for training and is kept for reference.

    ```mlir
    %y = cuvil.tensor.embedding %w, %ids : tensor<1000x64xf32>, tensor<2x16xi64> -> tensor<2x16x64xf32>
    ```
  }];
  let arguments = (ins Cuvil_Tensor:$weight, Cuvil_IndexTensor:$indices,
                       OptionalAttr<I64Attr>:$padding_idx);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat = [{
    $weight `,` $indices attr-dict `:` type($weight) `,` type($indices) `->` type($result)
  }];
}

#endif // CUVIL_DIALECT_CUVIL_IR_TENSOROPS_TD
