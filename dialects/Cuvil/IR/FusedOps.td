//===- FusedOps.td - cuvil.fused.* fusion groups -----------*- tablegen -*-===//
//
// A fusion group is one kernel: an anchor (a convolution or a GEMM) with its
// element-wise epilogue, or a chain of element-wise ops, kept as the
// original cuvil ops inside an isolated region so that every stage (the
// reference evaluator, the memory planner, code generation) sees exactly
// what was fused and can still reason about each piece.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_DIALECT_CUVIL_IR_FUSEDOPS_TD
#define CUVIL_DIALECT_CUVIL_IR_FUSEDOPS_TD

include "dialects/Cuvil/IR/CuvilBase.td"
include "mlir/IR/RegionKindInterface.td"

def Cuvil_FusedGroupOp : Cuvil_Op<"fused.group",
    [Pure, IsolatedFromAbove, SingleBlock],
    /*inferTypes=*/0> {
  let summary = "Ops fused into one kernel: an anchor and its epilogue, or an element-wise chain.";
  let description = [{
    The body computes the group's result from its block arguments (one per
    input, same types) and yields it. `conv` and `gemm` groups start with
    their anchor (a `cuvil.conv.*` op; `cuvil.gemm.linear`, `matmul`,
    `batch_matmul` or `addmm`) applied to the first inputs, followed only
    by element-wise ops that keep the anchor's result type (bias, scale,
    residual add, activation); `elementwise` groups hold only element-wise
    ops. Intermediates are used only inside the group, so a kernel never
    writes them to memory.

    ```mlir
    %y = cuvil.fused.group conv (%x, %w, %b, %skip)
        : (tensor<1x64x56x56xf32>, tensor<64x64x3x3xf32>, tensor<64xf32>,
           tensor<1x64x56x56xf32>) -> tensor<1x64x56x56xf32> {
    ^bb0(%a: tensor<1x64x56x56xf32>, %wt: tensor<64x64x3x3xf32>,
         %bias: tensor<64xf32>, %res: tensor<1x64x56x56xf32>):
      %0 = cuvil.conv.conv2d %a, %wt, %bias stride [1, 1] padding [1, 1]
          dilation [1, 1] groups 1 : ... -> tensor<1x64x56x56xf32>
      %1 = cuvil.math.add %0, %res : ...
      %2 = cuvil.act.relu %1 : tensor<1x64x56x56xf32>
      cuvil.fused.yield %2 : tensor<1x64x56x56xf32>
    }
    ```
  }];
  let arguments = (ins Cuvil_FusionKindAttr:$kind, Variadic<Cuvil_Tensor>:$inputs);
  let results = (outs Cuvil_Tensor:$result);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    custom<FusionKind>($kind) `(` $inputs `)` attr-dict `:` functional-type($inputs, $result)
    $body
  }];
  let cuvilExtraDecl = [{
    /// The group's anchor (conv/gemm groups), else null.
    ::mlir::Operation *getAnchor();
    /// The yielded value inside the body.
    ::mlir::Value getYielded();
    /// Replaces the group by a copy of its body in front of it (the group's
    /// result by the yielded value) and erases the group.
    void inlineBody();
  }];
}

def Cuvil_FusedYieldOp : Cuvil_Op<"fused.yield",
    [Pure, Terminator, HasParent<"FusedGroupOp">], /*inferTypes=*/0> {
  let summary = "Ends a fusion group's body with its result.";
  let arguments = (ins Cuvil_Tensor:$value);
  let assemblyFormat = "$value attr-dict `:` type($value)";
}

#endif // CUVIL_DIALECT_CUVIL_IR_FUSEDOPS_TD
