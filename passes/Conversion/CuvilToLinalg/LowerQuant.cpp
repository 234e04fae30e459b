//===- LowerQuant.cpp - cuvil.quant.* to linalg ----------------------------===//
//
// Quantize, dequantize and requantize as element-wise linalg.generic ops
// with PyTorch's arithmetic (dialects/Cuvil/IR/QuantArithmetic.h, which the
// reference evaluator runs): per tensor the parameters are constants in
// the body, per channel they are constant tensors of shape [C, 1, ...]
// broadcast along the channel dimension.
//
//===----------------------------------------------------------------------===//
#include "passes/Conversion/CuvilToLinalg/Patterns.h"

#include "dialects/Cuvil/IR/CuvilOps.h"
#include "dialects/Cuvil/IR/QuantArithmetic.h"
#include "passes/Conversion/CuvilToLinalg/LoweringUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>
#include <limits>

namespace mlir::cuvil::lowering {
namespace {

/// The parameters one element is computed with: the inverse scale (or the
/// scale) and the zero point, as the arithmetic takes them.
struct ChannelParams {
  SmallVector<float> scale;   ///< float(scale), or 1.0f / float(scale)
  SmallVector<double> scaleD; ///< the scale itself (per-channel dequantize)
  SmallVector<float> zeroF;   ///< float(zero point)
  SmallVector<int32_t> zeroI; ///< int32(zero point) (per-tensor dequantize)
  SmallVector<int64_t> zeroL; ///< the zero point (per-channel dequantize)
};

ChannelParams channelParams(QuantParamsAttr p, bool inverse) {
  ChannelParams c;
  for (auto [s, z] : llvm::zip(p.getScale().asArrayRef(), p.getZeroPoint().asArrayRef())) {
    float sf = static_cast<float>(s);
    c.scale.push_back(inverse ? 1.0f / sf : sf);
    c.scaleD.push_back(s);
    c.zeroF.push_back(static_cast<float>(z));
    c.zeroI.push_back(static_cast<int32_t>(z));
    c.zeroL.push_back(z);
  }
  return c;
}

/// The values of a per-channel parameter as a [C, 1, ...] constant that
/// broadcasts along `axis` of a rank-`rank` tensor.
template <typename T>
Value channelConstant(OpBuilder &b, Location loc, ArrayRef<T> values, Type element, int64_t axis,
                      int64_t rank) {
  SmallVector<int64_t> shape{static_cast<int64_t>(values.size())};
  shape.append(rank - axis - 1, 1);
  auto type = RankedTensorType::get(shape, element);
  return b.create<arith::ConstantOp>(loc, DenseElementsAttr::get(type, values));
}

/// Inputs of the generic for `p`: none per tensor, else the scale and zero
/// point tensors.
SmallVector<Value> paramOperands(OpBuilder &b, Location loc, QuantParamsAttr p,
                                 const ChannelParams &c, int64_t rank, bool integerZero) {
  if (p.isPerTensor())
    return {};
  // Dequantizing per channel is done in double (PyTorch's arithmetic).
  Value scale = integerZero
                    ? channelConstant<double>(b, loc, c.scaleD, b.getF64Type(), p.getAxis(), rank)
                    : channelConstant<float>(b, loc, c.scale, b.getF32Type(), p.getAxis(), rank);
  Value zero = integerZero ? channelConstant<int64_t>(b, loc, c.zeroL, b.getI64Type(), p.getAxis(), rank)
                           : channelConstant<float>(b, loc, c.zeroF, b.getF32Type(), p.getAxis(), rank);
  return {scale, zero};
}

/// Scale and zero point of this element: body scalars per channel,
/// constants per tensor.
std::pair<Value, Value> paramScalars(OpBuilder &b, Location loc, QuantParamsAttr p,
                                     const ChannelParams &c, ValueRange scalars, bool integerZero) {
  if (!p.isPerTensor())
    return {scalars[0], scalars[1]};
  Value scale = b.create<arith::ConstantOp>(loc, b.getF32FloatAttr(c.scale[0]));
  Value zero = integerZero ? b.create<arith::ConstantOp>(loc, b.getI32IntegerAttr(c.zeroI[0]))
                           : b.create<arith::ConstantOp>(loc, b.getF32FloatAttr(c.zeroF[0]));
  return {scale, zero};
}

/// q (a storage scalar; `unsignedStorage` for ui8) to the real value, f32:
/// in int32 (wrapping) and float per tensor, in int64 and double per
/// channel (`zero`'s type says which).
Value dequantizeScalar(OpBuilder &b, Location loc, Value q, bool unsignedStorage, Value scale,
                       Value zero) {
  Type wide = zero.getType();
  if (q.getType() != wide)
    q = unsignedStorage ? b.create<arith::ExtUIOp>(loc, wide, q).getResult()
                        : b.create<arith::ExtSIOp>(loc, wide, q).getResult();
  Value centred = b.create<arith::SubIOp>(loc, q, zero);
  Value real = b.create<arith::SIToFPOp>(loc, scale.getType(), centred);
  Value product = b.create<arith::MulFOp>(loc, scale, real);
  if (!product.getType().isF32())
    product = b.create<arith::TruncFOp>(loc, b.getF32Type(), product);
  return product;
}

/// x (f32) to storage `storage` (signless; `unsignedStorage` for ui8).
Value quantizeScalar(OpBuilder &b, Location loc, Value x, Type storage, bool unsignedStorage,
                     Value inverseScale, Value zero) {
  Value scaled = b.create<arith::MulFOp>(loc, x, inverseScale);
  Value v = b.create<arith::AddFOp>(loc, zero, b.create<math::RoundEvenOp>(loc, scaled));
  unsigned width = storage.getIntOrFloatBitWidth();
  int64_t qmin = unsignedStorage ? 0 : -(int64_t(1) << (width - 1));
  int64_t qmax = unsignedStorage ? (int64_t(1) << width) - 1 : (int64_t(1) << (width - 1)) - 1;
  Type i64 = b.getI64Type();
  // NaN and values beyond int64 become qmin, as x86's conversion makes them.
  Value limit = b.create<arith::ConstantOp>(loc, b.getF32FloatAttr(9223372036854775808.0f));
  Value negLimit = b.create<arith::ConstantOp>(loc, b.getF32FloatAttr(-9223372036854775808.0f));
  Value inRange = b.create<arith::AndIOp>(
      loc, b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OGT, v, negLimit),
      b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OLT, v, limit));
  Value lo = b.create<arith::ConstantOp>(loc, b.getI64IntegerAttr(qmin));
  Value hi = b.create<arith::ConstantOp>(loc, b.getI64IntegerAttr(qmax));
  Value zeroF = b.create<arith::ConstantOp>(loc, b.getF32FloatAttr(0.0f));
  Value safe = b.create<arith::SelectOp>(loc, inRange, v, zeroF);
  Value q = b.create<arith::FPToSIOp>(loc, i64, safe);
  q = b.create<arith::MinSIOp>(loc, b.create<arith::MaxSIOp>(loc, q, lo), hi);
  q = b.create<arith::SelectOp>(loc, inRange, q, lo);
  return b.create<arith::TruncIOp>(loc, storage, q);
}

