//===- LowerFormulas.cpp - Operators PyTorch defines by formulas ----------===//
//
// Operators whose definition in ATen is a composition of others, composed
// here the same way: writes into views of a copy (slice/select/diagonal/
// as_strided scatter, by flat positions computed at import time), tensor
// builders (block_diag, cartesian_prod, combinations), searches (bucketize,
// searchsorted, isin, histc, mode), statistics (cov, corrcoef, the
// trapezoid rules), the native_* normalisations with their saved
// statistics, and smaller formulas (isclose, angle, frexp, one_hot, renorm,
// pdist, bilinear, fftshift, sum_to_size), embedding_bag.
//
//===----------------------------------------------------------------------===//
#include "frontend/torchscript/LowerHelpers.h"

#include "dialects/Cuvil/IR/TypeRules.h"

#include <cmath>
#include <numeric>

namespace cuvil::torchscript {
namespace {

using namespace lower;

/// Row-major strides of `shape`.
std::vector<int64_t> stridesOf(const std::vector<int64_t> &shape) {
  std::vector<int64_t> st(shape.size(), 1);
  for (int64_t d = int64_t(shape.size()) - 2; d >= 0; --d)
    st[d] = st[d + 1] * shape[d + 1];
  return st;
}

/// The flat positions of a strided view: offset + sum(i_k * stride_k) for
/// every index of `size`, row-major.
std::vector<int64_t> viewPositions(const std::vector<int64_t> &size, const std::vector<int64_t> &stride,
                                   int64_t offset) {
  std::vector<int64_t> out(numel(size));
  std::vector<int64_t> idx(size.size(), 0);
  for (int64_t n = 0; n < int64_t(out.size()); ++n) {
    int64_t p = offset;
    for (size_t k = 0; k < size.size(); ++k)
      p += idx[k] * stride[k];
    out[n] = p;
    for (int64_t k = int64_t(size.size()) - 1; k >= 0; --k) {
      if (++idx[k] < size[k])
        break;
      idx[k] = 0;
    }
  }
  return out;
}

Value flat(Interpreter &in, Value x) { return reshape(in, x, {numel(shapeOf(x))}); }

/// self with src written at the flat positions (row-major in src).
Value scatterFlat(Interpreter &in, Value self, const std::vector<int64_t> &positions, Value src) {
  std::vector<int64_t> shape = shapeOf(self);
  if (positions.empty())
    return self;
  src = cast(in, src, dtypeOf(self));
  Value index = constantI64(in, positions);
  Value out = in.build<cir::ScatterOp>(flat(in, self), index, flat(in, src), i64(in, 0),
                                       cir::ScatterReduceAttr::get(in.context(), cir::ScatterReduce::None),
                                       in.builder().getBoolAttr(true));
  return reshape(in, out, shape);
}

/// The elements of x at the flat positions, shaped `size`.
Value gatherFlat(Interpreter &in, Value x, const std::vector<int64_t> &positions, const std::vector<int64_t> &size) {
  if (positions.empty())
    return splat(in, size, dtypeOf(x), IValue::integer(0));
  return reshape(in, in.build<cir::IndexSelectOp>(flat(in, x), constantI64(in, positions), i64(in, 0)), size);
}

Value num(Interpreter &in, Value like, double v) { return scalarOperand(in, IValue::floating(v), like); }
Value add(Interpreter &in, Value a, Value b) { return in.build<cir::AddOp>(a, b); }
Value sub(Interpreter &in, Value a, Value b) { return in.build<cir::SubOp>(a, b); }
Value mul(Interpreter &in, Value a, Value b) { return in.build<cir::MulOp>(a, b); }
Value div(Interpreter &in, Value a, Value b) {
  return in.build<cir::DivOp>(a, b, cir::RoundingModeAttr::get(in.context(), cir::RoundingMode::None));
}
Value sumDims(Interpreter &in, Value x, std::vector<int64_t> dims, bool keep = false) {
  if (rankOf(x) == 0)
    return x;
  return in.build<cir::SumOp>(x, i64s(in, dims), keep ? in.builder().getUnitAttr() : mlir::UnitAttr());
}
Value unsqueezeLast(Interpreter &in, Value x) {
  std::vector<int64_t> s = shapeOf(x);
  s.push_back(1);
  return reshape(in, x, s);
}

/// The view positions of x.diagonal(offset, d1, d2) (the diagonal last).
std::vector<int64_t> diagonalPositions(const std::vector<int64_t> &shape, int64_t offset, int64_t d1, int64_t d2,
                                       std::vector<int64_t> &size) {
  std::vector<int64_t> st = stridesOf(shape), stride;
  size.clear();
  for (int64_t d = 0; d < int64_t(shape.size()); ++d)
    if (d != d1 && d != d2) {
      size.push_back(shape[d]);
      stride.push_back(st[d]);
    }
  int64_t len = offset >= 0 ? std::max<int64_t>(0, std::min(shape[d1], shape[d2] - offset))
                            : std::max<int64_t>(0, std::min(shape[d1] + offset, shape[d2]));
  int64_t start = offset >= 0 ? offset * st[d2] : -offset * st[d1];
  size.push_back(len);
  stride.push_back(st[d1] + st[d2]);
  return len ? viewPositions(size, stride, start) : std::vector<int64_t>{};
}

struct Stats {
  Value mean, rstd;
};
/// Mean and 1/sqrt(biased variance + eps) over `dims`, kept.
Stats statsOver(Interpreter &in, Value x, const std::vector<int64_t> &dims, double eps) {
  auto keep = in.builder().getUnitAttr();
  Value mean = in.build<cir::MeanOp>(x, i64s(in, dims), keep);
  Value d = sub(in, x, mean);
  Value var = in.build<cir::MeanOp>(mul(in, d, d), i64s(in, dims), keep);
  return {mean, in.build<cir::RsqrtOp>(add(in, var, num(in, var, eps)))};
}

/// Per-channel parameter w [C] shaped to broadcast over x [N, C, ...].
Value channel(Interpreter &in, Value w, int64_t rank) {
  std::vector<int64_t> s(rank, 1);
  s[1] = shapeOf(w)[0];
  return reshape(in, w, s);
}

Value covariance(Interpreter &in, Value x, int64_t correction, Value fw, Value aw) {
  if (rankOf(x) > 2)
    in.fail("CUVIL-E-IMPORT-RAISE", "cov(): expected input to have two or fewer dimensions");
  if (rankOf(x) < 2)
    x = reshape(in, x, {1, rankOf(x) ? shapeOf(x)[0] : 1});
  if (!isFloat(dtypeOf(x)))
    x = cast(in, x, DType::Float32);
  int64_t obs = shapeOf(x)[1];
  Value w;
  if (fw)
    w = cast(in, fw, dtypeOf(x));
  if (aw)
    w = w ? mul(in, w, cast(in, aw, dtypeOf(x))) : cast(in, aw, dtypeOf(x));
  Value avg, wsum, norm;
  if (w) {
    wsum = sumDims(in, w, {0});
    avg = div(in, sumDims(in, mul(in, x, w), {1}), wsum);
    if (aw)
      norm = sub(in, wsum, div(in, mul(in, num(in, wsum, double(correction)),
                                       sumDims(in, mul(in, w, cast(in, aw, dtypeOf(x))), {0})), wsum));
    else
      norm = sub(in, wsum, num(in, wsum, double(correction)));
  } else {
    avg = in.build<cir::MeanOp>(x, i64s(in, {1}), mlir::UnitAttr());
    norm = in.scalarConstant(IValue::floating(double(obs - correction)), dtypeOf(x));
  }
  norm = in.build<cir::MaximumOp>(norm, num(in, norm, 0.0));
  Value xm = sub(in, x, unsqueezeLast(in, avg));
  Value xw = w ? mul(in, xm, w) : xm;
  std::vector<int64_t> order{1, 0};
  Value c = in.build<cir::MatmulOp>(xw, in.build<cir::PermuteOp>(xm, i64s(in, order)));
  c = div(in, c, norm);
  if (shapeOf(c)[0] == 1 && rankOf(x) == 2 && shapeOf(x)[0] == 1)
    return reshape(in, c, {});
  return c;
}

void registerFormulaHandlers(Table &t) {
  t["aten::embedding_renorm_"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value w = a.t("self"), idx = cast(in, a.t("indices"), DType::Int64);
    int64_t v = shapeOf(w)[0];
    Value norm = in.callOperator("aten::linalg_vector_norm",
                                 {ret(w), IValue::floating(a.f("norm_type")), IValue::makeList({IValue::integer(1)}),
                                  IValue::boolean(true)},
                                 {})
                     .tensor->value; // [V, 1]
    Value maxNorm = num(in, norm, a.f("max_norm"));
    Value scale = in.build<cir::WhereOp>(in.build<cir::GtOp>(norm, maxNorm),
                                         div(in, maxNorm, add(in, norm, num(in, norm, 1e-7))), num(in, norm, 1.0));
    // Only the rows the indices name are renormalised.
    Value flatIdx = rankOf(idx) ? flat(in, idx) : reshape(in, idx, {1});
    Value named = in.build<cir::AnyOp>(in.build<cir::EqOp>(constantI64(in, iota(v), {v, 1}), flatIdx), i64s(in, {1}),
                                       in.builder().getUnitAttr()); // [V, 1]
    scale = in.build<cir::WhereOp>(named, scale, num(in, scale, 1.0));
    return inplace(in, a["self"], mul(in, w, scale));
  };
  t["aten::repeat_interleave"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    if (!b.has("self") || !a["repeats"].is(K::Int))
      return in.unsupported("repeat_interleave with repeats in a tensor (the output size comes from the data)");
    Value x = a.t("self");
    int64_t reps = a.i("repeats");
    if (reps < 0)
      in.fail("CUVIL-E-IMPORT-RAISE", "repeat_interleave: repeats can not be negative");
    int64_t dim = 0;
    if (a.none("dim")) {
      x = rankOf(x) ? flat(in, x) : reshape(in, x, {1});
    } else {
      dim = wrapDim(in, a.i("dim"), rankOf(x));
      if (rankOf(x) == 0)
        x = reshape(in, x, {1});
    }
    int64_t n = shapeOf(x)[dim];
    std::vector<int64_t> pos;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t r = 0; r < reps; ++r)
        pos.push_back(i);
    if (pos.empty()) {
      std::vector<int64_t> s = shapeOf(x);
      s[dim] = 0;
      return ret(splat(in, s, dtypeOf(x), IValue::integer(0)));
    }
    return ret(in.build<cir::IndexSelectOp>(x, constantI64(in, pos), i64(in, dim)));
  };
  // Writes into a view of a copy.
  t["aten::slice_scatter"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value self = a.t("self");
    std::vector<int64_t> shape = shapeOf(self);
    int64_t dim = wrapDim(in, a.i("dim"), rankOf(self)), n = shape[dim], step = a.i("step");
    int64_t start = a.none("start") ? 0 : a.i("start"), end = a.none("end") ? n : a.i("end");
    auto clampIdx = [n](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + n : v, 0, n); };
    start = clampIdx(start);
    end = std::max(clampIdx(end), start);
    std::vector<int64_t> size = shape, st = stridesOf(shape), stride = st;
    size[dim] = (end - start + step - 1) / step;
    stride[dim] = st[dim] * step;
    return ret(scatterFlat(in, self, viewPositions(size, stride, start * st[dim]), a.t("src")));
  };
  t["aten::select_scatter"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value self = a.t("self");
    std::vector<int64_t> shape = shapeOf(self);
    int64_t dim = wrapDim(in, a.i("dim"), rankOf(self)), index = a.i("index");
    if (index < 0)
      index += shape[dim];
    std::vector<int64_t> size, stride, st = stridesOf(shape);
    for (int64_t d = 0; d < int64_t(shape.size()); ++d)
      if (d != dim) {
        size.push_back(shape[d]);
        stride.push_back(st[d]);
      }
    return ret(scatterFlat(in, self, viewPositions(size, stride, index * st[dim]), a.t("src")));
  };
  t["aten::diagonal_scatter"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value self = a.t("self");
    int64_t r = rankOf(self);
    std::vector<int64_t> size;
    std::vector<int64_t> pos = diagonalPositions(shapeOf(self), a.i("offset"), wrapDim(in, a.i("dim1"), r),
                                                 wrapDim(in, a.i("dim2"), r), size);
    return ret(scatterFlat(in, self, pos, a.t("src")));
  };
  // The flat positions of as_strided's view, checked against the storage.
  auto stridedView = [](Interpreter &in, const Args &a, const BoundArgs &b, Value self, const char *fn) {
    int64_t offset = b.has("storage_offset") && !a.none("storage_offset") ? a.i("storage_offset") : 0;
    std::vector<int64_t> pos = viewPositions(a.ints("size"), a.ints("stride"), offset);
    for (int64_t p : pos)
      if (p < 0 || p >= numel(shapeOf(self)))
        in.fail("CUVIL-E-IMPORT-RAISE", std::string(fn) + ": the view reaches outside the tensor's storage");
    return pos;
  };
  t["aten::as_strided"] = [stridedView](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value self = a.t("self");
    return ret(gatherFlat(in, self, stridedView(in, a, b, self, "as_strided"), a.ints("size")));
  };
  t["aten::as_strided_scatter"] = [stridedView](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value self = a.t("self");
    return ret(scatterFlat(in, self, stridedView(in, a, b, self, "as_strided_scatter"), a.t("src")));
  };
  // Builders.
  t["aten::block_diag"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    std::vector<Value> ts = a.tensors("tensors");
    if (ts.empty())
      return ret(splat(in, {1, 0}, DType::Float32, IValue::floating(0.0)));
    mlir::Type e = typeOf(ts[0]).getElementType();
    for (Value v : ts)
      e = mlir::cuvil::resultElementType(mlir::TypeRange{splat(in, {}, dtypeOfElement(e), IValue::integer(0)).getType(), v.getType()});
    DType d = dtypeOfElement(e);
    std::vector<Value> mats;
    int64_t cols = 0;
    for (Value v : ts) {
      if (rankOf(v) > 2)
        in.fail("CUVIL-E-IMPORT-RAISE", "block_diag: Input tensors must have 2 or fewer dimensions");
      Value m = rankOf(v) == 2 ? v : reshape(in, v, {1, rankOf(v) ? shapeOf(v)[0] : 1});
      mats.push_back(cast(in, m, d));
      cols += shapeOf(m)[1];
    }
    std::vector<Value> rows;
    int64_t left = 0;
    for (Value m : mats) {
      int64_t c = shapeOf(m)[1];
      if (shapeOf(m)[0] > 0)
        rows.push_back(in.build<cir::PadOp>(m, i64s(in, {left, cols - left - c, 0, 0}),
                                            cir::PadModeAttr::get(in.context(), cir::PadMode::Constant), f64(in, 0.0)));
      left += c;
    }
    if (rows.empty())
      return ret(splat(in, {0, cols}, d, IValue::integer(0)));
    return ret(rows.size() == 1 ? rows[0] : in.build<cir::ConcatOp>(mlir::ValueRange(rows), i64(in, 0)));
  };
  t["aten::cartesian_prod"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    std::vector<Value> ts = a.tensors("tensors");
    if (ts.size() == 1)
      return ret(ts[0]);
    std::vector<int64_t> sizes;
    for (Value v : ts)
      sizes.push_back(shapeOf(v)[0]);
    std::vector<Value> cols;
    for (size_t k = 0; k < ts.size(); ++k) {
      std::vector<int64_t> s(ts.size(), 1);
      s[k] = sizes[k];
      Value grid = expandTo(in, reshape(in, ts[k], s), sizes);
      cols.push_back(reshape(in, grid, {numel(sizes), 1}));
    }
    return ret(in.build<cir::ConcatOp>(mlir::ValueRange(cols), i64(in, 1)));
  };
  t["aten::combinations"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = a.t("self");
    int64_t r = a.i("r"), n = shapeOf(x)[0];
    bool repl = a.b("with_replacement");
    if (r == 0)
      return ret(splat(in, {0}, dtypeOf(x), IValue::integer(0)));
    std::vector<std::vector<int64_t>> cols(r);
    std::vector<int64_t> idx(r, 0);
    std::function<void(int64_t, int64_t)> rec = [&](int64_t k, int64_t from) {
      if (k == r) {
        for (int64_t j = 0; j < r; ++j)
          cols[j].push_back(idx[j]);
        return;
      }
      for (int64_t i = from; i < n; ++i) {
        idx[k] = i;
        rec(k + 1, repl ? i : i + 1);
      }
    };
    rec(0, 0);
    int64_t count = int64_t(cols[0].size());
    if (count == 0)
      return ret(splat(in, {0, r}, dtypeOf(x), IValue::integer(0)));
    std::vector<Value> parts;
    for (auto &c : cols)
      parts.push_back(reshape(in, in.build<cir::IndexSelectOp>(x, constantI64(in, c), i64(in, 0)), {count, 1}));
    return ret(in.build<cir::ConcatOp>(mlir::ValueRange(parts), i64(in, 1)));
  };
  // Searches and counts.
  auto countBelow = [](Interpreter &in, Value seq, Value x, bool right, bool int32) {
    // seq [..., M] sorted, x [..., K]: the number of seq elements < x (<= x
    // with `right`), per x.
    Value s = unsqueezeLast(in, x); // [..., K, 1]
    std::vector<int64_t> ss = shapeOf(seq);
    ss.insert(ss.end() - 1, 1); // [..., 1, M]
    Value sq = reshape(in, seq, ss);
    Value below = right ? in.build<cir::LeOp>(sq, s) : in.build<cir::LtOp>(sq, s);
    Value c = sumDims(in, cast(in, below, DType::Int64), {rankOf(below) - 1});
    if (rankOf(x) == 0)
      c = reshape(in, c, {});
    return int32 ? cast(in, c, DType::Int32) : c;
  };
  t["aten::bucketize"] = [countBelow](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value bounds = a.t("boundaries");
    Value x = a["self"].isTensor() ? a.t("self") : scalarOperand(in, a["self"], bounds);
    if (rankOf(bounds) != 1)
      in.fail("CUVIL-E-IMPORT-RAISE", "bucketize: boundaries tensor must be 1 dimension");
    return ret(countBelow(in, bounds, x, a.b("right"), a.b("out_int32")));
  };
  t["aten::searchsorted"] = [countBelow](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value seq = a.t("sorted_sequence");
    if (Value sorter = a.optT("sorter"))
      seq = in.build<cir::GatherOp>(seq, cast(in, sorter, DType::Int64), i64(in, rankOf(seq) - 1));
    bool right = a.b("right");
    if (b.has("side") && !a.none("side"))
      right = a.s("side") == "right";
    Value x = a["self"].isTensor() ? a.t("self") : scalarOperand(in, a["self"], seq);
    if (rankOf(seq) > 1 && rankOf(x) != rankOf(seq))
      in.fail("CUVIL-E-IMPORT-RAISE", "searchsorted: boundaries and input must have matching leading dimensions");
    if (rankOf(seq) == 1 || rankOf(x) == 0)
      return ret(countBelow(in, seq, x, right, a.b("out_int32")));
    return ret(countBelow(in, seq, x, right, a.b("out_int32")));
  };
  t["aten::isin"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    const char *en = b.has("elements") ? "elements" : "element";
    const char *tn = b.has("test_elements") ? "test_elements" : "test_element";
    Value test = a[tn].isTensor() ? a.t(tn) : Value();
    Value elems = a[en].isTensor() ? a.t(en) : scalarOperand(in, a[en], test);
    if (!test)
      test = scalarOperand(in, a[tn], elems);
    Value tf = rankOf(test) ? flat(in, test) : reshape(in, test, {1});
    Value hit;
    if (numel(shapeOf(tf)) == 0)
      hit = splat(in, shapeOf(elems), DType::Bool, IValue::boolean(false));
    else
      hit = in.build<cir::AnyOp>(in.build<cir::EqOp>(unsqueezeLast(in, elems), tf), i64s(in, {rankOf(elems)}),
                                 mlir::UnitAttr());
    return ret(a.b("invert") ? in.build<cir::LogicalNotOp>(hit) : hit);
  };
  t["aten::histc"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = a.t("self");
    if (!isFloat(dtypeOf(x)))
      in.fail("CUVIL-E-IMPORT-RAISE", "histc: expected a floating point tensor");
    int64_t bins = a.i("bins");
    double lo = a.f("min"), hi = a.f("max");
    Value xf = rankOf(x) ? flat(in, x) : reshape(in, x, {1});
    Value mn, mx;
    if (lo == hi && numel(shapeOf(xf)) > 0) { // the data's range, widened by 1 when flat
      mn = in.build<cir::MinOp>(xf, i64s(in, {0}), mlir::UnitAttr());
      mx = in.build<cir::MaxOp>(xf, i64s(in, {0}), mlir::UnitAttr());
      Value same = in.build<cir::EqOp>(mn, mx);
      mn = in.build<cir::WhereOp>(same, sub(in, mn, num(in, mn, 1.0)), mn);
      mx = in.build<cir::WhereOp>(same, add(in, mx, num(in, mx, 1.0)), mx);
    } else {
      if (lo == hi) {
        lo -= 1;
        hi += 1;
      }
      if (lo > hi)
        in.fail("CUVIL-E-IMPORT-RAISE", "histc: max must be larger than min");
      mn = num(in, xf, lo);
      mx = num(in, xf, hi);
    }
    if (numel(shapeOf(xf)) == 0)
      return ret(splat(in, {bins}, dtypeOf(x), IValue::integer(0)));
    // Bin = floor((x - min) * bins / (max - min)), the top edge in the last.
    Value pos = div(in, mul(in, sub(in, xf, mn), num(in, xf, double(bins))), sub(in, mx, mn));
    Value bin = cast(in, in.build<cir::FloorOp>(pos), DType::Int64);
    bin = in.build<cir::WhereOp>(in.build<cir::EqOp>(xf, mx), in.scalarConstant(IValue::integer(bins - 1), DType::Int64), bin);
    Value inside = in.build<cir::LogicalAndOp>(in.build<cir::GeOp>(xf, mn), in.build<cir::LeOp>(xf, mx));
    Value hits = in.build<cir::LogicalAndOp>(unsqueezeLast(in, inside),
                                             in.build<cir::EqOp>(unsqueezeLast(in, bin), constantI64(in, iota(bins))));
    return ret(cast(in, sumDims(in, cast(in, hits, DType::Int64), {0}), dtypeOf(x)));
  };
  t["aten::mode"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = a.t("self");
    int64_t r = rankOf(x), dim = wrapDim(in, a.i("dim"), r);
    if (r == 0)
      return IValue::makeTuple({ret(x), ret(splat(in, {}, DType::Int64, IValue::integer(0)))});
    // Sorted ascending, the count of each element's value; the first
    // largest count is the smallest most frequent value.
    mlir::OpBuilder &bld = in.builder();
    auto sort = bld.create<cir::SortOp>(in.location(), bld.getNoneType(), bld.getNoneType(), x, i64(in, dim),
                                        mlir::UnitAttr());
    Value sv = in.finishBuild(sort.getOperation()), si = sort.getIndices();
    std::vector<int64_t> order;
    for (int64_t d = 0; d < r; ++d)
      if (d != dim)
        order.push_back(d);
    order.push_back(dim);
    Value lines = in.build<cir::PermuteOp>(sv, i64s(in, order)); // [..., n]
    std::vector<int64_t> ls = shapeOf(lines), a1 = ls, a2 = ls;
    a1.push_back(1);
    a2.insert(a2.end() - 1, 1);
    Value counts = sumDims(in, cast(in, in.build<cir::EqOp>(reshape(in, lines, a1), reshape(in, lines, a2)), DType::Int64),
                           {int64_t(ls.size())});
    Value at = in.build<cir::ArgmaxOp>(counts, i64(in, int64_t(ls.size()) - 1), in.builder().getUnitAttr()); // [..., 1]
    std::vector<int64_t> inv(r);
    for (int64_t d = 0; d < r; ++d)
      inv[order[d]] = d;
    Value pos = in.build<cir::PermuteOp>(at, i64s(in, inv)); // size 1 at dim
    Value v = in.build<cir::GatherOp>(sv, pos, i64(in, dim)), i = in.build<cir::GatherOp>(si, pos, i64(in, dim));
    if (!a.b("keepdim")) {
      std::vector<int64_t> s = shapeOf(x);
      s.erase(s.begin() + dim);
      v = reshape(in, v, s);
      i = reshape(in, i, s);
    }
    return IValue::makeTuple({ret(v), ret(i)});
  };
  // Statistics.
  t["aten::cov"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    return ret(covariance(in, a.t("self"), a.i("correction"), a.optT("fweights"), a.optT("aweights")));
  };
  t["aten::corrcoef"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value c = covariance(in, a.t("self"), 1, Value(), Value());
    if (rankOf(c) == 0)
      return ret(div(in, c, c));
    int64_t n = shapeOf(c)[0];
    Value d = in.build<cir::SqrtOp>(gatherFlat(in, c, viewPositions({n}, {n + 1}, 0), {n}));
    c = div(in, div(in, c, reshape(in, d, {n, 1})), reshape(in, d, {1, n}));
    return ret(in.build<cir::MaximumOp>(in.build<cir::MinimumOp>(c, num(in, c, 1.0)), num(in, c, -1.0)));
  };
  // ATen's formulas exactly (integer y adds in its own type, as there).
  auto trapezoid = [](Interpreter &in, const Args &a, const BoundArgs &b, bool cumulative) {
    Value y = a.t("y");
    int64_t r = rankOf(y), dim = wrapDim(in, a.i("dim"), r), n = shapeOf(y)[dim];
    if (n == 0) {
      std::vector<int64_t> s = shapeOf(y);
      if (!cumulative)
        s.erase(s.begin() + dim);
      return splat(in, s, isFloat(dtypeOf(y)) ? dtypeOf(y) : DType::Float32, IValue::integer(0));
    }
    Value pairSum = add(in, slice(in, y, dim, 1, n), slice(in, y, dim, 0, n - 1));
    Value area;
    if (b.has("x")) {
      Value x = a.t("x");
      if (rankOf(x) == 1 && r > 1) {
        std::vector<int64_t> s(r, 1);
        s[dim] = shapeOf(x)[0];
        x = reshape(in, x, s);
      }
      int64_t xd = rankOf(x) == r ? dim : wrapDim(in, a.i("dim"), rankOf(x));
      int64_t xn = shapeOf(x)[xd];
      Value dx = sub(in, slice(in, x, xd, 1, xn), slice(in, x, xd, 0, xn - 1));
      area = div(in, mul(in, dx, pairSum), num(in, pairSum, 2.0));
    } else {
      double dx = a.f("dx");
      if (!cumulative) { // (sum(y) - (y[0] + y[-1]) * 0.5) * dx
        Value ends = add(in, slice(in, y, dim, 0, 1), slice(in, y, dim, n - 1, n));
        Value total = sumDims(in, y, {dim}, true);
        Value v = mul(in, sub(in, total, mul(in, ends, num(in, ends, 0.5))), num(in, total, dx));
        std::vector<int64_t> s = shapeOf(y);
        s.erase(s.begin() + dim);
        return reshape(in, v, s);
      }
      area = mul(in, num(in, pairSum, dx / 2.0), pairSum);
    }
    if (cumulative)
      return in.build<cir::CumulativeOp>(area, i64(in, dim), cir::ScanKindAttr::get(in.context(), cir::ScanKind::Sum));
    return sumDims(in, area, {dim});
  };
  for (const char *name : {"aten::trapezoid", "aten::trapz"})
    t[name] = [trapezoid](Interpreter &in, const BoundArgs &b) {
      Args a{in, b};
      return ret(trapezoid(in, a, b, false));
    };
  t["aten::cumulative_trapezoid"] = [trapezoid](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    return ret(trapezoid(in, a, b, true));
  };
  // Normalisations with saved statistics.
  t["aten::native_layer_norm"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = a.t("input");
    std::vector<int64_t> ns = a.ints("normalized_shape");
    int64_t r = rankOf(x), k = int64_t(ns.size());
    std::vector<int64_t> dims = iota(k, r - k);
    Stats s = statsOver(in, x, dims, a.f("eps"));
    Value y = mul(in, sub(in, x, s.mean), s.rstd);
    if (Value w = a.optT("weight"))
      y = mul(in, y, w);
    if (Value bb = a.optT("bias"))
      y = add(in, y, bb);
    return IValue::makeTuple({ret(y), ret(s.mean), ret(s.rstd)});
  };
  t["aten::native_batch_norm"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = a.t("input");
    int64_t r = rankOf(x);
    if (r < 2)
      in.fail("CUVIL-E-IMPORT-RAISE", "native_batch_norm expects an input of rank >= 2 ([N, C, ...])");
    std::vector<int64_t> dims{0};
    for (int64_t d = 2; d < r; ++d)
      dims.push_back(d);
    double eps = a.f("eps");
    Value y, mean, invstd;
    if (a.b("training")) {
      Stats s = statsOver(in, x, dims, eps);
      y = mul(in, sub(in, x, s.mean), s.rstd);
      int64_t c = shapeOf(x)[1];
      mean = reshape(in, s.mean, {c});
      invstd = reshape(in, s.rstd, {c});
    } else {
      Value rm = a.optT("running_mean"), rv = a.optT("running_var");
      if (!rm || !rv)
        in.fail("CUVIL-E-IMPORT-RAISE", "native_batch_norm: running_mean and running_var must be defined in evaluation mode");
      Value rs = in.build<cir::RsqrtOp>(add(in, rv, num(in, rv, eps)));
      y = mul(in, sub(in, x, channel(in, rm, r)), channel(in, rs, r));
      mean = splat(in, {0}, dtypeOf(x), IValue::integer(0));
      invstd = splat(in, {0}, dtypeOf(x), IValue::integer(0));
    }
    if (Value w = a.optT("weight"))
      y = mul(in, y, channel(in, w, r));
    if (Value bb = a.optT("bias"))
      y = add(in, y, channel(in, bb, r));
    return IValue::makeTuple({ret(y), ret(mean), ret(invstd)});
  };
  t["aten::instance_norm"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = a.t("input");
    int64_t r = rankOf(x);
    if (r < 3)
      in.fail("CUVIL-E-IMPORT-RAISE", "instance_norm expects an input of rank >= 3 ([N, C, ...])");
    Value y;
    if (a.b("use_input_stats")) {
      Stats s = statsOver(in, x, iota(r - 2, 2), a.f("eps"));
      y = mul(in, sub(in, x, s.mean), s.rstd);
    } else {
      Value rm = a.optT("running_mean"), rv = a.optT("running_var");
      if (!rm || !rv)
        in.fail("CUVIL-E-IMPORT-RAISE", "instance_norm: running statistics are needed when use_input_stats is False");
      Value rs = in.build<cir::RsqrtOp>(add(in, rv, num(in, rv, a.f("eps"))));
      y = mul(in, sub(in, x, channel(in, rm, r)), channel(in, rs, r));
    }
    if (Value w = a.optT("weight"))
      y = mul(in, y, channel(in, w, r));
    if (Value bb = a.optT("bias"))
      y = add(in, y, channel(in, bb, r));
    return ret(y);
  };
  // Smaller formulas.
  t["aten::isclose"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = a.t("self"), y = a.t("other");
    double rtol = a.f("rtol"), atol = a.f("atol");
    Value close = in.build<cir::EqOp>(x, y);
    if (a.b("equal_nan") && isFloat(dtypeOf(x)))
      close = in.build<cir::LogicalOrOp>(close, in.build<cir::LogicalAndOp>(in.build<cir::NeOp>(x, x), in.build<cir::NeOp>(y, y)));
    if (rtol == 0 && atol == 0)
      return ret(close);
    Value cx = dtypeOf(x) == DType::Bool ? cast(in, x, DType::Float32) : x;
    Value cy = dtypeOf(y) == DType::Bool ? cast(in, y, DType::Float32) : y;
    Value allowed = add(in, in.build<cir::AbsOp>(mul(in, num(in, cy, rtol), cy)), num(in, cy, atol));
    Value actual = in.build<cir::AbsOp>(sub(in, cx, cy));
    Value finite = isFloat(dtypeOf(actual))
                       ? in.build<cir::LtOp>(in.build<cir::AbsOp>(actual), num(in, actual, INFINITY))
                       : splat(in, shapeOf(actual), DType::Bool, IValue::boolean(true));
    return ret(in.build<cir::LogicalOrOp>(close, in.build<cir::LogicalAndOp>(finite, in.build<cir::LeOp>(actual, allowed))));
  };
  t["aten::angle"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    if (!a["self"].isTensor())
      return in.unsupported("angle of a number");
    Value x = floatOperand(in, a.t("self"));
    Value v = in.build<cir::WhereOp>(in.build<cir::LtOp>(x, num(in, x, 0.0)), num(in, x, M_PI), num(in, x, 0.0));
    return ret(in.build<cir::WhereOp>(in.build<cir::NeOp>(x, x), x, v));
  };
  t["aten::frexp"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    if (!a["self"].isTensor())
      return in.unsupported("frexp of a number");
    Value x = a.t("self");
    if (!isFloat(dtypeOf(x)))
      in.fail("CUVIL-E-IMPORT-RAISE", "torch.frexp() only supports floating-point dtypes");
    // e = floor(log2|x|) + 1, corrected by one where log2 rounds across a
    // power of two; mantissa = x / 2^e in [0.5, 1). 0, inf and NaN keep x
    // with exponent 0.
    Value ax = in.build<cir::AbsOp>(x);
    Value e = add(in, in.build<cir::FloorOp>(in.build<cir::Log2Op>(ax)), num(in, x, 1.0));
    Value m = div(in, x, in.build<cir::Exp2Op>(e));
    Value am = in.build<cir::AbsOp>(m);
    Value up = in.build<cir::GeOp>(am, num(in, am, 1.0)), down = in.build<cir::LtOp>(am, num(in, am, 0.5));
    e = in.build<cir::WhereOp>(up, add(in, e, num(in, e, 1.0)), in.build<cir::WhereOp>(down, sub(in, e, num(in, e, 1.0)), e));
    m = div(in, x, in.build<cir::Exp2Op>(e));
    Value special = in.build<cir::LogicalOrOp>(in.build<cir::EqOp>(x, num(in, x, 0.0)),
                                               in.build<cir::LogicalNotOp>(in.build<cir::LtOp>(ax, num(in, ax, INFINITY))));
    m = in.build<cir::WhereOp>(special, x, m);
    Value ei = in.build<cir::WhereOp>(special, in.scalarConstant(IValue::integer(0), DType::Int32), cast(in, e, DType::Int32));
    return IValue::makeTuple({ret(m), ret(ei)});
  };
  t["aten::one_hot"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = a.t("self");
    int64_t c = a.i("num_classes");
    if (c < 0)
      return in.unsupported("one_hot without num_classes (the class count comes from the data)");
    return ret(cast(in, in.build<cir::EqOp>(unsqueezeLast(in, cast(in, x, DType::Int64)), constantI64(in, iota(c))),
                    DType::Int64));
  };
  t["aten::renorm"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = a.t("self");
    int64_t r = rankOf(x), dim = wrapDim(in, a.i("dim"), r);
    std::vector<int64_t> dims;
    for (int64_t d = 0; d < r; ++d)
      if (d != dim)
        dims.push_back(d);
    Value norm = in.callOperator("aten::linalg_vector_norm",
                                 {ret(x), a["p"], IValue::makeList([&] {
                                    IValueList l;
                                    for (int64_t d : dims)
                                      l.push_back(IValue::integer(d));
                                    return l;
                                  }()), IValue::boolean(true)},
                                 {})
                     .tensor->value;
    Value maxnorm = scalarOperand(in, a["maxnorm"], norm);
    Value factor = in.build<cir::WhereOp>(in.build<cir::GtOp>(norm, maxnorm),
                                          div(in, maxnorm, add(in, norm, num(in, norm, 1e-7))), num(in, norm, 1.0));
    return ret(mul(in, x, factor));
  };
  t["aten::pdist"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = a.t("self");
    if (rankOf(x) != 2)
      in.fail("CUVIL-E-IMPORT-RAISE", "pdist only supports 2D tensors, got: " + std::to_string(rankOf(x)) + "D");
    int64_t n = shapeOf(x)[0];
    std::vector<int64_t> is, js;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = i + 1; j < n; ++j) {
        is.push_back(i);
        js.push_back(j);
      }
    if (is.empty())
      return ret(splat(in, {0}, dtypeOf(x), IValue::integer(0)));
    Value d = sub(in, in.build<cir::IndexSelectOp>(x, constantI64(in, is), i64(in, 0)),
                  in.build<cir::IndexSelectOp>(x, constantI64(in, js), i64(in, 0)));
    return in.callOperator("aten::linalg_vector_norm",
                           {ret(d), a["p"], IValue::makeList({IValue::integer(1)}), IValue::boolean(false)}, {});
  };
  t["aten::bilinear"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x1 = a.t("input1"), x2 = a.t("input2"), w = a.t("weight");
    Value y = in.callOperator("aten::einsum",
                              {IValue::string("...i,oij,...j->...o"), IValue::makeList({ret(x1), ret(w), ret(x2)})},
                              {})
                  .tensor->value;
    if (Value bb = a.optT("bias"))
      y = add(in, y, bb);
    return ret(y);
  };
  for (bool inverse : {false, true})
    t[inverse ? "aten::fft_ifftshift" : "aten::fft_fftshift"] = [inverse](Interpreter &in, const BoundArgs &b) {
      Args a{in, b};
      Value x = a.t("self");
      std::vector<int64_t> dims = a.none("dim") ? iota(rankOf(x)) : a.ints("dim");
      IValueList shifts, ds;
      for (int64_t d : dims) {
        int64_t n = shapeOf(x)[wrapDim(in, d, rankOf(x))];
        shifts.push_back(IValue::integer(inverse ? -(n / 2) : n / 2));
        ds.push_back(IValue::integer(d));
      }
      if (ds.empty())
        return ret(x);
      return in.callOperator("aten::roll", {ret(x), IValue::makeList(shifts), IValue::makeList(ds)}, {});
    };
  t["aten::sum_to_size"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = a.t("self");
    std::vector<int64_t> size = a.ints("size"), shape = shapeOf(x);
    if (size.empty()) // ATen's sum_to: () sums everything, a 0-d tensor too
      return ret(in.build<cir::SumOp>(x, i64s(in, iota(rankOf(x))), mlir::UnitAttr()));
    int64_t lead = int64_t(shape.size()) - int64_t(size.size());
    if (lead < 0)
      in.fail("CUVIL-E-IMPORT-RAISE", "sum_to_size: size is not expandable to the tensor's shape");
    std::vector<int64_t> dims;
    for (int64_t d = 0; d < int64_t(shape.size()); ++d)
      if (d < lead || (size[d - lead] == 1 && shape[d] != 1))
        dims.push_back(d);
      else if (size[d - lead] != shape[d])
        in.fail("CUVIL-E-IMPORT-RAISE", "sum_to_size: size is not expandable to the tensor's shape");
    if (dims.empty())
      return ret(x);
    return ret(reshape(in, sumDims(in, x, dims, true), size));
  };
}

} // namespace

