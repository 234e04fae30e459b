//===- ShapeOps.td - cuvil.shape.* views and layout changes -*- tablegen -*-===//
//
// Ops that rearrange elements without computing on them. They have value
// semantics; whether they become views or copies is decided by the memory
// planner.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_DIALECT_CUVIL_IR_SHAPEOPS_TD
#define CUVIL_DIALECT_CUVIL_IR_SHAPEOPS_TD

include "dialects/Cuvil/IR/CuvilBase.td"

class Cuvil_ShapeOp<string name, list<Trait> traits = []>
    : Cuvil_Op<"shape." # name, !listconcat(traits, [Pure])> {
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def Cuvil_ReshapeOp : Cuvil_ShapeOp<"reshape"> {
  let summary = "Reinterprets the elements (row-major) with a new shape.";
  let description = [{
    `torch.reshape` / `view`. `shape` may hold one `-1`, inferred from the
    element count; the element count must be preserved.

    ```mlir
    %y = cuvil.shape.reshape %x {shape = array<i64: 1, -1>} : tensor<1x512x1x1xf32> -> tensor<1x512xf32>
    ```
  }];
  let arguments = (ins Cuvil_Tensor:$input, DenseI64ArrayAttr:$shape);
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Cuvil_ReshapeDynamicOp : Cuvil_Op<"shape.reshape_dynamic", [Pure]> {
  let summary = "Reshape to a shape computed at run time (a 1-D i64 tensor).";
  let description = [{
    `x.view(n, -1)` where `n` comes from tensor data or a dynamic
    dimension. `shape` holds the new sizes (one may be `-1`, inferred from
    the element count); the result rank is its length, its dimensions are
    dynamic. Shape propagation turns it into `cuvil.shape.reshape` when the
    sizes become known; otherwise it reports the value-dependent shape.

    ```mlir
    %y = cuvil.shape.reshape_dynamic %x, %sizes : tensor<2x64xf32>, tensor<2xi64> -> tensor<?x?xf32>
    ```
  }];
  let arguments = (ins Cuvil_Tensor:$input, Cuvil_IndexTensor:$shape);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat = [{
    $input `,` $shape attr-dict `:` type($input) `,` type($shape) `->` type($result)
  }];
}

def Cuvil_DimOp : Cuvil_Op<"shape.dim", [Pure]> {
  let summary = "The size of one dimension, as a 0-d i64 tensor.";
  let description = [{
    `x.size(d)` of a dynamic (`?`) dimension; folds to a constant when the
    dimension is static.

    ```mlir
    %n = cuvil.shape.dim %x {dim = 0 : i64} : tensor<?x3xf32> -> tensor<i64>
    ```
  }];
  let arguments = (ins Cuvil_Tensor:$input, I64Attr:$dim);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasFolder = 1;
}

def Cuvil_FlattenOp : Cuvil_ShapeOp<"flatten"> {
  let summary = "Merges dimensions start_dim..end_dim into one.";
  let description = [{
    `torch.flatten`. A 0-d input gives a 1-element 1-D result.

    ```mlir
    %y = cuvil.shape.flatten %x {start_dim = 1 : i64, end_dim = 3 : i64} : tensor<1x512x1x1xf32> -> tensor<1x512xf32>
    ```
  }];
  let arguments = (ins Cuvil_Tensor:$input, I64Attr:$start_dim, I64Attr:$end_dim);
  let hasCanonicalizer = 1;
}

def Cuvil_SqueezeOp : Cuvil_ShapeOp<"squeeze"> {
  let summary = "Removes the listed size-1 dimensions.";
  let description = [{
    The listed dimensions (sorted, distinct) must have size 1 (or be
    dynamic, then checked at run time). PyTorch's "leave non-1 dimensions
    alone" is resolved by the importer.

    ```mlir
    %y = cuvil.shape.squeeze %x {dims = array<i64: 0, 2>} : tensor<1x8x1xf32> -> tensor<8xf32>
    ```
  }];
  let arguments = (ins Cuvil_Tensor:$input, DenseI64ArrayAttr:$dims);
  let hasCanonicalizer = 1;
}

def Cuvil_UnsqueezeOp : Cuvil_ShapeOp<"unsqueeze"> {
  let summary = "Inserts a size-1 dimension at `dim` (0 <= dim <= rank).";
  let description = [{
    ```mlir
    %y = cuvil.shape.unsqueeze %x {dim = 0 : i64} : tensor<8xf32> -> tensor<1x8xf32>
    ```
  }];
  let arguments = (ins Cuvil_Tensor:$input, I64Attr:$dim);
  let hasCanonicalizer = 1;
}

def Cuvil_PermuteOp : Cuvil_ShapeOp<"permute"> {
  let summary = "Reorders dimensions: result dim i is input dim dims[i].";
  let description = [{
    ```mlir
    %y = cuvil.shape.permute %x {dims = array<i64: 0, 2, 3, 1>} : tensor<1x3x8x8xf32> -> tensor<1x8x8x3xf32>
    ```
  }];
  let arguments = (ins Cuvil_Tensor:$input, DenseI64ArrayAttr:$dims);
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Cuvil_TransposeOp : Cuvil_ShapeOp<"transpose"> {
  let summary = "Swaps dimensions dim0 and dim1.";
  let description = [{
    ```mlir
    %y = cuvil.shape.transpose %x {dim0 = 1 : i64, dim1 = 2 : i64} : tensor<2x3x4xf32> -> tensor<2x4x3xf32>
    ```
  }];
  let arguments = (ins Cuvil_Tensor:$input, I64Attr:$dim0, I64Attr:$dim1);
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Cuvil_ExpandOp : Cuvil_ShapeOp<"expand"> {
  let summary = "Broadcasts size-1 dimensions (and new leading ones) to `shape`.";
  let description = [{
    `Tensor.expand`: `shape` may add leading dimensions; `-1` keeps an
    existing dimension; other existing dimensions must be 1 or equal.

    ```mlir
    %y = cuvil.shape.expand %x {shape = array<i64: 4, -1, 8>} : tensor<3x1xf32> -> tensor<4x3x8xf32>
    ```
  }];
  let arguments = (ins Cuvil_Tensor:$input, DenseI64ArrayAttr:$shape);
  let hasFolder = 1;
}

def Cuvil_ExpandDynamicOp : Cuvil_Op<"shape.expand_dynamic", [Pure]> {
  let summary = "Broadcasts `input` to sizes known only at run time.";
  let description = [{
    `x.expand(n, -1)`, `torch.zeros(n, 4)`, `torch.ones_like(x)` where a
    size comes from a dynamic dimension: one 0-d i64 size per result
    dimension, NumPy-aligned to the right of `input`. A static size-1
    dimension of `input` (and a new leading one) takes the run-time size;
    any other dimension keeps its own size, which the run-time size must
    equal (a run-time check where that is not evident). A negative size is
    a run-time error. Sizes that are constants make the result dimension
    static, so shape propagation turns the op static once the dimensions
    are known (`--specialize`).

    ```mlir
    %z = cuvil.shape.expand_dynamic %zero, [%n, %c4] : tensor<f32>, [tensor<i64>, tensor<i64>] -> tensor<?x4xf32>
    ```
  }];
  let arguments = (ins Cuvil_Tensor:$input, Variadic<0DTensorOf<[I64]>>:$sizes);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat = [{
    $input `,` `[` $sizes `]` attr-dict `:` type($input) `,` `[` type($sizes) `]` `->` type($result)
  }];
  let hasFolder = 1;
}

#endif // CUVIL_DIALECT_CUVIL_IR_SHAPEOPS_TD
