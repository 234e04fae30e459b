//===- Passes.h - NPU code generation passes --------------------*- C++ -*-===//
#ifndef CUVIL_TARGETS_NPU_PASSES_H
#define CUVIL_TARGETS_NPU_PASSES_H

#include "targets/NPU/IR/NpuDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::cuvil::npu {

#define GEN_PASS_DECL
#define GEN_PASS_REGISTRATION
#include "targets/NPU/Passes.h.inc"

} // namespace mlir::cuvil::npu

#endif // CUVIL_TARGETS_NPU_PASSES_H
