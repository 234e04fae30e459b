//===- LowerOps.cpp - aten tensor operators to the cuvil dialect ----------===//
//
// One handler per aten operator name; the schema has already bound the
// arguments (overloads, defaults, int[N] broadcasting). Handlers translate
// PyTorch's calling conventions (negative dims, Python scalars, optional
// dtypes, in-place variants, views) into cuvil ops, whose own shape rules
// then check the operands. Adding an operator: one entry here and a test.
//
//===----------------------------------------------------------------------===//
#include "frontend/torchscript/LowerHelpers.h"

#include "dialects/Cuvil/IR/CuvilOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/IRMapping.h"

#include <cmath>
#include <limits>

namespace cir = mlir::cuvil;

namespace cuvil::torchscript {

IValue viewOf(const IValue &base, mlir::Value v) {
  auto box = std::make_shared<TensorBox>();
  box->value = v;
  std::shared_ptr<TensorBox> root = base.tensor->base ? base.tensor->base : base.tensor;
  box->base = root;
  root->views.push_back(box);
  return IValue::ofTensor(box);
}

namespace {

std::vector<int64_t> rowMajorStrides(llvm::ArrayRef<int64_t> shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t i = int64_t(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * std::max<int64_t>(shape[i + 1], 1);
  return strides;
}

/// PyTorch's computeStride: the strides of `newShape` viewing memory laid
/// out as (oldShape, oldStrides), or nothing when no view can (reshape then
/// copies, view raises).
std::optional<std::vector<int64_t>> viewStridesAs(llvm::ArrayRef<int64_t> oldShape,
                                                  llvm::ArrayRef<int64_t> oldStrides,
                                                  llvm::ArrayRef<int64_t> newShape) {
  int64_t numel = 1;
  for (int64_t d : oldShape)
    numel *= d;
  if (oldShape.empty() || numel == 0)
    return rowMajorStrides(newShape);
  std::vector<int64_t> newStrides(newShape.size(), 0);
  int64_t viewD = int64_t(newShape.size()) - 1;
  int64_t chunkBaseStride = oldStrides.back();
  int64_t tensorNumel = 1, viewNumel = 1;
  for (int64_t tensorD = int64_t(oldShape.size()) - 1; tensorD >= 0; --tensorD) {
    tensorNumel *= oldShape[tensorD];
    if (tensorD == 0 ||
        (oldShape[tensorD - 1] != 1 && oldStrides[tensorD - 1] != tensorNumel * chunkBaseStride)) {
      while (viewD >= 0 && (viewNumel < tensorNumel || newShape[viewD] == 1)) {
        newStrides[viewD] = viewNumel * chunkBaseStride;
        viewNumel *= newShape[viewD];
        --viewD;
      }
      if (viewNumel != tensorNumel)
        return std::nullopt;
      if (tensorD > 0) {
        chunkBaseStride = oldStrides[tensorD - 1];
        tensorNumel = 1;
        viewNumel = 1;
      }
    }
  }
  if (viewD != -1)
    return std::nullopt;
  return newStrides;
}

bool isStaticShape(llvm::ArrayRef<int64_t> shape) {
  return llvm::all_of(shape, [](int64_t d) { return d >= 0; });
}

} // namespace

std::optional<std::vector<mlir::Operation *>> viewChain(const TensorBox &view) {
  std::vector<mlir::Operation *> chain;
  for (mlir::Value cur = view.value; cur != view.base->value;) {
    mlir::Operation *def = cur.getDefiningOp();
    if (!def || def->getNumOperands() < 1 || chain.size() > 256)
      return std::nullopt;
    chain.push_back(def);
    cur = def->getOperand(0);
  }
  return chain;
}

std::optional<std::vector<int64_t>> tensorStrides(const IValue &t) {
  const TensorBox &box = *t.tensor;
  llvm::ArrayRef<int64_t> shape = mlir::cast<mlir::RankedTensorType>(box.value.getType()).getShape();
  if (!isStaticShape(shape))
    return std::nullopt;
  if (!box.base)
    return rowMajorStrides(shape); // a tensor of its own: PyTorch's results are contiguous
  // The view ops from the base, replayed on its strides.
  std::optional<std::vector<mlir::Operation *>> chain = viewChain(box);
  if (!chain)
    return std::nullopt;
  llvm::ArrayRef<int64_t> baseShape = mlir::cast<mlir::RankedTensorType>(box.base->value.getType()).getShape();
  if (!isStaticShape(baseShape))
    return std::nullopt;
  std::vector<int64_t> strides = rowMajorStrides(baseShape);
  for (auto it = chain->rbegin(); it != chain->rend(); ++it) {
    mlir::Operation *op = *it;
    llvm::ArrayRef<int64_t> in = mlir::cast<mlir::RankedTensorType>(op->getOperand(0).getType()).getShape();
    llvm::ArrayRef<int64_t> out = mlir::cast<mlir::RankedTensorType>(op->getResult(0).getType()).getShape();
    if (!isStaticShape(out))
      return std::nullopt;
    if (llvm::isa<cir::ReshapeOp, cir::FlattenOp, cir::SqueezeOp, cir::UnsqueezeOp>(op)) {
      std::optional<std::vector<int64_t>> s = viewStridesAs(in, strides, out);
      if (!s)
        return std::nullopt;
      strides = std::move(*s);
    } else if (auto p = llvm::dyn_cast<cir::PermuteOp>(op)) {
      std::vector<int64_t> next;
      for (int64_t d : p.getDims())
        next.push_back(strides[size_t(d)]);
      strides = std::move(next);
    } else if (auto tr = llvm::dyn_cast<cir::TransposeOp>(op)) {
      int64_t rank = int64_t(strides.size());
      int64_t d0 = (tr.getDim0() + rank) % std::max<int64_t>(rank, 1), d1 = (tr.getDim1() + rank) % std::max<int64_t>(rank, 1);
      std::swap(strides[size_t(d0)], strides[size_t(d1)]);
    } else if (auto sl = llvm::dyn_cast<cir::SliceOp>(op)) {
      int64_t rank = int64_t(strides.size());
      strides[size_t((sl.getDim() + rank) % rank)] *= sl.getStep();
    } else if (auto se = llvm::dyn_cast<cir::SelectOp>(op)) {
      int64_t rank = int64_t(strides.size());
      strides.erase(strides.begin() + (se.getDim() + rank) % rank);
    } else if (llvm::isa<cir::ExpandOp>(op)) {
      std::vector<int64_t> next(out.size(), 0);
      size_t lead = out.size() - in.size();
      for (size_t i = 0; i < in.size(); ++i)
        next[lead + i] = in[i] == out[lead + i] ? strides[i] : 0;
      strides = std::move(next);
    } else {
      return std::nullopt;
    }
    if (strides.size() != out.size())
      return std::nullopt;
  }
  return strides;
}

bool isContiguousLayout(const IValue &t) {
  std::optional<std::vector<int64_t>> strides = tensorStrides(t);
  if (!strides)
    return true; // unknown (dynamic sizes): as before, an alias
  llvm::ArrayRef<int64_t> shape = mlir::cast<mlir::RankedTensorType>(t.tensor->value.getType()).getShape();
  int64_t expected = 1;
  for (int64_t i = int64_t(shape.size()) - 1; i >= 0; --i) {
    if (shape[i] == 0)
      return true;
    if (shape[i] != 1 && (*strides)[size_t(i)] != expected)
      return false;
    expected *= shape[i];
  }
  return true;
}

namespace {

using namespace lower;
using mlir::RankedTensorType;
using mlir::Value;
using K = IValue::Kind;

/// The [out, in] matrix of one axis of PyTorch's upsample_bicubic2d
/// (UpSampleBicubic2d.cpp): source x = scale (o + 0.5) - 0.5 (or scale o
/// aligned), unclamped; taps floor(x) - 1 .. + 2 clamped to the edge, with
/// the cubic convolution weights of t = x - floor(x), in the opmath type.
template <typename T>
std::vector<double> bicubicMatrix(int64_t in, int64_t out, std::optional<double> scale, bool alignCorners) {
  std::vector<double> m(static_cast<size_t>(in * out), 0.0);
  if (in == out) {
    for (int64_t o = 0; o < out; ++o)
      m[o * in + o] = 1.0;
    return m;
  }
  T ratio = alignCorners ? (out > 1 ? static_cast<T>(in - 1) / static_cast<T>(out - 1) : T(0))
                         : (scale && *scale > 0 ? static_cast<T>(1.0 / *scale)
                                                : static_cast<T>(in) / static_cast<T>(out));
  const T A = T(-0.75);
  auto cc1 = [&](T x) { return ((A + 2) * x - (A + 3)) * x * x + 1; };
  auto cc2 = [&](T x) { return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A; };
  for (int64_t o = 0; o < out; ++o) {
    T src = alignCorners ? ratio * static_cast<T>(o) : ratio * (static_cast<T>(o) + T(0.5)) - T(0.5);
    int64_t i0 = static_cast<int64_t>(std::floor(src));
    T t = src - static_cast<T>(i0);
    T w[4] = {cc2(t + 1), cc1(t), cc1(1 - t), cc2(2 - t)};
    for (int k = 0; k < 4; ++k) {
      int64_t i = std::min(std::max<int64_t>(i0 - 1 + k, 0), in - 1);
      m[o * in + i] += static_cast<double>(w[k]);
    }
  }
  return m;
}

Value bicubic(Interpreter &in, Value x, const std::vector<int64_t> &size, const std::vector<double> &scales,
              bool alignCorners) {
  x = floatOperand(in, x);
  std::vector<int64_t> shape = staticShape(in, x, "bicubic upsampling");
  DType d = dtypeOf(x);
  auto matrix = [&](int64_t axis) {
    std::optional<double> scale;
    if (!scales.empty() && scales[axis] > 0)
      scale = scales[axis];
    int64_t inSize = shape[2 + axis], outSize = size[axis];
    std::vector<double> m = d == DType::Float64 ? bicubicMatrix<double>(inSize, outSize, scale, alignCorners)
                                                : bicubicMatrix<float>(inSize, outSize, scale, alignCorners);
    return constantFrom(in, Tensor::fromDoubles(d, {outSize, inSize}, m));
  };
  Value ah = matrix(0), aw = matrix(1);
  auto call = [&](const char *name, std::vector<IValue> args) {
    IValue r = in.callOperator(name, std::move(args), {});
    if (!r.isTensor())
      throw StopImport();
    return r.tensor->value;
  };
  Value rows = call("aten::matmul", {ret(ah), ret(x)}); // [N, C, Ho, W]
  return call("aten::matmul", {ret(rows), ret(call("aten::t", {ret(aw)}))});
}

void registerElementwise(Table &t) {
  // Activations.
  unaryKeep<cir::ReluOp>(t, "aten::relu");
  t["aten::relu6"] = [](Interpreter &in, const BoundArgs &b) {
    return ret(in.build<cir::HardtanhOp>(Args{in, b}.t("self"), f64(in, 0.0), f64(in, 6.0)));
  };
  // min_val > max_val is allowed: every element becomes max_val (clamp's rule).
  auto hardtanh = [](Interpreter &in, const Args &a) {
    double lo = a.f("min_val"), hi = a.f("max_val");
    if (lo > hi)
      return in.build<cir::ClampOp>(a.t("self"), f64(in, lo), f64(in, hi));
    return in.build<cir::HardtanhOp>(a.t("self"), f64(in, lo), f64(in, hi));
  };
  t["aten::hardtanh"] = [hardtanh](Interpreter &in, const BoundArgs &b) { return ret(hardtanh(in, Args{in, b})); };
  t["aten::hardtanh_"] = [hardtanh](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    return inplace(in, a["self"], hardtanh(in, a));
  };
  auto leaky = [](Interpreter &in, const Args &a) {
    return in.build<cir::LeakyReluOp>(floatOperand(in, a.t("self")), f64(in, a.f("negative_slope")));
  };
  t["aten::leaky_relu"] = [leaky](Interpreter &in, const BoundArgs &b) { return ret(leaky(in, Args{in, b})); };
  t["aten::leaky_relu_"] = [leaky](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    return inplace(in, a["self"], leaky(in, a));
  };
  auto elu = [](Interpreter &in, const Args &a) -> Value {
    if (a.f("scale") != 1.0 || a.f("input_scale") != 1.0) {
      in.unsupported("aten::elu with scale or input_scale other than 1 (selu/celu)");
      return Value();
    }
    return in.build<cir::EluOp>(floatOperand(in, a.t("self")), f64(in, a.f("alpha")));
  };
  t["aten::elu"] = [elu](Interpreter &in, const BoundArgs &b) {
    Value v = elu(in, Args{in, b});
    return v ? ret(v) : IValue::poison();
  };
  t["aten::elu_"] = [elu](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value v = elu(in, a);
    return v ? inplace(in, a["self"], v) : IValue::poison();
  };
  t["aten::gelu"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    std::string approx = a.s("approximate");
    if (approx != "none" && approx != "tanh")
      in.fail("CUVIL-E-IMPORT-RAISE", "approximate argument must be either none or tanh, got '" + approx + "'");
    auto mode = approx == "tanh" ? cir::GeluApproximation::Tanh : cir::GeluApproximation::None;
    return ret(in.build<cir::GeluOp>(floatOperand(in, a.t("self")),
                                     cir::GeluApproximationAttr::get(in.context(), mode)));
  };
  unaryFloat<cir::SiluOp>(t, "aten::silu");
  unaryFloat<cir::SigmoidOp>(t, "aten::sigmoid");
  unaryFloat<cir::TanhOp>(t, "aten::tanh");
  unaryFloat<cir::HardswishOp>(t, "aten::hardswish");
  unaryFloat<cir::HardsigmoidOp>(t, "aten::hardsigmoid");
  unaryFloat<cir::MishOp>(t, "aten::mish");
  t["aten::softplus"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    return ret(in.build<cir::SoftplusOp>(floatOperand(in, a.t("self")), f64(in, a.f("beta")),
                                         f64(in, a.f("threshold"))));
  };
  auto softmax = [](bool log) {
    return [log](Interpreter &in, const BoundArgs &b) {
      Args a{in, b};
      Value x = a.t("self");
      if (auto d = a.dtype("dtype"))
        x = cast(in, x, *d);
      x = floatOperand(in, x);
      int64_t dim = wrapDim(in, a.i("dim"), rankOf(x));
      return ret(log ? in.build<cir::LogSoftmaxOp>(x, i64(in, dim))
                     : in.build<cir::SoftmaxOp>(x, i64(in, dim)));
    };
  };
  t["aten::softmax"] = softmax(false);
  t["aten::log_softmax"] = softmax(true);

  // Unary math.
  unaryKeep<cir::NegOp>(t, "aten::neg");
  unaryKeep<cir::AbsOp>(t, "aten::abs");
  unaryKeep<cir::SignOp>(t, "aten::sign");
  t["aten::sign"] = [](Interpreter &in, const BoundArgs &b) { // of a bool: itself
    Value x = Args{in, b}.t("self");
    return ret(dtypeOf(x) == DType::Bool ? x : in.build<cir::SignOp>(x));
  };
  unaryFloat<cir::ExpOp>(t, "aten::exp");
  unaryFloat<cir::Expm1Op>(t, "aten::expm1");
  unaryFloat<cir::LogOp>(t, "aten::log");
  unaryFloat<cir::Log1pOp>(t, "aten::log1p");
  unaryFloat<cir::SqrtOp>(t, "aten::sqrt");
  unaryFloat<cir::RsqrtOp>(t, "aten::rsqrt");
  unaryFloat<cir::ReciprocalOp>(t, "aten::reciprocal");
  unaryFloat<cir::SinOp>(t, "aten::sin");
  unaryFloat<cir::CosOp>(t, "aten::cos");
  unaryFloat<cir::ErfOp>(t, "aten::erf");
  unaryKeep<cir::BitwiseNotOp>(t, "aten::bitwise_not");
  auto rounding = [](auto tag) {
    using OpTy = decltype(tag);
    return [](Interpreter &in, const BoundArgs &b) {
      Value x = Args{in, b}.t("self");
      // Integers are already whole: floor/ceil/round keep them.
      return ret(isFloat(dtypeOf(x)) ? in.build<OpTy>(x) : x);
    };
  };
  t["aten::floor"] = rounding(cir::FloorOp());
  t["aten::ceil"] = rounding(cir::CeilOp());
  // round(x, decimals=d) scales by 10^|d| around the rounding, as
  // PyTorch's kernel does: round(x * 10^d) / 10^d, or for d < 0
  // round(x / 10^-d) * 10^-d.
  t["aten::round"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = a.t("self");
    int64_t decimals = b.has("decimals") ? a.i("decimals") : 0;
    if (!isFloat(dtypeOf(x)))
      return ret(x);
    if (decimals == 0)
      return ret(in.build<cir::RoundOp>(x));
    Value scale = in.scalarConstant(IValue::floating(std::pow(10.0, double(std::abs(decimals)))), dtypeOf(x));
    if (decimals > 0)
      return ret(in.build<cir::DivOp>(in.build<cir::RoundOp>(in.build<cir::MulOp>(x, scale)), scale,
                                      cir::RoundingModeAttr::get(in.context(), cir::RoundingMode::None)));
    return ret(in.build<cir::MulOp>(
        in.build<cir::RoundOp>(in.build<cir::DivOp>(x, scale, cir::RoundingModeAttr::get(
                                                                  in.context(), cir::RoundingMode::None))),
        scale));
  };
  t["aten::logical_not"] = [](Interpreter &in, const BoundArgs &b) {
    return ret(in.build<cir::LogicalNotOp>(Args{in, b}.t("self")));
  };
  auto clamp = [](Interpreter &in, const Args &a, const char *lo, const char *hi) -> Value {
    Value x = a.t("self");
    const IValue *mn = lo ? &a[lo] : nullptr, *mx = hi ? &a[hi] : nullptr;
    if ((mn && mn->isTensor()) || (mx && mx->isTensor())) {
      if (mn && !mn->isNone())
        x = in.build<cir::MaximumOp>(x, operand(in, *mn, x));
      if (mx && !mx->isNone())
        x = in.build<cir::MinimumOp>(x, operand(in, *mx, x));
      return x;
    }
    mlir::FloatAttr minAttr, maxAttr;
    if (mn && !mn->isNone())
      minAttr = f64(in, mn->is(K::Float) ? mn->f : double(mn->is(K::Bool) ? mn->b : mn->i));
    if (mx && !mx->isNone())
      maxAttr = f64(in, mx->is(K::Float) ? mx->f : double(mx->is(K::Bool) ? mx->b : mx->i));
    if (!minAttr && !maxAttr)
      in.fail("CUVIL-E-IMPORT-RAISE", "torch.clamp: At least one of 'min' or 'max' must not be None");
    if (!isFloat(dtypeOf(x)) && ((mn && mn->is(K::Float)) || (mx && mx->is(K::Float))))
      x = cast(in, x, DType::Float32); // clamp(int tensor, float) is float
    return in.build<cir::ClampOp>(x, minAttr, maxAttr);
  };
  t["aten::clamp"] = [clamp](Interpreter &in, const BoundArgs &b) { return ret(clamp(in, Args{in, b}, "min", "max")); };
  t["aten::clamp_"] = [clamp](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    return inplace(in, a["self"], clamp(in, a, "min", "max"));
  };
  t["aten::clamp_min"] = [clamp](Interpreter &in, const BoundArgs &b) { return ret(clamp(in, Args{in, b}, "min", nullptr)); };
  t["aten::clamp_max"] = [clamp](Interpreter &in, const BoundArgs &b) { return ret(clamp(in, Args{in, b}, nullptr, "max")); };

  // Binary arithmetic.
  t["aten::add"] = [](Interpreter &in, const BoundArgs &b) { return ret(addSub(in, Args{in, b}, false, false)); };
  t["aten::add_"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    return inplace(in, a["self"], addSub(in, a, false, false));
  };
  t["aten::sub"] = [](Interpreter &in, const BoundArgs &b) { return ret(addSub(in, Args{in, b}, true, false)); };
  t["aten::sub_"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    return inplace(in, a["self"], addSub(in, a, true, false));
  };
  t["aten::rsub"] = [](Interpreter &in, const BoundArgs &b) { return ret(addSub(in, Args{in, b}, true, true)); };
  binary<cir::MulOp>(t, "aten::mul");
  t["aten::div"] = [](Interpreter &in, const BoundArgs &b) { return ret(divide(in, Args{in, b})); };
  t["aten::div_"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    return inplace(in, a["self"], divide(in, a));
  };
  t["aten::floor_divide"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value self = a.t("self");
    return ret(in.build<cir::DivOp>(self, operand(in, a["other"], self),
                                    cir::RoundingModeAttr::get(in.context(), cir::RoundingMode::Floor)));
  };
  t["aten::pow"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    const IValue &base = a["self"], &exp = a["exponent"];
    Value e = exp.isTensor() ? exp.tensor->value : Value();
    Value x = base.isTensor() ? base.tensor->value : scalarOperand(in, base, e);
    Value y = exp.isTensor() ? e : scalarOperand(in, exp, x);
    return ret(in.build<cir::PowOp>(x, y));
  };
  binary<cir::MaximumOp>(t, "aten::maximum");
  binary<cir::MinimumOp>(t, "aten::minimum");
  binary<cir::RemainderOp>(t, "aten::remainder");

  // Comparisons, logic, selection.
  compare<cir::EqOp>(t, "aten::eq");
  compare<cir::NeOp>(t, "aten::ne");
  compare<cir::LtOp>(t, "aten::lt");
  compare<cir::LeOp>(t, "aten::le");
  compare<cir::GtOp>(t, "aten::gt");
  compare<cir::GeOp>(t, "aten::ge");
  compare<cir::LogicalAndOp>(t, "aten::logical_and");
  compare<cir::LogicalOrOp>(t, "aten::logical_or");
  compare<cir::LogicalXorOp>(t, "aten::logical_xor");
  t["aten::where"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    if (!b.has("self"))
      return in.unsupported("aten::where with one argument (nonzero)");
    Value c = a.t("condition");
    if (dtypeOf(c) != DType::Bool)
      c = cast(in, c, DType::Bool);
    const IValue &x = a["self"], &y = a["other"];
    Value ref = x.isTensor() ? x.tensor->value : y.isTensor() ? y.tensor->value : Value();
    Value xv, yv;
    if (ref) {
      xv = operand(in, x, ref);
      yv = operand(in, y, ref);
    } else { // two scalars: PyTorch's default types
      DType d = x.is(K::Float) || y.is(K::Float) ? DType::Float32 : DType::Int64;
      xv = in.scalarConstant(x, d);
      yv = in.scalarConstant(y, d);
    }
    return ret(in.build<cir::WhereOp>(c, xv, yv));
  };
  auto maskedFill = [](Interpreter &in, const Args &a) {
    Value self = a.t("self");
    Value mask = cast(in, a.t("mask"), DType::Bool);
    Value value = a["value"].isTensor() ? cast(in, a.t("value"), dtypeOf(self))
                                        : in.scalarConstant(a["value"], dtypeOf(self));
    return in.build<cir::WhereOp>(mask, value, self);
  };
  t["aten::masked_fill"] = [maskedFill](Interpreter &in, const BoundArgs &b) {
    return ret(maskedFill(in, Args{in, b}));
  };
  // In place: the mask broadcasts to self, never self to the mask.
  t["aten::masked_fill_"] = [maskedFill](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value v = maskedFill(in, a);
    if (typeOf(v).getRank() != rankOf(a.t("self")))
      in.fail("CUVIL-E-IMPORT-RAISE", "masked_fill_: the mask's shape does not broadcast to the tensor's");
    return inplace(in, a["self"], v);
  };
}

//===----------------------------------------------------------------------===//
// Matrix products, convolution, normalisation, pooling
//===----------------------------------------------------------------------===//

Value convolution(Interpreter &in, Value x, Value w, Value bias, std::vector<int64_t> stride,
                  std::vector<int64_t> padding, std::vector<int64_t> dilation, bool transposed,
                  std::vector<int64_t> outputPadding, int64_t groups);
Value convolution3d(Interpreter &in, Value x, Value w, Value bias, std::vector<int64_t> stride,
                    std::vector<int64_t> padding, std::vector<int64_t> dilation, bool transposed,
                    std::vector<int64_t> outputPadding, int64_t groups);

/// The convolution of `x`, which may lack the batch dimension ([C, L] or
/// [C, H, W]: PyTorch's unbatched input, one dimension less than weight).
Value convolutionMaybeUnbatched(Interpreter &in, Value x, Value w, Value bias,
                                std::vector<int64_t> stride, std::vector<int64_t> padding,
                                std::vector<int64_t> dilation, bool transposed,
                                std::vector<int64_t> outputPadding, int64_t groups) {
  return batchedOnce(in, x, rankOf(w), [&](Value batched) {
    return convolution(in, batched, w, bias, stride, padding, dilation, transposed, outputPadding,
                       groups);
  });
}

Value pad3(Interpreter &in, Value x, const std::vector<int64_t> &lo, const std::vector<int64_t> &hi) {
  std::vector<int64_t> pads;
  for (int64_t d = int64_t(lo.size()) - 1; d >= 0; --d) {
    pads.push_back(lo[d]);
    pads.push_back(hi[d]);
  }
  bool any = false;
  for (int64_t p : pads)
    any |= p != 0;
  if (!any)
    return x;
  return in.build<cir::PadOp>(x, i64s(in, pads), cir::PadModeAttr::get(in.context(), cir::PadMode::Constant),
                              f64(in, 0.0));
}

/// A 3-D convolution as one 2-D convolution whose channels are the depth
/// taps (the output depth folded into the batch); a transposed one as the
/// convolution of the zero-interleaved input with the flipped, transposed
/// kernel.
Value convolution3d(Interpreter &in, Value x, Value w, Value bias, std::vector<int64_t> stride,
                    std::vector<int64_t> padding, std::vector<int64_t> dilation, bool transposed,
                    std::vector<int64_t> outputPadding, int64_t groups) {
  auto fit = [&](std::vector<int64_t> v, const char *what) { return fitSpatial(in, v, 3, what); };
  stride = fit(stride, "stride");
  padding = fit(padding, "padding");
  dilation = fit(dilation, "dilation");
  std::vector<int64_t> ws = shapeOf(w);
  if (transposed) {
    outputPadding = fit(outputPadding.empty() ? std::vector<int64_t>{0} : outputPadding, "output_padding");
    std::vector<int64_t> xs = shapeOf(x);
    int64_t n = xs[0], c = xs[1];
    // Zero-interleave each spatial dim: [.., L, ..] -> [.., (L-1)*s+1, ..].
    for (int64_t d = 0; d < 3; ++d) {
      int64_t s = stride[d];
      if (s == 1)
        continue;
      std::vector<int64_t> cur = shapeOf(x);
      int64_t axis = 2 + d, len = cur[axis];
      std::vector<int64_t> withNew = cur;
      withNew.insert(withNew.begin() + axis + 1, 1);
      Value xe = lower::reshape(in, x, withNew);
      std::vector<int64_t> zs = withNew;
      zs[axis + 1] = s - 1;
      Value zeros = splat(in, zs, dtypeOf(x), IValue::integer(0));
      Value inter = in.build<cir::ConcatOp>(mlir::ValueRange{xe, zeros}, i64(in, axis + 1));
      std::vector<int64_t> merged = cur;
      merged[axis] = len * s;
      inter = lower::reshape(in, inter, merged);
      x = in.build<cir::SliceOp>(inter, i64(in, axis), i64(in, 0), i64(in, (len - 1) * s + 1), i64(in, 1));
    }
    std::vector<int64_t> lo(3), hi(3);
    for (int64_t d = 0; d < 3; ++d) {
      int64_t k = dilation[d] * (ws[2 + d] - 1);
      lo[d] = k - padding[d];
      hi[d] = k - padding[d] + outputPadding[d];
    }
    x = pad3(in, x, lo, hi);
    // w [Cin, Cout/g, k...] -> flipped, [Cout, Cin/g, k...].
    Value wf = in.callOperator("aten::flip", {ret(w), IValue::makeList({IValue::integer(2), IValue::integer(3), IValue::integer(4)})}, {}).tensor->value;
    int64_t cin = ws[0], coutG = ws[1];
    Value wg = lower::reshape(in, wf, {groups, cin / groups, coutG, ws[2], ws[3], ws[4]});
    wg = in.build<cir::PermuteOp>(wg, i64s(in, {0, 2, 1, 3, 4, 5}));
    Value wt = lower::reshape(in, wg, {groups * coutG, cin / groups, ws[2], ws[3], ws[4]});
    (void)n;
    (void)c;
    return convolution3d(in, x, wt, bias, {1, 1, 1}, {0, 0, 0}, dilation, false, {}, groups);
  }
  x = pad3(in, x, {padding[0], 0, 0}, {padding[0], 0, 0});
  std::vector<int64_t> xs = shapeOf(x);
  int64_t n = xs[0], c = xs[1], depth = xs[2], h = xs[3], wd = xs[4], kd = ws[2], cout = ws[0];
  int64_t od = (depth - dilation[0] * (kd - 1) - 1) / stride[0] + 1;
  if (od <= 0)
    in.fail("CUVIL-E-IMPORT-RAISE", "conv3d: the kernel is larger than the padded input depth");
  // Each output depth's kd input planes become channels: x' [n*od, c*kd,
  // h, w] with channel ci*kd + k the plane d*stride + k*dilation of channel
  // ci (groups stay contiguous), so that the weight [cout, c/g, kd, kh, kw]
  // is already the 2-D weight [cout, c/g*kd, kh, kw] and one 2-D
  // convolution (with the bias) does the work: one GEMM with the whole
  // reduction, no partial sums to add.
  Value planes;
  if (kd == 1 && stride[0] == 1) {
    planes = lower::reshape(in, x, {n, c, 1, depth, h, wd});
  } else {
    std::vector<Value> taps;
    for (int64_t k = 0; k < kd; ++k) {
      int64_t start = k * dilation[0];
      Value tap = in.build<cir::SliceOp>(x, i64(in, 2), i64(in, start), i64(in, start + (od - 1) * stride[0] + 1),
                                         i64(in, stride[0])); // [n, c, od, h, w]
      taps.push_back(lower::reshape(in, tap, {n, c, 1, od, h, wd}));
    }
    planes = taps.size() == 1 ? taps[0] : in.build<cir::ConcatOp>(mlir::ValueRange(taps), i64(in, 2));
  }
  planes = in.build<cir::PermuteOp>(planes, i64s(in, {0, 3, 1, 2, 4, 5})); // [n, od, c, kd, h, w]
  planes = lower::reshape(in, planes, {n * od, c * kd, h, wd});
  Value w2 = lower::reshape(in, w, {cout, ws[1] * kd, ws[3], ws[4]});
  Value y = convolution(in, planes, w2, bias, {stride[1], stride[2]}, {padding[1], padding[2]},
                        {dilation[1], dilation[2]}, false, {}, groups); // [n*od, cout, oh, ow]
  std::vector<int64_t> ys = shapeOf(y);
  Value out = lower::reshape(in, y, {n, od, cout, ys[2], ys[3]});
  return in.build<cir::PermuteOp>(out, i64s(in, {0, 2, 1, 3, 4}));
}

/// `fn` on float64 copies of integer operands, its result truncated back
/// to their integer type: PyTorch's integer convolutions, products and
/// average pools accumulate exactly and divide with truncation, which
/// float64 reproduces for the magnitudes models hold (below 2^53).
Value viaFloat64(Interpreter &in, std::vector<Value> operands,
                 llvm::function_ref<Value(llvm::ArrayRef<Value>)> fn) {
  if (operands.empty() || !operands[0] || isFloat(dtypeOf(operands[0])))
    return fn(operands);
  DType d = dtypeOf(operands[0]);
  for (Value &v : operands)
    if (v)
      v = cast(in, v, DType::Float64);
  Value r = fn(operands);
  return r ? cast(in, r, d) : r;
}

Value convolution(Interpreter &in, Value x, Value w, Value bias, std::vector<int64_t> stride,
                  std::vector<int64_t> padding, std::vector<int64_t> dilation, bool transposed,
                  std::vector<int64_t> outputPadding, int64_t groups) {
  if (!isFloat(dtypeOf(x)))
    return viaFloat64(in, {x, w, bias}, [&](llvm::ArrayRef<Value> v) {
      return convolution(in, v[0], v[1], v[2], stride, padding, dilation, transposed, outputPadding, groups);
    });
  int64_t spatial = rankOf(x) - 2;
  if (spatial == 3)
    return convolution3d(in, x, w, bias, stride, padding, dilation, transposed, outputPadding, groups);
  if (spatial != 1 && spatial != 2) {
    in.unsupported("aten::convolution with " + std::to_string(spatial) + " spatial dimensions");
    return Value();
  }
  auto fit = [&](std::vector<int64_t> v, const char *what) {
    if (v.size() == 1 && spatial > 1)
      v.assign(spatial, v[0]);
    if (static_cast<int64_t>(v.size()) != spatial)
      in.fail("CUVIL-E-IMPORT-RAISE", std::string("expected ") + what + " to have " +
                                          std::to_string(spatial) + " elements");
    return v;
  };
  stride = fit(stride, "stride");
  padding = fit(padding, "padding");
  dilation = fit(dilation, "dilation");
  mlir::IntegerAttr g = i64(in, groups);
  if (transposed) {
    outputPadding = fit(outputPadding, "output_padding");
    if (spatial == 1)
      return in.build<cir::ConvTranspose1DOp>(x, w, bias, i64s(in, stride), i64s(in, padding),
                                              i64s(in, dilation), i64s(in, outputPadding), g);
    return in.build<cir::ConvTranspose2DOp>(x, w, bias, i64s(in, stride), i64s(in, padding),
                                            i64s(in, dilation), i64s(in, outputPadding), g);
  }
  if (spatial == 1)
    return in.build<cir::Conv1DOp>(x, w, bias, i64s(in, stride), i64s(in, padding), i64s(in, dilation), g);
  return in.build<cir::Conv2DOp>(x, w, bias, i64s(in, stride), i64s(in, padding), i64s(in, dilation), g);
}

/// conv with padding='same'/'valid'. 'same' pads (k-1)*d in total; an odd
/// total puts the extra element on the right, as PyTorch does.
Value convWithStringPadding(Interpreter &in, const Args &a, int64_t spatial) {
  Value x = a.t("input"), w = a.t("weight");
  std::string mode = a.s("padding");
  std::vector<int64_t> stride = fitSpatial(in, a.ints("stride"), spatial, "stride");
  std::vector<int64_t> dilation = fitSpatial(in, a.ints("dilation"), spatial, "dilation");
  std::vector<int64_t> pad(spatial, 0);
  if (mode == "same") {
    std::vector<int64_t> extra(spatial, 0);
    bool asymmetric = false;
    for (int64_t d = 0; d < spatial; ++d) {
      if (stride[d] != 1)
        in.fail("CUVIL-E-IMPORT-RAISE", "padding='same' is not supported for strided convolutions");
      int64_t total = dilation[d] * (typeOf(w).getDimSize(2 + d) - 1);
      pad[d] = total / 2;
      extra[d] = total - 2 * pad[d];
      asymmetric |= extra[d] != 0;
    }
    if (asymmetric) {
      std::vector<int64_t> pads;
      for (int64_t d = spatial - 1; d >= 0; --d) {
        pads.push_back(0);
        pads.push_back(extra[d]);
      }
      x = in.build<cir::PadOp>(x, i64s(in, pads), cir::PadModeAttr::get(in.context(), cir::PadMode::Constant), f64(in, 0.0));
    }
  } else if (mode != "valid") {
    in.fail("CUVIL-E-IMPORT-RAISE", "Invalid padding string: '" + mode + "'");
  }
  return convolutionMaybeUnbatched(in, x, w, a.optT("bias"), stride, pad, dilation, false, {}, a.i("groups"));
}

void registerLinalg(Table &t) {
  t["aten::linear"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    return ret(viaFloat64(in, {a.t("input"), a.t("weight"), a.optT("bias")}, [&](llvm::ArrayRef<Value> v) {
      return in.build<cir::LinearOp>(v[0], v[1], v[2]);
    }));
  };
  t["aten::matmul"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    return ret(in.build<cir::MatmulOp>(a.t("self"), a.t("other")));
  };
  t["aten::mm"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    if (rankOf(a.t("self")) != 2 || rankOf(a.t("mat2")) != 2)
      in.fail("CUVIL-E-IMPORT-RAISE", "mm expects two matrices");
    return ret(in.build<cir::MatmulOp>(a.t("self"), a.t("mat2")));
  };
  t["aten::bmm"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    return ret(in.build<cir::BatchMatmulOp>(a.t("self"), a.t("mat2")));
  };
  t["aten::addmm"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    return ret(in.build<cir::AddmmOp>(a.t("self"), a.t("mat1"), a.t("mat2"), f64(in, a.f("beta")),
                                      f64(in, a.f("alpha"))));
  };
  t["aten::baddbmm"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value prod = in.build<cir::BatchMatmulOp>(a.t("batch1"), a.t("batch2"));
    // alpha and beta in the product's type (truncated for integers), as
    // PyTorch converts them.
    const IValue &alpha = a["alpha"], &beta = a["beta"];
    if (a.f("alpha") != 1.0)
      prod = in.build<cir::MulOp>(prod, in.scalarConstant(alpha, dtypeOf(prod)));
    if (a.f("beta") == 0.0)
      return ret(prod);
    Value self = a.t("self");
    if (a.f("beta") != 1.0)
      self = in.build<cir::MulOp>(self, in.scalarConstant(beta, dtypeOf(self)));
    return ret(in.build<cir::AddOp>(self, prod));
  };
  t["aten::conv1d"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    if (a["padding"].is(K::Str))
      return ret(convWithStringPadding(in, a, 1));
    Value v = convolutionMaybeUnbatched(in, a.t("input"), a.t("weight"), a.optT("bias"), a.ints("stride"),
                          a.ints("padding"), a.ints("dilation"), false, {}, a.i("groups"));
    return v ? ret(v) : IValue::poison();
  };
  t["aten::conv2d"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    if (a["padding"].is(K::Str))
      return ret(convWithStringPadding(in, a, 2));
    Value v = convolutionMaybeUnbatched(in, a.t("input"), a.t("weight"), a.optT("bias"), a.ints("stride"),
                          a.ints("padding"), a.ints("dilation"), false, {}, a.i("groups"));
    return v ? ret(v) : IValue::poison();
  };
  auto convT = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value v = convolutionMaybeUnbatched(in, a.t("input"), a.t("weight"), a.optT("bias"), a.ints("stride"),
                          a.ints("padding"), a.ints("dilation"), true, a.ints("output_padding"),
                          a.i("groups"));
    return v ? ret(v) : IValue::poison();
  };
  t["aten::conv_transpose1d"] = convT;
  t["aten::conv_transpose2d"] = convT;
  t["aten::conv_transpose3d"] = convT;
  t["aten::conv3d"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    if (a["padding"].is(K::Str))
      return in.unsupported("conv3d with padding='" + a.s("padding") + "'");
    Value v = convolutionMaybeUnbatched(in, a.t("input"), a.t("weight"), a.optT("bias"), a.ints("stride"),
                          a.ints("padding"), a.ints("dilation"), false, {}, a.i("groups"));
    return v ? ret(v) : IValue::poison();
  };
  auto genericConv = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value v = convolutionMaybeUnbatched(in, a.t("input"), a.t("weight"), a.optT("bias"), a.ints("stride"),
                          a.ints("padding"), a.ints("dilation"), a.b("transposed"),
                          a.ints("output_padding"), a.i("groups"));
    return v ? ret(v) : IValue::poison();
  };
  t["aten::_convolution"] = genericConv;
  t["aten::convolution"] = genericConv;

