//===- EvalQuant.cpp - Reference implementations of cuvil.quant.* ---------===//
#include "dialects/Cuvil/IR/CuvilOps.h"
#include "dialects/Cuvil/IR/QuantArithmetic.h"
#include "dialects/Cuvil/Reference/EvalHelpers.h"

#include <limits>
#include <vector>

namespace mlir::cuvil::reference {

namespace {

std::pair<int64_t, int64_t> storageRange(DType t) {
  switch (t) {
  case DType::UInt8: return {0, 255};
  case DType::Int8: return {-128, 127};
  default: return {INT32_MIN, INT32_MAX};
  }
}

/// For element `i` of a tensor of `shape`, the index into `params`' scales
/// (0 per tensor).
class ChannelOf {
public:
  ChannelOf(QuantParamsAttr params, const Shape &shape) {
    if (params.isPerTensor())
      return;
    channels = shape[params.getAxis()];
    for (size_t d = params.getAxis() + 1; d < shape.size(); ++d)
      inner *= shape[d];
  }
  int64_t operator()(int64_t i) const { return channels ? (i / inner) % channels : 0; }

private:
  int64_t channels = 0, inner = 1;
};

Tensor quantize(const Tensor &x, QuantParamsAttr p, DType storage) {
  Tensor q(storage, x.shape());
  auto [lo, hi] = storageRange(storage);
  ChannelOf channel(p, x.shape());
  for (int64_t i = 0; i < x.numElements(); ++i) {
    int64_t c = channel(i);
    q.setInt(i, quant::quantizeValue(static_cast<float>(x.getDouble(i)), p.scaleAt(c),
                                     p.zeroPointAt(c), lo, hi));
  }
  return q;
}

Tensor dequantize(const Tensor &q, QuantParamsAttr p, DType real, bool fused = false) {
  Tensor x(real, q.shape());
  ChannelOf channel(p, q.shape());
  if (fused) {
    for (int64_t i = 0; i < q.numElements(); ++i)
      x.setDouble(i, quant::dequantizeFused(q.getInt(i), p.scaleAt(0), p.zeroPointAt(0)));
    return x;
  }
  for (int64_t i = 0; i < q.numElements(); ++i) {
    int64_t c = channel(i);
    x.setDouble(i, quant::dequantizeValue(q.getInt(i), p.scaleAt(c), p.zeroPointAt(c),
                                                !p.isPerTensor()));
  }
  return x;
}

/// Per output channel of a quantized product: the bias quantized with
/// scale sx * sw (0 without bias) and the epilogue's multiplier.
struct ChannelEpilogue {
  int32_t biasQ = 0;
  float multiplier = 0;
  // oneDNN's epilogue (QuantArithmetic.h's onednnRequantize).
  bool onednn = false;
  quant::OnednnEpilogue dnn;
  float zeroPoint = 0;

