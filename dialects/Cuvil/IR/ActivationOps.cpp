//===- ActivationOps.cpp - cuvil.act.* ------------------------------------===//
//
// Rules of the activation ops are generated from ActivationOps.td (they keep
// their operand's type); this file adds the folders.
//
//===----------------------------------------------------------------------===//
#include "dialects/Cuvil/IR/CuvilOps.h"

using namespace mlir;
using namespace mlir::cuvil;

#define GET_OP_CLASSES
#include "dialects/Cuvil/IR/ActivationOps.cpp.inc"

OpFoldResult ReluOp::fold(FoldAdaptor) {
  // relu(relu(x)) -> relu(x)
  if (auto inner = getInput().getDefiningOp<ReluOp>())
    return inner.getResult();
  return {};
}
