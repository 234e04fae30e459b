//===- EvalLinalg.cpp - cuvil.gemm/conv reference --------------------------===//
//
// Matrix products and convolutions, accumulating in double (floats) or int64
// (integers). Loops are ordered for locality but otherwise naive.
//
//===----------------------------------------------------------------------===//
#include "dialects/Cuvil/IR/CuvilOps.h"
#include "dialects/Cuvil/Reference/EvalHelpers.h"

#include "dialects/Cuvil/IR/LinalgKernels.h"
#include "runtime/cpu/fft.h"
#include "runtime/cpu/linalg.h"

namespace mlir::cuvil::reference {
namespace {

/// Element values as doubles or int64s, chosen by the result dtype.
struct Values {
  bool isFloat;
  std::vector<double> f;
  std::vector<int64_t> i;
  explicit Values(const Tensor &t, bool asFloat) : isFloat(asFloat) {
    if (asFloat)
      f = t.toDoubles();
    else
      i = t.toInts();
  }
};

/// C[b] = A[b] x B[b] for row-major [m, k] x [k, n] slices given by offsets.
/// Accumulates into `acc` (double or int64 view chosen by the caller).
template <typename T>
void matmulSlice(const T *a, const T *b, T *c, int64_t m, int64_t k, int64_t n) {
  for (int64_t r = 0; r < m; ++r)
    for (int64_t p = 0; p < k; ++p) {
      T av = a[r * k + p];
      for (int64_t col = 0; col < n; ++col)
        c[r * n + col] += av * b[p * n + col];
    }
}

/// Batched matmul with broadcast batch dims: a is [..., m, k], b [..., k, n].
FailureOr<Tensor> batchedMatmul(Operation *op, const Tensor &a, const Tensor &b,
                                Shape aShape, Shape bShape, Shape outShape) {
  int64_t m = aShape[aShape.size() - 2], k = aShape.back();
  int64_t k2 = bShape[bShape.size() - 2], n = bShape.back();
  if (k != k2)
    return op->emitOpError() << "runtime contraction sizes differ (" << k
                             << " vs " << k2 << ")";
  Shape aBatch(aShape.begin(), aShape.end() - 2), bBatch(bShape.begin(), bShape.end() - 2);
  FailureOr<Shape> batch = broadcastRuntime(op, aBatch, bBatch);
  if (failed(batch))
    return failure();
  FailureOr<Tensor> out = allocate(op, resultDType(op), outShape);
  if (failed(out))
    return failure();
  std::vector<int64_t> ma = broadcastIndexMap(*batch, aBatch);
  std::vector<int64_t> mb = broadcastIndexMap(*batch, bBatch);
  bool isFloat = ::cuvil::isFloat(out->dtype());
  Values av(a, isFloat), bv(b, isFloat);
  int64_t nb = numElements(*batch);
  if (isFloat) {
    std::vector<double> c(static_cast<size_t>(nb * m * n), 0.0);
    for (int64_t i = 0; i < nb; ++i)
      matmulSlice(av.f.data() + ma[i] * m * k, bv.f.data() + mb[i] * k * n,
                  c.data() + i * m * n, m, k, n);
    for (size_t i = 0; i < c.size(); ++i)
      out->setDouble(i, c[i]);
  } else {
    std::vector<int64_t> c(static_cast<size_t>(nb * m * n), 0);
    for (int64_t i = 0; i < nb; ++i)
      matmulSlice(av.i.data() + ma[i] * m * k, bv.i.data() + mb[i] * k * n,
                  c.data() + i * m * n, m, k, n);
    for (size_t i = 0; i < c.size(); ++i)
      out->setInt(i, c[i]);
  }
  return out;
}

FailureOr<Tensor> evalMatmul(MatmulOp op, ArrayRef<Tensor> args) {
  const Tensor &a = args[0], &b = args[1];
  Shape as = a.shape(), bs = b.shape();
  bool aVec = as.size() == 1, bVec = bs.size() == 1;
  if (aVec)
    as.insert(as.begin(), 1);
  if (bVec)
    bs.push_back(1);
  Shape aBatch(as.begin(), as.end() - 2), bBatch(bs.begin(), bs.end() - 2);
  FailureOr<Shape> batch = broadcastRuntime(op, aBatch, bBatch);
  if (failed(batch))
    return failure();
  Shape full = *batch;
  full.push_back(as[as.size() - 2]);
  full.push_back(bs.back());
  FailureOr<Tensor> r = batchedMatmul(op, a.reshaped(as), b.reshaped(bs), as, bs, full);
  if (failed(r))
    return failure();
  Shape outShape = *batch;
  if (!aVec)
    outShape.push_back(as[as.size() - 2]);
  if (!bVec)
    outShape.push_back(bs.back());
  return r->reshaped(outShape);
}

FailureOr<Tensor> evalLinear(LinearOp op, ArrayRef<Tensor> args) {
  const Tensor &x = args[0], &w = args[1];
  int64_t k = x.shape().back(), n = w.dim(0);
  if (w.dim(1) != k)
    return op.emitOpError() << "runtime input features (" << k
                            << ") differ from the weight's (" << w.dim(1) << ")";
  if (args.size() > 2 && args[2].dim(0) != n)
    return op.emitOpError() << "runtime bias size " << args[2].dim(0)
                            << " differs from out_features " << n;
  Shape outShape(x.shape().begin(), x.shape().end() - 1);
  outShape.push_back(n);
  FailureOr<Tensor> out = allocate(op, resultDType(op), outShape);
  if (failed(out))
    return failure();
  int64_t rows = numElements(Shape(x.shape().begin(), x.shape().end() - 1));
  std::vector<double> xv = x.toDoubles(), wv = w.toDoubles();
  std::vector<double> bv = args.size() > 2 ? args[2].toDoubles() : std::vector<double>();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < n; ++j) {
      double acc = bv.empty() ? 0.0 : bv[j];
      const double *xr = xv.data() + r * k, *wr = wv.data() + j * k;
      for (int64_t p = 0; p < k; ++p)
        acc += xr[p] * wr[p];
      out->setDouble(r * n + j, acc);
    }
  return out;
}

FailureOr<Tensor> evalAddmm(AddmmOp op, ArrayRef<Tensor> args) {
  const Tensor &in = args[0], &m1 = args[1], &m2 = args[2];
  Shape outShape = {m1.dim(0), m2.dim(1)};
  FailureOr<Tensor> prod = batchedMatmul(op, m1, m2, m1.shape(), m2.shape(), outShape);
  if (failed(prod))
    return failure();
  FailureOr<Shape> bshape = broadcastRuntime(op, in.shape(), outShape);
  if (failed(bshape))
    return failure();
  if (*bshape != outShape)
    return op.emitOpError() << "runtime input shape " << in.describe()
                            << " does not broadcast to the product's shape";
  double alpha = op.getAlpha().convertToDouble(), beta = op.getBeta().convertToDouble();
  std::vector<int64_t> map = broadcastIndexMap(outShape, in.shape());
  bool isFloat = ::cuvil::isFloat(prod->dtype());
  for (int64_t i = 0; i < prod->numElements(); ++i) {
    if (isFloat) {
      double v = alpha * prod->getDouble(i);
      // beta == 0 ignores the input entirely (NaN/inf do not propagate).
      if (beta != 0.0)
        v += beta * in.getDouble(map[i]);
      prod->setDouble(i, v);
    } else {
      int64_t v = int64_t(alpha) * prod->getInt(i);
      if (beta != 0.0)
        v += int64_t(beta) * in.getInt(map[i]);
      prod->setInt(i, v);
    }
  }
  return prod;
}

//===----------------------------------------------------------------------===//
// Convolutions
//===----------------------------------------------------------------------===//

struct ConvParams {
  int64_t spatial;
  ArrayRef<int64_t> stride, padding, dilation, outputPadding;
  int64_t groups;
};

int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
int64_t ceilDiv(int64_t a, int64_t b) { return -floorDiv(-a, b); }

/// Positions o in [0, outSize) with 0 <= o * stride - pad + offset < inSize.
std::pair<int64_t, int64_t> validRange(int64_t inSize, int64_t outSize,
                                       int64_t stride, int64_t pad,
                                       int64_t offset) {
  int64_t lo = std::max<int64_t>(0, ceilDiv(pad - offset, stride));
  int64_t hi = std::min(outSize, floorDiv(inSize - 1 + pad - offset, stride) + 1);
  return {lo, std::max(lo, hi)};
}

/// Spatial geometry padded to three dimensions (missing ones have size 1),
/// so one loop nest serves conv1d and conv2d.
struct Geometry3D {
  int64_t in[3], out[3], k[3], stride[3], pad[3], dil[3];
  Geometry3D(const Shape &inSp, const Shape &outSp, const Shape &kSp,
             const ConvParams &p) {
    int64_t lead = 3 - p.spatial;
    for (int64_t d = 0; d < 3; ++d) {
      bool real = d >= lead;
      int64_t j = d - lead;
      in[d] = real ? inSp[j] : 1;
      out[d] = real ? outSp[j] : 1;
      k[d] = real ? kSp[j] : 1;
      stride[d] = real ? p.stride[j] : 1;
      pad[d] = real ? p.padding[j] : 0;
      dil[d] = real ? p.dilation[j] : 1;
    }
  }
};

FailureOr<Tensor> evalConv(Operation *op, ArrayRef<Tensor> args,
                           const ConvParams &p) {
  const Tensor &x = args[0], &w = args[1];
  int64_t n = x.dim(0), cin = x.dim(1), cout = w.dim(0), s = p.spatial;
  int64_t g = p.groups, cinG = w.dim(1), coutG = cout / g;
  if (cinG * g != cin)
    return op->emitOpError() << "runtime input channels (" << cin
                             << ") do not match the weight (" << cinG << " x "
                             << g << " groups)";
  Shape inSp(x.shape().begin() + 2, x.shape().end());
  Shape kSp(w.shape().begin() + 2, w.shape().end());
  Shape outSp(s);
  for (int64_t d = 0; d < s; ++d) {
    int64_t span = inSp[d] + 2 * p.padding[d] - p.dilation[d] * (kSp[d] - 1) - 1;
    if (span < 0)
      return op->emitOpError() << "runtime input is smaller than the kernel";
    outSp[d] = span / p.stride[d] + 1;
  }
  Shape outShape = {n, cout};
  outShape.insert(outShape.end(), outSp.begin(), outSp.end());
  FailureOr<Tensor> out = allocate(op, resultDType(op), outShape);
  if (failed(out))
    return failure();
  Geometry3D geo(inSp, outSp, kSp, p);
  std::vector<double> xv = x.toDoubles(), wv = w.toDoubles();
  std::vector<double> bv = args.size() > 2 ? args[2].toDoubles() : std::vector<double>();
  int64_t inPlane = numElements(inSp), outPlane = numElements(outSp),
          kPlane = numElements(kSp);
  std::vector<double> acc(static_cast<size_t>(outPlane));
  for (int64_t b = 0; b < n; ++b)
    for (int64_t co = 0; co < cout; ++co) {
      int64_t grp = co / coutG;
      std::fill(acc.begin(), acc.end(), bv.empty() ? 0.0 : bv[co]);
      for (int64_t ci = 0; ci < cinG; ++ci) {
        const double *plane = xv.data() + (b * cin + grp * cinG + ci) * inPlane;
        const double *kern = wv.data() + (co * cinG + ci) * kPlane;
        for (int64_t k0 = 0; k0 < geo.k[0]; ++k0) {
          auto [lo0, hi0] = validRange(geo.in[0], geo.out[0], geo.stride[0], geo.pad[0], k0 * geo.dil[0]);
          for (int64_t k1 = 0; k1 < geo.k[1]; ++k1) {
            auto [lo1, hi1] = validRange(geo.in[1], geo.out[1], geo.stride[1], geo.pad[1], k1 * geo.dil[1]);
            for (int64_t k2 = 0; k2 < geo.k[2]; ++k2) {
              auto [lo2, hi2] = validRange(geo.in[2], geo.out[2], geo.stride[2], geo.pad[2], k2 * geo.dil[2]);
              double wgt = kern[(k0 * geo.k[1] + k1) * geo.k[2] + k2];
              for (int64_t o0 = lo0; o0 < hi0; ++o0) {
                int64_t i0 = o0 * geo.stride[0] - geo.pad[0] + k0 * geo.dil[0];
                for (int64_t o1 = lo1; o1 < hi1; ++o1) {
                  int64_t i1 = o1 * geo.stride[1] - geo.pad[1] + k1 * geo.dil[1];
                  const double *row = plane + (i0 * geo.in[1] + i1) * geo.in[2];
                  double *orow = acc.data() + (o0 * geo.out[1] + o1) * geo.out[2];
                  int64_t i2 = lo2 * geo.stride[2] - geo.pad[2] + k2 * geo.dil[2];
                  for (int64_t o2 = lo2; o2 < hi2; ++o2, i2 += geo.stride[2])
                    orow[o2] += wgt * row[i2];
                }
              }
            }
          }
        }
      }
      int64_t base = (b * cout + co) * outPlane;
      for (int64_t o = 0; o < outPlane; ++o)
        out->setDouble(base + o, acc[o]);
    }
  return out;
}

FailureOr<Tensor> evalConvTranspose(Operation *op, ArrayRef<Tensor> args,
                                    const ConvParams &p) {
  const Tensor &x = args[0], &w = args[1];
  int64_t n = x.dim(0), cin = x.dim(1), s = p.spatial, g = p.groups;
  if (w.dim(0) != cin)
    return op->emitOpError() << "runtime input channels (" << cin
                             << ") differ from the weight's (" << w.dim(0) << ")";
  int64_t cinG = cin / g, coutG = w.dim(1), cout = coutG * g;
  Shape inSp(x.shape().begin() + 2, x.shape().end());
  Shape kSp(w.shape().begin() + 2, w.shape().end());
  Shape outSp(s);
  for (int64_t d = 0; d < s; ++d)
    outSp[d] = (inSp[d] - 1) * p.stride[d] - 2 * p.padding[d] +
               p.dilation[d] * (kSp[d] - 1) + p.outputPadding[d] + 1;
  Shape outShape = {n, cout};
  outShape.insert(outShape.end(), outSp.begin(), outSp.end());
  FailureOr<Tensor> out = allocate(op, resultDType(op), outShape);
  if (failed(out))
    return failure();
  Geometry3D geo(inSp, outSp, kSp, p);
  std::vector<double> xv = x.toDoubles(), wv = w.toDoubles();
  std::vector<double> bv = args.size() > 2 ? args[2].toDoubles() : std::vector<double>();
  int64_t inPlane = numElements(inSp), outPlane = numElements(outSp),
          kPlane = numElements(kSp);
  std::vector<double> acc(static_cast<size_t>(outPlane));
  for (int64_t b = 0; b < n; ++b)
    for (int64_t co = 0; co < cout; ++co) {
      int64_t grp = co / coutG, coInG = co % coutG;
      std::fill(acc.begin(), acc.end(), bv.empty() ? 0.0 : bv[co]);
      for (int64_t ci = 0; ci < cinG; ++ci) {
        int64_t cInput = grp * cinG + ci;
        const double *plane = xv.data() + (b * cin + cInput) * inPlane;
        const double *kern = wv.data() + (cInput * coutG + coInG) * kPlane;
        // Scatter: input i and kernel k land on output i * stride - pad + k * dil;
        // validRange with in/out swapped gives the inputs that land inside.
        for (int64_t k0 = 0; k0 < geo.k[0]; ++k0) {
          auto [lo0, hi0] = validRange(geo.out[0], geo.in[0], geo.stride[0], geo.pad[0], k0 * geo.dil[0]);
          for (int64_t k1 = 0; k1 < geo.k[1]; ++k1) {
            auto [lo1, hi1] = validRange(geo.out[1], geo.in[1], geo.stride[1], geo.pad[1], k1 * geo.dil[1]);
            for (int64_t k2 = 0; k2 < geo.k[2]; ++k2) {
              auto [lo2, hi2] = validRange(geo.out[2], geo.in[2], geo.stride[2], geo.pad[2], k2 * geo.dil[2]);
              double wgt = kern[(k0 * geo.k[1] + k1) * geo.k[2] + k2];
              for (int64_t i0 = lo0; i0 < hi0; ++i0) {
                int64_t o0 = i0 * geo.stride[0] - geo.pad[0] + k0 * geo.dil[0];
                for (int64_t i1 = lo1; i1 < hi1; ++i1) {
                  int64_t o1 = i1 * geo.stride[1] - geo.pad[1] + k1 * geo.dil[1];
                  const double *row = plane + (i0 * geo.in[1] + i1) * geo.in[2];
                  double *orow = acc.data() + (o0 * geo.out[1] + o1) * geo.out[2];
                  for (int64_t i2 = lo2; i2 < hi2; ++i2)
                    orow[i2 * geo.stride[2] - geo.pad[2] + k2 * geo.dil[2]] += wgt * row[i2];
                }
              }
            }
          }
        }
      }
      int64_t base = (b * cout + co) * outPlane;
      for (int64_t o = 0; o < outPlane; ++o)
        out->setDouble(base + o, acc[o]);
    }
  return out;
}

template <typename OpTy>
ConvParams convParams(OpTy op) {
  return {OpTy::kSpatialRank, op.getStride(), op.getPadding(), op.getDilation(),
          {}, static_cast<int64_t>(op.getGroups())};
}
template <typename OpTy>
ConvParams convTransposeParams(OpTy op) {
  ConvParams p = convParams(op);
  p.outputPadding = op.getOutputPadding();
  return p;
}

/// The factorisations: the runtime's own kernels (runtime/cpu/linalg.h) on
/// the evaluator's buffers, so that both agree by construction; the kernels
/// are checked against PyTorch/LAPACK in test/runtime/LinalgTest.cpp.
FailureOr<SmallVector<Tensor>> evalLinalgKernel(LinalgKernelOp op, ArrayRef<Tensor> a) {
  LinalgKernelCall call =
      describeLinalgKernelCall(op.getKernel(), op.getFlags(), op.getInputs().getTypes());
  SmallVector<Tensor> results;
  for (Type t : op.getResultTypes()) {
    auto r = llvm::cast<RankedTensorType>(t);
    results.emplace_back(*toDType(r.getElementType()),
                         std::vector<int64_t>(r.getShape().begin(), r.getShape().end()));
  }
  std::vector<double> scratch(std::max<int64_t>(call.scratchDoubles, 1));
  const int64_t *q = call.params.data();
  double *w = scratch.data();
  auto in = [&](size_t i) { return static_cast<const void *>(a[i].data()); };
  auto out = [&](size_t i) { return static_cast<void *>(results[i].data()); };
  bool f32 = llvm::cast<RankedTensorType>(op.getInputs()[0].getType()).getElementType().isF32();
  StringRef k = op.getKernel();
  auto fin = [&](size_t i) { return static_cast<const float *>(in(i)); };
  auto fout = [&](size_t i) { return static_cast<float *>(out(i)); };
  auto din = [&](size_t i) { return static_cast<const double *>(in(i)); };
  auto dout = [&](size_t i) { return static_cast<double *>(out(i)); };
  auto i32 = [&](size_t i) { return static_cast<int32_t *>(out(i)); };
  if (k == "lu")
    f32 ? cuvil_rt_lu_f32(q, fin(0), fout(0), i32(1), i32(2), w)
        : cuvil_rt_lu_f64(q, din(0), dout(0), i32(1), i32(2), w);
  else if (k == "cholesky")
    f32 ? cuvil_rt_cholesky_f32(q, fin(0), fout(0), i32(1), w) : cuvil_rt_cholesky_f64(q, din(0), dout(0), i32(1), w);
  else if (k == "triangular_solve")
    f32 ? cuvil_rt_triangular_solve_f32(q, fin(0), fin(1), fout(0), w)
        : cuvil_rt_triangular_solve_f64(q, din(0), din(1), dout(0), w);
  else if (k == "geqrf")
    f32 ? cuvil_rt_geqrf_f32(q, fin(0), fout(0), fout(1), w) : cuvil_rt_geqrf_f64(q, din(0), dout(0), dout(1), w);
  else if (k == "householder_product")
    f32 ? cuvil_rt_householder_product_f32(q, fin(0), fin(1), fout(0), w)
        : cuvil_rt_householder_product_f64(q, din(0), din(1), dout(0), w);
  else if (k == "ormqr")
    f32 ? cuvil_rt_ormqr_f32(q, fin(0), fin(1), fin(2), fout(0), w)
        : cuvil_rt_ormqr_f64(q, din(0), din(1), din(2), dout(0), w);
  else if (k == "dft")
    f32 ? cuvil_rt_dft_f32(q, fin(0), fout(0), w) : cuvil_rt_dft_f64(q, din(0), dout(0), w);
  else if (k == "eigh")
    f32 ? cuvil_rt_eigh_f32(q, fin(0), fout(0), fout(1), w) : cuvil_rt_eigh_f64(q, din(0), dout(0), dout(1), w);
  else
    f32 ? cuvil_rt_svd_f32(q, fin(0), fout(0), fout(1), fout(2), w)
        : cuvil_rt_svd_f64(q, din(0), dout(0), dout(1), dout(2), w);
  return results;
}

} // namespace

