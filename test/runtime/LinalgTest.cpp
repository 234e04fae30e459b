//===- LinalgTest.cpp - Dense linear algebra against PyTorch (LAPACK) -----===//
//
// Every kernel of linalg.c on the cases gen_linalg_reference.py took from
// PyTorch 1.13 (linalg_reference.inc): the LAPACK factorisations (LU,
// Cholesky, triangular solve, geqrf, householder_product, ormqr, and
// linalg.qr built from the two) must give LAPACK's outputs to rounding;
// eigh and svd their eigen/singular values, and their vectors up to each
// one's sign (fixed by the kernels' own rule, checked too), orthonormal,
// reproducing A. Scratch is exactly the size linalg.h gives, fenced by
// sentinels; the f32 entry points run once each.
//
//===----------------------------------------------------------------------===//
#include "cpu/linalg.h"

#include "cuvil/kernel_abi.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace {

using Vec = std::vector<double>;
using IVec = std::vector<int32_t>;

struct LuCase {
  const char *name;
  int64_t batch, m, n;
  Vec a, lu;
  IVec pivots, info;
};
struct CholeskyCase {
  const char *name;
  int64_t batch, n, upper;
  Vec a, out;
  IVec info;
};
struct TriangularCase {
  const char *name;
  int64_t batch, n, k, upper, left, unit;
  Vec a, b, x;
};
struct GeqrfCase {
  const char *name;
  int64_t batch, m, n;
  Vec a, qr, tau;
};
struct HouseholderCase {
  const char *name;
  int64_t batch, m, n, k;
  Vec v, tau, q;
};
struct OrmqrCase {
  const char *name;
  int64_t batch, m, n, k, vcols, left, transpose;
  Vec v, tau, c, out;
};
struct QrCase { // torch.linalg.qr, mode "reduced" or "complete"
  const char *name;
  int64_t batch, m, n, complete;
  Vec a, q, r;
};
struct EighCase {
  const char *name;
  int64_t batch, n, upper, vectors, distinct; // distinct: the vectors are unique up to sign
  Vec a, w, v;
};
struct SvdCase {
  const char *name;
  int64_t batch, m, n, full, uv;
  Vec a, u, s, vh;
};

#include "linalg_reference.inc"

// Scratch of exactly `size` doubles between two runs of sentinels: a kernel
// writing past what linalg.h promises fails the case.
class Scratch {
public:
  explicit Scratch(int64_t size) : size_(size), data_(static_cast<size_t>(size) + 2 * kFence) {
    std::fill(data_.begin(), data_.end(), kSentinel);
  }
  double *get() { return data_.data() + kFence; }
  bool fencesIntact() const {
    for (size_t i = 0; i < kFence; ++i)
      if (data_[i] != kSentinel || data_[kFence + static_cast<size_t>(size_) + i] != kSentinel)
        return false;
    return true;
  }

private:
  static constexpr size_t kFence = 16;
  static constexpr double kSentinel = -12345.678;
  int64_t size_;
  Vec data_;
};

double maxAbs(const Vec &v) {
  double m = 0;
  for (double x : v)
    m = std::max(m, std::fabs(x));
  return m;
}

// max |got - want| over max |want| (1 where want is zero).
double relError(const Vec &got, const Vec &want) {
  REQUIRE(got.size() == want.size());
  double err = 0;
  for (size_t i = 0; i < got.size(); ++i)
    err = std::max(err, std::fabs(got[i] - want[i]));
  double scale = maxAbs(want);
  return err / (scale > 0 ? scale : 1);
}

Vec slice(const Vec &v, int64_t matrix, int64_t size) {
  return Vec(v.begin() + matrix * size, v.begin() + (matrix + 1) * size);
}

std::vector<float> toFloat(const Vec &v) { return std::vector<float>(v.begin(), v.end()); }
Vec toDouble(const std::vector<float> &v) { return Vec(v.begin(), v.end()); }

