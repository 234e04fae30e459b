//===- Targets.h - Registration of the code generators ----------*- C++ -*-===//
//
// The targets built into the tools, registered in one place: adding one is
// a folder under targets/ and a line in registerAllTargets (README.md).
// The tools that generate code (cuvil-opt for the lowering pipelines,
// cuvil-export) register the targets' dialects and passes through here,
// next to passes/InitAll.h's target-independent ones.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_TARGETS_TARGETS_H
#define CUVIL_TARGETS_TARGETS_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace mlir::cuvil {

/// Registers every built-in target (targets/Target.h); idempotent.
void registerAllTargets();
/// Dialects and interface models of every registered target's lowering.
void registerTargetDialects(DialectRegistry &registry);
/// Every registered target's passes and pipelines (cuvil-lower-to-llvm, ...).
void registerTargetPasses();

} // namespace mlir::cuvil

#endif // CUVIL_TARGETS_TARGETS_H
