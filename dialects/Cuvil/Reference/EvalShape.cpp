//===- EvalShape.cpp - cuvil.shape/tensor and constant reference ----------===//
//
// Data movement: elements are copied bytewise, so every dtype is exact.
//
//===----------------------------------------------------------------------===//
#include "dialects/Cuvil/IR/CuvilOps.h"
#include "dialects/Cuvil/IR/ResizeCoordinates.h"
#include "dialects/Cuvil/Reference/EvalHelpers.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>

namespace mlir::cuvil::reference {
namespace {

/// out[i] = in[srcIndex(i)], bytewise.
template <typename Fn>
FailureOr<Tensor> gatherBytes(Operation *op, const Tensor &in, Shape outShape,
                              Fn &&srcIndex) {
  FailureOr<Tensor> out = allocate(op, in.dtype(), std::move(outShape));
  if (failed(out))
    return failure();
  size_t esz = ::cuvil::dtypeSize(in.dtype());
  forEachIndex(out->shape(), [&](const Shape &idx, int64_t flat) {
    std::memcpy(out->data() + flat * esz, in.data() + srcIndex(idx) * esz, esz);
  });
  return out;
}

FailureOr<Tensor> permute(Operation *op, const Tensor &x, ArrayRef<int64_t> dims) {
  Shape outShape, inStrides = stridesOf(x.shape());
  for (int64_t d : dims)
    outShape.push_back(x.dim(d));
  return gatherBytes(op, x, outShape, [&](const Shape &idx) {
    int64_t src = 0;
    for (size_t i = 0; i < dims.size(); ++i)
      src += idx[i] * inStrides[dims[i]];
    return src;
  });
}

FailureOr<Tensor> evalReshape(ReshapeOp op, ArrayRef<Tensor> a) {
  const Tensor &x = a[0];
  Shape shape(op.getShape().begin(), op.getShape().end());
  int64_t known = 1, inferred = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1)
      inferred = i;
    else
      known *= shape[i];
  }
  if (inferred >= 0) {
    if (known == 0 || x.numElements() % known != 0)
      return op.emitOpError() << "cannot infer -1 for " << x.numElements()
                              << " runtime elements";
    shape[inferred] = x.numElements() / known;
  } else if (known != x.numElements()) {
    return op.emitOpError() << "runtime input " << x.describe()
                            << " has a different element count than the "
                               "target shape";
  }
  return x.reshaped(shape);
}

FailureOr<Tensor> evalSqueeze(SqueezeOp op, ArrayRef<Tensor> a) {
  const Tensor &x = a[0];
  if (x.rank() == 0)
    return x;
  for (int64_t d : op.getDims())
    if (x.dim(d) != 1)
      return op.emitOpError() << "runtime dimension " << d << " has size "
                              << x.dim(d) << ", not 1";
  SmallVector<int64_t> shape = reducedShape(x.shape(), op.getDims(), false);
  return x.reshaped(Shape(shape.begin(), shape.end()));
}

/// `x` broadcast (NumPy, right-aligned) to `outShape`, already checked.
FailureOr<Tensor> broadcastTo(Operation *op, const Tensor &x, const Shape &outShape) {
  int64_t rank = static_cast<int64_t>(outShape.size());
  std::vector<int64_t> map = broadcastIndexMap(outShape, x.shape());
  return gatherBytes(op, x, outShape, [&](const Shape &idx) {
    int64_t flat = 0;
    for (int64_t i = 0; i < rank; ++i)
      flat = flat * outShape[i] + idx[i];
    return map[flat];
  });
}

FailureOr<Tensor> evalExpand(ExpandOp op, ArrayRef<Tensor> a) {
  const Tensor &x = a[0];
  ArrayRef<int64_t> target = op.getShape();
  int64_t rank = target.size(), offset = rank - x.rank();
  Shape outShape(rank);
  for (int64_t i = 0; i < rank; ++i) {
    int64_t j = i - offset;
    int64_t size = j >= 0 ? x.dim(j) : 1;
    outShape[i] = target[i] == -1 ? size : target[i];
    if (j >= 0 && size != 1 && size != outShape[i])
      return op.emitOpError() << "runtime dimension " << j << " of size "
                              << size << " cannot expand to " << outShape[i];
  }
  return broadcastTo(op, x, outShape);
}