// Of a row-major rows x cols matrix: max |M^T M - I| (columns orthonormal).
double columnOrthonormality(const double *m, int64_t rows, int64_t cols) {
  double err = 0;
  for (int64_t i = 0; i < cols; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      double d = 0;
      for (int64_t r = 0; r < rows; ++r)
        d += m[r * cols + i] * m[r * cols + j];
      err = std::max(err, std::fabs(d - (i == j ? 1.0 : 0.0)));
    }
  return err;
}

// Of a row-major rows x cols matrix: max |M M^T - I| (rows orthonormal).
double rowOrthonormality(const double *m, int64_t rows, int64_t cols) {
  double err = 0;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < rows; ++j) {
      double d = 0;
      for (int64_t c = 0; c < cols; ++c)
        d += m[i * cols + c] * m[j * cols + c];
      err = std::max(err, std::fabs(d - (i == j ? 1.0 : 0.0)));
    }
  return err;
}

// Whether the first largest |x[i * inc]| of x is positive: the sign rule of
// eigh's and svd's vectors.
bool largestIsPositive(const double *x, int64_t n, int64_t inc) {
  double big = -1, value = 0;
  for (int64_t i = 0; i < n; ++i)
    if (std::fabs(x[i * inc]) > big) {
      big = std::fabs(x[i * inc]);
      value = x[i * inc];
    }
  return value >= 0;
}

// max over i of |got[i * inc] - sign * want[i * inc]|, sign the one
// aligning got with want.
double errorUpToSign(const double *got, const double *want, int64_t n, int64_t inc,
                     double *sign) {
  double d = 0;
  for (int64_t i = 0; i < n; ++i)
    d += got[i * inc] * want[i * inc];
  *sign = d < 0 ? -1 : 1;
  double err = 0;
  for (int64_t i = 0; i < n; ++i)
    err = std::max(err, std::fabs(got[i * inc] - *sign * want[i * inc]));
  return err;
}

std::vector<int64_t> luParams(const LuCase &c) { return {c.batch, c.m, c.n}; }

} // namespace

TEST_CASE("linalg: LU is LAPACK's getrf (pivots, info, L and U)", "[linalg]") {
  for (const LuCase &c : kLuCases) {
    INFO(c.name);
    int64_t k = std::min(c.m, c.n);
    Vec lu(c.a.size());
    IVec pivots(static_cast<size_t>(c.batch * k)), info(static_cast<size_t>(c.batch), -1);
    Scratch scratch(CUVIL_LU_SCRATCH(c.m, c.n));
    std::vector<int64_t> q = luParams(c);
    REQUIRE(q.size() == CUVIL_LU_PARAMS);
    cuvil_rt_lu_f64(q.data(), c.a.data(), lu.data(), pivots.data(), info.data(), scratch.get());
    CHECK(scratch.fencesIntact());
    CHECK(pivots == c.pivots);
    CHECK(info == c.info);
    for (int64_t b = 0; b < c.batch; ++b) {
      double err = relError(slice(lu, b, c.m * c.n), slice(c.lu, b, c.m * c.n));
      CHECK(err <= 1e-12);
    }
  }
}

TEST_CASE("linalg: LU in place and in f32", "[linalg]") {
  const LuCase &c = kLuCases.front();
  int64_t k = std::min(c.m, c.n);
  std::vector<int64_t> q = luParams(c);
  Scratch scratch(CUVIL_LU_SCRATCH(c.m, c.n));
  IVec pivots(static_cast<size_t>(c.batch * k)), info(static_cast<size_t>(c.batch));
  Vec inPlace = c.a;
  cuvil_rt_lu_f64(q.data(), inPlace.data(), inPlace.data(), pivots.data(), info.data(),
                  scratch.get());
  CHECK(relError(inPlace, c.lu) <= 1e-12);

  std::vector<float> a = toFloat(c.a), lu(a.size());
  cuvil_rt_lu_f32(q.data(), a.data(), lu.data(), pivots.data(), info.data(), scratch.get());
  CHECK(scratch.fencesIntact());
  CHECK(pivots == c.pivots);
  CHECK(relError(toDouble(lu), c.lu) <= 1e-6);

}