  t["aten::batch_norm"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    if (typeOf(a.t("input")).hasStaticShape() && typeOf(a.t("input")).getNumElements() == 0)
      return ret(floatOperand(in, a.t("input"))); // nothing to normalise
    if (a.b("training")) {
      // Batch statistics: the mean and biased variance over every dim but
      // the channels. (The compiled model is stateless: running statistics
      // are not updated.)
      Value x = floatOperand(in, a.t("input"));
      if (rankOf(x) < 2)
        in.fail("CUVIL-E-IMPORT-RAISE", "batch_norm expects an input of rank >= 2 ([N, C, ...])");
      std::vector<int64_t> dims = {0};
      for (int64_t d = 2; d < rankOf(x); ++d)
        dims.push_back(d);
      auto keep = in.builder().getUnitAttr();
      Value mean = in.build<cir::MeanOp>(x, i64s(in, dims), keep);
      Value var = in.build<cir::VarOp>(x, i64s(in, dims), keep, i64(in, 0));
      Value eps = in.scalarConstant(IValue::floating(a.f("eps")), dtypeOf(x));
      Value y = in.build<cir::DivOp>(in.build<cir::SubOp>(x, mean),
                                     in.build<cir::SqrtOp>(in.build<cir::AddOp>(var, eps)),
                                     cir::RoundingModeAttr::get(in.context(), cir::RoundingMode::None));
      std::vector<int64_t> perChannel(rankOf(x) - 1, 1);
      perChannel[0] = typeOf(x).getDimSize(1);
      if (Value w = a.optT("weight"))
        y = in.build<cir::MulOp>(y, in.build<cir::ReshapeOp>(w, i64s(in, perChannel)));
      if (Value bias = a.optT("bias"))
        y = in.build<cir::AddOp>(y, in.build<cir::ReshapeOp>(bias, i64s(in, perChannel)));
      return ret(y);
    }
    if (!a.optT("running_mean") || !a.optT("running_var"))
      return in.unsupported("batch_norm without running statistics");
    Value x = a.t("input");
    mlir::Value noValue;
    return ret(in.build<cir::BatchNormOp>(x, a.t("running_mean"), a.t("running_var"),
                                          a.optT("weight") ? a.optT("weight") : noValue,
                                          a.optT("bias") ? a.optT("bias") : noValue,
                                          f64(in, a.f("eps"))));
  };
  t["aten::layer_norm"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    return ret(in.build<cir::LayerNormOp>(a.t("input"), a.optT("weight"), a.optT("bias"),
                                          i64s(in, a.ints("normalized_shape")), f64(in, a.f("eps"))));
  };
  t["aten::group_norm"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    return ret(in.build<cir::GroupNormOp>(a.t("input"), a.optT("weight"), a.optT("bias"),
                                          i64(in, a.i("num_groups")), f64(in, a.f("eps"))));
  };

