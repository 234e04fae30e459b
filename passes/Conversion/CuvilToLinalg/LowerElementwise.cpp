//===- LowerElementwise.cpp - cuvil.act/math/logic/cast to linalg.generic -===//
//
// One linalg.generic per op. Operands are converted to the computation type
// first (the result type for arithmetic, the promoted operand type for
// comparisons, bool for logical ops), as the reference evaluator does; the
// scalar formulas are the evaluator's, including NaN propagation of relu,
// clamp, maximum and minimum, Python's floor division and remainder, and
// PyTorch's integer power.
//
//===----------------------------------------------------------------------===//
#include "passes/Conversion/CuvilToLinalg/Patterns.h"

#include "dialects/Cuvil/IR/CuvilOps.h"
#include "passes/Conversion/CuvilToLinalg/LoweringUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>

namespace mlir::cuvil::lowering {
namespace {

/// What the scalar function sees: operands converted to `compute`.
struct ScalarCtx {
  ScalarType compute;
  ScalarType result;
  Operation *op;
};
using ScalarFn = std::function<Value(OpBuilder &, Location, ValueRange, const ScalarCtx &)>;

enum class ComputeIn { Result, PromotedOperands, Bool };

// Small builders -------------------------------------------------------------

Value cst(OpBuilder &b, Location loc, const ScalarCtx &c, double v) {
  return scalarConstant(b, loc, c.compute, v);
}
Value fadd(OpBuilder &b, Location l, Value x, Value y) { return b.create<arith::AddFOp>(l, x, y); }
Value fsub(OpBuilder &b, Location l, Value x, Value y) { return b.create<arith::SubFOp>(l, x, y); }
Value fmul(OpBuilder &b, Location l, Value x, Value y) { return b.create<arith::MulFOp>(l, x, y); }
Value fdiv(OpBuilder &b, Location l, Value x, Value y) { return b.create<arith::DivFOp>(l, x, y); }
Value select(OpBuilder &b, Location l, Value c, Value x, Value y) {
  return b.create<arith::SelectOp>(l, c, x, y);
}
Value fcmp(OpBuilder &b, Location l, arith::CmpFPredicate p, Value x, Value y) {
  return b.create<arith::CmpFOp>(l, p, x, y);
}
Value icmp(OpBuilder &b, Location l, arith::CmpIPredicate p, Value x, Value y) {
  return b.create<arith::CmpIOp>(l, p, x, y);
}
arith::CmpIPredicate signedOr(bool isUnsigned, arith::CmpIPredicate s, arith::CmpIPredicate u) {
  return isUnsigned ? u : s;
}
Value sigmoid(OpBuilder &b, Location l, Value x, const ScalarCtx &c) {
  Value one = cst(b, l, c, 1.0);
  return fdiv(b, l, one, fadd(b, l, one, b.create<math::ExpOp>(l, b.create<arith::NegFOp>(l, x))));
}
/// min(max(x, lo), hi) keeping NaN (maximumf/minimumf propagate it).
Value clampFloat(OpBuilder &b, Location l, Value x, std::optional<double> lo,
                 std::optional<double> hi, const ScalarCtx &c) {
  if (lo)
    x = b.create<arith::MaximumFOp>(l, x, cst(b, l, c, *lo));
  if (hi)
    x = b.create<arith::MinimumFOp>(l, x, cst(b, l, c, *hi));
  return x;
}
Value clampInt(OpBuilder &b, Location l, Value x, std::optional<double> lo,
               std::optional<double> hi, const ScalarCtx &c) {
  if (lo)
    x = c.compute.isUnsigned ? b.create<arith::MaxUIOp>(l, x, cst(b, l, c, int64_t(*lo))).getResult()
                             : b.create<arith::MaxSIOp>(l, x, cst(b, l, c, int64_t(*lo))).getResult();
  if (hi)
    x = c.compute.isUnsigned ? b.create<arith::MinUIOp>(l, x, cst(b, l, c, int64_t(*hi))).getResult()
                             : b.create<arith::MinSIOp>(l, x, cst(b, l, c, int64_t(*hi))).getResult();
  return x;
}
Value relu6(OpBuilder &b, Location l, Value x, const ScalarCtx &c) {
  return clampFloat(b, l, x, 0.0, 6.0, c);
}

/// `fn` on f32 or f64 scalars: f16 and bf16 go through f32 and back (libm
/// and MathToLibm know only the two).
Value viaF32(OpBuilder &b, Location l, ValueRange xs,
             function_ref<Value(OpBuilder &, Location, ValueRange)> fn) {
  Type t = xs[0].getType();
  if (t.isF32() || t.isF64())
    return fn(b, l, xs);
  SmallVector<Value> wide;
  for (Value x : xs)
    wide.push_back(b.create<arith::ExtFOp>(l, b.getF32Type(), x));
  return b.create<arith::TruncFOp>(l, t, fn(b, l, wide));
}

/// A call of the C library's `name` (`namef` for f32), declared in the
/// module of `op` (the op being lowered) on first use: for the functions
/// the math dialect lacks.
Value libmCall(OpBuilder &b, Location l, Operation *op, StringRef name, ValueRange xs) {
  return viaF32(b, l, xs, [name, op](OpBuilder &b, Location l, ValueRange args) -> Value {
    Type t = args[0].getType();
    std::string symbol = (name + (t.isF32() ? "f" : "")).str();
    auto module = op->getParentOfType<ModuleOp>();
    if (!module.lookupSymbol(symbol)) {
      OpBuilder top(module.getBodyRegion());
      SmallVector<Type> types(args.size(), t);
      auto decl = top.create<func::FuncOp>(l, symbol, top.getFunctionType(types, {t}));
      decl.setPrivate();
    }
    return b.create<func::CallOp>(l, symbol, TypeRange{t}, args).getResult(0);
  });
}

/// cuvil_special_<name> (runtime/cpu/special.h): double in, double out,
/// whatever the element type.
Value specialCall(OpBuilder &b, Location l, Operation *op, StringRef name, ValueRange xs) {
  Type t = xs[0].getType(), f64 = b.getF64Type();
  SmallVector<Value> wide;
  for (Value x : xs)
    wide.push_back(t.isF64() ? x : b.create<arith::ExtFOp>(l, f64, x).getResult());
  std::string symbol = ("cuvil_special_" + name).str();
  auto module = op->getParentOfType<ModuleOp>();
  if (!module.lookupSymbol(symbol)) {
    OpBuilder top(module.getBodyRegion());
    SmallVector<Type> types(xs.size(), f64);
    top.create<func::FuncOp>(l, symbol, top.getFunctionType(types, {f64})).setPrivate();
  }
  Value r = b.create<func::CallOp>(l, symbol, TypeRange{f64}, wide).getResult(0);
  return t.isF64() ? r : b.create<arith::TruncFOp>(l, t, r).getResult();
}

/// A math-dialect op on f32/f64 (see viaF32).
template <typename MathOp> Value mathOp(OpBuilder &b, Location l, ValueRange xs) {
  return viaF32(b, l, xs, [](OpBuilder &b, Location l, ValueRange a) -> Value {
    return b.create<MathOp>(l, a);
  });
}

// The pattern ----------------------------------------------------------------

/// Lowers one element-wise op with `fn`.
template <typename OpTy>
struct ElementwiseLowering final : OpConversionPattern<OpTy> {
  ElementwiseLowering(const TypeConverter &tc, MLIRContext *ctx, ComputeIn mode, ScalarFn fn)
      : OpConversionPattern<OpTy>(tc, ctx), mode(mode), fn(std::move(fn)) {}