TEST_CASE("linalg: empty shapes do nothing, with NULL buffers", "[linalg]") {
  // Only what has elements is written: info, and svd's full U or Vh (the
  // identity, as PyTorch gives it).
  int32_t info[2] = {-1, -1};
  int64_t lu[3] = {2, 0, 3};
  cuvil_rt_lu_f64(lu, nullptr, nullptr, nullptr, info, nullptr);
  CHECK((info[0] == 0 && info[1] == 0));
  int64_t cholesky[3] = {2, 0, 1};
  info[0] = info[1] = -1;
  cuvil_rt_cholesky_f32(cholesky, nullptr, nullptr, info, nullptr);
  CHECK((info[0] == 0 && info[1] == 0));
  int64_t triangular[6] = {2, 3, 0, 1, 0, 0};
  cuvil_rt_triangular_solve_f64(triangular, nullptr, nullptr, nullptr, nullptr);
  int64_t geqrf[3] = {2, 3, 0};
  cuvil_rt_geqrf_f64(geqrf, nullptr, nullptr, nullptr, nullptr);
  int64_t householder[4] = {2, 3, 0, 0};
  cuvil_rt_householder_product_f64(householder, nullptr, nullptr, nullptr, nullptr);
  int64_t ormqr[7] = {2, 0, 3, 0, 1, 0, 0};
  cuvil_rt_ormqr_f64(ormqr, nullptr, nullptr, nullptr, nullptr, nullptr);
  int64_t eigh[4] = {2, 0, 0, 1};
  cuvil_rt_eigh_f64(eigh, nullptr, nullptr, nullptr, nullptr);
  int64_t svd[5] = {2, 3, 0, 1, 1};
  Vec u(18, 7.0), scratch(static_cast<size_t>(CUVIL_SVD_SCRATCH(3, 0, 1)));
  cuvil_rt_svd_f64(svd, nullptr, u.data(), nullptr, nullptr, scratch.data());
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 3; ++j)
        CHECK(u[static_cast<size_t>((b * 3 + i) * 3 + j)] == (i == j ? 1.0 : 0.0));
  int64_t reduced[5] = {0, 3, 4, 0, 1};
  cuvil_rt_svd_f64(reduced, nullptr, nullptr, nullptr, nullptr, nullptr);
}

TEST_CASE("linalg: Cholesky is LAPACK's potrf, partial result on failure", "[linalg]") {
  for (const CholeskyCase &c : kCholeskyCases) {
    INFO(c.name);
    std::vector<int64_t> q = {c.batch, c.n, c.upper};
    REQUIRE(q.size() == CUVIL_CHOLESKY_PARAMS);
    Vec out(c.a.size(), 7.0);
    IVec info(static_cast<size_t>(c.batch), -1);
    Scratch scratch(CUVIL_CHOLESKY_SCRATCH(c.n));
    cuvil_rt_cholesky_f64(q.data(), c.a.data(), out.data(), info.data(), scratch.get());
    CHECK(scratch.fencesIntact());
    CHECK(info == c.info);
    for (int64_t b = 0; b < c.batch; ++b) {
      double err = relError(slice(out, b, c.n * c.n), slice(c.out, b, c.n * c.n));
      CHECK(err <= 1e-12);
    }
  }
  const CholeskyCase &c = kCholeskyCases.front();
  std::vector<int64_t> q = {c.batch, c.n, c.upper};
  std::vector<float> a = toFloat(c.a), out(a.size());
  IVec info(static_cast<size_t>(c.batch));
  Scratch scratch(CUVIL_CHOLESKY_SCRATCH(c.n));
  cuvil_rt_cholesky_f32(q.data(), a.data(), out.data(), info.data(), scratch.get());
  CHECK(info == c.info);
  CHECK(relError(toDouble(out), c.out) <= 1e-6);
}