FailureOr<Tensor> evalExpandDynamic(ExpandDynamicOp op, ArrayRef<Tensor> a) {
  const Tensor &x = a[0];
  int64_t rank = static_cast<int64_t>(a.size()) - 1, offset = rank - x.rank();
  Shape outShape(rank);
  for (int64_t i = 0; i < rank; ++i) {
    int64_t target = a[i + 1].getInt(0), j = i - offset;
    if (target < 0)
      return op.emitOpError() << "run-time size " << i << " is negative (" << target << ")";
    outShape[i] = target;
    if (j >= 0 && x.dim(j) != 1 && x.dim(j) != target)
      return op.emitOpError() << "runtime dimension " << j << " of size " << x.dim(j)
                              << " cannot expand to " << target;
  }
  if (::cuvil::Result<int64_t> n = ::cuvil::checkedNumElements(outShape, x.dtype()); !n)
    return op.emitOpError() << "result: " << n.error().message;
  return broadcastTo(op, x, outShape);
}

FailureOr<Tensor> evalIota(IotaOp op, ArrayRef<Tensor> a) {
  int64_t n = a[0].getInt(0);
  if (n < 0)
    return op.emitOpError() << "upper bound and larger bound inconsistent with step sign "
                               "(a run-time count of "
                            << n << ")";
  FailureOr<Tensor> out = allocate(op, DType::Int64, {n});
  if (failed(out))
    return failure();
  for (int64_t k = 0; k < n; ++k)
    out->setInt(k, k);
  return out;
}

FailureOr<Tensor> evalConcat(ConcatOp op, ArrayRef<Tensor> a) {
  int64_t dim = op.getDim();
  Shape outShape = a[0].shape();
  outShape[dim] = 0;
  for (const Tensor &t : a) {
    for (int64_t d = 0; d < t.rank(); ++d)
      if (d != dim && t.dim(d) != a[0].dim(d))
        return op.emitOpError() << "runtime operand shapes " << a[0].describe()
                                << " and " << t.describe()
                                << " differ outside dimension " << dim;
    outShape[dim] += t.dim(dim);
  }
  FailureOr<Tensor> out = allocate(op, a[0].dtype(), outShape);
  if (failed(out))
    return failure();
  // Copy contiguous blocks: outer x (size_i * inner) per operand.
  size_t esz = ::cuvil::dtypeSize(a[0].dtype());
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d)
    outer *= outShape[d];
  for (int64_t d = dim + 1; d < static_cast<int64_t>(outShape.size()); ++d)
    inner *= outShape[d];
  int64_t rowOut = outShape[dim] * inner, offset = 0;
  for (const Tensor &t : a) {
    int64_t row = t.dim(dim) * inner;
    for (int64_t o = 0; o < outer; ++o)
      std::memcpy(out->data() + (o * rowOut + offset) * esz,
                  t.data() + o * row * esz, row * esz);
    offset += row;
  }
  return out;
}

FailureOr<Tensor> evalSlice(SliceOp op, ArrayRef<Tensor> a) {
  const Tensor &x = a[0];
  int64_t dim = op.getDim(), step = op.getStep(), start = 0;
  Shape outShape = x.shape();
  outShape[dim] = sliceLength(x.dim(dim), op.getStart(), op.getEnd(), step, &start);
  Shape strides = stridesOf(x.shape());
  return gatherBytes(op, x, outShape, [&](const Shape &idx) {
    int64_t src = 0;
    for (size_t d = 0; d < idx.size(); ++d)
      src += (int64_t(d) == dim ? start + idx[d] * step : idx[d]) * strides[d];
    return src;
  });
}

