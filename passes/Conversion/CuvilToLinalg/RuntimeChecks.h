//===- RuntimeChecks.h - Failures detected while the model runs -*- C++ -*-===//
//
// Some failures are only known at run time: a model's own assertion, an
// index out of range in a gather. Compiled code never stops early: every
// check contributes its failed flag, indices are clamped so that a failed
// check never reads out of bounds, and the model function gets one more
// result, an i32 status: 0, or k when check k (program order, from 1) was
// the first to fail. The messages go on the function as
// `cuvil.failure_messages`, which the library's descriptor carries so that
// the runtime can say what went wrong.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_PASSES_CONVERSION_CUVILTOLINALG_RUNTIMECHECKS_H
#define CUVIL_PASSES_CONVERSION_CUVILTOLINALG_RUNTIMECHECKS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::cuvil::lowering {

/// Function attribute: the messages of the checks, in status order.
inline constexpr llvm::StringLiteral kFailureMessagesAttr = "cuvil.failure_messages";

/// Numbers the ops of `func` that need run-time checks (before the
/// conversion) and records their messages on the function.
void numberRuntimeChecks(func::FuncOp func);

/// Whether `cuvilOp` was numbered for a check (not proven unnecessary).
bool needsRuntimeCheck(Operation *cuvilOp);

/// Records, while `cuvilOp` is lowered, that its check failed when the i1
/// `failed` is true.
void recordCheck(OpBuilder &b, Location loc, Operation *cuvilOp, Value failed);

/// After the conversion: folds the recorded checks of `func` into the i32
/// status result; checks inside scf.if and scf.while reach it through one
/// more result of each (a loop stops at its first failed check). Fails
/// (with a diagnostic) for a check in any other region.
LogicalResult addStatusResult(func::FuncOp func);

/// Whether any element of the integer tensor `indices` lies outside
/// [-size, size) (negative indices count from the end), as an i1.
Value anyIndexOutOfRange(OpBuilder &b, Location loc, Value indices, int64_t size);
/// The same against a run-time `size` (an index).
Value anyIndexOutOfRange(OpBuilder &b, Location loc, Value indices, Value size);

/// An integer index element as an `index` in [0, size): negative values
/// count from the end, the rest is clamped (the check reports those).
Value wrapAndClampIndex(OpBuilder &b, Location loc, Value index, int64_t size);
/// The same against a run-time `size` (an index).
Value wrapAndClampIndex(OpBuilder &b, Location loc, Value index, Value size);

} // namespace mlir::cuvil::lowering

#endif // CUVIL_PASSES_CONVERSION_CUVILTOLINALG_RUNTIMECHECKS_H