  /// The accumulator (bias not added) to the output's storage.
  int64_t requantize(int32_t acc, QuantParamsAttr py, int64_t lo, int64_t hi) const {
    if (onednn)
      return quant::onednnRequantize(acc, dnn, zeroPoint, lo, hi);
    acc = static_cast<int32_t>(static_cast<uint32_t>(acc) + static_cast<uint32_t>(biasQ));
    return quant::requantizeAccumulator(acc, multiplier, py.zeroPointAt(0), lo, hi);
  }
  /// The accumulator dequantized (an f32 result).
  float dequantize(int32_t acc) const {
    if (onednn) {
      float sum = static_cast<float>(acc) + dnn.bias;
      return sum * dnn.multiplier;
    }
    acc = static_cast<int32_t>(static_cast<uint32_t>(acc) + static_cast<uint32_t>(biasQ));
    return quant::dequantizeAccumulator(acc, multiplier);
  }
};

ChannelEpilogue channelEpilogue(QuantParamsAttr px, QuantParamsAttr pw, QuantParamsAttr py,
                                const Tensor *bias, int64_t o, bool onednn) {
  ChannelEpilogue e;
  double sw = pw.scaleAt(o);
  if (onednn) {
    e.onednn = true;
    e.dnn = quant::onednnEpilogue(px.scaleAt(0), sw, bias ? static_cast<float>(bias->getDouble(o)) : 0.0f,
                                  py ? py.scaleAt(0) : 1.0, !py);
    e.zeroPoint = py ? static_cast<float>(py.zeroPointAt(0)) : 0.0f;
    return e;
  }
  if (bias)
    e.biasQ = static_cast<int32_t>(quant::quantizeValue(static_cast<float>(bias->getDouble(o)),
                                                        px.scaleAt(0) * sw, 0, INT32_MIN, INT32_MAX));
  // Without output parameters (an f32 result) the sums are dequantized.
  e.multiplier = py ? quant::requantizeMultiplier(px.scaleAt(0), sw, py.scaleAt(0))
                    : quant::dequantizeScale(px.scaleAt(0), sw);
  return e;
}

/// quantized::linear_dynamic: the input quantized to u8 by its own range
/// (quant::chooseDynamicParams), int32 sums of centred products, then the
/// engine's float epilogue with the bias (QuantOps.td).
Tensor quantLinearDynamic(QuantLinearDynamicOp op, const Tensor &x, const Tensor &w, const Tensor *bias) {
  int64_t m = x.dim(0), k = x.dim(1), n = w.dim(0);
  Tensor y(DType::Float32, {m, n});
  bool onednn = op.getArithmetic() == "onednn";
  float lo = std::numeric_limits<float>::infinity(), hi = -lo;
  bool finite = true;
  std::vector<float> xs(static_cast<size_t>(m * k));
  for (int64_t i = 0; i < m * k; ++i) {
    float v = static_cast<float>(x.getDouble(i));
    finite &= std::isfinite(v);
    lo = std::fmin(lo, v);
    hi = std::fmax(hi, v);
    xs[static_cast<size_t>(i)] = v;
  }
  if (m * k == 0)
    lo = hi = 0.0f;
  // QNNPACK ignores reduce_range.
  quant::DynamicParams p = quant::chooseDynamicParams(lo, hi, onednn && op.getReduceRange());
  if (!finite || !p.finite) {
    for (int64_t i = 0; i < m * n; ++i)
      y.setDouble(i, std::numeric_limits<double>::quiet_NaN());
    return y;
  }
  std::vector<int32_t> q(xs.size());
  float inverse = onednn ? static_cast<float>(1.0 / p.scale) : 1.0f / static_cast<float>(p.scale);
  for (size_t i = 0; i < xs.size(); ++i)
    q[i] = static_cast<int32_t>(onednn ? quant::onednnQuantizeU8(xs[i], inverse, static_cast<float>(p.zeroPoint))
                                       : quant::quantizeValue(xs[i], p.scale, p.zeroPoint, 0, 255));
  QuantParamsAttr pw = op.getWeightParams();
  for (int64_t j = 0; j < n; ++j) {
    int64_t zw = pw.zeroPointAt(j);
    float b = bias ? static_cast<float>(bias->getDouble(j)) : 0.0f;
    quant::OnednnEpilogue dnn = quant::onednnEpilogue(p.scale, pw.scaleAt(j), b, 1.0, /*floatResult=*/true);
    float multiplier = quant::dequantizeScale(p.scale, pw.scaleAt(j)); // QNNPACK: float(sw) * float(sx)
    for (int64_t i = 0; i < m; ++i) {
      uint32_t acc = 0; // int32, wrapping
      for (int64_t kk = 0; kk < k; ++kk)
        acc += static_cast<uint32_t>((q[static_cast<size_t>(i * k + kk)] - p.zeroPoint) * (w.getInt(j * k + kk) - zw));
      float sum = static_cast<float>(static_cast<int32_t>(acc));
      float v;
      if (onednn) {
        sum = sum + dnn.bias;
        v = sum * dnn.multiplier;
      } else {
        v = sum * multiplier;
        v = v + b;
      }
      if (op.getRelu())
        v = std::fmax(v, 0.0f);
      y.setDouble(i * n + j, v);
    }
  }
  return y;
}

/// PyTorch's quantized linear (QNNPACK): int32 sums of centred products,
/// the bias quantized with scale sx * sw, the float requantize epilogue.
Tensor quantLinear(QuantLinearOp op, const Tensor &x, const Tensor &w, const Tensor *bias,
                   DType storage) {
  QuantParamsAttr px = op.getInputParams(), pw = op.getWeightParams(), py = op.getOutputParamsAttr();
  int64_t m = x.dim(0), k = x.dim(1), n = w.dim(0);
  Tensor y(storage, {m, n});
  auto [lo, hi] = storageRange(storage);
  int64_t zx = px.zeroPointAt(0);
  for (int64_t j = 0; j < n; ++j) {
    int64_t zw = pw.zeroPointAt(j);
    ChannelEpilogue e = channelEpilogue(px, pw, py, bias, j, op.getArithmetic() == "onednn");
    for (int64_t i = 0; i < m; ++i) {
      uint32_t acc = 0; // int32, wrapping
      for (int64_t kk = 0; kk < k; ++kk)
        acc += static_cast<uint32_t>((x.getInt(i * k + kk) - zx) * (w.getInt(j * k + kk) - zw));
      if (!py)
        y.setDouble(i * n + j, e.dequantize(static_cast<int32_t>(acc)));
      else
        y.setInt(i * n + j, e.requantize(static_cast<int32_t>(acc), py, lo, hi));
    }
  }
  return y;
}

/// PyTorch's quantized convolution (QNNPACK): as quantLinear over each
/// output pixel's window; padded positions contribute nothing.
Tensor quantConv2d(QuantConv2DOp op, const Tensor &x, const Tensor &w, const Tensor *bias,
                   const Shape &outShape, DType storage) {
  QuantParamsAttr px = op.getInputParams(), pw = op.getWeightParams(), py = op.getOutputParamsAttr();
  int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), wd = x.dim(3);
  int64_t co = w.dim(0), cig = w.dim(1), kh = w.dim(2), kw = w.dim(3);
  int64_t oh = outShape[2], ow = outShape[3], groups = op.getGroups(), cog = co / groups;
  ArrayRef<int64_t> st = op.getStride(), pad = op.getPadding(), dil = op.getDilation();
  Tensor y(storage, outShape);
  auto [lo, hi] = storageRange(storage);
  int64_t zx = px.zeroPointAt(0);
  for (int64_t o = 0; o < co; ++o) {
    int64_t g = o / cog, zw = pw.zeroPointAt(o);
    ChannelEpilogue ep = channelEpilogue(px, pw, py, bias, o, op.getArithmetic() == "onednn");
    for (int64_t b = 0; b < n; ++b)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          uint32_t acc = 0; // int32, wrapping
          for (int64_t ci = 0; ci < cig; ++ci)
            for (int64_t a = 0; a < kh; ++a)
              for (int64_t e = 0; e < kw; ++e) {
                int64_t r = i * st[0] - pad[0] + a * dil[0], s = j * st[1] - pad[1] + e * dil[1];
                if (r < 0 || r >= h || s < 0 || s >= wd)
                  continue;
                int64_t xv = x.getInt(((b * c + g * cig + ci) * h + r) * wd + s) - zx;
                int64_t wv = w.getInt(((o * cig + ci) * kh + a) * kw + e) - zw;
                acc += static_cast<uint32_t>(xv * wv);
              }
          int64_t at = ((b * co + o) * oh + i) * ow + j;
          if (!py)
            y.setDouble(at, ep.dequantize(static_cast<int32_t>(acc)));
          else
            y.setInt(at, ep.requantize(static_cast<int32_t>(acc), py, lo, hi));
        }
  }
  return y;
}

} // namespace

