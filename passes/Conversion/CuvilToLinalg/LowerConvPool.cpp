//===- LowerConvPool.cpp - Convolutions and pooling to linalg -------------===//
//
// Windows are affine: after padding the input (tensor.pad), a convolution
// is one contraction generic over (n, out channel, out positions..., in
// channel, kernel positions...) with the input read at
// `out * stride + k * dilation` and the group found by `floordiv`; pooling
// is the same without channels mixing. Transposed convolutions become
// convolutions of the stride-dilated input with the flipped, transposed
// kernel. Average pooling divides by a per-position divisor table computed
// here (PyTorch's count_include_pad / ceil_mode clipping rules).
//
//===----------------------------------------------------------------------===//
#include "passes/Conversion/CuvilToLinalg/Patterns.h"

#include "dialects/Cuvil/IR/CuvilOps.h"
#include "passes/Conversion/CuvilToLinalg/LoweringUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <limits>

namespace mlir::cuvil::lowering {
namespace {

RankedTensorType typeOf(Value v) { return llvm::cast<RankedTensorType>(v.getType()); }

Value filled(OpBuilder &b, Location loc, RankedTensorType type, double value, ValueRange like = {}) {
  Value empty = emptyTensor(b, loc, type, like);
  Value v = scalarConstant(b, loc, scalarTypeOf(type.getElementType()), value);
  return b.create<linalg::FillOp>(loc, v, empty).getResult(0);
}

/// Pads the spatial dims (2..) of `x` with `value`: `low`/`high` per dim.
Value padSpatial(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> low,
                 ArrayRef<int64_t> high, double value) {
  if (llvm::all_of(low, [](int64_t p) { return p == 0; }) &&
      llvm::all_of(high, [](int64_t p) { return p == 0; }))
    return x;
  RankedTensorType t = typeOf(x);
  SmallVector<int64_t> lo(2, 0), hi(2, 0), shape(t.getShape());
  lo.append(low.begin(), low.end());
  hi.append(high.begin(), high.end());
  for (size_t d = 2; d < shape.size(); ++d)
    shape[d] += lo[d] + hi[d];
  auto type = RankedTensorType::get(shape, t.getElementType());
  Value pad = scalarConstant(b, loc, scalarTypeOf(t.getElementType()), value);
  SmallVector<OpFoldResult> low2, high2;
  for (size_t d = 0; d < lo.size(); ++d) {
    low2.push_back(b.getIndexAttr(lo[d]));
    high2.push_back(b.getIndexAttr(hi[d]));
  }
  return b.create<tensor::PadOp>(loc, type, x, low2, high2, pad);
}

/// out[n, f, o...] = sum_{c, k...} x[n, g(f) * cPerGroup + c, o * s + k * d]
///                                  * w[f, c, k...]  (+ bias[f])
/// with g(f) = f floordiv fPerGroup. `x` is already padded.
Value convolution(OpBuilder &b, Location loc, Value x, Value w, Value bias,
                  RankedTensorType resultType, ArrayRef<int64_t> stride,
                  ArrayRef<int64_t> dilation, int64_t groups) {
  MLIRContext *ctx = b.getContext();
  RankedTensorType wt = typeOf(w);
  int64_t spatial = resultType.getRank() - 2;
  int64_t cPerGroup = wt.getDimSize(1), fPerGroup = wt.getDimSize(0) / groups;
  // Loops: n, f, o_1..o_s, c, k_1..k_s.
  int64_t loops = 2 + 2 * spatial + 1;
  auto d = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
  AffineExpr n = d(0), f = d(1), c = d(2 + spatial);
  SmallVector<AffineExpr> xExprs = {n, f.floorDiv(fPerGroup) * cPerGroup + c};
  SmallVector<AffineExpr> wExprs = {f, c};
  SmallVector<AffineExpr> outExprs = {n, f};
  for (int64_t i = 0; i < spatial; ++i) {
    AffineExpr o = d(2 + i), k = d(3 + spatial + i);
    xExprs.push_back(o * stride[i] + k * dilation[i]);
    wExprs.push_back(k);
    outExprs.push_back(o);
  }
  SmallVector<AffineMap> maps = {AffineMap::get(loops, 0, xExprs, ctx),
                                 AffineMap::get(loops, 0, wExprs, ctx),
                                 AffineMap::get(loops, 0, outExprs, ctx)};
  SmallVector<utils::IteratorType> iterators(2 + spatial, utils::IteratorType::parallel);
  iterators.append(1 + spatial, utils::IteratorType::reduction);
  Value init = filled(b, loc, resultType, 0.0);
  Value conv = b.create<linalg::GenericOp>(
                    loc, TypeRange{resultType}, ValueRange{x, w}, ValueRange{init}, maps,
                    iterators,
                    [&](OpBuilder &nb, Location nl, ValueRange a) {
                      Value p = nb.create<arith::MulFOp>(nl, a[0], a[1]);
                      nb.create<linalg::YieldOp>(nl, nb.create<arith::AddFOp>(nl, a[2], p).getResult());
                    })
                   .getResult(0);
  if (!bias)
    return conv;
  // Bias per output channel (dim 1).
  int64_t rank = resultType.getRank();
  AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, ctx);
  AffineMap channel = AffineMap::get(rank, 0, {d(1)}, ctx);
  return b
      .create<linalg::GenericOp>(
          loc, TypeRange{resultType}, ValueRange{conv, bias},
          ValueRange{emptyTensor(b, loc, resultType, {})},
          SmallVector<AffineMap>{identity, channel, identity}, parallelIterators(rank),
          [&](OpBuilder &nb, Location nl, ValueRange a) {
            nb.create<linalg::YieldOp>(nl, nb.create<arith::AddFOp>(nl, a[0], a[1]).getResult());
          })
      .getResult(0);
}

template <typename OpTy> struct ConvLowering final : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    auto resultType = convertTensorType(llvm::cast<RankedTensorType>(op.getType()));
    if (!resultType.hasStaticShape() || !typeOf(adaptor.getInput()).hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic convolution");
    Value x = padSpatial(rewriter, op.getLoc(), adaptor.getInput(), op.getPadding(),
                         op.getPadding(), 0.0);
    rewriter.replaceOp(op, convolution(rewriter, op.getLoc(), x, adaptor.getWeight(),
                                       adaptor.getBias(), resultType, op.getStride(),
                                       op.getDilation(), op.getGroups()));
    return success();
  }
};

