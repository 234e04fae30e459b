//===- ExpandExp.cpp - f32 exp as vectorizable arithmetic -----------------===//
//
// math.exp lowers to a call of libm's expf, one element at a time: LLVM
// cannot widen the call (no vector math library is assumed), so a
// softmax's exponentials dominated its time. This is expf as arithmetic,
// which the loop vectorizer widens:
//
//   x  = clamp(x, -104, 89)            (exp(-104) rounds to 0, exp(89) to inf)
//   n  = roundeven(x * log2(e))
//   r  = x - n * C1 - n * C2           (Cody-Waite: C1 + C2 = ln 2, two FMAs)
//   e  = 1 + r + r^2 * P(r)            (Cephes' expf polynomial)
//   y  = e * 2^h * 2^(n - h), h = n / 2   (each factor exact; one rounding)
//
// and NaN in, NaN out. Cephes gives P and C1, C2; its expf is within about
// 1 ulp, and the tests hold this one to 2 ulp of libm's.
//
//===----------------------------------------------------------------------===//
#include "targets/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_EXPANDEXPPASS
#include "targets/CPU/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {

struct ExpandExp : OpRewritePattern<math::ExpOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(math::ExpOp op, PatternRewriter &b) const override {
    Type type = op.getType();
    auto vector = llvm::dyn_cast<VectorType>(type);
    if (!getElementTypeOrSelf(type).isF32())
      return failure();
    Location l = op.getLoc();
    Type i32 = b.getI32Type();
    Type intType = vector ? Type(VectorType::get(vector.getShape(), i32)) : i32;
    auto f = [&](double v) -> Value {
      TypedAttr a = b.getF32FloatAttr(static_cast<float>(v));
      return b.create<arith::ConstantOp>(l, vector ? TypedAttr(SplatElementsAttr::get(vector, a)) : a);
    };
    auto i = [&](int32_t v) -> Value {
      TypedAttr a = b.getI32IntegerAttr(v);
      return b.create<arith::ConstantOp>(
          l, vector ? TypedAttr(SplatElementsAttr::get(llvm::cast<VectorType>(intType), a)) : a);
    };
    auto fma = [&](Value a, Value x, Value c) { return b.create<math::FmaOp>(l, a, x, c).getResult(); };
    auto mul = [&](Value a, Value c) { return b.create<arith::MulFOp>(l, a, c).getResult(); };
    auto add = [&](Value a, Value c) { return b.create<arith::AddFOp>(l, a, c).getResult(); };

    Value x = op.getOperand();
    Value clamped = b.create<arith::MinNumFOp>(l, b.create<arith::MaxNumFOp>(l, x, f(-104.0)), f(89.0));
    Value n = b.create<math::RoundEvenOp>(l, mul(clamped, f(1.44269504088896341)));
    Value negN = b.create<arith::NegFOp>(l, n);
    Value r = fma(negN, f(0.693359375), clamped);
    r = fma(negN, f(-2.12194440e-4), r);
    Value p = f(1.9875691500E-4);
    for (double c : {1.3981999507E-3, 8.3334519073E-3, 4.1665795894E-2, 1.6666665459E-1, 5.0000001201E-1})
      p = fma(p, r, f(c));
    Value e = add(fma(p, mul(r, r), r), f(1.0));
    // 2^k for k in [-75, 64] (n is in [-150, 128]): (k + 127) << 23.
    Value k = b.create<arith::FPToSIOp>(l, intType, n);
    Value half = b.create<arith::ShRSIOp>(l, k, i(1));
    auto power = [&](Value k) -> Value {
      Value bits = b.create<arith::ShLIOp>(l, b.create<arith::AddIOp>(l, k, i(127)), i(23));
      return b.create<arith::BitcastOp>(l, type, bits);
    };
    Value y = mul(mul(e, power(half)), power(b.create<arith::SubIOp>(l, k, half)));
    Value isNan = b.create<arith::CmpFOp>(l, arith::CmpFPredicate::UNO, x, x);
    b.replaceOpWithNewOp<arith::SelectOp>(op, isNan, x, y);
    return success();
  }
};

struct ExpandExpPass : mlir::cuvil::impl::ExpandExpPassBase<ExpandExpPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ExpandExp>(&getContext());
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
