//===- LowerReduction.cpp - Reductions, softmax and normalisation ---------===//
//
// A reduction is a linalg.generic with reduction iterators over the reduced
// dimensions, from the operation's identity (0, 1, -inf, +inf, false,
// true). mean divides the sum by the count; var/std use the two-pass
// formula of the evaluator (mean first, then squared deviations); softmax
// subtracts the maximum before exp. Normalisation ops are built from the
// same pieces.
//
//===----------------------------------------------------------------------===//
#include "passes/Conversion/CuvilToLinalg/Patterns.h"

#include "dialects/Cuvil/IR/CuvilOps.h"
#include "passes/Conversion/CuvilToLinalg/LoweringUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <limits>

namespace mlir::cuvil::lowering {
namespace {

RankedTensorType typeOf(Value v) { return llvm::cast<RankedTensorType>(v.getType()); }

using Combine = std::function<Value(OpBuilder &, Location, Value acc, Value x)>;

/// The identity a reduction starts from, built exactly for its type.
enum class Identity { Zero, One, Lowest, Highest };

Value identityConstant(OpBuilder &b, Location loc, ScalarType t, Identity id) {
  switch (id) {
  case Identity::Zero: return scalarConstant(b, loc, t, 0.0);
  case Identity::One: return scalarConstant(b, loc, t, 1.0);
  case Identity::Lowest: return extremeConstant(b, loc, t, /*highest=*/false);
  case Identity::Highest: return extremeConstant(b, loc, t, /*highest=*/true);
  }
  llvm_unreachable("identity");
}

/// Reduces `input` over `dims` (sorted) into `resultType` (keepdim or
/// not), converting each element from `from` to the result's scalar type.
Value reduce(OpBuilder &b, Location loc, Value input, ArrayRef<int64_t> dims, bool keepdim,
             RankedTensorType resultType, ScalarType from, Identity identity, Combine combine) {
  MLIRContext *ctx = b.getContext();
  RankedTensorType in = typeOf(input);
  int64_t rank = in.getRank();
  llvm::SmallDenseSet<int64_t> reduced(dims.begin(), dims.end());
  SmallVector<AffineExpr> outExprs;
  SmallVector<utils::IteratorType> iterators;
  for (int64_t d = 0; d < rank; ++d) {
    bool r = reduced.contains(d);
    iterators.push_back(r ? utils::IteratorType::reduction : utils::IteratorType::parallel);
    if (!r)
      outExprs.push_back(getAffineDimExpr(d, ctx));
    else if (keepdim)
      outExprs.push_back(getAffineConstantExpr(0, ctx));
  }
  ScalarType to = scalarTypeOf(resultType.getElementType());
  // The result's run-time sizes are those of the input's kept dimensions.
  SmallVector<Value> sizes;
  for (int64_t d = 0, out = 0; d < rank; ++d) {
    if (reduced.contains(d) && !keepdim)
      continue;
    if (resultType.isDynamicDim(out))
      sizes.push_back(b.create<tensor::DimOp>(loc, input, d));
    ++out;
  }
  Value empty = b.create<tensor::EmptyOp>(loc, resultType.getShape(), resultType.getElementType(), sizes);
  Value init = b.create<linalg::FillOp>(loc, identityConstant(b, loc, to, identity), empty).getResult(0);
  SmallVector<AffineMap> maps = {AffineMap::getMultiDimIdentityMap(rank, ctx),
                                 AffineMap::get(rank, 0, outExprs, ctx)};
  auto generic = b.create<linalg::GenericOp>(
      loc, TypeRange{resultType}, ValueRange{input}, ValueRange{init}, maps, iterators,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value x = convertScalar(nb, nl, args[0], from, to);
        nb.create<linalg::YieldOp>(nl, combine(nb, nl, args[1], x));
      });
  return generic.getResult(0);
}

/// The number of elements reduced, less `minus`, as a scalar of `st`: a
/// constant for static dimensions, computed from the run's sizes else.
Value reducedCount(OpBuilder &b, Location loc, Value input, ArrayRef<int64_t> dims, ScalarType st,
                   double minus = 0) {
  RankedTensorType in = typeOf(input);
  double n = 1;
  Value dynamic;
  for (int64_t d : dims) {
    if (!in.isDynamicDim(d)) {
      n *= in.getDimSize(d);
      continue;
    }
    Value size = b.create<tensor::DimOp>(loc, input, d);
    dynamic = dynamic ? b.create<arith::MulIOp>(loc, dynamic, size).getResult() : size;
  }
  if (!dynamic)
    return scalarConstant(b, loc, st, n - minus);
  Value count = b.create<arith::UIToFPOp>(
      loc, st.type, b.create<arith::IndexCastUIOp>(loc, b.getI64Type(), dynamic));
  if (n != 1)
    count = b.create<arith::MulFOp>(loc, count, scalarConstant(b, loc, st, n));
  if (minus != 0)
    count = b.create<arith::SubFOp>(loc, count, scalarConstant(b, loc, st, minus));
  return count;
}

/// The same dims with keepdim: the shape mean and max broadcast from.
RankedTensorType keptType(RankedTensorType in, ArrayRef<int64_t> dims, Type element) {
  SmallVector<int64_t> shape(in.getShape());
  for (int64_t d : dims)
    shape[d] = 1;
  return RankedTensorType::get(shape, element);
}

Combine addCombine(ScalarType t) {
  return [t](OpBuilder &b, Location l, Value acc, Value x) -> Value {
    // Reassociable: LLVM may then sum in vector lanes (PyTorch's
    // reductions do not add in order either).
    if (t.isFloat())
      return b.create<arith::AddFOp>(
          l, acc, x, arith::FastMathFlagsAttr::get(b.getContext(), arith::FastMathFlags::reassoc));
    if (t.isBool())
      return b.create<arith::OrIOp>(l, acc, x);
    return b.create<arith::AddIOp>(l, acc, x);
  };
}

Value sumOver(OpBuilder &b, Location loc, Value input, ArrayRef<int64_t> dims, bool keepdim,
              RankedTensorType resultType, ScalarType from) {
  ScalarType to = scalarTypeOf(resultType.getElementType());
  return reduce(b, loc, input, dims, keepdim, resultType, from, Identity::Zero, addCombine(to));
}

Value maxOver(OpBuilder &b, Location loc, Value input, ArrayRef<int64_t> dims, bool keepdim,
              RankedTensorType resultType, ScalarType from, bool isMax) {
  ScalarType to = scalarTypeOf(resultType.getElementType());
  return reduce(b, loc, input, dims, keepdim, resultType, from,
                isMax ? Identity::Lowest : Identity::Highest,
                [to, isMax](OpBuilder &nb, Location l, Value acc, Value x) -> Value {
                  if (to.isFloat())
                    return isMax ? nb.create<arith::MaximumFOp>(l, acc, x).getResult()
                                 : nb.create<arith::MinimumFOp>(l, acc, x).getResult();
                  if (to.isUnsigned || to.isBool())
                    return isMax ? nb.create<arith::MaxUIOp>(l, acc, x).getResult()
                                 : nb.create<arith::MinUIOp>(l, acc, x).getResult();
                  return isMax ? nb.create<arith::MaxSIOp>(l, acc, x).getResult()
                               : nb.create<arith::MinSIOp>(l, acc, x).getResult();
                });
}

/// mean over dims (keepdim), float result of `element`.
Value meanKept(OpBuilder &b, Location loc, Value input, ArrayRef<int64_t> dims, Type element,
               ScalarType from) {
  RankedTensorType in = typeOf(input);
  RankedTensorType kept = keptType(in, dims, element);
  Value sum = sumOver(b, loc, input, dims, true, kept, from);
  ScalarType st = scalarTypeOf(element);
  Value n = reducedCount(b, loc, input, dims, st);
  return elementwiseGeneric(b, loc, kept, sum, [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
    return nb.create<arith::DivFOp>(l, a[0], n);
  });
}

/// Biased/corrected variance over dims: sum((x - mean)^2) / (n - correction).
Value varianceKept(OpBuilder &b, Location loc, Value input, Value meanK, ArrayRef<int64_t> dims,
                   Type element, ScalarType from, int64_t correction) {
  RankedTensorType in = typeOf(input);
  RankedTensorType full = in.clone(element);
  ScalarType st = scalarTypeOf(element);
  Value sq = elementwiseGeneric(b, loc, full, {input, meanK},
                                [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                                  Value x = convertScalar(nb, l, a[0], from, st);
                                  Value d = nb.create<arith::SubFOp>(l, x, a[1]);
                                  return nb.create<arith::MulFOp>(l, d, d);
                                });
  RankedTensorType kept = keptType(in, dims, element);
  Value sum = sumOver(b, loc, sq, dims, true, kept, st);
  Value n = reducedCount(b, loc, input, dims, st, double(correction));
  return elementwiseGeneric(b, loc, kept, sum, [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
    return nb.create<arith::DivFOp>(l, a[0], n);
  });
}

/// Drops the kept size-1 dims (keepdim = false).
Value dropKept(OpBuilder &b, Location loc, Value v, RankedTensorType resultType) {
  RankedTensorType t = typeOf(v);
  if (t == resultType)
    return v;
  // Collapse every dim into a group; size-1 reduced dims join a neighbour.
  SmallVector<ReassociationIndices> groups;
  if (resultType.getRank() == 0)
    return b.create<tensor::CollapseShapeOp>(loc, resultType, v, ArrayRef<ReassociationIndices>{});
  int64_t out = 0;
  ReassociationIndices current;
  for (int64_t d = 0; d < t.getRank(); ++d) {
    current.push_back(d);
    bool keep = out < resultType.getRank() && t.getDimSize(d) == resultType.getDimSize(out);
    if (keep) {
      // Later unit dims that are not in the result belong to this group.
      groups.push_back(current);
      current.clear();
      ++out;
    }
  }
  if (!current.empty()) // trailing reduced dims join the last group
    groups.back().append(current.begin(), current.end());
  return b.create<tensor::CollapseShapeOp>(loc, resultType, v, groups);
}

template <typename OpTy>
struct ReduceLowering final : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getInput();
    // A 0-d input reduced "over dim 0" is the one element itself.
    ArrayRef<int64_t> dims = typeOf(x).getRank() == 0 ? ArrayRef<int64_t>() : op.getDims();
    bool keepdim = op.getKeepdim();
    auto resultType = convertTensorType(llvm::cast<RankedTensorType>(op.getType()));
    ScalarType from = scalarTypeOf(op.getInput());
    ScalarType to = scalarTypeOf(resultType.getElementType());
    Type element = resultType.getElementType();
    Value r;
    if constexpr (std::is_same_v<OpTy, SumOp>) {
      r = sumOver(rewriter, loc, x, dims, keepdim, resultType, from);
    } else if constexpr (std::is_same_v<OpTy, ProdOp>) {
      r = reduce(rewriter, loc, x, dims, keepdim, resultType, from, Identity::One,
                 [to](OpBuilder &b, Location l, Value acc, Value v) -> Value {
                   if (to.isFloat())
                     return b.create<arith::MulFOp>(l, acc, v);
                   if (to.isBool())
                     return b.create<arith::AndIOp>(l, acc, v);
                   return b.create<arith::MulIOp>(l, acc, v);
                 });
    } else if constexpr (std::is_same_v<OpTy, MaxOp>) {
      r = maxOver(rewriter, loc, x, dims, keepdim, resultType, from, true);
    } else if constexpr (std::is_same_v<OpTy, MinOp>) {
      r = maxOver(rewriter, loc, x, dims, keepdim, resultType, from, false);
    } else if constexpr (std::is_same_v<OpTy, AnyOp>) {
      r = reduce(rewriter, loc, x, dims, keepdim, resultType, from, Identity::Zero,
                 [](OpBuilder &b, Location l, Value acc, Value v) -> Value {
                   return b.create<arith::OrIOp>(l, acc, v);
                 });
    } else if constexpr (std::is_same_v<OpTy, AllOp>) {
      r = reduce(rewriter, loc, x, dims, keepdim, resultType, from, Identity::One,
                 [](OpBuilder &b, Location l, Value acc, Value v) -> Value {
                   return b.create<arith::AndIOp>(l, acc, v);
                 });
    } else if constexpr (std::is_same_v<OpTy, MeanOp>) {
      r = dropKept(rewriter, loc, meanKept(rewriter, loc, x, dims, element, from), resultType);
    } else { // VarOp, StdOp
      Value mean = meanKept(rewriter, loc, x, dims, element, from);
      Value var = varianceKept(rewriter, loc, x, mean, dims, element, from, op.getCorrection());
      if constexpr (std::is_same_v<OpTy, StdOp>)
        var = elementwiseGeneric(rewriter, loc, typeOf(var), var,
                                 [](OpBuilder &b, Location l, ValueRange a) -> Value {
                                   return b.create<math::SqrtOp>(l, a[0]);
                                 });
      r = dropKept(rewriter, loc, var, resultType);
    }
    rewriter.replaceOp(op, r);
    return success();
  }
};

