//===- Targets.h - Registration of the code generators ----------*- C++ -*-===//
//
// The tools that generate code (cuvil-opt for the lowering pipelines,
// cuvil-export) register the targets' dialects and passes here, next to
// passes/InitAll.h's target-independent ones.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_TARGETS_TARGETS_H
#define CUVIL_TARGETS_TARGETS_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace mlir::cuvil {

/// Dialects and interface models of every target's lowering.
void registerTargetDialects(DialectRegistry &registry);
/// Every target's passes and pipelines (cuvil-lower-to-llvm, ...).
void registerTargetPasses();

} // namespace mlir::cuvil

#endif // CUVIL_TARGETS_TARGETS_H
