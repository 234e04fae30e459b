//===- QuantOps.cpp - The cuvil.quant family ------------------------------===//
#include "dialects/Cuvil/IR/CuvilOps.h"
#include "dialects/Cuvil/IR/TypeRules.h"

using namespace mlir;
using namespace mlir::cuvil;

#define GET_OP_CLASSES
#include "dialects/Cuvil/IR/QuantOps.cpp.inc"

namespace {

/// The range of a quantized storage type: i8 [-128, 127], ui8 [0, 255],
/// i32 [-2^31, 2^31 - 1].
std::pair<int64_t, int64_t> storageRange(Type t) {
  auto i = llvm::cast<IntegerType>(t);
  if (i.isUnsigned())
    return {0, (int64_t(1) << i.getWidth()) - 1};
  return {-(int64_t(1) << (i.getWidth() - 1)), (int64_t(1) << (i.getWidth() - 1)) - 1};
}

/// `params` against the quantized tensor `storage` it describes, and the
/// shapes of the op's operand and result.
LogicalResult checkParams(Operation *op, QuantParamsAttr params, RankedTensorType storage,
                          StringRef role) {
  auto [lo, hi] = storageRange(storage.getElementType());
  for (int64_t zp : params.getZeroPoint().asArrayRef())
    if (zp < lo || zp > hi)
      return op->emitOpError() << role << " zero point " << zp << " is outside " << storage.getElementType()
                               << "'s range [" << lo << ", " << hi << "]";
  if (params.isPerTensor())
    return success();
  int64_t axis = params.getAxis();
  if (axis >= storage.getRank())
    return op->emitOpError() << role << " axis " << axis << " is not a dimension of a rank-"
                             << storage.getRank() << " tensor";
  int64_t channels = storage.getDimSize(axis);
  if (!ShapedType::isDynamic(channels) &&
      channels != static_cast<int64_t>(params.getScale().size()))
    return op->emitOpError() << role << " has " << params.getScale().size()
                             << " scale(s) for the " << channels << " channel(s) of dimension "
                             << axis;
  return success();
}

LogicalResult checkSameShape(Operation *op) {
  auto in = llvm::cast<RankedTensorType>(op->getOperand(0).getType());
  auto out = llvm::cast<RankedTensorType>(op->getResult(0).getType());
  if (in.getRank() != out.getRank() ||
      !areCompatibleShapes(in.getShape(), out.getShape()))
    return op->emitOpError() << "changes the shape; (de)quantizing converts elements only";
  return success();
}

RankedTensorType typeOf(Value v) { return llvm::cast<RankedTensorType>(v.getType()); }

} // namespace

LogicalResult QuantizeOp::verify() {
  if (failed(checkSameShape(*this)))
    return failure();
  return checkParams(*this, getParams(), typeOf(getResult()), "params");
}

LogicalResult DequantizeOp::verify() {
  if (failed(checkSameShape(*this)))
    return failure();
  if (getFused() && !getParams().isPerTensor())
    return emitOpError() << "a fused dequantization is per tensor";
  return checkParams(*this, getParams(), typeOf(getInput()), "params");
}

LogicalResult RequantizeOp::verify() {
  if (failed(checkSameShape(*this)))
    return failure();
  if (failed(checkParams(*this, getInputParams(), typeOf(getInput()), "input_params")))
    return failure();
  return checkParams(*this, getOutputParams(), typeOf(getResult()), "output_params");
}

/// The rules a quantized product's parameters share: 8-bit storage, input
/// and output per tensor, weights per tensor or per output channel.
static LogicalResult checkProductParams(Operation *op, QuantParamsAttr in, QuantParamsAttr w,
                                        QuantParamsAttr out, RankedTensorType x,
                                        RankedTensorType wt, RankedTensorType y) {
  if (!x.getElementType().isInteger(8) || !wt.getElementType().isInteger(8))
    return op->emitOpError() << "takes 8-bit input and weights";
  // An f32 result: the sums dequantized, no output parameters.
  if (y.getElementType().isF32()) {
    if (out)
      return op->emitOpError() << "has an f32 result (the sums dequantized) and output_params";
    if (!in.isPerTensor())
      return op->emitOpError() << "input is quantized per tensor";
    if (!w.isPerTensor() && w.getAxis() != 0)
      return op->emitOpError() << "weights are quantized per tensor or per output channel (axis 0)";
    if (failed(checkParams(op, in, x, "input_params")))
      return failure();
    return checkParams(op, w, wt, "weight_params");
  }
  if (!y.getElementType().isInteger(8))
    return op->emitOpError() << "result must be 8-bit storage, or f32 (the sums dequantized)";
  if (!out)
    return op->emitOpError() << "has an 8-bit result but no output_params";
  if (!in.isPerTensor() || !out.isPerTensor())
    return op->emitOpError() << "input and output are quantized per tensor";
  if (!w.isPerTensor() && w.getAxis() != 0)
    return op->emitOpError() << "weights are quantized per tensor or per output channel (axis 0)";
  if (failed(checkParams(op, in, x, "input_params")) ||
      failed(checkParams(op, w, wt, "weight_params")))
    return failure();
  return checkParams(op, out, y, "output_params");
}