/// softmax / log_softmax along `dim`, stable.
template <typename OpTy, bool isLog>
struct SoftmaxLowering final : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getInput();
    RankedTensorType t = typeOf(x);
    if (t.getRank() == 0) { // softmax of a scalar is 1 (log: 0)
      ScalarType st = scalarTypeOf(t.getElementType());
      rewriter.replaceOp(op, elementwiseGeneric(rewriter, loc, t, x,
                                                [&](OpBuilder &b, Location l, ValueRange) {
                                                  return scalarConstant(b, l, st, isLog ? 0.0 : 1.0);
                                                }));
      return success();
    }
    int64_t dim = op.getDim();
    ScalarType st = scalarTypeOf(t.getElementType());
    RankedTensorType kept = keptType(t, {dim}, t.getElementType());
    Value m = maxOver(rewriter, loc, x, {dim}, true, kept, st, true);
    Value shifted = elementwiseGeneric(rewriter, loc, t, {x, m},
                                       [](OpBuilder &b, Location l, ValueRange a) -> Value {
                                         return b.create<arith::SubFOp>(l, a[0], a[1]);
                                       });
    Value e = elementwiseGeneric(rewriter, loc, t, shifted,
                                 [](OpBuilder &b, Location l, ValueRange a) -> Value {
                                   return b.create<math::ExpOp>(l, a[0]);
                                 });
    Value s = sumOver(rewriter, loc, e, {dim}, true, kept, st);
    Value r;
    if (isLog)
      r = elementwiseGeneric(rewriter, loc, t, {shifted, s},
                             [](OpBuilder &b, Location l, ValueRange a) -> Value {
                               return b.create<arith::SubFOp>(l, a[0], b.create<math::LogOp>(l, a[1]));
                             });
    else
      r = elementwiseGeneric(rewriter, loc, t, {e, s},
                             [](OpBuilder &b, Location l, ValueRange a) -> Value {
                               return b.create<arith::DivFOp>(l, a[0], a[1]);
                             });
    rewriter.replaceOp(op, r);
    return success();
  }
};