TEST_CASE("linalg: triangular solve is solve_triangular (left / right, unitriangular)",
          "[linalg]") {
  for (const TriangularCase &c : kTriangularCases) {
    INFO(c.name);
    std::vector<int64_t> q = {c.batch, c.n, c.k, c.upper, c.left, c.unit};
    REQUIRE(q.size() == CUVIL_TRIANGULAR_SOLVE_PARAMS);
    Vec x(c.b.size());
    Scratch scratch(CUVIL_TRIANGULAR_SOLVE_SCRATCH(c.n, c.k));
    cuvil_rt_triangular_solve_f64(q.data(), c.a.data(), c.b.data(), x.data(), scratch.get());
    CHECK(scratch.fencesIntact());
    for (int64_t b = 0; b < c.batch; ++b) {
      double err = relError(slice(x, b, c.n * c.k), slice(c.x, b, c.n * c.k));
      CHECK(err <= 1e-12);
    }
    // In place on b.
    Vec inPlace = c.b;
    cuvil_rt_triangular_solve_f64(q.data(), c.a.data(), inPlace.data(), inPlace.data(),
                                  scratch.get());
    CHECK(inPlace == x);
  }
  const TriangularCase &c = kTriangularCases.front();
  std::vector<int64_t> q = {c.batch, c.n, c.k, c.upper, c.left, c.unit};
  std::vector<float> a = toFloat(c.a), b = toFloat(c.b), x(b.size());
  Scratch scratch(CUVIL_TRIANGULAR_SOLVE_SCRATCH(c.n, c.k));
  cuvil_rt_triangular_solve_f32(q.data(), a.data(), b.data(), x.data(), scratch.get());
  CHECK(relError(toDouble(x), c.x) <= 1e-6);
}

TEST_CASE("linalg: geqrf is LAPACK's (reflectors, tau, R's signs)", "[linalg]") {
  for (const GeqrfCase &c : kGeqrfCases) {
    INFO(c.name);
    int64_t k = std::min(c.m, c.n);
    std::vector<int64_t> q = {c.batch, c.m, c.n};
    REQUIRE(q.size() == CUVIL_GEQRF_PARAMS);
    Vec qr(c.a.size()), tau(static_cast<size_t>(c.batch * k));
    Scratch scratch(CUVIL_GEQRF_SCRATCH(c.m, c.n));
    cuvil_rt_geqrf_f64(q.data(), c.a.data(), qr.data(), tau.data(), scratch.get());
    CHECK(scratch.fencesIntact());
    for (int64_t b = 0; b < c.batch; ++b) {
      double err = relError(slice(qr, b, c.m * c.n), slice(c.qr, b, c.m * c.n));
      CHECK(err <= 1e-12);
      double tauErr = relError(slice(tau, b, k), slice(c.tau, b, k));
      CHECK(tauErr <= 1e-12);
    }
    for (size_t i = 0; i < tau.size(); ++i)
      CHECK((tau[i] == 0) == (c.tau[i] == 0)); // tau 0: no reflection, as LAPACK decides
  }
  const GeqrfCase &c = kGeqrfCases.front();
  int64_t k = std::min(c.m, c.n);
  std::vector<int64_t> q = {c.batch, c.m, c.n};
  std::vector<float> a = toFloat(c.a), qr(a.size()), tau(static_cast<size_t>(c.batch * k));
  Scratch scratch(CUVIL_GEQRF_SCRATCH(c.m, c.n));
  cuvil_rt_geqrf_f32(q.data(), a.data(), qr.data(), tau.data(), scratch.get());
  CHECK(relError(toDouble(qr), c.qr) <= 1e-6);
  CHECK(relError(toDouble(tau), c.tau) <= 1e-6);
}

TEST_CASE("linalg: householder_product is LAPACK's orgqr", "[linalg]") {
  for (const HouseholderCase &c : kHouseholderCases) {
    INFO(c.name);
    std::vector<int64_t> q = {c.batch, c.m, c.n, c.k};
    REQUIRE(q.size() == CUVIL_HOUSEHOLDER_PRODUCT_PARAMS);
    Vec out(c.v.size());
    Scratch scratch(CUVIL_HOUSEHOLDER_PRODUCT_SCRATCH(c.m, c.n));
    cuvil_rt_householder_product_f64(q.data(), c.v.data(), c.tau.data(), out.data(),
                                     scratch.get());
    CHECK(scratch.fencesIntact());
    for (int64_t b = 0; b < c.batch; ++b) {
      double err = relError(slice(out, b, c.m * c.n), slice(c.q, b, c.m * c.n));
      CHECK(err <= 1e-12);
    }
  }
  const HouseholderCase &c = kHouseholderCases.front();
  std::vector<int64_t> q = {c.batch, c.m, c.n, c.k};
  std::vector<float> v = toFloat(c.v), tau = toFloat(c.tau), out(v.size());
  Scratch scratch(CUVIL_HOUSEHOLDER_PRODUCT_SCRATCH(c.m, c.n));
  cuvil_rt_householder_product_f32(q.data(), v.data(), tau.data(), out.data(), scratch.get());
  CHECK(relError(toDouble(out), c.q) <= 1e-6);
}