bool isUnsignedStorage(Value cuvilTensor) { return scalarTypeOf(cuvilTensor).isUnsigned; }

/// quantizeScalar for an x known finite with |x * inverseScale| far below
/// 2^31 (a sum of dequantized 8-bit values): no NaN or int64 guards, the
/// clamp in float (exact: every value is an integer), an i32 conversion,
/// so that the loop vectorizes.
Value quantizeBoundedScalar(OpBuilder &b, Location loc, Value x, Type storage, bool unsignedStorage,
                            Value inverseScale, Value zero) {
  Value v = b.create<arith::AddFOp>(
      loc, zero, b.create<math::RoundEvenOp>(loc, b.create<arith::MulFOp>(loc, x, inverseScale)));
  unsigned width = storage.getIntOrFloatBitWidth();
  float qmin = unsignedStorage ? 0.0f : -float(int64_t(1) << (width - 1));
  float qmax = unsignedStorage ? float((int64_t(1) << width) - 1) : float((int64_t(1) << (width - 1)) - 1);
  v = b.create<arith::MinimumFOp>(
      loc, b.create<arith::MaximumFOp>(loc, v, b.create<arith::ConstantOp>(loc, b.getF32FloatAttr(qmin))),
      b.create<arith::ConstantOp>(loc, b.getF32FloatAttr(qmax)));
  Value q = b.create<arith::FPToSIOp>(loc, b.getI32Type(), v);
  return b.create<arith::TruncIOp>(loc, storage, q);
}

Value toF32(OpBuilder &b, Location loc, Value x, ScalarType from) {
  return convertScalar(b, loc, x, from, ScalarType{b.getF32Type()});
}

struct QuantizeLowering : OpConversionPattern<QuantizeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(QuantizeOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = convertTensorType(llvm::cast<RankedTensorType>(op.getType()));
    QuantParamsAttr p = op.getParams();
    ChannelParams c = channelParams(p, /*inverse=*/true);
    SmallVector<Value> operands{adaptor.getInput()};
    llvm::append_range(operands, paramOperands(rewriter, loc, p, c, type.getRank(), false));
    ScalarType in = scalarTypeOf(op.getInput());
    bool unsignedStorage = isUnsignedStorage(op.getResult());
    Value r = elementwiseGeneric(rewriter, loc, type, operands, [&](OpBuilder &b, Location l, ValueRange s) {
      auto [inverse, zero] = paramScalars(b, l, p, c, s.drop_front(), false);
      return quantizeScalar(b, l, toF32(b, l, s[0], in), type.getElementType(), unsignedStorage,
                            inverse, zero);
    });
    rewriter.replaceOp(op, r);
    return success();
  }
};

Value widen(OpBuilder &b, Location loc, Value q, bool unsignedStorage);

struct DequantizeLowering : OpConversionPattern<DequantizeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(DequantizeOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = convertTensorType(llvm::cast<RankedTensorType>(op.getType()));
    QuantParamsAttr p = op.getParams();
    ChannelParams c = channelParams(p, /*inverse=*/false);
    SmallVector<Value> operands{adaptor.getInput()};
    llvm::append_range(operands, paramOperands(rewriter, loc, p, c, type.getRank(), true));
    bool unsignedStorage = isUnsignedStorage(op.getInput());
    ScalarType out = scalarTypeOf(op.getResult());
    bool fused = op.getFused();
    Value r = elementwiseGeneric(rewriter, loc, type, operands, [&](OpBuilder &b, Location l, ValueRange s) {
      auto [scale, zero] = paramScalars(b, l, p, c, s.drop_front(), true);
      Value real;
      if (fused) { // fma(s, q, s * -z), QuantArithmetic.h's dequantizeFused
        Value sf = b.create<arith::ConstantOp>(l, b.getF32FloatAttr(c.scale[0]));
        Value q = b.create<arith::SIToFPOp>(l, b.getF32Type(), widen(b, l, s[0], unsignedStorage));
        Value premultiplied =
            b.create<arith::ConstantOp>(l, b.getF32FloatAttr(c.scale[0] * static_cast<float>(-c.zeroL[0])));
        real = b.create<math::FmaOp>(l, sf, q, premultiplied);
      } else {
        real = dequantizeScalar(b, l, s[0], unsignedStorage, scale, zero);
      }
      return convertScalar(b, l, real, ScalarType{b.getF32Type()}, out);
    });
    rewriter.replaceOp(op, r);
    return success();
  }
};

struct RequantizeLowering : OpConversionPattern<RequantizeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(RequantizeOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = convertTensorType(llvm::cast<RankedTensorType>(op.getType()));
    QuantParamsAttr pin = op.getInputParams(), pout = op.getOutputParams();
    ChannelParams cin = channelParams(pin, false), cout = channelParams(pout, true);
    SmallVector<Value> operands{adaptor.getInput()};
    SmallVector<Value> inOps = paramOperands(rewriter, loc, pin, cin, type.getRank(), true);
    SmallVector<Value> outOps = paramOperands(rewriter, loc, pout, cout, type.getRank(), false);
    llvm::append_range(operands, inOps);
    llvm::append_range(operands, outOps);
    bool unsignedIn = isUnsignedStorage(op.getInput());
    bool unsignedOut = isUnsignedStorage(op.getResult());
    size_t nin = inOps.size();
    Value r = elementwiseGeneric(rewriter, loc, type, operands, [&](OpBuilder &b, Location l, ValueRange s) {
      auto [scale, zeroI] = paramScalars(b, l, pin, cin, s.slice(1, nin), true);
      auto [inverse, zeroF] = paramScalars(b, l, pout, cout, s.drop_front(1 + nin), false);
      Value real = dequantizeScalar(b, l, s[0], unsignedIn, scale, zeroI);
      return quantizeScalar(b, l, real, type.getElementType(), unsignedOut, inverse, zeroF);
    });
    rewriter.replaceOp(op, r);
    return success();
  }
};

/// qadd: both operands dequantized per tensor, summed in float (max with
/// 0 for relu), quantized with the output's parameters.

