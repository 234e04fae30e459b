//===- InitAll.h - Register Cuvil's dialects and passes ---------*- C++ -*-===//
//
// One place that knows every dialect and pass the compiler tools use, so
// that cuvil-opt, the exporter and the tests register the same set.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_PASSES_INITALL_H
#define CUVIL_PASSES_INITALL_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace mlir::cuvil {

/// The cuvil dialect plus the upstream dialects cuvil IR uses (func, arith,
/// tensor, scf).
void registerAllDialects(DialectRegistry &registry);

/// Cuvil's passes and pipelines, plus the upstream core transforms
/// (canonicalize, cse, inline, symbol-dce, ...).
void registerAllPasses();

} // namespace mlir::cuvil

#endif // CUVIL_PASSES_INITALL_H
