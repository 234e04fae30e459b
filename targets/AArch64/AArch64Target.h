//===- AArch64Target.h - The aarch64 target ---------------------*- C++ -*-===//
#ifndef CUVIL_TARGETS_AARCH64_AARCH64TARGET_H
#define CUVIL_TARGETS_AARCH64_AARCH64TARGET_H

namespace mlir::cuvil {
/// Registers "aarch64" (targets/Target.h).
void registerAArch64Target();
} // namespace mlir::cuvil

#endif // CUVIL_TARGETS_AARCH64_AARCH64TARGET_H
