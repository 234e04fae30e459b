//===- LowerLinalgOps.cpp - torch.linalg on the factorisation kernels -----===//
//
// torch.linalg's decompositions are cuvil.linalg.kernel ops (LU, Cholesky,
// triangular solve, QR, symmetric eigen, SVD: LAPACK's conventions); what
// PyTorch derives from them is derived here the way PyTorch does: det and
// slogdet from LU's diagonal and pivot parity, inv and solve by two
// triangular solves after the pivots' row permutation, pinv / matrix_rank /
// the spectral and nuclear norms from singular values, qr from geqrf and
// the Householder product.
//
//===----------------------------------------------------------------------===//
#include "frontend/torchscript/LowerHelpers.h"

#include <cmath>
#include <limits>
#include <numeric>

namespace cuvil::torchscript {
namespace {

using namespace lower;

std::vector<Value> kernel(Interpreter &in, const char *name, std::vector<Value> inputs,
                          std::vector<int64_t> flags, unsigned results) {
  mlir::OpBuilder &b = in.builder();
  llvm::SmallVector<mlir::Type> none(results, b.getNoneType());
  auto op = b.create<cir::LinalgKernelOp>(in.location(), mlir::TypeRange(none), mlir::ValueRange(inputs),
                                          b.getStringAttr(name), b.getDenseI64ArrayAttr(flags));
  in.finishBuild(op.getOperation());
  return std::vector<Value>(op->result_begin(), op->result_end());
}

/// A float matrix operand (torch.linalg takes float and double only).
Value matrix(Interpreter &in, Value a, const char *fn) {
  if (!isFloat(dtypeOf(a)) || dtypeOf(a) == DType::Float16 || dtypeOf(a) == DType::BFloat16)
    in.fail("CUVIL-E-IMPORT-RAISE", std::string(fn) + ": expected a float or double tensor");
  if (rankOf(a) < 2)
    in.fail("CUVIL-E-IMPORT-RAISE", std::string(fn) + ": the input must have at least 2 dimensions");
  if (!typeOf(a).hasStaticShape())
    in.fail("CUVIL-E-IMPORT-SHAPE", std::string(fn) + " needs static dimensions");
  return a;
}

std::vector<int64_t> batchOf(Value v, int64_t tail) {
  std::vector<int64_t> s = shapeOf(v);
  s.resize(s.size() - tail);
  return s;
}

/// a and b with their batch dimensions (all but the last `tail`) broadcast.
void broadcastBatch(Interpreter &in, Value &a, int64_t tailA, Value &b, int64_t tailB) {
  llvm::SmallVector<int64_t> bs;
  std::vector<int64_t> ba = batchOf(a, tailA), bb = batchOf(b, tailB);
  if (mlir::failed(mlir::cuvil::broadcastShapes(ba, bb, bs)))
    in.fail("CUVIL-E-IMPORT-RAISE", "the batch dimensions of the operands cannot be broadcast");
  auto grow = [&](Value v, int64_t tail) {
    std::vector<int64_t> s(bs.begin(), bs.end()), vs = shapeOf(v);
    s.insert(s.end(), vs.end() - tail, vs.end());
    if (s.size() > vs.size()) {
      std::vector<int64_t> ones(s.size() - vs.size(), 1);
      ones.insert(ones.end(), vs.begin(), vs.end());
      v = reshape(in, v, ones);
    }
    return expandTo(in, v, s);
  };
  a = grow(a, tailA);
  b = grow(b, tailB);
}

Value transposeLast(Interpreter &in, Value x) {
  int64_t r = rankOf(x);
  std::vector<int64_t> order(r);
  std::iota(order.begin(), order.end(), 0);
  std::swap(order[r - 1], order[r - 2]);
  return in.build<cir::PermuteOp>(x, i64s(in, order));
}

Value num(Interpreter &in, Value like, double v) { return in.scalarConstant(IValue::floating(v), dtypeOf(like)); }
Value intc(Interpreter &in, int64_t v) { return in.scalarConstant(IValue::integer(v), DType::Int64); }

Value sliceDim(Interpreter &in, Value x, int64_t dim, int64_t start, int64_t end) {
  return in.build<cir::SliceOp>(x, i64(in, dim), i64(in, start), i64(in, end), i64(in, 1));
}

Value diagonalOf(Interpreter &in, Value x) { // [..., min(m, n)]
  return in.callOperator("aten::diagonal", {ret(x), IValue::integer(0), IValue::integer(-2), IValue::integer(-1)}, {})
      .tensor->value;
}

Value tri(Interpreter &in, Value x, bool upper, int64_t diagonal) {
  return in.callOperator(upper ? "aten::triu" : "aten::tril", {ret(x), IValue::integer(diagonal)}, {}).tensor->value;
}

Value eye(Interpreter &in, int64_t n, int64_t m, DType d) {
  std::vector<double> v(n * m, 0.0);
  for (int64_t i = 0; i < std::min(n, m); ++i)
    v[i * m + i] = 1.0;
  return constantFrom(in, Tensor::fromDoubles(d, {n, m}, v));
}

Value sumLast(Interpreter &in, Value x, bool keep = false) {
  return in.build<cir::SumOp>(x, i64s(in, {rankOf(x) - 1}), keep ? in.builder().getUnitAttr() : mlir::UnitAttr());
}

/// The row permutation LAPACK's 1-based row swaps `pivots` [..., k] make of
/// m rows: perm [..., m] int64 with (P^T A)[i] = A[perm[i]].
Value permutationOf(Interpreter &in, Value pivots, int64_t m) {
  std::vector<int64_t> batch = batchOf(pivots, 1);
  int64_t k = shapeOf(pivots).back();
  std::vector<int64_t> shape = batch;
  shape.push_back(m);
  std::vector<int64_t> rows(m);
  std::iota(rows.begin(), rows.end(), 0);
  Value iota = constantI64(in, rows);
  Value perm = expandTo(in, iota, shape);
  Value piv = in.build<cir::SubOp>(cast(in, pivots, DType::Int64), intc(in, 1));
  std::vector<int64_t> one = batch;
  one.push_back(1);
  for (int64_t i = 0; i < k; ++i) { // perm[i] <-> perm[piv[i]]
    Value j = sliceDim(in, piv, rankOf(piv) - 1, i, i + 1);                 // [..., 1]
    Value pi = sliceDim(in, perm, rankOf(perm) - 1, i, i + 1);              // [..., 1]
    Value pj = in.build<cir::GatherOp>(perm, j, i64(in, rankOf(perm) - 1)); // [..., 1]
    Value isI = in.build<cir::EqOp>(iota, intc(in, i));
    Value isJ = in.build<cir::EqOp>(expandTo(in, iota, shape), expandTo(in, j, shape));
    perm = in.build<cir::WhereOp>(isI, pj, in.build<cir::WhereOp>(isJ, pi, perm));
  }
  return perm;
}

/// Rows of b [..., m, k] picked by perm [..., m].
Value permuteRows(Interpreter &in, Value b, Value perm) {
  std::vector<int64_t> s = shapeOf(b), ps = shapeOf(perm);
  ps.push_back(1);
  Value idx = expandTo(in, reshape(in, perm, ps), s);
  return in.build<cir::GatherOp>(b, idx, i64(in, rankOf(b) - 2));
}

/// P of A = P L U: P[r, c] = (perm[c] == r).
Value permutationMatrix(Interpreter &in, Value perm, int64_t m, DType d) {
  std::vector<int64_t> rows(m);
  std::iota(rows.begin(), rows.end(), 0);
  std::vector<int64_t> ps = shapeOf(perm);
  ps.insert(ps.end() - 1, 1); // [..., 1, m]
  Value r = constantI64(in, rows, {m, 1});
  return cast(in, in.build<cir::EqOp>(reshape(in, perm, ps), r), d);
}

struct LU {
  Value lu, pivots, info;
};
LU factorLU(Interpreter &in, Value a) {
  std::vector<Value> r = kernel(in, "lu", {a}, {}, 3);
  return {r[0], r[1], r[2]};
}

/// A X = B for square A (its LU), B [..., n, k] with A's batch.
Value luSolve(Interpreter &in, const LU &f, Value b) {
  int64_t n = shapeOf(f.lu).back();
  Value pb = permuteRows(in, b, permutationOf(in, f.pivots, n));
  Value y = kernel(in, "triangular_solve", {f.lu, pb}, {0, 1, 1}, 1)[0];
  return kernel(in, "triangular_solve", {f.lu, y}, {1, 1, 0}, 1)[0];
}

Value inverse(Interpreter &in, Value a) {
  int64_t n = shapeOf(a).back();
  if (shapeOf(a)[rankOf(a) - 2] != n)
    in.fail("CUVIL-E-IMPORT-RAISE", "linalg.inv: A must be batches of square matrices");
  Value id = expandTo(in, eye(in, n, n, dtypeOf(a)), shapeOf(a));
  return luSolve(in, factorLU(in, a), id);
}

/// det and the parity sign of the pivots.
std::pair<Value, Value> diagAndSign(Interpreter &in, const LU &f) {
  Value d = diagonalOf(in, f.lu);
  int64_t k = shapeOf(f.pivots).back();
  std::vector<int64_t> pos(k);
  std::iota(pos.begin(), pos.end(), 1);
  Value swapped = in.build<cir::NeOp>(cast(in, f.pivots, DType::Int64), constantI64(in, pos));
  Value odd = in.build<cir::RemainderOp>(sumLast(in, cast(in, swapped, DType::Int64)), intc(in, 2));
  Value sign = in.build<cir::SubOp>(num(in, d, 1.0), in.build<cir::MulOp>(num(in, d, 2.0), cast(in, odd, dtypeOf(d))));
  return {d, sign};
}

Value determinant(Interpreter &in, Value a) {
  LU f = factorLU(in, a);
  auto [d, sign] = diagAndSign(in, f);
  Value prod = in.build<cir::ProdOp>(d, i64s(in, {rankOf(d) - 1}), mlir::UnitAttr());
  return in.build<cir::MulOp>(prod, sign);
}

std::pair<Value, Value> slogdet(Interpreter &in, Value a) {
  LU f = factorLU(in, a);
  auto [d, sign] = diagAndSign(in, f);
  Value s = in.build<cir::MulOp>(sign, in.build<cir::ProdOp>(in.build<cir::SignOp>(d), i64s(in, {rankOf(d) - 1}),
                                                             mlir::UnitAttr()));
  Value logabs = sumLast(in, in.build<cir::LogOp>(in.build<cir::AbsOp>(d)));
  return {s, logabs};
}

struct SVD {
  Value u, s, vh;
};
SVD svd(Interpreter &in, Value a, bool full) {
  std::vector<Value> r = kernel(in, "svd", {a}, {full}, 3);
  return {r[0], r[1], r[2]};
}

/// The cut-off of pinv / matrix_rank: max(atol, rtol * largest), with
/// PyTorch's defaults (rtol = eps * max(m, n) when neither is given).
/// A tolerance of linalg.pinv / matrix_rank: a number, or a tensor of one
/// per matrix (broadcast over the batch dims).
struct Tol {
  std::optional<double> number;
  Value tensor;
  Tol() = default;
  Tol(std::optional<double> n) : number(n) {}
  Tol(double n) : number(n) {}
  bool given() const { return number || tensor; }
};

/// PyTorch's cut-off max(atol, rtol * largest), with its defaults: rtol =
/// eps * max(m, n) unless atol is given and positive (then 0).
Value cutoff(Interpreter &in, Value largest, Value a, const Tol &atol, const Tol &rtol) {
  double eps = dtypeOf(a) == DType::Float32 ? std::numeric_limits<float>::epsilon()
                                            : std::numeric_limits<double>::epsilon();
  std::vector<int64_t> s = shapeOf(a);
  double byDefault = eps * double(std::max(s[s.size() - 1], s[s.size() - 2]));
  if (!atol.tensor && !rtol.tensor) {
    double r = rtol.number ? *rtol.number : (atol.number && *atol.number > 0 ? 0.0 : byDefault);
    Value tol = in.build<cir::MulOp>(largest, num(in, largest, r));
    return in.build<cir::MaximumOp>(tol, num(in, largest, atol.number ? *atol.number : 0.0));
  }
  // Tensor tolerances: in double, as PyTorch's get_atol_rtol, one per matrix.
  auto perMatrix = [&](Value t) {
    t = cast(in, t, DType::Float64);
    std::vector<int64_t> ts = shapeOf(t);
    ts.push_back(1);
    return reshape(in, t, ts);
  };
  Value wide = cast(in, largest, DType::Float64);
  Value av = atol.tensor ? perMatrix(atol.tensor) : num(in, wide, atol.number.value_or(0.0));
  Value rv;
  if (rtol.tensor)
    rv = perMatrix(rtol.tensor);
  else if (rtol.number)
    rv = num(in, wide, *rtol.number);
  else if (atol.tensor)
    rv = in.build<cir::WhereOp>(in.build<cir::GtOp>(av, num(in, wide, 0.0)), num(in, wide, 0.0),
                                num(in, wide, byDefault));
  else
    rv = num(in, wide, atol.number && *atol.number > 0 ? 0.0 : byDefault);
  return in.build<cir::MaximumOp>(av, in.build<cir::MulOp>(rv, wide));
}

Tol optF(const Args &a, const BoundArgs &b, const char *name) {
  if (!b.has(name) || a.none(name))
    return Tol();
  if (a[name].isTensor()) {
    Tol t;
    t.tensor = a.t(name);
    if (!isFloat(dtypeOf(t.tensor)) && !isIntegral(dtypeOf(t.tensor)))
      a.in.fail("CUVIL-E-IMPORT-RAISE", std::string(name) + " tensor of dtype bool is not supported");
    return t;
  }
  return Tol(a.f(name));
}

Value pinv(Interpreter &in, Value a, const Tol &atol, const Tol &rtol, bool hermitian) {
  if (hermitian) {
    std::vector<Value> r = kernel(in, "eigh", {a}, {0}, 2);
    Value w = r[0], v = r[1];
    Value aw = in.build<cir::AbsOp>(w);
    Value largest = in.build<cir::MaxOp>(aw, i64s(in, {rankOf(aw) - 1}), in.builder().getUnitAttr());
    Value keep = in.build<cir::GtOp>(aw, cutoff(in, largest, a, atol, rtol));
    Value winv = in.build<cir::WhereOp>(keep, in.build<cir::ReciprocalOp>(w), num(in, w, 0.0));
    std::vector<int64_t> ws = shapeOf(winv);
    ws.insert(ws.end() - 1, 1);
    return in.build<cir::MatmulOp>(in.build<cir::MulOp>(v, reshape(in, winv, ws)), transposeLast(in, v));
  }
  SVD d = svd(in, a, false);
  int64_t k = shapeOf(d.s).back();
  if (k == 0)
    return transposeLast(in, a);
  Value largest = sliceDim(in, d.s, rankOf(d.s) - 1, 0, 1);
  Value keep = in.build<cir::GtOp>(d.s, cutoff(in, largest, a, atol, rtol));
  Value sinv = in.build<cir::WhereOp>(keep, in.build<cir::ReciprocalOp>(d.s), num(in, d.s, 0.0));
  std::vector<int64_t> ss = shapeOf(sinv);
  ss.insert(ss.end() - 1, 1); // [..., 1, k]
  Value v = transposeLast(in, d.vh);
  return in.build<cir::MatmulOp>(in.build<cir::MulOp>(v, reshape(in, sinv, ss)), transposeLast(in, d.u));
}

Value matrixRank(Interpreter &in, Value a, const Tol &atol, const Tol &rtol, bool hermitian) {
  Value s;
  if (hermitian)
    s = in.build<cir::AbsOp>(kernel(in, "eigh", {a}, {0}, 2)[0]);
  else
    s = svd(in, a, false).s;
  if (shapeOf(s).back() == 0)
    return splat(in, batchOf(a, 2), DType::Int64, IValue::integer(0));
  Value largest = in.build<cir::MaxOp>(s, i64s(in, {rankOf(s) - 1}), in.builder().getUnitAttr());
  return sumLast(in, cast(in, in.build<cir::GtOp>(s, cutoff(in, largest, a, atol, rtol)), DType::Int64));
}

/// linalg.matrix_norm over the last two dims (after moving `dims` there).
Value matrixNorm(Interpreter &in, Value a, const IValue &ord, std::vector<int64_t> dims, bool keep) {
  int64_t r = rankOf(a);
  for (int64_t &d : dims)
    d = wrapDim(in, d, r);
  if (dims.size() != 2 || dims[0] == dims[1])
    in.fail("CUVIL-E-IMPORT-RAISE", "linalg.matrix_norm: dim must be a 2-tuple of different dimensions");
  std::vector<int64_t> order;
  for (int64_t d = 0; d < r; ++d)
    if (d != dims[0] && d != dims[1])
      order.push_back(d);
  order.push_back(dims[0]);
  order.push_back(dims[1]);
  Value x = in.build<cir::PermuteOp>(a, i64s(in, order));
  Value result;
  auto absSum = [&](int64_t dim) { return in.build<cir::SumOp>(in.build<cir::AbsOp>(x), i64s(in, {dim}), mlir::UnitAttr()); };
  auto reduceLast = [&](Value v, bool max) {
    return max ? in.build<cir::MaxOp>(v, i64s(in, {rankOf(v) - 1}), mlir::UnitAttr())
               : in.build<cir::MinOp>(v, i64s(in, {rankOf(v) - 1}), mlir::UnitAttr());
  };
  if (ord.is(K::Str)) {
    if (ord.s == "fro")
      result = in.build<cir::SqrtOp>(in.build<cir::SumOp>(in.build<cir::MulOp>(x, x), i64s(in, {r - 2, r - 1}), mlir::UnitAttr()));
    else if (ord.s == "nuc")
      result = sumLast(in, svd(in, x, false).s);
    else
      in.fail("CUVIL-E-IMPORT-RAISE", "linalg.matrix_norm: order '" + ord.s + "' is not supported");
  } else {
    double p = ord.is(K::Int) ? double(ord.i) : ord.f;
    if (p == 2 || p == -2)
      result = reduceLast(svd(in, x, false).s, p > 0);
    else if (p == 1 || p == -1)
      result = reduceLast(absSum(r - 2), p > 0);
    else if (std::isinf(p))
      result = reduceLast(absSum(r - 1), p > 0);
    else
      in.fail("CUVIL-E-IMPORT-RAISE", "linalg.matrix_norm: order " + std::to_string(p) + " is not supported");
  }
  if (keep) {
    std::vector<int64_t> s = shapeOf(a);
    s[dims[0]] = s[dims[1]] = 1;
    result = reshape(in, result, s);
  }
  return result;
}

/// torch.linalg.qr's Q and R.
std::pair<Value, Value> qr(Interpreter &in, Value a, const std::string &mode) {
  std::vector<Value> g = kernel(in, "geqrf", {a}, {}, 2);
  Value f = g[0], tau = g[1];
  std::vector<int64_t> s = shapeOf(a);
  int64_t r = rankOf(a), m = s[r - 2], n = s[r - 1], k = std::min(m, n);
  bool complete = mode == "complete";
  Value rm = complete ? tri(in, f, true, 0) : tri(in, sliceDim(in, f, r - 2, 0, k), true, 0);
  if (mode == "r")
    return {splat(in, {0}, dtypeOf(a), IValue::floating(0.0)), rm};
  Value v;
  if (complete && m > n) { // widen the reflectors to m x m
    std::vector<int64_t> zs = s;
    zs[r - 1] = m - n;
    v = in.build<cir::ConcatOp>(mlir::ValueRange{f, splat(in, zs, dtypeOf(a), IValue::floating(0.0))}, i64(in, r - 1));
  } else {
    v = sliceDim(in, f, r - 1, 0, k);
  }
  if (shapeOf(v).back() == 0)
    return {splat(in, shapeOf(v), dtypeOf(a), IValue::floating(0.0)), rm};
  return {kernel(in, "householder_product", {v, tau}, {}, 1)[0], rm};
}

Value solve(Interpreter &in, Value a, Value b, bool left) {
  a = matrix(in, a, "linalg.solve");
  if (!left) // X A = B  <=>  A^T X^T = B^T
    return transposeLast(in, solve(in, transposeLast(in, a), transposeLast(in, b), true));
  // B is a vector when 1-D, or one dimension short of A with A's batch.
  std::vector<int64_t> as = shapeOf(a), bs = shapeOf(b);
  bool vector = rankOf(b) == 1 ||
                (rankOf(b) == rankOf(a) - 1 && std::vector<int64_t>(as.begin(), as.end() - 1) == bs);
  if (vector) {
    std::vector<int64_t> col = bs;
    col.push_back(1);
    b = reshape(in, b, col);
  }
  b = cast(in, b, dtypeOf(a));
  broadcastBatch(in, a, 2, b, 2);
  Value x = luSolve(in, factorLU(in, a), b);
  if (vector) {
    std::vector<int64_t> xs = shapeOf(x);
    xs.pop_back();
    x = reshape(in, x, xs);
  }
  return x;
}

Value choleskySolve(Interpreter &in, Value b, Value l, bool upper) {
  broadcastBatch(in, l, 2, b, 2);
  // A = L L^T: L Y = B, then L^T X = Y (or with U = L^T).
  Value lower = upper ? transposeLast(in, l) : l;
  Value y = kernel(in, "triangular_solve", {lower, b}, {0, 1, 0}, 1)[0];
  return kernel(in, "triangular_solve", {transposeLast(in, lower), y}, {1, 1, 0}, 1)[0];
}

Value matrixPower(Interpreter &in, Value a, int64_t n) {
  int64_t k = shapeOf(a).back();
  if (shapeOf(a)[rankOf(a) - 2] != k)
    in.fail("CUVIL-E-IMPORT-RAISE", "linalg.matrix_power: A must be batches of square matrices");
  if (n == 0)
    return expandTo(in, eye(in, k, k, dtypeOf(a)), shapeOf(a));
  if (n < 0) {
    a = inverse(in, matrix(in, a, "linalg.matrix_power"));
    n = -n;
  }
  Value result, base = a; // binary powering
  while (n) {
    if (n & 1)
      result = result ? in.build<cir::MatmulOp>(result, base) : base;
    n >>= 1;
    if (n)
      base = in.build<cir::MatmulOp>(base, base);
  }
  return result;
}

void registerLinalgHandlers(Table &t) {
  for (const char *name : {"aten::linalg_matrix_power", "aten::matrix_power"})
    t[name] = [](Interpreter &in, const BoundArgs &b) {
      Args a{in, b};
      Value m = a.t("self");
      if (rankOf(m) < 2)
        in.fail("CUVIL-E-IMPORT-RAISE", "linalg.matrix_power: the input must have at least 2 dimensions");
      return ret(matrixPower(in, m, a.i("n")));
    };
  t["aten::linalg_vander"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = a.t("x");
    if (rankOf(x) == 0) // a 0-d x is one point
      x = reshape(in, x, {1});
    int64_t n = a.none("N") ? shapeOf(x).back() : a.i("N");
    if (n <= 1)
      in.fail("CUVIL-E-IMPORT-RAISE", "N must be greater than 1.");
    // x^0, x^1, ...: a running product, as PyTorch's cumprod does.
    std::vector<int64_t> s = shapeOf(x);
    s.push_back(1);
    Value col = reshape(in, x, s);
    if (!isFloat(dtypeOf(col)) && dtypeOf(col) != DType::Int64)
      col = cast(in, col, DType::Int64);
    std::vector<Value> cols{splat(in, s, dtypeOf(col), IValue::integer(1))};
    for (int64_t k = 1; k < n; ++k)
      cols.push_back(in.build<cir::MulOp>(cols.back(), col));
    return ret(cols.size() == 1 ? cols[0] : in.build<cir::ConcatOp>(mlir::ValueRange(cols), i64(in, rankOf(col) - 1)));
  };
  t["aten::linalg_tensorinv"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = a.t("self");
    int64_t ind = a.i("ind");
    std::vector<int64_t> s = shapeOf(x);
    if (ind <= 0 || ind > int64_t(s.size()))
      in.fail("CUVIL-E-IMPORT-RAISE", "linalg.tensorinv: expected a strictly positive integer for 'ind'");
    std::vector<int64_t> front(s.begin(), s.begin() + ind), back(s.begin() + ind, s.end());
    int64_t p = std::accumulate(front.begin(), front.end(), int64_t(1), std::multiplies<int64_t>());
    int64_t q = std::accumulate(back.begin(), back.end(), int64_t(1), std::multiplies<int64_t>());
    if (p != q)
      in.fail("CUVIL-E-IMPORT-RAISE", "linalg.tensorinv: the product of the first 'ind' dims must equal the rest");
    Value inv = inverse(in, matrix(in, reshape(in, x, {p, q}), "linalg.tensorinv"));
    std::vector<int64_t> out = back;
    out.insert(out.end(), front.begin(), front.end());
    return ret(reshape(in, inv, out));
  };
  t["aten::linalg_tensorsolve"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = a.t("self"), rhs = a.t("other");
    int64_t r = rankOf(x);
    if (!a.none("dims")) { // move `dims` to the end
      std::vector<int64_t> dims = a.ints("dims"), order;
      for (int64_t &d : dims)
        d = wrapDim(in, d, r);
      for (int64_t d = 0; d < r; ++d)
        if (std::find(dims.begin(), dims.end(), d) == dims.end())
          order.push_back(d);
      order.insert(order.end(), dims.begin(), dims.end());
      x = in.build<cir::PermuteOp>(x, i64s(in, order));
    }
    std::vector<int64_t> s = shapeOf(x), bs = shapeOf(rhs);
    int64_t rows = std::accumulate(bs.begin(), bs.end(), int64_t(1), std::multiplies<int64_t>());
    int64_t total = std::accumulate(s.begin(), s.end(), int64_t(1), std::multiplies<int64_t>());
    std::vector<int64_t> rest(s.begin() + rankOf(rhs), s.end());
    if (rows * rows != total)
      in.fail("CUVIL-E-IMPORT-RAISE", "linalg.tensorsolve: the shapes do not form a square system");
    Value m = matrix(in, reshape(in, x, {rows, rows}), "linalg.tensorsolve");
    Value sol = solve(in, m, cast(in, reshape(in, rhs, {rows}), dtypeOf(m)), true);
    return ret(reshape(in, sol, rest));
  };
  t["aten::linalg_cond"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value m = matrix(in, a.t("self"), "linalg.cond");
    const IValue &p = a["p"];
    bool spectral = p.isNone() || (!p.is(K::Str) && std::fabs(p.is(K::Int) ? double(p.i) : p.f) == 2);
    if (spectral) {
      Value sv = svd(in, m, false).s;
      int64_t k = shapeOf(sv).back();
      Value hi = sliceDim(in, sv, rankOf(sv) - 1, 0, 1), lo = sliceDim(in, sv, rankOf(sv) - 1, k - 1, k);
      bool minus = !p.isNone() && (p.is(K::Int) ? p.i : p.f) < 0;
      Value c = minus ? in.build<cir::DivOp>(lo, hi, cir::RoundingModeAttr::get(in.context(), cir::RoundingMode::None))
                      : in.build<cir::DivOp>(hi, lo, cir::RoundingModeAttr::get(in.context(), cir::RoundingMode::None));
      std::vector<int64_t> bs = batchOf(m, 2);
      return ret(reshape(in, c, bs));
    }
    Value n1 = matrixNorm(in, m, p, {-2, -1}, false);
    Value n2 = matrixNorm(in, inverse(in, m), p, {-2, -1}, false);
    return ret(in.build<cir::MulOp>(n1, n2));
  };

  auto luFactor = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    if (b.has("pivot") && !a.b("pivot"))
      return in.unsupported("LU without pivoting");
    LU f = factorLU(in, matrix(in, b.has("A") ? a.t("A") : a.t("self"), "linalg.lu_factor"));
    return IValue::makeTuple({ret(f.lu), ret(f.pivots), ret(f.info)});
  };
  t["aten::linalg_lu_factor_ex"] = luFactor;
  t["aten::_lu_with_info"] = luFactor;
  t["aten::linalg_lu_factor"] = [luFactor](Interpreter &in, const BoundArgs &b) {
    IValue r = luFactor(in, b);
    if (!r.is(IValue::Kind::Tuple))
      return r;
    return IValue::makeTuple({(*r.list)[0], (*r.list)[1]});
  };
  auto unpack = [](Interpreter &in, Value lu, Value pivots, bool data, bool pivotsToo) {
    std::vector<int64_t> s = shapeOf(lu);
    int64_t r = rankOf(lu), m = s[r - 2], n = s[r - 1], k = std::min(m, n);
    Value p = pivotsToo ? permutationMatrix(in, permutationOf(in, pivots, m), m, dtypeOf(lu))
                        : splat(in, {0}, dtypeOf(lu), IValue::floating(0.0));
    if (!data)
      return IValue::makeTuple({ret(p), ret(splat(in, {0}, dtypeOf(lu), IValue::floating(0.0))),
                                ret(splat(in, {0}, dtypeOf(lu), IValue::floating(0.0)))});
    Value l = tri(in, sliceDim(in, lu, r - 1, 0, k), false, -1);
    l = in.build<cir::AddOp>(l, eye(in, m, k, dtypeOf(lu)));
    Value u = tri(in, sliceDim(in, lu, r - 2, 0, k), true, 0);
    return IValue::makeTuple({ret(p), ret(l), ret(u)});
  };
  t["aten::lu_unpack"] = [unpack](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    return unpack(in, a.t("LU_data"), a.t("LU_pivots"), a.b("unpack_data"), a.b("unpack_pivots"));
  };
  t["aten::linalg_lu"] = [unpack](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    if (!a.b("pivot"))
      return in.unsupported("LU without pivoting");
    LU f = factorLU(in, matrix(in, a.t("A"), "linalg.lu"));
    return unpack(in, f.lu, f.pivots, true, true);
  };
  auto det = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    return ret(determinant(in, matrix(in, b.has("A") ? a.t("A") : a.t("self"), "linalg.det")));
  };
  t["aten::linalg_det"] = det;
  t["aten::det"] = det;
  t["aten::linalg_slogdet"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    auto [s, l] = slogdet(in, matrix(in, a.t("A"), "linalg.slogdet"));
    return IValue::makeTuple({ret(s), ret(l)});
  };
  t["aten::logdet"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    auto [s, l] = slogdet(in, matrix(in, a.t("self"), "logdet"));
    Value nan = num(in, l, NAN), ninf = num(in, l, -INFINITY);
    Value r = in.build<cir::WhereOp>(in.build<cir::LtOp>(s, num(in, s, 0.0)), nan, l);
    return ret(in.build<cir::WhereOp>(in.build<cir::EqOp>(s, num(in, s, 0.0)), ninf, r));
  };
  t["aten::linalg_inv"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    return ret(inverse(in, matrix(in, a.t("A"), "linalg.inv")));
  };
  t["aten::inverse"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    return ret(inverse(in, matrix(in, a.t("self"), "inverse")));
  };
  t["aten::linalg_inv_ex"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value m = matrix(in, a.t("A"), "linalg.inv_ex");
    return IValue::makeTuple({ret(inverse(in, m)), ret(factorLU(in, m).info)});
  };
  t["aten::linalg_solve"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    return ret(solve(in, a.t("A"), a.t("B"), !b.has("left") || a.b("left")));
  };
  t["aten::linalg_solve_ex"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = solve(in, a.t("A"), a.t("B"), !b.has("left") || a.b("left"));
    return IValue::makeTuple({ret(x), ret(factorLU(in, matrix(in, a.t("A"), "linalg.solve_ex")).info)});
  };
  auto luSolveHandler = [](Interpreter &in, Value lu, Value pivots, Value rhs, bool left, bool adjoint) {
    LU f{lu, pivots, Value()};
    rhs = cast(in, rhs, dtypeOf(lu));
    if (!left) // X op(A) = B  <=>  op(A)^T X^T = B^T
      rhs = transposeLast(in, rhs);
    broadcastBatch(in, f.lu, 2, rhs, 2);
    std::vector<int64_t> ps = shapeOf(f.lu);
    ps.pop_back();
    ps.back() = shapeOf(pivots).back();
    f.pivots = expandTo(in, pivots, ps);
    bool transposed = adjoint != !left; // solve with A^T
    Value x;
    if (!transposed) {
      x = luSolve(in, f, rhs);
    } else { // A^T = U^T L^T P^T: U^T z = B, L^T w = z, X = P w
      Value lut = transposeLast(in, f.lu);
      Value z = kernel(in, "triangular_solve", {lut, rhs}, {0, 1, 0}, 1)[0];
      Value w = kernel(in, "triangular_solve", {lut, z}, {1, 1, 1}, 1)[0];
      int64_t n = shapeOf(f.lu).back();
      x = in.build<cir::MatmulOp>(permutationMatrix(in, permutationOf(in, f.pivots, n), n, dtypeOf(lu)), w);
    }
    return ret(left ? x : transposeLast(in, x));
  };
  t["aten::linalg_lu_solve"] = [luSolveHandler](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    return luSolveHandler(in, a.t("LU"), a.t("pivots"), a.t("B"), a.b("left"), a.b("adjoint"));
  };
  t["aten::lu_solve"] = [luSolveHandler](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    return luSolveHandler(in, a.t("LU_data"), a.t("LU_pivots"), a.t("self"), true, false);
  };
  // Cholesky.
  auto cholesky = [](Interpreter &in, Value m, bool upper) {
    return kernel(in, "cholesky", {matrix(in, m, "linalg.cholesky")}, {upper}, 2);
  };
  t["aten::linalg_cholesky"] = [cholesky](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    return ret(cholesky(in, a.t("self"), a.b("upper"))[0]);
  };
  t["aten::cholesky"] = [cholesky](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    return ret(cholesky(in, a.t("self"), a.b("upper"))[0]);
  };
  t["aten::linalg_cholesky_ex"] = [cholesky](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    std::vector<Value> r = cholesky(in, a.t("self"), a.b("upper"));
    return IValue::makeTuple({ret(r[0]), ret(r[1])});
  };
  t["aten::cholesky_solve"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value l = matrix(in, a.t("input2"), "cholesky_solve");
    return ret(choleskySolve(in, cast(in, a.t("self"), dtypeOf(l)), l, a.b("upper")));
  };
  t["aten::cholesky_inverse"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value l = matrix(in, a.t("self"), "cholesky_inverse");
    int64_t n = shapeOf(l).back();
    return ret(choleskySolve(in, expandTo(in, eye(in, n, n, dtypeOf(l)), shapeOf(l)), l, a.b("upper")));
  };
  // Triangular solves.
  t["aten::linalg_solve_triangular"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value m = matrix(in, a.t("self"), "linalg.solve_triangular"), rhs = cast(in, a.t("B"), dtypeOf(m));
    broadcastBatch(in, m, 2, rhs, 2);
    return ret(kernel(in, "triangular_solve", {m, rhs}, {a.b("upper"), a.b("left"), a.b("unitriangular")}, 1)[0]);
  };
  t["aten::triangular_solve"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value m = matrix(in, a.t("A"), "triangular_solve"), rhs = cast(in, a.t("self"), dtypeOf(m));
    bool upper = a.b("upper");
    Value coeff = m;
    if (a.b("transpose")) { // A^T X = B: A^T is triangular the other way
      m = transposeLast(in, m);
      upper = !upper;
    }
    broadcastBatch(in, m, 2, rhs, 2);
    Value x = kernel(in, "triangular_solve", {m, rhs}, {upper, 1, a.b("unitriangular")}, 1)[0];
    return IValue::makeTuple({ret(x), ret(coeff)});
  };
  // QR.
  t["aten::geqrf"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    std::vector<Value> r = kernel(in, "geqrf", {matrix(in, a.t("self"), "geqrf")}, {}, 2);
    return IValue::makeTuple({ret(r[0]), ret(r[1])});
  };
  auto householder = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value v = matrix(in, a.t(b.has("input") ? "input" : "self"), "linalg.householder_product");
    Value tau = cast(in, a.t(b.has("tau") ? "tau" : "input2"), dtypeOf(v));
    return ret(kernel(in, "householder_product", {v, tau}, {}, 1)[0]);
  };
  t["aten::linalg_householder_product"] = householder;
  t["aten::orgqr"] = householder;
  t["aten::ormqr"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value v = matrix(in, a.t("self"), "ormqr");
    Value tau = cast(in, a.t("input2"), dtypeOf(v)), c = cast(in, a.t("input3"), dtypeOf(v));
    return ret(kernel(in, "ormqr", {v, tau, c}, {a.b("left"), a.b("transpose")}, 1)[0]);
  };
  t["aten::linalg_qr"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    auto [q, r] = qr(in, matrix(in, a.t("A"), "linalg.qr"), a.s("mode"));
    return IValue::makeTuple({ret(q), ret(r)});
  };
  t["aten::qr"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    auto [q, r] = qr(in, matrix(in, a.t("self"), "qr"), a.b("some") ? "reduced" : "complete");
    return IValue::makeTuple({ret(q), ret(r)});
  };
  // Symmetric eigenproblems.
  auto uploUpper = [](Interpreter &in, const std::string &uplo) {
    if (uplo != "L" && uplo != "U")
      in.fail("CUVIL-E-IMPORT-RAISE", "UPLO must be 'L' or 'U', got '" + uplo + "'");
    return uplo == "U";
  };
  t["aten::linalg_eigh"] = [uploUpper](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    std::vector<Value> r = kernel(in, "eigh", {matrix(in, a.t("self"), "linalg.eigh")}, {uploUpper(in, a.s("UPLO"))}, 2);
    return IValue::makeTuple({ret(r[0]), ret(r[1])});
  };
  t["aten::linalg_eigvalsh"] = [uploUpper](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    return ret(kernel(in, "eigh", {matrix(in, a.t("self"), "linalg.eigvalsh")}, {uploUpper(in, a.s("UPLO"))}, 2)[0]);
  };
  t["aten::symeig"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value m = matrix(in, a.t("self"), "symeig");
    std::vector<Value> r = kernel(in, "eigh", {m}, {a.b("upper")}, 2);
    Value v = a.b("eigenvectors") ? r[1] : splat(in, {0}, dtypeOf(m), IValue::floating(0.0));
    return IValue::makeTuple({ret(r[0]), ret(v)});
  };
  // SVD and what comes of singular values.
  t["aten::linalg_svd"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    SVD d = svd(in, matrix(in, a.t("A"), "linalg.svd"), a.b("full_matrices"));
    return IValue::makeTuple({ret(d.u), ret(d.s), ret(d.vh)});
  };
  t["aten::svd"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value m = matrix(in, a.t("self"), "svd");
    SVD d = svd(in, m, !a.b("some"));
    if (!a.b("compute_uv")) { // zero-filled U and V of the full shapes
      SVD full = svd(in, m, true);
      return IValue::makeTuple({ret(splat(in, shapeOf(full.u), dtypeOf(m), IValue::floating(0.0))), ret(d.s),
                                ret(splat(in, shapeOf(full.vh), dtypeOf(m), IValue::floating(0.0)))});
    }
    return IValue::makeTuple({ret(d.u), ret(d.s), ret(transposeLast(in, d.vh))});
  };
  t["aten::linalg_svdvals"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    return ret(svd(in, matrix(in, a.t("A"), "linalg.svdvals"), false).s);
  };
  t["aten::linalg_pinv"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value m = matrix(in, a.t("self"), "linalg.pinv");
    Tol atol = optF(a, b, "atol"), rtol = optF(a, b, "rtol");
    if (b.has("rcond")) {
      rtol = optF(a, b, "rcond");
      atol = Tol(0.0);
    }
    return ret(pinv(in, m, atol, rtol, a.b("hermitian")));
  };
  t["aten::pinverse"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    return ret(pinv(in, matrix(in, a.t("self"), "pinverse"), 0.0, a.f("rcond"), false));
  };
  t["aten::linalg_matrix_rank"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value m = matrix(in, a.t(b.has("input") ? "input" : "self"), "linalg.matrix_rank");
    Tol atol = optF(a, b, "atol"), rtol = optF(a, b, "rtol");
    if (b.has("tol")) {
      atol = optF(a, b, "tol");
      rtol = atol.given() ? Tol(0.0) : Tol();
    }
    return ret(matrixRank(in, m, atol, rtol, a.b("hermitian")));
  };
  t["aten::linalg_matrix_norm"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value m = a.t("self");
    if (auto d = a.dtype("dtype"))
      m = cast(in, m, *d);
    return ret(matrixNorm(in, matrix(in, m, "linalg.matrix_norm"), a["ord"], a.ints("dim"), a.b("keepdim")));
  };
  t["aten::nuclear_norm"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    std::vector<int64_t> dims = b.has("dim") ? a.ints("dim") : std::vector<int64_t>{-2, -1};
    return ret(matrixNorm(in, matrix(in, a.t("self"), "nuclear_norm"), IValue::string("nuc"), dims, a.b("keepdim")));
  };
  t["aten::linalg_norm"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = a.t("self");
    if (auto d = a.dtype("dtype"))
      x = cast(in, x, *d);
    const IValue &ord = a["ord"];
    std::vector<int64_t> dims;
    if (!a.none("dim"))
      dims = a.ints("dim");
    bool matrixCase = dims.size() == 2 || (dims.empty() && !ord.isNone() && rankOf(x) == 2) || ord.is(K::Str);
    if (matrixCase) {
      if (dims.empty())
        dims = {-2, -1};
      return ret(matrixNorm(in, matrix(in, x, "linalg.norm"), ord.isNone() ? IValue::string("fro") : ord, dims,
                            a.b("keepdim")));
    }
    // A vector norm: over `dim`, or over everything flattened.
    std::vector<IValue> args{ret(x), ord.isNone() ? IValue::floating(2.0) : ord,
                             dims.empty() ? IValue::none() : a["dim"], a["keepdim"]};
    return in.callOperator("aten::linalg_vector_norm", args, {});
  };
}

} // namespace

void registerLinalgOpHandlers(std::map<std::string, OpHandler> &table) { registerLinalgHandlers(table); }

} // namespace cuvil::torchscript
