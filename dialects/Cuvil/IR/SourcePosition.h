//===- SourcePosition.h - "file:line" of an op's location --------*- C++ -*-===//
#ifndef CUVIL_DIALECT_CUVIL_IR_SOURCEPOSITION_H
#define CUVIL_DIALECT_CUVIL_IR_SOURCEPOSITION_H

#include "mlir/IR/Location.h"
#include "mlir/IR/Operation.h"

#include <string>

namespace mlir::cuvil {

/// "file:line" of the first file location in `loc` (the model's own line
/// for an imported op), or "" when it has none.
std::string sourcePosition(Location loc);

/// The name of an arm of the model's control flow in branch coverage (the
/// library's counters and the reference evaluator's agree on it):
/// "m.py:12 if then", "m.py:12 if else", "m.py:30 loop body"; "" for an
/// op without a line of the model (the compiler's own dispatch branches).
std::string branchArmName(Operation *op, StringRef arm);

} // namespace mlir::cuvil

#endif
