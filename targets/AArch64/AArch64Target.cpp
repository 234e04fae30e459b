//===- AArch64Target.cpp - The aarch64 target -----------------------------===//
//
// AArch64 Linux (glibc, Debian's cross sysroot): by default Armv8.2-A with
// NEON and the dot product, which every current server and phone core has.
//
//===----------------------------------------------------------------------===//
#include "targets/AArch64/AArch64Target.h"

#include "targets/CPU/CpuBackend.h"

namespace mlir::cuvil {

void registerAArch64Target() {
  CpuTargetSpec spec;
  spec.name = "aarch64";
  spec.triple = "aarch64-unknown-linux-gnu";
  spec.emulation = "aarch64linux";
  spec.systemLibraries = {"/usr/aarch64-linux-gnu/lib/libc.so.6", "/usr/aarch64-linux-gnu/lib/libm.so.6",
                          "/usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1"};
  spec.runtimeArchive = "aarch64/libcuvil_runtime.a";
  spec.chooseCpu = [](const std::string &cpu, CpuTarget &t) {
    t.cpu = cpu.empty() ? "generic" : cpu;
    if (cpu.empty())
      t.features = "+v8.2a,+neon,+fp-armv8,+dotprod";
  };
  registerCpuTarget(std::move(spec),
                    "AArch64 Linux; default CPU: Armv8.2-A with NEON and dotprod (--cpu: an LLVM AArch64 CPU name)");
}

} // namespace mlir::cuvil
