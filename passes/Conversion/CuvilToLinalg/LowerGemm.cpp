//===- LowerGemm.cpp - cuvil.gemm.* to linalg contractions ----------------===//
//
// linear is linalg.matmul_transpose_b on the input collapsed to 2-D plus a
// bias generic; batch_matmul is linalg.batch_matmul; addmm is linalg.matmul
// plus the beta/alpha generic; matmul (torch.matmul with its 1-D rules and
// batch broadcasting) is one contraction generic. Accumulation is in the
// result type, from zero.
//
//===----------------------------------------------------------------------===//
#include "passes/Conversion/CuvilToLinalg/Patterns.h"

#include "dialects/Cuvil/IR/CuvilOps.h"
#include "passes/Conversion/CuvilToLinalg/LoweringUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::cuvil::lowering {
namespace {

RankedTensorType typeOf(Value v) { return llvm::cast<RankedTensorType>(v.getType()); }

/// A zero-filled tensor of `type` (static shapes).
Value zeros(OpBuilder &b, Location loc, RankedTensorType type) {
  Value empty = emptyTensor(b, loc, type, {});
  Value zero = scalarConstant(b, loc, scalarTypeOf(type.getElementType()), 0.0);
  return b.create<linalg::FillOp>(loc, zero, empty).getResult(0);
}

Value reshapeTo(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> shape) {
  RankedTensorType t = typeOf(v);
  auto type = RankedTensorType::get(shape, t.getElementType());
  if (type == t)
    return v;
  // Through 1-D, as the shape lowering does.
  Value flat = v;
  if (t.getRank() != 1) {
    auto flatType = RankedTensorType::get({t.getNumElements()}, t.getElementType());
    SmallVector<ReassociationIndices> all(1);
    for (int64_t d = 0; d < t.getRank(); ++d)
      all[0].push_back(d);
    flat = t.getRank() == 0
               ? b.create<tensor::ExpandShapeOp>(loc, flatType, v, ArrayRef<ReassociationIndices>{})
                     .getResult()
               : b.create<tensor::CollapseShapeOp>(loc, flatType, v, all).getResult();
  }
  if (type.getRank() == 1)
    return flat;
  if (type.getRank() == 0)
    return b.create<tensor::CollapseShapeOp>(loc, type, flat, ArrayRef<ReassociationIndices>{});
  SmallVector<ReassociationIndices> all(1);
  for (int64_t d = 0; d < type.getRank(); ++d)
    all[0].push_back(d);
  return b.create<tensor::ExpandShapeOp>(loc, type, flat, all);
}

Value mulAdd(OpBuilder &b, Location loc, Value acc, Value x, Value y) {
  if (llvm::isa<FloatType>(acc.getType()))
    return b.create<arith::AddFOp>(loc, acc, b.create<arith::MulFOp>(loc, x, y));
  if (acc.getType().isInteger(1))
    return b.create<arith::OrIOp>(loc, acc, b.create<arith::AndIOp>(loc, x, y));
  return b.create<arith::AddIOp>(loc, acc, b.create<arith::MulIOp>(loc, x, y));
}

struct LinearLowering final : OpConversionPattern<LinearOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(LinearOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getInput(), w = adaptor.getWeight();
    RankedTensorType xt = typeOf(x), wt = typeOf(w);
    auto resultType = convertTensorType(llvm::cast<RankedTensorType>(op.getType()));
    if (!xt.hasStaticShape() || !wt.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic linear");
    int64_t k = wt.getDimSize(1), n = wt.getDimSize(0);
    int64_t m = k == 0 ? 0 : xt.getNumElements() / k;
    Value x2 = reshapeTo(rewriter, loc, x, {m, k});
    auto mmType = RankedTensorType::get({m, n}, resultType.getElementType());
    Value mm = rewriter
                   .create<linalg::MatmulTransposeBOp>(loc, TypeRange{mmType}, ValueRange{x2, w},
                                                       ValueRange{zeros(rewriter, loc, mmType)})
                   .getResult(0);
    if (Value bias = adaptor.getBias())
      mm = elementwiseGeneric(rewriter, loc, mmType, {mm, bias},
                              [](OpBuilder &b, Location l, ValueRange a) -> Value {
                                return b.create<arith::AddFOp>(l, a[0], a[1]);
                              });
    rewriter.replaceOp(op, reshapeTo(rewriter, loc, mm, resultType.getShape()));
    return success();
  }
};

struct BatchMatmulLowering final : OpConversionPattern<BatchMatmulOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(BatchMatmulOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    auto resultType = convertTensorType(llvm::cast<RankedTensorType>(op.getType()));
    if (!resultType.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic batch_matmul");
    auto mm = rewriter.create<linalg::BatchMatmulOp>(
        op.getLoc(), TypeRange{resultType}, ValueRange{adaptor.getLhs(), adaptor.getRhs()},
        ValueRange{zeros(rewriter, op.getLoc(), resultType)});
    rewriter.replaceOp(op, mm.getResult(0));
    return success();
  }
};

struct AddmmLowering final : OpConversionPattern<AddmmOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(AddmmOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto resultType = convertTensorType(llvm::cast<RankedTensorType>(op.getType()));
    if (!resultType.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic addmm");
    Value mm = rewriter
                   .create<linalg::MatmulOp>(loc, TypeRange{resultType},
                                             ValueRange{adaptor.getMat1(), adaptor.getMat2()},
                                             ValueRange{zeros(rewriter, loc, resultType)})
                   .getResult(0);
    double alpha = op.getAlpha().convertToDouble(), beta = op.getBeta().convertToDouble();
    ScalarType st = scalarTypeOf(resultType.getElementType());
    ScalarType inT = scalarTypeOf(op.getInput());
    Value r = elementwiseGeneric(
        rewriter, loc, resultType, {mm, adaptor.getInput()},
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          // Integer products take alpha and beta as integers (truncated),
          // as PyTorch converts the scalars to the tensors' type.
          auto mul = [&](Value x, double k) -> Value {
            Value c = scalarConstant(b, l, st, k);
            return st.isFloat() ? b.create<arith::MulFOp>(l, x, c).getResult()
                                : b.create<arith::MulIOp>(l, x, c).getResult();
          };
          Value prod = a[0];
          if (alpha != 1.0)
            prod = mul(prod, alpha);
          if (beta == 0.0) // the input is ignored, NaN included
            return prod;
          Value in = convertScalar(b, l, a[1], inT, st);
          if (beta != 1.0)
            in = mul(in, beta);
          return st.isFloat() ? b.create<arith::AddFOp>(l, in, prod).getResult()
                              : b.create<arith::AddIOp>(l, in, prod).getResult();
        });
    rewriter.replaceOp(op, r);
    return success();
  }
};

