//===- LowerSortOps.cpp - sort and what is built on it --------------------===//
//
// torch.sort becomes cuvil.tensor.sort (stable; NaN above every number);
// the operators PyTorch defines by order statistics are composed on it:
// argsort and msort, topk (a slice of the sorted line), kthvalue, median
// and nanmedian (a gather at a position computed from the NaN count), and
// quantile / nanquantile (PyTorch's rank formula, gathered and blended).
//
//===----------------------------------------------------------------------===//
#include "frontend/torchscript/LowerHelpers.h"

#include <cmath>
#include <numeric>

namespace cuvil::torchscript {
namespace {

using namespace lower;

struct Sorted {
  Value values, indices;
};

/// x sorted along `dim` (already wrapped).
Sorted sortAlong(Interpreter &in, Value x, int64_t dim, bool descending) {
  mlir::OpBuilder &b = in.builder();
  auto op = b.create<cir::SortOp>(in.location(), b.getNoneType(), b.getNoneType(), x,
                                  i64(in, dim), descending ? b.getUnitAttr() : mlir::UnitAttr());
  Value values = in.finishBuild(op.getOperation());
  return {values, op.getIndices()};
}

int64_t dimArg(Interpreter &in, const Args &a, const BoundArgs &b, Value x, const char *name = "dim") {
  return wrapDim(in, b.has(name) && !a.none(name) ? a.i(name) : -1, rankOf(x));
}

/// x without its (size-1) dimension `dim`, unless `keep`.
Value dropDim(Interpreter &in, Value x, int64_t dim, bool keep) {
  if (keep || rankOf(x) == 0)
    return x;
  std::vector<int64_t> s = shapeOf(x);
  s.erase(s.begin() + dim);
  return reshape(in, x, s);
}

Value constantInt(Interpreter &in, int64_t v) { return in.scalarConstant(IValue::integer(v), DType::Int64); }

/// The number of NaNs along `dim` of float x, kept as a size-1 dimension
/// (int64); 0-d for a 0-d x.
Value nanCount(Interpreter &in, Value x, int64_t dim) {
  Value isNan = cast(in, in.build<cir::NeOp>(x, x), DType::Int64);
  if (rankOf(x) == 0)
    return isNan;
  return in.build<cir::SumOp>(isNan, i64s(in, {dim}), in.builder().getUnitAttr());
}

/// The elements of sorted line `s` (and their indices) at `position`, an
/// int64 tensor with a size-1 `dim` (or 0-d for a 0-d s).
Sorted pickAt(Interpreter &in, const Sorted &s, Value position, int64_t dim) {
  if (rankOf(s.values) == 0)
    return s;
  std::vector<int64_t> shape = shapeOf(s.values);
  shape[dim] = 1;
  position = expandTo(in, position, shape);
  return {in.build<cir::GatherOp>(s.values, position, i64(in, dim)),
          in.build<cir::GatherOp>(s.indices, position, i64(in, dim))};
}

/// median / nanmedian along dim: the lower of the two middle elements. A
/// line holding NaN gives its first NaN (median) or the median of the rest
/// (nanmedian; NaN when all are).
Sorted medianAlong(Interpreter &in, Value x, int64_t dim, bool ignoreNan) {
  Sorted s = sortAlong(in, x, dim, false);
  int64_t n = rankOf(x) ? shapeOf(x)[dim] : 1;
  if (!isFloat(dtypeOf(x)))
    return pickAt(in, s, constantInt(in, (n - 1) / 2), dim);
  Value nans = nanCount(in, x, dim);
  Value numbers = in.build<cir::SubOp>(constantInt(in, n), nans);
  Value position;
  if (ignoreNan) {
    // (numbers - 1) / 2, 0 when every element is NaN.
    Value m1 = in.build<cir::SubOp>(numbers, constantInt(in, 1));
    position = in.build<cir::DivOp>(in.build<cir::MaximumOp>(m1, constantInt(in, 0)), constantInt(in, 2),
                                    cir::RoundingModeAttr::get(in.context(), cir::RoundingMode::Floor));
  } else {
    // NaNs sort last, in their order: the first of them is at `numbers`.
    Value hasNan = in.build<cir::GtOp>(nans, constantInt(in, 0));
    position = in.build<cir::WhereOp>(hasNan, numbers, constantInt(in, (n - 1) / 2));
  }
  return pickAt(in, s, position, dim);
}

std::vector<int64_t> moveLast(int64_t rank, int64_t dim) {
  std::vector<int64_t> order;
  for (int64_t d = 0; d < rank; ++d)
    if (d != dim)
      order.push_back(d);
  order.push_back(dim);
  return order;
}

/// torch.quantile / nanquantile (PyTorch's algorithm: sort, rank = q *
/// (count - 1), the elements below and above the rank, blended by the
/// interpolation mode).
Value quantile(Interpreter &in, Value x, Value q, std::optional<int64_t> dimArg, bool keep,
               const std::string &mode, bool ignoreNan) {
  if (!isFloat(dtypeOf(x)))
    in.fail("CUVIL-E-IMPORT-RAISE", "quantile() input tensor must be either float or double dtype");
  static const char *modes[] = {"linear", "lower", "higher", "midpoint", "nearest"};
  if (std::find(std::begin(modes), std::end(modes), mode) == std::end(modes))
    in.fail("CUVIL-E-IMPORT-RAISE", "quantile() interpolation must be one of linear, lower, higher, "
                                    "midpoint or nearest; got '" + mode + "'");
  if (rankOf(q) > 1)
    in.fail("CUVIL-E-IMPORT-RAISE", "quantile() q must be a scalar or 1D tensor");
  DType dt = dtypeOf(x);
  q = cast(in, q, dt);
  std::vector<int64_t> inShape = shapeOf(x);
  int64_t rank = rankOf(x);
  // The line being ranked last: [A..., n].
  Value lines;
  int64_t dim = 0;
  if (!dimArg) {
    int64_t n = std::accumulate(inShape.begin(), inShape.end(), int64_t(1), std::multiplies<int64_t>());
    lines = reshape(in, x, {n});
  } else {
    dim = wrapDim(in, *dimArg, rank);
    lines = rank ? permute(in, x, moveLast(rank, dim)) : reshape(in, x, {1});
  }
  std::vector<int64_t> ls = shapeOf(lines);
  int64_t last = static_cast<int64_t>(ls.size()) - 1, n = ls[last];
  if (n == 0)
    in.fail("CUVIL-E-IMPORT-RAISE", "quantile() input tensor must be non-empty");
  Sorted s = sortAlong(in, lines, last, false);
  int64_t nq = rankOf(q) ? shapeOf(q)[0] : 1;
  Value qs = reshape(in, q, {nq});

  Value nans = nanCount(in, lines, last); // [A..., 1]
  Value count = ignoreNan ? in.build<cir::SubOp>(constantInt(in, n), nans) : constantInt(in, n);
  Value one = in.scalarConstant(IValue::floating(1.0), dt);
  Value rankF = in.build<cir::MulOp>(qs, in.build<cir::SubOp>(cast(in, count, dt), one)); // [A..., nq]
  if (!ignoreNan) // a line with NaN ranks at its last element: NaN
    rankF = in.build<cir::WhereOp>(in.build<cir::GtOp>(nans, constantInt(in, 0)),
                                   in.scalarConstant(IValue::floating(double(n - 1)), dt), rankF);
  else // all NaN: rank 0 reads a NaN
    rankF = in.build<cir::MaximumOp>(rankF, in.scalarConstant(IValue::floating(0.0), dt));
  std::vector<int64_t> outShape = ls;
  outShape[last] = nq;
  rankF = expandTo(in, rankF, outShape);
  auto at = [&](Value r) {
    Value idx = cast(in, r, DType::Int64);
    return in.build<cir::GatherOp>(s.values, idx, i64(in, last));
  };
  Value below = in.build<cir::FloorOp>(rankF), above = in.build<cir::CeilOp>(rankF);
  Value result;
  if (mode == "lower")
    result = at(below);
  else if (mode == "higher")
    result = at(above);
  else if (mode == "nearest")
    result = at(in.build<cir::RoundOp>(rankF));
  else {
    Value lo = at(below), hi = at(above);
    Value w = mode == "midpoint" ? in.scalarConstant(IValue::floating(0.5), dt)
                                 : in.build<cir::SubOp>(rankF, below);
    // torch.lerp: start + w * (end - start), from the end when w >= 0.5.
    Value diff = in.build<cir::SubOp>(hi, lo);
    Value fromLo = in.build<cir::AddOp>(lo, in.build<cir::MulOp>(w, diff));
    Value fromHi = in.build<cir::SubOp>(hi, in.build<cir::MulOp>(in.build<cir::SubOp>(one, w), diff));
    Value half = in.scalarConstant(IValue::floating(0.5), dt);
    result = in.build<cir::WhereOp>(in.build<cir::LtOp>(w, half), fromLo, fromHi);
  }
  // [A..., nq] -> [nq, A...], then keepdim's size-1 dims, then q's dim
  // dropped for a scalar q.
  int64_t rr = rankOf(result);
  std::vector<int64_t> order{rr - 1};
  for (int64_t d = 0; d + 1 < rr; ++d)
    order.push_back(d);
  result = permute(in, result, order);
  std::vector<int64_t> shape{nq};
  if (!dimArg) {
    if (keep)
      shape.insert(shape.end(), rank, 1);
  } else {
    for (int64_t d = 0; d < rank; ++d)
      if (d != dim)
        shape.push_back(inShape[d]);
      else if (keep)
        shape.push_back(1);
  }
  if (rankOf(q) == 0)
    shape.erase(shape.begin());
  return reshape(in, result, shape);
}

void registerSorting(Table &t) {
  t["aten::sort"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = a.t("self");
    Sorted s = sortAlong(in, x, dimArg(in, a, b, x), b.has("descending") && a.b("descending"));
    return IValue::makeTuple({ret(s.values), ret(s.indices)});
  };
  t["aten::argsort"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = a.t("self");
    return ret(sortAlong(in, x, dimArg(in, a, b, x), b.has("descending") && a.b("descending")).indices);
  };
  t["aten::msort"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = a.t("self");
    return ret(sortAlong(in, x, wrapDim(in, 0, rankOf(x)), false).values);
  };
  t["aten::topk"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = a.t("self");
    int64_t dim = dimArg(in, a, b, x), k = a.i("k");
    int64_t n = rankOf(x) ? shapeOf(x)[dim] : 1;
    if (k < 0 || k > n)
      in.fail("CUVIL-E-IMPORT-RAISE", "topk: k (" + std::to_string(k) + ") is out of range for a dimension of size " +
                                          std::to_string(n));
    Sorted s = sortAlong(in, x, dim, a.b("largest"));
    if (rankOf(x) == 0)
      return IValue::makeTuple({ret(s.values), ret(s.indices)});
    return IValue::makeTuple({ret(slice(in, s.values, dim, 0, k)), ret(slice(in, s.indices, dim, 0, k))});
  };
  t["aten::kthvalue"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = a.t("self");
    int64_t dim = dimArg(in, a, b, x), k = a.i("k");
    int64_t n = rankOf(x) ? shapeOf(x)[dim] : 1;
    if (k < 1 || k > n)
      in.fail("CUVIL-E-IMPORT-RAISE", "kthvalue(): selected number k (" + std::to_string(k) +
                                          ") is out of range for a dimension of size " + std::to_string(n));
    Sorted s = sortAlong(in, x, dim, false);
    if (rankOf(x) == 0)
      return IValue::makeTuple({ret(s.values), ret(s.indices)});
    bool keep = a.b("keepdim");
    return IValue::makeTuple({ret(dropDim(in, slice(in, s.values, dim, k - 1, k), dim, keep)),
                              ret(dropDim(in, slice(in, s.indices, dim, k - 1, k), dim, keep))});
  };
  for (bool ignoreNan : {false, true}) {
    t[ignoreNan ? "aten::nanmedian" : "aten::median"] = [ignoreNan](Interpreter &in, const BoundArgs &b) {
      Args a{in, b};
      Value x = a.t("self");
      if (!b.has("dim")) { // the whole tensor: the value only
        std::vector<int64_t> s = shapeOf(x);
        int64_t n = std::accumulate(s.begin(), s.end(), int64_t(1), std::multiplies<int64_t>());
        if (n == 0)
          return ret(in.scalarConstant(IValue::floating(NAN), dtypeOf(x)));
        Sorted m = medianAlong(in, reshape(in, x, {n}), 0, ignoreNan);
        return ret(reshape(in, m.values, {}));
      }
      int64_t dim = wrapDim(in, a.i("dim"), rankOf(x));
      bool keep = a.b("keepdim");
      Sorted m = medianAlong(in, x, dim, ignoreNan);
      return IValue::makeTuple({ret(dropDim(in, m.values, dim, keep)), ret(dropDim(in, m.indices, dim, keep))});
    };
    t[ignoreNan ? "aten::nanquantile" : "aten::quantile"] = [ignoreNan](Interpreter &in, const BoundArgs &b) {
      Args a{in, b};
      Value x = a.t("self");
      const IValue &qv = a["q"];
      Value q = qv.isTensor() ? qv.tensor->value : in.scalarConstant(IValue::floating(a.f("q")), dtypeOf(x));
      std::optional<int64_t> dim;
      if (!a.none("dim"))
        dim = a.i("dim");
      std::string mode = b.has("interpolation") ? a.s("interpolation") : "linear";
      return ret(quantile(in, x, q, dim, a.b("keepdim"), mode, ignoreNan));
    };
  }
}

} // namespace

void registerSortHandlers(std::map<std::string, OpHandler> &table) { registerSorting(table); }

} // namespace cuvil::torchscript