FailureOr<Tensor> evalSliceTo(SliceToOp op, ArrayRef<Tensor> a) {
  const Tensor &x = a[0];
  int64_t dim = op.getDim(), size = x.dim(dim), end = a[1].getInt(0);
  if (end < 0)
    end += size;
  end = std::clamp<int64_t>(end, 0, size);
  Shape outShape = x.shape();
  outShape[dim] = end;
  Shape strides = stridesOf(x.shape());
  return gatherBytes(op, x, outShape, [&](const Shape &idx) {
    int64_t src = 0;
    for (size_t d = 0; d < idx.size(); ++d)
      src += idx[d] * strides[d];
    return src;
  });
}

FailureOr<Tensor> evalSelect(SelectOp op, ArrayRef<Tensor> a) {
  const Tensor &x = a[0];
  int64_t dim = op.getDim(), index = op.getIndex(), size = x.dim(dim);
  if (index < -size || index >= size)
    return op.emitOpError() << "index " << index << " is out of range for "
                            << "runtime size " << size;
  if (index < 0)
    index += size;
  Shape outShape = x.shape();
  outShape.erase(outShape.begin() + dim);
  Shape strides = stridesOf(x.shape());
  return gatherBytes(op, x, outShape, [&](const Shape &idx) {
    int64_t src = index * strides[dim];
    for (size_t d = 0; d < idx.size(); ++d)
      src += idx[d] * strides[int64_t(d) < dim ? d : d + 1];
    return src;
  });
}

/// Resolves an index (negative counts from the end); fails when out of range.
FailureOr<int64_t> resolveIndex(Operation *op, int64_t i, int64_t size,
                                StringRef what) {
  if (i < -size || i >= size)
    return op->emitOpError() << what << " index " << i
                             << " is out of range for size " << size;
  return i < 0 ? i + size : i;
}

FailureOr<Tensor> evalIndexSelect(IndexSelectOp op, ArrayRef<Tensor> a) {
  const Tensor &x = a[0], &index = a[1];
  int64_t dim = op.getDim();
  std::vector<int64_t> ids;
  for (int64_t i = 0; i < index.numElements(); ++i) {
    FailureOr<int64_t> r = resolveIndex(op, index.getInt(i), x.dim(dim), "index_select");
    if (failed(r))
      return failure();
    ids.push_back(*r);
  }
  Shape outShape = x.shape();
  outShape[dim] = static_cast<int64_t>(ids.size());
  Shape strides = stridesOf(x.shape());
  return gatherBytes(op, x, outShape, [&](const Shape &idx) {
    int64_t src = 0;
    for (size_t d = 0; d < idx.size(); ++d)
      src += (int64_t(d) == dim ? ids[idx[d]] : idx[d]) * strides[d];
    return src;
  });
}

