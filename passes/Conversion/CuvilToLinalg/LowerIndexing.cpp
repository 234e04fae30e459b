//===- LowerIndexing.cpp - Gathers, padding and resampling ----------------===//
//
// Ops whose result element reads an input element at a computed position
// become one linalg.generic over the result that computes the position and
// reads it with tensor.extract: index_select, gather and embedding (the
// position comes from an index tensor: clamped, and checked at run time),
// pad (from the padding mode) and resize (from per-axis tables computed at
// compile time with the reference evaluator's rounding).
//
//===----------------------------------------------------------------------===//
#include "passes/Conversion/CuvilToLinalg/Patterns.h"

#include "dialects/Cuvil/IR/CuvilOps.h"
#include "dialects/Cuvil/IR/ResizeCoordinates.h"
#include "passes/Conversion/CuvilToLinalg/LoweringUtils.h"
#include "passes/Conversion/CuvilToLinalg/RuntimeChecks.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::cuvil::lowering {
namespace {

RankedTensorType typeOf(Value v) { return llvm::cast<RankedTensorType>(v.getType()); }

/// A linalg.generic over `resultType` reading `ins` through `maps`; `body`
/// gets the builder, the scalars of `ins` and returns the element.
Value gatherGeneric(OpBuilder &b, Location loc, RankedTensorType resultType, ValueRange ins,
                    ArrayRef<AffineMap> inMaps,
                    function_ref<Value(OpBuilder &, Location, ValueRange)> body, Value init = {}) {
  int64_t rank = resultType.getRank();
  SmallVector<AffineMap> maps(inMaps.begin(), inMaps.end());
  maps.push_back(AffineMap::getMultiDimIdentityMap(rank, b.getContext()));
  if (!init)
    init = emptyTensor(b, loc, resultType, {});
  auto generic = b.create<linalg::GenericOp>(
      loc, TypeRange{resultType}, ins, ValueRange{init}, maps,
      parallelIterators(rank), [&](OpBuilder &nb, Location nl, ValueRange args) {
        nb.create<linalg::YieldOp>(nl, body(nb, nl, args.drop_back()));
      });
  return generic.getResult(0);
}

/// The loop indices 0..rank-1 of the enclosing generic.
SmallVector<Value> loopIndices(OpBuilder &b, Location loc, int64_t rank) {
  SmallVector<Value> idx;
  for (int64_t d = 0; d < rank; ++d)
    idx.push_back(b.create<linalg::IndexOp>(loc, d));
  return idx;
}

/// Adds the run-time range check of `indices` against `size` when the op
/// was numbered for one.
void checkIndices(OpBuilder &b, Location loc, Operation *op, Value indices, int64_t size) {
  if (needsRuntimeCheck(op))
    recordCheck(b, loc, op, anyIndexOutOfRange(b, loc, indices, size));
}

struct IndexSelectLowering final : OpConversionPattern<IndexSelectOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(IndexSelectOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput(), index = adaptor.getIndex();
    auto type = convertTensorType(llvm::cast<RankedTensorType>(op.getType()));
    int64_t dim = op.getDim(), rank = type.getRank();
    RankedTensorType in = typeOf(input);
    // Run-time sizes (x[:, t] in a loop over a run-time length): the
    // input's along the other dimensions, the indices' along `dim`.
    Value size = in.isDynamicDim(dim) ? rewriter.create<tensor::DimOp>(loc, input, dim).getResult()
                                      : rewriter.create<arith::ConstantIndexOp>(loc, in.getDimSize(dim)).getResult();
    if (needsRuntimeCheck(op))
      recordCheck(rewriter, loc, op, anyIndexOutOfRange(rewriter, loc, index, size));
    SmallVector<Value> dynamicSizes;
    for (int64_t d = 0; d < rank; ++d)
      if (type.isDynamicDim(d))
        dynamicSizes.push_back(d == dim ? rewriter.create<tensor::DimOp>(loc, index, 0).getResult()
                                        : rewriter.create<tensor::DimOp>(loc, input, d).getResult());
    Value init = rewriter.create<tensor::EmptyOp>(loc, type.getShape(), type.getElementType(), dynamicSizes);
    MLIRContext *ctx = op.getContext();
    AffineMap indexMap =
        typeOf(index).getRank() == 1 ? AffineMap::get(rank, 0, {getAffineDimExpr(dim, ctx)}, ctx)
                                     : AffineMap::get(rank, 0, {}, ctx);
    Value r = gatherGeneric(
        rewriter, loc, type, index, indexMap,
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          SmallVector<Value> at = loopIndices(b, l, rank);
          at[dim] = wrapAndClampIndex(b, l, a[0], size);
          return b.create<tensor::ExtractOp>(l, input, at);
        },
        init);
    rewriter.replaceOp(op, r);
    return success();
  }
};

