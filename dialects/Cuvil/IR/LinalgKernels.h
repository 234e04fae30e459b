//===- LinalgKernels.h - The kernels of cuvil.linalg.kernel -----*- C++ -*-===//
//
// One table for the op's verifier (result types from operand types and
// flags), the reference evaluator and the code generator (the runtime
// symbol, its parameter array and scratch size, cuvil/kernel_abi.h).
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_DIALECT_CUVIL_IR_LINALGKERNELS_H
#define CUVIL_DIALECT_CUVIL_IR_LINALGKERNELS_H

#include "dialects/Cuvil/IR/TypeRules.h"

#include "mlir/IR/BuiltinTypes.h"

#include <string>

namespace mlir::cuvil {

/// The result types of `kernel` on `inputs` (static shapes), or an error.
LogicalResult inferLinalgKernelTypes(llvm::StringRef kernel, llvm::ArrayRef<int64_t> flags,
                                     TypeRange inputs, EmitErrorFn emitError,
                                     llvm::SmallVectorImpl<Type> &results);

/// How the runtime computes a verified kernel op.
struct LinalgKernelCall {
  std::string symbol;            ///< "cuvil_rt_lu_f32"
  llvm::SmallVector<int64_t> params;
  int64_t scratchDoubles = 0;
};
LinalgKernelCall describeLinalgKernelCall(llvm::StringRef kernel, llvm::ArrayRef<int64_t> flags,
                                          TypeRange inputs);

} // namespace mlir::cuvil

#endif // CUVIL_DIALECT_CUVIL_IR_LINALGKERNELS_H