struct QuantAddLowering : OpConversionPattern<QuantAddOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(QuantAddOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = convertTensorType(llvm::cast<RankedTensorType>(op.getType()));
    ChannelParams ca = channelParams(op.getLhsParams(), false), cb = channelParams(op.getRhsParams(), false),
                  cy = channelParams(op.getOutputParams(), true);
    bool unsignedA = isUnsignedStorage(op.getLhs()), unsignedB = isUnsignedStorage(op.getRhs());
    bool unsignedY = isUnsignedStorage(op.getResult()), relu = op.getRelu();
    // |sum| <= 256 (sa + sb) (8-bit operands): with the output's scale far
    // from making that 2^31, the sum is quantized without the guards.
    double reach = 256.0 * (std::fabs(op.getLhsParams().scaleAt(0)) + std::fabs(op.getRhsParams().scaleAt(0))) *
                   std::fabs(double(cy.scale[0])) + 256.0;
    bool bounded = std::isfinite(reach) && reach < 1e9;
    if (op.getArithmetic() == "qnnpack") {
      // QNNPACK's fixed point (QuantArithmetic.h's qnnpackAdd), in int32.
      quant::QnnpackAddParams p = quant::qnnpackAddParams(
          op.getLhsParams().scaleAt(0), op.getLhsParams().zeroPointAt(0), op.getRhsParams().scaleAt(0),
          op.getRhsParams().zeroPointAt(0), op.getOutputParams().scaleAt(0));
      if (!p.valid)
        return rewriter.notifyMatchFailure(op, "scales outside QNNPACK's range");
      int64_t zy = op.getOutputParams().zeroPointAt(0);
      int64_t lo = relu ? zy : 0;
      Value r = elementwiseGeneric(
          rewriter, loc, type, ValueRange{adaptor.getLhs(), adaptor.getRhs()},
          [&](OpBuilder &b, Location l, ValueRange s) {
            auto c = [&](int64_t v) {
              return b.create<arith::ConstantOp>(l, b.getI32IntegerAttr(static_cast<int32_t>(v))).getResult();
            };
            Value a = widen(b, l, s[0], true), bb = widen(b, l, s[1], true);
            Value acc = b.create<arith::AddIOp>(
                l, c(p.zeroPointProduct),
                b.create<arith::AddIOp>(l, b.create<arith::MulIOp>(l, a, c(static_cast<int32_t>(p.aMultiplier))),
                                        b.create<arith::MulIOp>(l, bb, c(static_cast<int32_t>(p.bMultiplier)))));
            Value negative = b.create<arith::ExtUIOp>(
                l, b.getI32Type(), b.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt, acc, c(0)));
            Value rem = b.create<arith::SubIOp>(l, b.create<arith::AndIOp>(l, acc, c(p.remainderMask)), negative);
            Value up = b.create<arith::ExtUIOp>(
                l, b.getI32Type(), b.create<arith::CmpIOp>(l, arith::CmpIPredicate::sgt, rem, c(p.remainderThreshold)));
            Value y = b.create<arith::AddIOp>(
                l, b.create<arith::AddIOp>(l, b.create<arith::ShRSIOp>(l, acc, c(p.shift)), up), c(zy));
            y = b.create<arith::MinSIOp>(l, b.create<arith::MaxSIOp>(l, y, c(lo)), c(255));
            return b.create<arith::TruncIOp>(l, type.getElementType(), y).getResult();
          });
      rewriter.replaceOp(op, r);
      return success();
    }
    Value r = elementwiseGeneric(
        rewriter, loc, type, ValueRange{adaptor.getLhs(), adaptor.getRhs()},
        [&](OpBuilder &b, Location l, ValueRange s) {
          auto [sa, za] = paramScalars(b, l, op.getLhsParams(), ca, {}, true);
          auto [sb, zb] = paramScalars(b, l, op.getRhsParams(), cb, {}, true);
          auto [inverse, zy] = paramScalars(b, l, op.getOutputParams(), cy, {}, false);
          // fma(s, q, s * -z): PyTorch's vectorized dequantization (QuantArithmetic.h).
          auto fused = [&](Value q, bool unsignedQ, Value scale, Value zero) -> Value {
            Type wide = zero.getType();
            if (q.getType() != wide)
              q = unsignedQ ? b.create<arith::ExtUIOp>(l, wide, q).getResult()
                            : b.create<arith::ExtSIOp>(l, wide, q).getResult();
            Value qf = b.create<arith::SIToFPOp>(l, b.getF32Type(), q);
            Value zf = b.create<arith::SIToFPOp>(l, b.getF32Type(), zero);
            Value premultiplied = b.create<arith::MulFOp>(l, scale, b.create<arith::NegFOp>(l, zf));
            return b.create<math::FmaOp>(l, scale, qf, premultiplied);
          };
          Value sum = b.create<arith::AddFOp>(l, fused(s[0], unsignedA, sa, za), fused(s[1], unsignedB, sb, zb));
          if (relu)
            sum = b.create<arith::MaximumFOp>(
                l, sum, b.create<arith::ConstantOp>(l, b.getF32FloatAttr(0.0f)));
          if (bounded)
            return quantizeBoundedScalar(b, l, sum, type.getElementType(), unsignedY, inverse, zy);
          return quantizeScalar(b, l, sum, type.getElementType(), unsignedY, inverse, zy);
        });
    rewriter.replaceOp(op, r);
    return success();
  }
};

/// qmul: the centred operands' int32 product, zy + nearbyint(float(c) *
/// m), saturated (at zy with relu); operands broadcast.
struct QuantMulLowering : OpConversionPattern<QuantMulOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(QuantMulOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    auto type = convertTensorType(llvm::cast<RankedTensorType>(op.getType()));
    QuantParamsAttr pa = op.getLhsParams(), pb = op.getRhsParams(), py = op.getOutputParams();
    float m = quant::mulMultiplier(pa.scaleAt(0), pb.scaleAt(0), py.scaleAt(0));
    bool unsignedA = isUnsignedStorage(op.getLhs()), unsignedB = isUnsignedStorage(op.getRhs());
    bool unsignedY = isUnsignedStorage(op.getResult());
    int64_t zy = py.zeroPointAt(0);
    int64_t qmin = unsignedY ? 0 : -128, qmax = unsignedY ? 255 : 127;
    int64_t lo = op.getRelu() ? std::max(qmin, zy) : qmin;
    Value r = elementwiseGeneric(
        rewriter, op.getLoc(), type, ValueRange{adaptor.getLhs(), adaptor.getRhs()},
        [&](OpBuilder &b, Location l, ValueRange s) {
          auto c = [&](int64_t v) {
            return b.create<arith::ConstantOp>(l, b.getI32IntegerAttr(static_cast<int32_t>(v))).getResult();
          };
          Value a = b.create<arith::SubIOp>(l, widen(b, l, s[0], unsignedA), c(pa.zeroPointAt(0)));
          Value bb = b.create<arith::SubIOp>(l, widen(b, l, s[1], unsignedB), c(pb.zeroPointAt(0)));
          Value prod = b.create<arith::SIToFPOp>(l, b.getF32Type(), b.create<arith::MulIOp>(l, a, bb));
          Value scaled = b.create<math::RoundEvenOp>(
              l, b.create<arith::MulFOp>(l, prod, b.create<arith::ConstantOp>(l, b.getF32FloatAttr(m))));
          // Bounded before the conversion (saturation makes the rest moot).
          scaled = b.create<arith::MinNumFOp>(
              l, b.create<arith::MaxNumFOp>(l, scaled, b.create<arith::ConstantOp>(l, b.getF32FloatAttr(-65536.0f))),
              b.create<arith::ConstantOp>(l, b.getF32FloatAttr(65536.0f)));
          Value y = b.create<arith::AddIOp>(l, b.create<arith::FPToSIOp>(l, b.getI32Type(), scaled), c(zy));
          y = b.create<arith::MinSIOp>(l, b.create<arith::MaxSIOp>(l, y, c(lo)), c(qmax));
          return b.create<arith::TruncIOp>(l, type.getElementType(), y).getResult();
        });
    rewriter.replaceOp(op, r);
    return success();
  }
};