/// The `arithmetic` attribute names an engine whose rounding the op
/// reproduces.
static LogicalResult checkArithmetic(Operation *op, std::optional<StringRef> arithmetic) {
  if (arithmetic && *arithmetic != "qnnpack" && *arithmetic != "onednn")
    return op->emitOpError() << "arithmetic '" << *arithmetic << "' is not one of qnnpack, onednn";
  return success();
}

LogicalResult QuantConv2DOp::verify() {
  if (failed(checkArithmetic(*this, getArithmetic())))
    return failure();
  auto x = typeOf(getInput()), w = typeOf(getWeight()), y = typeOf(getResult());
  if (x.getRank() != 4 || w.getRank() != 4 || y.getRank() != 4)
    return emitOpError() << "takes NCHW input and [Cout, Cin/groups, KH, KW] weights";
  if (getStride().size() != 2 || getPadding().size() != 2 || getDilation().size() != 2)
    return emitOpError() << "stride, padding and dilation take two values each";
  int64_t groups = getGroups();
  if (groups < 1 || x.getDimSize(1) % groups != 0 || w.getDimSize(0) % groups != 0 ||
      w.getDimSize(1) * groups != x.getDimSize(1))
    return emitOpError() << "groups " << groups << " do not divide " << x.getDimSize(1)
                         << " input and " << w.getDimSize(0) << " output channels into weights of "
                         << w.getDimSize(1) << " input channels";
  for (int64_t i = 0; i < 2; ++i) {
    std::optional<int64_t> size = windowOutputSize(x.getDimSize(2 + i), w.getDimSize(2 + i),
                                                   getStride()[i], getPadding()[i], getDilation()[i],
                                                   /*ceilMode=*/false);
    if (!size || *size != y.getDimSize(2 + i))
      return emitOpError() << "result must be " << (size ? std::to_string(*size) : "?")
                           << " along dimension " << 2 + i;
  }
  if (y.getDimSize(0) != x.getDimSize(0) || y.getDimSize(1) != w.getDimSize(0))
    return emitOpError() << "result must have the batch and the output channels";
  if (Value b = getBias()) {
    auto bt = typeOf(b);
    if (bt.getRank() != 1 || bt.getDimSize(0) != w.getDimSize(0) || !bt.getElementType().isF32())
      return emitOpError() << "bias must be f32 [" << w.getDimSize(0) << "]";
  }
  return checkProductParams(*this, getInputParams(), getWeightParams(), getOutputParamsAttr(), x, w, y);
}

LogicalResult QuantLinearOp::verify() {
  if (failed(checkArithmetic(*this, getArithmetic())))
    return failure();
  auto x = typeOf(getInput()), w = typeOf(getWeight()), y = typeOf(getResult());
  if (x.getRank() != 2 || w.getRank() != 2 || y.getRank() != 2)
    return emitOpError() << "takes an input [M, K] and weights [N, K] (rank 2)";
  auto same = [](int64_t a, int64_t b) {
    return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
  };
  if (!same(x.getDimSize(1), w.getDimSize(1)))
    return emitOpError() << "input has " << x.getDimSize(1) << " features, weights "
                         << w.getDimSize(1);
  if (!same(y.getDimSize(0), x.getDimSize(0)) || !same(y.getDimSize(1), w.getDimSize(0)))
    return emitOpError() << "result must be [" << x.getDimSize(0) << ", " << w.getDimSize(0) << "]";
  if (Value b = getBias()) {
    auto bt = typeOf(b);
    if (bt.getRank() != 1 || !same(bt.getDimSize(0), w.getDimSize(0)) || !bt.getElementType().isF32())
      return emitOpError() << "bias must be f32 [" << w.getDimSize(0) << "]";
  }
  return checkProductParams(*this, getInputParams(), getWeightParams(), getOutputParamsAttr(), x, w, y);
}

LogicalResult QuantLinearDynamicOp::verify() {
  if (failed(checkArithmetic(*this, getArithmetic())))
    return failure();
  auto x = typeOf(getInput()), w = typeOf(getWeight()), y = typeOf(getResult());
  if (x.getRank() != 2 || w.getRank() != 2 || y.getRank() != 2)
    return emitOpError() << "takes an input [M, K] and weights [N, K] (rank 2)";
  if (!w.getElementType().isSignedInteger(8) && !w.getElementType().isSignlessInteger(8))
    return emitOpError() << "weights are i8 storage";
  auto same = [](int64_t a, int64_t b) {
    return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
  };
  if (!same(x.getDimSize(1), w.getDimSize(1)))
    return emitOpError() << "input has " << x.getDimSize(1) << " features, weights " << w.getDimSize(1);
  if (!same(y.getDimSize(0), x.getDimSize(0)) || !same(y.getDimSize(1), w.getDimSize(0)))
    return emitOpError() << "result must be [" << x.getDimSize(0) << ", " << w.getDimSize(0) << "]";
  if (Value b = getBias()) {
    auto bt = typeOf(b);
    if (bt.getRank() != 1 || !same(bt.getDimSize(0), w.getDimSize(0)))
      return emitOpError() << "bias must be f32 [" << w.getDimSize(0) << "]";
  }
  QuantParamsAttr pw = getWeightParams();
  if (!pw.isPerTensor() && pw.getAxis() != 0)
    return emitOpError() << "weights are quantized per tensor or per output channel (axis 0)";
  return checkParams(*this, pw, w, "weight_params");
}

