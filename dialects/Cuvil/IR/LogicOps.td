//===- LogicOps.td - cuvil.logic.* comparisons and selection -*- tablegen -*-===//
//
// Comparisons and logical ops broadcast their operands like the arithmetic
// ops and produce i1 tensors. `where` selects between two broadcast,
// promoted operands.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_DIALECT_CUVIL_IR_LOGICOPS_TD
#define CUVIL_DIALECT_CUVIL_IR_LOGICOPS_TD

include "dialects/Cuvil/IR/CuvilBase.td"

class Cuvil_CompareOp<string name, string formula>
    : Cuvil_BinaryOp<"logic." # name, "Any", "Compare"> {
  let summary = "Element-wise " # formula # " with broadcasting; i1 result.";
  let description = "Compares `" # formula # "` after converting both operands "
      # "to their promoted type (PyTorch's result_type). Any comparison with "
      # "NaN is false except `ne`.\n\n"
      # "```mlir\n%m = cuvil.logic." # name
      # " %x, %y : tensor<2x3xf32>, tensor<f32> -> tensor<2x3xi1>\n```";
}

def Cuvil_EqOp : Cuvil_CompareOp<"eq", "lhs == rhs">;
def Cuvil_NeOp : Cuvil_CompareOp<"ne", "lhs != rhs">;
def Cuvil_LtOp : Cuvil_CompareOp<"lt", "lhs < rhs">;
def Cuvil_LeOp : Cuvil_CompareOp<"le", "lhs <= rhs">;
def Cuvil_GtOp : Cuvil_CompareOp<"gt", "lhs > rhs">;
def Cuvil_GeOp : Cuvil_CompareOp<"ge", "lhs >= rhs">;

class Cuvil_LogicalBinaryOp<string name, string formula>
    : Cuvil_BinaryOp<"logic." # name, "Any", "Logical"> {
  let summary = "Element-wise " # formula # " on truth values; i1 result.";
  let description = "Each operand is true where it is non-zero. Shapes "
      # "broadcast.\n\n```mlir\n%m = cuvil.logic." # name
      # " %a, %b : tensor<4xi1>, tensor<4xf32> -> tensor<4xi1>\n```";
}

def Cuvil_LogicalAndOp : Cuvil_LogicalBinaryOp<"logical_and", "lhs and rhs">;
def Cuvil_LogicalOrOp : Cuvil_LogicalBinaryOp<"logical_or", "lhs or rhs">;
def Cuvil_LogicalXorOp : Cuvil_LogicalBinaryOp<"logical_xor", "lhs xor rhs">;

def Cuvil_LogicalNotOp : Cuvil_Op<"logic.logical_not", [Pure, Cuvil_Elementwise]> {
  let summary = "Element-wise logical not (x == 0); i1 result.";
  let description = [{
    ```mlir
    %m = cuvil.logic.logical_not %x : tensor<4xf32> -> tensor<4xi1>
    ```
  }];
  let arguments = (ins Cuvil_Tensor:$input);
  let results = (outs Cuvil_BoolTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasFolder = 1;
}

def Cuvil_WhereOp : Cuvil_Op<"logic.where", [Pure, Cuvil_Elementwise]> {
  let summary = "Selects `true_value` where `condition` holds, else `false_value`.";
  let description = [{
    `torch.where(condition, x, y)`. The three operands broadcast together;
    the result element type is the promotion of the two values' types.

    ```mlir
    %r = cuvil.logic.where %c, %x, %y
        : tensor<2x3xi1>, tensor<2x3xf32>, tensor<f32> -> tensor<2x3xf32>
    ```
  }];
  let arguments = (ins Cuvil_BoolTensor:$condition, Cuvil_Tensor:$true_value,
                       Cuvil_Tensor:$false_value);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat = [{
    $condition `,` $true_value `,` $false_value attr-dict `:` type($condition)
    `,` type($true_value) `,` type($false_value) `->` type($result)
  }];
}

#endif // CUVIL_DIALECT_CUVIL_IR_LOGICOPS_TD