void registerQuantEvaluators(OpEvaluators &e) {
  e.add<QuantConv2DOp>([](QuantConv2DOp op, ArrayRef<Tensor> a) -> FailureOr<Tensor> {
    auto out = llvm::cast<RankedTensorType>(op.getType());
    if (!out.hasStaticShape()) {
      op.emitError() << "the reference evaluator needs a static result shape";
      return failure();
    }
    return quantConv2d(op, a[0], a[1], a.size() > 2 ? &a[2] : nullptr,
                       Shape(out.getShape().begin(), out.getShape().end()), resultDType(op));
  });
  e.add<QuantLinearOp>([](QuantLinearOp op, ArrayRef<Tensor> a) -> FailureOr<Tensor> {
    return quantLinear(op, a[0], a[1], a.size() > 2 ? &a[2] : nullptr, resultDType(op));
  });
  e.add<QuantLinearDynamicOp>([](QuantLinearDynamicOp op, ArrayRef<Tensor> a) -> FailureOr<Tensor> {
    return quantLinearDynamic(op, a[0], a[1], a.size() > 2 ? &a[2] : nullptr);
  });
  e.add<QuantizeOp>([](QuantizeOp op, ArrayRef<Tensor> a) -> FailureOr<Tensor> {
    return quantize(a[0], op.getParams(), resultDType(op));
  });
  e.add<DequantizeOp>([](DequantizeOp op, ArrayRef<Tensor> a) -> FailureOr<Tensor> {
    return dequantize(a[0], op.getParams(), resultDType(op), op.getFused());
  });
  e.add<QuantAddOp>([](QuantAddOp op, ArrayRef<Tensor> a) -> FailureOr<Tensor> {
    DType storage = resultDType(op);
    Tensor y(storage, a[0].shape());
    auto [lo, hi] = storageRange(storage);
    QuantParamsAttr pa = op.getLhsParams(), pb = op.getRhsParams(), py = op.getOutputParams();
    if (op.getArithmetic() == "qnnpack") {
      quant::QnnpackAddParams p = quant::qnnpackAddParams(pa.scaleAt(0), pa.zeroPointAt(0), pb.scaleAt(0),
                                                          pb.zeroPointAt(0), py.scaleAt(0));
      if (!p.valid) {
        op.emitError() << "the scales' ratios are outside what QNNPACK's addition takes ([2^-14, 2^8))";
        return failure();
      }
      int64_t floor = op.getRelu() ? std::max<int64_t>(lo, py.zeroPointAt(0)) : lo;
      for (int64_t i = 0; i < y.numElements(); ++i)
        y.setInt(i, quant::qnnpackAdd(a[0].getInt(i), a[1].getInt(i), p, py.zeroPointAt(0), floor, hi));
      return y;
    }
    for (int64_t i = 0; i < y.numElements(); ++i)
      y.setInt(i, quant::addValues(a[0].getInt(i), pa.scaleAt(0), pa.zeroPointAt(0), a[1].getInt(i),
                                   pb.scaleAt(0), pb.zeroPointAt(0), op.getRelu(), py.scaleAt(0),
                                   py.zeroPointAt(0), lo, hi));
    return y;
  });
  e.add<QuantMulOp>([](QuantMulOp op, ArrayRef<Tensor> a) -> FailureOr<Tensor> {
    FailureOr<Shape> shape = broadcastRuntime(op, a[0].shape(), a[1].shape());
    if (failed(shape))
      return failure();
    DType storage = resultDType(op);
    FailureOr<Tensor> y = allocate(op, storage, *shape);
    if (failed(y))
      return failure();
    auto [lo, hi] = storageRange(storage);
    QuantParamsAttr pa = op.getLhsParams(), pb = op.getRhsParams(), py = op.getOutputParams();
    float m = quant::mulMultiplier(pa.scaleAt(0), pb.scaleAt(0), py.scaleAt(0));
    int64_t zy = py.zeroPointAt(0), floor = op.getRelu() ? std::max<int64_t>(lo, zy) : lo;
    std::vector<int64_t> ia = broadcastIndexMap(*shape, a[0].shape()), ib = broadcastIndexMap(*shape, a[1].shape());
    for (int64_t i = 0; i < y->numElements(); ++i)
      y->setInt(i, quant::mulValues(a[0].getInt(ia[i]), pa.zeroPointAt(0), a[1].getInt(ib[i]), pb.zeroPointAt(0), m,
                                    zy, floor, hi));
    return *y;
  });
  e.add<QuantAvgPool2DOp>([](QuantAvgPool2DOp op, ArrayRef<Tensor> a) -> FailureOr<Tensor> {
    auto out = llvm::cast<RankedTensorType>(op.getType());
    if (!out.hasStaticShape()) {
      op.emitError() << "the reference evaluator needs a static result shape";
      return failure();
    }
    const Tensor &x = a[0];
    DType storage = resultDType(op);
    Tensor y(storage, Shape(out.getShape().begin(), out.getShape().end()));
    auto [lo, hi] = storageRange(storage);
    QuantParamsAttr px = op.getInputParams(), py = op.getOutputParams();
    int64_t zx = px.zeroPointAt(0), zy = py.zeroPointAt(0);
    bool qnnpack = op.getArithmetic() == "qnnpack";
    bool roundFirst = qnnpack || op.getRoundBeforeZeroPoint();
    ArrayRef<int64_t> k = op.getKernelSize(), st = op.getStride(), pad = op.getPadding();
    int64_t nc = x.dim(0) * x.dim(1), h = x.dim(2), w = x.dim(3), oh = out.getDimSize(2), ow = out.getDimSize(3);
    for (int64_t p = 0; p < nc; ++p)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          uint32_t acc = 0;
          int64_t taps = 0;
          for (int64_t u = 0; u < k[0]; ++u)
            for (int64_t v = 0; v < k[1]; ++v) {
              int64_t r = i * st[0] - pad[0] + u, c = j * st[1] - pad[1] + v;
              if (r < 0 || r >= h || c < 0 || c >= w)
                continue;
              acc += static_cast<uint32_t>(x.getInt((p * h + r) * w + c) - zx);
              ++taps;
            }
          int64_t divisor = op.getCountIncludePad() ? k[0] * k[1] : taps;
          float m = qnnpack ? quant::qnnpackAverageMultiplier(px.scaleAt(0), py.scaleAt(0), k[0] * k[1])
                            : quant::averageMultiplier(px.scaleAt(0), py.scaleAt(0), divisor);
          y.setInt((p * oh + i) * ow + j,
                   quant::averageValue(static_cast<int32_t>(acc), m, zy, roundFirst, lo, hi));
        }
    return y;
  });
  // PyTorch's requantize_val: the real value in float, then quantized.
  e.add<RequantizeOp>([](RequantizeOp op, ArrayRef<Tensor> a) -> FailureOr<Tensor> {
    return quantize(dequantize(a[0], op.getInputParams(), DType::Float32), op.getOutputParams(),
                    resultDType(op));
  });
}

} // namespace mlir::cuvil::reference
