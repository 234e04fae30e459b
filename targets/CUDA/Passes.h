//===- Passes.h - CUDA code generation passes -------------------*- C++ -*-===//
#ifndef CUVIL_TARGETS_CUDA_PASSES_H
#define CUVIL_TARGETS_CUDA_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::cuvil::cuda {

#define GEN_PASS_DECL
#define GEN_PASS_REGISTRATION
#include "targets/CUDA/Passes.h.inc"

/// The module attribute the serialization writes: {kernels = [names],
/// images = [{kind = "ptx"|"cubin", sm = 80, data = "..."}]}.
inline constexpr llvm::StringLiteral kCudaModuleAttrName = "cuvil.cuda";
/// The suffix of a model function's CUDA copy.
inline constexpr llvm::StringLiteral kCudaFunctionSuffix = "__cuda";

} // namespace mlir::cuvil::cuda

#endif // CUVIL_TARGETS_CUDA_PASSES_H
