//===- EvalElementwise.cpp - cuvil.act/math/logic reference ---------------===//
//
// Element-wise ops. Operands are first converted to the computation type
// (the result type for arithmetic, the promoted operand type for
// comparisons), exactly as PyTorch does, then each element is computed in
// double (floats) or int64 (integers, wrapping like two's complement).
//
//===----------------------------------------------------------------------===//
#include "dialects/Cuvil/IR/CuvilOps.h"
#include "dialects/Cuvil/Reference/EvalHelpers.h"
#include "runtime/cpu/special.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace mlir::cuvil::reference {
namespace {

using FloatFn = std::function<double(double)>;
using IntFn = std::function<int64_t(int64_t)>;

/// Applies `f` (floats) or `g` (integers and bools) to every element.
FailureOr<Tensor> mapUnary(Operation *op, const Tensor &x, const FloatFn &f,
                           const IntFn &g = nullptr) {
  DType out = resultDType(op);
  FailureOr<Tensor> r = allocate(op, out, x.shape());
  if (failed(r))
    return failure();
  Tensor in = x.cast(out);
  if (::cuvil::isFloat(out)) {
    for (int64_t i = 0; i < in.numElements(); ++i)
      r->setDouble(i, f(in.getDouble(i)));
  } else {
    assert(g && "integer path missing for an op that accepts integers");
    for (int64_t i = 0; i < in.numElements(); ++i)
      r->setInt(i, g(in.getInt(i)));
  }
  return r;
}

/// Wrapping int64 arithmetic (no UB on overflow).
int64_t wrapAdd(int64_t a, int64_t b) { return int64_t(uint64_t(a) + uint64_t(b)); }
int64_t wrapSub(int64_t a, int64_t b) { return int64_t(uint64_t(a) - uint64_t(b)); }
int64_t wrapMul(int64_t a, int64_t b) { return int64_t(uint64_t(a) * uint64_t(b)); }

/// Broadcasts two operands, converts both to `compute`, and calls
/// fn(out, flat, lhsTensor, lhsIndex, rhsTensor, rhsIndex) per element.
template <typename Fn>
FailureOr<Tensor> zipBroadcast(Operation *op, const Tensor &a, const Tensor &b,
                               DType compute, Fn &&fn) {
  FailureOr<Shape> shape = broadcastRuntime(op, a.shape(), b.shape());
  if (failed(shape))
    return failure();
  FailureOr<Tensor> out = allocate(op, resultDType(op), *shape);
  if (failed(out))
    return failure();
  Tensor ca = a.cast(compute), cb = b.cast(compute);
  std::vector<int64_t> ma = broadcastIndexMap(*shape, ca.shape());
  std::vector<int64_t> mb = broadcastIndexMap(*shape, cb.shape());
  for (int64_t i = 0; i < out->numElements(); ++i)
    if (failed(fn(*out, i, ca, ma[i], cb, mb[i])))
      return failure();
  return out;
}

using FloatBinFn = std::function<double(double, double)>;
using IntBinFn = std::function<FailureOr<int64_t>(int64_t, int64_t)>;

/// Arithmetic binary op: computes in the result type.
FailureOr<Tensor> arith(Operation *op, ArrayRef<Tensor> args,
                        const FloatBinFn &f, const IntBinFn &g) {
  DType compute = resultDType(op);
  bool isFloat = ::cuvil::isFloat(compute);
  return zipBroadcast(op, args[0], args[1], compute,
                      [&](Tensor &out, int64_t i, const Tensor &a, int64_t ia,
                          const Tensor &b, int64_t ib) -> LogicalResult {
                        if (isFloat) {
                          out.setDouble(i, f(a.getDouble(ia), b.getDouble(ib)));
                          return success();
                        }
                        FailureOr<int64_t> v = g(a.getInt(ia), b.getInt(ib));
                        if (failed(v))
                          return failure();
                        out.setInt(i, *v);
                        return success();
                      });
}

/// The promoted operand dtype of a binary op (what comparisons compute in).
DType promotedOperandDType(Operation *op) {
  Type t = resultElementType(op->getOperandTypes());
  return *toDType(t);
}

FailureOr<Tensor> compare(Operation *op, ArrayRef<Tensor> args,
                          const std::function<bool(double, double)> &f,
                          const std::function<bool(int64_t, int64_t)> &g) {
  DType compute = promotedOperandDType(op);
  bool isFloat = ::cuvil::isFloat(compute);
  return zipBroadcast(op, args[0], args[1], compute,
                      [&](Tensor &out, int64_t i, const Tensor &a, int64_t ia,
                          const Tensor &b, int64_t ib) -> LogicalResult {
                        bool r = isFloat ? f(a.getDouble(ia), b.getDouble(ib))
                                         : g(a.getInt(ia), b.getInt(ib));
                        out.setInt(i, r);
                        return success();
                      });
}

FailureOr<Tensor> logical(Operation *op, ArrayRef<Tensor> args,
                          const std::function<bool(bool, bool)> &f) {
  // Non-zero tests are exact in double for every dtype (NaN is non-zero).
  return zipBroadcast(op, args[0], args[1], DType::Float64,
                      [&](Tensor &out, int64_t i, const Tensor &a, int64_t ia,
                          const Tensor &b, int64_t ib) -> LogicalResult {
                        out.setInt(i, f(a.getDouble(ia) != 0.0,
                                        b.getDouble(ib) != 0.0));
                        return success();
                      });
}

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double relu6(double x) { return std::isnan(x) ? x : std::min(std::max(x, 0.0), 6.0); }

/// PyTorch's floor division of floats (div_floor_floating): exact where
/// floor(a / b) would round wrongly.
double floorDivide(double a, double b) {
  if (b == 0.0)
    return a / b;
  double mod = std::fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0.0 && ((b < 0) != (mod < 0)))
    div -= 1.0;
  double floordiv;
  if (div != 0.0) {
    floordiv = std::floor(div);
    if (div - floordiv > 0.5)
      floordiv += 1.0;
  } else {
    floordiv = std::copysign(0.0, a / b);
  }
  return floordiv;
}

