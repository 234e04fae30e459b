//===- UnusedLLVMTargets.cpp - LLVM back ends Cuvil does not compile for ---===//
//
// lld's ELF driver (linked in: cuvil-export links libinference.so in-process)
// initialises every LLVM target Debian's LLVM was built with, for link-time
// optimisation of bitcode inputs, which Cuvil never gives it. With static
// LLVM that reference alone links all of them into each tool: cuvil-export
// went from 126 to 189 MB, and its start from 45 to 70 ms of CPU relocating
// and initialising back ends it never uses. These empty initialisers, linked
// into each executable before LLVM's archives, answer the reference
// instead, so those archives are never pulled in.
//
// Only targets Cuvil does not compile for belong here: x86_64, aarch64 and
// NVPTX (cuda) are Cuvil's (test/targets/TargetRegistryTest.cpp checks that
// their back ends are registered and RISC-V's is not). A new target's back
// end must be taken off this list.
//
//===----------------------------------------------------------------------===//

#define CUVIL_UNUSED_TARGET(T)                                                                     \
  void LLVMInitialize##T##TargetInfo() {}                                                          \
  void LLVMInitialize##T##Target() {}                                                              \
  void LLVMInitialize##T##TargetMC() {}                                                            \
  void LLVMInitialize##T##AsmPrinter() {}                                                          \
  void LLVMInitialize##T##AsmParser() {}

extern "C" {
CUVIL_UNUSED_TARGET(AMDGPU)
CUVIL_UNUSED_TARGET(ARM)
CUVIL_UNUSED_TARGET(AVR)
CUVIL_UNUSED_TARGET(BPF)
CUVIL_UNUSED_TARGET(Hexagon)
CUVIL_UNUSED_TARGET(Lanai)
CUVIL_UNUSED_TARGET(LoongArch)
CUVIL_UNUSED_TARGET(M68k)
CUVIL_UNUSED_TARGET(MSP430)
CUVIL_UNUSED_TARGET(Mips)
CUVIL_UNUSED_TARGET(PowerPC)
CUVIL_UNUSED_TARGET(RISCV)
CUVIL_UNUSED_TARGET(Sparc)
CUVIL_UNUSED_TARGET(SystemZ)
CUVIL_UNUSED_TARGET(VE)
CUVIL_UNUSED_TARGET(WebAssembly)
CUVIL_UNUSED_TARGET(XCore)
CUVIL_UNUSED_TARGET(Xtensa)
}