namespace {

/// torch.embedding_bag (recommenders' EmbeddingBag): bags of rows of
/// `weight` reduced by sum, mean or max. The bags' bounds are data
/// (offsets), so each index's bag is computed at run time, bag[i] =
/// #{b : offsets[b] <= i} - 1, and the reduction is a product with the
/// [bags, indices] membership matrix (sum, mean) or a masked max. Indices
/// equal to padding_idx belong to no bag. The other three results are
/// PyTorch 1.13's CPU ones: offset2bag (empty for sum), bag sizes (zeros
/// for sum), and max indices (the bag sizes for mean, zeros for sum).
IValue embeddingBag(Interpreter &in, const Args &a) {
  auto op = [&](const std::string &name, std::vector<IValue> args,
                std::vector<std::pair<std::string, IValue>> kwargs = {}) -> Value {
    IValue r = in.callOperator(name, std::move(args), std::move(kwargs));
    if (!r.isTensor())
      throw StopImport();
    return r.tensor->value;
  };
  auto I = [](int64_t v) { return IValue::integer(v); };
  auto T = [](Value v) { return IValue::ofTensor(v); };
  Value weight = a.t("weight"), indices = a.t("indices"), offsets = a.t("offsets");
  int64_t mode = a.i("mode");
  if (mode < 0 || mode > 2)
    in.fail("CUVIL-E-IMPORT-RAISE", "embedding_bag: mode must be 0 (sum), 1 (mean) or 2 (max)");
  if (rankOf(weight) != 2 || rankOf(indices) != 1 || rankOf(offsets) != 1)
    in.fail("CUVIL-E-IMPORT-RAISE", "embedding_bag: expected a 2-D weight and 1-D indices and offsets");
  std::vector<int64_t> ws = staticShape(in, weight, "embedding_bag weight");
  int64_t n = staticShape(in, indices, "embedding_bag indices")[0];
  int64_t bags = staticShape(in, offsets, "embedding_bag offsets")[0];
  bool lastOffset = a.b("include_last_offset");
  if (lastOffset) {
    if (bags < 1)
      in.fail("CUVIL-E-IMPORT-RAISE", "embedding_bag: include_last_offset needs at least one offset");
    --bags;
  }
  const IValue &psw = a["per_sample_weights"];
  if (!psw.isNone() && mode != 0)
    in.fail("CUVIL-E-IMPORT-RAISE", "embedding_bag: per_sample_weights was not None. per_sample_weights is "
                                    "only supported for mode='sum' (got mode='" +
                                        std::string(mode == 1 ? "mean" : "max") + "')");
  int64_t padding = -1;
  if (a.a.has("padding_idx") && !a["padding_idx"].isNone()) {
    padding = a.i("padding_idx");
    if (padding < -ws[0] || padding >= ws[0])
      in.fail("CUVIL-E-IMPORT-RAISE", "embedding_bag: padding_idx must be within the number of embeddings");
    if (padding < 0)
      padding += ws[0];
  }
  Value idx = cast(in, indices, DType::Int64), off = cast(in, offsets, DType::Int64);
  if (lastOffset)
    off = op("aten::narrow", {T(off), I(0), I(0), I(bags)});
  // bag[i] in [-1, bags): the last offset at or before position i.
  Value positions = op("aten::arange", {I(n)}, {{"dtype", I(4)}});
  Value starts = op("aten::le", {T(op("aten::unsqueeze", {T(off), I(0)})), T(op("aten::unsqueeze", {T(positions), I(1)}))});
  Value bagOf = op("aten::sub", {T(op("aten::sum", {T(starts), IValue::makeList({I(1)})})), I(1)});
  Value inBag = op("aten::ge", {T(bagOf), I(0)});
  if (lastOffset) { // past the last offset: in no bag
    Value end = op("aten::select", {T(cast(in, offsets, DType::Int64)), I(0), I(bags)});
    inBag = op("aten::logical_and", {T(inBag), T(op("aten::lt", {T(positions), T(end)}))});
  }
  if (padding >= 0)
    inBag = op("aten::logical_and", {T(inBag), T(op("aten::ne", {T(idx), I(padding)}))});
  // member[b, i]: index i counts in bag b.
  Value bagIds = op("aten::arange", {I(bags)}, {{"dtype", I(4)}});
  Value member = op("aten::logical_and", {T(op("aten::eq", {T(op("aten::unsqueeze", {T(bagIds), I(1)})),
                                                             T(op("aten::unsqueeze", {T(bagOf), I(0)}))})),
                                          T(op("aten::unsqueeze", {T(inBag), I(0)}))});
  Value rows = op("aten::embedding", {T(weight), T(idx)}); // [n, D]
  Value counts = op("aten::sum", {T(member), IValue::makeList({I(1)})}); // [bags] i64
  Value out;
  if (mode == 2) {
    // Masked max over [bags, n, D]; an empty bag is zeros.
    Value m3 = op("aten::unsqueeze", {T(member), I(2)});
    Value lowest = op("aten::full_like", {T(rows), IValue::floating(-INFINITY)});
    Value masked = op("aten::where", {T(m3), T(op("aten::unsqueeze", {T(rows), I(0)})), T(op("aten::unsqueeze", {T(lowest), I(0)}))});
    IValue mx = in.callOperator("aten::max", {T(masked), I(1)}, {});
    if (!mx.is(IValue::Kind::Tuple))
      throw StopImport();
    Value values = (*mx.list)[0].tensor->value, argmax = (*mx.list)[1].tensor->value;
    Value empty = op("aten::unsqueeze", {T(op("aten::eq", {T(counts), I(0)})), I(1)});
    out = op("aten::where", {T(empty), T(op("aten::zeros_like", {T(values)})), T(values)});
    // Max indices: the weight row of the winning index (0 for empty bags).
    Value rowIds = op("aten::index_select", {T(idx), I(0), T(op("aten::flatten", {T(argmax)}))});
    rowIds = reshape(in, rowIds, {bags, ws[1]});
    Value maxIdx = op("aten::where", {T(empty), T(op("aten::zeros_like", {T(rowIds)})), T(rowIds)});
    return IValue::makeTuple({T(out), T(op("aten::where", {T(op("aten::ge", {T(bagOf), I(0)})), T(bagOf), I(0)})),
                              T(counts), T(maxIdx)});
  }
  Value weights = op("aten::to", {T(member)}, {{"dtype", I(scalarTypeFromDType(dtypeOf(weight)))}});
  if (!psw.isNone())
    rows = op("aten::mul", {T(rows), T(op("aten::unsqueeze", {T(cast(in, psw.tensor->value, dtypeOf(weight))), I(1)}))});
  out = op("aten::matmul", {T(weights), T(rows)});
  if (mode == 0)
    return IValue::makeTuple({T(out), T(op("aten::zeros", {IValue::makeList({I(0)})}, {{"dtype", I(4)}})),
                              T(op("aten::zeros", {IValue::makeList({I(bags)})}, {{"dtype", I(4)}})),
                              T(op("aten::zeros", {IValue::makeList({I(bags)})}, {{"dtype", I(4)}}))});
  Value denom = op("aten::clamp", {T(cast(in, counts, dtypeOf(weight))), IValue::floating(1.0)});
  out = op("aten::div", {T(out), T(op("aten::unsqueeze", {T(denom), I(1)}))});
  Value offset2bag = op("aten::where", {T(op("aten::ge", {T(bagOf), I(0)})), T(bagOf), I(0)});
  return IValue::makeTuple({T(out), T(offset2bag), T(counts), T(counts)});
}

} // namespace

void registerFormulaOpHandlers(std::map<std::string, OpHandler> &table) {
  registerFormulaHandlers(table);
  for (const char *name : {"aten::embedding_bag", "aten::_embedding_bag", "aten::_embedding_bag_forward_only"})
    table[name] = [](Interpreter &in, const BoundArgs &b) { return embeddingBag(in, Args{in, b}); };
}

} // namespace cuvil::torchscript
