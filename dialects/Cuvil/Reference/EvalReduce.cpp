//===- EvalReduce.cpp - cuvil.reduce.* reference --------------------------===//
//
// Every input element is mapped to the output element it reduces into; the
// reductions accumulate per output element in double or int64.
//
//===----------------------------------------------------------------------===//
#include "dialects/Cuvil/IR/CuvilOps.h"
#include "dialects/Cuvil/Reference/EvalHelpers.h"

#include <cmath>
#include <limits>

namespace mlir::cuvil::reference {
namespace {

/// For each input element, the flat index of its output element when `dims`
/// are reduced; also the output shape (with keepdim) and group size.
struct ReductionMap {
  std::vector<int64_t> outIndex;
  Shape outShape;
  int64_t outCount = 1;
  int64_t groupSize = 1;
};

ReductionMap mapReduction(const Shape &shape, ArrayRef<int64_t> dims,
                          bool keepdim) {
  ReductionMap m;
  Shape kept; // output shape without keepdim, in input order
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    bool reduced = llvm::is_contained(dims, d);
    if (reduced) {
      m.groupSize *= shape[d];
      if (keepdim)
        m.outShape.push_back(1);
    } else {
      kept.push_back(shape[d]);
      m.outShape.push_back(shape[d]);
    }
  }
  m.outCount = numElements(kept);
  Shape keptStrides = stridesOf(kept);
  m.outIndex.resize(static_cast<size_t>(numElements(shape)));
  forEachIndex(shape, [&](const Shape &idx, int64_t flat) {
    int64_t o = 0, k = 0;
    for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d)
      if (!llvm::is_contained(dims, d))
        o += idx[d] * keptStrides[k++];
    m.outIndex[flat] = o;
  });
  return m;
}

enum class Kind { Sum, Prod, Mean, Max, Min, Any, All, Var, Std };

FailureOr<Tensor> reduce(Operation *op, const Tensor &x, ArrayRef<int64_t> dims,
                         bool keepdim, Kind kind, int64_t correction = 0) {
  ReductionMap m = mapReduction(x.shape(), dims, keepdim);
  DType outType = resultDType(op);
  FailureOr<Tensor> out = allocate(op, outType, m.outShape);
  if (failed(out))
    return failure();
  if ((kind == Kind::Max || kind == Kind::Min) && m.groupSize == 0 &&
      m.outCount > 0)
    return op->emitOpError() << "cannot reduce an empty dimension (no "
                                "identity for max/min)";
  int64_t n = x.numElements();
  bool isFloat = ::cuvil::isFloat(x.dtype());
  switch (kind) {
  case Kind::Sum:
  case Kind::Prod: {
    bool prod = kind == Kind::Prod;
    if (::cuvil::isFloat(outType)) {
      std::vector<double> acc(m.outCount, prod ? 1.0 : 0.0);
      for (int64_t i = 0; i < n; ++i)
        acc[m.outIndex[i]] = prod ? acc[m.outIndex[i]] * x.getDouble(i)
                                  : acc[m.outIndex[i]] + x.getDouble(i);
      for (int64_t o = 0; o < m.outCount; ++o)
        out->setDouble(o, acc[o]);
    } else {
      std::vector<uint64_t> acc(m.outCount, prod ? 1 : 0); // wraps
      for (int64_t i = 0; i < n; ++i)
        acc[m.outIndex[i]] = prod ? acc[m.outIndex[i]] * uint64_t(x.getInt(i))
                                  : acc[m.outIndex[i]] + uint64_t(x.getInt(i));
      for (int64_t o = 0; o < m.outCount; ++o)
        out->setInt(o, int64_t(acc[o]));
    }
    return out;
  }
  case Kind::Mean:
  case Kind::Var:
  case Kind::Std: {
    std::vector<double> sum(m.outCount, 0.0);
    for (int64_t i = 0; i < n; ++i)
      sum[m.outIndex[i]] += x.getDouble(i);
    std::vector<double> mean(m.outCount);
    for (int64_t o = 0; o < m.outCount; ++o)
      mean[o] = sum[o] / double(m.groupSize);
    if (kind == Kind::Mean) {
      for (int64_t o = 0; o < m.outCount; ++o)
        out->setDouble(o, mean[o]);
      return out;
    }
    std::vector<double> sq(m.outCount, 0.0);
    for (int64_t i = 0; i < n; ++i) {
      double dev = x.getDouble(i) - mean[m.outIndex[i]];
      sq[m.outIndex[i]] += dev * dev;
    }
    double denom = std::max<double>(0.0, double(m.groupSize - correction));
    for (int64_t o = 0; o < m.outCount; ++o) {
      double var = sq[o] / denom;
      out->setDouble(o, kind == Kind::Std ? std::sqrt(var) : var);
    }
    return out;
  }
  case Kind::Max:
  case Kind::Min: {
    bool isMax = kind == Kind::Max;
    if (isFloat) {
      double init = isMax ? -std::numeric_limits<double>::infinity()
                          : std::numeric_limits<double>::infinity();
      std::vector<double> acc(m.outCount, init);
      for (int64_t i = 0; i < n; ++i) {
        double v = x.getDouble(i), &a = acc[m.outIndex[i]];
        if (std::isnan(a))
          continue;
        if (std::isnan(v) || (isMax ? v > a : v < a))
          a = v;
      }
      for (int64_t o = 0; o < m.outCount; ++o)
        out->setDouble(o, acc[o]);
    } else {
      std::vector<int64_t> acc(m.outCount, isMax ? std::numeric_limits<int64_t>::min()
                                                 : std::numeric_limits<int64_t>::max());
      for (int64_t i = 0; i < n; ++i) {
        int64_t v = x.getInt(i), &a = acc[m.outIndex[i]];
        a = isMax ? std::max(a, v) : std::min(a, v);
      }
      for (int64_t o = 0; o < m.outCount; ++o)
        out->setInt(o, acc[o]);
    }
    return out;
  }
  case Kind::Any:
  case Kind::All: {
    bool isAll = kind == Kind::All;
    std::vector<uint8_t> acc(m.outCount, isAll ? 1 : 0);
    for (int64_t i = 0; i < n; ++i) {
      bool v = x.getDouble(i) != 0.0;
      uint8_t &a = acc[m.outIndex[i]];
      a = isAll ? (a && v) : (a || v);
    }
    for (int64_t o = 0; o < m.outCount; ++o)
      out->setInt(o, acc[o]);
    return out;
  }
  }
  return failure();
}