/// A transposed convolution as a convolution: the input dilated by the
/// stride (zeros between elements), padded by dilation * (k - 1) - padding
/// (+ output_padding at the end; negative means cropped), and the kernel
/// flipped with in/out channels swapped per group.
template <typename OpTy> struct ConvTransposeLowering final : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    auto resultType = convertTensorType(llvm::cast<RankedTensorType>(op.getType()));
    Value x = adaptor.getInput(), w = adaptor.getWeight();
    RankedTensorType xt = typeOf(x), wt = typeOf(w);
    if (!resultType.hasStaticShape() || !xt.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic transposed convolution");
    int64_t spatial = xt.getRank() - 2, groups = op.getGroups();
    ArrayRef<int64_t> stride = op.getStride(), padding = op.getPadding(),
                      dilation = op.getDilation(), outPad = op.getOutputPadding();
    // 1. Dilate by the stride.
    SmallVector<int64_t> dilated(xt.getShape());
    for (int64_t i = 0; i < spatial; ++i)
      dilated[2 + i] = (xt.getDimSize(2 + i) - 1) * stride[i] + 1;
    Value z = x;
    if (llvm::any_of(stride, [](int64_t s) { return s != 1; })) {
      auto dt = RankedTensorType::get(dilated, xt.getElementType());
      SmallVector<OpFoldResult> offsets(xt.getRank(), rewriter.getIndexAttr(0)), sizes, strides;
      for (int64_t dd = 0; dd < xt.getRank(); ++dd) {
        sizes.push_back(rewriter.getIndexAttr(xt.getDimSize(dd)));
        strides.push_back(rewriter.getIndexAttr(dd < 2 ? 1 : stride[dd - 2]));
      }
      z = rewriter.create<tensor::InsertSliceOp>(loc, x, filled(rewriter, loc, dt, 0.0), offsets,
                                                 sizes, strides);
    }
    // 2. Pad (or crop) so that a stride-1 convolution gives the output.
    SmallVector<int64_t> low, high, cropLow, cropHigh;
    for (int64_t i = 0; i < spatial; ++i) {
      int64_t k = wt.getDimSize(2 + i);
      int64_t lo = dilation[i] * (k - 1) - padding[i], hi = lo + outPad[i];
      low.push_back(std::max<int64_t>(lo, 0));
      high.push_back(std::max<int64_t>(hi, 0));
      cropLow.push_back(std::max<int64_t>(-lo, 0));
      cropHigh.push_back(std::max<int64_t>(-hi, 0));
    }
    z = padSpatial(rewriter, loc, z, low, high, 0.0);
    if (llvm::any_of(cropLow, [](int64_t c) { return c; }) ||
        llvm::any_of(cropHigh, [](int64_t c) { return c; })) {
      RankedTensorType pt = typeOf(z);
      SmallVector<OpFoldResult> offsets, sizes, strides;
      SmallVector<int64_t> shape(pt.getShape());
      for (int64_t dd = 0; dd < pt.getRank(); ++dd) {
        int64_t lo = dd < 2 ? 0 : cropLow[dd - 2], hi = dd < 2 ? 0 : cropHigh[dd - 2];
        shape[dd] -= lo + hi;
        offsets.push_back(rewriter.getIndexAttr(lo));
        sizes.push_back(rewriter.getIndexAttr(shape[dd]));
        strides.push_back(rewriter.getIndexAttr(1));
      }
      z = rewriter.create<tensor::ExtractSliceOp>(
          loc, RankedTensorType::get(shape, pt.getElementType()), z, offsets, sizes, strides);
    }
    // 3. The kernel: [C_in, C_out/g, k...] -> [C_out, C_in/g, flipped k...].
    int64_t inPerGroup = wt.getDimSize(0) / groups, outPerGroup = wt.getDimSize(1);
    SmallVector<int64_t> kShape = {outPerGroup * groups, inPerGroup};
    for (int64_t i = 0; i < spatial; ++i)
      kShape.push_back(wt.getDimSize(2 + i));
    auto kType = RankedTensorType::get(kShape, wt.getElementType());
    int64_t rank = kType.getRank();
    auto dim = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
    SmallVector<AffineExpr> src = {dim(0).floorDiv(outPerGroup) * inPerGroup + dim(1),
                                   dim(0) % outPerGroup};
    for (int64_t i = 0; i < spatial; ++i)
      src.push_back(getAffineConstantExpr(kShape[2 + i] - 1, ctx) - dim(2 + i));
    Value kernel =
        rewriter
            .create<linalg::GenericOp>(
                loc, TypeRange{kType}, ValueRange{w}, ValueRange{emptyTensor(rewriter, loc, kType, {})},
                SmallVector<AffineMap>{AffineMap::get(rank, 0, src, ctx),
                                       AffineMap::getMultiDimIdentityMap(rank, ctx)},
                parallelIterators(rank),
                [](OpBuilder &nb, Location nl, ValueRange a) { nb.create<linalg::YieldOp>(nl, a[0]); })
            .getResult(0);
    SmallVector<int64_t> ones(spatial, 1);
    rewriter.replaceOp(op, convolution(rewriter, loc, z, kernel, adaptor.getBias(), resultType,
                                       ones, dilation, groups));
    return success();
  }
};

