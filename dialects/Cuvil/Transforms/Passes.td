//===- Passes.td - Graph-level passes on the cuvil dialect -*- tablegen -*-===//
#ifndef CUVIL_DIALECT_CUVIL_TRANSFORMS_PASSES_TD
#define CUVIL_DIALECT_CUVIL_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def CuvilInferShapesPass : Pass<"cuvil-infer-shapes", "::mlir::func::FuncOp"> {
  let summary = "Refines dynamic result dimensions from the ops' shape rules.";
  let description = [{
    Walks the function in program order and re-infers every cuvil op's
    result types from its operands (InferTypeOpInterface). A dynamic (`?`)
    dimension that the rule can now compute becomes static; static sizes are
    never changed. Function results are updated to match what is returned.
    Uses that cannot take a refined type (ops of other dialects) get a
    `tensor.cast` back to the old type.

    ```mlir
    // Before: %0 = cuvil.act.relu %arg0 : tensor<2x3xf32>   (result ?x3 elsewhere)
    ```
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

def CuvilFoldConstantsPass : Pass<"cuvil-fold-constants", "::mlir::func::FuncOp"> {
  let summary = "Evaluates cuvil ops whose operands are all constants.";
  let description = [{
    Replaces a pure cuvil op whose operands are all `cuvil.constant` with the
    constant it computes, using the reference evaluator (so folding has
    exactly the semantics the tests check). Ops whose result would exceed
    `max-elements`, or whose evaluation fails (e.g. an index out of range),
    are left alone. Constants left without users are erased.
  }];
  let options = [
    Option<"maxElements", "max-elements", "int64_t", /*default=*/"65536",
           "Largest result (in elements) that is folded">,
  ];
  let dependentDialects = ["::mlir::cuvil::CuvilDialect"];
}

#endif // CUVIL_DIALECT_CUVIL_TRANSFORMS_PASSES_TD
