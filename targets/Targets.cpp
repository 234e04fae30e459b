//===- Targets.cpp - Registration of the code generators ------------------===//
#include "targets/Targets.h"

#include "targets/CPU/CpuPipeline.h"

namespace mlir::cuvil {

void registerTargetDialects(DialectRegistry &registry) { registerCpuLoweringDialects(registry); }

void registerTargetPasses() { registerCpuLoweringPipeline(); }

} // namespace mlir::cuvil
