//===- PoolOps.cpp - cuvil.pool.* -----------------------------------------===//
#include "dialects/Cuvil/IR/CuvilOps.h"

using namespace mlir;
using namespace mlir::cuvil;

#define GET_OP_CLASSES
#include "dialects/Cuvil/IR/PoolOps.cpp.inc"

namespace {

RankedTensorType tensorType(Value v) {
  return llvm::cast<RankedTensorType>(v.getType());
}

LogicalResult checkPoolInput(RankedTensorType in, int64_t spatialRank,
                             EmitErrorFn emitError) {
  if (in.getRank() != spatialRank + 2)
    return emitError() << "input must be rank " << spatialRank + 2
                       << " ([N, C, spatial...]), got " << in;
  return success();
}

/// Sliding-window pooling: shared by max and average pooling. `dilation` is
/// all ones for average pooling. `maxPadding` gives, for a kernel entry, the
/// largest padding PyTorch allows.
LogicalResult inferWindowPool(int64_t spatialRank, RankedTensorType in,
                              ArrayRef<int64_t> kernel, ArrayRef<int64_t> stride,
                              ArrayRef<int64_t> padding,
                              ArrayRef<int64_t> dilation, bool ceilMode,
                              EmitErrorFn emitError,
                              SmallVectorImpl<Type> &types) {
  if (failed(checkPoolInput(in, spatialRank, emitError)) ||
      failed(checkSpatialAttr(kernel, spatialRank, 1, "kernel_size", emitError)) ||
      failed(checkSpatialAttr(stride, spatialRank, 1, "stride", emitError)) ||
      failed(checkSpatialAttr(padding, spatialRank, 0, "padding", emitError)) ||
      failed(checkSpatialAttr(dilation, spatialRank, 1, "dilation", emitError)))
    return failure();
  SmallVector<int64_t> shape(in.getShape().take_front(2));
  for (int64_t i = 0; i < spatialRank; ++i) {
    int64_t effectiveKernel = (kernel[i] - 1) * dilation[i] + 1;
    if (padding[i] > effectiveKernel / 2)
      return emitError() << "padding (" << padding[i]
                         << ") must be at most half the effective kernel size ("
                         << effectiveKernel << ")";
    std::optional<int64_t> out =
        windowOutputSize(in.getDimSize(2 + i), kernel[i], stride[i],
                         padding[i], dilation[i], ceilMode);
    // A run-time size stays one (windowOutputSize says kDynamic).
    if (!out || (!ShapedType::isDynamic(*out) && *out < 1))
      return emitError() << "spatial dimension " << i << ": input size "
                         << in.getDimSize(2 + i)
                         << " is too small for the pooling window ("
                         << effectiveKernel << " with padding " << padding[i]
                         << ")";
    shape.push_back(*out);
  }
  types.push_back(RankedTensorType::get(shape, in.getElementType()));
  return success();
}

template <typename OpAdaptor>
LogicalResult inferMaxPool(int64_t spatialRank, OpAdaptor adaptor,
                           EmitErrorFn emitError, SmallVectorImpl<Type> &types) {
  RankedTensorType in = tensorType(adaptor.getInput());
  if (failed(checkElementKind(in, ElementKind::Numeric, "input", emitError)))
    return failure();
  return inferWindowPool(spatialRank, in, adaptor.getKernelSize(),
                         adaptor.getStride(), adaptor.getPadding(),
                         adaptor.getDilation(), adaptor.getCeilMode(),
                         emitError, types);
}

template <typename OpAdaptor>
LogicalResult inferAvgPool(int64_t spatialRank, OpAdaptor adaptor,
                           EmitErrorFn emitError, SmallVectorImpl<Type> &types) {
  // PyTorch divides by any non-zero divisor_override, a negative one too.
  if (std::optional<int64_t> d = adaptor.getDivisorOverride(); d && *d == 0)
    return emitError() << "divisor_override must not be zero";
  SmallVector<int64_t> ones(spatialRank, 1);
  return inferWindowPool(spatialRank, tensorType(adaptor.getInput()),
                         adaptor.getKernelSize(), adaptor.getStride(),
                         adaptor.getPadding(), ones, adaptor.getCeilMode(),
                         emitError, types);
}

template <typename OpAdaptor>
LogicalResult inferAdaptivePool(int64_t spatialRank, OpAdaptor adaptor,
                                EmitErrorFn emitError,
                                SmallVectorImpl<Type> &types) {
  RankedTensorType in = tensorType(adaptor.getInput());
  ArrayRef<int64_t> outSize = adaptor.getOutputSize();
  if (failed(checkPoolInput(in, spatialRank, emitError)) ||
      failed(checkSpatialAttr(outSize, spatialRank, 1, "output_size", emitError)))
    return failure();
  for (int64_t i = 0; i < spatialRank; ++i)
    if (in.getDimSize(2 + i) == 0)
      return emitError() << "spatial dimension " << i
                         << " of the input is empty";
  SmallVector<int64_t> shape(in.getShape().take_front(2));
  shape.append(outSize.begin(), outSize.end());
  types.push_back(RankedTensorType::get(shape, in.getElementType()));
  return success();
}

} // namespace

LogicalResult MaxPool1DOp::inferResultTypes(Adaptor a, EmitErrorFn e,
                                            SmallVectorImpl<Type> &t) {
  return inferMaxPool(kSpatialRank, a, e, t);
}
LogicalResult MaxPool2DOp::inferResultTypes(Adaptor a, EmitErrorFn e,
                                            SmallVectorImpl<Type> &t) {
  return inferMaxPool(kSpatialRank, a, e, t);
}
LogicalResult AvgPool1DOp::inferResultTypes(Adaptor a, EmitErrorFn e,
                                            SmallVectorImpl<Type> &t) {
  return inferAvgPool(kSpatialRank, a, e, t);
}
LogicalResult AvgPool2DOp::inferResultTypes(Adaptor a, EmitErrorFn e,
                                            SmallVectorImpl<Type> &t) {
  return inferAvgPool(kSpatialRank, a, e, t);
}
LogicalResult AdaptiveAvgPool1DOp::inferResultTypes(Adaptor a, EmitErrorFn e,
                                                    SmallVectorImpl<Type> &t) {
  return inferAdaptivePool(kSpatialRank, a, e, t);
}
LogicalResult AdaptiveAvgPool2DOp::inferResultTypes(Adaptor a, EmitErrorFn e,
                                                    SmallVectorImpl<Type> &t) {
  return inferAdaptivePool(kSpatialRank, a, e, t);
}
