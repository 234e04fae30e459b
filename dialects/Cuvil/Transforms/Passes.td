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

def CuvilSimplifyPass : Pass<"cuvil-simplify", "::mlir::func::FuncOp"> {
  let summary = "Applies the cuvil ops' folders and canonicalization patterns, removing nothing else.";
  let description = [{
    Canonicalization for the graph pipeline: identities fold away (a
    same-dtype cast, a reshape to the same shape, an identity permutation,
    relu of relu, x + -0.0, ...), view chains collapse (reshape of
    reshape, permute of permute, squeeze/unsqueeze/flatten to reshape), and
    patterns rewrite ops, repeating until nothing changes. Unlike MLIR's
    `canonicalize`, it never erases an op just because its result is
    unused: dead code is `cuvil-dce`'s job, so switching that off keeps
    every op.
  }];
  let options = [
    Option<"maxIterations", "max-iterations", "int64_t", /*default=*/"10",
           "Sweeps over the function before giving up on a fixed point">,
  ];
  let statistics = [
    Statistic<"numFolded", "num-folded", "Ops folded away">,
    Statistic<"numRewritten", "num-rewritten", "Patterns applied">,
  ];
}

def CuvilDeadCodeEliminationPass
    : Pass<"cuvil-dce", "::mlir::func::FuncOp"> {
  let summary = "Removes side-effect-free operations whose results are unused.";
  let description = [{
    Erases every operation whose results have no uses and that has no side
    effects (MLIR's memory-effect interfaces, looking into regions: an
    `scf.if` that only computes unused values goes, one that holds a
    `cuvil.effect.print` stays), repeating until nothing changes. Ops with
    effects (`cuvil.effect.assert`, `cuvil.effect.print`) and the values
    they use are never removed. The pipeline's `dead-code-elimination`
    switch turns this pass off.

    ```mlir
    %unused = cuvil.act.relu %x : tensor<4xf32>          // removed
    cuvil.effect.print "{}" %y : tensor<4xf32>             // kept, with %y
    ```
  }];
  let statistics = [
    Statistic<"numErased", "num-erased", "Operations removed">,
  ];
}

#endif // CUVIL_DIALECT_CUVIL_TRANSFORMS_PASSES_TD
