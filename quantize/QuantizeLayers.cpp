//===- QuantizeLayers.cpp - Annotated layers to their precision -----------===//
#include "quantize/QuantizeLayers.h"

#include "dialects/Cuvil/IR/CuvilDialect.h"
#include "dialects/Cuvil/IR/CuvilOps.h"
#include "dialects/Cuvil/IR/QuantArithmetic.h"
#include "dialects/Cuvil/Reference/Evaluator.h"
#include "dialects/Cuvil/Transforms/Passes.h"
#include "quantize/Calibration.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/Pass/PassRegistry.h"

#include <cmath>
#include <limits>

namespace mlir::cuvil {
namespace {

using ::cuvil::DType;
using ::cuvil::Tensor;

/// A resource name derived from the weight's ("conv1.weight" ->
/// "conv1.weight.int8").
std::string derivedName(Value from, StringRef suffix) {
  if (auto c = from.getDefiningOp<ConstantOp>())
    if (auto r = llvm::dyn_cast<DenseResourceElementsAttr>(c.getValue()))
      return (r.getRawHandle().getKey() + "." + suffix).str();
  return ("quantized." + suffix).str();
}

FailureOr<Tensor> constantValue(Operation *op, Value v, StringRef role) {
  auto c = v.getDefiningOp<ConstantOp>();
  if (!c)
    return op->emitOpError() << "cannot be quantized: its " << role
                             << " is not a constant (run the graph pipeline first)";
  return reference::tensorFromAttr(c.getValue(), c.getLoc());
}

RankedTensorType withElement(Type t, Type element) {
  auto r = llvm::cast<RankedTensorType>(t);
  return RankedTensorType::get(r.getShape(), element);
}

LogicalResult checkActivationParams(Operation *op, StringRef name, QuantParamsAttr p) {
  if (!p)
    return op->emitOpError() << "is marked int8 but has no '" << name << "' parameters";
  if (p.getAxis() >= 0 || p.getScale().size() != 1)
    return op->emitOpError() << "'" << name << "' must be per tensor (one scale)";
  int64_t zp = p.getZeroPoint()[0];
  if (zp < 0 || zp > 255)
    return op->emitOpError() << "'" << name << "' zero point " << zp << " is outside ui8 [0, 255]";
  return success();
}

LogicalResult quantizeInt8(Operation *op, OpBuilder &b) {
  MLIRContext *ctx = op->getContext();
  Location loc = op->getLoc();
  auto in = op->getAttrOfType<QuantParamsAttr>(kQuantInputAttrName);
  auto out = op->getAttrOfType<QuantParamsAttr>(kQuantOutputAttrName);
  // Without cuvil.quant.output the layer's sums are dequantized straight
  // to an f32 result (its output is only read by float ops).
  if (failed(checkActivationParams(op, kQuantInputAttrName, in)) ||
      (out && failed(checkActivationParams(op, kQuantOutputAttrName, out))))
    return failure();
  Value x = op->getOperand(0), w = op->getOperand(1);
  Value bias = op->getNumOperands() > 2 ? op->getOperand(2) : Value();
  FailureOr<Tensor> wt = constantValue(op, w, "weight");
  if (failed(wt))
    return failure();
  auto wp = op->getAttrOfType<QuantParamsAttr>(kQuantWeightAttrName);
  if (!wp)
    wp = weightQuantParams(ctx, *wt, {-127, 127, true}, /*perChannel=*/true);
  else if (wp.getAxis() > 0)
    return op->emitOpError() << "weights are quantized per tensor or per output channel (axis 0)";
  for (int64_t zp : wp.getZeroPoint().asArrayRef())
    if (zp < -128 || zp > 127)
      return op->emitOpError() << "weight zero point " << zp << " is outside i8 [-128, 127]";

  b.setInsertionPoint(op);
  Type ui8 = IntegerType::get(ctx, 8, IntegerType::Unsigned), i8 = b.getIntegerType(8);
  auto resultType = llvm::cast<RankedTensorType>(op->getResult(0).getType());
  auto wType = withElement(w.getType(), i8);
  Value wq = b.create<ConstantOp>(
      w.getLoc(), wType,
      reference::elementsAttrFromTensor(quantizeWeightTensor(*wt, wp), wType, derivedName(w, "int8")));

  Value result;
  if (auto conv = llvm::dyn_cast<Conv2DOp>(op)) {
    Value xq = b.create<QuantizeOp>(loc, withElement(x.getType(), ui8), x, in);
    Value yq = b.create<QuantConv2DOp>(loc, out ? withElement(resultType, ui8) : resultType, xq, wq,
                                       bias, conv.getStrideAttr(), conv.getPaddingAttr(),
                                       conv.getDilationAttr(), conv.getGroupsAttr(), in, wp, out,
                                       StringAttr());
    yq.getDefiningOp()->setAttr(kPrecisionAttrName, b.getStringAttr("int8"));
    result = out ? b.create<DequantizeOp>(loc, resultType, yq, out).getResult() : yq;
  } else {
    // quant.linear is [M, K] x [N, K]: other ranks go through a reshape.
    auto xType = llvm::cast<RankedTensorType>(x.getType());
    if (!xType.hasStaticShape() || !resultType.hasStaticShape())
      return op->emitOpError() << "cannot be quantized yet: its shapes are dynamic";
    int64_t k = xType.getShape().back(), n = resultType.getShape().back();
    int64_t m = xType.getNumElements() / std::max<int64_t>(k, 1);
    Value x2 = x;
    if (xType.getRank() != 2)
      x2 = b.create<ReshapeOp>(loc, RankedTensorType::get({m, k}, xType.getElementType()), x,
                               b.getDenseI64ArrayAttr({m, k}));
    Value xq = b.create<QuantizeOp>(loc, withElement(x2.getType(), ui8), x2, in);
    auto flat = RankedTensorType::get({m, n}, resultType.getElementType());
    Value yq = b.create<QuantLinearOp>(loc, out ? RankedTensorType::get({m, n}, ui8) : flat, xq, wq,
                                       bias, in, wp, out, StringAttr());
    yq.getDefiningOp()->setAttr(kPrecisionAttrName, b.getStringAttr("int8"));
    result = out ? b.create<DequantizeOp>(loc, flat, yq, out).getResult() : yq;
    if (resultType.getRank() != 2)
      result = b.create<ReshapeOp>(loc, resultType, result,
                                   b.getDenseI64ArrayAttr(resultType.getShape()));
  }
  op->getResult(0).replaceAllUsesWith(result);
  op->erase();
  return success();
}

/// An add of two tensors of one shape: both quantized, quant.add (with a
/// relu that is its only user folded in), dequantized. A quantize of an
/// operand that was dequantized with the same parameters folds afterwards.
LogicalResult quantizeAdd(AddOp op, OpBuilder &b) {
  auto pa = op->getAttrOfType<QuantParamsAttr>(kQuantInputAttrName);
  auto pb = op->getAttrOfType<QuantParamsAttr>(kQuantRhsAttrName);
  auto py = op->getAttrOfType<QuantParamsAttr>(kQuantOutputAttrName);
  if (failed(checkActivationParams(op, kQuantInputAttrName, pa)) ||
      failed(checkActivationParams(op, kQuantRhsAttrName, pb)) ||
      failed(checkActivationParams(op, kQuantOutputAttrName, py)))
    return failure();
  auto type = llvm::cast<RankedTensorType>(op.getType());
  if (op.getLhs().getType() != type || op.getRhs().getType() != type)
    return op->emitOpError() << "cannot be quantized: its operands are broadcast";
  Operation *relu = nullptr;
  if (op->hasOneUse() && llvm::isa<ReluOp>(*op->user_begin()))
    relu = *op->user_begin();
  Location loc = op.getLoc();
  b.setInsertionPoint(op);
  auto ui8 = withElement(type, IntegerType::get(op.getContext(), 8, IntegerType::Unsigned));
  Value a = b.create<QuantizeOp>(loc, ui8, op.getLhs(), pa);
  Value c = b.create<QuantizeOp>(loc, ui8, op.getRhs(), pb);
  auto sum = b.create<QuantAddOp>(loc, ui8, a, c, pa, pb, py, relu ? b.getUnitAttr() : UnitAttr(),
                                    StringAttr());
  sum->setAttr(kPrecisionAttrName, b.getStringAttr("int8"));
  Value result = b.create<DequantizeOp>(loc, type, sum, py);
  if (relu) {
    relu->getResult(0).replaceAllUsesWith(result);
    relu->erase();
  } else {
    op.getResult().replaceAllUsesWith(result);
  }
  op->erase();
  return success();
}

/// fp16 / bf16: the input rounded through the narrow type, the weights
/// stored rounded; the product itself stays f32 (accumulation in f32).
LogicalResult roundToNarrow(Operation *op, OpBuilder &b, bool bf16) {
  Value x = op->getOperand(0), w = op->getOperand(1);
  FailureOr<Tensor> wt = constantValue(op, w, "weight");
  if (failed(wt))
    return failure();
  b.setInsertionPoint(op);
  Type narrow = bf16 ? Type(b.getBF16Type()) : Type(b.getF16Type());
  Value xn = b.create<CastOp>(op->getLoc(), withElement(x.getType(), narrow), x);
  op->setOperand(0, b.create<CastOp>(op->getLoc(), x.getType(), xn));
  Tensor r(wt->dtype(), wt->shape());
  for (int64_t i = 0; i < wt->numElements(); ++i) {
    float v = static_cast<float>(wt->getDouble(i));
    float rounded = bf16 ? ::cuvil::bf16ToFloat(::cuvil::floatToBf16(v))
                         : ::cuvil::halfToFloat(::cuvil::floatToHalf(v));
    if (std::isfinite(v) && !std::isfinite(rounded))
      return op->emitOpError() << "cannot run in " << (bf16 ? "bf16" : "fp16") << ": weight "
                               << v << " is beyond its range (use fp32)";
    r.setDouble(i, rounded);
  }
  auto wType = llvm::cast<RankedTensorType>(w.getType());
  op->setOperand(1, b.create<ConstantOp>(w.getLoc(), wType,
                                         reference::elementsAttrFromTensor(
                                             r, wType, derivedName(w, bf16 ? "bf16" : "fp16"))));
  return success();
}

struct QuantizeLayersPass : PassWrapper<QuantizeLayersPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(QuantizeLayersPass)
  StringRef getArgument() const override { return "cuvil-quantize-layers"; }
  StringRef getDescription() const override {
    return "Rewrites conv2d/linear ops annotated by cuvil-quantize (cuvil.precision, "
           "cuvil.quant.*) to int8 quantized ops or fp16/bf16-rounded operands";
  }
  void runOnOperation() override {
    func::FuncOp f = getOperation();
    SmallVector<Operation *> layers;
    f.walk([&](Operation *op) {
      if (op->hasAttr(kPrecisionAttrName) && llvm::isa<Conv2DOp, LinearOp, AddOp>(op))
        layers.push_back(op);
    });
    OpBuilder b(&getContext());
    for (Operation *op : layers) {
      StringRef precision = op->getAttrOfType<StringAttr>(kPrecisionAttrName).getValue();
      LogicalResult r = success();
      if (precision == "int8")
        r = llvm::isa<AddOp>(op) ? quantizeAdd(llvm::cast<AddOp>(op), b) : quantizeInt8(op, b);
      else if (llvm::isa<AddOp>(op))
        ; // an add in float or narrower: as it is
      else if (precision == "fp16" || precision == "bf16")
        r = roundToNarrow(op, b, precision == "bf16");
      if (failed(r))
        return signalPassFailure();
      if (precision != "int8") {
        op->removeAttr(kQuantInputAttrName);
        op->removeAttr(kQuantOutputAttrName);
        op->removeAttr(kQuantWeightAttrName);
        op->removeAttr(kQuantRhsAttrName);
        if (llvm::isa<AddOp>(op))
          op->removeAttr(kPrecisionAttrName);
      }
    }
    foldQuantRoundTrips(f);
  }
};

} // namespace

