//===- EvalNormPool.cpp - cuvil.norm/pool reference -----------------------===//
//
// Normalisation computes statistics in double with two passes (mean, then
// biased variance). Pooling follows PyTorch's window and divisor rules.
//
//===----------------------------------------------------------------------===//
#include "dialects/Cuvil/IR/CuvilOps.h"
#include "dialects/Cuvil/Reference/EvalHelpers.h"

#include <cmath>
#include <limits>

namespace mlir::cuvil::reference {
namespace {

/// Normalises `count` consecutive elements starting at `base` with stride 1.
void normaliseRange(const std::vector<double> &x, int64_t base, int64_t count,
                    double eps, std::vector<double> &out) {
  double mean = 0;
  for (int64_t i = 0; i < count; ++i)
    mean += x[base + i];
  mean /= count;
  double var = 0;
  for (int64_t i = 0; i < count; ++i)
    var += (x[base + i] - mean) * (x[base + i] - mean);
  var /= count;
  double inv = 1.0 / std::sqrt(var + eps);
  for (int64_t i = 0; i < count; ++i)
    out[base + i] = (x[base + i] - mean) * inv;
}

FailureOr<Tensor> evalBatchNorm(BatchNormOp op, ArrayRef<Tensor> a) {
  const Tensor &x = a[0];
  int64_t c = x.dim(1), inner = 1;
  for (int64_t d = 2; d < x.rank(); ++d)
    inner *= x.dim(d);
  std::vector<double> xv = x.toDoubles(), mean = a[1].toDoubles(),
                      var = a[2].toDoubles();
  std::vector<double> wv = op.getWeight() ? a[3].toDoubles() : std::vector<double>();
  std::vector<double> bv = op.getBias() ? a[op.getWeight() ? 4 : 3].toDoubles()
                                        : std::vector<double>();
  for (const std::vector<double> *p : {&mean, &var})
    if (static_cast<int64_t>(p->size()) != c)
      return op.emitOpError() << "runtime statistics have " << p->size()
                              << " entries for " << c << " channels";
  double eps = op.getEps().convertToDouble();
  FailureOr<Tensor> out = allocate(op, resultDType(op), x.shape());
  if (failed(out))
    return failure();
  for (int64_t i = 0; i < x.numElements(); ++i) {
    int64_t ch = (i / inner) % c;
    double y = (xv[i] - mean[ch]) / std::sqrt(var[ch] + eps);
    if (!wv.empty())
      y *= wv[ch];
    if (!bv.empty())
      y += bv[ch];
    out->setDouble(i, y);
  }
  return out;
}

FailureOr<Tensor> evalLayerNorm(LayerNormOp op, ArrayRef<Tensor> a) {
  const Tensor &x = a[0];
  int64_t m = 1;
  for (int64_t d : op.getNormalizedShape())
    m *= d;
  int64_t tail = 1;
  for (int64_t d = x.rank() - op.getNormalizedShape().size(); d < x.rank(); ++d)
    tail *= x.dim(d);
  if (tail != m)
    return op.emitOpError() << "runtime trailing dimensions hold " << tail
                            << " elements, normalized_shape " << m;
  std::vector<double> xv = x.toDoubles(), y(xv.size());
  std::vector<double> wv = op.getWeight() ? a[1].toDoubles() : std::vector<double>();
  std::vector<double> bv = op.getBias() ? a[op.getWeight() ? 2 : 1].toDoubles()
                                        : std::vector<double>();
  double eps = op.getEps().convertToDouble();
  for (int64_t base = 0; base < x.numElements(); base += m)
    normaliseRange(xv, base, m, eps, y);
  FailureOr<Tensor> out = allocate(op, resultDType(op), x.shape());
  if (failed(out))
    return failure();
  for (int64_t i = 0; i < x.numElements(); ++i) {
    double v = y[i];
    if (!wv.empty())
      v *= wv[i % m];
    if (!bv.empty())
      v += bv[i % m];
    out->setDouble(i, v);
  }
  return out;
}

FailureOr<Tensor> evalGroupNorm(GroupNormOp op, ArrayRef<Tensor> a) {
  const Tensor &x = a[0];
  int64_t n = x.dim(0), c = x.dim(1), groups = op.getNumGroups(), inner = 1;
  if (c % groups != 0)
    return op.emitOpError() << "runtime channels (" << c
                            << ") are not divisible by num_groups (" << groups
                            << ")";
  for (int64_t d = 2; d < x.rank(); ++d)
    inner *= x.dim(d);
  int64_t groupSize = (c / groups) * inner;
  std::vector<double> xv = x.toDoubles(), y(xv.size());
  std::vector<double> wv = op.getWeight() ? a[1].toDoubles() : std::vector<double>();
  std::vector<double> bv = op.getBias() ? a[op.getWeight() ? 2 : 1].toDoubles()
                                        : std::vector<double>();
  double eps = op.getEps().convertToDouble();
  for (int64_t g = 0; g < n * groups; ++g)
    normaliseRange(xv, g * groupSize, groupSize, eps, y);
  FailureOr<Tensor> out = allocate(op, resultDType(op), x.shape());
  if (failed(out))
    return failure();
  for (int64_t i = 0; i < x.numElements(); ++i) {
    int64_t ch = (i / inner) % c;
    double v = y[i];
    if (!wv.empty())
      v *= wv[ch];
    if (!bv.empty())
      v += bv[ch];
    out->setDouble(i, v);
  }
  return out;
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

struct PoolParams {
  int64_t spatial;
  ArrayRef<int64_t> kernel, stride, padding;
  Shape dilation;
  bool ceilMode;
};

/// Output spatial sizes (PyTorch's pooling_output_shape).
Shape poolOutputSizes(const Shape &inSp, const PoolParams &p) {
  Shape out;
  for (int64_t d = 0; d < p.spatial; ++d)
    out.push_back(*windowOutputSize(inSp[d], p.kernel[d], p.stride[d],
                                    p.padding[d], p.dilation[d], p.ceilMode));
  return out;
}

/// Runs `fn(planeBase, window begin/end per dim (unclipped start), outFlat)`
/// over every output element of every (n, c) plane.
template <typename Fn>
FailureOr<Tensor> windowPool(Operation *op, const Tensor &x, const PoolParams &p,
                             Fn &&fn) {
  Shape inSp(x.shape().begin() + 2, x.shape().end());
  for (int64_t d = 0; d < p.spatial; ++d) {
    std::optional<int64_t> o = windowOutputSize(inSp[d], p.kernel[d], p.stride[d],
                                                p.padding[d], p.dilation[d], p.ceilMode);
    if (!o || *o < 1)
      return op->emitOpError() << "runtime input is too small for the window";
  }
  Shape outSp = poolOutputSizes(inSp, p);
  Shape outShape = {x.dim(0), x.dim(1)};
  outShape.insert(outShape.end(), outSp.begin(), outSp.end());
  FailureOr<Tensor> out = allocate(op, resultDType(op), outShape);
  if (failed(out))
    return failure();
  int64_t planes = x.dim(0) * x.dim(1), inPlane = numElements(inSp),
          outPlane = numElements(outSp);
  std::vector<double> xv = x.toDoubles();
  Shape inStrides = stridesOf(inSp);
  for (int64_t pl = 0; pl < planes; ++pl)
    forEachIndex(outSp, [&](const Shape &o, int64_t flat) {
      double v = fn(xv.data() + pl * inPlane, inSp, inStrides, o);
      out->setDouble(pl * outPlane + flat, v);
    });
  return out;
}

template <typename OpTy>
FailureOr<Tensor> evalMaxPool(OpTy op, ArrayRef<Tensor> a) {
  PoolParams p{OpTy::kSpatialRank, op.getKernelSize(), op.getStride(), op.getPadding(),
               Shape(op.getDilation().begin(), op.getDilation().end()),
               op.getCeilMode()};
  return windowPool(op, a[0], p,
                    [&](const double *plane, const Shape &inSp,
                        const Shape &inStrides, const Shape &o) {
                      double best = -std::numeric_limits<double>::infinity();
                      Shape k(p.spatial, 0);
                      forEachIndex(Shape(p.kernel.begin(), p.kernel.end()),
                                   [&](const Shape &kk, int64_t) {
                                     int64_t off = 0;
                                     for (int64_t d = 0; d < p.spatial; ++d) {
                                       int64_t pos = o[d] * p.stride[d] - p.padding[d] +
                                                     kk[d] * p.dilation[d];
                                       if (pos < 0 || pos >= inSp[d])
                                         return;
                                       off += pos * inStrides[d];
                                     }
                                     double v = plane[off];
                                     // NaN wins, as in PyTorch's kernel.
                                     if (v > best || std::isnan(v))
                                       best = std::isnan(best) ? best : v;
                                   });
                      return best;
                    });
}

template <typename OpTy>
FailureOr<Tensor> evalAvgPool(OpTy op, ArrayRef<Tensor> a) {
  PoolParams p{OpTy::kSpatialRank, op.getKernelSize(), op.getStride(), op.getPadding(),
               Shape(OpTy::kSpatialRank, 1), op.getCeilMode()};
  bool includePad = op.getCountIncludePad();
  std::optional<int64_t> divisor = op.getDivisorOverride();
  return windowPool(op, a[0], p,
                    [&](const double *plane, const Shape &inSp,
                        const Shape &inStrides, const Shape &o) {
                      // Window clipped to the padded input, then to the input.
                      int64_t padded = 1, inside = 1;
                      Shape lo(p.spatial), hi(p.spatial);
                      for (int64_t d = 0; d < p.spatial; ++d) {
                        int64_t start = o[d] * p.stride[d] - p.padding[d];
                        int64_t end = std::min(start + p.kernel[d], inSp[d] + p.padding[d]);
                        padded *= end - start;
                        lo[d] = std::max<int64_t>(start, 0);
                        hi[d] = std::min(end, inSp[d]);
                        inside *= std::max<int64_t>(hi[d] - lo[d], 0);
                      }
                      double sum = 0;
                      if (inside > 0) {
                        Shape extent(p.spatial);
                        for (int64_t d = 0; d < p.spatial; ++d)
                          extent[d] = hi[d] - lo[d];
                        forEachIndex(extent, [&](const Shape &kk, int64_t) {
                          int64_t off = 0;
                          for (int64_t d = 0; d < p.spatial; ++d)
                            off += (lo[d] + kk[d]) * inStrides[d];
                          sum += plane[off];
                        });
                      }
                      double div = divisor ? double(*divisor)
                                           : double(includePad ? padded : inside);
                      return sum / div;
                    });
}

template <typename OpTy>
FailureOr<Tensor> evalAdaptiveAvgPool(OpTy op, ArrayRef<Tensor> a) {
  const Tensor &x = a[0];
  int64_t s = OpTy::kSpatialRank;
  Shape inSp(x.shape().begin() + 2, x.shape().end());
  Shape outSp(op.getOutputSize().begin(), op.getOutputSize().end());
  Shape outShape = {x.dim(0), x.dim(1)};
  outShape.insert(outShape.end(), outSp.begin(), outSp.end());
  FailureOr<Tensor> out = allocate(op, resultDType(op), outShape);
  if (failed(out))
    return failure();
  int64_t planes = x.dim(0) * x.dim(1), inPlane = numElements(inSp),
          outPlane = numElements(outSp);
  std::vector<double> xv = x.toDoubles();
  Shape inStrides = stridesOf(inSp);
  for (int64_t pl = 0; pl < planes; ++pl)
    forEachIndex(outSp, [&](const Shape &o, int64_t flat) {
      Shape lo(s), extent(s);
      for (int64_t d = 0; d < s; ++d) {
        lo[d] = (o[d] * inSp[d]) / outSp[d];
        int64_t hi = ((o[d] + 1) * inSp[d] + outSp[d] - 1) / outSp[d];
        extent[d] = hi - lo[d];
      }
      double sum = 0;
      forEachIndex(extent, [&](const Shape &kk, int64_t) {
        int64_t off = 0;
        for (int64_t d = 0; d < s; ++d)
          off += (lo[d] + kk[d]) * inStrides[d];
        sum += xv[pl * inPlane + off];
      });
      out->setDouble(pl * outPlane + flat, sum / numElements(extent));
    });
  return out;
}

} // namespace

void registerNormPoolEvaluators(OpEvaluators &e) {
  e.add<BatchNormOp>(evalBatchNorm);
  e.add<LayerNormOp>(evalLayerNorm);
  e.add<GroupNormOp>(evalGroupNorm);
  e.add<MaxPool1DOp>(evalMaxPool<MaxPool1DOp>);
  e.add<MaxPool2DOp>(evalMaxPool<MaxPool2DOp>);
  e.add<AvgPool1DOp>(evalAvgPool<AvgPool1DOp>);
  e.add<AvgPool2DOp>(evalAvgPool<AvgPool2DOp>);
  e.add<AdaptiveAvgPool1DOp>(evalAdaptiveAvgPool<AdaptiveAvgPool1DOp>);
  e.add<AdaptiveAvgPool2DOp>(evalAdaptiveAvgPool<AdaptiveAvgPool2DOp>);
}

} // namespace mlir::cuvil::reference