/// Pooling windows as a reduction generic over (n, c, o..., k...).
Value windowReduce(OpBuilder &b, Location loc, Value x, RankedTensorType resultType,
                   ArrayRef<int64_t> kernel, ArrayRef<int64_t> stride, ArrayRef<int64_t> dilation,
                   double identity,
                   function_ref<Value(OpBuilder &, Location, Value acc, Value v)> combine) {
  MLIRContext *ctx = b.getContext();
  int64_t spatial = resultType.getRank() - 2, loops = 2 + 2 * spatial;
  auto d = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
  SmallVector<AffineExpr> xExprs = {d(0), d(1)}, outExprs = {d(0), d(1)};
  for (int64_t i = 0; i < spatial; ++i) {
    xExprs.push_back(d(2 + i) * stride[i] + d(2 + spatial + i) * dilation[i]);
    outExprs.push_back(d(2 + i));
  }
  // The window is a shape-only operand (its values are never read).
  auto windowType = RankedTensorType::get(kernel, b.getI8Type());
  Value window = b.create<tensor::EmptyOp>(loc, kernel, b.getI8Type());
  SmallVector<AffineExpr> kExprs;
  for (int64_t i = 0; i < spatial; ++i)
    kExprs.push_back(d(2 + spatial + i));
  (void)windowType;
  SmallVector<AffineMap> maps = {AffineMap::get(loops, 0, xExprs, ctx),
                                 AffineMap::get(loops, 0, kExprs, ctx),
                                 AffineMap::get(loops, 0, outExprs, ctx)};
  SmallVector<utils::IteratorType> iterators(2 + spatial, utils::IteratorType::parallel);
  iterators.append(spatial, utils::IteratorType::reduction);
  return b
      .create<linalg::GenericOp>(loc, TypeRange{resultType}, ValueRange{x, window},
                                 ValueRange{filled(b, loc, resultType, identity)}, maps, iterators,
                                 [&](OpBuilder &nb, Location nl, ValueRange a) {
                                   nb.create<linalg::YieldOp>(nl, combine(nb, nl, a[2], a[0]));
                                 })
      .getResult(0);
}