TEST_CASE("linalg: ormqr is torch.ormqr (left / right, Q / Q^T)", "[linalg]") {
  for (const OrmqrCase &c : kOrmqrCases) {
    INFO(c.name);
    std::vector<int64_t> q = {c.batch, c.m, c.n, c.k, c.left, c.transpose, c.vcols};
    REQUIRE(q.size() == CUVIL_ORMQR_PARAMS);
    Vec out(c.c.size());
    Scratch scratch(CUVIL_ORMQR_SCRATCH(c.m, c.n, c.k, c.left));
    cuvil_rt_ormqr_f64(q.data(), c.v.data(), c.tau.data(), c.c.data(), out.data(),
                       scratch.get());
    CHECK(scratch.fencesIntact());
    for (int64_t b = 0; b < c.batch; ++b) {
      double err = relError(slice(out, b, c.m * c.n), slice(c.out, b, c.m * c.n));
      CHECK(err <= 1e-12);
    }
  }
  const OrmqrCase &c = kOrmqrCases.front();
  std::vector<int64_t> q = {c.batch, c.m, c.n, c.k, c.left, c.transpose, c.vcols};
  std::vector<float> v = toFloat(c.v), tau = toFloat(c.tau), cc = toFloat(c.c), out(cc.size());
  Scratch scratch(CUVIL_ORMQR_SCRATCH(c.m, c.n, c.k, c.left));
  cuvil_rt_ormqr_f32(q.data(), v.data(), tau.data(), cc.data(), out.data(), scratch.get());
  CHECK(relError(toDouble(out), c.out) <= 1e-6);
}

TEST_CASE("linalg: geqrf + householder_product give torch.linalg.qr", "[linalg]") {
  for (const QrCase &c : kQrCases) {
    INFO(c.name);
    int64_t m = c.m, n = c.n, k = std::min(m, n);
    int64_t qcols = c.complete ? m : k, rrows = c.complete ? m : k;
    std::vector<int64_t> gq = {1, m, n};
    Vec qr(static_cast<size_t>(m * n)), tau(static_cast<size_t>(k));
    Scratch gs(CUVIL_GEQRF_SCRATCH(m, n));
    for (int64_t b = 0; b < c.batch; ++b) {
      Vec a = slice(c.a, b, m * n);
      cuvil_rt_geqrf_f64(gq.data(), a.data(), qr.data(), tau.data(), gs.get());
      // R: qr's upper triangle, its first rrows rows.
      Vec r(static_cast<size_t>(rrows * n), 0.0);
      for (int64_t i = 0; i < std::min(rrows, m); ++i)
        for (int64_t j = i; j < n; ++j)
          r[static_cast<size_t>(i * n + j)] = qr[static_cast<size_t>(i * n + j)];
      CHECK(relError(r, slice(c.r, b, rrows * n)) <= 1e-12);
      // Q: the reflectors in the first qcols columns (widened with anything).
      Vec v(static_cast<size_t>(m * qcols), 0.5);
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < std::min(n, qcols); ++j)
          v[static_cast<size_t>(i * qcols + j)] = qr[static_cast<size_t>(i * n + j)];
      std::vector<int64_t> hq = {1, m, qcols, k};
      Vec qm(v.size());
      Scratch hs(CUVIL_HOUSEHOLDER_PRODUCT_SCRATCH(m, qcols));
      cuvil_rt_householder_product_f64(hq.data(), v.data(), tau.data(), qm.data(), hs.get());
      CHECK(relError(qm, slice(c.q, b, m * qcols)) <= 1e-12);
    }
  }
}

