//===- Passes.h - Graph-level passes on the cuvil dialect -------*- C++ -*-===//
#ifndef CUVIL_DIALECT_CUVIL_TRANSFORMS_PASSES_H
#define CUVIL_DIALECT_CUVIL_TRANSFORMS_PASSES_H

#include "dialects/Cuvil/IR/CuvilDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

namespace mlir::cuvil {

#define GEN_PASS_DECL
#include "dialects/Cuvil/Transforms/Passes.h.inc"

/// Registers the passes above (for cuvil-opt and the tools).
void registerCuvilTransformsPasses();

} // namespace mlir::cuvil

#endif // CUVIL_DIALECT_CUVIL_TRANSFORMS_PASSES_H