/// The normalisation shared by layer, batch and group norm, on scalars
/// a = [x, mean, var, (weight), (bias)]: (x - mean) / sqrt(var + eps), then
/// * weight and + bias where present.
Value normalize(OpBuilder &b, Location l, ValueRange a, ScalarType st, double eps, bool weight,
                bool bias) {
  Value inv = b.create<arith::DivFOp>(
      l, scalarConstant(b, l, st, 1.0),
      b.create<math::SqrtOp>(l, b.create<arith::AddFOp>(l, a[2], scalarConstant(b, l, st, eps))));
  Value y = b.create<arith::MulFOp>(l, b.create<arith::SubFOp>(l, a[0], a[1]), inv);
  size_t next = 3;
  if (weight)
    y = b.create<arith::MulFOp>(l, y, a[next++]);
  if (bias)
    y = b.create<arith::AddFOp>(l, y, a[next]);
  return y;
}

struct LayerNormLowering final : OpConversionPattern<LayerNormOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(LayerNormOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getInput();
    RankedTensorType t = typeOf(x);
    int64_t count = static_cast<int64_t>(op.getNormalizedShape().size());
    SmallVector<int64_t> dims;
    for (int64_t d = t.getRank() - count; d < t.getRank(); ++d)
      dims.push_back(d);
    ScalarType st = scalarTypeOf(t.getElementType());
    Value mean = meanKept(rewriter, loc, x, dims, t.getElementType(), st);
    Value var = varianceKept(rewriter, loc, x, mean, dims, t.getElementType(), st, 0);
    double eps = op.getEps().convertToDouble();
    SmallVector<Value> operands = {x, mean, var};
    Value w = adaptor.getWeight(), bias = adaptor.getBias();
    if (w)
      operands.push_back(w);
    if (bias)
      operands.push_back(bias);
    Value r = elementwiseGeneric(
        rewriter, loc, t, operands, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          return normalize(b, l, a, st, eps, static_cast<bool>(w), static_cast<bool>(bias));
        });
    rewriter.replaceOp(op, r);
    return success();
  }
};