TEST_CASE("linalg: eigh's values are LAPACK's, its vectors up to sign", "[linalg]") {
  for (const EighCase &c : kEighCases) {
    INFO(c.name);
    int64_t n = c.n;
    std::vector<int64_t> q = {c.batch, n, c.upper, c.vectors};
    REQUIRE(q.size() == CUVIL_EIGH_PARAMS);
    Vec w(c.w.size()), v(c.vectors ? c.v.size() : 0);
    Scratch scratch(CUVIL_EIGH_SCRATCH(n));
    cuvil_rt_eigh_f64(q.data(), c.a.data(), w.data(), c.vectors ? v.data() : nullptr,
                      scratch.get());
    CHECK(scratch.fencesIntact());
    for (int64_t b = 0; b < c.batch; ++b) {
      Vec wb = slice(w, b, n), want = slice(c.w, b, n);
      double valueErr = relError(wb, want);
      CHECK(valueErr <= 1e-12);
      CHECK(std::is_sorted(wb.begin(), wb.end()));
      if (!c.vectors)
        continue;
      const double *vb = v.data() + b * n * n, *vw = c.v.data() + b * n * n;
      const double *ab = c.a.data() + b * n * n;
      double orthoErr = columnOrthonormality(vb, n, n);
      CHECK(orthoErr <= 1e-13 * double(n));
      // A (the triangle read, mirrored) = V diag(w) V^T.
      double scale = std::max(maxAbs(want), 1e-300), reconErr = 0;
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < n; ++j) {
          int64_t lo = std::max(i, j), hi = std::min(i, j);
          double aij = c.upper ? ab[hi * n + lo] : ab[lo * n + hi], sum = 0;
          for (int64_t l = 0; l < n; ++l)
            sum += vb[i * n + l] * wb[static_cast<size_t>(l)] * vb[j * n + l];
          reconErr = std::max(reconErr, std::fabs(sum - aij) / scale);
        }
      CHECK(reconErr <= 1e-13 * double(n));
      for (int64_t j = 0; j < n; ++j) {
        CHECK(largestIsPositive(vb + j, n, n));
        if (!c.distinct)
          continue;
        double sign, vecErr = errorUpToSign(vb + j, vw + j, n, n, &sign);
        CHECK(vecErr <= 1e-10);
      }
    }
  }
  const EighCase &c = kEighCases.front();
  std::vector<int64_t> q = {c.batch, c.n, c.upper, 0};
  std::vector<float> a = toFloat(c.a), w(c.w.size());
  Scratch scratch(CUVIL_EIGH_SCRATCH(c.n));
  cuvil_rt_eigh_f32(q.data(), a.data(), w.data(), nullptr, scratch.get());
  CHECK(relError(toDouble(w), c.w) <= 1e-6);
}