struct GatherLowering final : OpConversionPattern<GatherOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(GatherOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput(), index = adaptor.getIndex();
    auto type = convertTensorType(llvm::cast<RankedTensorType>(op.getType()));
    if (!type.hasStaticShape() || !typeOf(input).hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic gather");
    int64_t rank = type.getRank();
    int64_t dim = rank ? op.getDim() : 0, size = rank ? typeOf(input).getDimSize(dim) : 1;
    checkIndices(rewriter, loc, op, index, size);
    Value r = gatherGeneric(rewriter, loc, type, index,
                            AffineMap::getMultiDimIdentityMap(rank, op.getContext()),
                            [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                              SmallVector<Value> at = loopIndices(b, l, rank);
                              if (rank)
                                at[dim] = wrapAndClampIndex(b, l, a[0], size);
                              return b.create<tensor::ExtractOp>(l, input, at);
                            });
    rewriter.replaceOp(op, r);
    return success();
  }
};

struct EmbeddingLowering final : OpConversionPattern<EmbeddingOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(EmbeddingOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value weight = adaptor.getWeight(), indices = adaptor.getIndices();
    auto type = convertTensorType(llvm::cast<RankedTensorType>(op.getType()));
    if (!typeOf(weight).hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic embedding table");
    int64_t rows = typeOf(weight).getDimSize(0), rank = type.getRank();
    checkIndices(rewriter, loc, op, indices, rows);
    // Run-time sizes (token ids of a run-time length) are the indices'.
    SmallVector<Value> dynamicSizes;
    for (int64_t d = 0; d + 1 < rank; ++d)
      if (type.isDynamicDim(d))
        dynamicSizes.push_back(rewriter.create<tensor::DimOp>(loc, indices, d));
    Value init = rewriter.create<tensor::EmptyOp>(loc, type.getShape(), type.getElementType(), dynamicSizes);
    MLIRContext *ctx = op.getContext();
    SmallVector<AffineExpr> lead;
    for (int64_t d = 0; d + 1 < rank; ++d)
      lead.push_back(getAffineDimExpr(d, ctx));
    Value r = gatherGeneric(rewriter, loc, type, indices, AffineMap::get(rank, 0, lead, ctx),
                            [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                              Value row = wrapAndClampIndex(b, l, a[0], rows);
                              Value col = b.create<linalg::IndexOp>(l, rank - 1);
                              return b.create<tensor::ExtractOp>(l, weight, ValueRange{row, col});
                            },
                            init);
    rewriter.replaceOp(op, r);
    return success();
  }
};

