//===- SpecialFunctions.cpp - The functions of cuvil.math.special ---------===//
#include "dialects/Cuvil/IR/SpecialFunctions.h"

#include "llvm/ADT/STLExtras.h"

namespace mlir::cuvil {

llvm::ArrayRef<llvm::StringRef> unarySpecialFunctions() {
  static const llvm::StringRef names[] = {
      "digamma",
      "erfinv",
      "erfcx",
      "ndtr",
      "ndtri",
      "log_ndtr",
      "entr",
      "i0",
      "i0e",
      "i1",
      "i1e",
      "bessel_j0",
      "bessel_j1",
      "bessel_y0",
      "bessel_y1",
      "modified_bessel_i0",
      "modified_bessel_i1",
      "modified_bessel_k0",
      "modified_bessel_k1",
      "scaled_modified_bessel_k0",
      "scaled_modified_bessel_k1",
      "spherical_bessel_j0",
      "airy_ai"};
  return names;
}

llvm::ArrayRef<llvm::StringRef> binarySpecialFunctions() {
  static const llvm::StringRef names[] = {
      "polygamma",
      "zeta",
      "igamma",
      "igammac",
      "mvlgamma",
      "chebyshev_polynomial_t",
      "chebyshev_polynomial_u",
      "chebyshev_polynomial_v",
      "chebyshev_polynomial_w",
      "shifted_chebyshev_polynomial_t",
      "shifted_chebyshev_polynomial_u",
      "shifted_chebyshev_polynomial_v",
      "shifted_chebyshev_polynomial_w",
      "hermite_polynomial_h",
      "hermite_polynomial_he",
      "laguerre_polynomial_l",
      "legendre_polynomial_p"};
  return names;
}

bool isSpecialFunction(llvm::StringRef name, unsigned arity) {
  if (arity == 1)
    return llvm::is_contained(unarySpecialFunctions(), name);
  return arity == 2 && llvm::is_contained(binarySpecialFunctions(), name);
}

} // namespace mlir::cuvil
