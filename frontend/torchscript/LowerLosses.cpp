//===- LowerLosses.cpp - torch.nn.functional's loss functions -------------===//
//
// Each loss is PyTorch's own formula (ATen's Loss.cpp / LossNLL.cpp),
// composed of cuvil ops, then reduced as `reduction` says (0 none, 1 mean,
// 2 sum). Class-index losses (nll_loss, cross_entropy, multi_margin) read the
// target's class with a gather, ignored targets masked out of the sum and of
// the mean's weight total.
//
//===----------------------------------------------------------------------===//
#include "frontend/torchscript/LowerHelpers.h"

#include <cmath>

namespace cuvil::torchscript {
namespace {

using namespace lower;

std::vector<int64_t> allDims(Value x) {
  std::vector<int64_t> d(rankOf(x));
  for (int64_t k = 0; k < rankOf(x); ++k)
    d[k] = k;
  return d;
}

/// Formula building blocks on tensors (PyTorch's promotion in the ops).
struct F {
  Interpreter &in;
  /// A Python float next to `like` (PyTorch promotes an integer tensor).
  Value num(Value like, double v) const { return scalarOperand(in, IValue::floating(v), like); }
  /// A Python int next to `like` (cast to its dtype, as PyTorch does).
  Value numInt(Value like, int64_t v) const { return scalarOperand(in, IValue::integer(v), like); }
  Value add(Value a, Value b) const { return in.build<cir::AddOp>(a, b); }
  Value sub(Value a, Value b) const { return in.build<cir::SubOp>(a, b); }
  Value mul(Value a, Value b) const { return in.build<cir::MulOp>(a, b); }
  Value div(Value a, Value b) const {
    return in.build<cir::DivOp>(a, b, cir::RoundingModeAttr::get(in.context(), cir::RoundingMode::None));
  }
  Value neg(Value a) const { return in.build<cir::NegOp>(a); }
  Value abs(Value a) const { return in.build<cir::AbsOp>(a); }
  Value exp(Value a) const { return in.build<cir::ExpOp>(floatOperand(in, a)); }
  Value log(Value a) const { return in.build<cir::LogOp>(floatOperand(in, a)); }
  Value log1p(Value a) const { return in.build<cir::Log1pOp>(floatOperand(in, a)); }
  Value sqrt(Value a) const { return in.build<cir::SqrtOp>(floatOperand(in, a)); }
  Value max(Value a, Value b) const { return in.build<cir::MaximumOp>(a, b); }
  Value min(Value a, Value b) const { return in.build<cir::MinimumOp>(a, b); }
  Value clampMin(Value a, double lo) const { return max(a, num(a, lo)); }
  Value where(Value c, Value a, Value b) const { return in.build<cir::WhereOp>(c, a, b); }
  Value lt(Value a, Value b) const { return in.build<cir::LtOp>(a, b); }
  Value eq(Value a, Value b) const { return in.build<cir::EqOp>(a, b); }
  Value ne(Value a, Value b) const { return in.build<cir::NeOp>(a, b); }
  Value sum(Value a, std::vector<int64_t> dims, bool keep = false) const {
    if (rankOf(a) == 0)
      dims.clear();
    return in.build<cir::SumOp>(a, i64s(in, dims), keep ? in.builder().getUnitAttr() : mlir::UnitAttr());
  }
  Value sumAll(Value a) const { return sum(a, allDims(a)); }
  Value pow(Value a, double p) const { return in.build<cir::PowOp>(a, num(a, p)); }
};

Value reduce(Interpreter &in, Value loss, int64_t reduction) {
  switch (reduction) {
  case 0: return loss;
  case 1: return in.build<cir::MeanOp>(loss, i64s(in, allDims(loss)), mlir::UnitAttr());
  case 2: return in.build<cir::SumOp>(loss, i64s(in, allDims(loss)), mlir::UnitAttr());
  }
  in.fail("CUVIL-E-IMPORT-RAISE", std::to_string(reduction) + " is not a valid value for reduction");
}

int64_t reductionOf(const Args &a) { return a.i("reduction"); }

/// The class-index losses' common step: per element of `target` (shape
/// [N, d...] or []), the input at its class along dim 1 (dim 0 for a 1-D
/// input) and the class weight; ignored targets give 0 for both.
struct ClassPick {
  Value picked; ///< input[i, target[i], ...]
  Value weight; ///< weight[target[i]] (1 without weights), 0 where ignored
};

ClassPick pickClass(Interpreter &in, Value x, Value target, Value weight, int64_t ignoreIndex) {
  F f{in};
  int64_t classDim = rankOf(x) == 1 ? 0 : 1;
  int64_t classes = shapeOf(x)[classDim];
  Value t = cast(in, target, DType::Int64);
  Value ignored = f.eq(t, in.scalarConstant(IValue::integer(ignoreIndex), DType::Int64));
  Value zeroI = in.scalarConstant(IValue::integer(0), DType::Int64);
  Value safe = f.where(ignored, zeroI, t);
  std::vector<int64_t> ts = shapeOf(safe), is = ts;
  is.insert(is.begin() + classDim, 1);
  Value picked = in.build<cir::GatherOp>(x, reshape(in, safe, is), i64(in, classDim));
  picked = reshape(in, picked, ts);
  Value w;
  if (weight) {
    int64_t n = 1;
    for (int64_t d : ts)
      n *= d;
    w = in.build<cir::IndexSelectOp>(cast(in, weight, dtypeOf(x)), reshape(in, safe, {n}), i64(in, 0));
    w = reshape(in, w, ts);
  } else {
    w = in.scalarConstant(IValue::floating(1.0), dtypeOf(x));
    w = expandTo(in, w, ts);
  }
  (void)classes;
  Value zero = f.num(x, 0.0);
  return {f.where(ignored, zero, picked), f.where(ignored, zero, w)};
}

/// nll_loss on log-probabilities x.
Value nllLoss(Interpreter &in, Value x, Value target, Value weight, int64_t reduction, int64_t ignoreIndex) {
  F f{in};
  if (rankOf(x) < 1 || rankOf(x) > 1 + rankOf(target) || (rankOf(x) > 1 && rankOf(target) != rankOf(x) - 1))
    in.fail("CUVIL-E-IMPORT-RAISE", "nll_loss: expected input of shape [C] or [N, C, d...] and target [N, d...]");
  ClassPick p = pickClass(in, x, target, weight, ignoreIndex);
  Value loss = f.neg(f.mul(p.weight, p.picked));
  if (reduction == 1) // the weighted mean: NaN when every target is ignored
    return f.div(f.sumAll(loss), f.sumAll(p.weight));
  return reduce(in, loss, reduction);
}

Value crossEntropy(Interpreter &in, Value x, Value target, Value weight, int64_t reduction, int64_t ignoreIndex,
                   double smoothing) {
  F f{in};
  int64_t classDim = rankOf(x) == 1 ? 0 : 1;
  int64_t classes = shapeOf(x)[classDim];
  Value logp = in.build<cir::LogSoftmaxOp>(x, i64(in, classDim));
  std::vector<int64_t> wshape(rankOf(x), 1);
  wshape[classDim] = classes;
  Value wb = weight ? reshape(in, cast(in, weight, dtypeOf(x)), wshape) : Value();
  if (isFloat(dtypeOf(target))) { // class probabilities
    Value t = target;
    if (smoothing > 0)
      t = f.add(f.mul(t, f.num(t, 1.0 - smoothing)), f.num(t, smoothing / double(classes)));
    Value term = f.mul(logp, t);
    if (wb)
      term = f.mul(term, wb);
    Value loss = f.neg(f.sum(term, {classDim}));
    if (reduction == 1) {
      int64_t n = typeOf(x).getNumElements() / std::max<int64_t>(classes, 1);
      return f.div(f.sumAll(loss), f.num(loss, double(n)));
    }
    return reduce(in, loss, reduction);
  }
  Value nll = nllLoss(in, logp, target, weight, reduction, ignoreIndex);
  if (smoothing <= 0)
    return nll;
  Value term = wb ? f.mul(logp, wb) : logp;
  Value smooth = f.neg(f.sum(term, {classDim}));
  Value ignored = f.eq(cast(in, target, DType::Int64), in.scalarConstant(IValue::integer(ignoreIndex), DType::Int64));
  smooth = f.where(ignored, f.num(smooth, 0.0), smooth);
  Value s;
  if (reduction == 1) {
    if (wb)
      s = f.div(f.sumAll(smooth), f.sumAll(pickClass(in, x, target, weight, ignoreIndex).weight));
    else
      s = f.div(f.sumAll(smooth), f.sumAll(cast(in, in.build<cir::LogicalNotOp>(ignored), dtypeOf(x))));
  } else {
    s = reduce(in, smooth, reduction);
  }
  return f.add(f.mul(nll, f.num(nll, 1.0 - smoothing)), f.mul(s, f.num(s, smoothing / double(classes))));
}

void registerLossFunctions(Table &t) {
  auto elementwise = [&t](const char *name, std::function<Value(Interpreter &, const Args &, Value, Value)> fn) {
    t[name] = [fn](Interpreter &in, const BoundArgs &b) {
      Args a{in, b};
      Value x = floatOperand(in, a.t("self")), y = a.t("target");
      return ret(reduce(in, fn(in, a, x, y), reductionOf(a)));
    };
  };
  elementwise("aten::mse_loss", [](Interpreter &in, const Args &, Value x, Value y) {
    F f{in};
    Value d = f.sub(x, y);
    return f.mul(d, d);
  });
  elementwise("aten::l1_loss", [](Interpreter &in, const Args &, Value x, Value y) {
    F f{in};
    return f.abs(f.sub(x, y));
  });
  elementwise("aten::smooth_l1_loss", [](Interpreter &in, const Args &a, Value x, Value y) {
    F f{in};
    double beta = a.f("beta");
    Value d = f.abs(f.sub(x, y));
    if (beta == 0)
      return d;
    return f.where(f.lt(d, f.num(d, beta)), f.div(f.mul(f.num(d, 0.5), f.mul(d, d)), f.num(d, beta)),
                   f.sub(d, f.num(d, 0.5 * beta)));
  });
  elementwise("aten::huber_loss", [](Interpreter &in, const Args &a, Value x, Value y) {
    F f{in};
    double delta = a.f("delta");
    Value d = f.abs(f.sub(x, y));
    return f.where(f.lt(d, f.num(d, delta)), f.mul(f.num(d, 0.5), f.mul(d, d)),
                   f.mul(f.num(d, delta), f.sub(d, f.num(d, 0.5 * delta))));
  });
  elementwise("aten::soft_margin_loss", [](Interpreter &in, const Args &, Value x, Value y) {
    F f{in};
    return f.log1p(f.exp(f.mul(f.neg(x), y)));
  });
  elementwise("aten::kl_div", [](Interpreter &in, const Args &a, Value x, Value y) {
    F f{in};
    if (a.b("log_target"))
      return f.mul(f.exp(y), f.sub(y, x));
    // xlogy(y, y) - y * x: 0 where y is 0.
    Value ylogy = f.where(f.eq(y, f.num(y, 0.0)), f.num(y, 0.0), f.mul(y, f.log(y)));
    return f.sub(ylogy, f.mul(y, x));
  });
  t["aten::binary_cross_entropy"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    F f{in};
    Value x = a.t("self"), y = a.t("target");
    // log clamped at -100, as PyTorch does, so that 0 and 1 stay finite.
    auto clampedLog = [&](Value v) { return f.max(f.log(v), f.num(v, -100.0)); };
    Value loss = f.neg(f.add(f.mul(y, clampedLog(x)),
                             f.mul(f.sub(f.num(y, 1.0), y), clampedLog(f.sub(f.num(x, 1.0), x)))));
    if (Value w = a.optT("weight"))
      loss = f.mul(loss, w);
    return ret(reduce(in, loss, reductionOf(a)));
  };
  t["aten::binary_cross_entropy_with_logits"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    F f{in};
    Value x = a.t("self"), y = a.t("target");
    Value maxVal = f.clampMin(f.neg(x), 0.0);
    Value lse = f.log(f.add(f.exp(f.neg(maxVal)), f.exp(f.sub(f.neg(x), maxVal))));
    Value loss;
    if (Value pw = a.optT("pos_weight")) {
      Value logWeight = f.add(f.mul(f.sub(pw, f.num(pw, 1.0)), y), f.num(y, 1.0));
      loss = f.add(f.mul(f.sub(f.num(y, 1.0), y), x), f.mul(logWeight, f.add(lse, maxVal)));
    } else {
      loss = f.add(f.add(f.mul(f.sub(f.num(y, 1.0), y), x), maxVal), lse);
    }
    if (Value w = a.optT("weight"))
      loss = f.mul(loss, w);
    return ret(reduce(in, loss, reductionOf(a)));
  };
  t["aten::hinge_embedding_loss"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    F f{in};
    Value x = a.t("self"), y = a.t("target");
    Value zero = f.num(x, 0.0);
    Value marginClamp = f.clampMin(f.sub(f.num(x, a.f("margin")), x), 0.0);
    Value outMargin = f.where(f.ne(y, f.numInt(y, 1)), marginClamp, zero);
    Value outSelf = f.where(f.ne(y, f.numInt(y, -1)), x, zero);
    return ret(reduce(in, f.add(outMargin, outSelf), reductionOf(a)));
  };
  t["aten::margin_ranking_loss"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    F f{in};
    Value x1 = a.t("input1"), x2 = a.t("input2"), y = a.t("target");
    Value loss = f.clampMin(f.add(f.mul(f.neg(y), f.sub(x1, x2)), f.num(x1, a.f("margin"))), 0.0);
    return ret(reduce(in, loss, reductionOf(a)));
  };
  t["aten::cosine_embedding_loss"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    F f{in};
    Value x1 = a.t("input1"), x2 = a.t("input2"), y = a.t("target");
    int64_t dim = rankOf(x1) - 1;
    const double eps = 1e-12;
    Value prod = f.sum(f.mul(x1, x2), {dim});
    Value m1 = f.add(f.sum(f.mul(x1, x1), {dim}), f.num(x1, eps));
    Value m2 = f.add(f.sum(f.mul(x2, x2), {dim}), f.num(x2, eps));
    Value cos = f.div(prod, f.sqrt(f.mul(m1, m2)));
    Value zero = f.num(cos, 0.0);
    Value pos = f.sub(f.num(cos, 1.0), cos);
    Value negPart = f.clampMin(f.sub(cos, f.num(cos, a.f("margin"))), 0.0);
    Value loss = f.add(f.where(f.eq(y, f.numInt(y, 1)), pos, zero), f.where(f.eq(y, f.numInt(y, -1)), negPart, zero));
    return ret(reduce(in, loss, reductionOf(a)));
  };
  t["aten::poisson_nll_loss"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    F f{in};
    Value x = a.t("input"), y = a.t("target");
    Value loss = a.b("log_input") ? f.sub(f.exp(x), f.mul(y, x))
                                  : f.sub(x, f.mul(y, f.log(f.add(x, f.num(x, a.f("eps"))))));
    if (a.b("full")) { // Stirling's term, where target > 1
      Value yf = cast(in, y, dtypeOf(loss));
      Value stirling = f.add(f.sub(f.mul(yf, f.log(yf)), yf),
                             f.mul(f.num(yf, 0.5), f.log(f.mul(f.num(yf, 2.0 * M_PI), yf))));
      loss = f.add(loss, f.where(f.lt(f.num(yf, 1.0), yf), stirling, f.num(yf, 0.0)));
    }
    return ret(reduce(in, loss, a.i("reduction")));
  };
  t["aten::triplet_margin_loss"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    F f{in};
    Value an = a.t("anchor"), po = a.t("positive"), ne = a.t("negative");
    double p = a.f("p"), eps = a.f("eps");
    auto dist = [&](Value u, Value v) { // pairwise_distance: ||u - v + eps||_p over the last dim
      Value d = f.abs(f.add(f.sub(u, v), f.num(u, eps)));
      int64_t last = std::max<int64_t>(rankOf(d) - 1, 0);
      if (p == 2)
        return f.sqrt(f.sum(f.mul(d, d), {last}));
      if (p == 1)
        return f.sum(d, {last});
      if (std::isinf(p))
        return in.build<cir::MaxOp>(d, i64s(in, {last}), mlir::UnitAttr());
      return f.pow(f.sum(f.pow(d, p), {last}), 1.0 / p);
    };
    Value dp = dist(an, po), dn = dist(an, ne);
    if (a.b("swap"))
      dn = f.min(dn, dist(po, ne));
    Value loss = f.clampMin(f.sub(f.add(f.num(dp, a.f("margin")), dp), dn), 0.0);
    return ret(reduce(in, loss, reductionOf(a)));
  };
  for (const char *name : {"aten::nll_loss", "aten::nll_loss_nd", "aten::nll_loss2d"})
    t[name] = [](Interpreter &in, const BoundArgs &b) {
      Args a{in, b};
      return ret(nllLoss(in, a.t("self"), a.t("target"), a.optT("weight"), reductionOf(a), a.i("ignore_index")));
    };
  t["aten::cross_entropy_loss"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    return ret(crossEntropy(in, floatOperand(in, a.t("self")), a.t("target"), a.optT("weight"), reductionOf(a),
                            a.i("ignore_index"), a.f("label_smoothing")));
  };
  t["aten::multi_margin_loss"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    F f{in};
    Value x = a.t("self"), target = a.t("target");
    bool single = rankOf(x) <= 1;
    if (single)
      x = reshape(in, x, {1, rankOf(x) ? shapeOf(x)[0] : 1});
    int64_t n = shapeOf(x)[0], c = shapeOf(x)[1];
    Value t = reshape(in, cast(in, target, DType::Int64), {n, 1});
    Value xy = in.build<cir::GatherOp>(x, t, i64(in, 1)); // [n, 1]
    Value margin = f.num(x, a.f("margin"));
    Value z = f.clampMin(f.add(f.sub(margin, xy), x), 0.0);
    double p = a.f("p");
    if (p == 2)
      z = f.mul(z, z);
    else if (p != 1)
      in.fail("CUVIL-E-IMPORT-RAISE", "multi_margin_loss: only p == 1 and p == 2 supported");
    if (Value w = a.optT("weight"))
      z = f.mul(z, reshape(in, in.build<cir::IndexSelectOp>(w, reshape(in, t, {n}), i64(in, 0)), {n, 1}));
    // The target's own class does not count.
    Value classes = constantI64(in, [&] {
      std::vector<int64_t> v(c);
      for (int64_t k = 0; k < c; ++k)
        v[k] = k;
      return v;
    }(), {1, c});
    z = f.where(f.eq(classes, t), f.num(z, 0.0), z);
    Value loss = f.div(f.sum(z, {1}), f.num(z, double(c)));
    if (single)
      loss = reshape(in, loss, rankOf(target) ? std::vector<int64_t>{1} : std::vector<int64_t>{});
    return ret(reduce(in, loss, reductionOf(a)));
  };
  t["aten::multilabel_margin_loss"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    F f{in};
    Value x = a.t("self"), target = cast(in, a.t("target"), DType::Int64);
    bool single = rankOf(x) <= 1;
    int64_t c = rankOf(x) ? shapeOf(x).back() : 1;
    if (single) {
      x = reshape(in, x, {1, c});
      target = reshape(in, target, {1, c});
    }
    int64_t n = shapeOf(x)[0];
    // Target positions up to the first -1 are the sample's classes.
    Value minusOne = in.scalarConstant(IValue::integer(-1), DType::Int64);
    Value valid = in.build<cir::CumulativeOp>(cast(in, f.ne(target, minusOne), DType::Int64), i64(in, 1),
                                              cir::ScanKindAttr::get(in.context(), cir::ScanKind::Prod));
    Value zeroI = in.scalarConstant(IValue::integer(0), DType::Int64);
    Value safe = f.where(f.ne(valid, zeroI), target, zeroI);
    std::vector<int64_t> ks(c);
    for (int64_t k = 0; k < c; ++k)
      ks[k] = k;
    Value classes = constantI64(in, ks, {1, 1, c});
    Value validB = reshape(in, f.ne(valid, zeroI), {n, c, 1});
    Value isTarget = in.build<cir::AnyOp>(
        in.build<cir::LogicalAndOp>(validB, f.eq(reshape(in, safe, {n, c, 1}), classes)), i64s(in, {1}),
        mlir::UnitAttr()); // [n, c]
    Value xy = reshape(in, in.build<cir::GatherOp>(x, safe, i64(in, 1)), {n, c, 1}); // x at each target
    Value z = f.clampMin(f.add(f.sub(f.num(x, 1.0), xy), reshape(in, x, {n, 1, c})), 0.0); // [n, p, k]
    Value keep = in.build<cir::LogicalAndOp>(validB, in.build<cir::LogicalNotOp>(reshape(in, isTarget, {n, 1, c})));
    z = f.where(keep, z, f.num(z, 0.0));
    Value loss = f.div(f.sum(z, {1, 2}), f.num(z, double(c)));
    if (single)
      loss = reshape(in, loss, {});
    return ret(reduce(in, loss, reductionOf(a)));
  };
}

} // namespace

void registerLossHandlers(std::map<std::string, OpHandler> &table) { registerLossFunctions(table); }

} // namespace cuvil::torchscript
