//===- X86_64Target.cpp - The x86_64 target -------------------------------===//
//
// x86-64 Linux (glibc): by default the CPU cuvil-export runs on, with all
// its features, when that is an x86-64 machine; else x86-64-v2.
//
//===----------------------------------------------------------------------===//
#include "targets/X86_64/X86_64Target.h"

#include "targets/CPU/CpuBackend.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

#include <algorithm>

namespace mlir::cuvil {

void registerX86_64Target() {
  CpuTargetSpec spec;
  spec.name = "x86_64";
  spec.triple = "x86_64-unknown-linux-gnu";
  spec.emulation = "elf_x86_64";
  // libc, libm and the loader (thread-local storage: __tls_get_addr).
  spec.systemLibraries = {"/lib/x86_64-linux-gnu/libc.so.6", "/lib/x86_64-linux-gnu/libm.so.6",
                          "/lib64/ld-linux-x86-64.so.2"};
  spec.runtimeArchive = "libcuvil_runtime.a";
  spec.chooseCpu = [](const std::string &cpu, CpuTarget &t) {
    bool native = llvm::Triple(llvm::sys::getProcessTriple()).getArch() == llvm::Triple::x86_64;
    if (cpu.empty() && native) {
      t.cpu = llvm::sys::getHostCPUName().str();
      llvm::StringMap<bool> host = llvm::sys::getHostCPUFeatures();
      std::vector<std::string> names;
      for (auto &f : host)
        names.push_back((f.second ? "+" : "-") + f.first().str());
      std::sort(names.begin(), names.end()); // deterministic order
      for (const std::string &f : names)
        t.features += (t.features.empty() ? "" : ",") + f;
    } else {
      t.cpu = cpu.empty() ? "x86-64-v2" : cpu;
    }
  };
  registerCpuTarget(std::move(spec), "x86-64 Linux; default CPU: this machine's (--cpu: an LLVM x86 CPU name)");
}

} // namespace mlir::cuvil