  LogicalResult matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Operation *raw = op.getOperation();
    auto resultType = llvm::cast<RankedTensorType>(raw->getResult(0).getType());
    ScalarCtx c;
    c.op = raw;
    c.result = scalarTypeOf(resultType.getElementType());
    switch (mode) {
    case ComputeIn::Result: c.compute = c.result; break;
    case ComputeIn::Bool: c.compute = scalarTypeOf(IntegerType::get(op.getContext(), 1)); break;
    case ComputeIn::PromotedOperands: {
      SmallVector<Type> types(raw->getOperandTypes());
      c.compute = scalarTypeOf(resultElementType(types));
      break;
    }
    }
    SmallVector<ScalarType> from;
    for (Value v : raw->getOperands())
      from.push_back(scalarTypeOf(v));
    Value r = elementwiseGeneric(
        rewriter, op.getLoc(), convertTensorType(resultType), adaptor.getOperands(),
        [&](OpBuilder &b, Location loc, ValueRange args) {
          SmallVector<Value> converted;
          for (auto [i, a] : llvm::enumerate(args))
            converted.push_back(convertScalar(b, loc, a, from[i], c.compute));
          // Arithmetic computes in the result type; comparisons and logical
          // ops produce i1, the result type.
          return fn(b, loc, converted, c);
        });
    rewriter.replaceOp(op, r);
    return success();
  }