/// Extra padding at the end so that every ceil_mode window fits.
SmallVector<int64_t> ceilExtra(RankedTensorType in, RankedTensorType out, ArrayRef<int64_t> kernel,
                               ArrayRef<int64_t> stride, ArrayRef<int64_t> padding,
                               ArrayRef<int64_t> dilation) {
  SmallVector<int64_t> extra;
  for (int64_t i = 0; i < in.getRank() - 2; ++i) {
    int64_t need = (out.getDimSize(2 + i) - 1) * stride[i] + (kernel[i] - 1) * dilation[i] + 1;
    int64_t have = in.getDimSize(2 + i) + 2 * padding[i];
    extra.push_back(std::max<int64_t>(need - have, 0));
  }
  return extra;
}

template <typename OpTy> struct MaxPoolLowering final : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    auto resultType = convertTensorType(llvm::cast<RankedTensorType>(op.getType()));
    RankedTensorType in = typeOf(adaptor.getInput());
    if (!resultType.hasStaticShape() || !in.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic pooling");
    ScalarType st = scalarTypeOf(op.getInput());
    double lowest = st.isFloat() ? -std::numeric_limits<double>::infinity()
                    : st.isUnsigned ? 0.0
                                    : -std::ldexp(1.0, st.type.getIntOrFloatBitWidth() - 1);
    SmallVector<int64_t> high(op.getPadding());
    SmallVector<int64_t> extra = ceilExtra(in, resultType, op.getKernelSize(), op.getStride(),
                                           op.getPadding(), op.getDilation());
    for (size_t i = 0; i < high.size(); ++i)
      high[i] += extra[i];
    // Padding never wins: it holds the lowest value.
    Value x = padSpatial(rewriter, op.getLoc(), adaptor.getInput(), op.getPadding(), high, lowest);
    Value r = windowReduce(rewriter, op.getLoc(), x, resultType, op.getKernelSize(), op.getStride(),
                           op.getDilation(), lowest,
                           [st](OpBuilder &b, Location l, Value acc, Value v) -> Value {
                             if (st.isFloat())
                               return b.create<arith::MaximumFOp>(l, acc, v);
                             if (st.isUnsigned)
                               return b.create<arith::MaxUIOp>(l, acc, v);
                             return b.create<arith::MaxSIOp>(l, acc, v);
                           });
    rewriter.replaceOp(op, r);
    return success();
  }
};

template <typename OpTy> struct AvgPoolLowering final : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto resultType = convertTensorType(llvm::cast<RankedTensorType>(op.getType()));
    RankedTensorType in = typeOf(adaptor.getInput());
    if (!resultType.hasStaticShape() || !in.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic pooling");
    int64_t spatial = in.getRank() - 2;
    ArrayRef<int64_t> kernel = op.getKernelSize(), stride = op.getStride(), padding = op.getPadding();
    SmallVector<int64_t> ones(spatial, 1);
    SmallVector<int64_t> high(padding);
    SmallVector<int64_t> extra = ceilExtra(in, resultType, kernel, stride, padding, ones);
    for (int64_t i = 0; i < spatial; ++i)
      high[i] += extra[i];
    Value x = padSpatial(rewriter, loc, adaptor.getInput(), padding, high, 0.0);
    Value sum = windowReduce(rewriter, loc, x, resultType, kernel, stride, ones, 0.0,
                             [](OpBuilder &b, Location l, Value acc, Value v) -> Value {
                               return b.create<arith::AddFOp>(l, acc, v);
                             });
    // The divisor of each output position (the evaluator's rule).
    SmallVector<int64_t> outSp(resultType.getShape().drop_front(2));
    auto divType = RankedTensorType::get(outSp, resultType.getElementType());
    std::optional<int64_t> override = op.getDivisorOverride();
    bool includePad = op.getCountIncludePad();
    SmallVector<double> divisors;
    int64_t count = divType.getNumElements();
    for (int64_t flat = 0; flat < count; ++flat) {
      int64_t rest = flat, padded = 1, inside = 1;
      SmallVector<int64_t> o(spatial);
      for (int64_t i = spatial - 1; i >= 0; --i) {
        o[i] = rest % outSp[i];
        rest /= outSp[i];
      }
      for (int64_t i = 0; i < spatial; ++i) {
        int64_t start = o[i] * stride[i] - padding[i];
        int64_t end = std::min(start + kernel[i], in.getDimSize(2 + i) + padding[i]);
        padded *= end - start;
        inside *= std::max<int64_t>(std::min(end, in.getDimSize(2 + i)) - std::max<int64_t>(start, 0), 0);
      }
      divisors.push_back(override ? double(*override) : double(includePad ? padded : inside));
    }
    SmallVector<Attribute> values;
    for (double v : divisors)
      values.push_back(FloatAttr::get(divType.getElementType(), v));
    Value div = rewriter.create<arith::ConstantOp>(loc, DenseElementsAttr::get(divType, values));
    Value r = elementwiseGeneric(rewriter, loc, resultType, {sum, div},
                                 [](OpBuilder &b, Location l, ValueRange a) -> Value {
                                   return b.create<arith::DivFOp>(l, a[0], a[1]);
                                 });
    rewriter.replaceOp(op, r);
    return success();
  }
};

