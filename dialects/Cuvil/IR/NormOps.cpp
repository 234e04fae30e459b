//===- NormOps.cpp - cuvil.norm.* -----------------------------------------===//
#include "dialects/Cuvil/IR/CuvilOps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::cuvil;

#define GET_OP_CLASSES
#include "dialects/Cuvil/IR/NormOps.cpp.inc"

namespace {

RankedTensorType tensorType(Value v) {
  return llvm::cast<RankedTensorType>(v.getType());
}

/// Checks that an optional per-feature operand has `shape` and the input's
/// element type.
LogicalResult checkParam(Value v, StringRef name, ArrayRef<int64_t> shape,
                         Type elementType, EmitErrorFn emitError) {
  if (!v)
    return success();
  RankedTensorType t = tensorType(v);
  if (t.getElementType() != elementType)
    return emitError() << name << " element type " << t.getElementType()
                       << " differs from input element type " << elementType;
  if (!areCompatibleShapes(t.getShape(), shape))
    return emitError() << name << " must have shape " << formatShape(shape)
                       << ", got " << formatShape(t.getShape());
  return success();
}

/// Any eps PyTorch takes (a negative one too: it only shifts the variance);
/// NaN cannot be meant.
LogicalResult checkEps(double eps, EmitErrorFn emitError) {
  if (std::isnan(eps))
    return emitError() << "eps must be a number, got NaN";
  return success();
}

} // namespace

LogicalResult BatchNormOp::inferResultTypes(Adaptor adaptor,
                                            EmitErrorFn emitError,
                                            SmallVectorImpl<Type> &types) {
  RankedTensorType in = tensorType(adaptor.getInput());
  if (in.getRank() < 2)
    return emitError() << "input must have rank >= 2 ([N, C, ...]), got " << in;
  SmallVector<int64_t> c = {in.getDimSize(1)};
  Type elt = in.getElementType();
  if (failed(checkParam(adaptor.getMean(), "mean", c, elt, emitError)) ||
      failed(checkParam(adaptor.getVar(), "var", c, elt, emitError)) ||
      failed(checkParam(adaptor.getWeight(), "weight", c, elt, emitError)) ||
      failed(checkParam(adaptor.getBias(), "bias", c, elt, emitError)) ||
      failed(checkEps(adaptor.getEps().convertToDouble(), emitError)))
    return failure();
  types.push_back(in);
  return success();
}

LogicalResult LayerNormOp::inferResultTypes(Adaptor adaptor,
                                            EmitErrorFn emitError,
                                            SmallVectorImpl<Type> &types) {
  RankedTensorType in = tensorType(adaptor.getInput());
  ArrayRef<int64_t> norm = adaptor.getNormalizedShape();
  if (norm.empty())
    return emitError() << "normalized_shape must not be empty";
  for (int64_t d : norm)
    if (d < 1)
      return emitError() << "normalized_shape entries must be >= 1, got ["
                         << norm << "]";
  if (in.getRank() < static_cast<int64_t>(norm.size()) ||
      !areCompatibleShapes(in.getShape().take_back(norm.size()), norm))
    return emitError() << "the trailing dimensions of input "
                       << formatShape(in.getShape())
                       << " must equal normalized_shape [" << norm << "]";
  Type elt = in.getElementType();
  if (failed(checkParam(adaptor.getWeight(), "weight", norm, elt, emitError)) ||
      failed(checkParam(adaptor.getBias(), "bias", norm, elt, emitError)) ||
      failed(checkEps(adaptor.getEps().convertToDouble(), emitError)))
    return failure();
  types.push_back(in);
  return success();
}

LogicalResult GroupNormOp::inferResultTypes(Adaptor adaptor,
                                            EmitErrorFn emitError,
                                            SmallVectorImpl<Type> &types) {
  RankedTensorType in = tensorType(adaptor.getInput());
  if (in.getRank() < 2)
    return emitError() << "input must have rank >= 2 ([N, C, ...]), got " << in;
  int64_t groups = adaptor.getNumGroups();
  if (groups < 1)
    return emitError() << "num_groups must be >= 1, got " << groups;
  int64_t c = in.getDimSize(1);
  if (!ShapedType::isDynamic(c) && c % groups != 0)
    return emitError() << "channels (" << c
                       << ") are not divisible by num_groups (" << groups
                       << ")";
  Type elt = in.getElementType();
  if (failed(checkParam(adaptor.getWeight(), "weight", {c}, elt, emitError)) ||
      failed(checkParam(adaptor.getBias(), "bias", {c}, elt, emitError)) ||
      failed(checkEps(adaptor.getEps().convertToDouble(), emitError)))
    return failure();
  types.push_back(in);
  return success();
}