/// Python's % for floats.
double floatRemainder(double a, double b) {
  double mod = std::fmod(a, b);
  if (mod != 0.0 && ((b < 0) != (mod < 0)))
    mod += b;
  return mod;
}

/// Integer power as PyTorch's powi: negative exponents give 0 except for
/// bases 1 and -1.
int64_t intPow(int64_t base, int64_t exp) {
  if (exp < 0) {
    if (base == 1)
      return 1;
    if (base == -1)
      return (exp & 1) ? -1 : 1;
    return 0;
  }
  int64_t result = 1;
  while (exp) {
    if (exp & 1)
      result = wrapMul(result, base);
    exp >>= 1;
    base = wrapMul(base, base);
  }
  return result;
}

double nanMax(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? std::numeric_limits<double>::quiet_NaN()
                                        : std::max(a, b);
}
double nanMin(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? std::numeric_limits<double>::quiet_NaN()
                                        : std::min(a, b);
}

/// Softmax / log-softmax along `dim`, stable (subtracts the maximum).
FailureOr<Tensor> softmax(Operation *op, const Tensor &x, int64_t dim, bool log) {
  FailureOr<Tensor> r = allocate(op, resultDType(op), x.shape());
  if (failed(r))
    return failure();
  std::vector<double> v = x.toDoubles();
  int64_t size = x.rank() == 0 ? 1 : x.dim(dim);
  int64_t inner = 1;
  for (int64_t d = dim + 1; d < x.rank(); ++d)
    inner *= x.dim(d);
  int64_t outer = size == 0 ? 0 : x.numElements() / (size * inner);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t in = 0; in < inner; ++in) {
      int64_t base = o * size * inner + in;
      double m = -std::numeric_limits<double>::infinity();
      for (int64_t k = 0; k < size; ++k)
        m = std::isnan(v[base + k * inner]) ? v[base + k * inner]
                                            : std::max(m, v[base + k * inner]);
      double sum = 0;
      for (int64_t k = 0; k < size; ++k)
        sum += std::exp(v[base + k * inner] - m);
      for (int64_t k = 0; k < size; ++k) {
        double e = v[base + k * inner] - m;
        r->setDouble(base + k * inner, log ? e - std::log(sum) : std::exp(e) / sum);
      }
    }
  }
  return r;
}

