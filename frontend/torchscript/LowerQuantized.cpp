//===- LowerQuantized.cpp - Models quantized by PyTorch -------------------===//
//
// A quantized tensor is two values here: its integers (`qstorage`, ui8 /
// i8 / i32) with their #cuvil.quant parameters, and its real values (the
// dequantization, `value`). The quantized:: operators become the quantized
// ops cuvil-quantize writes (quant.conv2d, quant.linear, quant.add) on the
// storage; everything PyTorch computes on quantized tensors in float
// (mul, cat, hardswish, batch norm, ...) or that keeps its input's
// parameters (max pooling, reshapes, relu) is computed on the real values
// and quantized again with the parameters PyTorch gives its result. The
// importer then folds the round trips (cuvil-fold-quant-round-trips), so
// the graph is the one cuvil-quantize produces for the same layers.
//
//===----------------------------------------------------------------------===//
#include "frontend/torchscript/LowerHelpers.h"

#include "dialects/Cuvil/IR/CuvilDialect.h"
#include "dialects/Cuvil/IR/QuantArithmetic.h"
#include "dialects/Cuvil/IR/TypeRules.h"

#include "mlir/IR/Verifier.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <set>

namespace cuvil::torchscript {

using namespace lower;

namespace {

using mlir::Type;

/// The storage type of a quantized dtype code (torch.qint8 12, quint8 13,
/// qint32 14).
Type storageOfScalarType(Interpreter &in, int64_t code) {
  mlir::MLIRContext *ctx = in.context();
  switch (code) {
  case 12: return mlir::IntegerType::get(ctx, 8);
  case 13: return mlir::IntegerType::get(ctx, 8, mlir::IntegerType::Unsigned);
  case 14: return mlir::IntegerType::get(ctx, 32);
  default:
    in.fail("CUVIL-E-IMPORT-QUANT", "dtype code " + std::to_string(code) +
                                        " is not a quantized type (torch.quint8, qint8 or qint32)");
  }
}

int64_t scalarTypeOfStorage(Type t) {
  auto i = llvm::cast<mlir::IntegerType>(t);
  return i.getWidth() == 32 ? 14 : i.isUnsigned() ? 13 : 12;
}

std::pair<int64_t, int64_t> storageRange(Type t) {
  auto i = llvm::cast<mlir::IntegerType>(t);
  if (i.getWidth() == 32)
    return {INT32_MIN, INT32_MAX};
  return i.isUnsigned() ? std::pair<int64_t, int64_t>{0, 255} : std::pair<int64_t, int64_t>{-128, 127};
}

cir::QuantParamsAttr perTensor(Interpreter &in, double scale, int64_t zeroPoint, Type storage,
                               const std::string &op) {
  if (!(scale > 0) || !std::isfinite(scale))
    in.fail("CUVIL-E-IMPORT-QPARAMS", op + ": scale " + llvm::formatv("{0}", scale).str() +
                                          " is not a positive finite number");
  auto [lo, hi] = storageRange(storage);
  if (zeroPoint < lo || zeroPoint > hi)
    in.fail("CUVIL-E-IMPORT-QPARAMS", op + ": zero point " + std::to_string(zeroPoint) +
                                          " is outside [" + std::to_string(lo) + ", " +
                                          std::to_string(hi) + "]");
  mlir::MLIRContext *ctx = in.context();
  return cir::QuantParamsAttr::get(ctx, mlir::DenseF64ArrayAttr::get(ctx, {scale}),
                                   mlir::DenseI64ArrayAttr::get(ctx, {zeroPoint}), -1);
}

/// The storage and parameters of a quantized argument.
struct QArg {
  Value storage;
  cir::QuantParamsAttr params;
  Type element() const { return typeOf(storage).getElementType(); }
};

QArg quantizedArg(Interpreter &in, const IValue &v, const std::string &op, const char *what) {
  if (!v.isTensor() || !v.tensor->quantized())
    in.fail("CUVIL-E-IMPORT-QUANT",
            op + ": argument '" + what + "' must be a quantized tensor, got " +
                (v.isTensor() ? "a float tensor (quantize it first: torch.quantize_per_tensor "
                                "or a QuantStub)"
                              : v.typeName()));
  return {v.tensor->qstorage, llvm::cast<cir::QuantParamsAttr>(v.tensor->qparams)};
}

/// `v` (a quantized tensor) marked as PyTorch's layout for it.
IValue withLayout(IValue v, bool channelsLast) {
  if (v.isTensor())
    v.tensor->channelsLast = channelsLast;
  return v;
}

bool channelsLastOf(const IValue &v) {
  if (v.isSequence())
    return !v.list->empty() && channelsLastOf(v.list->front());
  return v.isTensor() && v.tensor->channelsLast;
}

IValue plainOf(const IValue &v) {
  if (v.isTensor() && v.tensor->quantized())
    return IValue::ofTensor(v.tensor->value);
  return v;
}

/// `v` with a quantized tensor as its real values, and with `intoLists` the
/// items of a list too (cat's operands).
IValue realValues(const IValue &v, bool intoLists) {
  if (!intoLists || !v.isSequence())
    return plainOf(v);
  IValueList items;
  for (const IValue &x : *v.list)
    items.push_back(plainOf(x));
  return IValue::makeList(std::move(items));
}

Value realOf(const IValue &v) { return v.tensor->value; }

/// Whether PyTorch computes `op` (an element-wise op in float) on a
/// quantized tensor of `storage` with its vectorized x86 kernel, which
/// dequantizes with a fused multiply-add, rather than QNNPACK's table
/// (the qnnpack engine's quint8 hardswish, sigmoid, hardsigmoid, tanh and
/// leaky_relu).
bool vectorizedKernel(Interpreter &in, llvm::StringRef op, Type storage) {
  static const std::set<std::string> tables = {
      "hardswish", "hardswish_", "sigmoid", "sigmoid_", "hardsigmoid", "hardsigmoid_", "tanh", "tanh_",
      "leaky_relu", "leaky_relu_"};
  std::string base = op.substr(op.find("::") + 2).str();
  return !(in.quantizedEngine() == "qnnpack" && storage.isUnsignedInteger(8) && tables.count(base));
}

/// `v`'s real values as a vectorized kernel computes them (a fused
/// quant.dequantize, per tensor), items of a list too; anything else
/// unchanged.
IValue vectorizedRealValues(Interpreter &in, const IValue &v) {
  if (v.isSequence()) {
    IValueList items;
    for (const IValue &x : *v.list)
      items.push_back(vectorizedRealValues(in, x));
    return IValue::makeList(std::move(items));
  }
  if (!v.isTensor() || !v.tensor->quantized())
    return v;
  auto p = llvm::cast<cir::QuantParamsAttr>(v.tensor->qparams);
  if (!p.isPerTensor())
    return plainOf(v);
  auto type = RankedTensorType::get(typeOf(v.tensor->qstorage).getShape(), in.builder().getF32Type());
  auto dq = in.builder().create<cir::DequantizeOp>(in.location(), type, v.tensor->qstorage, p,
                                                   in.builder().getUnitAttr());
  return IValue::ofTensor(dq.getResult());
}

/// A tensor whose value must be known at import time (per-channel scales).
Tensor constantOf(Interpreter &in, Value v, const std::string &what) {
  if (auto c = v.getDefiningOp<cir::ConstantOp>()) {
    mlir::FailureOr<Tensor> t = cir::reference::tensorFromAttr(c.getValue(), c.getLoc());
    if (mlir::succeeded(t))
      return *t;
  }
  if (std::optional<Tensor> t = in.foldToConstant(v))
    return *t;
  in.fail("CUVIL-E-IMPORT-QUANT", what + " must be known when the model is imported");
}

/// The engine's arithmetic for a product or a sum: the ops' defaults are
/// QNNPACK's products and oneDNN's (float) sums, so only the others are
/// written.
mlir::StringAttr arithmeticFor(Interpreter &in, bool product) {
  const std::string &e = in.quantizedEngine();
  if ((product && e == "qnnpack") || (!product && e == "onednn"))
    return {};
  return in.builder().getStringAttr(e);
}

void markInt8(Value v) {
  if (mlir::Operation *op = v.getDefiningOp())
    op->setAttr(cir::kPrecisionAttrName, mlir::StringAttr::get(op->getContext(), "int8"));
}

//===----------------------------------------------------------------------===//
// Packed parameters
//===----------------------------------------------------------------------===//

const ObjectInst &packedArg(Interpreter &in, const IValue &v, const std::string &op, bool conv) {
  const char *want = conv ? "Conv2dPackedParamsBase" : "LinearPackedParamsBase";
  if (!v.is(K::Object) || !v.object->native ||
      v.object->className.find(want) == std::string::npos)
    in.fail("CUVIL-E-IMPORT-QUANT", op + ": expects packed weights (torch.classes.quantized." +
                                        want + "), got " + v.typeName());
  return *v.object;
}

std::vector<int64_t> intsAttr(const ObjectInst &p, const char *name) {
  std::vector<int64_t> out;
  for (const IValue &x : *p.attrs.at(name).list)
    out.push_back(x.i);
  return out;
}

/// Output spatial size of a convolution (dynamic stays dynamic).
int64_t convOut(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d) {
  if (in == mlir::ShapedType::kDynamic)
    return in;
  return (in + 2 * p - d * (k - 1) - 1) / s + 1;
}

//===----------------------------------------------------------------------===//
// quantized:: operators
//===----------------------------------------------------------------------===//

/// quant.conv2d on the storage; `relu` clamps the real result at 0 (the
/// storage at its zero point), which folds away when that is its minimum.
IValue quantizedConv(Interpreter &in, const BoundArgs &b, const std::string &op, bool relu) {
  Args a{in, b};
  bool legacy = b.has("stride");
  const IValue &packedV = legacy ? a["weight"] : a["packed_weight"];
  const ObjectInst &packed = packedArg(in, packedV, op, true);
  QArg x = quantizedArg(in, a["qx"], op, "qx");
  const IValue &wv = packed.attrs.at("weight");
  QArg w = quantizedArg(in, wv, op, "weight");
  std::vector<int64_t> stride = intsAttr(packed, "stride"), padding = intsAttr(packed, "padding"),
                       dilation = intsAttr(packed, "dilation");
  int64_t groups = packed.attrs.at("groups").i;
  if (legacy) {
    stride = a.ints("stride");
    padding = a.ints("padding");
    dilation = a.ints("dilation");
    groups = a.i("groups");
  }
  cir::QuantParamsAttr out = perTensor(in, a.f("output_scale"), a.i("output_zero_point"),
                                       x.element(), op);
  if (packed.attrs.at("transposed").b) {
    // A transposed convolution: in float on the real values (PyTorch's
    // kernels accumulate the same products), then quantized.
    IValue y = in.callOperator(
        "aten::conv_transpose2d",
        {IValue::ofTensor(realOf(a["qx"])), IValue::ofTensor(realOf(wv)), plainOf(packed.attrs.at("bias")),
         IValue::makeList({IValue::integer(stride[0]), IValue::integer(stride[1])}),
         IValue::makeList({IValue::integer(padding[0]), IValue::integer(padding[1])}),
         IValue::makeList(packed.attrs.at("output_padding").list ? *packed.attrs.at("output_padding").list
                                                                 : IValueList{}),
         IValue::integer(groups),
         IValue::makeList({IValue::integer(dilation[0]), IValue::integer(dilation[1])})},
        {});
    if (!y.isTensor())
      return y;
    Value real = y.tensor->value;
    if (relu)
      real = in.build<cir::ReluOp>(real);
    return withLayout(quantizeTo(in, real, out, x.element()), true);
  }
  auto xt = typeOf(x.storage), wt = typeOf(w.storage);
  if (xt.getRank() != 4 || wt.getRank() != 4 || stride.size() != 2 || padding.size() != 2 ||
      dilation.size() != 2)
    in.fail("CUVIL-E-IMPORT-QUANT", op + ": expects a 4-D input and weights and two strides, "
                                         "paddings and dilations");
  llvm::SmallVector<int64_t> shape = {xt.getDimSize(0), wt.getDimSize(0),
                                      convOut(xt.getDimSize(2), wt.getDimSize(2), stride[0], padding[0], dilation[0]),
                                      convOut(xt.getDimSize(3), wt.getDimSize(3), stride[1], padding[1], dilation[1])};
  Value bias = packed.attrs.at("bias").isTensor() ? packed.attrs.at("bias").tensor->value : Value();
  if (bias && dtypeOf(bias) != DType::Float32)
    bias = cast(in, bias, DType::Float32);
  auto yt = RankedTensorType::get(shape, x.element());
  Value y = in.builder().create<cir::QuantConv2DOp>(
      in.location(), yt, x.storage, w.storage, bias, i64s(in, stride), i64s(in, padding),
      i64s(in, dilation), in.builder().getI64IntegerAttr(groups), x.params, w.params, out,
      arithmeticFor(in, true));
  markInt8(y);
  if (mlir::failed(mlir::verify(y.getDefiningOp())))
    in.fail("CUVIL-E-IMPORT-QUANT", op + ": the quantized convolution's operands do not fit "
                                         "(input " + std::to_string(xt.getDimSize(1)) +
                                         " channels, weights " + std::to_string(wt.getDimSize(1)) +
                                         " per group of " + std::to_string(groups) + ")");
  IValue r = withLayout(makeQuantized(in, y, out), true);
  if (!relu)
    return r;
  return withLayout(quantizeTo(in, in.build<cir::ReluOp>(r.tensor->value), out, x.element()), true);
}

IValue quantizedLinear(Interpreter &in, const BoundArgs &b, const std::string &op, bool relu) {
  Args a{in, b};
  const ObjectInst &packed = packedArg(in, a["W_prepack"], op, false);
  QArg x = quantizedArg(in, a["X"], op, "X");
  QArg w = quantizedArg(in, packed.attrs.at("weight"), op, "weight");
  cir::QuantParamsAttr out = perTensor(in, a.f("Y_scale_i"), a.i("Y_zero_point_i"), x.element(), op);
  auto xt = typeOf(x.storage), wt = typeOf(w.storage);
  if (wt.getRank() != 2 || xt.getRank() < 1 || !xt.hasStaticShape())
    in.fail("CUVIL-E-IMPORT-QUANT", op + ": expects [..., K] input of a static shape and [N, K] weights");
  int64_t k = xt.getShape().back(), n = wt.getDimSize(0);
  if (k != wt.getDimSize(1))
    in.fail("CUVIL-E-IMPORT-QUANT", op + ": input has " + std::to_string(k) +
                                         " features, the weights " + std::to_string(wt.getDimSize(1)));
  int64_t m = xt.getNumElements() / std::max<int64_t>(k, 1);
  Value x2 = x.storage;
  if (xt.getRank() != 2)
    x2 = in.builder().create<cir::ReshapeOp>(in.location(), RankedTensorType::get({m, k}, x.element()),
                                             x.storage, in.builder().getDenseI64ArrayAttr({m, k}));
  Value bias = packed.attrs.at("bias").isTensor() ? packed.attrs.at("bias").tensor->value : Value();
  if (bias && dtypeOf(bias) != DType::Float32)
    bias = cast(in, bias, DType::Float32);
  Value y = in.builder().create<cir::QuantLinearOp>(in.location(), RankedTensorType::get({m, n}, x.element()),
                                                    x2, w.storage, bias, x.params, w.params, out,
                                                    arithmeticFor(in, true));
  markInt8(y);
  if (xt.getRank() != 2) {
    llvm::SmallVector<int64_t> shape(xt.getShape());
    shape.back() = n;
    y = in.builder().create<cir::ReshapeOp>(in.location(), RankedTensorType::get(shape, x.element()), y,
                                            in.builder().getDenseI64ArrayAttr(shape));
  }
  IValue r = makeQuantized(in, y, out);
  if (!relu)
    return r;
  return quantizeTo(in, in.build<cir::ReluOp>(r.tensor->value), out, x.element());
}

} // namespace

IValue dynamicQuantizedLinear(Interpreter &in, Value x, const IValue &packedV, bool reduceRange, bool relu,
                              const std::string &op) {
  const ObjectInst &packed = packedArg(in, packedV, op, false);
  QArg w = quantizedArg(in, packed.attrs.at("weight"), op, "weight");
  auto wt = typeOf(w.storage);
  if (!wt.getElementType().isInteger(8) || wt.getElementType().isUnsignedInteger())
    return in.unsupported(op + " with weights that are not qint8");
  if (dtypeOf(x) != DType::Float32)
    x = cast(in, x, DType::Float32);
  auto xt = typeOf(x);
  if (wt.getRank() != 2 || xt.getRank() < 1)
    in.fail("CUVIL-E-IMPORT-QUANT", op + ": expects a [..., K] input and [N, K] weights");
  if (!xt.hasStaticShape())
    return in.unsupported(op + " on an input with run-time sizes");
  int64_t k = xt.getShape().back(), n = wt.getDimSize(0);
  if (k != wt.getDimSize(1))
    in.fail("CUVIL-E-IMPORT-QUANT", op + ": input has " + std::to_string(k) + " features, the weights " +
                                         std::to_string(wt.getDimSize(1)));
  int64_t m = xt.getNumElements() / std::max<int64_t>(k, 1);
  mlir::OpBuilder &b = in.builder();
  Value x2 = x;
  if (xt.getRank() != 2)
    x2 = b.create<cir::ReshapeOp>(in.location(), RankedTensorType::get({m, k}, b.getF32Type()), x,
                                  b.getDenseI64ArrayAttr({m, k}));
  Value bias = packed.attrs.at("bias").isTensor() ? packed.attrs.at("bias").tensor->value : Value();
  if (bias && dtypeOf(bias) != DType::Float32)
    bias = cast(in, bias, DType::Float32);
  // QNNPACK ignores reduce_range (PyTorch warns so); the op says what runs.
  bool onednn = in.quantizedEngine() == "onednn";
  Value y = b.create<cir::QuantLinearDynamicOp>(
      in.location(), RankedTensorType::get({m, n}, b.getF32Type()), x2, w.storage, bias, w.params,
      b.getStringAttr(in.quantizedEngine()), reduceRange && onednn ? b.getUnitAttr() : mlir::UnitAttr(),
      relu ? b.getUnitAttr() : mlir::UnitAttr());
  markInt8(y);
  if (xt.getRank() != 2) {
    llvm::SmallVector<int64_t> shape(xt.getShape());
    shape.back() = n;
    y = b.create<cir::ReshapeOp>(in.location(), RankedTensorType::get(shape, b.getF32Type()), y,
                                 b.getDenseI64ArrayAttr(shape));
  }
  return IValue::ofTensor(y);
}

IValue makeDynamicCellParams(Interpreter &in, const IValue &packedIh, const IValue &packedHh, bool reduceRange) {
  packedArg(in, packedIh, "CellParamsBase", false);
  packedArg(in, packedHh, "CellParamsBase", false);
  auto obj = std::make_shared<ObjectInst>();
  obj->className = "__torch__.torch.classes.rnn.CellParamsBase";
  obj->native = true;
  obj->attrs["packed_ih"] = packedIh;
  obj->attrs["packed_hh"] = packedHh;
  obj->attrs["reduce_range"] = IValue::boolean(reduceRange);
  IValue v;
  v.kind = K::Object;
  v.object = obj;
  return v;
}

namespace {

/// add / add_relu: quant.add when the operands have one shape (as
/// residual connections do), else in float as PyTorch's broadcasting path.
IValue quantizedAdd(Interpreter &in, const BoundArgs &b, const std::string &op, bool relu) {
  Args a{in, b};
  QArg x = quantizedArg(in, a["qa"], op, "qa"), y = quantizedArg(in, a["qb"], op, "qb");
  cir::QuantParamsAttr out = perTensor(in, a.f("scale"), a.i("zero_point"), x.element(), op);
  auto xt = typeOf(x.storage), yt = typeOf(y.storage);
  mlir::StringAttr arithmetic = arithmeticFor(in, false);
  bool fixedPoint = arithmetic && arithmetic.getValue() == "qnnpack";
  bool fits = !fixedPoint || (xt.getElementType().isUnsignedInteger(8) &&
                              cir::quant::qnnpackAddParams(x.params.scaleAt(0), x.params.zeroPointAt(0),
                                                           y.params.scaleAt(0), y.params.zeroPointAt(0),
                                                           out.scaleAt(0)).valid);
  if (!fits)
    in.fail("CUVIL-E-IMPORT-QUANT", op + ": QNNPACK adds quint8 tensors whose scales are within "
                                         "2^-14 and 2^8 of the output's; PyTorch refuses these too");
  if (xt == yt && xt.getElementType().isInteger(8) && x.params.isPerTensor() && y.params.isPerTensor()) {
    Value sum = in.builder().create<cir::QuantAddOp>(in.location(), xt, x.storage, y.storage, x.params,
                                                     y.params, out,
                                                     relu ? in.builder().getUnitAttr() : mlir::UnitAttr(),
                                                     arithmetic);
    markInt8(sum);
    return withLayout(makeQuantized(in, sum, out), channelsLastOf(a["qa"]));
  }
  IValue s = in.callOperator("aten::add", {plainOf(a["qa"]), plainOf(a["qb"])}, {});
  if (!s.isTensor())
    return s;
  Value real = s.tensor->value;
  if (relu)
    real = in.build<cir::ReluOp>(real);
  return withLayout(quantizeTo(in, real, out, x.element()), channelsLastOf(a["qa"]));
}

/// An op PyTorch computes on the real values of its quantized inputs and
/// quantizes with explicit output parameters.
IValue inFloat(Interpreter &in, const std::string &aten, std::vector<IValue> args, Type storage,
               cir::QuantParamsAttr out, bool relu, bool vectorized = false) {
  bool channelsLast = !args.empty() && channelsLastOf(args.front());
  for (IValue &v : args)
    v = vectorized ? vectorizedRealValues(in, v) : realValues(v, true);
  IValue r = in.callOperator(aten, std::move(args), {});
  if (!r.isTensor())
    return r;
  Value real = r.tensor->value;
  if (relu)
    real = in.build<cir::ReluOp>(real);
  return withLayout(quantizeTo(in, real, out, storage), channelsLast);
}

IValue packConv(Interpreter &in, const BoundArgs &b, bool transposed) {
  Args a{in, b};
  const char *op = transposed ? "quantized::conv_transpose2d_prepack" : "quantized::conv2d_prepack";
  QArg w = quantizedArg(in, a["weight"], op, "weight");
  if (!w.element().isInteger(8) || typeOf(w.storage).getElementType().isUnsignedInteger())
    in.fail("CUVIL-E-IMPORT-QUANT", std::string(op) + ": weights must be qint8");
  if (typeOf(w.storage).getRank() != 4)
    in.fail("CUVIL-E-IMPORT-QUANT", std::string(op) + ": weights must be 4-D");
  if (!w.params.isPerTensor() && w.params.getAxis() != (transposed ? 1 : 0))
    in.fail("CUVIL-E-IMPORT-QUANT", std::string(op) + ": weights are quantized per channel along axis " +
                                        std::to_string(w.params.getAxis()) + ", not the output channels'");
  auto two = [&](const char *name) {
    std::vector<int64_t> v = a.ints(name);
    if (v.size() == 1)
      v.push_back(v[0]);
    if (v.size() != 2)
      in.fail("CUVIL-E-IMPORT-QUANT", std::string(op) + ": '" + name + "' takes two values");
    return v;
  };
  int64_t groups = a.i("groups");
  if (groups < 1)
    in.fail("CUVIL-E-IMPORT-QUANT", std::string(op) + ": groups must be positive");
  return makePackedParams(in, "Conv2dPackedParamsBase", a["weight"], a["bias"], two("stride"),
                          two("padding"), two("dilation"),
                          transposed ? two("output_padding") : std::vector<int64_t>{0, 0}, groups,
                          transposed);
}

IValue unpack(Interpreter &in, const BoundArgs &b, const char *name, bool conv) {
  Args a{in, b};
  const IValue &v = conv ? a["packed_weights"] : a["W_prepack"];
  const ObjectInst &p = packedArg(in, v, name, conv);
  return IValue::makeTuple({p.attrs.at("weight"), p.attrs.at("bias")});
}

//===----------------------------------------------------------------------===//
// aten ops on quantized tensors
//===----------------------------------------------------------------------===//

/// What PyTorch gives the result of an aten op on a quantized tensor.
enum class Rule {
  Pass,      ///< not a computation on the values (sizes, list ops)
  Same,      ///< the input's parameters: the op moves or selects values
  Rounded,   ///< the input's parameters, the result rounded to them (averages)
  Sigmoid,   ///< fixed parameters: scale 1/256 (sigmoid, hardsigmoid)
  Tanh,      ///< fixed parameters: scale 2/256, centred
  Unsupported,
};

Rule ruleFor(const std::string &name) {
  static const std::set<std::string> pass = {
      "aten::size", "aten::dim", "aten::numel", "aten::len", "aten::__len__", "prim::shape",
      "aten::append", "aten::insert", "aten::_set_item", "aten::extend", "aten::__getitem__",
      "aten::__is__", "aten::__isnot__", "prim::device", "aten::list", "aten::format", "aten::str",
      "aten::warn", "prim::unchecked_cast", "prim::TupleConstruct", "prim::ListConstruct",
      "aten::__contains__", "prim::isinstance", "prim::layout", "prim::requires_grad"};
  static const std::set<std::string> same = {
      "aten::max_pool1d", "aten::max_pool2d", "aten::max_pool3d", "aten::flatten", "aten::reshape",
      "aten::view", "aten::permute", "aten::transpose", "aten::squeeze", "aten::unsqueeze",
      "aten::relu", "aten::relu_", "aten::hardtanh", "aten::hardtanh_", "aten::relu6",
      "aten::clamp", "aten::clamp_", "aten::chunk", "aten::split", "aten::unbind", "aten::slice",
      "aten::select", "aten::narrow", "aten::expand", "aten::expand_as", "aten::repeat",
      "aten::upsample_nearest2d", "aten::pixel_shuffle", "aten::pixel_unshuffle",
      "aten::channel_shuffle", "aten::flip", "aten::t", "aten::numpy_T", "aten::view_as",
      "aten::reshape_as", "aten::adaptive_max_pool2d", "aten::index_select", "aten::cat",
      "aten::stack", "aten::leaky_relu", "aten::leaky_relu_", "aten::elu", "aten::hardswish",
      "aten::hardswish_", "aten::__interpolate", "aten::upsample_nearest1d", "aten::max",
      "aten::min", "aten::topk", "aten::sort", "aten::detach", "aten::contiguous", "aten::clone",
      "aten::dropout", "aten::dropout_", "aten::feature_dropout", "aten::alpha_dropout",
      "aten::requires_grad_"};
  static const std::set<std::string> rounded = {
      "aten::adaptive_avg_pool2d", "aten::adaptive_avg_pool1d", "aten::avg_pool2d",
      "aten::avg_pool1d", "aten::mean", "aten::upsample_bilinear2d", "aten::sum"};
  if (pass.count(name))
    return Rule::Pass;
  if (same.count(name))
    return Rule::Same;
  if (rounded.count(name))
    return Rule::Rounded;
  if (name == "aten::sigmoid" || name == "aten::sigmoid_" || name == "aten::hardsigmoid" ||
      name == "aten::hardsigmoid_")
    return Rule::Sigmoid;
  if (name == "aten::tanh" || name == "aten::tanh_")
    return Rule::Tanh;
  return Rule::Unsupported;
}

/// avg_pool2d / adaptive_avg_pool2d (windows of one size) on a tensor
/// quantized per tensor: quant.avg_pool2d with PyTorch's rounding, the
/// input's parameters kept; null when the call is not of that form.
Value quantizedAveragePool(Interpreter &in, const std::string &name, const std::vector<IValue> &args,
                           const std::vector<std::pair<std::string, IValue>> &kwargs) {
  BoundArgs b;
  if (!bindOperatorArgs(name, args, kwargs, b) || !b.get("self").isTensor())
    return {};
  Args a{in, b};
  const TensorBox &box = *b.get("self").tensor;
  auto p = llvm::cast<cir::QuantParamsAttr>(box.qparams);
  auto xt = typeOf(box.qstorage);
  if (!p.isPerTensor() || xt.getRank() != 4 || !xt.hasStaticShape() || !xt.getElementType().isInteger(8))
    return {};
  int64_t h = xt.getDimSize(2), w = xt.getDimSize(3);
  std::vector<int64_t> kernel, stride, padding = {0, 0};
  bool includePad = true;
  // The qnnpack engine hands quint8 pooling to QNNPACK (both layouts),
  // except the identity adaptive pooling and ceil_mode windows.
  bool qnnpackEngine = in.quantizedEngine() == "qnnpack" && xt.getElementType().isUnsignedInteger(8);
  bool qnnpack = false;
  if (name == "aten::adaptive_avg_pool2d") {
    std::vector<int64_t> size = a.ints("output_size");
    if (size.size() == 1)
      size.push_back(size[0]);
    if (size.size() != 2 || size[0] < 1 || size[1] < 1 || h % size[0] || w % size[1])
      return {};
    kernel = {h / size[0], w / size[1]};
    stride = kernel;
    qnnpack = qnnpackEngine && !(size[0] == h && size[1] == w);
  } else {
    if (a.b("ceil_mode"))
      return {};
    qnnpack = qnnpackEngine;
    // QNNPACK divides by the whole window, ignoring count_include_pad and
    // divisor_override (its padding taps are the zero point).
    if (!a.none("divisor_override") && !qnnpack)
      return {};
    kernel = a.ints("kernel_size");
    stride = a.ints("stride");
    padding = a.ints("padding");
    includePad = qnnpack || a.b("count_include_pad");
    if (kernel.size() == 1)
      kernel.push_back(kernel[0]);
    if (stride.empty())
      stride = kernel;
    if (stride.size() == 1)
      stride.push_back(stride[0]);
    if (padding.size() == 1)
      padding.push_back(padding[0]);
    if (kernel.size() != 2 || stride.size() != 2 || padding.size() != 2)
      return {};
  }
  for (int k = 0; k < 2; ++k)
    if (kernel[k] < 1 || stride[k] < 1 || padding[k] < 0 || 2 * padding[k] > kernel[k])
      return {};
  int64_t oh = (h + 2 * padding[0] - kernel[0]) / stride[0] + 1, ow = (w + 2 * padding[1] - kernel[1]) / stride[1] + 1;
  auto yt = RankedTensorType::get({xt.getDimSize(0), xt.getDimSize(1), oh, ow}, xt.getElementType());
  // PyTorch's own kernels round before adding the zero point on
  // channels-last tensors, after it on NCHW ones; QNNPACK always before.
  mlir::OpBuilder &builder = in.builder();
  Value y = builder.create<cir::QuantAvgPool2DOp>(
      in.location(), yt, box.qstorage, i64s(in, kernel), i64s(in, stride), i64s(in, padding),
      includePad ? builder.getUnitAttr() : mlir::UnitAttr(), p, p,
      box.channelsLast && !qnnpack ? builder.getUnitAttr() : mlir::UnitAttr(),
      qnnpack ? builder.getStringAttr("qnnpack") : mlir::StringAttr());
  markInt8(y);
  return y;
}

} // namespace

//===----------------------------------------------------------------------===//
// Shared with the interpreter
//===----------------------------------------------------------------------===//

IValue makeQuantized(Interpreter &in, Value storage, mlir::Attribute params) {
  auto p = llvm::cast<cir::QuantParamsAttr>(params);
  auto f32 = RankedTensorType::get(typeOf(storage).getShape(), in.builder().getF32Type());
  auto box = std::make_shared<TensorBox>();
  box->value = in.builder().create<cir::DequantizeOp>(in.location(), f32, storage, p);
  box->qstorage = storage;
  box->qparams = p;
  return IValue::ofTensor(box);
}

IValue quantizeTo(Interpreter &in, Value real, mlir::Attribute params, Type storage) {
  auto p = llvm::cast<cir::QuantParamsAttr>(params);
  if (dtypeOf(real) != DType::Float32)
    real = cast(in, real, DType::Float32);
  auto type = RankedTensorType::get(typeOf(real).getShape(), storage);
  Value q = in.builder().create<cir::QuantizeOp>(in.location(), type, real, p);
  return makeQuantized(in, q, p);
}

IValue makePackedParams(Interpreter &in, const std::string &kind, const IValue &weight,
                        const IValue &bias, std::vector<int64_t> stride,
                        std::vector<int64_t> padding, std::vector<int64_t> dilation,
                        std::vector<int64_t> outputPadding, int64_t groups, bool transposed) {
  auto obj = std::make_shared<ObjectInst>();
  obj->className = "__torch__.torch.classes.quantized." + kind;
  obj->native = true;
  if (!weight.isTensor() || !weight.tensor->quantized())
    in.fail("CUVIL-E-IMPORT-QUANT", kind + ": the packed weight is not a quantized tensor");
  if (!bias.isNone() && (!bias.isTensor() || bias.tensor->quantized() ||
                         !isFloat(dtypeOf(bias.tensor->value))))
    in.fail("CUVIL-E-IMPORT-QUANT", kind + ": the bias must be a float tensor or None");
  obj->attrs["weight"] = weight;
  obj->attrs["bias"] = bias;
  if (kind == "Conv2dPackedParamsBase") {
    auto list = [](const std::vector<int64_t> &v) {
      IValueList items;
      for (int64_t x : v)
        items.push_back(IValue::integer(x));
      return IValue::makeList(std::move(items));
    };
    obj->attrs["stride"] = list(stride);
    obj->attrs["padding"] = list(padding);
    obj->attrs["dilation"] = list(dilation);
    obj->attrs["output_padding"] = list(outputPadding);
    obj->attrs["groups"] = IValue::integer(groups);
    obj->attrs["transposed"] = IValue::boolean(transposed);
  }
  IValue v;
  v.kind = K::Object;
  v.object = obj;
  return v;
}

IValue lowerOnQuantized(Interpreter &in, const std::string &name, std::vector<IValue> &args,
                        std::vector<std::pair<std::string, IValue>> &kwargs, bool &handled) {
  handled = false;
  if (name.rfind("quantized::", 0) == 0)
    return {};
  const TensorBox *first = nullptr;
  auto scan = [&](const IValue &v) {
    if (!first && v.isTensor() && v.tensor->quantized())
      first = v.tensor.get();
  };
  bool listsToo = name == "aten::cat" || name == "aten::stack";
  for (const IValue &v : args) {
    scan(v);
    if (listsToo && v.isSequence())
      for (const IValue &x : *v.list)
        scan(x);
  }
  for (auto &kv : kwargs)
    scan(kv.second);
  if (!first)
    return {};
  handled = true;
  auto params = llvm::cast<cir::QuantParamsAttr>(first->qparams);
  Type storage = typeOf(first->qstorage).getElementType();
  // What quantized tensors answer themselves.
  if (name == "aten::dequantize")
    return IValue::ofTensor(first->value);
  if (name == "aten::int_repr")
    return IValue::ofTensor(first->qstorage);
  if (name == "aten::is_quantized" || name == "prim::is_quantized")
    return IValue::boolean(true);
  if (name == "aten::is_floating_point")
    return IValue::boolean(false);
  if (name == "prim::dtype" || name == "aten::dtype")
    return IValue::integer(scalarTypeOfStorage(storage));
  if ((name == "aten::q_scale" || name == "aten::q_zero_point") && params.isPerTensor())
    return name == "aten::q_scale" ? IValue::floating(params.getScale()[0])
                                   : IValue::integer(params.getZeroPoint()[0]);
  if (name == "aten::adaptive_avg_pool2d" || name == "aten::avg_pool2d")
    if (Value pooled = quantizedAveragePool(in, name, args, kwargs))
      return withLayout(makeQuantized(in, pooled, params), first->channelsLast);
  Rule rule = ruleFor(name);
  if (rule == Rule::Pass) {
    handled = false;
    return {};
  }
  if (rule == Rule::Unsupported)
    return in.unsupported(name + " on a quantized tensor");
  cir::QuantParamsAttr out = params;
  if (rule == Rule::Sigmoid || rule == Rule::Tanh) {
    bool unsignedStorage = llvm::cast<mlir::IntegerType>(storage).isUnsigned();
    double scale = rule == Rule::Sigmoid ? 1.0 / 256 : 2.0 / 256;
    int64_t zp = rule == Rule::Sigmoid ? (unsignedStorage ? 0 : -128) : (unsignedStorage ? 128 : 0);
    out = perTensor(in, scale, zp, storage, name);
  } else if (!params.isPerTensor()) {
    return in.unsupported(name + " on a tensor quantized per channel");
  }
  // On the real values, then quantized as the rule says; element-wise ops
  // in float dequantize as PyTorch's vectorized kernels do.
  static const std::set<std::string> inFloatKernels = {
      "aten::leaky_relu", "aten::leaky_relu_", "aten::elu", "aten::hardswish", "aten::hardswish_",
      "aten::sigmoid", "aten::sigmoid_", "aten::hardsigmoid", "aten::hardsigmoid_", "aten::tanh", "aten::tanh_"};
  bool vectorized = inFloatKernels.count(name) && vectorizedKernel(in, name, storage);
  std::vector<IValue> plainArgs;
  for (const IValue &v : args)
    plainArgs.push_back(vectorized ? vectorizedRealValues(in, v) : realValues(v, listsToo));
  std::vector<std::pair<std::string, IValue>> plainKwargs;
  for (auto &[k, v] : kwargs)
    plainKwargs.emplace_back(k, plainOf(v));
  IValue r = in.callOperator(name, plainArgs, plainKwargs);
  auto requantize = [&](const IValue &v) -> IValue {
    if (!v.isTensor() || !isFloat(dtypeOf(v.tensor->value)))
      return v;
    // Reshapes and contiguous() give PyTorch's default (NCHW) layout.
    bool keepsLayout = name != "aten::contiguous" && name != "aten::view" && name != "aten::reshape" &&
                       name != "aten::flatten";
    return withLayout(quantizeTo(in, v.tensor->value, out, storage), keepsLayout && first->channelsLast);
  };
  IValue result;
  if (r.isSequence()) {
    IValueList items;
    for (const IValue &x : *r.list)
      items.push_back(requantize(x));
    result = r.is(K::Tuple) ? IValue::makeTuple(std::move(items)) : IValue::makeList(std::move(items));
  } else {
    result = requantize(r);
  }
  // In-place ops: the quantized tensor itself takes the result.
  if (name.back() == '_' && args[0].isTensor() && args[0].tensor->quantized() && result.isTensor()) {
    TensorBox &box = *args[0].tensor;
    box.value = result.tensor->value;
    box.qstorage = result.tensor->qstorage;
    box.qparams = result.tensor->qparams;
    box.channelsLast = result.tensor->channelsLast;
    return args[0];
  }
  return result;
}

void registerQuantizedHandlers(std::map<std::string, OpHandler> &t) {
  t["aten::quantize_per_tensor"] = [](Interpreter &in, const BoundArgs &b) -> IValue {
    Args a{in, b};
    if (b.has("tensors"))
      return in.unsupported("aten::quantize_per_tensor of a list of tensors");
    Value x = a.t("self");
    if (!isFloat(dtypeOf(x)))
      in.fail("CUVIL-E-IMPORT-QUANT", "aten::quantize_per_tensor: the input must be a float tensor");
    Type storage = storageOfScalarType(in, a.i("dtype"));
    double scale;
    int64_t zp;
    if (a["scale"].isTensor()) {
      scale = constantOf(in, a.t("scale"), "quantize_per_tensor's scale").getDouble(0);
      zp = constantOf(in, a.t("zero_point"), "quantize_per_tensor's zero point").getInt(0);
    } else {
      scale = a.f("scale");
      zp = a.i("zero_point");
    }
    return quantizeTo(in, x, perTensor(in, scale, zp, storage, "aten::quantize_per_tensor"), storage);
  };
  t["aten::quantize_per_channel"] = [](Interpreter &in, const BoundArgs &b) -> IValue {
    Args a{in, b};
    const std::string op = "aten::quantize_per_channel";
    Value x = a.t("self");
    Type storage = storageOfScalarType(in, a.i("dtype"));
    Tensor scales = constantOf(in, a.t("scales"), op + "'s scales");
    Tensor zeros = constantOf(in, a.t("zero_points"), op + "'s zero points");
    int64_t axis = wrapDim(in, a.i("axis"), rankOf(x));
    int64_t channels = typeOf(x).getDimSize(axis);
    if (scales.numElements() != channels || zeros.numElements() != channels)
      in.fail("CUVIL-E-IMPORT-QPARAMS", op + ": " + std::to_string(channels) +
                                            " channels but " + std::to_string(scales.numElements()) +
                                            " scales and " + std::to_string(zeros.numElements()) +
                                            " zero points");
    llvm::SmallVector<double> s;
    llvm::SmallVector<int64_t> z;
    for (int64_t c = 0; c < channels; ++c) {
      perTensor(in, scales.getDouble(c), zeros.getInt(c), storage, op); // checks
      s.push_back(scales.getDouble(c));
      z.push_back(zeros.getInt(c));
    }
    mlir::MLIRContext *ctx = in.context();
    auto p = cir::QuantParamsAttr::get(ctx, mlir::DenseF64ArrayAttr::get(ctx, s),
                                       mlir::DenseI64ArrayAttr::get(ctx, z), axis);
    return quantizeTo(in, x, p, storage);
  };
  // A dequantize of a float tensor is the tensor (quantized ones never get
  // here: lowerOnQuantized answers them).
  t["aten::dequantize"] = [](Interpreter &in, const BoundArgs &b) -> IValue {
    for (const char *name : {"self", "qtensor", "tensors", "qtensors"})
      if (b.has(name))
        return b.get(name);
    return in.unsupported("aten::dequantize of this argument");
  };
  t["quantized::conv2d"] = [](Interpreter &in, const BoundArgs &b) { return quantizedConv(in, b, "quantized::conv2d", false); };
  t["quantized::conv2d_relu"] = [](Interpreter &in, const BoundArgs &b) { return quantizedConv(in, b, "quantized::conv2d_relu", true); };
  t["quantized::conv_transpose2d"] = [](Interpreter &in, const BoundArgs &b) { return quantizedConv(in, b, "quantized::conv_transpose2d", false); };
  t["quantized::linear"] = [](Interpreter &in, const BoundArgs &b) { return quantizedLinear(in, b, "quantized::linear", false); };
  for (bool relu : {false, true}) {
    std::string name = relu ? "quantized::linear_relu_dynamic" : "quantized::linear_dynamic";
    t[name] = [name, relu](Interpreter &in, const BoundArgs &b) -> IValue {
      Args a{in, b};
      const IValue &x = a["X"];
      if (!x.isTensor() || x.tensor->quantized())
        in.fail("CUVIL-E-IMPORT-QUANT", name + ": expects a float input, got " + x.typeName());
      return dynamicQuantizedLinear(in, x.tensor->value, a["W_prepack"], a.b("reduce_range"), relu, name);
    };
  }
  t["quantized::make_quantized_cell_params_dynamic"] = [](Interpreter &in, const BoundArgs &b) -> IValue {
    Args a{in, b};
    return makeDynamicCellParams(in, a["w_ih"], a["w_hh"], a.b("reduce_range"));
  };
  t["quantized::linear_relu"] = [](Interpreter &in, const BoundArgs &b) { return quantizedLinear(in, b, "quantized::linear_relu", true); };
  t["quantized::add"] = [](Interpreter &in, const BoundArgs &b) -> IValue {
    if (!b.has("qb"))
      return in.unsupported("quantized::add of a tensor and a number");
    return quantizedAdd(in, b, "quantized::add", false);
  };
  t["quantized::add_relu"] = [](Interpreter &in, const BoundArgs &b) -> IValue {
    if (!b.has("qb"))
      return in.unsupported("quantized::add_relu of a tensor and a number");
    return quantizedAdd(in, b, "quantized::add_relu", true);
  };
  for (bool relu : {false, true}) {
    std::string name = relu ? "quantized::mul_relu" : "quantized::mul";
    t[name] = [name, relu](Interpreter &in, const BoundArgs &b) -> IValue {
      if (!b.has("qb"))
        return in.unsupported(name + " of a tensor and a number");
      Args a{in, b};
      QArg x = quantizedArg(in, a["qa"], name, "qa");
      QArg y = quantizedArg(in, a["qb"], name, "qb");
      cir::QuantParamsAttr out = perTensor(in, a.f("scale"), a.i("zero_point"), x.element(), name);
      auto xt = typeOf(x.storage), yt = typeOf(y.storage);
      llvm::SmallVector<int64_t> shape;
      // PyTorch multiplies the centred integers (QuantArithmetic.h).
      if (x.params.isPerTensor() && y.params.isPerTensor() && xt.getElementType() == yt.getElementType() &&
          mlir::succeeded(cir::broadcastShapes(xt.getShape(), yt.getShape(), shape))) {
        Value product = in.builder().create<cir::QuantMulOp>(
            in.location(), RankedTensorType::get(shape, xt.getElementType()), x.storage, y.storage, x.params,
            y.params, out, relu ? in.builder().getUnitAttr() : mlir::UnitAttr());
        markInt8(product);
        return withLayout(makeQuantized(in, product, out), channelsLastOf(a["qa"]));
      }
      return inFloat(in, "aten::mul", {a["qa"], a["qb"]}, x.element(), out, relu);
    };
    std::string cat = relu ? "quantized::cat_relu" : "quantized::cat";
    t[cat] = [cat, relu](Interpreter &in, const BoundArgs &b) -> IValue {
      Args a{in, b};
      const IValue &list = a["qx"];
      if (!list.isSequence() || list.list->empty())
        in.fail("CUVIL-E-IMPORT-QUANT", cat + ": expects a non-empty list of quantized tensors");
      QArg x0 = quantizedArg(in, list.list->front(), cat, "qx");
      for (const IValue &x : *list.list)
        quantizedArg(in, x, cat, "qx");
      // No output parameters: the first input's (as PyTorch does).
      cir::QuantParamsAttr out =
          a.none("scale") ? x0.params
                          : perTensor(in, a.f("scale"), a.none("zero_point") ? 0 : a.i("zero_point"),
                                      x0.element(), cat);
      if (!out.isPerTensor())
        return in.unsupported(cat + " of tensors quantized per channel");
      return inFloat(in, "aten::cat", {list, a["dim"]}, x0.element(), out, relu);
    };
  }
  // Element-wise ops PyTorch computes in float on the real values, then
  // quantizes with the call's output parameters: (op, aten op, the
  // quantized input's argument, further arguments passed on).
  struct FloatOp {
    const char *name, *aten, *input;
    std::vector<const char *> extra;
  };
  for (const FloatOp &f : {FloatOp{"quantized::hardswish", "aten::hardswish", "input", {}},
                           FloatOp{"quantized::sigmoid", "aten::sigmoid", "qx", {}},
                           FloatOp{"quantized::leaky_relu", "aten::leaky_relu", "qx", {"negative_slope"}}}) {
    t[f.name] = [f](Interpreter &in, const BoundArgs &b) -> IValue {
      Args a{in, b};
      QArg x = quantizedArg(in, a[f.input], f.name, f.input);
      std::vector<IValue> args{a[f.input]};
      for (const char *e : f.extra)
        args.push_back(a[e]);
      return inFloat(in, f.aten, std::move(args), x.element(),
                     perTensor(in, a.f("output_scale"), a.i("output_zero_point"), x.element(), f.name), false,
                     vectorizedKernel(in, f.name, x.element()));
    };
  }
  t["quantized::relu6"] = [](Interpreter &in, const BoundArgs &b) -> IValue {
    Args a{in, b};
    QArg x = quantizedArg(in, a["qx"], "quantized::relu6", "qx");
    if (!x.params.isPerTensor())
      return in.unsupported("quantized::relu6 of a tensor quantized per channel");
    return inFloat(in, "aten::hardtanh", {a["qx"], IValue::floating(0), IValue::floating(6)}, x.element(),
                   x.params, false);
  };
  t["quantized::batch_norm2d"] = [](Interpreter &in, const BoundArgs &b) -> IValue {
    Args a{in, b};
    QArg x = quantizedArg(in, a["qx"], "quantized::batch_norm2d", "qx");
    return inFloat(in, "aten::batch_norm",
                   {a["qx"], a["weight"], a["bias"], a["mean"], a["var"], IValue::boolean(false),
                    IValue::floating(0.1), a["eps"], IValue::boolean(false)},
                   x.element(),
                   perTensor(in, a.f("output_scale"), a.i("output_zero_point"), x.element(),
                             "quantized::batch_norm2d"),
                   false);
  };
  t["quantized::conv2d_prepack"] = [](Interpreter &in, const BoundArgs &b) { return packConv(in, b, false); };
  t["quantized::conv_transpose2d_prepack"] = [](Interpreter &in, const BoundArgs &b) { return packConv(in, b, true); };
  t["quantized::linear_prepack"] = [](Interpreter &in, const BoundArgs &b) -> IValue {
    Args a{in, b};
    QArg w = quantizedArg(in, a["W"], "quantized::linear_prepack", "W");
    if (typeOf(w.storage).getRank() != 2 || !w.element().isSignlessInteger(8))
      in.fail("CUVIL-E-IMPORT-QUANT", "quantized::linear_prepack: weights must be 2-D qint8");
    if (!w.params.isPerTensor() && w.params.getAxis() != 0)
      in.fail("CUVIL-E-IMPORT-QUANT", "quantized::linear_prepack: weights are quantized per channel "
                                      "along axis " + std::to_string(w.params.getAxis()) +
                                          ", not the output features'");
    return makePackedParams(in, "LinearPackedParamsBase", a["W"], a["B"], {}, {}, {}, {}, 1, false);
  };
  t["quantized::conv2d_unpack"] = [](Interpreter &in, const BoundArgs &b) { return unpack(in, b, "quantized::conv2d_unpack", true); };
  t["quantized::conv_transpose2d_unpack"] = [](Interpreter &in, const BoundArgs &b) { return unpack(in, b, "quantized::conv_transpose2d_unpack", true); };
  t["quantized::linear_unpack"] = [](Interpreter &in, const BoundArgs &b) -> IValue {
    if (!b.has("W_prepack") || !b.get("W_prepack").is(K::Object))
      return in.unsupported("quantized::linear_unpack of legacy packed weights");
    return unpack(in, b, "quantized::linear_unpack", false);
  };
}

} // namespace cuvil::torchscript
