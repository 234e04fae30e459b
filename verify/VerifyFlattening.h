//===- VerifyFlattening.h - The control-flow flattening check -------------===//
#ifndef CUVIL_VERIFY_VERIFYFLATTENING_H
#define CUVIL_VERIFY_VERIFYFLATTENING_H

namespace cuvil::verify {

/// Registers --cuvil-verify-flattening (cuvil-opt).
void registerVerifyFlatteningPass();

} // namespace cuvil::verify

#endif
