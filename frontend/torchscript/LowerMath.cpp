//===- LowerMath.cpp - Element-wise math beyond the basics ----------------===//
//
// Trigonometric, hyperbolic and exponential functions, bitwise operators,
// and the element-wise functions PyTorch defines as formulas (logaddexp,
// xlogy, lerp, nan_to_num, the shrink and unit activations, ...), composed
// from cuvil ops exactly as PyTorch's kernels compute them, NaN and the
// infinities included. Python scalars take part with PyTorch's promotion
// (a scalar never widens a tensor of its own kind).
//
//===----------------------------------------------------------------------===//
#include "frontend/torchscript/LowerHelpers.h"

#include "dialects/Cuvil/IR/TypeRules.h"

#include <cmath>
#include <limits>

namespace cuvil::torchscript {
namespace {

using namespace lower;

/// The two operands of a binary function, either of which may be a Python
/// scalar (the `Scalar_Tensor` overloads put it first).
std::pair<Value, Value> operands(Interpreter &in, const Args &a, const char *lhs, const char *rhs) {
  const IValue &x = a[lhs], &y = a[rhs];
  if (x.isTensor())
    return {x.tensor->value, operand(in, y, x.tensor->value)};
  if (!y.isTensor())
    in.fail("CUVIL-E-IMPORT-TYPE", "expected a tensor operand");
  return {operand(in, x, y.tensor->value), y.tensor->value};
}

/// PyTorch's result dtype of the two operands.
DType promoted(Value x, Value y) {
  return dtypeOfElement(mlir::cuvil::resultElementType(mlir::TypeRange{x.getType(), y.getType()}));
}

/// Both operands in their promoted type, a float type (float32 for
/// integers), as PyTorch's float-only binary functions take them.
std::pair<Value, Value> floatOperands(Interpreter &in, Value x, Value y) {
  DType d = promoted(x, y);
  if (!isFloat(d))
    d = DType::Float32;
  return {cast(in, x, d), cast(in, y, d)};
}

Value constantLike(Interpreter &in, Value like, double v) {
  return in.scalarConstant(IValue::floating(v), dtypeOf(like));
}

Value isNan(Interpreter &in, Value x) { return in.build<cir::NeOp>(x, x); }

/// x == +inf or -inf (never for integers).
Value isInf(Interpreter &in, Value x) {
  return in.build<cir::EqOp>(in.build<cir::AbsOp>(x),
                             constantLike(in, x, std::numeric_limits<double>::infinity()));
}

Value where(Interpreter &in, Value c, Value x, Value y) { return in.build<cir::WhereOp>(c, x, y); }

Value allOf(Interpreter &in, Value x, bool value) {
  std::vector<int64_t> shape(typeOf(x).getShape().begin(), typeOf(x).getShape().end());
  return splat(in, shape, DType::Bool, IValue::boolean(value));
}

template <typename OpTy> Value floatBinary(Interpreter &in, Value x, Value y) {
  auto [fx, fy] = floatOperands(in, x, y);
  return in.build<OpTy>(fx, fy);
}

/// Registers NAME(self, other) and NAME_ with `fn` on the two operands.
void binaryFn(Table &t, const std::string &name,
              std::function<Value(Interpreter &, Value, Value)> fn, const char *other = "other") {
  std::string o = other;
  t[name] = [fn, o](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    auto [x, y] = operands(in, a, "self", o.c_str());
    return ret(fn(in, x, y));
  };
  t[name + "_"] = [fn, o](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    auto [x, y] = operands(in, a, "self", o.c_str());
    return inplace(in, a["self"], fn(in, x, y));
  };
}

/// Registers a unary NAME and NAME_ computed by `fn`.
void unaryFn(Table &t, const std::string &name, std::function<Value(Interpreter &, const Args &, Value)> fn) {
  t[name] = [fn](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    return ret(fn(in, a, a.t("self")));
  };
  t[name + "_"] = [fn](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    return inplace(in, a["self"], fn(in, a, a.t("self")));
  };
}

void registerTranscendental(Table &t) {
  unaryFloat<cir::TanOp>(t, "aten::tan");
  unaryFloat<cir::AsinOp>(t, "aten::asin");
  unaryFloat<cir::AcosOp>(t, "aten::acos");
  unaryFloat<cir::AtanOp>(t, "aten::atan");
  unaryFloat<cir::SinhOp>(t, "aten::sinh");
  unaryFloat<cir::CoshOp>(t, "aten::cosh");
  unaryFloat<cir::AsinhOp>(t, "aten::asinh");
  unaryFloat<cir::AcoshOp>(t, "aten::acosh");
  unaryFloat<cir::AtanhOp>(t, "aten::atanh");
  unaryFloat<cir::AsinOp>(t, "aten::arcsin");
  unaryFloat<cir::AcosOp>(t, "aten::arccos");
  unaryFloat<cir::AtanOp>(t, "aten::arctan");
  unaryFloat<cir::AsinhOp>(t, "aten::arcsinh");
  unaryFloat<cir::AcoshOp>(t, "aten::arccosh");
  unaryFloat<cir::AtanhOp>(t, "aten::arctanh");
  unaryFloat<cir::Log2Op>(t, "aten::log2");
  unaryFloat<cir::Log10Op>(t, "aten::log10");
  unaryFloat<cir::Exp2Op>(t, "aten::exp2");
  unaryFloat<cir::Exp2Op>(t, "aten::special_exp2", false);
  unaryFloat<cir::ErfcOp>(t, "aten::erfc");
  unaryFloat<cir::ErfcOp>(t, "aten::special_erfc", false);
  unaryFloat<cir::LgammaOp>(t, "aten::lgamma");
  unaryFloat<cir::LgammaOp>(t, "aten::special_gammaln", false);
  unaryFloat<cir::Expm1Op>(t, "aten::special_expm1", false);
  unaryFloat<cir::Log1pOp>(t, "aten::special_log1p", false);
  unaryFloat<cir::ErfOp>(t, "aten::special_erf", false);
  unaryFloat<cir::SigmoidOp>(t, "aten::special_expit", false);
  // Integers are whole already: trunc keeps them.
  unaryFn(t, "aten::trunc", [](Interpreter &in, const Args &, Value x) {
    return isFloat(dtypeOf(x)) ? in.build<cir::TruncOp>(x) : x;
  });
  unaryFn(t, "aten::fix", [](Interpreter &in, const Args &, Value x) {
    return isFloat(dtypeOf(x)) ? in.build<cir::TruncOp>(x) : x;
  });
  unaryFn(t, "aten::frac", [](Interpreter &in, const Args &, Value x) {
    return in.build<cir::SubOp>(x, in.build<cir::TruncOp>(x));
  });
  // square is pow(x, 2): bools become int64.
  unaryFn(t, "aten::square", [](Interpreter &in, const Args &, Value x) {
    if (dtypeOf(x) == DType::Bool)
      x = cast(in, x, DType::Int64);
    return in.build<cir::MulOp>(x, x);
  });
  unaryFn(t, "aten::deg2rad", [](Interpreter &in, const Args &, Value x) {
    x = floatOperand(in, x);
    return in.build<cir::MulOp>(x, constantLike(in, x, M_PI / 180.0));
  });
  unaryFn(t, "aten::rad2deg", [](Interpreter &in, const Args &, Value x) {
    x = floatOperand(in, x);
    return in.build<cir::MulOp>(x, constantLike(in, x, 180.0 / M_PI));
  });
  // sinc(x) = sin(pi x) / (pi x), 1 at 0.
  auto sinc = [](Interpreter &in, const Args &, Value x) {
    x = floatOperand(in, x);
    Value px = in.build<cir::MulOp>(x, constantLike(in, x, M_PI));
    Value r = in.build<cir::DivOp>(in.build<cir::SinOp>(px), px,
                                   cir::RoundingModeAttr::get(in.context(), cir::RoundingMode::None));
    return where(in, in.build<cir::EqOp>(x, constantLike(in, x, 0.0)), constantLike(in, x, 1.0), r);
  };
  unaryFn(t, "aten::sinc", sinc);
  unaryFn(t, "aten::special_sinc", sinc);
  // logit(x, eps) = log(x / (1 - x)), x clamped to [eps, 1 - eps] first.
  unaryFn(t, "aten::logit", [](Interpreter &in, const Args &a, Value x) {
    x = floatOperand(in, x);
    if (a.a.has("eps") && !a.none("eps")) {
      double eps = a.f("eps");
      x = in.build<cir::ClampOp>(x, f64(in, eps), f64(in, 1.0 - eps));
    }
    Value oneMinus = in.build<cir::SubOp>(constantLike(in, x, 1.0), x);
    return in.build<cir::LogOp>(in.build<cir::DivOp>(
        x, oneMinus, cir::RoundingModeAttr::get(in.context(), cir::RoundingMode::None)));
  });
}

void registerBinaryMath(Table &t) {
  binaryFn(t, "aten::atan2", floatBinary<cir::Atan2Op>);
  binaryFn(t, "aten::arctan2", floatBinary<cir::Atan2Op>);
  binaryFn(t, "aten::hypot", floatBinary<cir::HypotOp>);
  binaryFn(t, "aten::copysign", floatBinary<cir::CopysignOp>);
  binaryFn(t, "aten::nextafter", floatBinary<cir::NextafterOp>);
  binaryFn(t, "aten::fmax", [](Interpreter &in, Value x, Value y) { return in.build<cir::FmaxOp>(x, y); });
  binaryFn(t, "aten::fmin", [](Interpreter &in, Value x, Value y) { return in.build<cir::FminOp>(x, y); });
  binaryFn(t, "aten::fmod", [](Interpreter &in, Value x, Value y) { return in.build<cir::FmodOp>(x, y); });
  auto bitwise = [&t](const std::string &name, const std::string &dunder, auto tag) {
    using OpTy = decltype(tag);
    auto fn = [](Interpreter &in, Value x, Value y) { return in.build<OpTy>(x, y); };
    binaryFn(t, "aten::" + name, fn);
    binaryFn(t, "aten::__" + dunder + "__", fn);
    binaryFn(t, "aten::__i" + dunder + "__", fn);
  };
  bitwise("bitwise_and", "and", cir::BitwiseAndOp());
  bitwise("bitwise_or", "or", cir::BitwiseOrOp());
  bitwise("bitwise_xor", "xor", cir::BitwiseXorOp());
  bitwise("bitwise_left_shift", "lshift", cir::ShiftLeftOp());
  bitwise("bitwise_right_shift", "rshift", cir::ShiftRightOp());

  // logaddexp(a, b) = max + log1p(exp(-|a - b|)); equal infinities give
  // themselves (their difference would be NaN).
  auto logaddexp = [](bool base2) {
    return [base2](Interpreter &in, Value x, Value y) {
      auto [a, b] = floatOperands(in, x, y);
      Value m = in.build<cir::MaximumOp>(a, b);
      Value d = in.build<cir::NegOp>(in.build<cir::AbsOp>(in.build<cir::SubOp>(a, b)));
      Value r = base2 ? in.build<cir::DivOp>(in.build<cir::Log1pOp>(in.build<cir::Exp2Op>(d)),
                                            constantLike(in, a, M_LN2),
                                            cir::RoundingModeAttr::get(in.context(), cir::RoundingMode::None))
                      : in.build<cir::Log1pOp>(in.build<cir::ExpOp>(d));
      Value sameInf = in.build<cir::LogicalAndOp>(isInf(in, a), in.build<cir::EqOp>(a, b));
      return where(in, sameInf, a, in.build<cir::AddOp>(m, r));
    };
  };
  binaryFn(t, "aten::logaddexp", logaddexp(false));
  binaryFn(t, "aten::logaddexp2", logaddexp(true));
  // xlogy(x, y) = x * log(y), 0 where x == 0, NaN where y is NaN.
  auto xlogy = [](bool log1p) {
    return [log1p](Interpreter &in, Value x, Value y) {
      auto [a, b] = floatOperands(in, x, y);
      Value lg = log1p ? in.build<cir::Log1pOp>(b) : in.build<cir::LogOp>(b);
      Value r = where(in, in.build<cir::EqOp>(a, constantLike(in, a, 0.0)), constantLike(in, a, 0.0),
                      in.build<cir::MulOp>(a, lg));
      return where(in, isNan(in, b), constantLike(in, a, std::nan("")), r);
    };
  };
  binaryFn(t, "aten::xlogy", xlogy(false));
  binaryFn(t, "aten::special_xlogy", xlogy(false));
  binaryFn(t, "aten::special_xlog1py", xlogy(true));
  // heaviside(x, values): 0 below zero, 1 above, `values` at zero.
  binaryFn(
      t, "aten::heaviside",
      [](Interpreter &in, Value x, Value v) {
        DType d = promoted(x, v);
        Value xc = cast(in, x, d);
        Value zero = in.scalarConstant(IValue::integer(0), d), one = in.scalarConstant(IValue::integer(1), d);
        Value step = where(in, in.build<cir::GtOp>(xc, zero), one, zero);
        return where(in, in.build<cir::EqOp>(xc, zero), cast(in, v, d), step);
      },
      "values");
  // ldexp(x, e) = x * 2^e (a float result); float_power in float64.
  binaryFn(t, "aten::ldexp", [](Interpreter &in, Value x, Value e) {
    auto [fx, fe] = floatOperands(in, x, e);
    return in.build<cir::MulOp>(fx, in.build<cir::Exp2Op>(fe));
  });
  binaryFn(
      t, "aten::float_power",
      [](Interpreter &in, Value x, Value y) {
        return in.build<cir::PowOp>(cast(in, x, DType::Float64), cast(in, y, DType::Float64));
      },
      "exponent");
}

void registerPredicates(Table &t) {
  auto predicate = [&t](const std::string &name, std::function<Value(Interpreter &, Value)> fn) {
    t[name] = [fn](Interpreter &in, const BoundArgs &b) { return ret(fn(in, Args{in, b}.t("self"))); };
  };
  predicate("aten::isnan", [](Interpreter &in, Value x) {
    return isFloat(dtypeOf(x)) ? isNan(in, x) : allOf(in, x, false);
  });
  predicate("aten::isinf", [](Interpreter &in, Value x) {
    return isFloat(dtypeOf(x)) ? isInf(in, x) : allOf(in, x, false);
  });
  predicate("aten::isposinf", [](Interpreter &in, Value x) {
    return isFloat(dtypeOf(x)) ? in.build<cir::EqOp>(x, constantLike(in, x, INFINITY)) : allOf(in, x, false);
  });
  predicate("aten::isneginf", [](Interpreter &in, Value x) {
    return isFloat(dtypeOf(x)) ? in.build<cir::EqOp>(x, constantLike(in, x, -INFINITY)) : allOf(in, x, false);
  });
  // |x| < inf is false for NaN and the infinities.
  predicate("aten::isfinite", [](Interpreter &in, Value x) {
    return isFloat(dtypeOf(x)) ? in.build<cir::LtOp>(in.build<cir::AbsOp>(x), constantLike(in, x, INFINITY))
                               : allOf(in, x, true);
  });
  predicate("aten::isreal", [](Interpreter &in, Value x) { return allOf(in, x, true); });
  // The sign bit, -0.0 and -NaN included.
  predicate("aten::signbit", [](Interpreter &in, Value x) {
    if (!isFloat(dtypeOf(x)))
      return dtypeOf(x) == DType::Bool || dtypeOf(x) == DType::UInt8
                 ? allOf(in, x, false)
                 : in.build<cir::LtOp>(x, in.scalarConstant(IValue::integer(0), dtypeOf(x)));
    Value one = in.build<cir::CopysignOp>(constantLike(in, x, 1.0), x);
    return in.build<cir::LtOp>(one, constantLike(in, x, 0.0));
  });
  // Real tensors are their own conjugate, real part, and positive.
  for (const char *name : {"aten::positive", "aten::conj", "aten::conj_physical", "aten::resolve_conj",
                           "aten::resolve_neg", "aten::real"})
    t[name] = [](Interpreter &in, const BoundArgs &b) { return Args{in, b}["self"]; };
  // sgn is sign for real tensors; of a bool, itself.
  unaryFn(t, "aten::sgn", [](Interpreter &in, const Args &, Value x) {
    return dtypeOf(x) == DType::Bool ? x : in.build<cir::SignOp>(x);
  });
}

/// The greatest finite value of a float dtype.
double largest(DType d) {
  switch (d) {
  case DType::Float16: return 65504.0;
  case DType::BFloat16: return 3.3895313892515355e38;
  case DType::Float32: return std::numeric_limits<float>::max();
  default: return std::numeric_limits<double>::max();
  }
}

void registerFormulas(Table &t) {
  // nan_to_num: NaN to `nan` (0), +-inf to `posinf`/`neginf` (the dtype's
  // largest finite values by default).
  unaryFn(t, "aten::nan_to_num", [](Interpreter &in, const Args &a, Value x) {
    if (!isFloat(dtypeOf(x)))
      return x;
    double big = largest(dtypeOf(x));
    double nan = a.none("nan") ? 0.0 : a.f("nan");
    double pos = a.none("posinf") ? big : a.f("posinf");
    double neg = a.none("neginf") ? -big : a.f("neginf");
    Value r = where(in, isNan(in, x), constantLike(in, x, nan), x);
    r = where(in, in.build<cir::EqOp>(x, constantLike(in, x, INFINITY)), constantLike(in, x, pos), r);
    return where(in, in.build<cir::EqOp>(x, constantLike(in, x, -INFINITY)), constantLike(in, x, neg), r);
  });
  // lerp(start, end, w): start + w (end - start) for |w| < 0.5, else
  // end - (end - start)(1 - w), as PyTorch computes it.
  auto lerp = [](Interpreter &in, const Args &a) {
    Value start = a.t("self"), end = a.t("end");
    Value w = operand(in, a["weight"], start);
    Value diff = in.build<cir::SubOp>(end, start);
    Value low = in.build<cir::AddOp>(start, in.build<cir::MulOp>(w, diff));
    Value high = in.build<cir::SubOp>(
        end, in.build<cir::MulOp>(diff, in.build<cir::SubOp>(constantLike(in, w, 1.0), w)));
    Value small = in.build<cir::LtOp>(in.build<cir::AbsOp>(w), constantLike(in, w, 0.5));
    return where(in, small, low, high);
  };
  t["aten::lerp"] = [lerp](Interpreter &in, const BoundArgs &b) { return ret(lerp(in, Args{in, b})); };
  t["aten::lerp_"] = [lerp](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    return inplace(in, a["self"], lerp(in, a));
  };
  // addcmul / addcdiv: self + value * t1 * t2 (or / t2).
  auto addc = [](bool divide) {
    return [divide](Interpreter &in, const Args &a) {
      Value self = a.t("self"), t1 = a.t("tensor1"), t2 = a.t("tensor2");
      Value p = divide ? in.build<cir::DivOp>(t1, t2, cir::RoundingModeAttr::get(in.context(), cir::RoundingMode::None))
                       : in.build<cir::MulOp>(t1, t2);
      // `value` in the product's type (truncated for integers), as PyTorch.
      if (!(a["value"].is(K::Int) && a["value"].i == 1) && !(a["value"].is(K::Float) && a["value"].f == 1.0))
        p = in.build<cir::MulOp>(p, in.scalarConstant(a["value"], dtypeOf(p)));
      return in.build<cir::AddOp>(self, p);
    };
  };
  for (bool divide : {false, true}) {
    std::string name = divide ? "aten::addcdiv" : "aten::addcmul";
    auto fn = addc(divide);
    t[name] = [fn](Interpreter &in, const BoundArgs &b) { return ret(fn(in, Args{in, b})); };
    t[name + "_"] = [fn](Interpreter &in, const BoundArgs &b) {
      Args a{in, b};
      return inplace(in, a["self"], fn(in, a));
    };
  }
}

/// where(x > threshold, x, value) and the shrink functions.
void registerActivations(Table &t) {
  unaryFn(t, "aten::threshold", [](Interpreter &in, const Args &a, Value x) {
    return where(in, in.build<cir::GtOp>(x, scalarOperand(in, a["threshold"], x)), x,
                 scalarOperand(in, a["value"], x));
  });
  unaryFn(t, "aten::hardshrink", [](Interpreter &in, const Args &a, Value x) {
    Value l = scalarOperand(in, a["lambd"], x);
    Value inside = in.build<cir::LogicalAndOp>(in.build<cir::GeOp>(x, in.build<cir::NegOp>(l)),
                                               in.build<cir::LeOp>(x, l));
    return where(in, inside, constantLike(in, x, 0.0), x);
  });
  unaryFn(t, "aten::softshrink", [](Interpreter &in, const Args &a, Value x) {
    Value l = scalarOperand(in, a["lambd"], x);
    Value r = where(in, in.build<cir::LtOp>(x, in.build<cir::NegOp>(l)), in.build<cir::AddOp>(x, l),
                    constantLike(in, x, 0.0));
    return where(in, in.build<cir::GtOp>(x, l), in.build<cir::SubOp>(x, l), r);
  });
  // log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)), stable at both ends.
  unaryFn(t, "aten::log_sigmoid", [](Interpreter &in, const Args &, Value x) {
    x = floatOperand(in, x);
    Value m = in.build<cir::MinimumOp>(x, constantLike(in, x, 0.0));
    return in.build<cir::SubOp>(
        m, in.build<cir::Log1pOp>(in.build<cir::ExpOp>(in.build<cir::NegOp>(in.build<cir::AbsOp>(x)))));
  });
  // elu with scale and input_scale: scale * (x > 0 ? x : alpha * expm1(x * input_scale)).
  auto scaledElu = [](Interpreter &in, Value x, double alpha, double scale, double inputScale) {
    x = floatOperand(in, x);
    Value neg = in.build<cir::MulOp>(
        constantLike(in, x, alpha * scale),
        in.build<cir::Expm1Op>(in.build<cir::MulOp>(x, constantLike(in, x, inputScale))));
    Value pos = scale == 1.0 ? x : in.build<cir::MulOp>(x, constantLike(in, x, scale));
    return where(in, in.build<cir::GtOp>(x, constantLike(in, x, 0.0)), pos, neg);
  };
  unaryFn(t, "aten::selu", [scaledElu](Interpreter &in, const Args &, Value x) {
    return scaledElu(in, x, 1.6732632423543772848170429916717, 1.0507009873554804934193349852946, 1.0);
  });
  unaryFn(t, "aten::celu", [scaledElu](Interpreter &in, const Args &a, Value x) {
    double alpha = a.f("alpha");
    return scaledElu(in, x, alpha, 1.0, 1.0 / alpha);
  });
  // Evaluation-mode rrelu: a leaky relu with the mean slope.
  t["aten::rrelu"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    if (a.b("training"))
      return in.unsupported("rrelu in training mode (random slopes)");
    double slope = (a.f("lower") + a.f("upper")) / 2.0;
    return ret(in.build<cir::LeakyReluOp>(floatOperand(in, a.t("self")), f64(in, slope)));
  };
  // glu(x, dim): the first half times the sigmoid of the second.
  t["aten::glu"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = a.t("self");
    int64_t dim = wrapDim(in, a.i("dim"), rankOf(x));
    int64_t n = typeOf(x).getDimSize(dim);
    if (mlir::ShapedType::isDynamic(n) || n % 2 != 0)
      in.fail("CUVIL-E-IMPORT-RAISE", "Halving dimension must be even, but dimension " + std::to_string(dim) +
                                          " is size " + std::to_string(n));
    auto half = [&](int64_t part) {
      return in.build<cir::SliceOp>(x, i64(in, dim), i64(in, part * n / 2), i64(in, (part + 1) * n / 2),
                                    i64(in, 1));
    };
    return ret(in.build<cir::MulOp>(half(0), in.build<cir::SigmoidOp>(half(1))));
  };
  // prelu(x, w): x where x > 0, else w * x, w per channel (dim 1).
  t["aten::prelu"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = a.t("self"), w = a.t("weight");
    int64_t channels = typeOf(w).getNumElements();
    if (rankOf(x) >= 2 && channels > 1) {
      std::vector<int64_t> shape(rankOf(x) - 1, 1);
      shape[0] = channels;
      w = in.build<cir::ReshapeOp>(w, i64s(in, shape));
    }
    return ret(where(in, in.build<cir::GtOp>(x, constantLike(in, x, 0.0)), x, in.build<cir::MulOp>(w, x)));
  };
}

/// torch.special's functions the runtime computes (cuvil.math.special and
/// special2), under their torch.* and torch.special.* names.
void registerSpecialFunctions(Table &t) {
  auto unary = [&t](const std::string &fn, std::initializer_list<const char *> names) {
    for (const char *name : names) {
      t[name] = [fn](Interpreter &in, const BoundArgs &b) {
        Args a{in, b};
        return ret(in.build<cir::SpecialOp>(floatOperand(in, a.t("self")), in.builder().getStringAttr(fn)));
      };
      t[std::string(name) + "_"] = [fn](Interpreter &in, const BoundArgs &b) {
        Args a{in, b};
        return inplace(in, a["self"],
                       in.build<cir::SpecialOp>(floatOperand(in, a.t("self")), in.builder().getStringAttr(fn)));
      };
    }
  };
  unary("digamma", {"aten::digamma", "aten::special_digamma", "aten::special_psi"});
  unary("erfinv", {"aten::erfinv", "aten::special_erfinv"});
  unary("i0", {"aten::i0", "aten::special_i0"});
  for (const char *fn : {"i0e", "i1", "i1e", "ndtr", "ndtri", "log_ndtr", "erfcx", "entr", "bessel_j0",
                         "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0", "modified_bessel_i1",
                         "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0",
                         "scaled_modified_bessel_k1", "spherical_bessel_j0", "airy_ai"}) {
    std::string name = std::string("aten::special_") + fn;
    t[name] = [f = std::string(fn)](Interpreter &in, const BoundArgs &b) {
      Args a{in, b};
      const char *x = b.has("self") ? "self" : "x";
      return ret(in.build<cir::SpecialOp>(floatOperand(in, a.t(x)), in.builder().getStringAttr(f)));
    };
  }
  // Two arguments, either of which may be a Python number.
  auto binary = [&t](const std::string &fn, const std::string &name, const char *lhs, const char *rhs) {
    t[name] = [fn, lhs, rhs](Interpreter &in, const BoundArgs &b) {
      Args a{in, b};
      auto [x, y] = operands(in, a, lhs, rhs);
      auto [fx, fy] = floatOperands(in, x, y);
      return ret(in.build<cir::Special2Op>(fx, fy, in.builder().getStringAttr(fn)));
    };
  };
  binary("zeta", "aten::special_zeta", "self", "other");
  binary("igamma", "aten::igamma", "self", "other");
  binary("igamma", "aten::special_gammainc", "self", "other");
  binary("igammac", "aten::igammac", "self", "other");
  binary("igammac", "aten::special_gammaincc", "self", "other");
  for (const char *fn : {"chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
                         "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
                         "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
                         "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
                         "laguerre_polynomial_l", "legendre_polynomial_p"}) {
    binary(fn, std::string("aten::special_") + fn, "x", "n");
  }
  // An integer order first or second: polygamma(n, x), mvlgamma(x, p).
  for (const char *name : {"aten::polygamma", "aten::special_polygamma"})
    t[name] = [](Interpreter &in, const BoundArgs &b) {
      Args a{in, b};
      if (a.i("n") < 0)
        in.fail("CUVIL-E-IMPORT-RAISE", "polygamma(n, x) does not support negative n");
      Value x = floatOperand(in, a.t("self"));
      Value n = in.scalarConstant(IValue::floating(double(a.i("n"))), dtypeOf(x));
      return ret(in.build<cir::Special2Op>(n, x, in.builder().getStringAttr("polygamma")));
    };
  for (const char *name : {"aten::mvlgamma", "aten::special_multigammaln"})
    t[name] = [](Interpreter &in, const BoundArgs &b) {
      Args a{in, b};
      if (a.i("p") < 1)
        in.fail("CUVIL-E-IMPORT-RAISE", "mvlgamma: p has to be greater than or equal to 1");
      Value x = floatOperand(in, a.t("self"));
      Value p = in.scalarConstant(IValue::floating(double(a.i("p"))), dtypeOf(x));
      return ret(in.build<cir::Special2Op>(x, p, in.builder().getStringAttr("mvlgamma")));
    };
}

} // namespace

void registerMathHandlers(std::map<std::string, OpHandler> &table) {
  registerSpecialFunctions(table);
  registerTranscendental(table);
  registerBinaryMath(table);
  registerPredicates(table);
  registerFormulas(table);
  registerActivations(table);
}

} // namespace cuvil::torchscript
