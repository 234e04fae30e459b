//===- GemmOps.td - cuvil.gemm.* matrix products -----------*- tablegen -*-===//
//
// Matrix products with PyTorch semantics. Operands share one element type
// (the importer inserts casts); accumulation is at least in that type.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_DIALECT_CUVIL_IR_GEMMOPS_TD
#define CUVIL_DIALECT_CUVIL_IR_GEMMOPS_TD

include "dialects/Cuvil/IR/CuvilBase.td"

def Cuvil_LinearOp : Cuvil_Op<"gemm.linear", [Pure]> {
  let summary = "y = x W^T + b over the last dimension of x.";
  let description = [{
    `torch.nn.functional.linear`: `input` is `[..., in]`, `weight` is
    `[out, in]`, the optional `bias` is `[out]`; the result is `[..., out]`.
    A 1-D input gives a 1-D result.

    ```mlir
    %y = cuvil.gemm.linear %x, %w, %b
        : (tensor<8x512xf32>, tensor<10x512xf32>, tensor<10xf32>) -> tensor<8x10xf32>
    ```
  }];
  let arguments = (ins Cuvil_FloatTensor:$input, Cuvil_FloatTensor:$weight,
                       Optional<Cuvil_FloatTensor>:$bias);
  let results = (outs Cuvil_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` functional-type(operands, results)
  }];
}

def Cuvil_MatmulOp : Cuvil_Op<"gemm.matmul", [Pure]> {
  let summary = "torch.matmul: dot, matrix-vector, matrix or batched product.";
  let description = [{
    Follows `torch.matmul`: 1-D x 1-D is a dot product (0-d result); a 1-D
    left operand is treated as `[1, k]` and a 1-D right operand as `[k, 1]`,
    the added dimension being removed from the result; batch dimensions
    (all but the last two) broadcast.

    ```mlir
    %y = cuvil.gemm.matmul %a, %b
        : tensor<2x4x8x16xf32>, tensor<16x32xf32> -> tensor<2x4x8x32xf32>
    ```
  }];
  let arguments = (ins Cuvil_Tensor:$lhs, Cuvil_Tensor:$rhs);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
}

def Cuvil_BatchMatmulOp : Cuvil_Op<"gemm.batch_matmul", [Pure]> {
  let summary = "torch.bmm: [b, m, k] x [b, k, n] -> [b, m, n].";
  let description = [{
    ```mlir
    %y = cuvil.gemm.batch_matmul %a, %b
        : tensor<16x128x64xf32>, tensor<16x64x128xf32> -> tensor<16x128x128xf32>
    ```
  }];
  let arguments = (ins Cuvil_Tensor:$lhs, Cuvil_Tensor:$rhs);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
}

def Cuvil_AddmmOp : Cuvil_Op<"gemm.addmm", [Pure]> {
  let summary = "beta * input + alpha * (mat1 @ mat2).";
  let description = [{
    `torch.addmm`: `mat1` is `[m, k]`, `mat2` is `[k, n]` and `input`
    broadcasts to `[m, n]`. When `beta` is 0, `input` is ignored (NaN in it
    does not propagate), as in PyTorch.

    ```mlir
    %y = cuvil.gemm.addmm %bias, %x, %wt {alpha = 1.0 : f64, beta = 1.0 : f64}
        : (tensor<10xf32>, tensor<8x512xf32>, tensor<512x10xf32>) -> tensor<8x10xf32>
    ```
  }];
  let arguments = (ins Cuvil_Tensor:$input, Cuvil_Tensor:$mat1, Cuvil_Tensor:$mat2,
                       DefaultValuedAttr<F64Attr, "1.0">:$beta,
                       DefaultValuedAttr<F64Attr, "1.0">:$alpha);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat = [{
    $input `,` $mat1 `,` $mat2 attr-dict `:` functional-type(operands, results)
  }];
}

def Cuvil_LinalgKernelOp : Cuvil_Op<"linalg.kernel", [Pure]> {
  let summary = "A dense factorisation, solve or DFT on batches of matrices.";
  let description = [{
    The decompositions torch.linalg is built from (and the DFT torch.fft is
    built from), on f32 or f64 matrices
    batched over the leading dimensions (every operand has the same batch
    dimensions; the importer broadcasts). `kernel` names one, `flags` are
    its options in order:

    | kernel | operands | results | flags |
    |---|---|---|---|
    | `lu` | a [..,m,n] | lu [..,m,n], pivots [..,min(m,n)] i32 (1-based), info [..] i32 | |
    | `cholesky` | a [..,n,n] | L or U [..,n,n], info [..] i32 | upper |
    | `triangular_solve` | a [..,n,n], b [..,n,k] (left) or [..,k,n] | x like b | upper, left, unitriangular |
    | `geqrf` | a [..,m,n] | qr [..,m,n], tau [..,min(m,n)] | |
    | `householder_product` | v [..,m,n], tau [..,k] (m >= n >= k) | q [..,m,n] | |
    | `ormqr` | v [..,nq,c], tau [..,k], c [..,m,n] (nq = m if left else n) | [..,m,n] | left, transpose |
    | `eigh` | a [..,n,n] | w [..,n] ascending, v [..,n,n] | upper |
    | `svd` | a [..,m,n] | u [..,m,m or k], s [..,k] descending, vh [..,n or k,n] | full_matrices |
    | `dft` | x [..,n,2] (real, imaginary) | [..,n,2], unnormalised | inverse |

    LU, Cholesky and QR follow LAPACK's conventions (pivots, reflector
    signs); eigen- and singular vectors have their largest component
    positive (LAPACK leaves the sign free). The code generator calls the
    runtime's kernels (runtime/cpu/linalg.h); the evaluator runs the same.

    ```mlir
    %lu, %piv, %info = cuvil.linalg.kernel "lu" (%a) : (tensor<2x3x3xf32>) -> (tensor<2x3x3xf32>, tensor<2x3xi32>, tensor<2xi32>)
    ```
  }];
  let arguments = (ins Variadic<Cuvil_FloatTensor>:$inputs, StrAttr:$kernel,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$flags);
  let results = (outs Variadic<Cuvil_Tensor>:$results);
  let assemblyFormat = "$kernel `(` $inputs `)` attr-dict `:` functional-type($inputs, $results)";
}

#endif // CUVIL_DIALECT_CUVIL_IR_GEMMOPS_TD
