//===- LowerTensorOps.cpp - Rearrangements, factories and small linalg ----===//
//
// Operators that only move, repeat or pick elements (flip, roll, rot90,
// repeat, tile, movedim, the *stack and *split families, diagonal, diag,
// diag_embed, unfold, pixel_shuffle, meshgrid, ...), tensor factories
// (new_*, empty*, eye, linspace, logspace, the *_indices), and products and
// reductions PyTorch defines as formulas (einsum, tensordot, kron, outer,
// dot, mv, addmv, addr, addbmm, cross, diff, logsumexp, the norms,
// cosine_similarity, cdist, ...). Each is composed of cuvil ops: reshapes
// and permutes, slices and concatenations, index_select with constant
// indices where elements are picked out of order, matmul and reductions.
//
//===----------------------------------------------------------------------===//
#include "frontend/torchscript/LowerHelpers.h"

#include "dialects/Cuvil/IR/TypeRules.h"

#include <cmath>
#include <numeric>

namespace cuvil::torchscript {
namespace {

using namespace lower;

Value concat(Interpreter &in, const std::vector<Value> &parts, int64_t dim) {
  if (parts.size() == 1)
    return parts[0];
  return in.build<cir::ConcatOp>(mlir::ValueRange(parts), i64(in, dim));
}

/// x with its elements along `dim` picked at the constant `positions`.
Value pick(Interpreter &in, Value x, int64_t dim, const std::vector<int64_t> &positions) {
  return in.build<cir::IndexSelectOp>(x, constantI64(in, positions), i64(in, dim));
}

std::vector<int64_t> staticOrFail(Interpreter &in, Value x, const char *what) {
  if (!typeOf(x).hasStaticShape())
    in.fail("CUVIL-E-IMPORT-SHAPE", std::string(what) + " needs static dimensions");
  return shapeOf(x);
}

Value sumOver(Interpreter &in, Value x, std::vector<int64_t> dims, bool keep = false) {
  return in.build<cir::SumOp>(x, i64s(in, dims), keep ? in.builder().getUnitAttr() : mlir::UnitAttr());
}


/// The dims of a reduction argument (None or [] means all).
std::vector<int64_t> dimsArg(Interpreter &in, const Args &a, const char *name, int64_t rank) {
  if (!a.a.has(name) || a.none(name))
    return iota(rank);
  std::vector<int64_t> dims = a.ints(name);
  if (dims.empty())
    return iota(rank);
  for (int64_t &d : dims)
    d = wrapDim(in, d, rank);
  std::sort(dims.begin(), dims.end());
  dims.erase(std::unique(dims.begin(), dims.end()), dims.end());
  if (rank == 0)
    dims.clear();
  return dims;
}

IValue tensors(std::vector<Value> vs) {
  IValueList items;
  for (Value v : vs)
    items.push_back(IValue::ofTensor(v));
  return IValue::makeList(std::move(items));
}

//===----------------------------------------------------------------------===//
// Rearrangements
//===----------------------------------------------------------------------===//

Value flip(Interpreter &in, Value x, std::vector<int64_t> dims) {
  std::vector<int64_t> shape = staticOrFail(in, x, "flip");
  for (int64_t d : dims) {
    d = wrapDim(in, d, rankOf(x));
    if (rankOf(x) == 0 || shape[d] <= 1)
      continue;
    std::vector<int64_t> rev = iota(shape[d]);
    std::reverse(rev.begin(), rev.end());
    x = pick(in, x, d, rev);
  }
  return x;
}

/// torch.roll: along each dim, the last `shift` elements come first.
Value roll(Interpreter &in, Value x, std::vector<int64_t> shifts, std::vector<int64_t> dims) {
  std::vector<int64_t> shape = staticOrFail(in, x, "roll");
  if (dims.empty()) { // the flattened tensor, shape restored
    if (shifts.size() != 1)
      in.fail("CUVIL-E-IMPORT-RAISE", "shifts and dimensions must align");
    Value flat = reshape(in, x, {numel(shape)});
    return reshape(in, roll(in, flat, shifts, {0}), shape);
  }
  if (shifts.size() != dims.size())
    in.fail("CUVIL-E-IMPORT-RAISE", "shifts and dimensions must align. shifts: " +
                                        std::to_string(shifts.size()) + ", dims:" + std::to_string(dims.size()));
  for (size_t k = 0; k < dims.size(); ++k) {
    int64_t d = wrapDim(in, dims[k], rankOf(x)), n = shape[d];
    if (n == 0)
      continue;
    int64_t s = ((shifts[k] % n) + n) % n;
    if (s == 0)
      continue;
    x = concat(in, {slice(in, x, d, n - s, n), slice(in, x, d, 0, n - s)}, d);
  }
  return x;
}

Value transpose(Interpreter &in, Value x, int64_t a, int64_t b) {
  std::vector<int64_t> order = iota(rankOf(x));
  std::swap(order[a], order[b]);
  return permute(in, x, order);
}

/// torch.rot90(x, k, dims): k quarter turns from dims[0] towards dims[1].
Value rot90(Interpreter &in, Value x, int64_t k, std::vector<int64_t> dims) {
  if (dims.size() != 2)
    in.fail("CUVIL-E-IMPORT-RAISE", "expected total rotation dims == 2, but got dims = " + std::to_string(dims.size()));
  int64_t r = rankOf(x);
  if (r < 2)
    in.fail("CUVIL-E-IMPORT-RAISE", "expected total dims >= 2, but got total dims = " + std::to_string(r));
  int64_t a = wrapDim(in, dims[0], r), b = wrapDim(in, dims[1], r);
  if (a == b)
    in.fail("CUVIL-E-IMPORT-RAISE", "expected rotation dims to be different");
  k = ((k % 4) + 4) % 4;
  if (k == 1)
    return transpose(in, flip(in, x, {b}), a, b);
  if (k == 2)
    return flip(in, x, {a, b});
  if (k == 3)
    return flip(in, transpose(in, x, a, b), {b});
  return x;
}

/// Tensor.repeat(repeats): tiles the tensor; extra leading repeats add dims.
Value repeat(Interpreter &in, Value x, std::vector<int64_t> reps) {
  std::vector<int64_t> shape = staticOrFail(in, x, "repeat");
  if (reps.size() < shape.size())
    in.fail("CUVIL-E-IMPORT-RAISE", "Number of dimensions of repeat dims can not be smaller than number of "
                                    "dimensions of tensor");
  shape.insert(shape.begin(), reps.size() - shape.size(), 1);
  x = reshape(in, x, shape);
  // [s0, s1] -> [1, s0, 1, s1] -> expand [r0, s0, r1, s1] -> [r0*s0, r1*s1].
  std::vector<int64_t> spread, expanded, result;
  for (size_t d = 0; d < shape.size(); ++d) {
    spread.insert(spread.end(), {1, shape[d]});
    expanded.insert(expanded.end(), {reps[d], shape[d]});
    result.push_back(reps[d] * shape[d]);
  }
  return reshape(in, expandTo(in, reshape(in, x, spread), expanded), result);
}

Value atLeast(Interpreter &in, Value x, int64_t rank) {
  std::vector<int64_t> s = shapeOf(x);
  if (static_cast<int64_t>(s.size()) >= rank)
    return x;
  if (rank == 3 && s.size() == 2) // [M, N] -> [M, N, 1]
    return reshape(in, x, {s[0], s[1], 1});
  if (rank == 3 && s.size() == 1) // [N] -> [1, N, 1]
    return reshape(in, x, {1, s[0], 1});
  s.insert(s.begin(), rank - s.size(), 1);
  return reshape(in, x, s);
}

/// The common element type of `vs` (PyTorch's promotion for cat/stack).
std::vector<Value> promoted(Interpreter &in, std::vector<Value> vs) {
  llvm::SmallVector<mlir::Type> types;
  for (Value v : vs)
    types.push_back(v.getType());
  mlir::Type common = cir::resultElementType(types);
  for (Value &v : vs)
    v = cast(in, v, dtypeOfElement(common));
  return vs;
}

/// tensor_split by section count or split indices along `dim`.
std::vector<Value> tensorSplit(Interpreter &in, Value x, int64_t dim, const std::vector<int64_t> &bounds) {
  int64_t n = shapeOf(x)[dim];
  std::vector<Value> parts;
  int64_t start = 0;
  for (int64_t b : bounds) {
    int64_t end = std::clamp<int64_t>(b < 0 ? b + n : b, 0, n);
    parts.push_back(slice(in, x, dim, start, std::max(start, end)));
    start = std::max(start, end);
  }
  parts.push_back(slice(in, x, dim, start, n));
  return parts;
}

std::vector<int64_t> sectionBounds(int64_t n, int64_t sections) {
  std::vector<int64_t> bounds;
  int64_t base = n / sections, extra = n % sections, at = 0;
  for (int64_t k = 0; k + 1 < sections; ++k) {
    at += base + (k < extra ? 1 : 0);
    bounds.push_back(at);
  }
  return bounds;
}

/// The diagonal of dims (d1, d2) with `offset`, as the last dimension.
Value diagonal(Interpreter &in, Value x, int64_t offset, int64_t d1, int64_t d2) {
  int64_t r = rankOf(x);
  d1 = wrapDim(in, d1, r);
  d2 = wrapDim(in, d2, r);
  if (d1 == d2)
    in.fail("CUVIL-E-IMPORT-RAISE", "diagonal dimensions cannot be identical " + std::to_string(d1) + ", " +
                                        std::to_string(d2));
  std::vector<int64_t> shape = staticOrFail(in, x, "diagonal");
  std::vector<int64_t> order;
  for (int64_t d = 0; d < r; ++d)
    if (d != d1 && d != d2)
      order.push_back(d);
  std::vector<int64_t> outer;
  for (int64_t d : order)
    outer.push_back(shape[d]);
  order.push_back(d1);
  order.push_back(d2);
  int64_t rows = shape[d1], cols = shape[d2];
  Value m = reshape(in, permute(in, x, order), [&] {
    std::vector<int64_t> s = outer;
    s.push_back(rows * cols);
    return s;
  }());
  std::vector<int64_t> positions;
  for (int64_t i = std::max<int64_t>(0, -offset); i < rows && i + offset < cols; ++i)
    positions.push_back(i * cols + i + offset);
  if (positions.empty()) {
    std::vector<int64_t> s = outer;
    s.push_back(0);
    return splat(in, s, dtypeOf(x), IValue::integer(0));
  }
  return pick(in, m, static_cast<int64_t>(outer.size()), positions);
}

/// diag_embed: the last dim of x on the diagonal (offset) of new dims d1, d2.
Value diagEmbed(Interpreter &in, Value x, int64_t offset, int64_t d1, int64_t d2) {
  std::vector<int64_t> shape = staticOrFail(in, x, "diag_embed");
  if (shape.empty())
    in.fail("CUVIL-E-IMPORT-RAISE", "diag_embed needs a tensor of rank >= 1");
  int64_t n = shape.back(), m = n + std::abs(offset), r = rankOf(x) + 1;
  d1 = wrapDim(in, d1, r);
  d2 = wrapDim(in, d2, r);
  if (d1 == d2)
    in.fail("CUVIL-E-IMPORT-RAISE", "diagonal dimensions cannot be identical");
  std::vector<int64_t> outer(shape.begin(), shape.end() - 1);
  // Picks from x with one zero appended: position n is the zero.
  std::vector<int64_t> zs = outer;
  zs.push_back(1);
  Value padded = concat(in, {x, splat(in, zs, dtypeOf(x), IValue::integer(0))}, rankOf(x) - 1);
  std::vector<int64_t> positions;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < m; ++j)
      positions.push_back(j - i == offset ? (offset >= 0 ? i : j) : n);
  Value flat = pick(in, padded, rankOf(x) - 1, positions);
  std::vector<int64_t> square = outer;
  square.insert(square.end(), {m, m});
  Value y = reshape(in, flat, square);
  // The two new dims sit last; move them to d1 < d2 (or swapped).
  std::vector<int64_t> order(r, -1);
  int64_t lo = std::min(d1, d2), hi = std::max(d1, d2), next = 0;
  for (int64_t d = 0; d < r; ++d)
    if (d != lo && d != hi)
      order[d] = next++;
  order[d1] = r - 2;
  order[d2] = r - 1;
  return permute(in, y, order);
}

/// Tensor.unfold(dim, size, step): windows along dim as a new last dim.
Value unfold(Interpreter &in, Value x, int64_t dim, int64_t size, int64_t step) {
  std::vector<int64_t> shape = staticOrFail(in, x, "unfold");
  if (shape.empty()) { // a 0-d tensor: one window of itself
    if (size != 1)
      in.fail("CUVIL-E-IMPORT-RAISE", "maximum size for tensor at dimension 0 is 1 but size is " + std::to_string(size));
    return reshape(in, x, {1});
  }
  dim = wrapDim(in, dim, rankOf(x));
  if (size > shape[dim])
    in.fail("CUVIL-E-IMPORT-RAISE", "maximum size for tensor at dimension " + std::to_string(dim) + " is " +
                                        std::to_string(shape[dim]) + " but size is " + std::to_string(size));
  if (step <= 0)
    in.fail("CUVIL-E-IMPORT-RAISE", "step is " + std::to_string(step) + " but must be > 0");
  int64_t windows = (shape[dim] - size) / step + 1;
  std::vector<int64_t> positions;
  for (int64_t w = 0; w < windows; ++w)
    for (int64_t k = 0; k < size; ++k)
      positions.push_back(w * step + k);
  std::vector<int64_t> s = shape;
  s[dim] = windows;
  s.insert(s.begin() + dim + 1, size);
  Value y = reshape(in, positions.empty() ? slice(in, x, dim, 0, 0) : pick(in, x, dim, positions), s);
  std::vector<int64_t> order;
  for (int64_t d = 0; d < static_cast<int64_t>(s.size()); ++d)
    if (d != dim + 1)
      order.push_back(d);
  order.push_back(dim + 1);
  return permute(in, y, order);
}

Value pixelShuffle(Interpreter &in, Value x, int64_t r, bool inverse) {
  std::vector<int64_t> s = staticOrFail(in, x, "pixel_shuffle");
  int64_t rank = static_cast<int64_t>(s.size());
  if (rank < 3)
    in.fail("CUVIL-E-IMPORT-RAISE", "pixel_shuffle expects input to have at least 3 dimensions");
  std::vector<int64_t> lead(s.begin(), s.end() - 3);
  int64_t c = s[rank - 3], h = s[rank - 2], w = s[rank - 1], L = static_cast<int64_t>(lead.size());
  auto with = [&](std::vector<int64_t> tail) {
    std::vector<int64_t> v = lead;
    v.insert(v.end(), tail.begin(), tail.end());
    return v;
  };
  std::vector<int64_t> order = iota(L);
  if (!inverse) {
    if (c % (r * r) != 0)
      in.fail("CUVIL-E-IMPORT-RAISE", "pixel_shuffle expects its input's 'channel' dimension to be divisible by "
                                      "the square of upscale_factor");
    int64_t oc = c / (r * r);
    Value y = reshape(in, x, with({oc, r, r, h, w}));
    for (int64_t d : {0, 3, 1, 4, 2})
      order.push_back(L + d);
    return reshape(in, permute(in, y, order), with({oc, h * r, w * r}));
  }
  if (h % r != 0 || w % r != 0)
    in.fail("CUVIL-E-IMPORT-RAISE", "pixel_unshuffle expects height and width to be divisible by downscale_factor");
  Value y = reshape(in, x, with({c, h / r, r, w / r, r}));
  for (int64_t d : {0, 2, 4, 1, 3})
    order.push_back(L + d);
  return reshape(in, permute(in, y, order), with({c * r * r, h / r, w / r}));
}

Value channelShuffle(Interpreter &in, Value x, int64_t groups) {
  std::vector<int64_t> s = staticOrFail(in, x, "channel_shuffle");
  if (s.size() < 2 || groups <= 0 || s[1] % groups != 0)
    in.fail("CUVIL-E-IMPORT-RAISE", "Number of channels must be divisible by groups");
  std::vector<int64_t> split = {s[0], groups, s[1] / groups};
  split.insert(split.end(), s.begin() + 2, s.end());
  std::vector<int64_t> order = iota(static_cast<int64_t>(split.size()));
  std::swap(order[1], order[2]);
  return reshape(in, permute(in, reshape(in, x, split), order), s);
}

//===----------------------------------------------------------------------===//
// Products
//===----------------------------------------------------------------------===//

Value matmul(Interpreter &in, Value a, Value b) { return in.build<cir::MatmulOp>(a, b); }

Value scaled(Interpreter &in, Value x, const IValue &k) {
  if ((k.is(K::Int) && k.i == 1) || (k.is(K::Float) && k.f == 1.0) || k.isNone())
    return x;
  return in.build<cir::MulOp>(x, in.scalarConstant(k, dtypeOf(x)));
}

Value outer(Interpreter &in, Value a, Value b) {
  int64_t n = typeOf(a).getNumElements(), m = typeOf(b).getNumElements();
  return in.build<cir::MulOp>(reshape(in, a, {n, 1}), reshape(in, b, {1, m}));
}

/// tensordot over the dims pairs (da[k], db[k]).
Value tensordot(Interpreter &in, Value a, Value b, std::vector<int64_t> da, std::vector<int64_t> db) {
  std::vector<int64_t> sa = staticOrFail(in, a, "tensordot"), sb = staticOrFail(in, b, "tensordot");
  if (da.size() != db.size())
    in.fail("CUVIL-E-IMPORT-RAISE", "both dimension lists should have same length");
  for (int64_t &d : da)
    d = wrapDim(in, d, rankOf(a));
  for (int64_t &d : db)
    d = wrapDim(in, d, rankOf(b));
  std::vector<int64_t> freeA, freeB, shape;
  for (int64_t d = 0; d < rankOf(a); ++d)
    if (std::find(da.begin(), da.end(), d) == da.end()) {
      freeA.push_back(d);
      shape.push_back(sa[d]);
    }
  for (int64_t d = 0; d < rankOf(b); ++d)
    if (std::find(db.begin(), db.end(), d) == db.end()) {
      freeB.push_back(d);
      shape.push_back(sb[d]);
    }
  int64_t k = 1;
  for (size_t i = 0; i < da.size(); ++i) {
    if (sa[da[i]] != sb[db[i]])
      in.fail("CUVIL-E-IMPORT-RAISE", "contracted dimensions need to match, but first has size " +
                                          std::to_string(sa[da[i]]) + " in dim " + std::to_string(da[i]) +
                                          " and second has size " + std::to_string(sb[db[i]]));
    k *= sa[da[i]];
  }
  int64_t m = 1, n = 1;
  for (int64_t d : freeA)
    m *= sa[d];
  for (int64_t d : freeB)
    n *= sb[d];
  std::vector<int64_t> oa = freeA, ob = db;
  oa.insert(oa.end(), da.begin(), da.end());
  ob.insert(ob.end(), freeB.begin(), freeB.end());
  Value am = reshape(in, permute(in, a, oa), {m, k});
  Value bm = reshape(in, permute(in, b, ob), {k, n});
  auto [pa, pb] = std::pair(promoted(in, {am, bm})[0], promoted(in, {am, bm})[1]);
  return reshape(in, matmul(in, pa, pb), shape);
}

/// einsum by pairwise contraction: each operand is brought to the letters
/// of the output plus the ones still to be summed, multiplied with the
/// running product by broadcasting (or a matmul when two operands share
/// summed letters), and summed letters no later operand uses are reduced.
Value einsum(Interpreter &in, std::string eq, std::vector<Value> ops) {
  eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
  size_t arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow), out;
  std::vector<std::string> terms;
  for (size_t start = 0;;) {
    size_t comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  if (terms.size() != ops.size())
    in.fail("CUVIL-E-IMPORT-RAISE", "einsum(): more operands were provided than specified in the equation");
  // Ellipses: the broadcast dims, as letters of their own (upper case A..).
  int64_t ellipsisDims = 0;
  for (size_t i = 0; i < terms.size(); ++i)
    if (size_t e = terms[i].find("..."); e != std::string::npos)
      ellipsisDims = std::max<int64_t>(ellipsisDims, rankOf(ops[i]) - (static_cast<int64_t>(terms[i].size()) - 3));
  std::string ellipsis;
  for (int64_t k = 0; k < ellipsisDims; ++k)
    ellipsis += static_cast<char>('A' + k);
  for (size_t i = 0; i < terms.size(); ++i)
    if (size_t e = terms[i].find("..."); e != std::string::npos) {
      int64_t mine = rankOf(ops[i]) - (static_cast<int64_t>(terms[i].size()) - 3);
      terms[i].replace(e, 3, ellipsis.substr(ellipsisDims - mine));
    }
  if (arrow != std::string::npos) {
    out = eq.substr(arrow + 2);
    if (size_t e = out.find("..."); e != std::string::npos)
      out.replace(e, 3, ellipsis);
  } else { // implicit: ellipsis, then the letters used once, sorted
    std::string once;
    for (char c = 'a'; c <= 'z'; ++c) {
      int count = 0;
      for (auto &t : terms)
        count += static_cast<int>(std::count(t.begin(), t.end(), c));
      if (count == 1)
        once += c;
    }
    for (char c = 'A'; c <= 'Z'; ++c) {
      int count = 0;
      for (auto &t : terms)
        count += static_cast<int>(std::count(t.begin(), t.end(), c));
      if (count == 1 && ellipsis.find(c) == std::string::npos)
        once += c;
    }
    out = ellipsis + once;
  }
  std::map<char, int64_t> sizes;
  // Repeated letters within one term (a diagonal) become one letter.
  for (size_t i = 0; i < terms.size(); ++i) {
    std::vector<int64_t> s = staticOrFail(in, ops[i], "einsum");
    if (s.size() != terms[i].size())
      in.fail("CUVIL-E-IMPORT-RAISE", "einsum(): the number of subscripts in the equation (" +
                                          std::to_string(terms[i].size()) + ") does not match the number of "
                                          "dimensions (" + std::to_string(s.size()) + ") for operand " +
                                          std::to_string(i));
    for (size_t p = 0; p < terms[i].size(); ++p) {
      char c = terms[i][p];
      size_t first = terms[i].find(c);
      if (first < p) {
        ops[i] = diagonal(in, ops[i], 0, static_cast<int64_t>(first), static_cast<int64_t>(p));
        std::string t = terms[i];
        t.erase(p, 1);
        t.erase(first, 1);
        t += c;
        terms[i] = t;
        s = shapeOf(ops[i]);
        p = 0;
        continue;
      }
    }
    for (size_t p = 0; p < terms[i].size(); ++p) {
      int64_t n = s[p];
      auto [it, inserted] = sizes.emplace(terms[i][p], n);
      if (!inserted && it->second != n) {
        if (it->second == 1)
          it->second = n;
        else if (n != 1)
          in.fail("CUVIL-E-IMPORT-RAISE", std::string("einsum(): operands do not broadcast with remapped shapes "
                                                      "for subscript '") + terms[i][p] + "'");
      }
    }
  }
  ops = promoted(in, ops);
  // Brings operand i to the letter order `target` (missing letters as 1s).
  auto align = [&](Value v, const std::string &term, const std::string &target) {
    std::vector<int64_t> order;
    std::string present;
    for (char c : target)
      if (size_t p = term.find(c); p != std::string::npos) {
        order.push_back(static_cast<int64_t>(p));
        present += c;
      }
    v = permute(in, v, order);
    std::vector<int64_t> shape;
    std::vector<int64_t> cur = shapeOf(v);
    size_t k = 0;
    for (char c : target)
      shape.push_back(present.find(c) != std::string::npos ? cur[k++] : 1);
    return reshape(in, v, shape);
  };
  std::string accTerm = terms[0];
  Value acc = ops[0];
  auto usedLater = [&](char c, size_t from) {
    if (out.find(c) != std::string::npos)
      return true;
    for (size_t j = from; j < terms.size(); ++j)
      if (terms[j].find(c) != std::string::npos)
        return true;
    return false;
  };
  auto reduceUnused = [&](size_t from) {
    std::vector<int64_t> dims;
    std::string kept;
    for (size_t p = 0; p < accTerm.size(); ++p)
      if (usedLater(accTerm[p], from))
        kept += accTerm[p];
      else
        dims.push_back(static_cast<int64_t>(p));
    if (!dims.empty()) {
      acc = sumOver(in, acc, dims);
      accTerm = kept;
    }
  };
  reduceUnused(1);
  for (size_t i = 1; i < ops.size(); ++i) {
    std::string t = terms[i];
    Value v = ops[i];
    std::string union_ = accTerm;
    for (char c : t)
      if (union_.find(c) == std::string::npos)
        union_ += c;
    // Letters summed right after this product: contract them with a
    // batched matmul instead of materialising the broadcast product.
    std::string summed, batch, left, right;
    for (char c : union_) {
      bool inA = accTerm.find(c) != std::string::npos, inB = t.find(c) != std::string::npos;
      bool keep = usedLater(c, i + 1);
      if (inA && inB && !keep)
        summed += c;
      else if (inA && inB)
        batch += c;
      else if (inA)
        left += c;
      else
        right += c;
    }
    if (!summed.empty()) {
      auto dimsOf = [&](const std::string &cs) {
        int64_t n = 1;
        for (char c : cs)
          n *= sizes[c];
        return n;
      };
      std::vector<int64_t> bshape;
      for (char c : batch)
        bshape.push_back(sizes[c]);
      Value am = align(acc, accTerm, batch + left + summed);
      Value bm = align(v, t, batch + summed + right);
      std::vector<int64_t> as = bshape, bs = bshape;
      as.insert(as.end(), {dimsOf(left), dimsOf(summed)});
      bs.insert(bs.end(), {dimsOf(summed), dimsOf(right)});
      std::vector<int64_t> fullA = bshape, fullB = bshape;
      for (char c : left + summed)
        fullA.push_back(sizes[c]);
      for (char c : summed + right)
        fullB.push_back(sizes[c]);
      am = reshape(in, expandTo(in, am, fullA), as);
      bm = reshape(in, expandTo(in, bm, fullB), bs);
      Value p = matmul(in, am, bm);
      std::vector<int64_t> ps = bshape;
      for (char c : left + right)
        ps.push_back(sizes[c]);
      acc = reshape(in, p, ps);
      accTerm = batch + left + right;
    } else {
      acc = in.build<cir::MulOp>(align(acc, accTerm, union_), align(v, t, union_));
      accTerm = union_;
    }
    reduceUnused(i + 1);
  }
  // The output order, broadcast dims expanded to their sizes.
  for (char c : out)
    if (accTerm.find(c) == std::string::npos)
      in.fail("CUVIL-E-IMPORT-RAISE", std::string("einsum(): output subscript ") + c +
                                          " does not appear in the equation for any input operand");
  acc = align(acc, accTerm, out);
  std::vector<int64_t> full;
  for (char c : out)
    full.push_back(sizes[c]);
  return expandTo(in, acc, full);
}

Value cross(Interpreter &in, Value a, Value b, std::optional<int64_t> dimArg) {
  auto ab = promoted(in, {a, b});
  std::vector<int64_t> sa = shapeOf(ab[0]), sb = shapeOf(ab[1]);
  llvm::SmallVector<int64_t> bs;
  if (mlir::failed(mlir::cuvil::broadcastShapes(sa, sb, bs)))
    in.fail("CUVIL-E-IMPORT-RAISE", "linalg.cross: inputs cannot be broadcast");
  std::vector<int64_t> shape(bs.begin(), bs.end());
  a = expandTo(in, ab[0], shape);
  b = expandTo(in, ab[1], shape);
  int64_t dim = -1;
  if (dimArg)
    dim = wrapDim(in, *dimArg, static_cast<int64_t>(shape.size()));
  else
    for (size_t d = 0; d < shape.size(); ++d)
      if (shape[d] == 3) {
        dim = static_cast<int64_t>(d);
        break;
      }
  if (dim < 0 || shape[dim] != 3)
    in.fail("CUVIL-E-IMPORT-RAISE", "linalg.cross: inputs dimension " + std::to_string(dim) + " must have length 3");
  auto c = [&](Value v, int64_t i) { return slice(in, v, dim, i, i + 1); };
  auto term = [&](int64_t i, int64_t j) {
    return in.build<cir::SubOp>(in.build<cir::MulOp>(c(a, i), c(b, j)), in.build<cir::MulOp>(c(a, j), c(b, i)));
  };
  return concat(in, {term(1, 2), term(2, 0), term(0, 1)}, dim);
}

//===----------------------------------------------------------------------===//
// Reductions defined as formulas
//===----------------------------------------------------------------------===//

mlir::UnitAttr keepAttr(Interpreter &in, bool keep) { return keep ? in.builder().getUnitAttr() : mlir::UnitAttr(); }

/// logsumexp: max + log(sum(exp(x - max))), an infinite max taken as 0.
Value logsumexp(Interpreter &in, Value x, std::vector<int64_t> dims, bool keep) {
  x = floatOperand(in, x);
  if (rankOf(x) == 0)
    return x;
  Value m = in.build<cir::MaxOp>(x, i64s(in, dims), in.builder().getUnitAttr());
  Value inf = in.scalarConstant(IValue::floating(INFINITY), dtypeOf(x));
  Value zero = in.scalarConstant(IValue::floating(0.0), dtypeOf(x));
  m = in.build<cir::WhereOp>(in.build<cir::EqOp>(in.build<cir::AbsOp>(m), inf), zero, m);
  Value s = in.build<cir::SumOp>(in.build<cir::ExpOp>(in.build<cir::SubOp>(x, m)), i64s(in, dims),
                                 in.builder().getUnitAttr());
  Value r = in.build<cir::AddOp>(in.build<cir::LogOp>(s), m);
  if (!keep)
    r = in.build<cir::SqueezeOp>(r, i64s(in, dims));
  return r;
}

/// The p-norm over dims: max |x| for inf, min |x| for -inf, the count of
/// non-zeros for 0, sum(|x|^p)^(1/p) otherwise.
Value vectorNorm(Interpreter &in, Value x, double p, std::vector<int64_t> dims, bool keep,
                 std::optional<DType> dtype) {
  if (dtype)
    x = cast(in, x, *dtype);
  x = floatOperand(in, x);
  if (rankOf(x) == 0)
    dims.clear();
  Value ax = in.build<cir::AbsOp>(x);
  auto k = keepAttr(in, keep);
  if (std::isinf(p)) {
    if (typeOf(x).getNumElements() == 0)
      in.fail("CUVIL-E-IMPORT-RAISE", "linalg.vector_norm cannot compute the inf norm on an empty tensor");
    return p > 0 ? in.build<cir::MaxOp>(ax, i64s(in, dims), k) : in.build<cir::MinOp>(ax, i64s(in, dims), k);
  }
  if (p == 0)
    return in.build<cir::SumOp>(
        cast(in, in.build<cir::NeOp>(x, in.scalarConstant(IValue::floating(0.0), dtypeOf(x))), dtypeOf(x)),
        i64s(in, dims), k);
  if (p == 1)
    return in.build<cir::SumOp>(ax, i64s(in, dims), k);
  if (p == 2)
    return in.build<cir::SqrtOp>(in.build<cir::SumOp>(in.build<cir::MulOp>(ax, ax), i64s(in, dims), k));
  Value pv = in.scalarConstant(IValue::floating(p), dtypeOf(x));
  Value s = in.build<cir::SumOp>(in.build<cir::PowOp>(ax, pv), i64s(in, dims), k);
  return in.build<cir::PowOp>(s, in.scalarConstant(IValue::floating(1.0 / p), dtypeOf(x)));
}

double ordValue(Interpreter &in, const IValue &v, double fallback) {
  if (v.isNone())
    return fallback;
  if (v.is(K::Int))
    return double(v.i);
  if (v.is(K::Float))
    return v.f;
  in.fail("CUVIL-E-IMPORT-TYPE", "a norm order must be a number");
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

void registerRearrangements(Table &t) {
  t["aten::broadcast_to"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = a.t("self");
    std::vector<int64_t> size = a.ints("size"), s = shapeOf(x);
    // -1 keeps the size; new leading dims are prepended.
    for (size_t i = 0; i < size.size(); ++i) {
      int64_t j = static_cast<int64_t>(i) - static_cast<int64_t>(size.size() - s.size());
      if (size[i] == -1 && j >= 0)
        size[i] = s[j];
    }
    return view(a["self"], expandTo(in, x, size));
  };
  t["aten::ravel"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    return view(a["self"], reshape(in, a.t("self"), {typeOf(a.t("self")).getNumElements()}));
  };
  for (const char *name : {"aten::reshape_as", "aten::view_as"})
    t[name] = [](Interpreter &in, const BoundArgs &b) {
      Args a{in, b};
      return view(a["self"], reshape(in, a.t("self"), shapeOf(a.t("other"))));
    };
  for (int64_t r : {1, 2, 3}) {
    std::string name = "aten::atleast_" + std::to_string(r) + "d";
    t[name] = [r](Interpreter &in, const BoundArgs &b) {
      Args a{in, b};
      if (b.has("tensors")) {
        std::vector<Value> out;
        for (Value v : a.tensors("tensors"))
          out.push_back(atLeast(in, v, r));
        return tensors(out);
      }
      return ret(atLeast(in, a.t("self"), r));
    };
  }
  t["aten::flip"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    return ret(flip(in, a.t("self"), a.ints("dims")));
  };
  t["aten::fliplr"] = [](Interpreter &in, const BoundArgs &b) {
    Value x = Args{in, b}.t("self");
    if (rankOf(x) < 2)
      in.fail("CUVIL-E-IMPORT-RAISE", "Input must be >= 2-d.");
    return ret(flip(in, x, {1}));
  };
  t["aten::flipud"] = [](Interpreter &in, const BoundArgs &b) {
    Value x = Args{in, b}.t("self");
    if (rankOf(x) < 1)
      in.fail("CUVIL-E-IMPORT-RAISE", "Input must be >= 1-d.");
    return ret(flip(in, x, {0}));
  };
  t["aten::roll"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    return ret(roll(in, a.t("self"), a.ints("shifts"), a.ints("dims")));
  };
  t["aten::rot90"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    return ret(rot90(in, a.t("self"), a.i("k"), a.ints("dims")));
  };
  auto movedim = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = a.t("self");
    int64_t r = rankOf(x);
    std::vector<int64_t> src = a.ints("source"), dst = a.ints("destination");
    if (src.size() != dst.size())
      in.fail("CUVIL-E-IMPORT-RAISE", "movedim: Invalid source or destination dims");
    std::vector<int64_t> order(r, -1);
    std::vector<bool> used(r, false);
    for (size_t k = 0; k < src.size(); ++k) {
      int64_t s = wrapDim(in, src[k], r), d = wrapDim(in, dst[k], r);
      order[d] = s;
      used[s] = true;
    }
    int64_t next = 0;
    for (int64_t d = 0; d < r; ++d)
      if (order[d] < 0) {
        while (used[next])
          ++next;
        order[d] = next++;
      }
    return view(a["self"], permute(in, x, order));
  };
  t["aten::movedim"] = movedim;
  t["aten::moveaxis"] = movedim;
  for (const char *name : {"aten::swapaxes", "aten::swapdims"})
    t[name] = [](Interpreter &in, const BoundArgs &b) {
      Args a{in, b};
      Value x = a.t("self");
      const char *n0 = b.has("axis0") ? "axis0" : "dim0";
      const char *n1 = b.has("axis1") ? "axis1" : "dim1";
      return view(a["self"], transpose(in, x, wrapDim(in, a.i(n0), rankOf(x)), wrapDim(in, a.i(n1), rankOf(x))));
    };
  for (const char *name : {"aten::mT", "aten::mH", "aten::adjoint", "aten::matrix_H"})
    t[name] = [](Interpreter &in, const BoundArgs &b) {
      Args a{in, b};
      Value x = a.t("self");
      if (rankOf(x) < 2) // PyTorch 1.13 still returns a vector as it is
        return a["self"];
      return view(a["self"], transpose(in, x, rankOf(x) - 2, rankOf(x) - 1));
    };
  t["aten::repeat"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    return ret(repeat(in, a.t("self"), a.ints("repeats")));
  };
  t["aten::tile"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = a.t("self");
    std::vector<int64_t> reps = a.ints("dims");
    if (static_cast<int64_t>(reps.size()) < rankOf(x))
      reps.insert(reps.begin(), rankOf(x) - reps.size(), 1);
    return ret(repeat(in, x, reps));
  };
  auto stackLike = [](int64_t rank, int64_t dim) {
    return [rank, dim](Interpreter &in, const BoundArgs &b) {
      Args a{in, b};
      std::vector<Value> parts;
      for (Value v : a.tensors("tensors"))
        parts.push_back(atLeast(in, v, rank));
      if (parts.empty())
        in.fail("CUVIL-E-IMPORT-RAISE", "expected a non-empty list of Tensors");
      parts = promoted(in, parts);
      int64_t d = dim;
      if (rank == 1 && dim == 1 && rankOf(parts[0]) == 1) // hstack of 1-D tensors
        d = 0;
      return ret(concat(in, parts, d));
    };
  };
  t["aten::hstack"] = stackLike(1, 1);
  t["aten::vstack"] = stackLike(2, 0);
  t["aten::row_stack"] = stackLike(2, 0);
  t["aten::dstack"] = stackLike(3, 2);
  t["aten::column_stack"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    std::vector<Value> parts;
    for (Value v : a.tensors("tensors")) {
      std::vector<int64_t> s = shapeOf(v);
      parts.push_back(s.size() <= 1 ? reshape(in, v, {typeOf(v).getNumElements(), 1}) : v);
    }
    return ret(concat(in, promoted(in, parts), 1));
  };
  t["aten::tensor_split"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = a.t("self");
    if (rankOf(x) == 0)
      in.fail("CUVIL-E-IMPORT-RAISE", "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims");
    int64_t dim = wrapDim(in, a.i("dim"), rankOf(x));
    std::vector<int64_t> bounds;
    if (b.has("sections")) {
      int64_t n = a.i("sections");
      if (n <= 0)
        in.fail("CUVIL-E-IMPORT-RAISE", "number of sections must be larger than 0, got " + std::to_string(n));
      bounds = sectionBounds(shapeOf(x)[dim], n);
    } else if (b.has("indices")) {
      bounds = a.ints("indices");
    } else {
      std::optional<Tensor> c = in.foldToConstant(a.t("tensor_indices_or_sections"));
      if (!c)
        return in.unsupported("tensor_split with indices computed at run time");
      if (c->rank() == 0)
        bounds = sectionBounds(shapeOf(x)[dim], c->getInt(0));
      else
        bounds = c->toInts();
    }
    return tensors(tensorSplit(in, x, dim, bounds));
  };
  auto directional = [](int64_t dimFor1d, int64_t dimOtherwise, int64_t minRank, const char *name) {
    std::string n = name;
    return [dimFor1d, dimOtherwise, minRank, n](Interpreter &in, const BoundArgs &b) {
      Args a{in, b};
      Value x = a.t("self");
      if (rankOf(x) < minRank)
        in.fail("CUVIL-E-IMPORT-RAISE", "torch." + n + " requires a tensor with at least " +
                                            std::to_string(minRank) + " dimension");
      int64_t dim = rankOf(x) == 1 ? dimFor1d : dimOtherwise;
      int64_t size = shapeOf(x)[dim];
      std::vector<int64_t> bounds;
      if (b.has("sections")) {
        int64_t s = a.i("sections");
        if (s <= 0 || size % s != 0)
          in.fail("CUVIL-E-IMPORT-RAISE", "torch." + n + " attempted to split along dimension " + std::to_string(dim) +
                                              ", but the size of the dimension " + std::to_string(size) +
                                              " is not divisible by the split_size " + std::to_string(s) + "!");
        bounds = sectionBounds(size, s);
      } else {
        bounds = a.ints("indices");
      }
      return tensors(tensorSplit(in, x, dim, bounds));
    };
  };
  t["aten::hsplit"] = directional(0, 1, 1, "hsplit");
  t["aten::vsplit"] = directional(0, 0, 2, "vsplit");
  t["aten::dsplit"] = directional(2, 2, 3, "dsplit");
  t["aten::diagonal"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    return ret(diagonal(in, a.t("self"), a.i("offset"), a.i("dim1"), a.i("dim2")));
  };
  t["aten::diag"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = a.t("self");
    int64_t k = a.i("diagonal");
    if (rankOf(x) == 1)
      return ret(diagEmbed(in, x, k, 0, 1));
    if (rankOf(x) == 2)
      return ret(diagonal(in, x, k, 0, 1));
    in.fail("CUVIL-E-IMPORT-RAISE", "diag(): Supports 1D or 2D tensors. Got " + std::to_string(rankOf(x)) + "D");
  };
  t["aten::diag_embed"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    return ret(diagEmbed(in, a.t("self"), a.i("offset"), a.i("dim1"), a.i("dim2")));
  };
  t["aten::diagflat"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = a.t("self");
    return ret(diagEmbed(in, reshape(in, x, {typeOf(x).getNumElements()}), a.i("offset"), 0, 1));
  };
  t["aten::trace"] = [](Interpreter &in, const BoundArgs &b) {
    Value x = Args{in, b}.t("self");
    if (rankOf(x) != 2)
      in.fail("CUVIL-E-IMPORT-RAISE", "trace: expected a matrix");
    Value d = diagonal(in, x, 0, 0, 1);
    DType dt = dtypeOf(x);
    if (!isFloat(dt))
      d = cast(in, d, DType::Int64); // integer traces are int64
    return ret(sumOver(in, d, {0}));
  };
  t["aten::unfold"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    return ret(unfold(in, a.t("self"), a.i("dimension"), a.i("size"), a.i("step")));
  };
  t["aten::pixel_shuffle"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    return ret(pixelShuffle(in, a.t("self"), a.i("upscale_factor"), false));
  };
  t["aten::pixel_unshuffle"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    return ret(pixelShuffle(in, a.t("self"), a.i("downscale_factor"), true));
  };
  for (const char *name : {"aten::channel_shuffle", "aten::native_channel_shuffle"})
    t[name] = [](Interpreter &in, const BoundArgs &b) {
      Args a{in, b};
      return ret(channelShuffle(in, a.t("self"), a.i("groups")));
    };
  t["aten::narrow_copy"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = a.t("self");
    int64_t dim = wrapDim(in, a.i("dim"), rankOf(x)), size = shapeOf(x)[dim], start = a.i("start");
    if (start < 0)
      start += size;
    return ret(slice(in, x, dim, start, start + a.i("length")));
  };
  t["aten::broadcast_tensors"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    std::vector<Value> ts = a.tensors("tensors");
    llvm::SmallVector<int64_t> shape;
    for (Value v : ts) {
      llvm::SmallVector<int64_t> next;
      if (mlir::failed(mlir::cuvil::broadcastShapes(shape, shapeOf(v), next)))
        in.fail("CUVIL-E-IMPORT-RAISE", "shape mismatch: objects cannot be broadcast to a single shape");
      shape = next;
    }
    std::vector<Value> out;
    for (Value v : ts)
      out.push_back(expandTo(in, v, std::vector<int64_t>(shape.begin(), shape.end())));
    return tensors(out);
  };
  t["aten::meshgrid"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    std::vector<Value> ts = a.tensors("tensors");
    bool xy = b.has("indexing") && a.s("indexing") == "xy";
    std::vector<int64_t> shape;
    for (Value v : ts) {
      if (rankOf(v) > 1)
        in.fail("CUVIL-E-IMPORT-RAISE", "torch.meshgrid: Expected 0D or 1D tensor in the tensor list");
      shape.push_back(typeOf(v).getNumElements());
    }
    if (xy && shape.size() >= 2)
      std::swap(shape[0], shape[1]);
    std::vector<Value> out;
    for (size_t i = 0; i < ts.size(); ++i) {
      size_t at = i;
      if (xy && ts.size() >= 2 && i < 2)
        at = 1 - i;
      std::vector<int64_t> s(shape.size(), 1);
      s[at] = shape[at];
      out.push_back(expandTo(in, reshape(in, ts[i], s), shape));
    }
    return tensors(out);
  };
  auto pad = [](cir::PadMode mode, int64_t spatial) {
    return [mode, spatial](Interpreter &in, const BoundArgs &b) {
      Args a{in, b};
      Value x = a.t("self");
      std::vector<int64_t> p = a.ints("padding");
      if (static_cast<int64_t>(p.size()) != 2 * spatial)
        in.fail("CUVIL-E-IMPORT-RAISE", "padding size is expected to be " + std::to_string(2 * spatial));
      return ret(in.build<cir::PadOp>(x, i64s(in, p), cir::PadModeAttr::get(in.context(), mode), f64(in, 0.0)));
    };
  };
  for (int64_t s : {1, 2, 3}) {
    t["aten::reflection_pad" + std::to_string(s) + "d"] = pad(cir::PadMode::Reflect, s);
    t["aten::replication_pad" + std::to_string(s) + "d"] = pad(cir::PadMode::Replicate, s);
  }
}

/// The dtype a factory makes: `dtype=` when given, else `like`'s.
DType factoryDType(const Args &a, DType like) { return a.dtype("dtype").value_or(like); }

void registerFactories(Table &t) {
  auto newFilled = [](int kind) { // 0 zeros, 1 ones, 2 full, 3 empty (zeros)
    return [kind](Interpreter &in, const BoundArgs &b) {
      Args a{in, b};
      Value self = a.t("self");
      std::vector<int64_t> size = a.ints("size");
      DType d = factoryDType(a, dtypeOf(self));
      IValue v = kind == 1 ? IValue::integer(1) : kind == 2 ? a["fill_value"] : IValue::integer(0);
      return ret(splat(in, size, d, v));
    };
  };
  t["aten::new_zeros"] = newFilled(0);
  t["aten::new_ones"] = newFilled(1);
  t["aten::new_full"] = newFilled(2);
  t["aten::new_empty"] = newFilled(3);
  t["aten::new_empty_strided"] = newFilled(3);
  // Uninitialised memory in PyTorch; zeros here (deterministic).
  t["aten::empty"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    return ret(splat(in, a.ints("size"), a.dtype("dtype").value_or(DType::Float32), IValue::integer(0)));
  };
  t["aten::empty_like"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value self = a.t("self");
    if (!typeOf(self).hasStaticShape())
      return ret(filledLike(in, self, factoryDType(a, dtypeOf(self)), IValue::integer(0)));
    return ret(splat(in, staticOrFail(in, self, "empty_like"), factoryDType(a, dtypeOf(self)), IValue::integer(0)));
  };
  t["aten::zero_"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value self = a.t("self");
    return inplace(in, a["self"], splat(in, staticOrFail(in, self, "zero_"), dtypeOf(self), IValue::integer(0)));
  };
  t["aten::fill_"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value self = a.t("self");
    std::vector<int64_t> shape = staticOrFail(in, self, "fill_");
    if (a["value"].isTensor()) {
      Value v = a.t("value");
      if (rankOf(v) != 0)
        in.fail("CUVIL-E-IMPORT-RAISE", "fill_ only supports 0-dimension value tensor but got tensor with " +
                                            std::to_string(rankOf(v)) + " dimensions.");
      return inplace(in, a["self"], expandTo(in, cast(in, v, dtypeOf(self)), shape));
    }
    return inplace(in, a["self"], splat(in, shape, dtypeOf(self), a["value"]));
  };
  // torch.tensor(nested lists of numbers): a constant, or the numbers
  // stacked when some are known only at run time.
  auto fromData = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    const IValue &data = b.has("t") ? a["t"] : a["data"];
    std::vector<int64_t> shape;
    std::vector<const IValue *> leaves;
    bool anyFloat = false, allBool = true, symbolic = false;
    std::function<void(const IValue &, size_t)> walk = [&](const IValue &v, size_t depth) {
      if (v.isSequence()) {
        int64_t n = static_cast<int64_t>(v.list->size());
        if (depth == shape.size())
          shape.push_back(n);
        else if (shape[depth] != n)
          in.fail("CUVIL-E-IMPORT-RAISE", "expected sequence of length " + std::to_string(shape[depth]) +
                                              " at dim " + std::to_string(depth) + " (got " + std::to_string(n) + ")");
        for (const IValue &x : *v.list)
          walk(x, depth + 1);
        return;
      }
      if (v.isTensor() && v.tensor->symbolicInt) {
        symbolic = true;
        allBool = false;
      } else if (!v.isScalar()) {
        in.fail("CUVIL-E-IMPORT-TYPE", "torch.tensor() takes numbers (or nested lists of them), got " + v.typeName());
      } else {
        anyFloat |= v.is(K::Float);
        allBool &= v.is(K::Bool);
      }
      leaves.push_back(&v);
    };
    walk(data, 0);
    DType d = a.dtype("dtype").value_or(allBool && !leaves.empty() ? DType::Bool
                                        : anyFloat                 ? DType::Float32
                                                                   : DType::Int64);
    if (symbolic) {
      std::vector<Value> parts;
      for (const IValue *v : leaves)
        parts.push_back(v->isTensor() ? cast(in, v->tensor->value, d) : in.scalarConstant(*v, d));
      std::vector<Value> flat;
      for (Value p : parts)
        flat.push_back(reshape(in, p, {1}));
      return ret(reshape(in, concat(in, flat, 0), shape));
    }
    Tensor host(d, shape);
    for (size_t k = 0; k < leaves.size(); ++k) {
      const IValue &v = *leaves[k];
      if (v.is(K::Float))
        host.setDouble(static_cast<int64_t>(k), v.f);
      else
        host.setInt(static_cast<int64_t>(k), v.is(K::Bool) ? int64_t(v.b) : v.i);
    }
    return ret(constantFrom(in, host));
  };
  t["aten::tensor"] = fromData;
  t["aten::as_tensor"] = [fromData](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    if (a["data"].isTensor()) { // as_tensor(t, dtype): t itself, converted
      Value x = a.t("data");
      if (auto d = a.dtype("dtype"))
        x = cast(in, x, *d);
      return ret(x);
    }
    return fromData(in, b);
  };
  t["aten::eye"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    int64_t n = a.i("n"), m = b.has("m") ? a.i("m") : n;
    if (n < 0 || m < 0)
      in.fail("CUVIL-E-IMPORT-RAISE", "n and m must be non-negative");
    Tensor e(a.dtype("dtype").value_or(DType::Float32), {n, m});
    for (int64_t i = 0; i < std::min(n, m); ++i)
      e.setInt(i * m + i, 1);
    return ret(constantFrom(in, e));
  };
  // linspace/logspace as PyTorch's CPU kernel computes them: from the start
  // for the first half, from the end for the second; in float for float32,
  // in double (start and end first converted) for integer dtypes.
  auto spaced = [](bool log) {
    return [log](Interpreter &in, const BoundArgs &b) {
      Args a{in, b};
      int64_t steps = a.i("steps");
      if (steps < 0)
        in.fail("CUVIL-E-IMPORT-RAISE", "number of steps must be non-negative");
      double base = log ? a.f("base") : 0.0;
      DType d = a.dtype("dtype").value_or(DType::Float32);
      Tensor r(d, {steps});
      double start = a.f("start"), end = a.f("end");
      if (!isFloat(d)) {
        start = std::trunc(start);
        end = std::trunc(end);
      }
      bool single = d == DType::Float32 || d == DType::Float16 || d == DType::BFloat16;
      int64_t half = steps / 2;
      double step = steps > 1 ? (end - start) / double(steps - 1) : 0.0;
      float fstep = steps > 1 ? (float(end) - float(start)) / float(steps - 1) : 0.0f;
      for (int64_t k = 0; k < steps; ++k) {
        double v;
        if (steps == 1)
          v = start;
        else if (single)
          v = k < half ? double(float(start) + fstep * float(k)) : double(float(end) - fstep * float(steps - k - 1));
        else
          v = k < half ? start + step * double(k) : end - step * double(steps - k - 1);
        if (log)
          v = single ? double(std::pow(float(base), float(v))) : std::pow(base, v);
        if (isFloat(d))
          r.setDouble(k, v);
        else
          r.setInt(k, static_cast<int64_t>(v));
      }
      return ret(constantFrom(in, r));
    };
  };
  t["aten::linspace"] = spaced(false);
  t["aten::logspace"] = spaced(true);
  auto triIndices = [](bool upper) {
    return [upper](Interpreter &in, const BoundArgs &b) {
      Args a{in, b};
      int64_t rows = a.i("row"), cols = a.i("col"), off = a.i("offset");
      std::vector<int64_t> rs, cs;
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j)
          if (upper ? j - i >= off : j - i <= off) {
            rs.push_back(i);
            cs.push_back(j);
          }
      std::vector<int64_t> all = rs;
      all.insert(all.end(), cs.begin(), cs.end());
      Value v = constantI64(in, all, {2, static_cast<int64_t>(rs.size())});
      if (auto d = a.dtype("dtype"))
        v = cast(in, v, *d);
      return ret(v);
    };
  };
  t["aten::triu_indices"] = triIndices(true);
  t["aten::tril_indices"] = triIndices(false);
}