/// Batch norm left after folding (non-constant statistics): per channel
/// (dim 1) parameters.
struct BatchNormLowering final : OpConversionPattern<BatchNormOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(BatchNormOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    Value x = adaptor.getInput();
    RankedTensorType t = typeOf(x);
    if (!t.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic batch_norm");
    int64_t rank = t.getRank();
    SmallVector<Value> operands = {x, adaptor.getMean(), adaptor.getVar()};
    Value w = adaptor.getWeight(), bias = adaptor.getBias();
    if (w)
      operands.push_back(w);
    if (bias)
      operands.push_back(bias);
    AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, ctx);
    AffineMap channel = AffineMap::get(rank, 0, {getAffineDimExpr(1, ctx)}, ctx);
    SmallVector<AffineMap> maps = {identity};
    for (size_t i = 1; i < operands.size(); ++i)
      maps.push_back(channel);
    maps.push_back(identity);
    ScalarType st = scalarTypeOf(t.getElementType());
    double eps = op.getEps().convertToDouble();
    auto generic = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{t}, operands, ValueRange{emptyTensor(rewriter, loc, t, {})}, maps,
        parallelIterators(rank), [&](OpBuilder &b, Location l, ValueRange a) {
          b.create<linalg::YieldOp>(
              l, normalize(b, l, a, st, eps, static_cast<bool>(w), static_cast<bool>(bias)));
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

/// argmax / argmin: one generic with two results, the best value so far and
/// its index; a later element wins only when strictly better (or NaN over a
/// number), so the first extreme is kept.
template <typename OpTy, bool isMax>
struct ArgReduceLowering final : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    Value x = adaptor.getInput();
    RankedTensorType t = typeOf(x);
    auto resultType = convertTensorType(llvm::cast<RankedTensorType>(op.getType()));
    if (!t.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic argmax/argmin");
    // Without a dim the input is flattened; so is a 0-d input (its dim 0
    // or -1 names the tensor itself).
    int64_t dim;
    if (op.getDim() && t.getRank() > 0) {
      dim = *op.getDim();
      if (dim < 0)
        dim += t.getRank();
    } else {
      auto flat = RankedTensorType::get({t.getNumElements()}, t.getElementType());
      SmallVector<ReassociationIndices> all(1);
      for (int64_t d = 0; d < t.getRank(); ++d)
        all.front().push_back(d);
      x = t.getRank() == 0 ? rewriter.create<tensor::ExpandShapeOp>(loc, flat, x,
                                                                    ArrayRef<ReassociationIndices>{})
                                 .getResult()
                           : rewriter.create<tensor::CollapseShapeOp>(loc, flat, x, all).getResult();
      t = flat;
      dim = 0;
    }
    int64_t rank = t.getRank();
    ScalarType st = scalarTypeOf(op.getInput());
    RankedTensorType kept = keptType(t, {dim}, t.getElementType());
    RankedTensorType keptIndex = keptType(t, {dim}, rewriter.getI64Type());
    Value worst = extremeConstant(rewriter, loc, st, /*highest=*/!isMax);
    Value best = rewriter.create<linalg::FillOp>(loc, worst,
                                                 emptyTensor(rewriter, loc, kept, {}))
                     .getResult(0);
    Value bestIndex =
        rewriter.create<linalg::FillOp>(loc, rewriter.create<arith::ConstantOp>(loc, rewriter.getI64IntegerAttr(0)).getResult(),
                                        emptyTensor(rewriter, loc, keptIndex, {}))
            .getResult(0);
    SmallVector<AffineExpr> outExprs;
    SmallVector<utils::IteratorType> iterators;
    for (int64_t d = 0; d < rank; ++d) {
      outExprs.push_back(d == dim ? getAffineConstantExpr(0, ctx) : getAffineDimExpr(d, ctx));
      iterators.push_back(d == dim ? utils::IteratorType::reduction : utils::IteratorType::parallel);
    }
    AffineMap outMap = AffineMap::get(rank, 0, outExprs, ctx);
    auto generic = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{kept, keptIndex}, ValueRange{x}, ValueRange{best, bestIndex},
        SmallVector<AffineMap>{AffineMap::getMultiDimIdentityMap(rank, ctx), outMap, outMap},
        iterators, [&](OpBuilder &b, Location l, ValueRange a) {
          Value v = a[0], acc = a[1];
          Value better;
          if (st.isFloat()) {
            better = b.create<arith::CmpFOp>(l, isMax ? arith::CmpFPredicate::OGT
                                                      : arith::CmpFPredicate::OLT, v, acc);
            Value vNaN = b.create<arith::CmpFOp>(l, arith::CmpFPredicate::UNO, v, v);
            Value accNaN = b.create<arith::CmpFOp>(l, arith::CmpFPredicate::UNO, acc, acc);
            Value accNumber = b.create<arith::XOrIOp>(
                l, accNaN, b.create<arith::ConstantOp>(l, b.getBoolAttr(true)));
            better = b.create<arith::OrIOp>(l, better, b.create<arith::AndIOp>(l, vNaN, accNumber));
          } else {
            bool u = st.isUnsigned || st.isBool();
            better = b.create<arith::CmpIOp>(
                l, isMax ? (u ? arith::CmpIPredicate::ugt : arith::CmpIPredicate::sgt)
                         : (u ? arith::CmpIPredicate::ult : arith::CmpIPredicate::slt),
                v, acc);
          }
          Value i = b.create<arith::IndexCastOp>(l, b.getI64Type(),
                                                 b.create<linalg::IndexOp>(l, dim));
          // The first element always replaces the fill (which may tie it).
          Value first = b.create<arith::CmpIOp>(
              l, arith::CmpIPredicate::eq, i, b.create<arith::ConstantOp>(l, b.getI64IntegerAttr(0)));
          better = b.create<arith::OrIOp>(l, better, first);
          b.create<linalg::YieldOp>(l, ValueRange{b.create<arith::SelectOp>(l, better, v, acc),
                                                 b.create<arith::SelectOp>(l, better, i, a[2])});
        });
    Value r = generic.getResult(1);
    // keepdim without dim keeps every dimension as size 1; otherwise drop.
    if (resultType != typeOf(r)) {
      if (resultType.getNumElements() != typeOf(r).getNumElements())
        return rewriter.notifyMatchFailure(op, "unexpected result shape");
      if (resultType.getRank() < typeOf(r).getRank())
        r = dropKept(rewriter, loc, r, resultType);
      else {
        SmallVector<ReassociationIndices> groups;
        if (typeOf(r).getRank() == 1) {
          groups.emplace_back();
          for (int64_t d = 0; d < resultType.getRank(); ++d)
            groups.back().push_back(d);
        }
        r = rewriter.create<tensor::ExpandShapeOp>(loc, resultType, r, groups);
      }
    }
    rewriter.replaceOp(op, r);
    return success();
  }
};