/// A storage scalar widened to i32 (`unsignedStorage` for ui8).
Value widen(OpBuilder &b, Location loc, Value q, bool unsignedStorage) {
  Type i32 = b.getI32Type();
  if (q.getType() == i32)
    return q;
  return unsignedStorage ? b.create<arith::ExtUIOp>(loc, i32, q).getResult()
                         : b.create<arith::ExtSIOp>(loc, i32, q).getResult();
}

/// What a quantized product's lowering needs per output channel (one
/// entry per tensor): the weights' zero point, the inverse of the bias's
/// scale sx * sw, and the epilogue's multiplier.
struct ProductParams {
  bool perChannel = false;
  SmallVector<int32_t> weightZero;
  SmallVector<float> biasInverse, multiplier;
  /// oneDNN's epilogue (QuantArithmetic.h): per channel the bias scaled
  /// into the sums' domain (`biasInverse` holds r, the bias's factor) and
  /// the multiplier float(1 / sy) / r.
  bool onednn = false;
};

ProductParams productParams(Operation *op, QuantParamsAttr px, QuantParamsAttr pw, QuantParamsAttr py,
                            int64_t outChannels) {
  ProductParams pp;
  pp.perChannel = !pw.isPerTensor();
  auto arithmetic = op->getAttrOfType<StringAttr>("arithmetic");
  pp.onednn = arithmetic && arithmetic.getValue() == "onednn";

  for (int64_t o = 0; o < (pp.perChannel ? outChannels : 1); ++o) {
    pp.weightZero.push_back(static_cast<int32_t>(pw.zeroPointAt(o)));
    if (pp.onednn) {
      quant::OnednnEpilogue one = quant::onednnEpilogue(px.scaleAt(0), pw.scaleAt(o), 1.0f,
                                                        py ? py.scaleAt(0) : 1.0, !py);
      pp.biasInverse.push_back(one.bias); // r: bias * r is the scaled bias
      pp.multiplier.push_back(one.multiplier);
      continue;
    }
    pp.biasInverse.push_back(1.0f / static_cast<float>(px.scaleAt(0) * pw.scaleAt(o)));
    // Without output parameters (an f32 result) the sums are dequantized.
    pp.multiplier.push_back(py ? quant::requantizeMultiplier(px.scaleAt(0), pw.scaleAt(o), py.scaleAt(0))
                               : quant::dequantizeScale(px.scaleAt(0), pw.scaleAt(o)));
  }
  return pp;
}

/// A constant tensor of `values` in `shape`.
template <typename T>
Value constantTensor(OpBuilder &b, Location loc, ArrayRef<T> values, Type element,
                     ArrayRef<int64_t> shape) {
  return b.create<arith::ConstantOp>(
      loc, DenseElementsAttr::get(RankedTensorType::get(shape, element), values));
}

/// The int32 sums of a quantized contraction, zero to start from.
Value zeroSums(OpBuilder &b, Location loc, RankedTensorType type) {
  Value zero = b.create<arith::ConstantOp>(loc, b.getI32IntegerAttr(0));
  return b.create<linalg::FillOp>(loc, zero, emptyTensor(b, loc, type, {})).getResult(0);
}

/// The contraction body: acc + (x - zx) * (w - zw), int32, wrapping. `zw`
/// is the per-channel operand, or null per tensor.
void centredProductBody(OpBuilder &b, Location l, ValueRange s, bool unsignedX, bool unsignedW,
                        int32_t zx, const ProductParams &pp) {
  Value zxV = b.create<arith::ConstantOp>(l, b.getI32IntegerAttr(zx));
  Value zwV = pp.perChannel
                  ? s[2]
                  : b.create<arith::ConstantOp>(l, b.getI32IntegerAttr(pp.weightZero[0])).getResult();
  Value a = b.create<arith::SubIOp>(l, widen(b, l, s[0], unsignedX), zxV);
  Value w = b.create<arith::SubIOp>(l, widen(b, l, s[1], unsignedW), zwV);
  Value sum = b.create<arith::AddIOp>(l, s.back(), b.create<arith::MulIOp>(l, a, w));
  b.create<linalg::YieldOp>(l, sum);
}

/// The epilogue generic over `type`: acc (+ the bias quantized with scale
/// sx * sw), requantized. `bias` is null or shaped to broadcast along the
/// output channels; the per-channel constants take `channelShape`.
Value requantizeEpilogue(OpBuilder &rewriter, Location loc, RankedTensorType type, Value acc,
                         Value bias, const ProductParams &pp, ArrayRef<int64_t> channelShape,
                         bool unsignedY, int64_t zy) {
  SmallVector<Value> ins{acc};
  if (bias)
    ins.push_back(bias);
  Type f32 = rewriter.getF32Type();
  if (pp.perChannel) {
    ins.push_back(constantTensor<float>(rewriter, loc, pp.biasInverse, f32, channelShape));
    ins.push_back(constantTensor<float>(rewriter, loc, pp.multiplier, f32, channelShape));
  }
  bool hasBias = static_cast<bool>(bias);
  return elementwiseGeneric(rewriter, loc, type, ins, [&](OpBuilder &b, Location l, ValueRange s) {
    auto scalar = [&](size_t index, float value) -> Value {
      return pp.perChannel ? s[index]
                           : b.create<arith::ConstantOp>(l, b.getF32FloatAttr(value)).getResult();
    };
    size_t next = hasBias ? 2 : 1;
    Value sum = s[0];
    if (pp.onednn) { // (float(acc) + bias * r) * multiplier + zy
      Value real = b.create<arith::SIToFPOp>(l, b.getF32Type(), sum);
      if (hasBias)
        real = b.create<arith::AddFOp>(l, real, b.create<arith::MulFOp>(l, s[1], scalar(next, pp.biasInverse[0])));
      Value t = b.create<arith::MulFOp>(l, real, scalar(next + 1, pp.multiplier[0]));
      if (type.getElementType().isF32())
        return t;
      t = b.create<arith::AddFOp>(l, t, b.create<arith::ConstantOp>(l, b.getF32FloatAttr(static_cast<float>(zy))));
      Value one = b.create<arith::ConstantOp>(l, b.getF32FloatAttr(1.0f));
      Value zeroF = b.create<arith::ConstantOp>(l, b.getF32FloatAttr(0.0f));
      return quantizeScalar(b, l, t, type.getElementType(), unsignedY, one, zeroF);
    }
    if (hasBias) {
      Value zeroF = b.create<arith::ConstantOp>(l, b.getF32FloatAttr(0.0f));
      Value biasQ = quantizeScalar(b, l, s[1], b.getI32Type(), false, scalar(next, pp.biasInverse[0]),
                                   zeroF);
      sum = b.create<arith::AddIOp>(l, sum, biasQ);
    }
    Value real = b.create<arith::SIToFPOp>(l, b.getF32Type(), sum);
    if (type.getElementType().isF32()) // dequantized: float(acc) * scale
      return b.create<arith::MulFOp>(l, real, scalar(next + 1, pp.multiplier[0])).getResult();
    Value zyV = b.create<arith::ConstantOp>(l, b.getF32FloatAttr(static_cast<float>(zy)));
    return quantizeScalar(b, l, real, type.getElementType(), unsignedY,
                          scalar(next + 1, pp.multiplier[0]), zyV);
  });
}