/// Scatter in index order: floats combine in double, integers in int64
/// (wrapping when stored), as the element-wise ops do.
FailureOr<Tensor> evalScatter(ScatterOp op, ArrayRef<Tensor> a) {
  const Tensor &x = a[0], &index = a[1], &src = a[2];
  int64_t rank = x.rank(), dim = rank ? op.getDim() : 0;
  for (int64_t d = 0; d < rank; ++d)
    if (index.dim(d) > src.dim(d) || (d != dim && index.dim(d) > x.dim(d)))
      return op.emitOpError() << "runtime index shape " << index.describe()
                              << " exceeds src " << src.describe() << " or input " << x.describe();
  ScatterReduce reduce = op.getReduce();
  bool includeSelf = op.getIncludeSelf(), isFloat = ::cuvil::isFloat(x.dtype());
  Tensor out = x; // a copy
  int64_t n = x.numElements();
  std::vector<double> f(n);
  std::vector<int64_t> i(n), count(n, includeSelf ? 1 : 0);
  for (int64_t k = 0; k < n; ++k) {
    if (isFloat)
      f[k] = x.getDouble(k);
    else
      i[k] = x.getInt(k);
  }
  Shape xStrides = stridesOf(x.shape()), srcStrides = stridesOf(src.shape());
  int64_t size = rank ? x.dim(dim) : 1;
  std::vector<bool> touched(n, false);
  Shape at(rank, 0);
  for (int64_t k = 0; k < index.numElements(); ++k) {
    int64_t rem = k, target = 0, from = 0;
    for (int64_t d = rank - 1; d >= 0; --d) {
      at[d] = rem % index.dim(d);
      rem /= index.dim(d);
    }
    int64_t j = index.getInt(k);
    if (j < -size || j >= size)
      return op.emitOpError() << "scatter index " << j << " is out of range for size " << size;
    if (j < 0)
      j += size;
    for (int64_t d = 0; d < rank; ++d) {
      target += (d == dim ? j : at[d]) * xStrides[d];
      from += at[d] * srcStrides[d];
    }
    bool first = !includeSelf && !touched[target];
    touched[target] = true;
    ++count[target];
    if (isFloat) {
      double v = src.getDouble(from), &t = f[target];
      switch (reduce) {
      case ScatterReduce::None: t = v; break;
      case ScatterReduce::Sum:
      case ScatterReduce::Mean: t = first ? v : t + v; break;
      case ScatterReduce::Prod: t = first ? v : t * v; break;
      case ScatterReduce::Amax: t = first || std::isnan(v) ? v : std::isnan(t) ? t : std::max(t, v); break;
      case ScatterReduce::Amin: t = first || std::isnan(v) ? v : std::isnan(t) ? t : std::min(t, v); break;
      }
    } else {
      int64_t v = src.getInt(from), &t = i[target];
      switch (reduce) {
      case ScatterReduce::None: t = v; break;
      case ScatterReduce::Sum:
      case ScatterReduce::Mean: t = first ? v : int64_t(uint64_t(t) + uint64_t(v)); break;
      case ScatterReduce::Prod: t = first ? v : int64_t(uint64_t(t) * uint64_t(v)); break;
      case ScatterReduce::Amax: t = first ? v : std::max(t, v); break;
      case ScatterReduce::Amin: t = first ? v : std::min(t, v); break;
      }
    }
  }
  for (int64_t k = 0; k < n; ++k) {
    if (reduce == ScatterReduce::Mean && count[k] > 0) {
      if (isFloat)
        f[k] /= double(count[k]);
      else
        i[k] = i[k] >= 0 ? i[k] / count[k] : -((-i[k] + count[k] - 1) / count[k]); // floor
    }
    if (isFloat)
      out.setDouble(k, f[k]);
    else
      out.setInt(k, i[k]);
  }
  return out;
}

/// Stable sort of each line along dim; NaN above every number.
FailureOr<SmallVector<Tensor>> evalSort(SortOp op, ArrayRef<Tensor> a) {
  const Tensor &x = a[0];
  int64_t rank = x.rank(), dim = rank ? op.getDim() : 0;
  int64_t len = rank ? x.dim(dim) : 1, inner = 1, outer = 1;
  for (int64_t d = 0; d < rank; ++d) {
    if (d < dim)
      outer *= x.dim(d);
    else if (d > dim)
      inner *= x.dim(d);
  }
  bool desc = op.getDescending(), isFloat = ::cuvil::isFloat(x.dtype());
  Tensor values(x.dtype(), x.shape()), indices(DType::Int64, x.shape());
  size_t esz = ::cuvil::dtypeSize(x.dtype());
  std::vector<int64_t> idx(len);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      int64_t start = o * len * inner + i;
      for (int64_t k = 0; k < len; ++k)
        idx[k] = k;
      std::stable_sort(idx.begin(), idx.end(), [&](int64_t p, int64_t q) {
        int64_t ep = start + p * inner, eq = start + q * inner;
        if (isFloat) {
          double u = x.getDouble(ep), v = x.getDouble(eq);
          bool un = std::isnan(u), vn = std::isnan(v);
          if (un || vn)
            return desc ? (un && !vn) : (!un && vn);
          return desc ? u > v : u < v;
        }
        int64_t u = x.getInt(ep), v = x.getInt(eq);
        return desc ? u > v : u < v;
      });
      for (int64_t k = 0; k < len; ++k) {
        int64_t to = start + k * inner, from = start + idx[k] * inner;
        std::memcpy(values.data() + to * esz, x.data() + from * esz, esz);
        indices.setInt(to, idx[k]);
      }
    }
  return SmallVector<Tensor>{values, indices};
}

