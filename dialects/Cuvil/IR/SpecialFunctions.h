//===- SpecialFunctions.h - The functions of cuvil.math.special -*- C++ -*-===//
//
// The special functions the runtime computes (runtime/cpu/special.h,
// cuvil_special_<name>, double precision, PyTorch's algorithms): their
// names and arities, for the verifier, the evaluator and the lowering.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_DIALECT_CUVIL_IR_SPECIALFUNCTIONS_H
#define CUVIL_DIALECT_CUVIL_IR_SPECIALFUNCTIONS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

namespace mlir::cuvil {

/// Names of the one-argument functions (digamma, bessel_j0, ...).
llvm::ArrayRef<llvm::StringRef> unarySpecialFunctions();
/// Names of the two-argument ones, in torch.special's argument order
/// (polygamma(n, x), zeta(x, q), igamma(a, x), mvlgamma(x, p),
/// chebyshev_polynomial_t(x, n), ...).
llvm::ArrayRef<llvm::StringRef> binarySpecialFunctions();
/// Whether `name` is one of them, taking `arity` arguments.
bool isSpecialFunction(llvm::StringRef name, unsigned arity);

} // namespace mlir::cuvil

#endif // CUVIL_DIALECT_CUVIL_IR_SPECIALFUNCTIONS_H