/// group_norm: [N, C, ...] viewed as [N, G, C/G, S]; statistics over the
/// last two dims, then the per-channel affine transform.
struct GroupNormLowering final : OpConversionPattern<GroupNormOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(GroupNormOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getInput();
    RankedTensorType t = typeOf(x);
    if (!t.hasStaticShape() || t.getRank() < 2)
      return rewriter.notifyMatchFailure(op, "dynamic group_norm");
    int64_t n = t.getDimSize(0), c = t.getDimSize(1), g = op.getNumGroups();
    int64_t s = 1;
    for (int64_t d = 2; d < t.getRank(); ++d)
      s *= t.getDimSize(d);
    if (g <= 0 || c % g)
      return rewriter.notifyMatchFailure(op, "groups do not divide the channels");
    Type element = t.getElementType();
    ScalarType st = scalarTypeOf(element);
    // [N, C, ...] -> [N*C*S] -> [N, G, C/G, S].
    SmallVector<ReassociationIndices> all(1);
    for (int64_t d = 0; d < t.getRank(); ++d)
      all.front().push_back(d);
    auto flatType = RankedTensorType::get({t.getNumElements()}, element);
    auto grouped = RankedTensorType::get({n, g, c / g, s}, element);
    Value flat = rewriter.create<tensor::CollapseShapeOp>(loc, flatType, x, all);
    Value xg = rewriter.create<tensor::ExpandShapeOp>(loc, grouped, flat,
                                                      ArrayRef<ReassociationIndices>{{0, 1, 2, 3}});
    Value mean = meanKept(rewriter, loc, xg, {2, 3}, element, st);
    Value var = varianceKept(rewriter, loc, xg, mean, {2, 3}, element, st, 0);
    // Weight and bias [C] as [G, C/G, 1]: they broadcast over N and S.
    auto channels = [&](Value v) -> Value {
      auto type = RankedTensorType::get({g, c / g, 1}, element);
      return rewriter.create<tensor::ExpandShapeOp>(loc, type, v,
                                                    ArrayRef<ReassociationIndices>{{0, 1, 2}});
    };
    SmallVector<Value> operands = {xg, mean, var};
    Value w = adaptor.getWeight(), bias = adaptor.getBias();
    if (w)
      operands.push_back(channels(w));
    if (bias)
      operands.push_back(channels(bias));
    double eps = op.getEps().convertToDouble();
    Value y = elementwiseGeneric(
        rewriter, loc, grouped, operands, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          return normalize(b, l, a, st, eps, static_cast<bool>(w), static_cast<bool>(bias));
        });
    Value back = rewriter.create<tensor::CollapseShapeOp>(loc, flatType, y,
                                                          ArrayRef<ReassociationIndices>{{0, 1, 2, 3}});
    Value r = t.getRank() == 1 ? back
                               : rewriter.create<tensor::ExpandShapeOp>(loc, t, back, all).getResult();
    rewriter.replaceOp(op, r);
    return success();
  }
};

} // namespace