/// torch.matmul as one contraction over (batch..., m, n, k).
struct MatmulLowering final : OpConversionPattern<MatmulOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(MatmulOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    Value a = adaptor.getLhs(), b = adaptor.getRhs();
    RankedTensorType at = typeOf(a), bt = typeOf(b);
    auto resultType = convertTensorType(llvm::cast<RankedTensorType>(op.getType()));
    if (!at.hasStaticShape() || !bt.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic matmul");
    // 1-D operands: [k] -> [1, k] on the left, [k, 1] on the right.
    if (at.getRank() == 1)
      a = reshapeTo(rewriter, loc, a, {1, at.getDimSize(0)});
    if (bt.getRank() == 1)
      b = reshapeTo(rewriter, loc, b, {bt.getDimSize(0), 1});
    at = typeOf(a);
    bt = typeOf(b);
    int64_t m = at.getDimSize(at.getRank() - 2);
    int64_t n = bt.getDimSize(bt.getRank() - 1);
    // Broadcast batch dimensions.
    int64_t batchA = at.getRank() - 2, batchB = bt.getRank() - 2;
    int64_t batch = std::max(batchA, batchB);
    SmallVector<int64_t> batchShape(batch, 1);
    for (int64_t i = 0; i < batch; ++i) {
      int64_t da = i - (batch - batchA), db = i - (batch - batchB);
      int64_t sa = da >= 0 ? at.getDimSize(da) : 1, sb = db >= 0 ? bt.getDimSize(db) : 1;
      batchShape[i] = std::max(sa, sb);
    }
    int64_t loops = batch + 3; // batch..., m, n, k
    auto dim = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
    auto operandMap = [&](RankedTensorType t, int64_t operandBatch, AffineExpr r0, AffineExpr r1) {
      SmallVector<AffineExpr> exprs;
      for (int64_t i = 0; i < operandBatch; ++i) {
        int64_t loop = i + (batch - operandBatch);
        exprs.push_back(t.getDimSize(i) == 1 && batchShape[loop] != 1
                            ? getAffineConstantExpr(0, ctx)
                            : dim(loop));
      }
      exprs.push_back(r0);
      exprs.push_back(r1);
      return AffineMap::get(loops, 0, exprs, ctx);
    };
    SmallVector<int64_t> outShape(batchShape);
    outShape.push_back(m);
    outShape.push_back(n);
    SmallVector<AffineExpr> outExprs;
    for (int64_t i = 0; i < batch + 2; ++i)
      outExprs.push_back(dim(i));
    SmallVector<AffineMap> maps = {operandMap(at, batchA, dim(batch), dim(batch + 2)),
                                   operandMap(bt, batchB, dim(batch + 2), dim(batch + 1)),
                                   AffineMap::get(loops, 0, outExprs, ctx)};
    SmallVector<utils::IteratorType> iterators(loops, utils::IteratorType::parallel);
    iterators.back() = utils::IteratorType::reduction;
    auto outType = RankedTensorType::get(outShape, resultType.getElementType());
    ScalarType st = scalarTypeOf(resultType.getElementType());
    ScalarType as = scalarTypeOf(op.getLhs()), bs = scalarTypeOf(op.getRhs());
    auto generic = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{outType}, ValueRange{a, b}, ValueRange{zeros(rewriter, loc, outType)},
        maps, iterators, [&](OpBuilder &nb, Location nl, ValueRange args) {
          Value x = convertScalar(nb, nl, args[0], as, st);
          Value y = convertScalar(nb, nl, args[1], bs, st);
          nb.create<linalg::YieldOp>(nl, mulAdd(nb, nl, args[2], x, y));
        });
    rewriter.replaceOp(op, reshapeTo(rewriter, loc, generic.getResult(0), resultType.getShape()));
    return success();
  }
};

} // namespace

void populateGemmLowering(const TypeConverter &tc, RewritePatternSet &patterns) {
  patterns.add<LinearLowering, BatchMatmulLowering, AddmmLowering, MatmulLowering>(
      tc, patterns.getContext());
}

} // namespace mlir::cuvil::lowering