/// The parameters of an element-wise op of two quantized tensors (add,
/// mul): all per tensor, each fitting its storage.
static LogicalResult checkBinaryParams(Operation *op, QuantParamsAttr lhs, QuantParamsAttr rhs, QuantParamsAttr out,
                                       RankedTensorType a, RankedTensorType b, RankedTensorType y) {
  const std::pair<QuantParamsAttr, StringRef> params[] = {
      {lhs, "lhs_params"}, {rhs, "rhs_params"}, {out, "output_params"}};
  for (const auto &[p, role] : params)
    if (!p.isPerTensor())
      return op->emitOpError() << role << " must be per tensor";
  if (failed(checkParams(op, lhs, a, "lhs_params")) || failed(checkParams(op, rhs, b, "rhs_params")))
    return failure();
  return checkParams(op, out, y, "output_params");
}

LogicalResult QuantAddOp::verify() {
  if (failed(checkArithmetic(*this, getArithmetic())))
    return failure();
  if (getArithmetic() == "qnnpack" && !typeOf(getResult()).getElementType().isUnsignedInteger(8))
    return emitOpError() << "QNNPACK's arithmetic adds ui8 tensors only";
  auto a = typeOf(getLhs()), b = typeOf(getRhs()), y = typeOf(getResult());
  for (RankedTensorType t : {a, b, y})
    if (!t.getElementType().isInteger(8))
      return emitOpError() << "takes and returns 8-bit storage";
  if (a.getShape() != b.getShape() || a.getShape() != y.getShape())
    return emitOpError() << "operands and result must have one shape (no broadcasting)";
  return checkBinaryParams(*this, getLhsParams(), getRhsParams(), getOutputParams(), a, b, y);
}

LogicalResult QuantMulOp::verify() {
  auto a = typeOf(getLhs()), b = typeOf(getRhs()), y = typeOf(getResult());
  if (!a.getElementType().isInteger(8) || a.getElementType() != b.getElementType() ||
      a.getElementType() != y.getElementType())
    return emitOpError() << "takes and returns 8-bit storage of one type";
  SmallVector<int64_t> shape;
  if (failed(broadcastShapes(a.getShape(), b.getShape(), shape)))
    return emitOpError() << "operands do not broadcast";
  if (ArrayRef<int64_t>(shape) != y.getShape())
    return emitOpError() << "result must have the operands' broadcast shape";
  return checkBinaryParams(*this, getLhsParams(), getRhsParams(), getOutputParams(), a, b, y);
}

LogicalResult QuantAvgPool2DOp::verify() {
  auto x = typeOf(getInput()), y = typeOf(getResult());
  if (!x.getElementType().isInteger(8) || x.getElementType() != y.getElementType())
    return emitOpError() << "takes and returns 8-bit storage of one type";
  if (failed(checkArithmetic(*this, getArithmetic())))
    return failure();
  if (getArithmetic() == "onednn")
    return emitOpError() << "has no oneDNN arithmetic (PyTorch's own kernels pool for that engine)";
  if (getArithmetic() == "qnnpack" && (!x.getElementType().isUnsignedInteger(8) || !getCountIncludePad()))
    return emitOpError() << "QNNPACK's arithmetic pools ui8 tensors over whole windows (count_include_pad)";
  if (x.getRank() != 4 || y.getRank() != 4)
    return emitOpError() << "takes and returns NCHW tensors";
  if (getKernelSize().size() != 2 || getStride().size() != 2 || getPadding().size() != 2)
    return emitOpError() << "kernel, stride and padding take two values each";
  for (int k = 0; k < 2; ++k) {
    if (getKernelSize()[k] < 1 || getStride()[k] < 1 || getPadding()[k] < 0 ||
        2 * getPadding()[k] > getKernelSize()[k])
      return emitOpError() << "needs positive kernel sizes and strides, and padding of at most half the kernel";
    int64_t in = x.getDimSize(2 + k), out = y.getDimSize(2 + k);
    if (!ShapedType::isDynamic(in) && !ShapedType::isDynamic(out) &&
        out != (in + 2 * getPadding()[k] - getKernelSize()[k]) / getStride()[k] + 1)
      return emitOpError() << "result size " << out << " of spatial dimension " << k << " does not follow from "
                           << in;
  }
  if (!getInputParams().isPerTensor() || !getOutputParams().isPerTensor())
    return emitOpError() << "input and output are quantized per tensor";
  if (failed(checkParams(*this, getInputParams(), x, "input_params")))
    return failure();
  return checkParams(*this, getOutputParams(), y, "output_params");
}
