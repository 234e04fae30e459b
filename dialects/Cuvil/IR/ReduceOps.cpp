//===- ReduceOps.cpp - cuvil.reduce.* -------------------------------------===//
//
// Value reductions share inferReduceResult (generated from ReduceOps.td);
// the arg reductions have their own rule here.
//
//===----------------------------------------------------------------------===//
#include "dialects/Cuvil/IR/CuvilOps.h"

using namespace mlir;
using namespace mlir::cuvil;

#define GET_OP_CLASSES
#include "dialects/Cuvil/IR/ReduceOps.cpp.inc"

namespace {
template <typename OpAdaptor>
LogicalResult inferArgReduce(OpAdaptor adaptor, EmitErrorFn emitError,
                             SmallVectorImpl<Type> &types) {
  auto in = llvm::cast<RankedTensorType>(adaptor.getInput().getType());
  if (failed(checkElementKind(in, ElementKind::Numeric, "operand", emitError)))
    return failure();
  Type i64 = IntegerType::get(in.getContext(), 64);
  SmallVector<int64_t> shape;
  if (std::optional<int64_t> dim = adaptor.getDim()) {
    if (failed(checkDim(*dim, in.getRank(), "dim", emitError)))
      return failure();
    if (in.getRank() > 0)
      shape = reducedShape(in.getShape(), {*dim}, adaptor.getKeepdim());
  } else if (adaptor.getKeepdim()) {
    shape.assign(in.getRank(), 1);
  }
  types.push_back(RankedTensorType::get(shape, i64));
  return success();
}
} // namespace

LogicalResult ArgmaxOp::inferResultTypes(Adaptor a, EmitErrorFn e,
                                         SmallVectorImpl<Type> &t) {
  return inferArgReduce(a, e, t);
}
LogicalResult ArgminOp::inferResultTypes(Adaptor a, EmitErrorFn e,
                                         SmallVectorImpl<Type> &t) {
  return inferArgReduce(a, e, t);
}

namespace {
LogicalResult checkScan(RankedTensorType in, int64_t dim, ScanKind kind, EmitErrorFn emitError) {
  if (failed(checkDim(dim, std::max<int64_t>(in.getRank(), 1), "dim", emitError)))
    return failure();
  if (kind == ScanKind::LogSumExp)
    return checkElementKind(in, ElementKind::Float, "operand", emitError);
  if (kind == ScanKind::Sum || kind == ScanKind::Prod)
    return checkElementKind(in, ElementKind::Numeric, "operand", emitError);
  return success();
}
} // namespace

LogicalResult CumulativeOp::inferResultTypes(Adaptor a, EmitErrorFn emitError,
                                             SmallVectorImpl<Type> &types) {
  auto in = llvm::cast<RankedTensorType>(a.getInput().getType());
  if (failed(checkScan(in, a.getDim(), a.getKind(), emitError)))
    return failure();
  types.push_back(in);
  return success();
}

LogicalResult CumulativeIndexOp::inferResultTypes(Adaptor a, EmitErrorFn emitError,
                                                  SmallVectorImpl<Type> &types) {
  auto in = llvm::cast<RankedTensorType>(a.getInput().getType());
  if (a.getKind() != ScanKind::Max && a.getKind() != ScanKind::Min)
    return emitError() << "kind must be max or min";
  if (failed(checkScan(in, a.getDim(), a.getKind(), emitError)))
    return failure();
  types.push_back(in.clone(IntegerType::get(in.getContext(), 64)));
  return success();
}
