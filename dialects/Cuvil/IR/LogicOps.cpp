//===- LogicOps.cpp - cuvil.logic.* ---------------------------------------===//
#include "dialects/Cuvil/IR/CuvilOps.h"

using namespace mlir;
using namespace mlir::cuvil;

#define GET_OP_CLASSES
#include "dialects/Cuvil/IR/LogicOps.cpp.inc"

LogicalResult LogicalNotOp::inferResultTypes(Adaptor adaptor, EmitErrorFn,
                                             SmallVectorImpl<Type> &types) {
  auto input = llvm::cast<RankedTensorType>(adaptor.getInput().getType());
  types.push_back(input.clone(IntegerType::get(input.getContext(), 1)));
  return success();
}

OpFoldResult LogicalNotOp::fold(FoldAdaptor) {
  // not(not(x)) -> x, for i1 x only (otherwise it is x != 0).
  if (auto inner = getInput().getDefiningOp<LogicalNotOp>())
    if (inner.getInput().getType() == getType())
      return inner.getInput();
  return {};
}

LogicalResult WhereOp::inferResultTypes(Adaptor adaptor, EmitErrorFn emitError,
                                        SmallVectorImpl<Type> &types) {
  auto c = llvm::cast<RankedTensorType>(adaptor.getCondition().getType());
  auto t = llvm::cast<RankedTensorType>(adaptor.getTrueValue().getType());
  auto f = llvm::cast<RankedTensorType>(adaptor.getFalseValue().getType());
  SmallVector<int64_t> tf, shape;
  if (failed(broadcastShapes(t.getShape(), f.getShape(), tf)) ||
      failed(broadcastShapes(c.getShape(), tf, shape)))
    return emitError() << "operand shapes " << formatShape(c.getShape())
                       << ", " << formatShape(t.getShape()) << " and "
                       << formatShape(f.getShape()) << " do not broadcast";
  types.push_back(RankedTensorType::get(shape, resultElementType({t, f})));
  return success();
}
