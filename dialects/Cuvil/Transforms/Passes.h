//===- Passes.h - Graph-level passes on the cuvil dialect -------*- C++ -*-===//
#ifndef CUVIL_DIALECT_CUVIL_TRANSFORMS_PASSES_H
#define CUVIL_DIALECT_CUVIL_TRANSFORMS_PASSES_H

#include "dialects/Cuvil/IR/CuvilDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"

namespace mlir::cuvil {

#define GEN_PASS_DECL
#include "dialects/Cuvil/Transforms/Passes.h.inc"

/// What cuvil-fold-quant-round-trips does, for passes that end with it.
void foldQuantRoundTrips(func::FuncOp f);
/// Ops that may run on per-tensor quantized storage in place of the real
/// values (max pooling, reshape, flatten): they select or move elements.
bool commutesWithDequantize(Operation *op);

/// Every loaded dialect's and registered op's canonicalization patterns
/// (what cuvil-simplify and cuvil-canonicalize apply).
RewritePatternSet canonicalizationPatterns(MLIRContext *context);

/// Registers the passes above (for cuvil-opt and the tools).
void registerCuvilTransformsPasses();

} // namespace mlir::cuvil

#endif // CUVIL_DIALECT_CUVIL_TRANSFORMS_PASSES_H