struct PadLowering final : OpConversionPattern<PadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(PadOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    RankedTensorType in = typeOf(input);
    auto type = convertTensorType(llvm::cast<RankedTensorType>(op.getType()));
    if (!type.hasStaticShape() || !in.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic pad");
    int64_t rank = in.getRank();
    ArrayRef<int64_t> pad = op.getPad();
    SmallVector<int64_t> before(rank, 0);
    for (size_t p = 0; p < pad.size() / 2; ++p)
      before[rank - 1 - p] = pad[2 * p];
    PadMode mode = op.getMode();
    ScalarType st = scalarTypeOf(op.getInput());
    double fill = op.getValue().convertToDouble();
    Value r = gatherGeneric(
        rewriter, loc, type, {}, {}, [&](OpBuilder &b, Location l, ValueRange) -> Value {
          auto cst = [&](int64_t v) { return b.create<arith::ConstantIndexOp>(l, v).getResult(); };
          Value inside = b.create<arith::ConstantOp>(l, b.getBoolAttr(true));
          SmallVector<Value> at;
          for (int64_t d = 0; d < rank; ++d) {
            int64_t size = in.getDimSize(d);
            Value i = b.create<linalg::IndexOp>(l, d);
            if (before[d] == 0 && type.getDimSize(d) == size) {
              at.push_back(i);
              continue;
            }
            i = b.create<arith::SubIOp>(l, i, cst(before[d]));
            Value below = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt, i, cst(0));
            Value above = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::sge, i, cst(size));
            switch (mode) {
            case PadMode::Constant: {
              Value out = b.create<arith::OrIOp>(l, below, above);
              inside = b.create<arith::AndIOp>(l, inside, b.create<arith::XOrIOp>(
                                                             l, out, b.create<arith::ConstantOp>(
                                                                         l, b.getBoolAttr(true))));
              // Any in-bounds position serves where the fill is taken.
              i = b.create<arith::MaxSIOp>(l, b.create<arith::MinSIOp>(l, i, cst(size - 1)), cst(0));
              break;
            }
            case PadMode::Reflect:
              i = b.create<arith::SelectOp>(l, below, b.create<arith::SubIOp>(l, cst(0), i), i);
              i = b.create<arith::SelectOp>(
                  l, above, b.create<arith::SubIOp>(l, cst(2 * (size - 1)), i), i);
              break;
            case PadMode::Replicate:
              i = b.create<arith::MaxSIOp>(l, b.create<arith::MinSIOp>(l, i, cst(size - 1)), cst(0));
              break;
            case PadMode::Circular:
              i = b.create<arith::RemSIOp>(
                  l, b.create<arith::AddIOp>(l, b.create<arith::RemSIOp>(l, i, cst(size)), cst(size)),
                  cst(size));
              break;
            }
            at.push_back(i);
          }
          Value x = b.create<tensor::ExtractOp>(l, input, at);
          if (mode != PadMode::Constant)
            return x;
          return b.create<arith::SelectOp>(l, inside, x, scalarConstant(b, l, st, fill));
        });
    rewriter.replaceOp(op, r);
    return success();
  }
};

