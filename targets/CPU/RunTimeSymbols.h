//===- RunTimeSymbols.h - Which input symbol each run-time size is -*- C++ -*-===//
//
// The hybrid strategy's code assumes that two run-time sizes meeting in an
// element-wise op or a matrix product are equal (broadcasting a size of 1
// along a run-time dimension is not supported). The runtime checks that
// for inputs sharing a symbol; this finds, before any code is generated,
// ops where sizes of two different input symbols meet, through the ops
// whose sizes follow their operands' (element-wise ops, linear layers,
// matrix products, softmax and layer norm, views, transposes, slices,
// reductions, convolutions and poolings (their batch), fusion groups).
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_TARGETS_CPU_RUNTIMESYMBOLS_H
#define CUVIL_TARGETS_CPU_RUNTIMESYMBOLS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::cuvil::cpu {

/// Fails, with an error on the first op where run-time sizes of two
/// different symbols meet, naming both and the fix.
LogicalResult checkRunTimeSymbols(func::FuncOp entry);

} // namespace mlir::cuvil::cpu

#endif // CUVIL_TARGETS_CPU_RUNTIMESYMBOLS_H
