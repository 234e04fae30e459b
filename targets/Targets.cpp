//===- Targets.cpp - Registration of the code generators ------------------===//
#include "targets/Targets.h"

#include "targets/AArch64/AArch64Target.h"
#include "targets/CUDA/CudaBackend.h"
#include "targets/NPU/NpuBackend.h"
#include "targets/Target.h"
#include "targets/X86_64/X86_64Target.h"

#include <mutex>

namespace mlir::cuvil {

void registerAllTargets() {
  static std::once_flag once;
  std::call_once(once, [] {
    registerX86_64Target();
    registerAArch64Target();
    registerNpuTarget();  // after x86_64, its host
    registerCudaTarget(); // the same
  });
}

void registerTargetDialects(DialectRegistry &registry) {
  registerAllTargets();
  for (const TargetInfo *t : registeredTargets())
    if (t->registerDialects)
      t->registerDialects(registry);
}

void registerTargetPasses() {
  registerAllTargets();
  for (const TargetInfo *t : registeredTargets())
    if (t->registerPasses)
      t->registerPasses();
}

} // namespace mlir::cuvil