FailureOr<Tensor> evalGather(GatherOp op, ArrayRef<Tensor> a) {
  const Tensor &x = a[0], &index = a[1];
  int64_t dim = op.getDim();
  for (int64_t d = 0; d < x.rank(); ++d)
    if (d != dim && index.dim(d) > x.dim(d))
      return op.emitOpError() << "runtime index size " << index.dim(d)
                              << " exceeds input size " << x.dim(d)
                              << " in dimension " << d;
  Shape strides = stridesOf(x.shape());
  bool ok = true;
  FailureOr<Tensor> out =
      gatherBytes(op, x, index.shape(), [&](const Shape &idx) -> int64_t {
        int64_t flat = 0;
        for (size_t d = 0; d < idx.size(); ++d)
          flat = flat * index.dim(d) + idx[d];
        int64_t i = index.getInt(flat), size = x.rank() == 0 ? 1 : x.dim(dim);
        if (i < -size || i >= size) {
          ok = false;
          return 0;
        }
        if (i < 0)
          i += size;
        int64_t src = 0;
        for (size_t d = 0; d < idx.size(); ++d)
          src += (int64_t(d) == dim ? i : idx[d]) * strides[d];
        return src;
      });
  if (!ok)
    return op.emitOpError() << "gather index out of range for dimension "
                            << dim;
  return out;
}

FailureOr<Tensor> evalEmbedding(EmbeddingOp op, ArrayRef<Tensor> a) {
  const Tensor &w = a[0], &ids = a[1];
  int64_t num = w.dim(0), width = w.dim(1);
  Shape outShape = ids.shape();
  outShape.push_back(width);
  FailureOr<Tensor> out = allocate(op, w.dtype(), outShape);
  if (failed(out))
    return failure();
  size_t row = width * ::cuvil::dtypeSize(w.dtype());
  for (int64_t i = 0; i < ids.numElements(); ++i) {
    int64_t id = ids.getInt(i);
    if (id < 0 || id >= num)
      return op.emitOpError() << "embedding index " << id
                              << " is out of range for " << num << " rows";
    std::memcpy(out->data() + i * row, w.data() + id * row, row);
  }
  return out;
}

FailureOr<Tensor> evalPad(PadOp op, ArrayRef<Tensor> a) {
  const Tensor &x = a[0];
  ArrayRef<int64_t> pad = op.getPad();
  PadMode mode = op.getMode();
  int64_t rank = x.rank();
  Shape before(rank, 0), outShape = x.shape();
  for (size_t p = 0; p < pad.size() / 2; ++p) {
    int64_t d = rank - 1 - p, size = x.dim(d);
    int64_t lo = pad[2 * p], hi = pad[2 * p + 1];
    if ((mode == PadMode::Reflect && (lo >= size || hi >= size)) ||
        (mode == PadMode::Replicate && size == 0) ||
        (mode == PadMode::Circular && (lo > size || hi > size)))
      return op.emitOpError() << "padding (" << lo << ", " << hi
                              << ") is invalid for runtime size " << size;
    before[d] = lo;
    outShape[d] = size + lo + hi;
  }
  FailureOr<Tensor> out = allocate(op, x.dtype(), outShape);
  if (failed(out))
    return failure();
  Tensor fill = Tensor::fromDoubles(x.dtype(), {}, {op.getValue().convertToDouble()});
  Shape strides = stridesOf(x.shape());
  size_t esz = ::cuvil::dtypeSize(x.dtype());
  forEachIndex(outShape, [&](const Shape &idx, int64_t flat) {
    int64_t src = 0;
    bool inside = true;
    for (int64_t d = 0; d < rank; ++d) {
      int64_t i = idx[d] - before[d], size = x.dim(d);
      if (i < 0 || i >= size) {
        switch (mode) {
        case PadMode::Constant:
          inside = false;
          break;
        case PadMode::Reflect:
          i = i < 0 ? -i : 2 * (size - 1) - i;
          break;
        case PadMode::Replicate:
          i = i < 0 ? 0 : size - 1;
          break;
        case PadMode::Circular:
          i = ((i % size) + size) % size;
          break;
        }
      }
      src += i * strides[d];
    }
    const uint8_t *from = inside ? x.data() + src * esz : fill.data();
    std::memcpy(out->data() + flat * esz, from, esz);
  });
  return out;
}

