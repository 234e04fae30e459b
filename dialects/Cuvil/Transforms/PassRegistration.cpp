//===- PassRegistration.cpp - Register the cuvil graph passes -------------===//
#include "dialects/Cuvil/Transforms/Passes.h"

namespace mlir::cuvil {
namespace {
#define GEN_PASS_REGISTRATION
#include "dialects/Cuvil/Transforms/Passes.h.inc"
} // namespace

void registerCuvilTransformsPasses() { registerPasses(); }
} // namespace mlir::cuvil