/// cuvil.quant.linear: one contraction generic (centred int32 products,
/// wrapping sums) and one epilogue generic (the bias quantized with scale
/// sx * sw, the float requantize), the arithmetic of QuantArithmetic.h.
struct QuantLinearLowering : OpConversionPattern<QuantLinearOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(QuantLinearOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    auto type = convertTensorType(llvm::cast<RankedTensorType>(op.getType()));
    QuantParamsAttr px = op.getInputParams(), py = op.getOutputParamsAttr();
    int64_t n = type.getDimSize(1);
    ProductParams pp = productParams(op, px, op.getWeightParams(), py, n);

    // acc[m][n] = sum_k (x[m][k] - zx) * (w[n][k] - zw[n]), int32.
    AffineExpr m = getAffineDimExpr(0, ctx), nn = getAffineDimExpr(1, ctx), k = getAffineDimExpr(2, ctx);
    SmallVector<Value> ins{adaptor.getInput(), adaptor.getWeight()};
    SmallVector<AffineMap> maps{AffineMap::get(3, 0, {m, k}, ctx), AffineMap::get(3, 0, {nn, k}, ctx)};
    if (pp.perChannel) {
      ins.push_back(constantTensor<int32_t>(rewriter, loc, pp.weightZero, rewriter.getI32Type(), {n}));
      maps.push_back(AffineMap::get(3, 0, {nn}, ctx));
    }
    maps.push_back(AffineMap::get(3, 0, {m, nn}, ctx));
    auto accType = RankedTensorType::get(type.getShape(), rewriter.getI32Type());
    Value init = zeroSums(rewriter, loc, accType);
    bool unsignedX = isUnsignedStorage(op.getInput()), unsignedW = isUnsignedStorage(op.getWeight());
    int32_t zx = static_cast<int32_t>(px.zeroPointAt(0));
    Value acc = rewriter
                    .create<linalg::GenericOp>(
                        loc, accType, ins, ValueRange{init}, maps,
                        SmallVector<utils::IteratorType>{utils::IteratorType::parallel,
                                                         utils::IteratorType::parallel,
                                                         utils::IteratorType::reduction},
                        [&](OpBuilder &b, Location l, ValueRange s) {
                          centredProductBody(b, l, s, unsignedX, unsignedW, zx, pp);
                        })
                    .getResult(0);
    Value y = requantizeEpilogue(rewriter, loc, type, acc, adaptor.getBias(), pp, {n},
                                 isUnsignedStorage(op.getResult()), py ? py.zeroPointAt(0) : 0);
    rewriter.replaceOp(op, y);
    return success();
  }
};