FailureOr<Tensor> evalResize(ResizeOp op, ArrayRef<Tensor> a) {
  const Tensor &x = a[0];
  int64_t s = x.rank() - 2;
  ArrayRef<int64_t> size = op.getSize();
  std::optional<ArrayRef<double>> scales = op.getScales();
  ResizeMode mode = op.getMode();
  Shape inSp(x.shape().begin() + 2, x.shape().end());
  Shape outSp(size.begin(), size.end());
  Shape outShape = {x.dim(0), x.dim(1)};
  outShape.insert(outShape.end(), outSp.begin(), outSp.end());
  for (int64_t d = 0; d < s; ++d)
    if (inSp[d] == 0)
      return op.emitOpError() << "spatial dimension " << d << " of the input is empty";
  FailureOr<Tensor> out = allocate(op, x.dtype(), outShape);
  if (failed(out))
    return failure();
  std::vector<ResizeAxis> axes;
  for (int64_t d = 0; d < s; ++d) {
    std::optional<double> scale;
    if (scales)
      scale = (*scales)[d];
    axes.push_back(x.dtype() == DType::Float64
                       ? resizeAxis<double>(mode, inSp[d], outSp[d], scale, op.getAlignCorners())
                       : resizeAxis<float>(mode, inSp[d], outSp[d], scale, op.getAlignCorners()));
  }
  int64_t planes = x.dim(0) * x.dim(1), inPlane = numElements(inSp),
          outPlane = numElements(outSp);
  Shape inStrides = stridesOf(inSp);
  if (mode != ResizeMode::Linear) {
    // Nearest: copy elements, whatever their type.
    size_t esz = ::cuvil::dtypeSize(x.dtype());
    for (int64_t pl = 0; pl < planes; ++pl)
      forEachIndex(outSp, [&](const Shape &o, int64_t flat) {
        int64_t off = 0;
        for (int64_t d = 0; d < s; ++d)
          off += axes[d].lo[o[d]] * inStrides[d];
        std::memcpy(out->data() + (pl * outPlane + flat) * esz,
                    x.data() + (pl * inPlane + off) * esz, esz);
      });
    return out;
  }
  std::vector<double> xv = x.toDoubles();
  for (int64_t pl = 0; pl < planes; ++pl)
    forEachIndex(outSp, [&](const Shape &o, int64_t flat) {
      // Sum over the 2^s corners of the cell around the source point.
      double acc = 0;
      for (int64_t corner = 0; corner < (int64_t(1) << s); ++corner) {
        double w = 1;
        int64_t off = 0;
        for (int64_t d = 0; d < s; ++d) {
          bool high = (corner >> d) & 1;
          const ResizeAxis &ax = axes[d];
          w *= high ? ax.wHi[o[d]] : ax.wLo[o[d]];
          off += (high ? ax.hi[o[d]] : ax.lo[o[d]]) * inStrides[d];
        }
        acc += w * xv[pl * inPlane + off];
      }
      out->setDouble(pl * outPlane + flat, acc);
    });
  return out;
}