void registerProducts(Table &t) {
  for (const char *name : {"aten::outer", "aten::ger"})
    t[name] = [](Interpreter &in, const BoundArgs &b) {
      Args a{in, b};
      auto ab = promoted(in, {a.t("self"), a.t("vec2")});
      return ret(outer(in, ab[0], ab[1]));
    };
  for (const char *name : {"aten::dot", "aten::vdot", "aten::inner"})
    t[name] = [](Interpreter &in, const BoundArgs &b) {
      Args a{in, b};
      Value x = a.t("self"), y = a.t(b.has("tensor") ? "tensor" : "other");
      if (rankOf(x) == 0 || rankOf(y) == 0)
        return ret(in.build<cir::MulOp>(x, y));
      // inner: contract the last dims.
      return ret(tensordot(in, x, y, {-1}, {-1}));
    };
  t["aten::mv"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    auto ab = promoted(in, {a.t("self"), a.t("vec")});
    return ret(matmul(in, ab[0], ab[1]));
  };
  t["aten::addmv"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    auto ab = promoted(in, {a.t("mat"), a.t("vec")});
    Value p = matmul(in, ab[0], ab[1]);
    const IValue &beta = a["beta"];
    Value r = scaled(in, p, a["alpha"]);
    if ((beta.is(K::Int) && beta.i == 0) || (beta.is(K::Float) && beta.f == 0.0))
      return ret(r);
    return ret(in.build<cir::AddOp>(scaled(in, a.t("self"), beta), r));
  };
  t["aten::addr"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    auto ab = promoted(in, {a.t("vec1"), a.t("vec2")});
    Value p = outer(in, ab[0], ab[1]);
    if (dtypeOf(p) == DType::Bool) { // logical: beta and alpha as flags
      Value r = a.b("alpha") ? p : splat(in, shapeOf(p), DType::Bool, IValue::boolean(false));
      return ret(a.b("beta") ? in.build<cir::LogicalOrOp>(cast(in, a.t("self"), DType::Bool), r) : r);
    }
    Value r = scaled(in, p, a["alpha"]);
    const IValue &beta = a["beta"];
    if ((beta.is(K::Int) && beta.i == 0) || (beta.is(K::Float) && beta.f == 0.0)) // self ignored, NaN too
      return ret(r);
    return ret(in.build<cir::AddOp>(scaled(in, a.t("self"), beta), r));
  };
  t["aten::addbmm"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    auto ab = promoted(in, {a.t("batch1"), a.t("batch2")});
    Value bmm = in.build<cir::BatchMatmulOp>(ab[0], ab[1]);
    Value p = cast(in, sumOver(in, bmm, {0}), dtypeOf(bmm)); // integer sums stay in the type
    Value r = scaled(in, p, a["alpha"]);
    const IValue &beta = a["beta"];
    if ((beta.is(K::Int) && beta.i == 0) || (beta.is(K::Float) && beta.f == 0.0))
      return ret(r);
    return ret(in.build<cir::AddOp>(scaled(in, a.t("self"), beta), r));
  };
  t["aten::kron"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    auto ab = promoted(in, {a.t("self"), a.t("other")});
    std::vector<int64_t> sa = shapeOf(ab[0]), sb = shapeOf(ab[1]);
    size_t r = std::max(sa.size(), sb.size());
    sa.insert(sa.begin(), r - sa.size(), 1);
    sb.insert(sb.begin(), r - sb.size(), 1);
    std::vector<int64_t> ia, ib, out;
    for (size_t d = 0; d < r; ++d) {
      ia.insert(ia.end(), {sa[d], 1});
      ib.insert(ib.end(), {1, sb[d]});
      out.push_back(sa[d] * sb[d]);
    }
    Value p = in.build<cir::MulOp>(reshape(in, ab[0], ia), reshape(in, ab[1], ib));
    return ret(reshape(in, p, out));
  };
  t["aten::tensordot"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    return ret(tensordot(in, a.t("self"), a.t("other"), a.ints("dims_self"), a.ints("dims_other")));
  };
  t["aten::einsum"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    return ret(einsum(in, a.s("equation"), a.tensors("tensors")));
  };
  t["aten::linalg_vecdot"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    auto xy = promoted(in, {a.t("x"), a.t("y")});
    Value p = in.build<cir::MulOp>(xy[0], xy[1]);
    return ret(sumOver(in, p, {wrapDim(in, a.i("dim"), rankOf(p))}));
  };
  for (const char *name : {"aten::linalg_multi_dot", "aten::chain_matmul"})
    t[name] = [](Interpreter &in, const BoundArgs &b) {
      Args a{in, b};
      std::vector<Value> ms = promoted(in, a.tensors(b.has("tensors") ? "tensors" : "matrices"));
      if (ms.empty())
        in.fail("CUVIL-E-IMPORT-RAISE", "multi_dot(): expected at least 2 tensors but got 0");
      Value r = ms[0];
      for (size_t i = 1; i < ms.size(); ++i)
        r = matmul(in, r, ms[i]);
      return ret(r);
    };
  t["aten::cross"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    std::optional<int64_t> dim;
    if (!a.none("dim"))
      dim = a.i("dim");
    return ret(cross(in, a.t("self"), a.t("other"), dim));
  };
  t["aten::linalg_cross"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    return ret(cross(in, a.t("self"), a.t("other"), a.i("dim")));
  };
  // diff: n times x[1:] - x[:-1] along dim (xor for bools), with prepend and
  // append concatenated first.
  t["aten::diff"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = a.t("self");
    if (rankOf(x) == 0)
      in.fail("CUVIL-E-IMPORT-RAISE", "diff expects input to be at least one-dimensional");
    int64_t dim = wrapDim(in, a.i("dim"), rankOf(x)), n = a.i("n");
    std::vector<Value> parts;
    if (Value p = a.optT("prepend"))
      parts.push_back(p);
    parts.push_back(x);
    if (Value p = a.optT("append"))
      parts.push_back(p);
    x = concat(in, promoted(in, parts), dim);
    for (int64_t k = 0; k < n; ++k) {
      int64_t len = shapeOf(x)[dim];
      if (len == 0)
        break;
      Value hi = slice(in, x, dim, 1, len), lo = slice(in, x, dim, 0, len - 1);
      x = dtypeOf(x) == DType::Bool ? in.build<cir::LogicalXorOp>(hi, lo) : in.build<cir::SubOp>(hi, lo);
    }
    return ret(x);
  };
}