Shape toShape(llvm::SmallVector<int64_t> v) { return Shape(v.begin(), v.end()); }

/// argmax/argmin: first index of the extreme value; NaN counts as extreme.
template <typename OpTy>
FailureOr<Tensor> argReduce(OpTy op, const Tensor &x, bool isMax) {
  std::optional<int64_t> dim = op.getDim();
  Tensor in = x;
  SmallVector<int64_t> dims;
  if (!dim) {
    in = x.reshaped({x.numElements()});
    dims.push_back(0);
  } else if (x.rank() > 0) {
    dims.push_back(*dim);
  }
  int64_t size = dims.empty() ? 1 : in.dim(dims[0]);
  if (size == 0)
    return op.emitOpError() << "cannot take the arg-"
                            << (isMax ? "max" : "min")
                            << " of an empty dimension";
  ReductionMap m = mapReduction(in.shape(), dims, false);
  Shape reducedStrides = stridesOf(in.shape());
  int64_t stride = dims.empty() ? 1 : reducedStrides[dims[0]];
  std::vector<double> best(m.outCount);
  std::vector<int64_t> bestIdx(m.outCount, -1);
  for (int64_t i = 0; i < in.numElements(); ++i) {
    int64_t o = m.outIndex[i];
    int64_t pos = dims.empty() ? 0 : (i / stride) % size;
    double v = in.getDouble(i);
    if (bestIdx[o] < 0) {
      best[o] = v;
      bestIdx[o] = pos;
      continue;
    }
    if (std::isnan(best[o]))
      continue;
    if (std::isnan(v) || (isMax ? v > best[o] : v < best[o])) {
      best[o] = v;
      bestIdx[o] = pos;
    }
  }
  Shape outShape;
  auto resultType = llvm::cast<RankedTensorType>(op.getType());
  if (!dim)
    outShape.assign(resultType.getRank(), 1);
  else if (x.rank() > 0)
    outShape = toShape(reducedShape(x.shape(), {*dim}, op.getKeepdim()));
  FailureOr<Tensor> out = allocate(op, resultDType(op), outShape);
  if (failed(out))
    return failure();
  for (int64_t o = 0; o < m.outCount; ++o)
    out->setInt(o, bestIdx[o]);
  return out;
}