  auto maxPool = [](int64_t spatial) {
    return [spatial](Interpreter &in, const BoundArgs &b) {
      Args a{in, b};
      Value x = a.t("self");
      if (rankOf(x) != spatial + 2 && rankOf(x) != spatial + 1)
        return in.unsupported("max_pool" + std::to_string(spatial) + "d of a rank-" +
                              std::to_string(rankOf(x)) + " input");
      std::vector<int64_t> k = fitSpatial(in, a.ints("kernel_size"), spatial, "kernel_size");
      std::vector<int64_t> s = fitSpatial(in, a.ints("stride"), spatial, "stride", k);
      std::vector<int64_t> p = fitSpatial(in, a.ints("padding"), spatial, "padding");
      std::vector<int64_t> d = fitSpatial(in, a.ints("dilation"), spatial, "dilation");
      auto ceil = a.b("ceil_mode") ? in.builder().getUnitAttr() : mlir::UnitAttr();
      return ret(batchedOnce(in, x, spatial + 2, [&](Value bx) {
        return spatial == 1 ? in.build<cir::MaxPool1DOp>(bx, i64s(in, k), i64s(in, s), i64s(in, p),
                                                         i64s(in, d), ceil)
                            : in.build<cir::MaxPool2DOp>(bx, i64s(in, k), i64s(in, s), i64s(in, p),
                                                         i64s(in, d), ceil);
      }));
    };
  };
  t["aten::max_pool1d"] = maxPool(1);
  t["aten::max_pool2d"] = maxPool(2);
  auto avgPool = [](int64_t spatial) {
    return [spatial](Interpreter &in, const BoundArgs &b) {
      Args a{in, b};
      Value x = a.t("self");
      if (rankOf(x) != spatial + 2 && rankOf(x) != spatial + 1)
        return in.unsupported("avg_pool" + std::to_string(spatial) + "d of a rank-" +
                              std::to_string(rankOf(x)) + " input");
      std::vector<int64_t> k = fitSpatial(in, a.ints("kernel_size"), spatial, "kernel_size");
      std::vector<int64_t> s = fitSpatial(in, a.ints("stride"), spatial, "stride", k);
      std::vector<int64_t> p = fitSpatial(in, a.ints("padding"), spatial, "padding");
      auto unit = [&](bool on) { return on ? in.builder().getUnitAttr() : mlir::UnitAttr(); };
      mlir::IntegerAttr divisor;
      if (b.has("divisor_override") && !a.none("divisor_override"))
        divisor = i64(in, a.i("divisor_override"));
      return ret(viaFloat64(in, {x}, [&](llvm::ArrayRef<Value> v) {
        return batchedOnce(in, v[0], spatial + 2, [&](Value bx) {
        return spatial == 1
                   ? in.build<cir::AvgPool1DOp>(bx, i64s(in, k), i64s(in, s), i64s(in, p),
                                                unit(a.b("ceil_mode")), unit(a.b("count_include_pad")), divisor)
                   : in.build<cir::AvgPool2DOp>(bx, i64s(in, k), i64s(in, s), i64s(in, p),
                                                unit(a.b("ceil_mode")), unit(a.b("count_include_pad")), divisor);
        });
      }));
    };
  };
  t["aten::avg_pool1d"] = avgPool(1);
  t["aten::avg_pool2d"] = avgPool(2);
  auto adaptive = [](int64_t spatial) {
    return [spatial](Interpreter &in, const BoundArgs &b) {
      Args a{in, b};
      Value x = a.t("self");
      if (rankOf(x) != spatial + 2 && rankOf(x) != spatial + 1)
        return in.unsupported("adaptive_avg_pool" + std::to_string(spatial) + "d of a rank-" +
                              std::to_string(rankOf(x)) + " input");
      std::vector<int64_t> out = fitSpatial(in, a.ints("output_size"), spatial, "output_size");
      return ret(batchedOnce(in, x, spatial + 2, [&](Value bx) {
        return spatial == 1 ? in.build<cir::AdaptiveAvgPool1DOp>(bx, i64s(in, out))
                            : in.build<cir::AdaptiveAvgPool2DOp>(bx, i64s(in, out));
      }));
    };
  };
  t["aten::adaptive_avg_pool1d"] = adaptive(1);
  t["aten::adaptive_avg_pool2d"] = adaptive(2);