QuantParamsAttr weightQuantParams(MLIRContext *ctx, const Tensor &w, ::cuvil::quant::QuantGrid grid,
                                  bool perChannel) {
  std::vector<double> d = w.toDoubles();
  std::vector<float> values(d.begin(), d.end());
  size_t channels = perChannel ? w.dim(0) : 1, per = values.size() / std::max<size_t>(channels, 1);
  SmallVector<double> scales;
  SmallVector<int64_t> zeros;
  for (const ::cuvil::quant::AffineParams &a :
       ::cuvil::quant::perChannelSymmetricParams(values.data(), channels, per, grid)) {
    scales.push_back(a.scale);
    zeros.push_back(a.zeroPoint);
  }
  return QuantParamsAttr::get(ctx, DenseF64ArrayAttr::get(ctx, scales),
                              DenseI64ArrayAttr::get(ctx, zeros), perChannel ? 0 : -1);
}

Tensor quantizeWeightTensor(const Tensor &w, QuantParamsAttr p) {
  Tensor q(DType::Int8, w.shape());
  ArrayRef<double> scales = p.getScale().asArrayRef();
  ArrayRef<int64_t> zeros = p.getZeroPoint().asArrayRef();
  int64_t channels = p.getAxis() < 0 ? 1 : w.dim(0);
  int64_t per = w.numElements() / std::max<int64_t>(channels, 1);
  for (int64_t i = 0; i < w.numElements(); ++i) {
    int64_t c = p.getAxis() < 0 ? 0 : i / per;
    q.setInt(i, quant::quantizeValue(static_cast<float>(w.getDouble(i)), scales[c], zeros[c], -128, 127));
  }
  return q;
}

std::unique_ptr<Pass> createCuvilQuantizeLayersPass() {
  return std::make_unique<QuantizeLayersPass>();
}

void registerQuantizePasses() { PassRegistration<QuantizeLayersPass>(); }

} // namespace mlir::cuvil
