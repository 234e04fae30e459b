//===- Passes.td - Conversions out of the cuvil dialect ----*- tablegen -*-===//
#ifndef CUVIL_PASSES_CONVERSION_PASSES_TD
#define CUVIL_PASSES_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertCuvilToLinalgPass : Pass<"convert-cuvil-to-linalg", "::mlir::ModuleOp"> {
  let summary = "Lowers cuvil ops to linalg, tensor, arith and math on tensors.";
  let description = [{
    Every cuvil op becomes structured ops on tensors with the semantics of
    the reference evaluator: element-wise ops become one `linalg.generic`
    (NumPy broadcasting through indexing maps, operands converted to the
    computation type as PyTorch does), GEMMs become `linalg.matmul` /
    `batch_matmul` plus a bias generic, reductions become reduction
    generics, views become `tensor` reshapes and `linalg.transpose`. Fusion
    survives: a `cuvil.fused.group` is lowered inside an
    `scf.execute_region`, where its element-wise ops are fused into one
    `linalg.generic` (a producer used once, both inside the group; upstream
    linalg element-wise fusion), then inlined: an element-wise chain the
    graph pipeline grouped is one loop nest. Ops outside groups are not
    fused here. Unsigned 8-bit tensors become signless `i8` (arith
    works on signless integers); the ops keep treating them as unsigned.

    Failures only known at run time (a model's assertion, an index out of
    range) do not stop the generated code early: indices are clamped so
    nothing is read out of bounds, and a function with such checks gets one
    more result, an `i32` status that is 0 or the number of the first
    failed check, whose message is in the function's
    `cuvil.failure_messages`. `print` is left out, with a warning.

    Ops with no good loop-nest form (`cuvil.tensor.sort`) become calls of a
    runtime kernel on buffers (`bufferization.to_memref` of the operands,
    `memref.alloc` for the results), declared in the module on first use.

    An op without a lowering is an error at its source location, naming it;
    nothing is left half-converted.
  }];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect",
    "::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect", "::mlir::func::FuncDialect",
    "::mlir::bufferization::BufferizationDialect", "::mlir::memref::MemRefDialect"
  ];
}

#endif // CUVIL_PASSES_CONVERSION_PASSES_TD