void registerLinalgEvaluators(OpEvaluators &e) {
  e.addMulti<LinalgKernelOp>(evalLinalgKernel);
  e.add<LinearOp>(evalLinear);
  e.add<MatmulOp>(evalMatmul);
  e.add<BatchMatmulOp>([](BatchMatmulOp op, ArrayRef<Tensor> a) {
    if (a[0].dim(0) != a[1].dim(0))
      return FailureOr<Tensor>(op.emitOpError()
                               << "runtime batch sizes differ (" << a[0].dim(0)
                               << " vs " << a[1].dim(0) << ")");
    return batchedMatmul(op, a[0], a[1], a[0].shape(), a[1].shape(),
                         {a[0].dim(0), a[0].dim(1), a[1].dim(2)});
  });
  e.add<AddmmOp>(evalAddmm);
  e.add<Conv1DOp>([](Conv1DOp op, ArrayRef<Tensor> a) {
    return evalConv(op, a, convParams(op));
  });
  e.add<Conv2DOp>([](Conv2DOp op, ArrayRef<Tensor> a) {
    return evalConv(op, a, convParams(op));
  });
  e.add<ConvTranspose1DOp>([](ConvTranspose1DOp op, ArrayRef<Tensor> a) {
    return evalConvTranspose(op, a, convTransposeParams(op));
  });
  e.add<ConvTranspose2DOp>([](ConvTranspose2DOp op, ArrayRef<Tensor> a) {
    return evalConvTranspose(op, a, convTransposeParams(op));
  });
}

} // namespace mlir::cuvil::reference