/// cumsum/cumprod: integers and bools accumulate in int64 unless `dtype=`.
Value cumulative(Interpreter &in, const Args &a, cir::ScanKind kind) {
  Value x = a.t("self");
  if (auto d = a.dtype("dtype"))
    x = cast(in, x, *d);
  else if (!isFloat(dtypeOf(x)))
    x = cast(in, x, DType::Int64);
  int64_t dim = wrapDim(in, a.i("dim"), rankOf(x));
  return in.build<cir::CumulativeOp>(x, i64(in, dim), cir::ScanKindAttr::get(in.context(), kind));
}

void registerScans(Table &t) {
  for (bool prod : {false, true}) {
    std::string name = prod ? "aten::cumprod" : "aten::cumsum";
    cir::ScanKind kind = prod ? cir::ScanKind::Prod : cir::ScanKind::Sum;
    t[name] = [kind](Interpreter &in, const BoundArgs &b) { return ret(cumulative(in, Args{in, b}, kind)); };
    t[name + "_"] = [kind](Interpreter &in, const BoundArgs &b) {
      Args a{in, b};
      return inplace(in, a["self"], cumulative(in, a, kind));
    };
  }
  for (bool isMax : {true, false})
    t[isMax ? "aten::cummax" : "aten::cummin"] = [isMax](Interpreter &in, const BoundArgs &b) {
      Args a{in, b};
      Value x = a.t("self");
      int64_t dim = wrapDim(in, a.i("dim"), rankOf(x));
      auto kind = cir::ScanKindAttr::get(in.context(), isMax ? cir::ScanKind::Max : cir::ScanKind::Min);
      return IValue::makeTuple({ret(in.build<cir::CumulativeOp>(x, i64(in, dim), kind)),
                                ret(in.build<cir::CumulativeIndexOp>(x, i64(in, dim), kind))});
    };
  t["aten::logcumsumexp"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = floatOperand(in, a.t("self"));
    int64_t dim = wrapDim(in, a.i("dim"), rankOf(x));
    return ret(in.build<cir::CumulativeOp>(x, i64(in, dim),
                                           cir::ScanKindAttr::get(in.context(), cir::ScanKind::LogSumExp)));
  };
  // masked_scatter: the k-th selected element takes source's k-th element
  // (k from a running count of the mask).
  t["aten::masked_scatter"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = a.t("self"), source = cast(in, a.t("source"), dtypeOf(a.t("self")));
    llvm::SmallVector<int64_t> bs;
    if (mlir::failed(mlir::cuvil::broadcastShapes(shapeOf(x), shapeOf(a.t("mask")), bs)))
      in.fail("CUVIL-E-IMPORT-RAISE", "masked_scatter: mask and self cannot be broadcast");
    std::vector<int64_t> xs(bs.begin(), bs.end());
    x = expandTo(in, x, xs);
    Value mask = expandTo(in, cast(in, a.t("mask"), DType::Bool), xs);
    int64_t n = typeOf(x).getNumElements(), m = typeOf(source).getNumElements();
    if (n == 0)
      return ret(x);
    Value flatMask = reshape(in, mask, {n});
    Value count = in.build<cir::CumulativeOp>(cast(in, flatMask, DType::Int64), i64(in, 0),
                                              cir::ScanKindAttr::get(in.context(), cir::ScanKind::Sum));
    Value k = in.build<cir::SubOp>(count, in.scalarConstant(IValue::integer(1), DType::Int64));
    // Unselected positions read element 0 (discarded by the where).
    k = in.build<cir::MaximumOp>(k, in.scalarConstant(IValue::integer(0), DType::Int64));
    if (m == 0)
      return ret(x);
    Value picked = in.build<cir::IndexSelectOp>(reshape(in, source, {m}), k, i64(in, 0));
    return ret(in.build<cir::WhereOp>(mask, reshape(in, picked, xs), x));
  };
}