/// Running reductions: an scf.for along `dim` carrying the result and the
/// running value (a slice of the input's shape with `dim` of size 1, plus
/// the running index for cumulative_index); each step combines the next
/// input slice element-wise and inserts the running value at its position.
template <typename OpTy, bool withIndex>
struct CumulativeLowering final : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getInput();
    RankedTensorType t = typeOf(x);
    auto resultType = convertTensorType(llvm::cast<RankedTensorType>(op.getType()));
    if (!t.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic cumulative op");
    ScalarType st = scalarTypeOf(op.getInput());
    ScanKind kind = op.getKind();
    int64_t rank = t.getRank();
    if (rank == 0 || t.getNumElements() == 0) { // itself (index 0), or empty
      Value r = withIndex ? rewriter.create<linalg::FillOp>(loc, rewriter.create<arith::ConstantOp>(loc, rewriter.getI64IntegerAttr(0)).getResult(),
                                                            emptyTensor(rewriter, loc, resultType, {}))
                                .getResult(0)
                          : x;
      rewriter.replaceOp(op, r);
      return success();
    }
    int64_t dim = op.getDim() < 0 ? op.getDim() + rank : op.getDim();
    int64_t len = t.getDimSize(dim);
    RankedTensorType sliceType = keptType(t, {dim}, t.getElementType());
    RankedTensorType indexSliceType = keptType(t, {dim}, rewriter.getI64Type());
    SmallVector<OpFoldResult> sizes, strides;
    for (int64_t d = 0; d < rank; ++d) {
      sizes.push_back(rewriter.getIndexAttr(d == dim ? 1 : t.getDimSize(d)));
      strides.push_back(rewriter.getIndexAttr(1));
    }
    auto offsetsAt = [&](Value iv) {
      SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0));
      offsets[dim] = iv;
      return offsets;
    };
    auto sliceAt = [&](OpBuilder &b, Location l, Value src, RankedTensorType type, Value iv) {
      return b.create<tensor::ExtractSliceOp>(l, type, src, offsetsAt(iv), sizes, strides).getResult();
    };
    auto c = [&](int64_t v) { return rewriter.create<arith::ConstantIndexOp>(loc, v).getResult(); };
    Value first = sliceAt(rewriter, loc, x, sliceType, c(0));
    Value out = emptyTensor(rewriter, loc, resultType, {});
    Value firstOut = withIndex ? rewriter.create<linalg::FillOp>(loc, rewriter.create<arith::ConstantOp>(loc, rewriter.getI64IntegerAttr(0)).getResult(),
                                                                 emptyTensor(rewriter, loc, indexSliceType, {}))
                                     .getResult(0)
                               : first;
    out = rewriter.create<tensor::InsertSliceOp>(loc, firstOut, out, offsetsAt(c(0)), sizes, strides);
    SmallVector<Value> init{out, first};
    if (withIndex)
      init.push_back(firstOut);
    auto loop = rewriter.create<scf::ForOp>(
        loc, c(1), c(len), c(1), init, [&](OpBuilder &b, Location l, Value iv, ValueRange args) {
          // The running values are updated in place (the generic's outputs
          // are the loop's carried tensors), as bufferization needs.
          Value next = sliceAt(b, l, x, sliceType, iv);
          SmallVector<Type> types{sliceType};
          SmallVector<Value> inits{args[1]};
          if (withIndex) {
            types.push_back(indexSliceType);
            inits.push_back(args[2]);
          }
          Value k = b.create<arith::IndexCastOp>(l, b.getI64Type(), iv);
          int64_t srank = sliceType.getRank();
          SmallVector<AffineMap> maps(1 + types.size(), AffineMap::getMultiDimIdentityMap(srank, b.getContext()));
          auto g = b.create<linalg::GenericOp>(
              l, types, ValueRange{next}, inits, maps, parallelIterators(srank),
              [&](OpBuilder &nb, Location nl, ValueRange blockArgs) {
                // [next, acc, (index)]: as [acc, next, (index)] below.
                SmallVector<Value> a{blockArgs[1], blockArgs[0]};
                if (withIndex)
                  a.push_back(blockArgs[2]);
                Value acc = a[0], v = a[1];
                SmallVector<Value> yields;
                if (kind == ScanKind::Max || kind == ScanKind::Min) {
                  bool isMax = kind == ScanKind::Max;
                  Value better;
                  if (st.isFloat()) {
                    // NaN wins and stays; ties move to the later index.
                    Value ge = nb.create<arith::CmpFOp>(nl, isMax ? arith::CmpFPredicate::OGE : arith::CmpFPredicate::OLE, v, acc);
                    Value vNaN = nb.create<arith::CmpFOp>(nl, arith::CmpFPredicate::UNO, v, v);
                    better = nb.create<arith::OrIOp>(nl, ge, vNaN);
                  } else {
                    bool u = st.isUnsigned || st.isBool();
                    better = nb.create<arith::CmpIOp>(
                        nl, isMax ? (u ? arith::CmpIPredicate::uge : arith::CmpIPredicate::sge)
                                  : (u ? arith::CmpIPredicate::ule : arith::CmpIPredicate::sle),
                        v, acc);
                  }
                  yields.push_back(nb.create<arith::SelectOp>(nl, better, v, acc));
                  if (withIndex)
                    yields.push_back(nb.create<arith::SelectOp>(nl, better, k, a[2]));
                } else if (kind == ScanKind::Sum) {
                  yields.push_back(st.isFloat() ? nb.create<arith::AddFOp>(nl, acc, v).getResult()
                                                : nb.create<arith::AddIOp>(nl, acc, v).getResult());
                } else if (kind == ScanKind::Prod) {
                  yields.push_back(st.isFloat() ? nb.create<arith::MulFOp>(nl, acc, v).getResult()
                                                : nb.create<arith::MulIOp>(nl, acc, v).getResult());
                } else { // logsumexp: max + log1p(exp(-|acc - v|)); equal infinities stay
                  Value m = nb.create<arith::MaximumFOp>(nl, acc, v);
                  Value d = nb.create<math::AbsFOp>(nl, nb.create<arith::SubFOp>(nl, acc, v));
                  Value r = nb.create<arith::AddFOp>(
                      nl, m, nb.create<math::Log1pOp>(nl, nb.create<math::ExpOp>(nl, nb.create<arith::NegFOp>(nl, d))));
                  Value inf = extremeConstant(nb, nl, st, /*highest=*/true);
                  Value isInf = nb.create<arith::CmpFOp>(nl, arith::CmpFPredicate::OEQ,
                                                         nb.create<math::AbsFOp>(nl, m), inf);
                  Value same = nb.create<arith::CmpFOp>(nl, arith::CmpFPredicate::OEQ, acc, v);
                  yields.push_back(nb.create<arith::SelectOp>(nl, nb.create<arith::AndIOp>(nl, isInf, same), acc, r));
                }
                nb.create<linalg::YieldOp>(nl, yields);
              });
          Value acc = g.getResult(0);
          Value written = withIndex ? g.getResult(1) : acc;
          Value o = b.create<tensor::InsertSliceOp>(l, written, args[0], offsetsAt(iv), sizes, strides);
          SmallVector<Value> results{o, acc};
          if (withIndex)
            results.push_back(g.getResult(1));
          b.create<scf::YieldOp>(l, results);
        });
    rewriter.replaceOp(op, loop.getResult(0));
    return success();
  }
};

void populateReductionLowering(const TypeConverter &tc, RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<CumulativeLowering<CumulativeOp, false>, CumulativeLowering<CumulativeIndexOp, true>>(tc, ctx);
  patterns.add<ReduceLowering<SumOp>, ReduceLowering<ProdOp>, ReduceLowering<MeanOp>,
               ReduceLowering<MaxOp>, ReduceLowering<MinOp>, ReduceLowering<AnyOp>,
               ReduceLowering<AllOp>, ReduceLowering<VarOp>, ReduceLowering<StdOp>,
               SoftmaxLowering<SoftmaxOp, false>, SoftmaxLowering<LogSoftmaxOp, true>,
               LayerNormLowering, BatchNormLowering, GroupNormLowering,
               ArgReduceLowering<ArgmaxOp, true>, ArgReduceLowering<ArgminOp, false>>(tc, ctx);
}

} // namespace mlir::cuvil::lowering