/// cuvil.quant.linear_dynamic: the input's range (one reduction), the
/// parameters PyTorch chooses from it (a generic without loops over rank-0
/// tensors: QuantArithmetic.h's chooseDynamicParams in arith), the input
/// quantized and centred (i32), one contraction generic with the weights,
/// and the engine's float epilogue; every step as the evaluator computes it.
struct QuantLinearDynamicLowering : OpConversionPattern<QuantLinearDynamicOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(QuantLinearDynamicOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    auto type = convertTensorType(llvm::cast<RankedTensorType>(op.getType()));
    auto xType = llvm::cast<RankedTensorType>(adaptor.getInput().getType());
    if (!type.hasStaticShape() || !xType.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "static shapes only");
    int64_t m = xType.getDimSize(0), k = xType.getDimSize(1), n = type.getDimSize(1);
    bool onednn = op.getArithmetic() == "onednn";
    bool reduceRange = onednn && op.getReduceRange(); // QNNPACK ignores it
    Type f32 = rewriter.getF32Type(), f64 = rewriter.getF64Type(), i32 = rewriter.getI32Type(),
         i1 = rewriter.getI1Type();
    auto scalarType = [&](Type t) { return RankedTensorType::get({}, t); };
    auto cf32 = [&](OpBuilder &b, Location l, float v) {
      return b.create<arith::ConstantOp>(l, b.getF32FloatAttr(v)).getResult();
    };
    auto cf64 = [&](OpBuilder &b, Location l, double v) {
      return b.create<arith::ConstantOp>(l, b.getF64FloatAttr(v)).getResult();
    };

    // The range: min and max over every element (NaN propagates).
    Value x = adaptor.getInput();
    auto fill = [&](Type t, float v) {
      Value e = rewriter.create<tensor::EmptyOp>(loc, ArrayRef<int64_t>{}, t);
      return rewriter.create<linalg::FillOp>(loc, cf32(rewriter, loc, v), e).getResult(0);
    };
    float inf = std::numeric_limits<float>::infinity();
    AffineMap all = AffineMap::getMultiDimIdentityMap(2, ctx), none = AffineMap::get(2, 0, {}, ctx);
    auto range = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{scalarType(f32), scalarType(f32)}, ValueRange{x},
        ValueRange{fill(f32, inf), fill(f32, -inf)}, ArrayRef<AffineMap>{all, none, none},
        SmallVector<utils::IteratorType>(2, utils::IteratorType::reduction),
        [&](OpBuilder &b, Location l, ValueRange s) {
          b.create<linalg::YieldOp>(l, ValueRange{b.create<arith::MinimumFOp>(l, s[1], s[0]),
                                                  b.create<arith::MaximumFOp>(l, s[2], s[0])});
        });

    // The parameters: the quantization's multiplier and zero point (f32),
    // the scale as the epilogue takes it, and whether the range is finite.
    AffineMap scalarMap = AffineMap::get(0, 0, {}, ctx);
    SmallVector<Value> inits;
    for (Type t : {f32, f32, f32, i1})
      inits.push_back(rewriter.create<tensor::EmptyOp>(loc, ArrayRef<int64_t>{}, t));
    int32_t qmin = 0, qmax = reduceRange ? 127 : 255;
    auto params = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{scalarType(f32), scalarType(f32), scalarType(f32), scalarType(i1)},
        ValueRange{range.getResult(0), range.getResult(1)}, inits, SmallVector<AffineMap>(6, scalarMap),
        SmallVector<utils::IteratorType>{}, [&](OpBuilder &b, Location l, ValueRange s) {
          auto select = [&](Value c, Value t, Value f) { return b.create<arith::SelectOp>(l, c, t, f).getResult(); };
          auto cmpf = [&](arith::CmpFPredicate p, Value a, Value c) {
            return b.create<arith::CmpFOp>(l, p, a, c).getResult();
          };
          Value lo = s[0], hi = s[1];
          Value infV = cf32(b, l, inf);
          Value finite = b.create<arith::AndIOp>(
              l, cmpf(arith::CmpFPredicate::OLT, b.create<math::AbsFOp>(l, lo), infV),
              cmpf(arith::CmpFPredicate::OLT, b.create<math::AbsFOp>(l, hi), infV));
          // A non-finite range continues as [0, 0] (the outputs become NaN).
          Value zero = cf32(b, l, 0.0f);
          lo = select(finite, b.create<arith::MinimumFOp>(l, lo, zero), zero);
          hi = select(finite, b.create<arith::MaximumFOp>(l, hi, zero), zero);
          double span = qmax - qmin;
          Value scale = b.create<arith::DivFOp>(
              l, b.create<arith::SubFOp>(l, b.create<arith::ExtFOp>(l, f64, hi), b.create<arith::ExtFOp>(l, f64, lo)),
              cf64(b, l, span));
          Value scaleF = b.create<arith::TruncFOp>(l, f32, scale);
          Value tiny = b.create<arith::OrIOp>(
              l, cmpf(arith::CmpFPredicate::OEQ, scaleF, zero),
              cmpf(arith::CmpFPredicate::OEQ, b.create<math::AbsFOp>(l, b.create<arith::DivFOp>(l, cf32(b, l, 1.0f), scaleF)),
                   infV));
          scale = select(tiny, cf64(b, l, 0.1), scale);
          // Scales below 6.1e-5 are raised to it, the range scaled along.
          const float small = 6.1e-5f;
          Value raise = cmpf(arith::CmpFPredicate::OLT, scale, cf64(b, l, double(small)));
          Value original = b.create<arith::TruncFOp>(l, f32, scale);
          Value amplifier = b.create<arith::DivFOp>(l, cf32(b, l, small), original);
          Value loZero = cmpf(arith::CmpFPredicate::OEQ, lo, zero), hiZero = cmpf(arith::CmpFPredicate::OEQ, hi, zero);
          Value full = cf32(b, l, small * static_cast<float>(span));
          Value loRaised = select(loZero, lo, select(hiZero, b.create<arith::NegFOp>(l, full),
                                                     b.create<arith::MulFOp>(l, lo, amplifier)));
          Value hiRaised = select(loZero, full, select(hiZero, hi, b.create<arith::MulFOp>(l, hi, amplifier)));
          lo = select(raise, loRaised, lo);
          hi = select(raise, hiRaised, hi);
          scale = select(raise, cf64(b, l, double(small)), scale);
          // The zero point from the end whose term is smaller, nudged.
          Value loD = b.create<arith::DivFOp>(l, b.create<arith::ExtFOp>(l, f64, lo), scale);
          Value hiD = b.create<arith::DivFOp>(l, b.create<arith::ExtFOp>(l, f64, hi), scale);
          Value fromMin = b.create<arith::SubFOp>(l, cf64(b, l, qmin), loD);
          Value fromMax = b.create<arith::SubFOp>(l, cf64(b, l, qmax), hiD);
          Value errorMin = b.create<arith::SubFOp>(l, cf64(b, l, std::abs(qmin)), b.create<math::AbsFOp>(l, loD));
          Value errorMax = b.create<arith::SubFOp>(l, cf64(b, l, std::abs(qmax)), b.create<math::AbsFOp>(l, hiD));
          Value initial = select(cmpf(arith::CmpFPredicate::OLT, errorMin, errorMax), fromMin, fromMax);
          Value zp = b.create<math::RoundEvenOp>(l, initial);
          zp = select(cmpf(arith::CmpFPredicate::OLT, initial, cf64(b, l, qmin)), cf64(b, l, qmin), zp);
          zp = select(cmpf(arith::CmpFPredicate::OGT, initial, cf64(b, l, qmax)), cf64(b, l, qmax), zp);
          Value zpF = b.create<arith::TruncFOp>(l, f32, zp);
          Value scaleFinal = b.create<arith::TruncFOp>(l, f32, scale);
          // oneDNN: float(1 / scale); QNNPACK: 1.0f / float(scale).
          Value inverse = onednn ? b.create<arith::TruncFOp>(l, f32, b.create<arith::DivFOp>(l, cf64(b, l, 1.0), scale))
                                       .getResult()
                                 : b.create<arith::DivFOp>(l, cf32(b, l, 1.0f), scaleFinal).getResult();
          b.create<linalg::YieldOp>(l, ValueRange{inverse, zpF, onednn ? inverse : scaleFinal, finite});
        });
    Value inverse = params.getResult(0), zeroPoint = params.getResult(1), epilogueScale = params.getResult(2),
          finite = params.getResult(3);

    // The input quantized to u8 and centred, i32.
    auto centredType = RankedTensorType::get({m, k}, i32);
    Value centred = elementwiseGeneric(rewriter, loc, centredType, ValueRange{x, inverse, zeroPoint},
                                       [&](OpBuilder &b, Location l, ValueRange s) {
      Value scaled = b.create<arith::MulFOp>(l, s[0], s[1]);
      Value v = onednn ? b.create<math::RoundEvenOp>(l, b.create<arith::AddFOp>(l, scaled, s[2])).getResult()
                       : b.create<arith::AddFOp>(l, s[2], b.create<math::RoundEvenOp>(l, scaled)).getResult();
      // Saturated to u8; NaN (a non-finite input, whose outputs are NaN) to 0.
      v = b.create<arith::MinNumFOp>(l, b.create<arith::MaxNumFOp>(l, v, cf32(b, l, 0.0f)), cf32(b, l, 255.0f));
      return b.create<arith::FPToSIOp>(l, i32, b.create<arith::SubFOp>(l, v, s[2])).getResult();
    });

    // acc[m][n] = sum_k centred[m][k] * (w[n][k] - zw[n]), int32.
    QuantParamsAttr pw = op.getWeightParams();
    bool perChannel = !pw.isPerTensor();
    SmallVector<int32_t> weightZero;
    SmallVector<float> weightScale, weightInverse;
    for (int64_t o = 0; o < (perChannel ? n : 1); ++o) {
      weightZero.push_back(static_cast<int32_t>(pw.zeroPointAt(o)));
      weightScale.push_back(static_cast<float>(pw.scaleAt(o)));
      weightInverse.push_back(static_cast<float>(1.0 / pw.scaleAt(o)));
    }
    AffineExpr dm = getAffineDimExpr(0, ctx), dn = getAffineDimExpr(1, ctx), dk = getAffineDimExpr(2, ctx);
    SmallVector<Value> ins{centred, adaptor.getWeight()};
    SmallVector<AffineMap> maps{AffineMap::get(3, 0, {dm, dk}, ctx), AffineMap::get(3, 0, {dn, dk}, ctx)};
    if (perChannel) {
      ins.push_back(constantTensor<int32_t>(rewriter, loc, weightZero, i32, {n}));
      maps.push_back(AffineMap::get(3, 0, {dn}, ctx));
    }
    maps.push_back(AffineMap::get(3, 0, {dm, dn}, ctx));
    auto accType = RankedTensorType::get({m, n}, i32);
    bool unsignedW = isUnsignedStorage(op.getWeight());
    Value acc = rewriter
                    .create<linalg::GenericOp>(
                        loc, accType, ins, ValueRange{zeroSums(rewriter, loc, accType)}, maps,
                        SmallVector<utils::IteratorType>{utils::IteratorType::parallel,
                                                         utils::IteratorType::parallel,
                                                         utils::IteratorType::reduction},
                        [&](OpBuilder &b, Location l, ValueRange s) {
                          Value zw = perChannel ? s[2]
                                                : b.create<arith::ConstantOp>(l, b.getI32IntegerAttr(weightZero[0]))
                                                      .getResult();
                          Value w = b.create<arith::SubIOp>(l, widen(b, l, s[1], unsignedW), zw);
                          Value sum = b.create<arith::AddIOp>(l, s.back(), b.create<arith::MulIOp>(l, s[0], w));
                          b.create<linalg::YieldOp>(l, sum);
                        })
                    .getResult(0);

    // The epilogue, in f32: QNNPACK float(acc) * (float(sw) * float(sx))
    // + bias; oneDNN (float(acc) + bias * r) * (1 / r), r = float(1 / sx)
    // * float(1 / sw).
    SmallVector<Value> epilogueIns{acc, epilogueScale, finite};
    Value bias = adaptor.getBias();
    if (bias)
      epilogueIns.push_back(bias);
    if (perChannel)
      epilogueIns.push_back(constantTensor<float>(rewriter, loc, onednn ? weightInverse : weightScale, f32, {n}));
    bool relu = op.getRelu();
    Value y = elementwiseGeneric(rewriter, loc, type, epilogueIns, [&](OpBuilder &b, Location l, ValueRange s) {
      Value sum = b.create<arith::SIToFPOp>(l, f32, s[0]);
      Value w = perChannel ? s.back() : cf32(b, l, onednn ? weightInverse[0] : weightScale[0]);
      Value b0 = bias ? s[3] : Value();
      Value v;
      if (onednn) {
        Value r = b.create<arith::MulFOp>(l, s[1], w);
        if (b0)
          sum = b.create<arith::AddFOp>(l, sum, b.create<arith::MulFOp>(l, b0, r));
        v = b.create<arith::MulFOp>(l, sum, b.create<arith::DivFOp>(l, cf32(b, l, 1.0f), r));
      } else {
        v = b.create<arith::MulFOp>(l, sum, b.create<arith::MulFOp>(l, w, s[1]));
        if (b0)
          v = b.create<arith::AddFOp>(l, v, b0);
      }
      if (relu)
        v = b.create<arith::MaximumFOp>(l, v, cf32(b, l, 0.0f));
      return b.create<arith::SelectOp>(l, s[2], v, cf32(b, l, std::numeric_limits<float>::quiet_NaN())).getResult();
    });
    rewriter.replaceOp(op, y);
    return success();
  }
};