TEST_CASE("linalg: svd's values are LAPACK's, its vectors up to sign", "[linalg]") {
  for (const SvdCase &c : kSvdCases) {
    INFO(c.name);
    int64_t m = c.m, n = c.n, k = std::min(m, n);
    int64_t ucols = c.full ? m : k, vrows = c.full ? n : k;
    std::vector<int64_t> q = {c.batch, m, n, c.full, c.uv};
    REQUIRE(q.size() == CUVIL_SVD_PARAMS);
    Vec u(static_cast<size_t>(c.batch * m * ucols)), s(c.s.size()),
        vh(static_cast<size_t>(c.batch * vrows * n));
    Scratch scratch(CUVIL_SVD_SCRATCH(m, n, c.full));
    cuvil_rt_svd_f64(q.data(), c.a.data(), c.uv ? u.data() : nullptr, s.data(),
                     c.uv ? vh.data() : nullptr, scratch.get());
    CHECK(scratch.fencesIntact());
    for (int64_t b = 0; b < c.batch; ++b) {
      Vec sb = slice(s, b, k), want = slice(c.s, b, k);
      double valueErr = relError(sb, want);
      CHECK(valueErr <= 1e-12);
      CHECK(std::is_sorted(sb.rbegin(), sb.rend()));
      if (!c.uv)
        continue;
      const double *ub = u.data() + b * m * ucols, *vb = vh.data() + b * vrows * n;
      const double *uw = c.u.data() + b * m * ucols, *vw = c.vh.data() + b * vrows * n;
      const double *ab = c.a.data() + b * m * n;
      double uOrtho = columnOrthonormality(ub, m, ucols), vOrtho = rowOrthonormality(vb, vrows, n);
      CHECK(uOrtho <= 1e-13 * double(std::max(m, n)));
      CHECK(vOrtho <= 1e-13 * double(std::max(m, n)));
      double scale = std::max(maxAbs(want), 1e-300), reconErr = 0;
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double sum = 0;
          for (int64_t l = 0; l < k; ++l)
            sum += ub[i * ucols + l] * sb[static_cast<size_t>(l)] * vb[l * n + j];
          reconErr = std::max(reconErr, std::fabs(sum - ab[i * n + j]) / scale);
        }
      CHECK(reconErr <= 1e-13 * double(std::max(m, n)));
      for (int64_t l = 0; l < ucols; ++l)
        CHECK(largestIsPositive(ub + l, m, ucols));
      for (int64_t l = k; l < vrows; ++l)
        CHECK(largestIsPositive(vb + l * n, n, 1));
      // The pairs (u_l, v_l) of simple, nonzero singular values are unique
      // up to one sign for both.
      for (int64_t l = 0; l < k; ++l) {
        double sl = sb[static_cast<size_t>(l)];
        bool simple = sl > 1e-8 * scale &&
                      (l == 0 || sb[static_cast<size_t>(l - 1)] - sl > 1e-6 * scale) &&
                      (l + 1 == k || sl - sb[static_cast<size_t>(l + 1)] > 1e-6 * scale);
        if (!simple)
          continue;
        double su, sv;
        double uErr = errorUpToSign(ub + l, uw + l, m, ucols, &su);
        double vErr = errorUpToSign(vb + l * n, vw + l * n, n, 1, &sv);
        CHECK(uErr <= 1e-10);
        CHECK(vErr <= 1e-10);
        CHECK(su == sv);
      }
    }
  }
  const SvdCase &c = kSvdCases.front();
  int64_t k = std::min(c.m, c.n);
  std::vector<int64_t> q = {c.batch, c.m, c.n, 0, 1};
  std::vector<float> a = toFloat(c.a), u(static_cast<size_t>(c.m * k)),
      s(static_cast<size_t>(k)), vh(static_cast<size_t>(k * c.n));
  Scratch scratch(CUVIL_SVD_SCRATCH(c.m, c.n, 0));
  cuvil_rt_svd_f32(q.data(), a.data(), u.data(), s.data(), vh.data(), scratch.get());
  CHECK(relError(toDouble(s), c.s) <= 1e-6);
  for (int64_t l = 0; l < k; ++l) {
    double su, sv;
    Vec ud = toDouble(u), vd = toDouble(vh);
    CHECK(errorUpToSign(ud.data() + l, c.u.data() + l, c.m, k, &su) <= 1e-5);
    CHECK(errorUpToSign(vd.data() + l * c.n, c.vh.data() + l * c.n, c.n, 1, &sv) <= 1e-5);
    CHECK(su == sv);
  }
}

namespace {

// Q (n x n) orthogonal, from geqrf + householder_product of a random matrix.
Vec randomOrthogonal(int64_t n, std::mt19937 &rng) {
  std::normal_distribution<double> dist;
  Vec a(static_cast<size_t>(n * n)), qr(a.size()), tau(static_cast<size_t>(n)), q(a.size());
  for (double &x : a)
    x = dist(rng);
  int64_t gq[3] = {1, n, n}, hq[4] = {1, n, n, n};
  Vec scratch(static_cast<size_t>(CUVIL_GEQRF_SCRATCH(n, n)));
  cuvil_rt_geqrf_f64(gq, a.data(), qr.data(), tau.data(), scratch.data());
  cuvil_rt_householder_product_f64(hq, qr.data(), tau.data(), q.data(), scratch.data());
  return q;
}

} // namespace