struct ResizeLowering final : OpConversionPattern<ResizeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(ResizeOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    Value input = adaptor.getInput();
    RankedTensorType in = typeOf(input);
    auto type = convertTensorType(llvm::cast<RankedTensorType>(op.getType()));
    if (!type.hasStaticShape() || !in.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic resize");
    int64_t rank = in.getRank(), spatial = rank - 2;
    for (int64_t d = 2; d < rank; ++d)
      if (in.getDimSize(d) == 0)
        return rewriter.notifyMatchFailure(op, "empty spatial dimension");
    ResizeMode mode = op.getMode();
    bool linear = mode == ResizeMode::Linear;
    Type element = type.getElementType();
    std::optional<ArrayRef<double>> scales = op.getScales();

    // Per spatial axis: source positions (and weights), read by the loop
    // over that axis of the result.
    SmallVector<Value> tables;
    SmallVector<AffineMap> maps;
    for (int64_t d = 0; d < spatial; ++d) {
      std::optional<double> scale;
      if (scales)
        scale = (*scales)[d];
      int64_t inSize = in.getDimSize(2 + d), outSize = type.getDimSize(2 + d);
      ResizeAxis axis = element.isF64()
                            ? resizeAxis<double>(mode, inSize, outSize, scale, op.getAlignCorners())
                            : resizeAxis<float>(mode, inSize, outSize, scale, op.getAlignCorners());
      auto indexTable = [&](const std::vector<int64_t> &v) -> Value {
        auto t = RankedTensorType::get({outSize}, rewriter.getI64Type());
        return rewriter.create<arith::ConstantOp>(loc, DenseIntElementsAttr::get(t, ArrayRef(v)));
      };
      auto weightTable = [&](const std::vector<double> &v) -> Value {
        auto t = RankedTensorType::get({outSize}, element);
        SmallVector<Attribute> values;
        for (double w : v)
          values.push_back(rewriter.getFloatAttr(element, w));
        return rewriter.create<arith::ConstantOp>(loc, DenseElementsAttr::get(t, values));
      };
      AffineMap axisMap = AffineMap::get(rank, 0, {getAffineDimExpr(2 + d, ctx)}, ctx);
      tables.push_back(indexTable(axis.lo));
      maps.push_back(axisMap);
      if (linear) {
        tables.push_back(indexTable(axis.hi));
        tables.push_back(weightTable(axis.wLo));
        tables.push_back(weightTable(axis.wHi));
        maps.append(3, axisMap);
      }
    }
    if (linear && !llvm::isa<FloatType>(element))
      return rewriter.notifyMatchFailure(op, "linear resize of integers");
    int64_t perAxis = linear ? 4 : 1;
    // wLo * low + wHi * high, t = an axis' (lo, hi, wLo, wHi) table values.
    auto weighted = [](OpBuilder &b, Location l, ValueRange t, Value low, Value high) -> Value {
      return b.create<arith::AddFOp>(l, b.create<arith::MulFOp>(l, t[2], low),
                                     b.create<arith::MulFOp>(l, t[3], high));
    };
    // Bilinear, not shrinking rows much: in two passes. Every input row is
    // interpolated along the width once, then each output row is a weighted
    // sum of two of those rows, contiguous along the width (vectorisable),
    // instead of four gathers per output. The same sums in the same order.
    if (linear && spatial == 2 && in.getDimSize(2) <= 2 * type.getDimSize(2)) {
      auto rowsType = RankedTensorType::get(
          {in.getDimSize(0), in.getDimSize(1), in.getDimSize(2), type.getDimSize(3)}, element);
      auto mapTo = [&](int64_t dim) {
        return SmallVector<AffineMap>(4, AffineMap::get(rank, 0, {getAffineDimExpr(dim, ctx)}, ctx));
      };
      // rows[n][c][y][ox]: input row y along the output's width.
      Value rows = gatherGeneric(
          rewriter, loc, rowsType, ValueRange(tables).slice(4, 4), mapTo(3),
          [&](OpBuilder &b, Location l, ValueRange t) -> Value {
            SmallVector<Value> at = loopIndices(b, l, 3);
            at.push_back(b.create<arith::IndexCastOp>(l, b.getIndexType(), t[0]));
            Value low = b.create<tensor::ExtractOp>(l, input, at);
            at.back() = b.create<arith::IndexCastOp>(l, b.getIndexType(), t[1]);
            Value high = b.create<tensor::ExtractOp>(l, input, at);
            return weighted(b, l, t, low, high);
          });
      Value r = gatherGeneric(
          rewriter, loc, type, ValueRange(tables).slice(0, 4), mapTo(2),
          [&](OpBuilder &b, Location l, ValueRange t) -> Value {
            SmallVector<Value> at = loopIndices(b, l, 4);
            at[2] = b.create<arith::IndexCastOp>(l, b.getIndexType(), t[0]);
            Value low = b.create<tensor::ExtractOp>(l, rows, at);
            at[2] = b.create<arith::IndexCastOp>(l, b.getIndexType(), t[1]);
            Value high = b.create<tensor::ExtractOp>(l, rows, at);
            return weighted(b, l, t, low, high);
          });
      rewriter.replaceOp(op, r);
      return success();
    }
    Value r = gatherGeneric(
        rewriter, loc, type, tables, maps, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          SmallVector<Value> at = {b.create<linalg::IndexOp>(l, 0), b.create<linalg::IndexOp>(l, 1)};
          auto position = [&](Value v) {
            return b.create<arith::IndexCastOp>(l, b.getIndexType(), v).getResult();
          };
          // Nested as PyTorch evaluates it: the outer axis weighs the
          // interpolations along the inner ones.
          std::function<Value(int64_t)> sample = [&](int64_t d) -> Value {
            if (d == spatial)
              return b.create<tensor::ExtractOp>(l, input, at);
            ValueRange t = a.slice(d * perAxis, perAxis);
            at.push_back(position(t[0]));
            Value low = sample(d + 1);
            at.pop_back();
            if (!linear)
              return low;
            at.push_back(position(t[1]));
            Value high = sample(d + 1);
            at.pop_back();
            return weighted(b, l, t, low, high);
          };
          return sample(0);
        });
    rewriter.replaceOp(op, r);
    return success();
  }
};