  ComputeIn mode;
  ScalarFn fn;
};

struct Registry {
  RewritePatternSet &patterns;
  const TypeConverter &tc;
  template <typename OpTy> void add(ComputeIn mode, ScalarFn fn) {
    patterns.add<ElementwiseLowering<OpTy>>(tc, patterns.getContext(), mode, std::move(fn));
  }
  /// A float-only op given by one formula.
  template <typename OpTy> void addFloat(std::function<Value(OpBuilder &, Location, Value, const ScalarCtx &)> f) {
    add<OpTy>(ComputeIn::Result,
              [f](OpBuilder &b, Location l, ValueRange a, const ScalarCtx &c) { return f(b, l, a[0], c); });
  }
};

} // namespace

void populateElementwiseLowering(const TypeConverter &tc, RewritePatternSet &patterns) {
  Registry r{patterns, tc};
  using L = Location;
  using B = OpBuilder;
  using C = const ScalarCtx &;

  // Activations --------------------------------------------------------------
  r.add<ReluOp>(ComputeIn::Result, [](B &b, L l, ValueRange a, C c) -> Value {
    if (c.compute.isFloat())
      return b.create<arith::MaximumFOp>(l, a[0], cst(b, l, c, 0.0));
    return clampInt(b, l, a[0], 0.0, std::nullopt, c);
  });
  r.add<HardtanhOp>(ComputeIn::Result, [](B &b, L l, ValueRange a, C c) -> Value {
    auto op = llvm::cast<HardtanhOp>(c.op);
    double lo = op.getMinVal().convertToDouble(), hi = op.getMaxVal().convertToDouble();
    if (c.compute.isFloat())
      return clampFloat(b, l, a[0], lo, hi, c);
    return clampInt(b, l, a[0], lo, hi, c);
  });
  r.addFloat<LeakyReluOp>([](B &b, L l, Value x, C c) {
    double s = llvm::cast<LeakyReluOp>(c.op).getNegativeSlope().convertToDouble();
    return select(b, l, fcmp(b, l, arith::CmpFPredicate::OGT, x, cst(b, l, c, 0.0)), x,
                  fmul(b, l, x, cst(b, l, c, s)));
  });
  r.addFloat<EluOp>([](B &b, L l, Value x, C c) {
    double alpha = llvm::cast<EluOp>(c.op).getAlpha().convertToDouble();
    return select(b, l, fcmp(b, l, arith::CmpFPredicate::OGT, x, cst(b, l, c, 0.0)), x,
                  fmul(b, l, cst(b, l, c, alpha), b.create<math::ExpM1Op>(l, x)));
  });
  r.addFloat<GeluOp>([](B &b, L l, Value x, C c) {
    Value half = cst(b, l, c, 0.5), one = cst(b, l, c, 1.0);
    Value inner;
    if (llvm::cast<GeluOp>(c.op).getApproximate() == GeluApproximation::Tanh) {
      Value x3 = fmul(b, l, fmul(b, l, x, x), x);
      Value poly = fadd(b, l, x, fmul(b, l, cst(b, l, c, 0.044715), x3));
      inner = b.create<math::TanhOp>(l, fmul(b, l, cst(b, l, c, std::sqrt(2.0 / M_PI)), poly));
    } else {
      inner = b.create<math::ErfOp>(l, fmul(b, l, x, cst(b, l, c, M_SQRT1_2)));
    }
    return fmul(b, l, fmul(b, l, half, x), fadd(b, l, one, inner));
  });
  r.addFloat<SiluOp>([](B &b, L l, Value x, C c) { return fmul(b, l, x, sigmoid(b, l, x, c)); });
  r.addFloat<SigmoidOp>([](B &b, L l, Value x, C c) { return sigmoid(b, l, x, c); });
  r.addFloat<TanhOp>([](B &b, L l, Value x, C) -> Value { return b.create<math::TanhOp>(l, x); });
  r.addFloat<HardswishOp>([](B &b, L l, Value x, C c) {
    return fdiv(b, l, fmul(b, l, x, relu6(b, l, fadd(b, l, x, cst(b, l, c, 3.0)), c)),
                cst(b, l, c, 6.0));
  });
  r.addFloat<HardsigmoidOp>([](B &b, L l, Value x, C c) {
    return fdiv(b, l, relu6(b, l, fadd(b, l, x, cst(b, l, c, 3.0)), c), cst(b, l, c, 6.0));
  });
  r.addFloat<SoftplusOp>([](B &b, L l, Value x, C c) {
    auto op = llvm::cast<SoftplusOp>(c.op);
    double beta = op.getBeta().convertToDouble(), threshold = op.getThreshold().convertToDouble();
    Value xb = fmul(b, l, x, cst(b, l, c, beta));
    Value soft = fdiv(b, l, b.create<math::Log1pOp>(l, b.create<math::ExpOp>(l, xb)),
                      cst(b, l, c, beta));
    return select(b, l, fcmp(b, l, arith::CmpFPredicate::OGT, xb, cst(b, l, c, threshold)), x,
                  soft);
  });
  r.addFloat<MishOp>([](B &b, L l, Value x, C c) {
    Value soft = b.create<math::Log1pOp>(l, b.create<math::ExpOp>(l, x));
    Value sp = select(b, l, fcmp(b, l, arith::CmpFPredicate::OGT, x, cst(b, l, c, 20.0)), x, soft);
    return fmul(b, l, x, b.create<math::TanhOp>(l, sp));
  });

  // Unary math ---------------------------------------------------------------
  r.add<NegOp>(ComputeIn::Result, [](B &b, L l, ValueRange a, C c) -> Value {
    if (c.compute.isFloat())
      return b.create<arith::NegFOp>(l, a[0]);
    return b.create<arith::SubIOp>(l, cst(b, l, c, 0.0), a[0]);
  });
  r.add<AbsOp>(ComputeIn::Result, [](B &b, L l, ValueRange a, C c) -> Value {
    if (c.compute.isFloat())
      return b.create<math::AbsFOp>(l, a[0]);
    if (c.compute.isUnsigned)
      return a[0];
    return b.create<math::AbsIOp>(l, a[0]);
  });
  r.add<SignOp>(ComputeIn::Result, [](B &b, L l, ValueRange a, C c) -> Value {
    // (0 < x) - (x < 0); NaN gives 0.
    Value zero = cst(b, l, c, 0.0), one = cst(b, l, c, 1.0), minus = cst(b, l, c, -1.0);
    Value pos, neg;
    if (c.compute.isFloat()) {
      pos = fcmp(b, l, arith::CmpFPredicate::OGT, a[0], zero);
      neg = fcmp(b, l, arith::CmpFPredicate::OLT, a[0], zero);
    } else {
      pos = icmp(b, l, signedOr(c.compute.isUnsigned, arith::CmpIPredicate::sgt, arith::CmpIPredicate::ugt), a[0], zero);
      neg = c.compute.isUnsigned ? icmp(b, l, arith::CmpIPredicate::ne, zero, zero)
                                 : icmp(b, l, arith::CmpIPredicate::slt, a[0], zero);
    }
    return select(b, l, pos, one, select(b, l, neg, minus, zero));
  });
  r.addFloat<ExpOp>([](B &b, L l, Value x, C) -> Value { return b.create<math::ExpOp>(l, x); });
  r.addFloat<Expm1Op>([](B &b, L l, Value x, C) -> Value { return b.create<math::ExpM1Op>(l, x); });
  r.addFloat<LogOp>([](B &b, L l, Value x, C) -> Value { return b.create<math::LogOp>(l, x); });
  r.addFloat<Log1pOp>([](B &b, L l, Value x, C) -> Value { return b.create<math::Log1pOp>(l, x); });
  r.addFloat<SqrtOp>([](B &b, L l, Value x, C) -> Value { return b.create<math::SqrtOp>(l, x); });
  r.addFloat<RsqrtOp>([](B &b, L l, Value x, C c) {
    return fdiv(b, l, cst(b, l, c, 1.0), b.create<math::SqrtOp>(l, x));
  });
  r.addFloat<ReciprocalOp>([](B &b, L l, Value x, C c) { return fdiv(b, l, cst(b, l, c, 1.0), x); });
  r.addFloat<SinOp>([](B &b, L l, Value x, C) -> Value { return b.create<math::SinOp>(l, x); });
  r.addFloat<CosOp>([](B &b, L l, Value x, C) -> Value { return b.create<math::CosOp>(l, x); });
  r.addFloat<ErfOp>([](B &b, L l, Value x, C) -> Value { return b.create<math::ErfOp>(l, x); });
  r.addFloat<FloorOp>([](B &b, L l, Value x, C) -> Value { return b.create<math::FloorOp>(l, x); });
  r.addFloat<CeilOp>([](B &b, L l, Value x, C) -> Value { return b.create<math::CeilOp>(l, x); });
  r.addFloat<RoundOp>([](B &b, L l, Value x, C) -> Value { return b.create<math::RoundEvenOp>(l, x); });
  r.addFloat<TanOp>([](B &b, L l, Value x, C) { return mathOp<math::TanOp>(b, l, x); });
  r.addFloat<AsinOp>([](B &b, L l, Value x, C) { return mathOp<math::AsinOp>(b, l, x); });
  r.addFloat<AcosOp>([](B &b, L l, Value x, C) { return mathOp<math::AcosOp>(b, l, x); });
  r.addFloat<AtanOp>([](B &b, L l, Value x, C) { return mathOp<math::AtanOp>(b, l, x); });
  r.addFloat<SinhOp>([](B &b, L l, Value x, C) { return mathOp<math::SinhOp>(b, l, x); });
  r.addFloat<CoshOp>([](B &b, L l, Value x, C) { return mathOp<math::CoshOp>(b, l, x); });
  r.addFloat<AsinhOp>([](B &b, L l, Value x, C) { return mathOp<math::AsinhOp>(b, l, x); });
  r.addFloat<AcoshOp>([](B &b, L l, Value x, C) { return mathOp<math::AcoshOp>(b, l, x); });
  r.addFloat<AtanhOp>([](B &b, L l, Value x, C) { return mathOp<math::AtanhOp>(b, l, x); });
  r.addFloat<Log2Op>([](B &b, L l, Value x, C) { return mathOp<math::Log2Op>(b, l, x); });
  r.addFloat<Log10Op>([](B &b, L l, Value x, C) { return mathOp<math::Log10Op>(b, l, x); });
  r.addFloat<Exp2Op>([](B &b, L l, Value x, C) { return mathOp<math::Exp2Op>(b, l, x); });
  r.addFloat<TruncOp>([](B &b, L l, Value x, C) -> Value { return b.create<math::TruncOp>(l, x); });
  r.addFloat<ErfcOp>([](B &b, L l, Value x, C c) { return libmCall(b, l, c.op, "erfc", x); });
  r.addFloat<SpecialOp>([](B &b, L l, Value x, C c) {
    return specialCall(b, l, c.op, llvm::cast<SpecialOp>(c.op).getFunction(), x);
  });
  r.addFloat<LgammaOp>([](B &b, L l, Value x, C c) { return libmCall(b, l, c.op, "lgamma", x); });
  r.add<BitwiseNotOp>(ComputeIn::Result, [](B &b, L l, ValueRange a, C c) -> Value {
    return b.create<arith::XOrIOp>(l, a[0], c.compute.isBool() ? cst(b, l, c, 1.0)
                                                               : cst(b, l, c, -1.0));
  });
  r.add<ClampOp>(ComputeIn::Result, [](B &b, L l, ValueRange a, C c) -> Value {
    auto op = llvm::cast<ClampOp>(c.op);
    std::optional<double> lo, hi;
    if (auto v = op.getMin())
      lo = v->convertToDouble();
    if (auto v = op.getMax())
      hi = v->convertToDouble();
    return c.compute.isFloat() ? clampFloat(b, l, a[0], lo, hi, c) : clampInt(b, l, a[0], lo, hi, c);
  });

  // Binary arithmetic ---------------------------------------------------------
  r.add<AddOp>(ComputeIn::Result, [](B &b, L l, ValueRange a, C c) -> Value {
    if (c.compute.isFloat())
      return fadd(b, l, a[0], a[1]);
    if (c.compute.isBool())
      return b.create<arith::OrIOp>(l, a[0], a[1]);
    return b.create<arith::AddIOp>(l, a[0], a[1]);
  });
  r.add<SubOp>(ComputeIn::Result, [](B &b, L l, ValueRange a, C c) -> Value {
    if (c.compute.isFloat())
      return fsub(b, l, a[0], a[1]);
    return b.create<arith::SubIOp>(l, a[0], a[1]);
  });
  r.add<MulOp>(ComputeIn::Result, [](B &b, L l, ValueRange a, C c) -> Value {
    if (c.compute.isFloat())
      return fmul(b, l, a[0], a[1]);
    if (c.compute.isBool())
      return b.create<arith::AndIOp>(l, a[0], a[1]);
    return b.create<arith::MulIOp>(l, a[0], a[1]);
  });
  r.add<DivOp>(ComputeIn::Result, [](B &b, L l, ValueRange a, C c) -> Value {
    RoundingMode mode = llvm::cast<DivOp>(c.op).getRoundingMode();
    Value x = a[0], y = a[1];
    if (c.compute.isFloat()) {
      Value q = fdiv(b, l, x, y);
      if (mode == RoundingMode::Trunc)
        return b.create<math::TruncOp>(l, q);
      if (mode == RoundingMode::Floor) {
        // Python's floor division: floor((x - fmod(x, y)) / y), corrected.
        Value mod = b.create<arith::RemFOp>(l, x, y);
        Value div = fdiv(b, l, fsub(b, l, x, mod), y);
        Value zero = cst(b, l, c, 0.0);
        Value signDiffers = b.create<arith::XOrIOp>(
            l, fcmp(b, l, arith::CmpFPredicate::OLT, y, zero),
            fcmp(b, l, arith::CmpFPredicate::OLT, mod, zero));
        Value adjust = b.create<arith::AndIOp>(
            l, fcmp(b, l, arith::CmpFPredicate::UNE, mod, zero), signDiffers);
        div = select(b, l, adjust, fsub(b, l, div, cst(b, l, c, 1.0)), div);
        Value fl = b.create<math::FloorOp>(l, div);
        Value up = fcmp(b, l, arith::CmpFPredicate::OGT, fsub(b, l, div, fl), cst(b, l, c, 0.5));
        fl = select(b, l, up, fadd(b, l, fl, cst(b, l, c, 1.0)), fl);
        Value zeroDiv = fcmp(b, l, arith::CmpFPredicate::OEQ, div, zero);
        Value signedZero = b.create<math::CopySignOp>(l, zero, q);
        Value r = select(b, l, zeroDiv, signedZero, fl);
        return select(b, l, fcmp(b, l, arith::CmpFPredicate::OEQ, y, zero), q, r);
      }
      return q;
    }
    // Integers (trunc/floor; true division computes in float). A zero
    // divisor gives 0 instead of trapping (the evaluator reports it).
    Value zero = cst(b, l, c, 0.0), one = cst(b, l, c, 1.0);
    Value isZero = icmp(b, l, arith::CmpIPredicate::eq, y, zero);
    Value safeY = select(b, l, isZero, one, y);
    Value q = c.compute.isUnsigned ? b.create<arith::DivUIOp>(l, x, safeY).getResult()
                                   : b.create<arith::DivSIOp>(l, x, safeY).getResult();
    if (mode == RoundingMode::Floor && !c.compute.isUnsigned)
      q = b.create<arith::FloorDivSIOp>(l, x, safeY);
    return select(b, l, isZero, zero, q);
  });
  r.add<PowOp>(ComputeIn::Result, [](B &b, L l, ValueRange a, C c) -> Value {
    if (c.compute.isFloat())
      return b.create<math::PowFOp>(l, a[0], a[1]);
    // PyTorch's integer power: negative exponents give 0 except for 1, -1.
    Value x = a[0], y = a[1];
    Value zero = cst(b, l, c, 0.0), one = cst(b, l, c, 1.0), minus = cst(b, l, c, -1.0);
    Value negExp = c.compute.isUnsigned ? icmp(b, l, arith::CmpIPredicate::ne, zero, zero)
                                        : icmp(b, l, arith::CmpIPredicate::slt, y, zero);
    Value safeY = select(b, l, negExp, zero, y);
    Value p = b.create<math::IPowIOp>(l, x, safeY);
    Value odd = b.create<arith::TruncIOp>(l, b.getI1Type(), y);
    Value forMinusOne = select(b, l, odd, minus, one);
    Value neg = select(b, l, icmp(b, l, arith::CmpIPredicate::eq, x, one), one,
                       select(b, l, icmp(b, l, arith::CmpIPredicate::eq, x, minus), forMinusOne,
                              zero));
    return select(b, l, negExp, neg, p);
  });
  r.add<MaximumOp>(ComputeIn::Result, [](B &b, L l, ValueRange a, C c) -> Value {
    if (c.compute.isFloat())
      return b.create<arith::MaximumFOp>(l, a[0], a[1]);
    if (c.compute.isUnsigned || c.compute.isBool())
      return b.create<arith::MaxUIOp>(l, a[0], a[1]);
    return b.create<arith::MaxSIOp>(l, a[0], a[1]);
  });
  r.add<MinimumOp>(ComputeIn::Result, [](B &b, L l, ValueRange a, C c) -> Value {
    if (c.compute.isFloat())
      return b.create<arith::MinimumFOp>(l, a[0], a[1]);
    if (c.compute.isUnsigned || c.compute.isBool())
      return b.create<arith::MinUIOp>(l, a[0], a[1]);
    return b.create<arith::MinSIOp>(l, a[0], a[1]);
  });
  r.add<RemainderOp>(ComputeIn::Result, [](B &b, L l, ValueRange a, C c) -> Value {
    Value x = a[0], y = a[1], zero = cst(b, l, c, 0.0);
    if (c.compute.isFloat()) {
      Value mod = b.create<arith::RemFOp>(l, x, y);
      Value signDiffers = b.create<arith::XOrIOp>(
          l, fcmp(b, l, arith::CmpFPredicate::OLT, y, zero),
          fcmp(b, l, arith::CmpFPredicate::OLT, mod, zero));
      Value adjust = b.create<arith::AndIOp>(
          l, fcmp(b, l, arith::CmpFPredicate::UNE, mod, zero), signDiffers);
      return select(b, l, adjust, fadd(b, l, mod, y), mod);
    }
    Value one = cst(b, l, c, 1.0);
    Value isZero = icmp(b, l, arith::CmpIPredicate::eq, y, zero);
    Value safeY = select(b, l, isZero, one, y);
    if (c.compute.isUnsigned)
      return select(b, l, isZero, zero, b.create<arith::RemUIOp>(l, x, safeY));
    // y == -1 gives 0 (and avoids INT_MIN % -1).
    Value minusOne = icmp(b, l, arith::CmpIPredicate::eq, safeY, cst(b, l, c, -1.0));
    safeY = select(b, l, minusOne, one, safeY);
    Value m = b.create<arith::RemSIOp>(l, x, safeY);
    Value signDiffers = b.create<arith::XOrIOp>(l, icmp(b, l, arith::CmpIPredicate::slt, m, zero),
                                                icmp(b, l, arith::CmpIPredicate::slt, safeY, zero));
    Value adjust = b.create<arith::AndIOp>(l, icmp(b, l, arith::CmpIPredicate::ne, m, zero),
                                           signDiffers);
    m = select(b, l, adjust, b.create<arith::AddIOp>(l, m, safeY), m);
    return select(b, l, isZero, zero, m);
  });

  r.add<FmodOp>(ComputeIn::Result, [](B &b, L l, ValueRange a, C c) -> Value {
    if (c.compute.isFloat())
      return b.create<arith::RemFOp>(l, a[0], a[1]);
    // C's %; a zero divisor gives 0 (the evaluator reports it), -1 gives 0.
    Value zero = cst(b, l, c, 0.0), one = cst(b, l, c, 1.0);
    Value isZero = icmp(b, l, arith::CmpIPredicate::eq, a[1], zero);
    Value safeY = select(b, l, isZero, one, a[1]);
    if (c.compute.isUnsigned)
      return select(b, l, isZero, zero, b.create<arith::RemUIOp>(l, a[0], safeY));
    Value minusOne = icmp(b, l, arith::CmpIPredicate::eq, safeY, cst(b, l, c, -1.0));
    safeY = select(b, l, minusOne, one, safeY);
    return select(b, l, isZero, zero, b.create<arith::RemSIOp>(l, a[0], safeY));
  });
  r.add<Atan2Op>(ComputeIn::Result, [](B &b, L l, ValueRange a, C) {
    return mathOp<math::Atan2Op>(b, l, a);
  });
  r.add<Special2Op>(ComputeIn::Result, [](B &b, L l, ValueRange a, C c) {
    return specialCall(b, l, c.op, llvm::cast<Special2Op>(c.op).getFunction(), a);
  });
  r.add<HypotOp>(ComputeIn::Result, [](B &b, L l, ValueRange a, C c) {
    return libmCall(b, l, c.op, "hypot", a);
  });
  r.add<NextafterOp>(ComputeIn::Result, [](B &b, L l, ValueRange a, C c) -> Value {
    return libmCall(b, l, c.op, "nextafter", a);
  });
  r.add<CopysignOp>(ComputeIn::Result, [](B &b, L l, ValueRange a, C) -> Value {
    return b.create<math::CopySignOp>(l, a[0], a[1]);
  });
  // fmax/fmin: a NaN operand loses to a number (maxnumf/minnumf).
  r.add<FmaxOp>(ComputeIn::Result, [](B &b, L l, ValueRange a, C c) -> Value {
    if (c.compute.isFloat())
      return b.create<arith::MaxNumFOp>(l, a[0], a[1]);
    if (c.compute.isUnsigned || c.compute.isBool())
      return b.create<arith::MaxUIOp>(l, a[0], a[1]);
    return b.create<arith::MaxSIOp>(l, a[0], a[1]);
  });
  r.add<FminOp>(ComputeIn::Result, [](B &b, L l, ValueRange a, C c) -> Value {
    if (c.compute.isFloat())
      return b.create<arith::MinNumFOp>(l, a[0], a[1]);
    if (c.compute.isUnsigned || c.compute.isBool())
      return b.create<arith::MinUIOp>(l, a[0], a[1]);
    return b.create<arith::MinSIOp>(l, a[0], a[1]);
  });
  r.add<BitwiseAndOp>(ComputeIn::Result, [](B &b, L l, ValueRange a, C) -> Value {
    return b.create<arith::AndIOp>(l, a[0], a[1]);
  });
  r.add<BitwiseOrOp>(ComputeIn::Result, [](B &b, L l, ValueRange a, C) -> Value {
    return b.create<arith::OrIOp>(l, a[0], a[1]);
  });
  r.add<BitwiseXorOp>(ComputeIn::Result, [](B &b, L l, ValueRange a, C) -> Value {
    return b.create<arith::XOrIOp>(l, a[0], a[1]);
  });
  // Shifts of the width or more (or negative): 0 to the left, the sign (or 0
  // for unsigned types) to the right, as PyTorch's kernels.
  r.add<ShiftLeftOp>(ComputeIn::Result, [](B &b, L l, ValueRange a, C c) -> Value {
    unsigned bits = c.compute.type.getIntOrFloatBitWidth();
    Value zero = cst(b, l, c, 0.0);
    Value tooFar = icmp(b, l, arith::CmpIPredicate::uge, a[1], cst(b, l, c, double(bits)));
    Value safe = select(b, l, tooFar, zero, a[1]);
    return select(b, l, tooFar, zero, b.create<arith::ShLIOp>(l, a[0], safe));
  });
  r.add<ShiftRightOp>(ComputeIn::Result, [](B &b, L l, ValueRange a, C c) -> Value {
    unsigned bits = c.compute.type.getIntOrFloatBitWidth();
    Value zero = cst(b, l, c, 0.0);
    Value tooFar = icmp(b, l, arith::CmpIPredicate::uge, a[1], cst(b, l, c, double(bits)));
    Value safe = select(b, l, tooFar, zero, a[1]);
    if (c.compute.isUnsigned || c.compute.isBool())
      return select(b, l, tooFar, zero, b.create<arith::ShRUIOp>(l, a[0], safe));
    Value last = cst(b, l, c, double(bits - 1));
    return b.create<arith::ShRSIOp>(l, a[0], select(b, l, tooFar, last, safe));
  });

  // Comparisons (in the promoted operand type), logic, selection --------------
  auto compare = [&r](auto tag, arith::CmpFPredicate fp, arith::CmpIPredicate sp,
                      arith::CmpIPredicate up) {
    using OpTy = decltype(tag);
    r.add<OpTy>(ComputeIn::PromotedOperands, [=](B &b, L l, ValueRange a, C c) -> Value {
      if (c.compute.isFloat())
        return fcmp(b, l, fp, a[0], a[1]);
      return icmp(b, l, c.compute.isUnsigned || c.compute.isBool() ? up : sp, a[0], a[1]);
    });
  };
  using FP = arith::CmpFPredicate;
  using IP = arith::CmpIPredicate;
  compare(EqOp(), FP::OEQ, IP::eq, IP::eq);
  compare(NeOp(), FP::UNE, IP::ne, IP::ne);
  compare(LtOp(), FP::OLT, IP::slt, IP::ult);
  compare(LeOp(), FP::OLE, IP::sle, IP::ule);
  compare(GtOp(), FP::OGT, IP::sgt, IP::ugt);
  compare(GeOp(), FP::OGE, IP::sge, IP::uge);
  r.add<LogicalAndOp>(ComputeIn::Bool, [](B &b, L l, ValueRange a, C) -> Value {
    return b.create<arith::AndIOp>(l, a[0], a[1]);
  });
  r.add<LogicalOrOp>(ComputeIn::Bool, [](B &b, L l, ValueRange a, C) -> Value {
    return b.create<arith::OrIOp>(l, a[0], a[1]);
  });
  r.add<LogicalXorOp>(ComputeIn::Bool, [](B &b, L l, ValueRange a, C) -> Value {
    return b.create<arith::XOrIOp>(l, a[0], a[1]);
  });
  r.add<LogicalNotOp>(ComputeIn::Bool, [](B &b, L l, ValueRange a, C c) -> Value {
    return b.create<arith::XOrIOp>(l, a[0], cst(b, l, c, 1.0));
  });
  r.add<WhereOp>(ComputeIn::Result, [](B &b, L l, ValueRange a, C c) -> Value {
    // The condition was converted to the result type too: test it again.
    Value cond = a[0];
    if (!cond.getType().isInteger(1))
      cond = convertScalar(b, l, cond, c.compute, scalarTypeOf(b.getI1Type()));
    return select(b, l, cond, a[1], a[2]);
  });
  r.add<CastOp>(ComputeIn::Result, [](B &, L, ValueRange a, C) -> Value { return a[0]; });
}

} // namespace mlir::cuvil::lowering
