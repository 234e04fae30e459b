//===- ValidateRewrites.h - The translation-validation pass ---------------===//
#ifndef CUVIL_VERIFY_VALIDATEREWRITES_H
#define CUVIL_VERIFY_VALIDATEREWRITES_H

namespace cuvil::verify {

/// Registers --cuvil-validate-rewrites (cuvil-opt).
void registerValidateRewritesPass();

} // namespace cuvil::verify

#endif