/// torch.scatter: a loop nest over the index tensor (in its order: with
/// repeated indices the last write wins) that carries the result tensor and
/// updates one element per position; bufferization makes it in place.
/// Without include_self the targeted elements are first set to the
/// reduction's identity; mean also carries a count per element and divides
/// at the end.
struct ScatterLowering final : OpConversionPattern<ScatterOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult matchAndRewrite(ScatterOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput(), index = adaptor.getIndex(), src = adaptor.getSrc();
    RankedTensorType type = typeOf(input);
    if (!type.hasStaticShape() || !typeOf(index).hasStaticShape() || !typeOf(src).hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic scatter");
    int64_t rank = type.getRank(), dim = rank ? op.getDim() : 0;
    int64_t size = rank ? type.getDimSize(dim) : 1;
    checkIndices(rewriter, loc, op, index, size);
    ScalarType st = scalarTypeOf(op.getInput());
    ScatterReduce reduce = op.getReduce();
    bool includeSelf = op.getIncludeSelf() || reduce == ScatterReduce::None;
    bool mean = reduce == ScatterReduce::Mean;

    SmallVector<Value> lbs, ubs, steps;
    Value zero = rewriter.create<arith::ConstantIndexOp>(loc, 0);
    Value one = rewriter.create<arith::ConstantIndexOp>(loc, 1);
    for (int64_t d = 0; d < rank; ++d) {
      lbs.push_back(zero);
      ubs.push_back(rewriter.create<arith::ConstantIndexOp>(loc, typeOf(index).getDimSize(d)));
      steps.push_back(one);
    }
    // The element of the result a position of `index` targets.
    auto target = [&](OpBuilder &b, Location l, ValueRange ivs) {
      SmallVector<Value> at(ivs.begin(), ivs.end());
      if (rank) {
        Value i = b.create<tensor::ExtractOp>(l, index, ivs);
        at[dim] = wrapAndClampIndex(b, l, i, size);
      }
      return at;
    };
    auto loopNest = [&](ValueRange init,
                        function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange, ValueRange)> body) {
      scf::LoopNest nest = scf::buildLoopNest(rewriter, loc, lbs, ubs, steps, init, body);
      return SmallVector<Value>(nest.results.begin(), nest.results.end());
    };

    SmallVector<Value> state{input};
    Type i64 = rewriter.getI64Type();
    auto countType = RankedTensorType::get(type.getShape(), i64);
    if (mean)
      state.push_back(rewriter.create<linalg::FillOp>(
                          loc, rewriter.create<arith::ConstantOp>(loc, rewriter.getI64IntegerAttr(includeSelf ? 1 : 0)).getResult(),
                          emptyTensor(rewriter, loc, countType, {}))
                          .getResult(0));
    if (!includeSelf) {
      state = loopNest(state, [&](OpBuilder &b, Location l, ValueRange ivs, ValueRange args) {
        SmallVector<Value> at = target(b, l, ivs);
        Value id = reduce == ScatterReduce::Prod ? scalarConstant(b, l, st, 1.0)
                   : reduce == ScatterReduce::Amax ? extremeConstant(b, l, st, /*highest=*/false)
                   : reduce == ScatterReduce::Amin ? extremeConstant(b, l, st, /*highest=*/true)
                                                   : scalarConstant(b, l, st, 0.0);
        SmallVector<Value> next{b.create<tensor::InsertOp>(l, id, args[0], at)};
        if (mean)
          next.push_back(args[1]);
        return next;
      });
    }
    state = loopNest(state, [&](OpBuilder &b, Location l, ValueRange ivs, ValueRange args) {
      SmallVector<Value> at = target(b, l, ivs);
      Value v = b.create<tensor::ExtractOp>(l, src, ivs);
      Value old = b.create<tensor::ExtractOp>(l, args[0], at);
      Value r = combine(b, l, reduce, st, old, v);
      SmallVector<Value> next{b.create<tensor::InsertOp>(l, r, args[0], at)};
      if (mean) {
        Value c = b.create<tensor::ExtractOp>(l, args[1], at);
        Value c1 = b.create<arith::AddIOp>(l, c, b.create<arith::ConstantOp>(l, b.getI64IntegerAttr(1)));
        next.push_back(b.create<tensor::InsertOp>(l, c1, args[1], at));
      }
      return next;
    });
    Value result = state[0];
    if (mean)
      result = elementwiseGeneric(rewriter, loc, type, {state[0], state[1]},
                                  [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                                    Value c = a[1];
                                    Value positive = b.create<arith::CmpIOp>(
                                        l, arith::CmpIPredicate::sgt, c,
                                        b.create<arith::ConstantOp>(l, b.getI64IntegerAttr(0)));
                                    // Both select arms are computed: divide by 1 where
                                    // nothing was combined.
                                    Value safe = b.create<arith::SelectOp>(
                                        l, positive, c, b.create<arith::ConstantOp>(l, b.getI64IntegerAttr(1)));
                                    Value n = convertScalar(b, l, safe, scalarTypeOf(b.getI64Type()), st);
                                    Value q;
                                    if (st.isFloat())
                                      q = b.create<arith::DivFOp>(l, a[0], n);
                                    else if (st.isUnsigned || st.isBool())
                                      q = b.create<arith::DivUIOp>(l, a[0], n);
                                    else
                                      q = b.create<arith::FloorDivSIOp>(l, a[0], n);
                                    return b.create<arith::SelectOp>(l, positive, q, a[0]);
                                  });
    rewriter.replaceOp(op, result);
    return success();
  }

  static Value combine(OpBuilder &b, Location l, ScatterReduce reduce, ScalarType st, Value old, Value v) {
    bool f = st.isFloat(), u = st.isUnsigned || st.isBool();
    switch (reduce) {
    case ScatterReduce::None: return v;
    case ScatterReduce::Sum:
    case ScatterReduce::Mean:
      if (st.isBool())
        return b.create<arith::OrIOp>(l, old, v);
      return f ? b.create<arith::AddFOp>(l, old, v).getResult() : b.create<arith::AddIOp>(l, old, v).getResult();
    case ScatterReduce::Prod:
      if (st.isBool())
        return b.create<arith::AndIOp>(l, old, v);
      return f ? b.create<arith::MulFOp>(l, old, v).getResult() : b.create<arith::MulIOp>(l, old, v).getResult();
    case ScatterReduce::Amax:
      if (f)
        return b.create<arith::MaximumFOp>(l, old, v);
      return u ? b.create<arith::MaxUIOp>(l, old, v).getResult() : b.create<arith::MaxSIOp>(l, old, v).getResult();
    case ScatterReduce::Amin:
      if (f)
        return b.create<arith::MinimumFOp>(l, old, v);
      return u ? b.create<arith::MinUIOp>(l, old, v).getResult() : b.create<arith::MinSIOp>(l, old, v).getResult();
    }
    llvm_unreachable("scatter reduce");
  }
};

} // namespace

void populateIndexingLowering(const TypeConverter &tc, RewritePatternSet &patterns) {
  patterns.add<IndexSelectLowering, GatherLowering, EmbeddingLowering, PadLowering,
               ResizeLowering, ScatterLowering>(tc, patterns.getContext());
}

} // namespace mlir::cuvil::lowering