  // F.interpolate. The .vec overloads take output_size or scale_factors
  // (exactly one); the others take output_size and optional per-dim scales
  // that only change how output positions map back to the input.
  // mode: none for bicubic (2-D only), which is separable: Y = Ah X Aw^T
  // with the [out, in] matrices of PyTorch's 4-tap cubic convolution
  // (A = -0.75, clamped taps), built at import time.
  auto upsample = [](int64_t spatial, std::optional<cir::ResizeMode> mode) {
    return [spatial, mode](Interpreter &in, const BoundArgs &b) {
      Args a{in, b};
      bool vec = b.has("scale_factors");
      const char *xName = b.has("input") ? "input" : "self";
      Value x = a.t(xName);
      if (rankOf(x) != spatial + 2)
        in.fail("CUVIL-E-IMPORT-RAISE", "upsampling over " + std::to_string(spatial) +
                                            " spatial dimension(s) expects a rank-" +
                                            std::to_string(spatial + 2) + " input, got rank " +
                                            std::to_string(rankOf(x)));
      std::vector<int64_t> size;
      std::vector<double> scales;
      if (vec) {
        bool hasSize = !a.none("output_size"), hasScales = !a.none("scale_factors");
        if (hasSize == hasScales)
          in.fail("CUVIL-E-IMPORT-RAISE", "upsampling must specify exactly one of output_size and scale_factors");
        if (hasSize) {
          size = a.ints("output_size");
        } else {
          for (const IValue &f : *a["scale_factors"].list) {
            if (!f.is(K::Float) && !f.is(K::Int))
              in.fail("CUVIL-E-IMPORT-TYPE", "scale_factors must be numbers");
            scales.push_back(f.is(K::Float) ? f.f : double(f.i));
          }
          if (static_cast<int64_t>(scales.size()) != spatial)
            in.fail("CUVIL-E-IMPORT-RAISE", "scale_factors needs " + std::to_string(spatial) + " entries");
          // PyTorch: out = int64(in * scale), which needs the input size.
          for (int64_t d = 0; d < spatial; ++d) {
            int64_t inSize = typeOf(x).getDimSize(2 + d);
            if (mlir::ShapedType::isDynamic(inSize))
              return in.unsupported("upsampling by scale_factor of a dynamic spatial dimension");
            size.push_back(static_cast<int64_t>(double(inSize) * scales[d]));
          }
        }
      } else {
        size = a.ints("output_size");
        static const char *const names[3][3] = {
            {"scales"}, {"scales_h", "scales_w"}, {"scales_d", "scales_h", "scales_w"}};
        bool any = false;
        for (int64_t d = 0; d < spatial; ++d) {
          const char *n = names[spatial - 1][d];
          bool given = !a.none(n);
          any |= given;
          scales.push_back(given ? a.f(n) : 0.0); // 0: derive from the sizes
        }
        if (!any)
          scales.clear();
      }
      if (static_cast<int64_t>(size.size()) != spatial)
        in.fail("CUVIL-E-IMPORT-RAISE", "output_size needs " + std::to_string(spatial) + " entries");
      for (int64_t v : size)
        if (v < 1)
          in.fail("CUVIL-E-IMPORT-RAISE", "upsampling output sizes must be greater than 0");
      bool alignCorners = b.has("align_corners") && !a.none("align_corners") && a.b("align_corners");
      if (!mode)
        return ret(bicubic(in, x, size, scales, alignCorners));
      mlir::DenseF64ArrayAttr scalesAttr;
      if (!scales.empty() && !alignCorners)
        scalesAttr = in.builder().getDenseF64ArrayAttr(scales);
      Value v = in.build<cir::ResizeOp>(
          x, cir::ResizeModeAttr::get(in.context(), *mode), i64s(in, size), scalesAttr,
          alignCorners ? in.builder().getUnitAttr() : mlir::UnitAttr());
      return ret(v);
    };
  };
  for (int64_t s = 1; s <= 3; ++s) {
    std::string n = std::to_string(s) + "d";
    t["aten::upsample_nearest" + n] = upsample(s, cir::ResizeMode::Nearest);
    t["aten::_upsample_nearest_exact" + n] = upsample(s, cir::ResizeMode::NearestExact);
  }
  t["aten::upsample_linear1d"] = upsample(1, cir::ResizeMode::Linear);
  t["aten::upsample_bilinear2d"] = upsample(2, cir::ResizeMode::Linear);
  t["aten::upsample_trilinear3d"] = upsample(3, cir::ResizeMode::Linear);
  t["aten::upsample_bicubic2d"] = upsample(2, std::nullopt);
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

/// The reduced dims of a `dim: int[]?` argument: None or [] mean all.
std::vector<int64_t> reduceDims(Interpreter &in, const Args &a, const char *name, int64_t rank) {
  std::vector<int64_t> dims;
  if (a.a.has(name) && !a.none(name))
    for (int64_t d : a.ints(name))
      dims.push_back(wrapDim(in, d, rank));
  if (dims.empty())
    for (int64_t d = 0; d < rank; ++d)
      dims.push_back(d);
  std::sort(dims.begin(), dims.end());
  dims.erase(std::unique(dims.begin(), dims.end()), dims.end());
  return dims;
}

template <typename OpTy>
OpHandler reduction(bool floatResult) {
  return [floatResult](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = a.t("self");
    if (b.has("dtype"))
      if (auto d = a.dtype("dtype"))
        x = cast(in, x, *d);
    if (floatResult)
      x = floatOperand(in, x);
    std::vector<int64_t> dims = reduceDims(in, a, "dim", rankOf(x));
    bool keep = b.has("keepdim") && a.b("keepdim");
    return ret(in.build<OpTy>(x, i64s(in, dims), keep ? in.builder().getUnitAttr() : mlir::UnitAttr()));
  };
}

OpHandler variance(bool isStd) {
  return [isStd](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = floatOperand(in, a.t("self"));
    std::vector<int64_t> dims = reduceDims(in, a, "dim", rankOf(x));
    int64_t correction = 1;
    if (b.has("unbiased"))
      correction = a.b("unbiased") ? 1 : 0;
    if (b.has("correction") && !a.none("correction"))
      correction = a.i("correction");
    auto keep = b.has("keepdim") && a.b("keepdim") ? in.builder().getUnitAttr() : mlir::UnitAttr();
    Value v = isStd ? in.build<cir::StdOp>(x, i64s(in, dims), keep, i64(in, correction))
                    : in.build<cir::VarOp>(x, i64s(in, dims), keep, i64(in, correction));
    return ret(v);
  };
}

void registerReductions(Table &t) {
  t["aten::sum"] = reduction<cir::SumOp>(false);
  t["aten::mean"] = reduction<cir::MeanOp>(true);
  t["aten::prod"] = reduction<cir::ProdOp>(false);
  t["aten::amax"] = reduction<cir::MaxOp>(false);
  t["aten::amin"] = reduction<cir::MinOp>(false);
  t["aten::var"] = variance(false);
  t["aten::std"] = variance(true);
  auto anyAll = [](bool all) {
    return [all](Interpreter &in, const BoundArgs &b) {
      Args a{in, b};
      Value x = a.t("self");
      std::vector<int64_t> dims;
      if (b.has("dim"))
        dims.push_back(wrapDim(in, a.i("dim"), rankOf(x)));
      else
        for (int64_t d = 0; d < rankOf(x); ++d)
          dims.push_back(d);
      auto keep = b.has("keepdim") && a.b("keepdim") ? in.builder().getUnitAttr() : mlir::UnitAttr();
      Value r = all ? in.build<cir::AllOp>(x, i64s(in, dims), keep)
                    : in.build<cir::AnyOp>(x, i64s(in, dims), keep);
      // PyTorch keeps uint8 for uint8 inputs (0/1), bool for the rest.
      return ret(dtypeOf(x) == DType::UInt8 ? cast(in, r, DType::UInt8) : r);
    };
  };
  t["aten::any"] = anyAll(false);
  t["aten::all"] = anyAll(true);
  auto minMax = [](bool isMax) {
    return [isMax](Interpreter &in, const BoundArgs &b) -> IValue {
      Args a{in, b};
      Value x = a.t("self");
      if (b.has("other")) // elementwise maximum/minimum
        return ret(isMax ? in.build<cir::MaximumOp>(x, a.t("other"))
                         : in.build<cir::MinimumOp>(x, a.t("other")));
      if (!b.has("dim")) {
        std::vector<int64_t> dims;
        for (int64_t d = 0; d < rankOf(x); ++d)
          dims.push_back(d);
        return ret(isMax ? in.build<cir::MaxOp>(x, i64s(in, dims), mlir::UnitAttr())
                         : in.build<cir::MinOp>(x, i64s(in, dims), mlir::UnitAttr()));
      }
      int64_t dim = wrapDim(in, a.i("dim"), rankOf(x));
      auto keep = a.b("keepdim") ? in.builder().getUnitAttr() : mlir::UnitAttr();
      Value values = isMax ? in.build<cir::MaxOp>(x, i64s(in, {dim}), keep)
                           : in.build<cir::MinOp>(x, i64s(in, {dim}), keep);
      // max/min along a dim take bools (argmax does not): as 0/1 bytes.
      Value xi = dtypeOf(x) == DType::Bool ? cast(in, x, DType::UInt8) : x;
      Value indices = isMax ? in.build<cir::ArgmaxOp>(xi, i64(in, dim), keep)
                            : in.build<cir::ArgminOp>(xi, i64(in, dim), keep);
      return IValue::makeTuple({ret(values), ret(indices)});
    };
  };
  t["aten::max"] = minMax(true);
  t["aten::min"] = minMax(false);
  auto arg = [](bool isMax) {
    return [isMax](Interpreter &in, const BoundArgs &b) {
      Args a{in, b};
      Value x = a.t("self");
      mlir::IntegerAttr dim;
      if (!a.none("dim"))
        dim = i64(in, wrapDim(in, a.i("dim"), rankOf(x)));
      auto keep = a.b("keepdim") ? in.builder().getUnitAttr() : mlir::UnitAttr();
      return ret(isMax ? in.build<cir::ArgmaxOp>(x, dim, keep) : in.build<cir::ArgminOp>(x, dim, keep));
    };
  };
  t["aten::argmax"] = arg(true);
  t["aten::argmin"] = arg(false);
}

//===----------------------------------------------------------------------===//
// Views, layout and data movement
//===----------------------------------------------------------------------===//

/// `result` (a reshape of `self`) as PyTorch makes it: a view of `self`
/// when self's strides allow one, else a copy (reshape, flatten) or the
/// error view() raises (`mustView`). In-place writes then reach the base
/// only when PyTorch's would.
IValue viewOrCopy(Interpreter &in, const IValue &self, Value result, bool mustView) {
  if (self.tensor->base) {
    std::optional<std::vector<int64_t>> strides = tensorStrides(self);
    llvm::ArrayRef<int64_t> from = typeOf(self.tensor->value).getShape(), to = typeOf(result).getShape();
    if (strides && isStaticShape(to) && !viewStridesAs(from, *strides, to)) {
      if (mustView)
        in.fail("CUVIL-E-IMPORT-RAISE", "view size is not compatible with input tensor's size and stride (at least "
                                        "one dimension spans across two contiguous subspaces). Use .reshape(...) "
                                        "instead.");
      return ret(result);
    }
  }
  return view(self, result);
}

IValue reshapeTo(Interpreter &in, const IValue &self, std::vector<int64_t> shape, bool mustView = false) {
  Value x = self.tensor->value;
  return viewOrCopy(in, self, in.build<cir::ReshapeOp>(x, i64s(in, shape)), mustView);
}

void registerShapes(Table &t) {
  auto reshape = [](const char *sizeArg) {
    return [sizeArg](Interpreter &in, const BoundArgs &b) {
      Args a{in, b};
      (void)a.t("self");
      return reshapeTo(in, a["self"], a.ints(sizeArg));
    };
  };
  t["aten::view"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    if (!b.has("size"))
      return in.unsupported("aten::view(dtype) (reinterpreting bits)");
    (void)a.t("self");
    return reshapeTo(in, a["self"], a.ints("size"), /*mustView=*/true);
  };
  t["aten::reshape"] = reshape("shape");
  t["aten::_reshape_alias"] = reshape("size");
  t["aten::flatten"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = a.t("self");
    int64_t rank = rankOf(x);
    if (rank == 0)
      return reshapeTo(in, a["self"], {1});
    int64_t s = wrapDim(in, a.i("start_dim"), rank), e = wrapDim(in, a.i("end_dim"), rank);
    if (s > e)
      in.fail("CUVIL-E-IMPORT-RAISE", "flatten() has invalid args: start_dim cannot come after end_dim");
    if (s == e)
      return view(a["self"], x);
    return viewOrCopy(in, a["self"], in.build<cir::FlattenOp>(x, i64(in, s), i64(in, e)), false);
  };
  t["aten::unflatten"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = a.t("self");
    std::vector<int64_t> shape = staticShape(in, x, "unflatten");
    if (shape.empty() && rankOf(x) != 0)
      return IValue::poison();
    int64_t d = wrapDim(in, a.i("dim"), rankOf(x));
    std::vector<int64_t> sizes = a.ints("sizes"), out(shape.begin(), shape.begin() + d);
    out.insert(out.end(), sizes.begin(), sizes.end());
    out.insert(out.end(), shape.begin() + d + 1, shape.end());
    return reshapeTo(in, a["self"], out);
  };
  t["aten::squeeze"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = a.t("self");
    RankedTensorType type = typeOf(x);
    std::vector<int64_t> dims;
    if (b.has("dim")) {
      int64_t d = wrapDim(in, a.i("dim"), type.getRank());
      if (type.getRank() > 0 && type.getDimSize(d) == 1)
        dims.push_back(d);
    } else {
      for (int64_t d = 0; d < type.getRank(); ++d)
        if (type.getDimSize(d) == 1)
          dims.push_back(d);
    }
    if (dims.empty())
      return view(a["self"], x); // squeezing a non-1 dimension is a no-op
    return view(a["self"], in.build<cir::SqueezeOp>(x, i64s(in, dims)));
  };
  t["aten::unsqueeze"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = a.t("self");
    int64_t rank = rankOf(x), d = a.i("dim");
    if (d < -(rank + 1) || d > rank)
      in.fail("CUVIL-E-IMPORT-RAISE", "unsqueeze dimension " + std::to_string(d) + " is out of range");
    if (d < 0)
      d += rank + 1;
    return view(a["self"], in.build<cir::UnsqueezeOp>(x, i64(in, d)));
  };
  t["aten::permute"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = a.t("self");
    std::vector<int64_t> dims;
    for (int64_t d : a.ints("dims"))
      dims.push_back(wrapDim(in, d, rankOf(x)));
    return view(a["self"], in.build<cir::PermuteOp>(x, i64s(in, dims)));
  };
  t["aten::transpose"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = a.t("self");
    int64_t r = rankOf(x);
    int64_t d0 = wrapDim(in, a.i("dim0"), r), d1 = wrapDim(in, a.i("dim1"), r);
    return view(a["self"], in.build<cir::TransposeOp>(x, i64(in, d0), i64(in, d1)));
  };
  auto transpose2d = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = a.t("self");
    if (rankOf(x) > 2)
      in.fail("CUVIL-E-IMPORT-RAISE", "t() expects a tensor with <= 2 dimensions");
    if (rankOf(x) < 2)
      return view(a["self"], x);
    return view(a["self"], in.build<cir::TransposeOp>(x, i64(in, 0), i64(in, 1)));
  };
  t["aten::t"] = transpose2d;
  t["aten::numpy_T"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = a.t("self");
    std::vector<int64_t> dims;
    for (int64_t d = rankOf(x) - 1; d >= 0; --d)
      dims.push_back(d);
    return view(a["self"], in.build<cir::PermuteOp>(x, i64s(in, dims)));
  };
  t["aten::expand"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    return view(a["self"], in.build<cir::ExpandOp>(a.t("self"), i64s(in, a.ints("size"))));
  };
  t["aten::expand_as"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    if (!typeOf(a.t("other")).hasStaticShape())
      return view(a["self"], expandToShapeOf(in, a.t("self"), a.t("other")));
    std::vector<int64_t> shape = staticShape(in, a.t("other"), "expand_as");
    return view(a["self"], in.build<cir::ExpandOp>(a.t("self"), i64s(in, shape)));
  };
  // self.copy_(src): src broadcast to self's shape and cast to its dtype.
  t["aten::copy_"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value self = a.t("self");
    const char *srcName = b.has("src") ? "src" : "other";
    Value src = a[srcName].isTensor() ? a.t(srcName) : operand(in, a[srcName], self);
    if (typeOf(src).getShape() != typeOf(self).getShape()) {
      std::vector<int64_t> shape = staticShape(in, self, "copy_");
      if (shape.empty() && typeOf(self).getRank() > 0)
        return IValue::poison();
      src = in.build<cir::ExpandOp>(src, i64s(in, shape));
    }
    return inplace(in, a["self"], cast(in, src, dtypeOf(self)));
  };
  auto alias = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    return view(a["self"], a.t("self"));
  };
  // self when it is contiguous already, else a copy (a transposed or
  // expanded view): in-place writes to the result reach self only then.
  t["aten::contiguous"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = a.t("self");
    return isContiguousLayout(a["self"]) ? view(a["self"], x) : ret(x);
  };
  t["aten::detach"] = alias;
  t["aten::alias"] = alias;
  t["aten::clone"] = [](Interpreter &in, const BoundArgs &b) { return ret(Args{in, b}.t("self")); };
  t["aten::to"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = a.t("self");
    std::optional<DType> d;
    if (b.has("other"))
      d = dtypeOf(a.t("other"));
    else if (b.has("dtype"))
      d = a.dtype("dtype");
    bool copy = b.has("copy") && a.b("copy");
    if (!d || *d == dtypeOf(x))
      return copy ? ret(x) : view(a["self"], x);
    return ret(cast(in, x, *d));
  };
  t["aten::type_as"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    return ret(cast(in, a.t("self"), dtypeOf(a.t("other"))));
  };
  // Eval-mode dropout is the identity. Functional forms name the tensor
  // "input", the in-place forms (dropout_, feature_dropout_, ...) "self".
  // In training mode only p = 0 (the identity) and p = 1 (zeros) are not
  // random.
  auto dropout = [](bool alpha) {
    return [alpha](Interpreter &in, const BoundArgs &b) {
      Args a{in, b};
      const char *x = b.has("input") ? "input" : "self";
      if (a.b("train")) {
        double p = a.f("p");
        if (p == 1.0 && !alpha) {
          std::vector<int64_t> shape = staticShape(in, a.t(x), "dropout with p=1");
          return ret(splat(in, shape, dtypeOf(a.t(x)), IValue::integer(0)));
        }
        if (p != 0.0)
          return in.unsupported("dropout in training mode (random numbers)");
      }
      return view(a[x], a.t(x));
    };
  };
  for (const char *name : {"aten::dropout", "aten::feature_dropout", "aten::dropout_",
                           "aten::feature_dropout_"})
    t[name] = dropout(false);
  for (const char *name : {"aten::alpha_dropout", "aten::feature_alpha_dropout", "aten::alpha_dropout_",
                           "aten::feature_alpha_dropout_"})
    t[name] = dropout(true);