/// An NCHW storage tensor padded spatially with `zeroPoint` (which, centred,
/// contributes nothing to a quantized sum).
Value padWithZeroPoint(OpBuilder &b, Location loc, Value input, int64_t zeroPoint, ArrayRef<int64_t> pad) {
  auto type = llvm::cast<RankedTensorType>(input.getType());
  Type storage = type.getElementType();
  Value padValue = b.create<arith::ConstantOp>(
      loc, IntegerAttr::get(storage, APInt(storage.getIntOrFloatBitWidth(), zeroPoint, /*isSigned=*/true)));
  SmallVector<OpFoldResult> low, high;
  for (int64_t p : {int64_t(0), int64_t(0), pad[0], pad[1]}) {
    low.push_back(b.getIndexAttr(p));
    high.push_back(b.getIndexAttr(p));
  }
  auto paddedType = RankedTensorType::get({type.getDimSize(0), type.getDimSize(1), type.getDimSize(2) + 2 * pad[0],
                                           type.getDimSize(3) + 2 * pad[1]},
                                          storage);
  return b.create<tensor::PadOp>(loc, paddedType, input, low, high, padValue);
}

/// cuvil.quant.conv2d: the input padded with its zero point, one
/// contraction generic over (n, g, cog, oh, ow, cig, kh, kw) on the input
/// and weights split by group, then the epilogue of quant.linear with the
/// per-channel values as [Cout, 1, 1] tensors.
struct QuantConv2DLowering : OpConversionPattern<QuantConv2DOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(QuantConv2DOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    auto type = convertTensorType(llvm::cast<RankedTensorType>(op.getType()));
    auto inType = llvm::cast<RankedTensorType>(adaptor.getInput().getType());
    auto wType = llvm::cast<RankedTensorType>(adaptor.getWeight().getType());
    if (!inType.hasStaticShape() || !wType.hasStaticShape() || !type.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "static shapes only");
    QuantParamsAttr px = op.getInputParams(), pw = op.getWeightParams(), py = op.getOutputParamsAttr();
    bool unsignedX = isUnsignedStorage(op.getInput()), unsignedW = isUnsignedStorage(op.getWeight());
    int64_t n = inType.getDimSize(0);
    int64_t co = wType.getDimSize(0), cig = wType.getDimSize(1), kh = wType.getDimSize(2),
            kw = wType.getDimSize(3);
    int64_t groups = op.getGroups(), cog = co / groups;
    int64_t oh = type.getDimSize(2), ow = type.getDimSize(3);
    ArrayRef<int64_t> st = op.getStride(), pad = op.getPadding(), dil = op.getDilation();
    Type i32 = rewriter.getI32Type(), f32 = rewriter.getF32Type();
    Type storage = inType.getElementType();

    // Padding reads the zero point: centred, it adds nothing.
    int64_t zx = px.zeroPointAt(0);
    Value padded = padWithZeroPoint(rewriter, loc, adaptor.getInput(), zx, pad);
    auto paddedType = llvm::cast<RankedTensorType>(padded.getType());
    // [N, C, H, W] -> [N, G, C/G, H, W]; [Cout, ...] -> [G, Cout/G, ...].
    auto inGrouped = RankedTensorType::get(
        {n, groups, cig, paddedType.getDimSize(2), paddedType.getDimSize(3)}, storage);
    Value xg = rewriter.create<tensor::ExpandShapeOp>(
        loc, inGrouped, padded, SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}, {4}});
    auto wGrouped = RankedTensorType::get({groups, cog, cig, kh, kw}, wType.getElementType());
    Value wg = rewriter.create<tensor::ExpandShapeOp>(
        loc, wGrouped, adaptor.getWeight(), SmallVector<ReassociationIndices>{{0, 1}, {2}, {3}, {4}});

    ProductParams pp = productParams(op, px, pw, py, co);
    // d0 n, d1 g, d2 cog, d3 oh, d4 ow, d5 cig, d6 kh, d7 kw.
    auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
    SmallVector<Value> ins{xg, wg};
    SmallVector<AffineMap> maps{
        AffineMap::get(8, 0, {d(0), d(1), d(5), d(3) * st[0] + d(6) * dil[0], d(4) * st[1] + d(7) * dil[1]}, ctx),
        AffineMap::get(8, 0, {d(1), d(2), d(5), d(6), d(7)}, ctx)};
    if (pp.perChannel) {
      ins.push_back(constantTensor<int32_t>(rewriter, loc, pp.weightZero, i32, {groups, cog}));
      maps.push_back(AffineMap::get(8, 0, {d(1), d(2)}, ctx));
    }
    maps.push_back(AffineMap::get(8, 0, {d(0), d(1), d(2), d(3), d(4)}, ctx));
    auto accType = RankedTensorType::get({n, groups, cog, oh, ow}, i32);
    Value init = zeroSums(rewriter, loc, accType);
    using utils::IteratorType;
    SmallVector<IteratorType> iterators(5, IteratorType::parallel);
    iterators.append(3, IteratorType::reduction);
    int32_t zx32 = static_cast<int32_t>(zx);
    Value acc = rewriter
                    .create<linalg::GenericOp>(
                        loc, accType, ins, ValueRange{init}, maps, iterators,
                        [&](OpBuilder &b, Location l, ValueRange s) {
                          centredProductBody(b, l, s, unsignedX, unsignedW, zx32, pp);
                        })
                    .getResult(0);
    Value accFlat = rewriter.create<tensor::CollapseShapeOp>(
        loc, RankedTensorType::get({n, co, oh, ow}, i32), acc,
        SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}, {4}});

    // The epilogue, per output channel along dimension 1: [Cout, 1, 1].
    Value bias;
    if (adaptor.getBias())
      bias = rewriter.create<tensor::ExpandShapeOp>(
          loc, RankedTensorType::get({co, 1, 1}, f32), adaptor.getBias(),
          SmallVector<ReassociationIndices>{{0, 1, 2}});
    Value y = requantizeEpilogue(rewriter, loc, type, accFlat, bias, pp, {co, 1, 1},
                                 isUnsignedStorage(op.getResult()), py ? py.zeroPointAt(0) : 0);
    rewriter.replaceOp(op, y);
    return success();
  }
};

