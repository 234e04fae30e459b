//===- Passes.h - CPU code generation passes --------------------*- C++ -*-===//
#ifndef CUVIL_TARGETS_CPU_PASSES_H
#define CUVIL_TARGETS_CPU_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::cuvil {

#define GEN_PASS_DECL
#define GEN_PASS_REGISTRATION
#include "targets/CPU/Passes.h.inc"

} // namespace mlir::cuvil

#endif // CUVIL_TARGETS_CPU_PASSES_H
