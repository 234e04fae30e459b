//===- ConvOps.cpp - cuvil.conv.* -----------------------------------------===//
//
// One rule for every spatial rank: the op classes only differ in
// kSpatialRank.
//
//===----------------------------------------------------------------------===//
#include "dialects/Cuvil/IR/CuvilOps.h"

using namespace mlir;
using namespace mlir::cuvil;

#define GET_OP_CLASSES
#include "dialects/Cuvil/IR/ConvOps.cpp.inc"

namespace {

RankedTensorType tensorType(Value v) {
  return llvm::cast<RankedTensorType>(v.getType());
}
bool isStatic(int64_t d) { return !ShapedType::isDynamic(d); }

/// Checks what convolutions and transposed convolutions share: ranks, the
/// spatial attributes, groups, bias and element types.
LogicalResult checkConvCommon(int64_t spatialRank, RankedTensorType in,
                              RankedTensorType w, Value bias,
                              ArrayRef<int64_t> stride,
                              ArrayRef<int64_t> padding,
                              ArrayRef<int64_t> dilation, int64_t groups,
                              EmitErrorFn emitError) {
  int64_t rank = spatialRank + 2;
  if (in.getRank() != rank)
    return emitError() << "input must be rank " << rank
                       << " ([N, C, spatial...]), got " << in;
  if (w.getRank() != rank)
    return emitError() << "weight must be rank " << rank << ", got " << w;
  if (failed(checkSpatialAttr(stride, spatialRank, 1, "stride", emitError)) ||
      failed(checkSpatialAttr(padding, spatialRank, 0, "padding", emitError)) ||
      failed(checkSpatialAttr(dilation, spatialRank, 1, "dilation", emitError)))
    return failure();
  if (groups < 1)
    return emitError() << "groups must be >= 1, got " << groups;
  if (w.getElementType() != in.getElementType())
    return emitError() << "weight element type " << w.getElementType()
                       << " differs from input element type "
                       << in.getElementType();
  if (bias) {
    RankedTensorType b = tensorType(bias);
    if (b.getElementType() != in.getElementType())
      return emitError() << "bias element type " << b.getElementType()
                         << " differs from input element type "
                         << in.getElementType();
    if (b.getRank() != 1)
      return emitError() << "bias must be rank 1, got " << b;
  }
  int64_t cin = in.getDimSize(1);
  if (isStatic(cin) && cin % groups != 0)
    return emitError() << "input channels (" << cin
                       << ") are not divisible by groups (" << groups << ")";
  return success();
}

LogicalResult checkBiasSize(Value bias, int64_t cout, EmitErrorFn emitError) {
  if (!bias)
    return success();
  int64_t b = tensorType(bias).getDimSize(0);
  if (isStatic(b) && isStatic(cout) && b != cout)
    return emitError() << "bias has " << b << " entries, expected " << cout
                       << " (output channels)";
  return success();
}

template <typename OpAdaptor>
LogicalResult inferConv(int64_t spatialRank, OpAdaptor adaptor,
                        EmitErrorFn emitError, SmallVectorImpl<Type> &types) {
  RankedTensorType in = tensorType(adaptor.getInput());
  RankedTensorType w = tensorType(adaptor.getWeight());
  ArrayRef<int64_t> stride = adaptor.getStride(), padding = adaptor.getPadding(),
                    dilation = adaptor.getDilation();
  int64_t groups = adaptor.getGroups();
  if (failed(checkConvCommon(spatialRank, in, w, adaptor.getBias(), stride,
                             padding, dilation, groups, emitError)))
    return failure();
  int64_t cin = in.getDimSize(1), cout = w.getDimSize(0);
  if (isStatic(cin) && isStatic(w.getDimSize(1)) &&
      w.getDimSize(1) * groups != cin)
    return emitError() << "weight expects " << w.getDimSize(1) * groups
                       << " input channels (" << w.getDimSize(1) << " x "
                       << groups << " groups), input has " << cin;
  if (isStatic(cout) && cout % groups != 0)
    return emitError() << "output channels (" << cout
                       << ") are not divisible by groups (" << groups << ")";
  if (failed(checkBiasSize(adaptor.getBias(), cout, emitError)))
    return failure();
  SmallVector<int64_t> shape = {in.getDimSize(0), cout};
  for (int64_t i = 0; i < spatialRank; ++i) {
    int64_t size = in.getDimSize(2 + i), k = w.getDimSize(2 + i);
    if (!isStatic(k) || !isStatic(size)) {
      shape.push_back(ShapedType::kDynamic);
      continue;
    }
    std::optional<int64_t> out =
        windowOutputSize(size, k, stride[i], padding[i], dilation[i], false);
    if (!out || *out < 1)
      return emitError() << "spatial dimension " << i << ": input size "
                         << size << " (padded by " << padding[i]
                         << " on each side) is smaller than the dilated kernel ("
                         << dilation[i] * (k - 1) + 1 << ")";
    shape.push_back(*out);
  }
  types.push_back(RankedTensorType::get(shape, in.getElementType()));
  return success();
}

template <typename OpAdaptor>
LogicalResult inferConvTranspose(int64_t spatialRank, OpAdaptor adaptor,
                                 EmitErrorFn emitError,
                                 SmallVectorImpl<Type> &types) {
  RankedTensorType in = tensorType(adaptor.getInput());
  RankedTensorType w = tensorType(adaptor.getWeight());
  ArrayRef<int64_t> stride = adaptor.getStride(), padding = adaptor.getPadding(),
                    dilation = adaptor.getDilation(),
                    outPad = adaptor.getOutputPadding();
  int64_t groups = adaptor.getGroups();
  if (failed(checkConvCommon(spatialRank, in, w, adaptor.getBias(), stride,
                             padding, dilation, groups, emitError)) ||
      failed(checkSpatialAttr(outPad, spatialRank, 0, "output_padding",
                              emitError)))
    return failure();
  for (int64_t i = 0; i < spatialRank; ++i)
    if (outPad[i] >= stride[i] && outPad[i] >= dilation[i])
      return emitError() << "output_padding (" << outPad[i]
                         << ") must be smaller than stride (" << stride[i]
                         << ") or dilation (" << dilation[i] << ")";
  int64_t cin = in.getDimSize(1);
  if (isStatic(cin) && isStatic(w.getDimSize(0)) && w.getDimSize(0) != cin)
    return emitError() << "weight expects " << w.getDimSize(0)
                       << " input channels ([C_in, C_out / groups, k...]), "
                          "input has "
                       << cin;
  int64_t cout = isStatic(w.getDimSize(1)) ? w.getDimSize(1) * groups
                                           : ShapedType::kDynamic;
  if (failed(checkBiasSize(adaptor.getBias(), cout, emitError)))
    return failure();
  SmallVector<int64_t> shape = {in.getDimSize(0), cout};
  for (int64_t i = 0; i < spatialRank; ++i) {
    int64_t size = in.getDimSize(2 + i), k = w.getDimSize(2 + i);
    if (!isStatic(k) || !isStatic(size)) {
      shape.push_back(ShapedType::kDynamic);
      continue;
    }
    int64_t out = (size - 1) * stride[i] - 2 * padding[i] +
                  dilation[i] * (k - 1) + outPad[i] + 1;
    if (out < 1)
      return emitError() << "spatial dimension " << i
                         << ": the output size would be " << out
                         << " (too much padding for this input and kernel)";
    shape.push_back(out);
  }
  types.push_back(RankedTensorType::get(shape, in.getElementType()));
  return success();
}

} // namespace

LogicalResult Conv1DOp::inferResultTypes(Adaptor adaptor, EmitErrorFn emitError,
                                         SmallVectorImpl<Type> &types) {
  return inferConv(kSpatialRank, adaptor, emitError, types);
}
LogicalResult Conv2DOp::inferResultTypes(Adaptor adaptor, EmitErrorFn emitError,
                                         SmallVectorImpl<Type> &types) {
  return inferConv(kSpatialRank, adaptor, emitError, types);
}
LogicalResult ConvTranspose1DOp::inferResultTypes(Adaptor adaptor,
                                                  EmitErrorFn emitError,
                                                  SmallVectorImpl<Type> &types) {
  return inferConvTranspose(kSpatialRank, adaptor, emitError, types);
}
LogicalResult ConvTranspose2DOp::inferResultTypes(Adaptor adaptor,
                                                  EmitErrorFn emitError,
                                                  SmallVectorImpl<Type> &types) {
  return inferConvTranspose(kSpatialRank, adaptor, emitError, types);
}