/// cuvil.quant.avg_pool2d: the input padded with its zero point, one
/// window-sum generic over (n, c, oh, ow, kh, kw) of the centred values in
/// int32, then the rounding of QuantArithmetic.h's averageValue with each
/// output position's multiplier (its divisor) as an [OH, OW] constant.
struct QuantAvgPool2DLowering : OpConversionPattern<QuantAvgPool2DOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(QuantAvgPool2DOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    auto type = convertTensorType(llvm::cast<RankedTensorType>(op.getType()));
    auto inType = llvm::cast<RankedTensorType>(adaptor.getInput().getType());
    if (!inType.hasStaticShape() || !type.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "static shapes only");
    ArrayRef<int64_t> k = op.getKernelSize(), st = op.getStride(), pad = op.getPadding();
    int64_t n = inType.getDimSize(0), c = inType.getDimSize(1), h = inType.getDimSize(2),
            w = inType.getDimSize(3), oh = type.getDimSize(2), ow = type.getDimSize(3);
    QuantParamsAttr px = op.getInputParams(), py = op.getOutputParams();
    int64_t zx = px.zeroPointAt(0), zy = py.zeroPointAt(0);
    bool unsignedX = isUnsignedStorage(op.getInput()), unsignedY = isUnsignedStorage(op.getResult());
    bool qnnpack = op.getArithmetic() == "qnnpack";
    bool roundFirst = qnnpack || op.getRoundBeforeZeroPoint();
    Type i32 = rewriter.getI32Type(), f32 = rewriter.getF32Type();

    Value padded = padWithZeroPoint(rewriter, loc, adaptor.getInput(), zx, pad);

    // d0 n, d1 c, d2 oh, d3 ow, d4 kh, d5 kw; the window is a shape-only operand.
    auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
    Value window = rewriter.create<tensor::EmptyOp>(loc, ArrayRef<int64_t>{k[0], k[1]}, i32);
    SmallVector<AffineMap> maps{
        AffineMap::get(6, 0, {d(0), d(1), d(2) * st[0] + d(4), d(3) * st[1] + d(5)}, ctx),
        AffineMap::get(6, 0, {d(4), d(5)}, ctx), AffineMap::get(6, 0, {d(0), d(1), d(2), d(3)}, ctx)};
    auto accType = RankedTensorType::get({n, c, oh, ow}, i32);
    Value init = zeroSums(rewriter, loc, accType);
    SmallVector<utils::IteratorType> iterators(4, utils::IteratorType::parallel);
    iterators.append(2, utils::IteratorType::reduction);
    Value acc = rewriter
                    .create<linalg::GenericOp>(
                        loc, accType, ValueRange{padded, window}, ValueRange{init}, maps, iterators,
                        [&](OpBuilder &b, Location l, ValueRange s) {
                          Value x = b.create<arith::SubIOp>(
                              l, widen(b, l, s[0], unsignedX),
                              b.create<arith::ConstantOp>(l, b.getI32IntegerAttr(static_cast<int32_t>(zx))));
                          b.create<linalg::YieldOp>(l, ValueRange{b.create<arith::AddIOp>(l, s[2], x)});
                        })
                    .getResult(0);

    // Each position's multiplier, from its divisor.
    SmallVector<float> multipliers;
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        int64_t rows = 0, cols = 0;
        for (int64_t u = 0; u < k[0]; ++u)
          rows += i * st[0] - pad[0] + u >= 0 && i * st[0] - pad[0] + u < h;
        for (int64_t v = 0; v < k[1]; ++v)
          cols += j * st[1] - pad[1] + v >= 0 && j * st[1] - pad[1] + v < w;
        int64_t divisor = op.getCountIncludePad() ? k[0] * k[1] : rows * cols;
        multipliers.push_back(qnnpack ? quant::qnnpackAverageMultiplier(px.scaleAt(0), py.scaleAt(0), k[0] * k[1])
                                      : quant::averageMultiplier(px.scaleAt(0), py.scaleAt(0), divisor));
      }
    Value m = constantTensor<float>(rewriter, loc, multipliers, f32, {oh, ow});
    Value y = elementwiseGeneric(rewriter, loc, type, ValueRange{acc, m}, [&](OpBuilder &b, Location l, ValueRange s) {
      Value t = b.create<arith::MulFOp>(l, b.create<arith::SIToFPOp>(l, f32, s[0]), s[1]);
      Value zyF = b.create<arith::ConstantOp>(l, b.getF32FloatAttr(static_cast<float>(zy)));
      Value one = b.create<arith::ConstantOp>(l, b.getF32FloatAttr(1.0f));
      Value zeroF = b.create<arith::ConstantOp>(l, b.getF32FloatAttr(0.0f));
      if (roundFirst) // nearbyint(t) + zy
        return quantizeScalar(b, l, t, type.getElementType(), unsignedY, one, zyF);
      return quantizeScalar(b, l, b.create<arith::AddFOp>(l, t, zyF), type.getElementType(), unsignedY, one,
                            zeroF);
    });
    rewriter.replaceOp(op, y);
    return success();
  }
};

} // namespace

void populateQuantLowering(const TypeConverter &tc, RewritePatternSet &patterns) {
  patterns.add<QuantizeLowering, DequantizeLowering, RequantizeLowering, QuantAddLowering, QuantLinearLowering,
               QuantLinearDynamicLowering, QuantMulLowering, QuantConv2DLowering, QuantAvgPool2DLowering>(tc, patterns.getContext());
}

} // namespace mlir::cuvil::lowering
