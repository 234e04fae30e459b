//===- LowerIndexOps.cpp - Advanced indexing and the scatter family -------===//
//
// x[i, j] with index tensors (aten::index), its assignment (index_put), and
// torch.scatter / scatter_add / scatter_reduce / index_add / index_copy /
// index_fill / index_reduce / put / take / take_along_dim.
//
// Advanced indexing follows NumPy's rules, as PyTorch does: the index
// tensors broadcast together to a shape B; the indexed dimensions are
// replaced by B where they were when they are adjacent, else B goes first.
// They are flattened into one dimension and the index tensors into one
// linear index (negative indices count from the end; each is checked
// against its own dimension), so a gather is one index_select and an
// assignment one cuvil.tensor.scatter along it.
//
//===----------------------------------------------------------------------===//
#include "frontend/torchscript/LowerHelpers.h"

#include "dialects/Cuvil/IR/TypeRules.h"

#include <numeric>

namespace cuvil::torchscript {
namespace {

using namespace lower;

Value zeroLike(Interpreter &in, DType d) { return in.scalarConstant(IValue::integer(0), d); }

/// all(x) over every dimension, 0-d.
Value allOf(Interpreter &in, Value x) {
  std::vector<int64_t> dims(rankOf(x));
  std::iota(dims.begin(), dims.end(), 0);
  return in.build<cir::AllOp>(x, i64s(in, dims), mlir::UnitAttr());
}


/// How x[indices] is computed: x permuted (indexed dims together at `pos`)
/// and reshaped to pre + [product of their sizes] + post, and the linear
/// index (shape `broadcast`, int64).
struct IndexPlan {
  std::vector<int64_t> permutation; ///< empty: the identity
  std::vector<int64_t> permutedShape;
  int64_t pos = 0;
  std::vector<int64_t> pre, post, broadcast;
  Value flat;   ///< x permuted and reshaped
  Value linear; ///< int64, shape `broadcast`
};

/// A boolean (or uint8) mask index as the integer index tensors of its
/// True positions, one per mask dimension: only for masks known at import
/// time (otherwise the result's shape depends on tensor data).
bool maskIndices(Interpreter &in, Value mask, std::vector<Value> &out) {
  std::optional<Tensor> m = in.foldToConstant(mask);
  if (!m)
    return false;
  std::vector<int64_t> shape = m->shape();
  std::vector<std::vector<int64_t>> coords(shape.size());
  std::vector<int64_t> strides = contiguousStrides(shape);
  for (int64_t k = 0; k < m->numElements(); ++k) {
    if (m->getInt(k) == 0)
      continue;
    for (size_t d = 0; d < shape.size(); ++d)
      coords[d].push_back((k / strides[d]) % shape[d]);
  }
  for (auto &c : coords)
    out.push_back(constantI64(in, c));
  return true;
}

std::optional<IndexPlan> planIndex(Interpreter &in, Value x, const IValue &indexList) {
  if (!indexList.isSequence())
    in.fail("CUVIL-E-IMPORT-TYPE", "indices must be a list of tensors");
  int64_t rank = rankOf(x);
  if (!typeOf(x).hasStaticShape()) {
    in.unsupported("advanced indexing of a tensor with dynamic dimensions");
    return std::nullopt;
  }
  // One entry per dimension of x: an index tensor or null (every element).
  std::vector<Value> perDim;
  for (const IValue &v : *indexList.list) {
    if (v.isNone()) {
      perDim.push_back(Value());
      continue;
    }
    if (!v.isTensor())
      in.fail("CUVIL-E-IMPORT-TYPE", "an index must be a tensor or None");
    Value t = v.tensor->value;
    DType d = dtypeOf(t);
    if (d == DType::Bool || d == DType::UInt8) {
      std::vector<Value> expanded;
      if (!maskIndices(in, t, expanded)) {
        in.unsupported("indexing with a boolean mask computed at run time (the result's shape "
                       "depends on the data; use torch.where instead)");
        return std::nullopt;
      }
      for (Value e : expanded)
        perDim.push_back(e);
      continue;
    }
    if (isFloat(d))
      in.fail("CUVIL-E-IMPORT-RAISE", "tensors used as indices must be long, int, byte or bool tensors");
    perDim.push_back(cast(in, t, DType::Int64));
  }
  if (static_cast<int64_t>(perDim.size()) > rank)
    in.fail("CUVIL-E-IMPORT-RAISE", "too many indices for tensor of dimension " + std::to_string(rank));
  perDim.resize(rank);

  std::vector<int64_t> dims;
  for (int64_t d = 0; d < rank; ++d)
    if (perDim[d])
      dims.push_back(d);
  IndexPlan plan;
  if (dims.empty()) { // x[None-only]: nothing indexed
    plan.flat = x;
    return plan;
  }
  // The broadcast shape of the index tensors.
  std::vector<int64_t> b = shapeOf(perDim[dims[0]]);
  for (int64_t d : dims) {
    llvm::SmallVector<int64_t> out;
    if (mlir::failed(mlir::cuvil::broadcastShapes(b, shapeOf(perDim[d]), out)))
      in.fail("CUVIL-E-IMPORT-RAISE", "shape mismatch: indexing tensors could not be broadcast together");
    b.assign(out.begin(), out.end());
  }
  plan.broadcast = b;
  bool adjacent = dims.back() - dims.front() + 1 == static_cast<int64_t>(dims.size());
  std::vector<int64_t> shape = shapeOf(x), order;
  if (adjacent) {
    for (int64_t d = 0; d < rank; ++d)
      order.push_back(d);
    plan.pos = dims.front();
  } else {
    order = dims;
    for (int64_t d = 0; d < rank; ++d)
      if (!perDim[d])
        order.push_back(d);
    plan.pos = 0;
  }
  Value permuted = x;
  if (!adjacent) {
    plan.permutation = order;
    permuted = in.build<cir::PermuteOp>(x, i64s(in, order));
  }
  plan.permutedShape = shapeOf(permuted);
  int64_t count = static_cast<int64_t>(dims.size());
  int64_t product = 1;
  for (int64_t k = 0; k < count; ++k)
    product *= plan.permutedShape[plan.pos + k];
  plan.pre.assign(plan.permutedShape.begin(), plan.permutedShape.begin() + plan.pos);
  plan.post.assign(plan.permutedShape.begin() + plan.pos + count, plan.permutedShape.end());
  std::vector<int64_t> flatShape = plan.pre;
  flatShape.push_back(product);
  flatShape.insert(flatShape.end(), plan.post.begin(), plan.post.end());
  plan.flat = reshape(in, permuted, flatShape);

  // The linear index, each index wrapped and checked against its dimension.
  Value linear, ok;
  int64_t stride = product;
  for (int64_t d : dims) {
    int64_t size = shape[d];
    stride /= size;
    Value idx = perDim[d];
    Value lo = in.scalarConstant(IValue::integer(-size), DType::Int64);
    Value hi = in.scalarConstant(IValue::integer(size), DType::Int64);
    Value inside = in.build<cir::LogicalAndOp>(in.build<cir::GeOp>(idx, lo), in.build<cir::LtOp>(idx, hi));
    ok = ok ? in.build<cir::LogicalAndOp>(ok, allOf(in, inside)) : allOf(in, inside);
    Value wrapped = in.build<cir::WhereOp>(in.build<cir::LtOp>(idx, zeroLike(in, DType::Int64)),
                                           in.build<cir::AddOp>(idx, hi), idx);
    Value term = stride == 1 ? wrapped
                             : in.build<cir::MulOp>(wrapped, in.scalarConstant(IValue::integer(stride), DType::Int64));
    linear = linear ? in.build<cir::AddOp>(linear, term) : term;
  }
  in.builder().create<cir::AssertOp>(in.location(), ok,
                                     in.builder().getStringAttr("index out of range in advanced indexing"));
  plan.linear = expandTo(in, linear, b);
  return plan;
}

int64_t product(const std::vector<int64_t> &v) {
  return std::accumulate(v.begin(), v.end(), int64_t(1), std::multiplies<int64_t>());
}

std::vector<int64_t> concat(std::vector<int64_t> a, const std::vector<int64_t> &m, const std::vector<int64_t> &c) {
  a.insert(a.end(), m.begin(), m.end());
  a.insert(a.end(), c.begin(), c.end());
  return a;
}

/// x[indices].
Value indexGather(Interpreter &in, Value x, const IndexPlan &plan) {
  if (!plan.linear)
    return x;
  int64_t n = product(plan.broadcast);
  Value picked = in.build<cir::IndexSelectOp>(plan.flat, reshape(in, plan.linear, {n}), i64(in, plan.pos));
  return reshape(in, picked, concat(plan.pre, plan.broadcast, plan.post));
}

/// The inverse of a permutation.
std::vector<int64_t> inverse(const std::vector<int64_t> &p) {
  std::vector<int64_t> r(p.size());
  for (size_t i = 0; i < p.size(); ++i)
    r[p[i]] = static_cast<int64_t>(i);
  return r;
}

/// x with x[indices] = values (or += with accumulate).
Value indexPut(Interpreter &in, Value x, const IndexPlan &plan, Value values, bool accumulate) {
  values = cast(in, values, dtypeOf(x));
  if (!plan.linear) { // x[...] = values: every element
    Value v = expandTo(in, values, shapeOf(x));
    return accumulate ? in.build<cir::AddOp>(x, v) : v;
  }
  int64_t n = product(plan.broadcast);
  std::vector<int64_t> full = concat(plan.pre, plan.broadcast, plan.post);
  std::vector<int64_t> flatShape = concat(plan.pre, {n}, plan.post);
  // values broadcast to the indexed result's shape, flattened like it.
  llvm::SmallVector<int64_t> check;
  if (mlir::failed(mlir::cuvil::broadcastShapes(shapeOf(values), full, check)) ||
      std::vector<int64_t>(check.begin(), check.end()) != full)
    in.fail("CUVIL-E-IMPORT-RAISE", "shape mismatch: value tensor cannot be broadcast to the indexing result");
  Value src = reshape(in, expandTo(in, values, full), flatShape);
  std::vector<int64_t> idxShape(flatShape.size(), 1);
  idxShape[plan.pos] = n;
  Value idx = expandTo(in, reshape(in, reshape(in, plan.linear, {n}), idxShape), flatShape);
  Value out = in.build<cir::ScatterOp>(
      plan.flat, idx, src, i64(in, plan.pos),
      cir::ScatterReduceAttr::get(in.context(), accumulate ? cir::ScatterReduce::Sum : cir::ScatterReduce::None),
      in.builder().getBoolAttr(true));
  out = reshape(in, out, plan.permutedShape);
  if (!plan.permutation.empty())
    out = in.build<cir::PermuteOp>(out, i64s(in, inverse(plan.permutation)));
  return out;
}

/// Scatter along `dim`, with PyTorch's 0-d inputs taken as one element.
Value scatter(Interpreter &in, Value self, int64_t dim, Value index, Value src, cir::ScatterReduce reduce,
              bool includeSelf) {
  src = cast(in, src, dtypeOf(self));
  index = cast(in, index, DType::Int64);
  bool scalar = rankOf(self) == 0;
  if (scalar) {
    self = reshape(in, self, {1});
    index = reshape(in, index, {typeOf(index).getNumElements()});
    src = reshape(in, src, {typeOf(src).getNumElements()});
    dim = 0;
  }
  Value r = in.build<cir::ScatterOp>(self, index, src, i64(in, dim),
                                     cir::ScatterReduceAttr::get(in.context(), reduce),
                                     in.builder().getBoolAttr(includeSelf));
  return scalar ? reshape(in, r, {}) : r;
}

std::optional<cir::ScatterReduce> reduceKind(const std::string &s) {
  if (s == "sum" || s == "add") return cir::ScatterReduce::Sum;
  if (s == "prod" || s == "multiply") return cir::ScatterReduce::Prod;
  if (s == "mean") return cir::ScatterReduce::Mean;
  if (s == "amax") return cir::ScatterReduce::Amax;
  if (s == "amin") return cir::ScatterReduce::Amin;
  return std::nullopt;
}

/// The scalar or tensor `value` as a tensor of `shape` and `like`'s dtype.
Value filled(Interpreter &in, const IValue &value, Value like, const std::vector<int64_t> &shape) {
  Value v = value.isTensor() ? cast(in, value.tensor->value, dtypeOf(like)) : in.scalarConstant(value, dtypeOf(like));
  return expandTo(in, v, shape);
}

/// An index_* op's 1-D `index` along `dim` as a full index tensor of
/// `shape` (the source's), for scatter.
Value alongDim(Interpreter &in, Value index, int64_t dim, const std::vector<int64_t> &shape) {
  index = cast(in, index, DType::Int64);
  if (shape.empty())
    return reshape(in, index, {});
  std::vector<int64_t> s(shape.size(), 1);
  s[dim] = typeOf(index).getNumElements();
  return expandTo(in, reshape(in, index, s), shape);
}

/// Registers NAME and NAME_ (in place) computed by `fn`.
void withInplace(Table &t, const std::string &name, std::function<Value(Interpreter &, const Args &)> fn) {
  t[name] = [fn](Interpreter &in, const BoundArgs &b) {
    Value v = fn(in, Args{in, b});
    return v ? ret(v) : IValue::poison();
  };
  t[name + "_"] = [fn](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value v = fn(in, a);
    return v ? inplace(in, a["self"], v) : IValue::poison();
  };
}

void registerIndexing(Table &t) {
  t["aten::index"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = a.t("self");
    std::optional<IndexPlan> plan = planIndex(in, x, a["indices"]);
    return plan ? ret(indexGather(in, x, *plan)) : IValue::poison();
  };
  auto put = [](Interpreter &in, const Args &a) -> Value {
    Value x = a.t("self");
    // x[mask] = v where v does not depend on which elements the mask
    // selects (x[x < 0] = 0, or one row for every selected row): where(mask,
    // v, x), whatever the mask holds.
    const IValue &list = a["indices"];
    Value values = a.t("values");
    if (list.isSequence() && list.list->size() == 1 && (*list.list)[0].isTensor()) {
      Value mask = (*list.list)[0].tensor->value;
      DType md = dtypeOf(mask);
      std::vector<int64_t> ms = shapeOf(mask), xs = shapeOf(x), vs = shapeOf(values);
      std::vector<int64_t> post(xs.begin() + std::min(ms.size(), xs.size()), xs.end());
      // v broadcasts to [selected, post...] for any count of selected
      // elements: it has no leading dimension beyond post's, or one of 1.
      bool independent = vs.size() <= post.size() || (vs.size() == post.size() + 1 && vs[0] == 1);
      if ((md == DType::Bool || md == DType::UInt8) && ms.size() <= xs.size() &&
          std::equal(ms.begin(), ms.end(), xs.begin()) && independent) {
        mask = cast(in, mask, DType::Bool);
        std::vector<int64_t> padded = ms;
        padded.resize(xs.size(), 1);
        mask = expandTo(in, reshape(in, mask, padded), xs);
        if (vs.size() == post.size() + 1)
          vs.erase(vs.begin());
        std::vector<int64_t> vshape(xs.size() - vs.size(), 1);
        vshape.insert(vshape.end(), vs.begin(), vs.end());
        llvm::SmallVector<int64_t> check;
        if (mlir::failed(mlir::cuvil::broadcastShapes(vshape, xs, check)) ||
            std::vector<int64_t>(check.begin(), check.end()) != xs)
          in.fail("CUVIL-E-IMPORT-RAISE", "shape mismatch: value tensor cannot be broadcast to the indexing result");
        Value v = reshape(in, cast(in, values, dtypeOf(x)), vshape);
        bool accumulate = a.a.has("accumulate") && a.b("accumulate");
        if (accumulate)
          return in.build<cir::AddOp>(x, in.build<cir::WhereOp>(mask, v, zeroLike(in, dtypeOf(x))));
        return in.build<cir::WhereOp>(mask, v, x);
      }
    }
    std::optional<IndexPlan> plan = planIndex(in, x, a["indices"]);
    if (!plan)
      return Value();
    return indexPut(in, x, *plan, a.t("values"), a.a.has("accumulate") && a.b("accumulate"));
  };
  withInplace(t, "aten::index_put", put);
  t["aten::_index_put_impl_"] = t["aten::index_put_"];

  // scatter(self, dim, index, src | value [, reduce]).
  withInplace(t, "aten::scatter", [](Interpreter &in, const Args &a) -> Value {
    Value self = a.t("self");
    int64_t dim = wrapDim(in, a.i("dim"), rankOf(self));
    Value index = a.t("index");
    Value src = a.a.has("src") ? a.t("src") : filled(in, a["value"], self, shapeOf(index));
    cir::ScatterReduce reduce = cir::ScatterReduce::None;
    if (a.a.has("reduce") && !a.none("reduce")) {
      std::optional<cir::ScatterReduce> r = reduceKind(a.s("reduce"));
      if (!r || (*r != cir::ScatterReduce::Sum && *r != cir::ScatterReduce::Prod))
        in.fail("CUVIL-E-IMPORT-RAISE", "reduce argument must be either add or multiply, got " + a.s("reduce"));
      reduce = *r;
    }
    return scatter(in, self, dim, index, src, reduce, true);
  });
  withInplace(t, "aten::scatter_add", [](Interpreter &in, const Args &a) -> Value {
    Value self = a.t("self");
    return scatter(in, self, wrapDim(in, a.i("dim"), rankOf(self)), a.t("index"), a.t("src"),
                   cir::ScatterReduce::Sum, true);
  });
  withInplace(t, "aten::scatter_reduce", [](Interpreter &in, const Args &a) -> Value {
    Value self = a.t("self");
    std::optional<cir::ScatterReduce> r = reduceKind(a.s("reduce"));
    if (!r || a.s("reduce") == "add" || a.s("reduce") == "multiply")
      in.fail("CUVIL-E-IMPORT-RAISE", "reduce argument must be one of sum, prod, mean, amax, amin, got " +
                                          a.s("reduce"));
    return scatter(in, self, wrapDim(in, a.i("dim"), rankOf(self)), a.t("index"), a.t("src"), *r,
                   a.b("include_self"));
  });

  // index_add / index_copy / index_fill / index_reduce: a 1-D index along dim.
  withInplace(t, "aten::index_add", [](Interpreter &in, const Args &a) -> Value {
    Value self = a.t("self"), source = a.t("source");
    int64_t dim = wrapDim(in, a.i("dim"), rankOf(self));
    const IValue &alpha = a["alpha"];
    if (!alpha.isNone() && !(alpha.is(K::Int) && alpha.i == 1) && !(alpha.is(K::Float) && alpha.f == 1.0))
      source = in.build<cir::MulOp>(source, in.scalarConstant(alpha, dtypeOf(source)));
    return scatter(in, self, dim, alongDim(in, a.t("index"), dim, shapeOf(source)), source,
                   cir::ScatterReduce::Sum, true);
  });
  withInplace(t, "aten::index_copy", [](Interpreter &in, const Args &a) -> Value {
    Value self = a.t("self"), source = a.t("source");
    int64_t dim = wrapDim(in, a.i("dim"), rankOf(self));
    return scatter(in, self, dim, alongDim(in, a.t("index"), dim, shapeOf(source)), source,
                   cir::ScatterReduce::None, true);
  });
  withInplace(t, "aten::index_fill", [](Interpreter &in, const Args &a) -> Value {
    Value self = a.t("self");
    int64_t dim = wrapDim(in, a.i("dim"), rankOf(self));
    std::vector<int64_t> shape = shapeOf(self);
    if (!shape.empty())
      shape[dim] = typeOf(a.t("index")).getNumElements();
    Value source = filled(in, a["value"], self, shape);
    return scatter(in, self, dim, alongDim(in, a.t("index"), dim, shape), source, cir::ScatterReduce::None,
                   true);
  });
  withInplace(t, "aten::index_reduce", [](Interpreter &in, const Args &a) -> Value {
    Value self = a.t("self"), source = a.t("source");
    int64_t dim = wrapDim(in, a.i("dim"), rankOf(self));
    std::optional<cir::ScatterReduce> r = reduceKind(a.s("reduce"));
    if (!r || a.s("reduce") == "sum" || a.s("reduce") == "add" || a.s("reduce") == "multiply")
      in.fail("CUVIL-E-IMPORT-RAISE", "reduce argument must be one of prod, mean, amax, amin, got " + a.s("reduce"));
    return scatter(in, self, dim, alongDim(in, a.t("index"), dim, shapeOf(source)), source, *r,
                   a.b("include_self"));
  });

  // take / put: the tensor seen as flat.
  t["aten::take"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = a.t("self"), index = a.t("index");
    Value flat = reshape(in, x, {typeOf(x).getNumElements()});
    IValue list = IValue::makeList({IValue::ofTensor(index)});
    std::optional<IndexPlan> plan = planIndex(in, flat, list);
    return plan ? ret(indexGather(in, flat, *plan)) : IValue::poison();
  };
  withInplace(t, "aten::put", [](Interpreter &in, const Args &a) -> Value {
    Value x = a.t("self"), index = a.t("index");
    Value flat = reshape(in, x, {typeOf(x).getNumElements()});
    IValue list = IValue::makeList({IValue::ofTensor(index)});
    std::optional<IndexPlan> plan = planIndex(in, flat, list);
    if (!plan)
      return Value();
    Value r = indexPut(in, flat, *plan, reshape(in, a.t("source"), shapeOf(index)), a.b("accumulate"));
    return reshape(in, r, shapeOf(x));
  });
  // take_along_dim: gather with the index broadcast against the input.
  t["aten::take_along_dim"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = a.t("self"), index = cast(in, a.t("indices"), DType::Int64);
    if (a.none("dim")) {
      x = reshape(in, x, {typeOf(x).getNumElements()});
      index = reshape(in, index, {typeOf(index).getNumElements()});
      return ret(in.build<cir::GatherOp>(x, index, i64(in, 0)));
    }
    int64_t dim = wrapDim(in, a.i("dim"), rankOf(x));
    std::vector<int64_t> xs = shapeOf(x), is = shapeOf(index);
    if (xs.size() != is.size())
      in.fail("CUVIL-E-IMPORT-RAISE", "torch.take_along_dim(): input and indices should have the same number of dimensions");
    std::vector<int64_t> xb = xs, ib = is;
    for (size_t d = 0; d < xs.size(); ++d)
      if (static_cast<int64_t>(d) != dim) {
        int64_t s = std::max(xs[d], is[d]);
        xb[d] = ib[d] = s;
      }
    return ret(in.build<cir::GatherOp>(expandTo(in, x, xb), expandTo(in, index, ib), i64(in, dim)));
  };
}

} // namespace

void registerIndexHandlers(std::map<std::string, OpHandler> &table) { registerIndexing(table); }

} // namespace cuvil::torchscript