/// Adaptive average pooling as a contraction with one constant averaging
/// matrix per spatial dimension: P[o, i] = 1 / |window(o)| inside the window.
template <typename OpTy> struct AdaptivePoolLowering final : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    auto resultType = convertTensorType(llvm::cast<RankedTensorType>(op.getType()));
    RankedTensorType in = typeOf(adaptor.getInput());
    int64_t spatial = in.getRank() - 2;
    // A run-time batch or channel count is the input's; the averaging
    // matrices need the spatial sizes.
    for (int64_t i = 0; i < spatial; ++i)
      if (in.isDynamicDim(2 + i))
        return rewriter.notifyMatchFailure(op, "dynamic pooling");
    Type element = resultType.getElementType();
    SmallVector<Value> operands = {adaptor.getInput()};
    for (int64_t i = 0; i < spatial; ++i) {
      int64_t inSize = in.getDimSize(2 + i), outSize = resultType.getDimSize(2 + i);
      auto pType = RankedTensorType::get({outSize, inSize}, element);
      SmallVector<Attribute> values;
      for (int64_t o = 0; o < outSize; ++o) {
        int64_t lo = (o * inSize) / outSize, hi = ((o + 1) * inSize + outSize - 1) / outSize;
        for (int64_t j = 0; j < inSize; ++j)
          values.push_back(FloatAttr::get(element, j >= lo && j < hi ? 1.0 / double(hi - lo) : 0.0));
      }
      operands.push_back(rewriter.create<arith::ConstantOp>(loc, DenseElementsAttr::get(pType, values)));
    }
    // Loops: n, c, o..., i...
    int64_t loops = 2 + 2 * spatial;
    auto d = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
    SmallVector<AffineExpr> xExprs = {d(0), d(1)}, outExprs = {d(0), d(1)};
    SmallVector<AffineMap> maps;
    for (int64_t i = 0; i < spatial; ++i) {
      xExprs.push_back(d(2 + spatial + i));
      outExprs.push_back(d(2 + i));
    }
    maps.push_back(AffineMap::get(loops, 0, xExprs, ctx));
    for (int64_t i = 0; i < spatial; ++i)
      maps.push_back(AffineMap::get(loops, 0, {d(2 + i), d(2 + spatial + i)}, ctx));
    maps.push_back(AffineMap::get(loops, 0, outExprs, ctx));
    SmallVector<utils::IteratorType> iterators(2 + spatial, utils::IteratorType::parallel);
    iterators.append(spatial, utils::IteratorType::reduction);
    Value r = rewriter
                  .create<linalg::GenericOp>(
                      loc, TypeRange{resultType}, operands,
                      ValueRange{filled(rewriter, loc, resultType, 0.0, adaptor.getInput())}, maps,
                      iterators,
                      [&](OpBuilder &b, Location l, ValueRange a) {
                        Value v = a[0];
                        for (int64_t i = 0; i < spatial; ++i)
                          v = b.create<arith::MulFOp>(l, v, a[1 + i]);
                        b.create<linalg::YieldOp>(l, b.create<arith::AddFOp>(l, a.back(), v).getResult());
                      })
                  .getResult(0);
    rewriter.replaceOp(op, r);
    return success();
  }
};

} // namespace

void populateConvPoolLowering(const TypeConverter &tc, RewritePatternSet &patterns) {
  patterns.add<ConvLowering<Conv1DOp>, ConvLowering<Conv2DOp>,
               ConvTransposeLowering<ConvTranspose1DOp>, ConvTransposeLowering<ConvTranspose2DOp>,
               MaxPoolLowering<MaxPool1DOp>, MaxPoolLowering<MaxPool2DOp>,
               AvgPoolLowering<AvgPool1DOp>, AvgPoolLowering<AvgPool2DOp>,
               AdaptivePoolLowering<AdaptiveAvgPool1DOp>, AdaptivePoolLowering<AdaptiveAvgPool2DOp>>(
      tc, patterns.getContext());
}

} // namespace mlir::cuvil::lowering
