//===- X86_64Target.h - The x86_64 target -----------------------*- C++ -*-===//
#ifndef CUVIL_TARGETS_X86_64_X86_64TARGET_H
#define CUVIL_TARGETS_X86_64_X86_64TARGET_H

namespace mlir::cuvil {
/// Registers "x86_64" (targets/Target.h).
void registerX86_64Target();
} // namespace mlir::cuvil

#endif // CUVIL_TARGETS_X86_64_X86_64TARGET_H
