//===- EffectOps.td - cuvil.effect.* observable side effects -*- tablegen -*-===//
//
// Ops whose effect is the point: a failed assertion stops the run with the
// model's message, a print shows values. They write to the outside world,
// so no pass may remove or reorder them past each other, and dead-code
// elimination keeps them and everything they use.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_DIALECT_CUVIL_IR_EFFECTOPS_TD
#define CUVIL_DIALECT_CUVIL_IR_EFFECTOPS_TD

include "dialects/Cuvil/IR/CuvilBase.td"

def Cuvil_AssertOp : Cuvil_Op<"effect.assert", [MemoryEffects<[MemWrite]>],
                              /*inferTypes=*/0> {
  let summary = "Stops the run with `message` when `condition` is false.";
  let description = [{
    A model's `assert` or `if ...: raise` whose condition depends on tensor
    data. `condition` is a 0-d `i1` tensor; when it is false the run fails
    with `message` (the exception class and the model's own text).

    ```mlir
    cuvil.effect.assert %ok, "AssertionError: scores must be finite" : tensor<i1>
    ```
  }];
  let arguments = (ins Cuvil_BoolTensor:$condition, StrAttr:$message);
  let assemblyFormat = "$condition `,` $message attr-dict `:` type($condition)";
}

def Cuvil_PrintOp : Cuvil_Op<"effect.print", [MemoryEffects<[MemWrite]>],
                             /*inferTypes=*/0> {
  let summary = "Prints a line: `format` with each `{}` replaced by a value.";
  let description = [{
    A model's `print(...)`: the parts known when the model was imported are
    already in `format`; each `{}` stands for one tensor, shown with its
    shape and first values; `{{` and `}}` print single braces.

    ```mlir
    cuvil.effect.print "logits: {} (step 3)" %y : tensor<1x10xf32>
    ```
  }];
  let arguments = (ins StrAttr:$format, Variadic<Cuvil_Tensor>:$values);
  let assemblyFormat = "$format ($values^ `:` type($values))? attr-dict";
  let cuvilExtraDecl = [{
    /// Splits `format` into the literal text around its `{}` placeholders
    /// (one more piece than placeholders), with `{{`/`}}` unescaped. Fails
    /// on a lone brace.
    static ::llvm::LogicalResult splitFormat(::llvm::StringRef format,
                                             ::llvm::SmallVectorImpl<std::string> &pieces);
  }];
}

#endif // CUVIL_DIALECT_CUVIL_IR_EFFECTOPS_TD