  t["aten::cat"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    std::vector<Value> all = a.tensors("tensors"), parts;
    if (all.empty())
      in.fail("CUVIL-E-IMPORT-RAISE", "torch.cat(): expected a non-empty list of Tensors");
    // Legacy behaviour: 1-D empty tensors are skipped.
    int64_t rank = 0;
    for (Value v : all)
      rank = std::max(rank, rankOf(v));
    for (Value v : all)
      if (!(rankOf(v) == 1 && typeOf(v).getDimSize(0) == 0 && rank > 1))
        parts.push_back(v);
    if (parts.empty())
      return ret(all.front());
    llvm::SmallVector<mlir::Type> types;
    for (Value v : parts)
      types.push_back(v.getType());
    mlir::Type common = cir::resultElementType(types);
    for (Value &v : parts)
      if (typeOf(v).getElementType() != common)
        v = in.builder().create<cir::CastOp>(in.location(), typeOf(v).clone(common), v);
    int64_t dim = wrapDim(in, a.i("dim"), rankOf(parts.front()));
    return ret(in.build<cir::ConcatOp>(mlir::ValueRange(parts), i64(in, dim)));
  };
  t["aten::stack"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    std::vector<Value> parts = a.tensors("tensors");
    if (parts.empty())
      in.fail("CUVIL-E-IMPORT-RAISE", "stack expects a non-empty TensorList");
    int64_t rank = rankOf(parts.front()), d = a.i("dim");
    if (d < -(rank + 1) || d > rank)
      in.fail("CUVIL-E-IMPORT-RAISE", "stack dimension out of range");
    if (d < 0)
      d += rank + 1;
    for (Value &v : parts)
      v = in.build<cir::UnsqueezeOp>(v, i64(in, d));
    return ret(in.build<cir::ConcatOp>(mlir::ValueRange(parts), i64(in, d)));
  };
  auto sliceOf = [](Interpreter &in, const IValue &self, int64_t dim, int64_t start, int64_t end,
                    int64_t step) {
    return view(self, in.build<cir::SliceOp>(self.tensor->value, i64(in, dim), i64(in, start),
                                             i64(in, end), i64(in, step)));
  };
  t["aten::slice"] = [sliceOf](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = a.t("self");
    int64_t dim = wrapDim(in, a.i("dim"), rankOf(x));
    int64_t start = a.none("start") ? 0 : a.i("start");
    int64_t end = a.none("end") ? std::numeric_limits<int64_t>::max() : a.i("end");
    int64_t step = a.i("step");
    if (step < 1)
      in.fail("CUVIL-E-IMPORT-RAISE", "slice step must be positive");
    return sliceOf(in, a["self"], dim, start, end, step);
  };
  t["aten::narrow"] = [sliceOf](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = a.t("self");
    int64_t dim = wrapDim(in, a.i("dim"), rankOf(x));
    if (a["start"].isTensor()) {
      // A start known at run time: the rows start + [0, length) picked by
      // index_select (which checks them against the size at run time).
      int64_t size = typeOf(x).getDimSize(dim), length = a.i("length");
      Value sizeValue = mlir::ShapedType::isDynamic(size)
                            ? in.build<cir::DimOp>(x, i64(in, dim))
                            : in.scalarConstant(IValue::integer(size), DType::Int64);
      Value start = cast(in, a.t("start"), DType::Int64);
      Value zero = in.scalarConstant(IValue::integer(0), DType::Int64);
      Value wrapped = in.build<cir::AddOp>(start, sizeValue);
      start = in.build<cir::WhereOp>(in.build<cir::LtOp>(start, zero), wrapped, start);
      std::vector<int64_t> steps(length);
      for (int64_t i = 0; i < length; ++i)
        steps[i] = i;
      Value rows = in.build<cir::AddOp>(constantI64(in, steps), start);
      return ret(in.build<cir::IndexSelectOp>(x, rows, i64(in, dim)));
    }
    int64_t size = typeOf(x).getDimSize(dim), start = a.i("start"), length = a.i("length");
    if (start < 0 && size >= 0)
      start += size;
    return sliceOf(in, a["self"], dim, start, start + length, 1);
  };
  t["aten::select"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = a.t("self");
    int64_t dim = wrapDim(in, a.i("dim"), rankOf(x));
    return view(a["self"], in.build<cir::SelectOp>(x, i64(in, dim), i64(in, a.i("index"))));
  };
  auto pieces = [sliceOf](Interpreter &in, const IValue &self, int64_t dim, std::vector<int64_t> sizes) {
    IValueList out;
    int64_t offset = 0;
    for (int64_t s : sizes) {
      out.push_back(sliceOf(in, self, dim, offset, offset + s, 1));
      offset += s;
    }
    return IValue::makeList(out);
  };
  t["aten::chunk"] = [pieces](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = a.t("self");
    int64_t dim = wrapDim(in, a.i("dim"), rankOf(x)), chunks = a.i("chunks");
    int64_t size = typeOf(x).getDimSize(dim);
    if (size < 0)
      return in.unsupported("chunk along a dynamic dimension");
    if (chunks <= 0)
      in.fail("CUVIL-E-IMPORT-RAISE", "chunk expects `chunks` to be greater than 0");
    int64_t each = (size + chunks - 1) / chunks;
    std::vector<int64_t> sizes;
    for (int64_t off = 0; off < size || (size == 0 && sizes.empty()); off += std::max<int64_t>(each, 1))
      sizes.push_back(std::min(each, size - off));
    return pieces(in, a["self"], dim, sizes);
  };
  auto split = [pieces](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = a.t("self");
    int64_t dim = wrapDim(in, a.i("dim"), rankOf(x));
    int64_t size = typeOf(x).getDimSize(dim);
    if (size < 0)
      return in.unsupported("split along a dynamic dimension");
    std::vector<int64_t> sizes;
    const char *argName = b.has("split_size") ? "split_size" : "split_sizes";
    if (a[argName].is(K::Int)) {
      int64_t each = a.i(argName);
      if (each <= 0)
        in.fail("CUVIL-E-IMPORT-RAISE", "split expects split_size be non-negative");
      for (int64_t off = 0; off < size; off += each)
        sizes.push_back(std::min(each, size - off));
      if (sizes.empty())
        sizes.push_back(0);
    } else {
      sizes = a.ints(argName);
      int64_t total = 0;
      for (int64_t s : sizes)
        total += s;
      if (total != size)
        in.fail("CUVIL-E-IMPORT-RAISE", "split_with_sizes expects split_sizes to sum exactly to " + std::to_string(size));
    }
    return pieces(in, a["self"], dim, sizes);
  };
  t["aten::split"] = split;
  t["aten::split_with_sizes"] = split;
  t["aten::unbind"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = a.t("self");
    int64_t dim = wrapDim(in, a.i("dim"), rankOf(x)), size = typeOf(x).getDimSize(dim);
    if (size < 0)
      return in.unsupported("unbind along a dynamic dimension");
    IValueList out;
    for (int64_t k = 0; k < size; ++k)
      out.push_back(view(a["self"], in.build<cir::SelectOp>(x, i64(in, dim), i64(in, k))));
    return IValue::makeList(out);
  };
  t["aten::index_select"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = a.t("self");
    int64_t dim = wrapDim(in, a.i("dim"), rankOf(x));
    // A 0-d input is picked from as if it had one dimension of size 1.
    if (rankOf(x) == 0) {
      Value one = in.build<cir::UnsqueezeOp>(x, i64(in, 0));
      Value r = in.build<cir::IndexSelectOp>(one, a.t("index"), i64(in, 0));
      return ret(typeOf(r).getNumElements() == 1 ? in.build<cir::ReshapeOp>(r, i64s(in, {})) : r);
    }
    return ret(in.build<cir::IndexSelectOp>(x, a.t("index"), i64(in, dim)));
  };
  t["aten::gather"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = a.t("self"), index = a.t("index");
    int64_t dim = wrapDim(in, a.i("dim"), rankOf(x));
    if (typeOf(index).hasStaticShape() && typeOf(index).getNumElements() == 0)
      return ret(splat(in, shapeOf(index), dtypeOf(x), IValue::integer(0))); // PyTorch checks nothing then
    // A 0-d input or index counts as one element of rank 1 (PyTorch).
    if ((rankOf(x) == 0) != (rankOf(index) == 0)) {
      std::vector<int64_t> shape = shapeOf(index);
      Value x1 = rankOf(x) ? x : lower::reshape(in, x, {1});
      Value i1 = rankOf(index) ? index : lower::reshape(in, index, {1});
      return ret(lower::reshape(in, in.build<cir::GatherOp>(x1, i1, i64(in, 0)), shape));
    }
    return ret(in.build<cir::GatherOp>(x, index, i64(in, dim)));
  };
  t["aten::embedding"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    mlir::IntegerAttr pad;
    if (a.i("padding_idx") >= 0)
      pad = i64(in, a.i("padding_idx"));
    return ret(in.build<cir::EmbeddingOp>(a.t("weight"), a.t("indices"), pad));
  };
  auto pad = [](Interpreter &in, Value x, std::vector<int64_t> pads, cir::PadMode mode, double value) {
    return in.build<cir::PadOp>(x, i64s(in, pads), cir::PadModeAttr::get(in.context(), mode), f64(in, value));
  };
  t["aten::constant_pad_nd"] = [pad](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    return ret(pad(in, a.t("self"), a.ints("pad"), cir::PadMode::Constant, a.f("value")));
  };
  t["aten::pad"] = [pad](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    std::string mode = a.s("mode");
    cir::PadMode m = mode == "reflect" ? cir::PadMode::Reflect
                     : mode == "replicate" ? cir::PadMode::Replicate
                     : mode == "circular" ? cir::PadMode::Circular
                                          : cir::PadMode::Constant;
    if (mode != "constant" && mode != "reflect" && mode != "replicate" && mode != "circular")
      in.fail("CUVIL-E-IMPORT-RAISE", "Unrecognised padding mode " + mode);
    double value = a.none("value") ? 0.0 : a.f("value");
    return ret(pad(in, a.t("self"), a.ints("pad"), m, value));
  };

