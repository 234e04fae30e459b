//===- LinalgKernels.cpp - The kernels of cuvil.linalg.kernel -------------===//
#include "dialects/Cuvil/IR/LinalgKernels.h"

#include "runtime/include/cuvil/kernel_abi.h"

#include "mlir/IR/Operation.h"

namespace mlir::cuvil {
namespace {

struct Shape {
  llvm::SmallVector<int64_t> batch;
  int64_t rows = 0, cols = 0; ///< the last two dims (cols only for vectors)
  Type element;
  int64_t batchCount() const {
    int64_t n = 1;
    for (int64_t d : batch)
      n *= d;
    return n;
  }
};

/// `t` as [batch..., rows, cols] (matrix) or [batch..., cols] (vector).
std::optional<Shape> split(Type t, bool matrix) {
  auto r = llvm::dyn_cast<RankedTensorType>(t);
  if (!r || !r.hasStaticShape() || r.getRank() < (matrix ? 2 : 1))
    return std::nullopt;
  Shape s;
  ArrayRef<int64_t> d = r.getShape();
  size_t tail = matrix ? 2 : 1;
  s.batch.assign(d.begin(), d.end() - tail);
  s.rows = matrix ? d[d.size() - 2] : 1;
  s.cols = d.back();
  s.element = r.getElementType();
  return s;
}

RankedTensorType make(ArrayRef<int64_t> batch, ArrayRef<int64_t> tail, Type element) {
  llvm::SmallVector<int64_t> shape(batch.begin(), batch.end());
  shape.append(tail.begin(), tail.end());
  return RankedTensorType::get(shape, element);
}

struct Kernel {
  const char *name;
  unsigned inputs, flags;
};
const Kernel kKernels[] = {{"lu", 1, 0},          {"cholesky", 1, 1},
                           {"triangular_solve", 2, 3}, {"geqrf", 1, 0},
                           {"householder_product", 2, 0}, {"ormqr", 3, 2},
                           {"eigh", 1, 1},        {"svd", 1, 1},
                           {"dft", 1, 1}};

} // namespace

LogicalResult inferLinalgKernelTypes(StringRef kernel, ArrayRef<int64_t> flags, TypeRange inputs,
                                     EmitErrorFn emitError, SmallVectorImpl<Type> &results) {
  const Kernel *k = nullptr;
  for (const Kernel &c : kKernels)
    if (kernel == c.name)
      k = &c;
  if (!k)
    return emitError() << "unknown kernel '" << kernel
                       << "' (lu, cholesky, triangular_solve, geqrf, householder_product, ormqr, "
                          "eigh, svd, dft)";
  if (inputs.size() != k->inputs || flags.size() != k->flags)
    return emitError() << "kernel '" << kernel << "' takes " << k->inputs << " input(s) and "
                       << k->flags << " flag(s), got " << inputs.size() << " and " << flags.size();
  std::optional<Shape> a = split(inputs[0], true);
  if (!a)
    return emitError() << "kernel '" << kernel << "' needs a statically shaped matrix (rank >= 2), got "
                       << inputs[0];
  for (Type t : inputs)
    if (llvm::cast<RankedTensorType>(t).getElementType() != a->element)
      return emitError() << "inputs must share one element type, got " << inputs;
  auto sameBatch = [&](const std::optional<Shape> &s, const char *what) -> LogicalResult {
    if (!s || s->batch != a->batch)
      return emitError() << what << " must have the batch dimensions of the first input";
    return success();
  };
  Type i32 = IntegerType::get(a->element.getContext(), 32);
  int64_t m = a->rows, n = a->cols, kmin = std::min(m, n);
  if (kernel == "lu") {
    results.push_back(inputs[0]);
    results.push_back(make(a->batch, {kmin}, i32));
    results.push_back(make(a->batch, {}, i32));
  } else if (kernel == "cholesky" || kernel == "eigh") {
    if (m != n)
      return emitError() << "kernel '" << kernel << "' needs square matrices, got " << inputs[0];
    if (kernel == "cholesky") {
      results.push_back(inputs[0]);
      results.push_back(make(a->batch, {}, i32));
    } else {
      results.push_back(make(a->batch, {n}, a->element));
      results.push_back(inputs[0]);
    }
  } else if (kernel == "triangular_solve") {
    std::optional<Shape> b = split(inputs[1], true);
    if (failed(sameBatch(b, "b")))
      return failure();
    if (m != n || (flags[1] ? b->rows : b->cols) != n)
      return emitError() << "triangular_solve: a must be square and match b's "
                         << (flags[1] ? "rows" : "columns") << ", got " << inputs;
    results.push_back(inputs[1]);
  } else if (kernel == "geqrf") {
    results.push_back(inputs[0]);
    results.push_back(make(a->batch, {kmin}, a->element));
  } else if (kernel == "householder_product") {
    std::optional<Shape> tau = split(inputs[1], false);
    if (failed(sameBatch(tau, "tau")))
      return failure();
    if (!(m >= n && n >= tau->cols))
      return emitError() << "householder_product needs m >= n >= k, got " << inputs;
    results.push_back(inputs[0]);
  } else if (kernel == "ormqr") {
    std::optional<Shape> tau = split(inputs[1], false), c = split(inputs[2], true);
    if (failed(sameBatch(tau, "tau")) || failed(sameBatch(c, "c")))
      return failure();
    int64_t nq = flags[0] ? c->rows : c->cols;
    if (m != nq || tau->cols > std::min(nq, n))
      return emitError() << "ormqr: v must have " << nq << " rows and at least k columns, got " << inputs;
    results.push_back(inputs[2]);
  } else if (kernel == "dft") {
    if (n != 2)
      return emitError() << "kernel 'dft' needs (real, imaginary) pairs [.., n, 2], got " << inputs[0];
    results.push_back(inputs[0]);
  } else { // svd
    bool full = flags[0];
    results.push_back(make(a->batch, {m, full ? m : kmin}, a->element));
    results.push_back(make(a->batch, {kmin}, a->element));
    results.push_back(make(a->batch, {full ? n : kmin, n}, a->element));
  }
  return success();
}

LinalgKernelCall describeLinalgKernelCall(StringRef kernel, ArrayRef<int64_t> flags, TypeRange inputs) {
  Shape a = *split(inputs[0], true);
  LinalgKernelCall c;
  c.symbol = ("cuvil_rt_" + kernel + (a.element.isF32() ? "_f32" : "_f64")).str();
  int64_t b = a.batchCount(), m = a.rows, n = a.cols;
  if (kernel == "lu") {
    c.params = {b, m, n};
    c.scratchDoubles = CUVIL_LU_SCRATCH(m, n);
  } else if (kernel == "cholesky") {
    c.params = {b, n, flags[0]};
    c.scratchDoubles = CUVIL_CHOLESKY_SCRATCH(n);
  } else if (kernel == "triangular_solve") {
    Shape rhs = *split(inputs[1], true);
    int64_t k = flags[1] ? rhs.cols : rhs.rows;
    c.params = {b, n, k, flags[0], flags[1], flags[2]};
    c.scratchDoubles = CUVIL_TRIANGULAR_SOLVE_SCRATCH(n, k);
  } else if (kernel == "geqrf") {
    c.params = {b, m, n};
    c.scratchDoubles = CUVIL_GEQRF_SCRATCH(m, n);
  } else if (kernel == "householder_product") {
    int64_t k = split(inputs[1], false)->cols;
    c.params = {b, m, n, k};
    c.scratchDoubles = CUVIL_HOUSEHOLDER_PRODUCT_SCRATCH(m, n);
  } else if (kernel == "ormqr") {
    Shape cs = *split(inputs[2], true);
    int64_t k = split(inputs[1], false)->cols;
    c.params = {b, cs.rows, cs.cols, k, flags[0], flags[1], n};
    c.scratchDoubles = CUVIL_ORMQR_SCRATCH(cs.rows, cs.cols, k, flags[0]);
  } else if (kernel == "eigh") {
    c.params = {b, n, flags[0], 1};
    c.scratchDoubles = CUVIL_EIGH_SCRATCH(n);
  } else if (kernel == "dft") {
    c.params = {b, m, flags[0]};
    c.scratchDoubles = cuvil_dft_scratch(m);
  } else {
    c.params = {b, m, n, flags[0], 1};
    c.scratchDoubles = CUVIL_SVD_SCRATCH(m, n, flags[0]);
  }
  return c;
}

} // namespace mlir::cuvil