TEST_CASE("linalg: Jacobi eigh and svd on larger known spectra", "[linalg]") {
  std::mt19937 rng(11);
  SECTION("eigh, 40 x 40, clustered and graded eigenvalues") {
    const int64_t n = 40;
    Vec d(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) // pairs 1e-9 apart, over 8 decades, both signs
      d[static_cast<size_t>(i)] = (i % 2 ? -1 : 1) * std::pow(10.0, -double(i / 5)) +
                                  (i % 3 == 0 ? 1e-9 : 0);
    Vec q = randomOrthogonal(n, rng), a(static_cast<size_t>(n * n), 0.0);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j)
        for (int64_t l = 0; l < n; ++l)
          a[static_cast<size_t>(i * n + j)] +=
              q[static_cast<size_t>(i * n + l)] * d[static_cast<size_t>(l)] *
              q[static_cast<size_t>(j * n + l)];
    int64_t params[4] = {1, n, 0, 1};
    Vec w(static_cast<size_t>(n)), v(a.size());
    Scratch scratch(CUVIL_EIGH_SCRATCH(n));
    cuvil_rt_eigh_f64(params, a.data(), w.data(), v.data(), scratch.get());
    CHECK(scratch.fencesIntact());
    std::sort(d.begin(), d.end());
    double valueErr = relError(w, d);
    CHECK(valueErr <= 1e-13);
    double orthoErr = columnOrthonormality(v.data(), n, n);
    CHECK(orthoErr <= 1e-13);
  }
  SECTION("svd, 30 x 50 and 50 x 30, full matrices, rank 20") {
    for (bool wide : {false, true}) {
      const int64_t m = wide ? 30 : 50, n = wide ? 50 : 30, k = 30, rank = 20;
      Vec qm = randomOrthogonal(m, rng), qn = randomOrthogonal(n, rng);
      Vec sv(static_cast<size_t>(k), 0.0);
      for (int64_t l = 0; l < rank; ++l)
        sv[static_cast<size_t>(l)] = std::pow(10.0, -0.3 * double(l));
      Vec a(static_cast<size_t>(m * n), 0.0);
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j)
          for (int64_t l = 0; l < rank; ++l)
            a[static_cast<size_t>(i * n + j)] += qm[static_cast<size_t>(i * m + l)] *
                                                 sv[static_cast<size_t>(l)] *
                                                 qn[static_cast<size_t>(j * n + l)];
      int64_t params[5] = {1, m, n, 1, 1};
      Vec u(static_cast<size_t>(m * m)), s(static_cast<size_t>(k)), vh(static_cast<size_t>(n * n));
      Scratch scratch(CUVIL_SVD_SCRATCH(m, n, 1));
      cuvil_rt_svd_f64(params, a.data(), u.data(), s.data(), vh.data(), scratch.get());
      CHECK(scratch.fencesIntact());
      double valueErr = relError(s, sv);
      CHECK(valueErr <= 1e-13);
      double uOrtho = columnOrthonormality(u.data(), m, m);
      double vOrtho = rowOrthonormality(vh.data(), n, n);
      CHECK(uOrtho <= 1e-13);
      CHECK(vOrtho <= 1e-13);
      double reconErr = 0;
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double sum = 0;
          for (int64_t l = 0; l < k; ++l)
            sum += u[static_cast<size_t>(i * m + l)] * s[static_cast<size_t>(l)] *
                   vh[static_cast<size_t>(l * n + j)];
          reconErr = std::max(reconErr, std::fabs(sum - a[static_cast<size_t>(i * n + j)]));
        }
      CHECK(reconErr <= 1e-13);
    }
  }
  SECTION("non-finite input gives NaN") {
    double a[4] = {1, 2, NAN, 3}, w[2], v[4], u[4], s[2], vh[4];
    int64_t eq[4] = {1, 2, 0, 1}, sq[5] = {1, 2, 2, 0, 1};
    Vec scratch(64);
    cuvil_rt_eigh_f64(eq, a, w, v, scratch.data());
    CHECK(std::isnan(w[0]));
    CHECK(std::isnan(v[3]));
    a[2] = INFINITY;
    cuvil_rt_svd_f64(sq, a, u, s, vh, scratch.data());
    CHECK(std::isnan(s[1]));
    CHECK(std::isnan(u[0]));
    CHECK(std::isnan(vh[3]));
  }
}