void registerFormulaReductions(Table &t) {
  t["aten::logsumexp"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = a.t("self");
    return ret(logsumexp(in, x, dimsArg(in, a, "dim", rankOf(x)), a.b("keepdim")));
  };
  for (bool isStd : {false, true})
    t[isStd ? "aten::std_mean" : "aten::var_mean"] = [isStd](Interpreter &in, const BoundArgs &b) {
      Args a{in, b};
      Value x = floatOperand(in, a.t("self"));
      std::vector<int64_t> dims = dimsArg(in, a, "dim", rankOf(x));
      int64_t correction = 1;
      if (b.has("unbiased"))
        correction = a.b("unbiased") ? 1 : 0;
      if (b.has("correction") && !a.none("correction"))
        correction = a.i("correction");
      auto keep = keepAttr(in, b.has("keepdim") && a.b("keepdim"));
      Value v = isStd ? in.build<cir::StdOp>(x, i64s(in, dims), keep, i64(in, correction))
                      : in.build<cir::VarOp>(x, i64s(in, dims), keep, i64(in, correction));
      Value m = in.build<cir::MeanOp>(x, i64s(in, dims), keep);
      return IValue::makeTuple({ret(v), ret(m)});
    };
  t["aten::count_nonzero"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = a.t("self");
    std::vector<int64_t> dims;
    if (b.has("dim") && a["dim"].is(K::Int))
      dims = {wrapDim(in, a.i("dim"), rankOf(x))};
    else
      dims = dimsArg(in, a, "dim", rankOf(x));
    Value nz = cast(in, in.build<cir::NeOp>(x, in.scalarConstant(IValue::integer(0), dtypeOf(x))), DType::Int64);
    return ret(sumOver(in, nz, rankOf(x) ? dims : std::vector<int64_t>{}));
  };
  t["aten::nansum"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = a.t("self");
    if (auto d = a.dtype("dtype"))
      x = cast(in, x, *d);
    if (isFloat(dtypeOf(x)))
      x = in.build<cir::WhereOp>(in.build<cir::NeOp>(x, x), in.scalarConstant(IValue::integer(0), dtypeOf(x)), x);
    return ret(in.build<cir::SumOp>(x, i64s(in, dimsArg(in, a, "dim", rankOf(x))), keepAttr(in, a.b("keepdim"))));
  };
  t["aten::nanmean"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = a.t("self");
    if (auto d = a.dtype("dtype"))
      x = cast(in, x, *d);
    x = floatOperand(in, x);
    std::vector<int64_t> dims = dimsArg(in, a, "dim", rankOf(x));
    Value isNum = in.build<cir::EqOp>(x, x);
    Value zero = in.scalarConstant(IValue::integer(0), dtypeOf(x));
    auto keep = keepAttr(in, a.b("keepdim"));
    Value s = in.build<cir::SumOp>(in.build<cir::WhereOp>(isNum, x, zero), i64s(in, dims), keep);
    Value n = in.build<cir::SumOp>(cast(in, isNum, dtypeOf(x)), i64s(in, dims), keep);
    return ret(in.build<cir::DivOp>(s, n, cir::RoundingModeAttr::get(in.context(), cir::RoundingMode::None)));
  };
  t["aten::aminmax"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = a.t("self");
    std::vector<int64_t> dims = a.none("dim") ? iota(rankOf(x)) : std::vector<int64_t>{wrapDim(in, a.i("dim"), rankOf(x))};
    if (rankOf(x) == 0)
      dims.clear();
    auto keep = keepAttr(in, a.b("keepdim"));
    Value lo = in.build<cir::MinOp>(x, i64s(in, dims), keep), hi = in.build<cir::MaxOp>(x, i64s(in, dims), keep);
    if (rankOf(x) == 0 && !a.none("dim") && a.b("keepdim")) { // PyTorch resizes those to [1]
      lo = reshape(in, lo, {1});
      hi = reshape(in, hi, {1});
    }
    return IValue::makeTuple({ret(lo), ret(hi)});
  };
  t["aten::linalg_vector_norm"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = a.t("self");
    return ret(vectorNorm(in, x, ordValue(in, a["ord"], 2.0), dimsArg(in, a, "dim", rankOf(x)), a.b("keepdim"),
                          a.dtype("dtype")));
  };
  // torch.norm: p a number (or "fro": 2) over dims (all by default).
  t["aten::norm"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = a.t("self");
    double p = 2.0;
    if (b.has("p") && !a.none("p")) {
      if (a["p"].is(K::Str)) {
        if (a.s("p") != "fro")
          return in.unsupported("torch.norm with p='" + a.s("p") + "'");
      } else {
        p = ordValue(in, a["p"], 2.0);
      }
    }
    std::vector<int64_t> dims = dimsArg(in, a, "dim", rankOf(x));
    bool keep = b.has("keepdim") && a.b("keepdim");
    return ret(vectorNorm(in, x, p, dims, keep, b.has("dtype") ? a.dtype("dtype") : std::nullopt));
  };
  t["aten::frobenius_norm"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = a.t("self");
    return ret(vectorNorm(in, x, 2.0, dimsArg(in, a, "dim", rankOf(x)), b.has("keepdim") && a.b("keepdim"),
                          std::nullopt));
  };
  t["aten::dist"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    auto xy = promoted(in, {a.t("self"), a.t("other")});
    Value d = in.build<cir::SubOp>(xy[0], xy[1]);
    return ret(vectorNorm(in, d, ordValue(in, a["p"], 2.0), iota(rankOf(d)), false, std::nullopt));
  };
  // cosine_similarity as ATen 1.13 computes it: the product of the squared
  // norms clamped at eps^2 under a square root.
  t["aten::cosine_similarity"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    auto xy = promoted(in, {floatOperand(in, a.t("x1")), floatOperand(in, a.t("x2"))});
    llvm::SmallVector<int64_t> bs;
    if (mlir::failed(mlir::cuvil::broadcastShapes(shapeOf(xy[0]), shapeOf(xy[1]), bs)))
      in.fail("CUVIL-E-IMPORT-RAISE", "cosine_similarity: inputs cannot be broadcast");
    std::vector<int64_t> shape(bs.begin(), bs.end());
    Value x = expandTo(in, xy[0], shape), y = expandTo(in, xy[1], shape);
    int64_t dim = wrapDim(in, a.i("dim"), static_cast<int64_t>(shape.size()));
    double eps = a.f("eps");
    Value w12 = sumOver(in, in.build<cir::MulOp>(x, y), {dim});
    Value w1 = sumOver(in, in.build<cir::MulOp>(x, x), {dim});
    Value w2 = sumOver(in, in.build<cir::MulOp>(y, y), {dim});
    Value n12 = in.build<cir::SqrtOp>(in.build<cir::ClampOp>(in.build<cir::MulOp>(w1, w2), f64(in, eps * eps), mlir::FloatAttr()));
    return ret(in.build<cir::DivOp>(w12, n12, cir::RoundingModeAttr::get(in.context(), cir::RoundingMode::None)));
  };
  t["aten::pairwise_distance"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    // The difference in the operands' own type (it wraps for uint8, as in
    // PyTorch), then + eps in float.
    Value diff = in.build<cir::SubOp>(a.t("x1"), a.t("x2"));
    Value fd = floatOperand(in, diff);
    Value d = in.build<cir::AddOp>(fd, in.scalarConstant(IValue::floating(a.f("eps")), dtypeOf(fd)));
    int64_t r = rankOf(d);
    std::vector<int64_t> dims = r == 0 ? std::vector<int64_t>{} : std::vector<int64_t>{r - 1};
    return ret(vectorNorm(in, d, a.f("p"), dims, a.b("keepdim"), std::nullopt));
  };
  // cdist by the difference of every pair (exact; the matmul shortcut
  // PyTorch may take for p = 2 rounds differently, within tolerance).
  t["aten::cdist"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = floatOperand(in, a.t("x1")), y = floatOperand(in, a.t("x2"));
    std::vector<int64_t> sx = shapeOf(x), sy = shapeOf(y);
    if (sx.size() < 2 || sy.size() < 2)
      in.fail("CUVIL-E-IMPORT-RAISE", "cdist only supports at least 2D tensors");
    std::vector<int64_t> xs = sx, ys = sy;
    xs.insert(xs.end() - 1, 1);
    ys.insert(ys.end() - 2, 1);
    Value d = in.build<cir::SubOp>(reshape(in, x, xs), reshape(in, y, ys));
    return ret(vectorNorm(in, d, a.f("p"), {rankOf(d) - 1}, false, std::nullopt));
  };
}

} // namespace

void registerTensorOpHandlers(std::map<std::string, OpHandler> &table) {
  registerRearrangements(table);
  registerFactories(table);
  registerProducts(table);
  registerFormulaReductions(table);
  registerScans(table);
}

} // namespace cuvil::torchscript