FailureOr<Tensor> evalReshapeDynamic(ReshapeDynamicOp op, ArrayRef<Tensor> a) {
  const Tensor &x = a[0];
  std::vector<int64_t> shape = a[1].toInts();
  int64_t known = 1, inferred = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1 && inferred < 0) {
      inferred = static_cast<int64_t>(i);
      continue;
    }
    if (shape[i] < 0 || __builtin_mul_overflow(known, shape[i], &known))
      return op.emitOpError() << "run-time shape has an invalid size " << shape[i];
  }
  if (inferred >= 0) {
    if (known == 0 || x.numElements() % known != 0)
      return op.emitOpError() << "cannot infer the -1 of the run-time shape for "
                              << x.numElements() << " elements";
    shape[inferred] = x.numElements() / known;
  } else if (known != x.numElements()) {
    return op.emitOpError() << "run-time shape has " << known << " elements, the input "
                            << x.describe() << " has " << x.numElements();
  }
  return x.reshaped(shape);
}

} // namespace

void registerShapeEvaluators(OpEvaluators &e) {
  e.add<ReshapeDynamicOp>(evalReshapeDynamic);
  e.add<DimOp>([](DimOp op, ArrayRef<Tensor> a) -> FailureOr<Tensor> {
    return Tensor::fromDoubles(DType::Int64, {}, {static_cast<double>(a[0].dim(op.getDim()))});
  });
  e.add<ResizeOp>(evalResize);
  e.add<ConstantOp>([](ConstantOp op, ArrayRef<Tensor>) {
    return tensorFromAttr(op.getValue(), op.getLoc());
  });
  e.add<CastOp>([](CastOp op, ArrayRef<Tensor> a) -> FailureOr<Tensor> {
    return a[0].cast(resultDType(op));
  });
  e.add<ReshapeOp>(evalReshape);
  e.add<FlattenOp>([](FlattenOp op, ArrayRef<Tensor> a) -> FailureOr<Tensor> {
    const Tensor &x = a[0];
    if (x.rank() == 0)
      return x.reshaped({1});
    Shape out(x.shape().begin(), x.shape().begin() + op.getStartDim());
    int64_t merged = 1;
    for (int64_t d = op.getStartDim(); d <= int64_t(op.getEndDim()); ++d)
      merged *= x.dim(d);
    out.push_back(merged);
    out.insert(out.end(), x.shape().begin() + op.getEndDim() + 1, x.shape().end());
    return x.reshaped(out);
  });
  e.add<SqueezeOp>(evalSqueeze);
  e.add<UnsqueezeOp>([](UnsqueezeOp op, ArrayRef<Tensor> a) -> FailureOr<Tensor> {
    Shape out = a[0].shape();
    out.insert(out.begin() + op.getDim(), 1);
    return a[0].reshaped(out);
  });
  e.add<PermuteOp>([](PermuteOp op, ArrayRef<Tensor> a) {
    return permute(op, a[0], op.getDims());
  });
  e.add<TransposeOp>([](TransposeOp op, ArrayRef<Tensor> a) -> FailureOr<Tensor> {
    if (a[0].rank() == 0)
      return a[0];
    SmallVector<int64_t> dims = llvm::to_vector(llvm::seq<int64_t>(0, a[0].rank()));
    std::swap(dims[op.getDim0()], dims[op.getDim1()]);
    return permute(op, a[0], dims);
  });
  e.add<ExpandOp>(evalExpand);
  e.add<ExpandDynamicOp>(evalExpandDynamic);
  e.add<IotaOp>(evalIota);
  e.add<ConcatOp>(evalConcat);
  e.add<SliceOp>(evalSlice);
  e.add<SliceToOp>(evalSliceTo);
  e.add<SelectOp>(evalSelect);
  e.add<IndexSelectOp>(evalIndexSelect);
  e.add<GatherOp>(evalGather);
  e.add<ScatterOp>(evalScatter);
  e.addMulti<SortOp>(evalSort);
  e.add<EmbeddingOp>(evalEmbedding);
  e.add<PadOp>(evalPad);
}

} // namespace mlir::cuvil::reference