// The special functions by name (runtime/cpu/special.h).
using Special1 = double (*)(double);
using Special2 = double (*)(double, double);
Special1 specialFunction1(llvm::StringRef name) {
  static const std::pair<llvm::StringRef, Special1> table[] = {
      {"digamma", cuvil_special_digamma},
      {"erfinv", cuvil_special_erfinv},
      {"erfcx", cuvil_special_erfcx},
      {"ndtr", cuvil_special_ndtr},
      {"ndtri", cuvil_special_ndtri},
      {"log_ndtr", cuvil_special_log_ndtr},
      {"entr", cuvil_special_entr},
      {"i0", cuvil_special_i0},
      {"i0e", cuvil_special_i0e},
      {"i1", cuvil_special_i1},
      {"i1e", cuvil_special_i1e},
      {"bessel_j0", cuvil_special_bessel_j0},
      {"bessel_j1", cuvil_special_bessel_j1},
      {"bessel_y0", cuvil_special_bessel_y0},
      {"bessel_y1", cuvil_special_bessel_y1},
      {"modified_bessel_i0", cuvil_special_modified_bessel_i0},
      {"modified_bessel_i1", cuvil_special_modified_bessel_i1},
      {"modified_bessel_k0", cuvil_special_modified_bessel_k0},
      {"modified_bessel_k1", cuvil_special_modified_bessel_k1},
      {"scaled_modified_bessel_k0", cuvil_special_scaled_modified_bessel_k0},
      {"scaled_modified_bessel_k1", cuvil_special_scaled_modified_bessel_k1},
      {"spherical_bessel_j0", cuvil_special_spherical_bessel_j0},
      {"airy_ai", cuvil_special_airy_ai},
};
  for (auto &[n, f] : table)
    if (n == name)
      return f;
  return nullptr;
}
Special2 specialFunction2(llvm::StringRef name) {
  static const std::pair<llvm::StringRef, Special2> table[] = {
      {"polygamma", cuvil_special_polygamma},
      {"zeta", cuvil_special_zeta},
      {"igamma", cuvil_special_igamma},
      {"igammac", cuvil_special_igammac},
      {"mvlgamma", cuvil_special_mvlgamma},
      {"chebyshev_polynomial_t", cuvil_special_chebyshev_polynomial_t},
      {"chebyshev_polynomial_u", cuvil_special_chebyshev_polynomial_u},
      {"chebyshev_polynomial_v", cuvil_special_chebyshev_polynomial_v},
      {"chebyshev_polynomial_w", cuvil_special_chebyshev_polynomial_w},
      {"shifted_chebyshev_polynomial_t", cuvil_special_shifted_chebyshev_polynomial_t},
      {"shifted_chebyshev_polynomial_u", cuvil_special_shifted_chebyshev_polynomial_u},
      {"shifted_chebyshev_polynomial_v", cuvil_special_shifted_chebyshev_polynomial_v},
      {"shifted_chebyshev_polynomial_w", cuvil_special_shifted_chebyshev_polynomial_w},
      {"hermite_polynomial_h", cuvil_special_hermite_polynomial_h},
      {"hermite_polynomial_he", cuvil_special_hermite_polynomial_he},
      {"laguerre_polynomial_l", cuvil_special_laguerre_polynomial_l},
      {"legendre_polynomial_p", cuvil_special_legendre_polynomial_p},
};
  for (auto &[n, f] : table)
    if (n == name)
      return f;
  return nullptr;
}

} // namespace