  // Constants built from shapes and scalars.
  auto filled = [](const char *kind) {
    std::string k = kind;
    return [k](Interpreter &in, const BoundArgs &b) {
      Args a{in, b};
      bool like = b.has("self");
      IValue value = k == "full" ? a["fill_value"] : IValue::integer(k == "ones" ? 1 : 0);
      DType d = like              ? dtypeOf(a.t("self"))
                : k != "full"     ? DType::Float32
                : value.is(K::Float) ? DType::Float32
                : value.is(K::Bool)  ? DType::Bool
                                     : DType::Int64;
      d = a.dtype("dtype").value_or(d);
      // A tensor with run-time dimensions: filled at its run-time sizes.
      if (like && !typeOf(a.t("self")).hasStaticShape())
        return ret(filledLike(in, a.t("self"), d, value));
      std::vector<int64_t> shape = like ? staticShape(in, a.t("self"), ("aten::" + k).c_str()) : a.ints("size");
      for (int64_t s : shape)
        if (s < 0)
          in.fail("CUVIL-E-IMPORT-RAISE", "negative dimension in a tensor factory");
      return ret(splat(in, shape, d, value));
    };
  };
  t["aten::zeros"] = filled("zeros");
  t["aten::ones"] = filled("ones");
  t["aten::full"] = filled("full");
  t["aten::zeros_like"] = filled("zeros");
  t["aten::ones_like"] = filled("ones");
  t["aten::full_like"] = filled("full");
  t["aten::scalar_tensor"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    DType d = a.dtype("dtype").value_or(DType::Float32);
    return ret(in.scalarConstant(a["s"], d));
  };
  t["aten::arange"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    IValue start = b.has("start") ? a["start"] : IValue::integer(0);
    IValue end = a["end"];
    IValue step = b.has("step") ? a["step"] : IValue::integer(1);
    bool isInt = !start.is(K::Float) && !end.is(K::Float) && !step.is(K::Float);
    DType d = a.dtype("dtype").value_or(isInt ? DType::Int64 : DType::Float32);
    double s = start.is(K::Float) ? start.f : double(start.i), e = end.is(K::Float) ? end.f : double(end.i),
           st = step.is(K::Float) ? step.f : double(step.i);
    if (st == 0 || ((e - s) / st) < 0)
      in.fail("CUVIL-E-IMPORT-RAISE", "upper bound and larger bound inconsistent with step sign");
    int64_t n = static_cast<int64_t>(std::ceil((e - s) / st));
    if (n > (1 << 26))
      in.fail("CUVIL-E-IMPORT-RAISE", "arange with more than 64M elements");
    Tensor host(d, {n});
    for (int64_t k = 0; k < n; ++k) {
      if (isFloat(d))
        host.setDouble(k, s + k * st);
      else
        host.setInt(k, static_cast<int64_t>(s) + k * static_cast<int64_t>(st));
    }
    RankedTensorType type = RankedTensorType::get({n}, elementType(in.context(), d));
    llvm::SmallVector<mlir::Attribute> values;
    for (int64_t k = 0; k < n; ++k)
      values.push_back(isFloat(d) ? mlir::Attribute(mlir::FloatAttr::get(type.getElementType(), host.getDouble(k)))
                                  : mlir::Attribute(mlir::IntegerAttr::get(type.getElementType(), host.getInt(k))));
    auto attr = mlir::DenseElementsAttr::get(type, values);
    return ret(in.builder().create<cir::ConstantOp>(in.location(), type, attr));
  };

