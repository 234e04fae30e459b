//===- Passes.h - Conversions out of the cuvil dialect ----------*- C++ -*-===//
#ifndef CUVIL_PASSES_CONVERSION_PASSES_H
#define CUVIL_PASSES_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::cuvil {

#define GEN_PASS_DECL
#define GEN_PASS_REGISTRATION
#include "passes/Conversion/Passes.h.inc"

/// Registers the passes above (for cuvil-opt and the tools).
void registerConversionPasses();

} // namespace mlir::cuvil

#endif // CUVIL_PASSES_CONVERSION_PASSES_H