void registerElementwiseEvaluators(OpEvaluators &e) {
  e.add<SpecialOp>([](SpecialOp op, ArrayRef<Tensor> a) -> FailureOr<Tensor> {
    Special1 f = specialFunction1(op.getFunction());
    if (!f)
      return op.emitOpError() << "has no evaluator for '" << op.getFunction() << "'";
    return mapUnary(op, a[0], f);
  });
  e.add<Special2Op>([](Special2Op op, ArrayRef<Tensor> a) -> FailureOr<Tensor> {
    Special2 f = specialFunction2(op.getFunction());
    if (!f)
      return op.emitOpError() << "has no evaluator for '" << op.getFunction() << "'";
    return arith(op, a, f, [](int64_t, int64_t) -> FailureOr<int64_t> { return 0; });
  });
  //===--------------------------------------------------------------------===//
  // Activations
  //===--------------------------------------------------------------------===//
  e.add<ReluOp>([](ReluOp op, ArrayRef<Tensor> a) {
    return mapUnary(
        op, a[0], [](double x) { return std::isnan(x) ? x : std::max(x, 0.0); },
        [](int64_t x) { return std::max<int64_t>(x, 0); });
  });
  e.add<HardtanhOp>([](HardtanhOp op, ArrayRef<Tensor> a) {
    double lo = op.getMinVal().convertToDouble(), hi = op.getMaxVal().convertToDouble();
    return mapUnary(
        op, a[0],
        [=](double x) { return std::isnan(x) ? x : std::min(std::max(x, lo), hi); },
        [=](int64_t x) {
          return std::min<int64_t>(std::max<int64_t>(x, int64_t(lo)), int64_t(hi));
        });
  });
  e.add<LeakyReluOp>([](LeakyReluOp op, ArrayRef<Tensor> a) {
    double s = op.getNegativeSlope().convertToDouble();
    return mapUnary(op, a[0], [=](double x) { return x > 0 ? x : x * s; });
  });
  e.add<EluOp>([](EluOp op, ArrayRef<Tensor> a) {
    double alpha = op.getAlpha().convertToDouble();
    return mapUnary(op, a[0],
                    [=](double x) { return x > 0 ? x : alpha * std::expm1(x); });
  });
  e.add<GeluOp>([](GeluOp op, ArrayRef<Tensor> a) {
    if (op.getApproximate() == GeluApproximation::Tanh)
      return mapUnary(op, a[0], [](double x) {
        const double k = std::sqrt(2.0 / M_PI);
        return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
      });
    return mapUnary(op, a[0], [](double x) {
      return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    });
  });
  e.add<SiluOp>([](SiluOp op, ArrayRef<Tensor> a) {
    return mapUnary(op, a[0], [](double x) { return x * sigmoid(x); });
  });
  e.add<SigmoidOp>([](SigmoidOp op, ArrayRef<Tensor> a) {
    return mapUnary(op, a[0], sigmoid);
  });
  e.add<TanhOp>([](TanhOp op, ArrayRef<Tensor> a) {
    return mapUnary(op, a[0], [](double x) { return std::tanh(x); });
  });
  // Step by step in float below f64, as PyTorch's kernels compute them:
  // one rounding per step (the quantized kernels' ties depend on it).
  e.add<HardswishOp>([](HardswishOp op, ArrayRef<Tensor> a) {
    if (resultDType(op) == DType::Float64)
      return mapUnary(op, a[0], [](double x) { return x * relu6(x + 3.0) / 6.0; });
    return mapUnary(op, a[0], [](double x) {
      float xf = static_cast<float>(x);
      float t = static_cast<float>(relu6(xf + 3.0f));
      float r = xf * t;
      return static_cast<double>(r / 6.0f);
    });
  });
  e.add<HardsigmoidOp>([](HardsigmoidOp op, ArrayRef<Tensor> a) {
    if (resultDType(op) == DType::Float64)
      return mapUnary(op, a[0], [](double x) { return relu6(x + 3.0) / 6.0; });
    return mapUnary(op, a[0], [](double x) {
      float t = static_cast<float>(relu6(static_cast<float>(x) + 3.0f));
      return static_cast<double>(t / 6.0f);
    });
  });
  e.add<SoftplusOp>([](SoftplusOp op, ArrayRef<Tensor> a) {
    double beta = op.getBeta().convertToDouble();
    double threshold = op.getThreshold().convertToDouble();
    return mapUnary(op, a[0], [=](double x) {
      return x * beta > threshold ? x : std::log1p(std::exp(x * beta)) / beta;
    });
  });
  e.add<MishOp>([](MishOp op, ArrayRef<Tensor> a) {
    return mapUnary(op, a[0], [](double x) {
      double sp = x > 20.0 ? x : std::log1p(std::exp(x));
      return x * std::tanh(sp);
    });
  });
  e.add<SoftmaxOp>([](SoftmaxOp op, ArrayRef<Tensor> a) {
    return softmax(op, a[0], op.getDim(), false);
  });
  e.add<LogSoftmaxOp>([](LogSoftmaxOp op, ArrayRef<Tensor> a) {
    return softmax(op, a[0], op.getDim(), true);
  });

  //===--------------------------------------------------------------------===//
  // Unary math
  //===--------------------------------------------------------------------===//
  e.add<NegOp>([](NegOp op, ArrayRef<Tensor> a) {
    return mapUnary(op, a[0], [](double x) { return -x; },
                    [](int64_t x) { return wrapSub(0, x); });
  });
  e.add<AbsOp>([](AbsOp op, ArrayRef<Tensor> a) {
    return mapUnary(op, a[0], [](double x) { return std::fabs(x); },
                    [](int64_t x) { return x < 0 ? wrapSub(0, x) : x; });
  });
  e.add<SignOp>([](SignOp op, ArrayRef<Tensor> a) {
    // (0 < x) - (x < 0): NaN gives 0 (PyTorch's sign kernel).
    return mapUnary(op, a[0],
                    [](double x) { return double((0 < x) - (x < 0)); },
                    [](int64_t x) { return int64_t((0 < x) - (x < 0)); });
  });
  auto addFloat = [&e](auto tag, double (*f)(double)) {
    using OpTy = decltype(tag);
    e.add<OpTy>([f](OpTy op, ArrayRef<Tensor> a) { return mapUnary(op, a[0], f); });
  };
  addFloat(ExpOp(), [](double x) { return std::exp(x); });
  addFloat(Expm1Op(), [](double x) { return std::expm1(x); });
  addFloat(LogOp(), [](double x) { return std::log(x); });
  addFloat(Log1pOp(), [](double x) { return std::log1p(x); });
  addFloat(SqrtOp(), [](double x) { return std::sqrt(x); });
  addFloat(RsqrtOp(), [](double x) { return 1.0 / std::sqrt(x); });
  addFloat(ReciprocalOp(), [](double x) { return 1.0 / x; });
  addFloat(SinOp(), [](double x) { return std::sin(x); });
  addFloat(CosOp(), [](double x) { return std::cos(x); });
  addFloat(ErfOp(), [](double x) { return std::erf(x); });
  addFloat(FloorOp(), [](double x) { return std::floor(x); });
  addFloat(CeilOp(), [](double x) { return std::ceil(x); });
  addFloat(RoundOp(), [](double x) { return std::nearbyint(x); });
  addFloat(TanOp(), [](double x) { return std::tan(x); });
  addFloat(AsinOp(), [](double x) { return std::asin(x); });
  addFloat(AcosOp(), [](double x) { return std::acos(x); });
  addFloat(AtanOp(), [](double x) { return std::atan(x); });
  addFloat(SinhOp(), [](double x) { return std::sinh(x); });
  addFloat(CoshOp(), [](double x) { return std::cosh(x); });
  addFloat(AsinhOp(), [](double x) { return std::asinh(x); });
  addFloat(AcoshOp(), [](double x) { return std::acosh(x); });
  addFloat(AtanhOp(), [](double x) { return std::atanh(x); });
  addFloat(Log2Op(), [](double x) { return std::log2(x); });
  addFloat(Log10Op(), [](double x) { return std::log10(x); });
  addFloat(Exp2Op(), [](double x) { return std::exp2(x); });
  addFloat(ErfcOp(), [](double x) { return std::erfc(x); });
  addFloat(LgammaOp(), [](double x) { return std::lgamma(x); });
  addFloat(TruncOp(), [](double x) { return std::trunc(x); });
  e.add<BitwiseNotOp>([](BitwiseNotOp op, ArrayRef<Tensor> a) {
    bool isBool = a[0].dtype() == DType::Bool;
    return mapUnary(op, a[0], nullptr, [isBool](int64_t x) {
      return isBool ? int64_t(!x) : ~x;
    });
  });
  e.add<ClampOp>([](ClampOp op, ArrayRef<Tensor> a) {
    std::optional<APFloat> lo = op.getMin(), hi = op.getMax();
    double l = lo ? lo->convertToDouble() : -INFINITY;
    double h = hi ? hi->convertToDouble() : INFINITY;
    return mapUnary(
        op, a[0],
        [=](double x) { return std::isnan(x) ? x : std::min(std::max(x, l), h); },
        [=](int64_t x) {
          if (lo)
            x = std::max<int64_t>(x, int64_t(l));
          if (hi)
            x = std::min<int64_t>(x, int64_t(h));
          return x;
        });
  });

  //===--------------------------------------------------------------------===//
  // Binary arithmetic
  //===--------------------------------------------------------------------===//
  e.add<AddOp>([](AddOp op, ArrayRef<Tensor> a) {
    return arith(op, a, [](double x, double y) { return x + y; },
                 [](int64_t x, int64_t y) -> FailureOr<int64_t> { return wrapAdd(x, y); });
  });
  e.add<SubOp>([](SubOp op, ArrayRef<Tensor> a) {
    return arith(op, a, [](double x, double y) { return x - y; },
                 [](int64_t x, int64_t y) -> FailureOr<int64_t> { return wrapSub(x, y); });
  });
  e.add<MulOp>([](MulOp op, ArrayRef<Tensor> a) {
    return arith(op, a, [](double x, double y) { return x * y; },
                 [](int64_t x, int64_t y) -> FailureOr<int64_t> { return wrapMul(x, y); });
  });
  e.add<DivOp>([](DivOp op, ArrayRef<Tensor> a) {
    RoundingMode mode = op.getRoundingMode();
    Operation *raw = op;
    return arith(
        op, a,
        [mode](double x, double y) {
          switch (mode) {
          case RoundingMode::None: return x / y;
          case RoundingMode::Trunc: return std::trunc(x / y);
          case RoundingMode::Floor: return floorDivide(x, y);
          }
          return x / y;
        },
        [mode, raw](int64_t x, int64_t y) -> FailureOr<int64_t> {
          if (y == 0)
            return raw->emitOpError() << "integer division by zero";
          if (x == std::numeric_limits<int64_t>::min() && y == -1)
            return x; // wraps, as two's complement
          int64_t q = x / y;
          if (mode == RoundingMode::Floor && (x % y != 0) && ((x < 0) != (y < 0)))
            --q;
          return q;
        });
  });
  e.add<PowOp>([](PowOp op, ArrayRef<Tensor> a) {
    return arith(op, a, [](double x, double y) { return std::pow(x, y); },
                 [](int64_t x, int64_t y) -> FailureOr<int64_t> { return intPow(x, y); });
  });
  e.add<MaximumOp>([](MaximumOp op, ArrayRef<Tensor> a) {
    return arith(op, a, nanMax,
                 [](int64_t x, int64_t y) -> FailureOr<int64_t> { return std::max(x, y); });
  });
  e.add<MinimumOp>([](MinimumOp op, ArrayRef<Tensor> a) {
    return arith(op, a, nanMin,
                 [](int64_t x, int64_t y) -> FailureOr<int64_t> { return std::min(x, y); });
  });
  e.add<RemainderOp>([](RemainderOp op, ArrayRef<Tensor> a) {
    Operation *raw = op;
    return arith(op, a, floatRemainder,
                 [raw](int64_t x, int64_t y) -> FailureOr<int64_t> {
                   if (y == 0)
                     return raw->emitOpError() << "integer remainder by zero";
                   if (y == -1)
                     return 0;
                   int64_t m = x % y;
                   if (m != 0 && ((m < 0) != (y < 0)))
                     m += y;
                   return m;
                 });
  });

  e.add<FmodOp>([](FmodOp op, ArrayRef<Tensor> a) {
    Operation *raw = op;
    return arith(op, a, [](double x, double y) { return std::fmod(x, y); },
                 [raw](int64_t x, int64_t y) -> FailureOr<int64_t> {
                   if (y == 0)
                     return raw->emitOpError() << "integer fmod by zero";
                   return y == -1 ? 0 : x % y;
                 });
  });
  auto floatBinary = [&e](auto tag, double (*f)(double, double)) {
    using OpTy = decltype(tag);
    e.add<OpTy>([f](OpTy op, ArrayRef<Tensor> a) {
      return arith(op, a, f, [](int64_t, int64_t) -> FailureOr<int64_t> { return 0; });
    });
  };
  floatBinary(Atan2Op(), [](double y, double x) { return std::atan2(y, x); });
  floatBinary(HypotOp(), [](double x, double y) { return std::hypot(x, y); });
  floatBinary(CopysignOp(), [](double x, double y) { return std::copysign(x, y); });
  e.add<NextafterOp>([](NextafterOp op, ArrayRef<Tensor> a) {
    // In the element type's own precision: the next float32 is not the next double.
    bool single = resultDType(op) != DType::Float64;
    return arith(op, a,
                 [single](double x, double y) {
                   return single ? double(std::nextafter(float(x), float(y))) : std::nextafter(x, y);
                 },
                 [](int64_t, int64_t) -> FailureOr<int64_t> { return 0; });
  });
  e.add<FmaxOp>([](FmaxOp op, ArrayRef<Tensor> a) {
    return arith(op, a, [](double x, double y) { return std::fmax(x, y); },
                 [](int64_t x, int64_t y) -> FailureOr<int64_t> { return std::max(x, y); });
  });
  e.add<FminOp>([](FminOp op, ArrayRef<Tensor> a) {
    return arith(op, a, [](double x, double y) { return std::fmin(x, y); },
                 [](int64_t x, int64_t y) -> FailureOr<int64_t> { return std::min(x, y); });
  });
  auto bitwise = [&e](auto tag, int64_t (*f)(int64_t, int64_t)) {
    using OpTy = decltype(tag);
    e.add<OpTy>([f](OpTy op, ArrayRef<Tensor> a) {
      return arith(op, a, nullptr, [f](int64_t x, int64_t y) -> FailureOr<int64_t> { return f(x, y); });
    });
  };
  bitwise(BitwiseAndOp(), [](int64_t x, int64_t y) { return x & y; });
  bitwise(BitwiseOrOp(), [](int64_t x, int64_t y) { return x | y; });
  bitwise(BitwiseXorOp(), [](int64_t x, int64_t y) { return x ^ y; });
  // Shifts by the width or more, or by a negative amount: 0 to the left,
  // the sign to the right (PyTorch's kernels).
  e.add<ShiftLeftOp>([](ShiftLeftOp op, ArrayRef<Tensor> a) {
    int64_t bits = 8 * int64_t(::cuvil::dtypeSize(resultDType(op)));
    return arith(op, a, nullptr, [bits](int64_t x, int64_t y) -> FailureOr<int64_t> {
      return y < 0 || y >= bits ? 0 : int64_t(uint64_t(x) << y);
    });
  });
  e.add<ShiftRightOp>([](ShiftRightOp op, ArrayRef<Tensor> a) {
    int64_t bits = 8 * int64_t(::cuvil::dtypeSize(resultDType(op)));
    return arith(op, a, nullptr, [bits](int64_t x, int64_t y) -> FailureOr<int64_t> {
      return y < 0 || y >= bits ? (x < 0 ? -1 : 0) : x >> y;
    });
  });

  //===--------------------------------------------------------------------===//
  // Comparisons, logic, selection
  //===--------------------------------------------------------------------===//
  e.add<EqOp>([](EqOp op, ArrayRef<Tensor> a) {
    return compare(op, a, std::equal_to<double>(), std::equal_to<int64_t>());
  });
  e.add<NeOp>([](NeOp op, ArrayRef<Tensor> a) {
    return compare(op, a, std::not_equal_to<double>(), std::not_equal_to<int64_t>());
  });
  e.add<LtOp>([](LtOp op, ArrayRef<Tensor> a) {
    return compare(op, a, std::less<double>(), std::less<int64_t>());
  });
  e.add<LeOp>([](LeOp op, ArrayRef<Tensor> a) {
    return compare(op, a, std::less_equal<double>(), std::less_equal<int64_t>());
  });
  e.add<GtOp>([](GtOp op, ArrayRef<Tensor> a) {
    return compare(op, a, std::greater<double>(), std::greater<int64_t>());
  });
  e.add<GeOp>([](GeOp op, ArrayRef<Tensor> a) {
    return compare(op, a, std::greater_equal<double>(), std::greater_equal<int64_t>());
  });
  e.add<LogicalAndOp>([](LogicalAndOp op, ArrayRef<Tensor> a) {
    return logical(op, a, [](bool x, bool y) { return x && y; });
  });
  e.add<LogicalOrOp>([](LogicalOrOp op, ArrayRef<Tensor> a) {
    return logical(op, a, [](bool x, bool y) { return x || y; });
  });
  e.add<LogicalXorOp>([](LogicalXorOp op, ArrayRef<Tensor> a) {
    return logical(op, a, [](bool x, bool y) { return x != y; });
  });
  e.add<LogicalNotOp>([](LogicalNotOp op, ArrayRef<Tensor> a) -> FailureOr<Tensor> {
    FailureOr<Tensor> r = allocate(op, DType::Bool, a[0].shape());
    if (failed(r))
      return failure();
    for (int64_t i = 0; i < a[0].numElements(); ++i)
      r->setInt(i, a[0].getDouble(i) == 0.0);
    return r;
  });
  e.add<WhereOp>([](WhereOp op, ArrayRef<Tensor> a) -> FailureOr<Tensor> {
    FailureOr<Shape> tf = broadcastRuntime(op, a[1].shape(), a[2].shape());
    if (failed(tf))
      return failure();
    FailureOr<Shape> shape = broadcastRuntime(op, a[0].shape(), *tf);
    if (failed(shape))
      return failure();
    DType out = resultDType(op);
    FailureOr<Tensor> r = allocate(op, out, *shape);
    if (failed(r))
      return failure();
    Tensor t = a[1].cast(out), f = a[2].cast(out);
    std::vector<int64_t> mc = broadcastIndexMap(*shape, a[0].shape());
    std::vector<int64_t> mt = broadcastIndexMap(*shape, t.shape());
    std::vector<int64_t> mf = broadcastIndexMap(*shape, f.shape());
    size_t esz = ::cuvil::dtypeSize(out);
    for (int64_t i = 0; i < r->numElements(); ++i) {
      const Tensor &src = a[0].getInt(mc[i]) ? t : f;
      int64_t j = a[0].getInt(mc[i]) ? mt[i] : mf[i];
      std::memcpy(r->data() + i * esz, src.data() + j * esz, esz);
    }
    return r;
  });
}

} // namespace mlir::cuvil::reference