  // triu/tril: where(mask, x, 0) with the [rows, cols] mask as a constant
  // (attention masks are built this way; constant folding then removes it).
  auto triangle = [](bool upper) {
    return [upper](Interpreter &in, const BoundArgs &b) {
      Args a{in, b};
      Value x = a.t("self");
      int64_t k = a.i("diagonal"), r = rankOf(x);
      if (r < 2)
        in.fail("CUVIL-E-IMPORT-RAISE", std::string(upper ? "triu" : "tril") +
                                            ": input tensor must have at least 2 dimensions");
      int64_t rows = typeOf(x).getDimSize(r - 2), cols = typeOf(x).getDimSize(r - 1);
      if (mlir::ShapedType::isDynamic(rows) || mlir::ShapedType::isDynamic(cols))
        return triangleOfRunTimeSize(in, a["self"], k, upper);
      if (rows * cols > (int64_t(1) << 26))
        return in.unsupported(std::string("aten::") + (upper ? "triu" : "tril") +
                              " of a matrix larger than 2^26 elements");
      RankedTensorType type = RankedTensorType::get({rows, cols}, in.builder().getI1Type());
      llvm::SmallVector<bool> keep(static_cast<size_t>(rows * cols));
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j)
          keep[i * cols + j] = upper ? j - i >= k : j - i <= k;
      auto attr = mlir::DenseElementsAttr::get(type, llvm::ArrayRef<bool>(keep));
      Value mask = in.builder().create<cir::ConstantOp>(in.location(), type, attr);
      IValue zero = dtypeOf(x) == DType::Bool ? IValue::boolean(false)
                    : isFloat(dtypeOf(x))     ? IValue::floating(0.0)
                                              : IValue::integer(0);
      return in.callOperator("aten::where", {IValue::ofTensor(mask), a["self"], zero}, {});
    };
  };
  t["aten::triu"] = triangle(true);
  t["aten::tril"] = triangle(false);
}

} // namespace

void registerTensorHandlers(std::map<std::string, OpHandler> &table) {
  registerElementwise(table);
  registerLinalg(table);
  registerReductions(table);
  registerShapes(table);
}

} // namespace cuvil::torchscript