/// A running reduction along `dim`: each line (all other indices fixed) is
/// scanned in order; floats in double, integers in int64 (wrapping stores).
FailureOr<Tensor> scan(Operation *op, const Tensor &x, int64_t dim, ScanKind kind, bool indices) {
  int64_t rank = x.rank();
  int64_t len = rank ? x.dim(dim) : 1, inner = 1, outer = 1;
  for (int64_t d = 0; d < rank; ++d) {
    if (d < dim)
      outer *= x.dim(d);
    else if (d > dim)
      inner *= x.dim(d);
  }
  Tensor out(indices ? DType::Int64 : x.dtype(), x.shape());
  bool isFloat = ::cuvil::isFloat(x.dtype());
  bool isMax = kind == ScanKind::Max;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      double f = 0;
      int64_t n = 0, at = 0;
      for (int64_t k = 0; k < len; ++k) {
        int64_t p = (o * len + k) * inner + i;
        if (isFloat) {
          double v = x.getDouble(p);
          if (k == 0) {
            f = v;
          } else {
            switch (kind) {
            case ScanKind::Sum: f += v; break;
            case ScanKind::Prod: f *= v; break;
            case ScanKind::Max:
            case ScanKind::Min:
              // NaN wins and stays; ties move to the later index.
              if (std::isnan(v) || (!std::isnan(f) && (isMax ? v >= f : v <= f))) {
                f = v;
                at = k;
              }
              break;
            case ScanKind::LogSumExp: {
              double m = std::max(f, v);
              f = std::isinf(m) && f == v ? f : m + std::log1p(std::exp(-std::fabs(f - v)));
              break;
            }
            }
          }
          if (indices)
            out.setInt(p, at);
          else
            out.setDouble(p, f);
        } else {
          int64_t v = x.getInt(p);
          if (k == 0) {
            n = v;
          } else {
            switch (kind) {
            case ScanKind::Sum: n = int64_t(uint64_t(n) + uint64_t(v)); break;
            case ScanKind::Prod: n = int64_t(uint64_t(n) * uint64_t(v)); break;
            case ScanKind::Max:
            case ScanKind::Min:
              if (isMax ? v >= n : v <= n) {
                n = v;
                at = k;
              }
              break;
            case ScanKind::LogSumExp: return op->emitOpError() << "logsumexp of integers";
            }
          }
          out.setInt(p, indices ? at : n);
        }
      }
    }
  return out;
}

} // namespace

void registerReduceEvaluators(OpEvaluators &e) {
  e.add<CumulativeOp>([](CumulativeOp op, ArrayRef<Tensor> a) {
    return scan(op, a[0], a[0].rank() ? op.getDim() : 0, op.getKind(), false);
  });
  e.add<CumulativeIndexOp>([](CumulativeIndexOp op, ArrayRef<Tensor> a) {
    return scan(op, a[0], a[0].rank() ? op.getDim() : 0, op.getKind(), true);
  });
  auto add = [&e](auto tag, Kind kind) {
    using OpTy = decltype(tag);
    e.add<OpTy>([kind](OpTy op, ArrayRef<Tensor> a) {
      return reduce(op, a[0], op.getDims(), op.getKeepdim(), kind);
    });
  };
  add(SumOp(), Kind::Sum);
  add(ProdOp(), Kind::Prod);
  add(MeanOp(), Kind::Mean);
  add(MaxOp(), Kind::Max);
  add(MinOp(), Kind::Min);
  add(AnyOp(), Kind::Any);
  add(AllOp(), Kind::All);
  e.add<VarOp>([](VarOp op, ArrayRef<Tensor> a) {
    return reduce(op, a[0], op.getDims(), op.getKeepdim(), Kind::Var,
                  op.getCorrection());
  });
  e.add<StdOp>([](StdOp op, ArrayRef<Tensor> a) {
    return reduce(op, a[0], op.getDims(), op.getKeepdim(), Kind::Std,
                  op.getCorrection());
  });
  e.add<ArgmaxOp>([](ArgmaxOp op, ArrayRef<Tensor> a) { return argReduce(op, a[0], true); });
  e.add<ArgminOp>([](ArgminOp op, ArrayRef<Tensor> a) { return argReduce(op, a[0], false); });
}

} // namespace mlir::cuvil::reference
