/*===- runtime/cpu/linalg.c - Dense linear algebra for torch.linalg --------===*
 *
 * The kernels of linalg.h. Each matrix of a batch is copied into the
 * caller's scratch as doubles, worked on there and written back: one body
 * per kernel serves both element types, and outputs may alias inputs.
 *
 * getrf, potrf, trsm, geqrf, orgqr and ormqr are LAPACK's unblocked
 * algorithms (dgetf2, dpotf2, dgeqr2 with dlarfg, dorg2r, dorm2r), so that
 * pivots, reflector signs and partial results are LAPACK's. LAPACK's
 * blocked versions, which it uses for large matrices, compute the same
 * thing in another order: the results differ by rounding only. The
 * symmetric eigenproblem and the SVD are Jacobi methods (accurate and
 * simple, at a few times LAPACK's cost), with deterministic signs.
 *
 *===----------------------------------------------------------------------===*/
#include "linalg.h"

#include "cuvil/kernel_abi.h"

#include <float.h>
#include <math.h>
#include <string.h>

/*--- Element access: f32 / f64 buffers, doubles in scratch -----------------*/

static double get(const void *p, int64_t i, int f32) {
  return f32 ? (double)((const float *)p)[i] : ((const double *)p)[i];
}

static void put(void *p, int64_t i, double x, int f32) {
  if (f32)
    ((float *)p)[i] = (float)x;
  else
    ((double *)p)[i] = x;
}

static void load(double *dst, const void *src, int64_t at, int64_t n, int f32) {
  if (n == 0) /* the buffers of an empty matrix may be NULL */
    return;
  if (!f32) {
    memcpy(dst, (const double *)src + at, (size_t)n * sizeof *dst);
    return;
  }
  const float *s = (const float *)src + at;
  for (int64_t i = 0; i < n; ++i)
    dst[i] = s[i];
}

static void store(void *dst, int64_t at, const double *src, int64_t n, int f32) {
  if (n == 0)
    return;
  if (!f32) {
    memcpy((double *)dst + at, src, (size_t)n * sizeof *src);
    return;
  }
  float *d = (float *)dst + at;
  for (int64_t i = 0; i < n; ++i)
    d[i] = (float)src[i];
}

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

static double dot(const double *x, const double *y, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i)
    s += x[i] * y[i];
  return s;
}

/*--- BLAS / LAPACK helpers -------------------------------------------------*/

/* dnrm2 (the scaled sum of squares: no overflow, no underflow). */
static double nrm2(int64_t n, const double *x, int64_t inc) {
  double scale = 0, ssq = 1;
  for (int64_t i = 0; i < n; ++i) {
    double v = fabs(x[i * inc]);
    if (v == 0)
      continue;
    if (scale < v) {
      double r = scale / v;
      ssq = 1 + ssq * r * r;
      scale = v;
    } else {
      double r = v / scale;
      ssq += r * r;
    }
  }
  return scale * sqrt(ssq);
}

/* dlapy2: sqrt(x^2 + y^2) without overflow. */
static double lapy2(double x, double y) {
  if (isnan(x))
    return x;
  if (isnan(y))
    return y;
  double w = fmax(fabs(x), fabs(y)), z = fmin(fabs(x), fabs(y));
  if (z == 0 || w > DBL_MAX)
    return w;
  double r = z / w;
  return w * sqrt(1 + r * r);
}

/* dlarfg: the reflector H = I - tau (1, v)(1, v)^T with H (alpha, x) =
 * (beta, 0); x (n - 1 values, inc apart) becomes v, alpha beta. */
static double larfg(int64_t n, double *alpha, double *x, int64_t inc) {
  if (n <= 1)
    return 0;
  double xnorm = nrm2(n - 1, x, inc);
  if (xnorm == 0)
    return 0; /* H = I, even for a negative alpha */
  double beta = -copysign(lapy2(*alpha, xnorm), *alpha);
  /* dlamch('S') / dlamch('E'): below it, 1 / (alpha - beta) may overflow. */
  const double safmin = DBL_MIN / (DBL_EPSILON / 2);
  int knt = 0;
  if (fabs(beta) < safmin) {
    const double rsafmn = 1 / safmin;
    do {
      ++knt;
      for (int64_t i = 0; i < n - 1; ++i)
        x[i * inc] *= rsafmn;
      beta *= rsafmn;
      *alpha *= rsafmn;
    } while (fabs(beta) < safmin && knt < 20);
    xnorm = nrm2(n - 1, x, inc);
    beta = -copysign(lapy2(*alpha, xnorm), *alpha);
  }
  double tau = (beta - *alpha) / beta;
  double r = 1 / (*alpha - beta);
  for (int64_t i = 0; i < n - 1; ++i)
    x[i * inc] *= r;
  for (int j = 0; j < knt; ++j)
    beta *= safmin;
  *alpha = beta;
  return tau;
}

/* dlarf, side left: C = (I - tau v v^T) C, C rows x cols (ldc apart), v
 * rows long (inc apart, v[0] as stored: the callers set it to 1); work:
 * cols. */
static void reflect_left(int64_t rows, int64_t cols, const double *v, int64_t inc, double tau,
                         double *c, int64_t ldc, double *work) {
  if (tau == 0)
    return;
  for (int64_t j = 0; j < cols; ++j)
    work[j] = 0;
  for (int64_t i = 0; i < rows; ++i) { /* work = C^T v */
    double vi = v[i * inc];
    const double *ci = c + i * ldc;
    for (int64_t j = 0; j < cols; ++j)
      work[j] += ci[j] * vi;
  }
  for (int64_t j = 0; j < cols; ++j)
    work[j] *= -tau;
  for (int64_t i = 0; i < rows; ++i) { /* C += v (-tau work)^T */
    double vi = v[i * inc];
    double *ci = c + i * ldc;
    for (int64_t j = 0; j < cols; ++j)
      ci[j] += vi * work[j];
  }
}

/* dlarf, side right: C = C (I - tau v v^T), v cols long; work: rows. */
static void reflect_right(int64_t rows, int64_t cols, const double *v, int64_t inc, double tau,
                          double *c, int64_t ldc, double *work) {
  if (tau == 0)
    return;
  for (int64_t i = 0; i < rows; ++i) {
    const double *ci = c + i * ldc;
    double s = 0;
    for (int64_t j = 0; j < cols; ++j)
      s += ci[j] * v[j * inc];
    work[i] = -tau * s;
  }
  for (int64_t i = 0; i < rows; ++i) {
    double *ci = c + i * ldc;
    for (int64_t j = 0; j < cols; ++j)
      ci[j] += work[i] * v[j * inc];
  }
}

/*--- LU --------------------------------------------------------------------*/

/* dgetf2 on a (m x n, row-major): pivots 1-based; returns info. */
static int32_t getf2(double *a, int64_t m, int64_t n, int32_t *pivots) {
  int64_t k = min64(m, n);
  int32_t info = 0;
  for (int64_t j = 0; j < k; ++j) {
    /* idamax: the first largest; a NaN first stays (nothing compares greater). */
    int64_t p = j;
    double big = fabs(a[j * n + j]);
    for (int64_t i = j + 1; i < m; ++i)
      if (fabs(a[i * n + j]) > big) {
        big = fabs(a[i * n + j]);
        p = i;
      }
    pivots[j] = (int32_t)(p + 1);
    double d = a[p * n + j];
    if (d != 0) {
      if (p != j)
        for (int64_t c = 0; c < n; ++c) {
          double t = a[j * n + c];
          a[j * n + c] = a[p * n + c];
          a[p * n + c] = t;
        }
      if (fabs(d) >= DBL_MIN) {
        double r = 1 / d;
        for (int64_t i = j + 1; i < m; ++i)
          a[i * n + j] *= r;
      } else { /* 1 / d would overflow */
        for (int64_t i = j + 1; i < m; ++i)
          a[i * n + j] /= d;
      }
    } else if (info == 0) {
      info = (int32_t)(j + 1);
    }
    const double *rj = a + j * n;
    for (int64_t i = j + 1; i < m; ++i) {
      double *ri = a + i * n, l = ri[j];
      for (int64_t c = j + 1; c < n; ++c)
        ri[c] -= l * rj[c];
    }
  }
  return info;
}

static void lu_run(const int64_t *q, const void *a, void *lu, int32_t *pivots, int32_t *info,
                   double *scratch, int f32) {
  int64_t batch = q[CUVIL_LU_BATCH], m = q[CUVIL_LU_M], n = q[CUVIL_LU_N], k = min64(m, n);
  for (int64_t b = 0; b < batch; ++b) {
    if (k == 0) { /* nothing to factor (and the buffers may be NULL) */
      info[b] = 0;
      continue;
    }
    load(scratch, a, b * m * n, m * n, f32);
    info[b] = getf2(scratch, m, n, pivots + b * k);
    store(lu, b * m * n, scratch, m * n, f32);
  }
}

void cuvil_rt_lu_f64(const int64_t *q, const double *a, double *lu, int32_t *pivots,
                     int32_t *info, double *scratch) {
  lu_run(q, a, lu, pivots, info, scratch, 0);
}

void cuvil_rt_lu_f32(const int64_t *q, const float *a, float *lu, int32_t *pivots,
                     int32_t *info, double *scratch) {
  lu_run(q, a, lu, pivots, info, scratch, 1);
}

/*--- Cholesky --------------------------------------------------------------*/

/* dpotf2, lower, on the lower triangle of l (n x n); returns info. Row j of
 * L is final once computed: the dot products run along rows. */
static int32_t potf2_lower(double *l, int64_t n) {
  for (int64_t j = 0; j < n; ++j) {
    double *rj = l + j * n;
    double ajj = rj[j] - dot(rj, rj, j);
    if (!(ajj > 0)) { /* LAPACK leaves the failed pivot's value */
      rj[j] = ajj;
      return (int32_t)(j + 1);
    }
    ajj = sqrt(ajj);
    rj[j] = ajj;
    double r = 1 / ajj;
    for (int64_t i = j + 1; i < n; ++i) {
      double *ri = l + i * n;
      ri[j] = (ri[j] - dot(ri, rj, j)) * r;
    }
  }
  return 0;
}

static void cholesky_run(const int64_t *q, const void *a, void *out, int32_t *info,
                         double *scratch, int f32) {
  int64_t batch = q[CUVIL_CHOLESKY_BATCH], n = q[CUVIL_CHOLESKY_N];
  int upper = q[CUVIL_CHOLESKY_UPPER] != 0;
  for (int64_t b = 0; b < batch; ++b) {
    if (n == 0) {
      info[b] = 0;
      continue;
    }
    const int64_t at = b * n * n;
    /* Upper: U^T U = A is L L^T with L = A's upper triangle transposed, and
     * dpotf2's upper variant is the same arithmetic transposed. */
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j <= i; ++j)
        scratch[i * n + j] = get(a, at + (upper ? j * n + i : i * n + j), f32);
    info[b] = potf2_lower(scratch, n);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double x = j <= i ? scratch[i * n + j] : 0;
        put(out, at + (upper ? j * n + i : i * n + j), x, f32);
      }
  }
}

void cuvil_rt_cholesky_f64(const int64_t *q, const double *a, double *out, int32_t *info,
                           double *scratch) {
  cholesky_run(q, a, out, info, scratch, 0);
}

void cuvil_rt_cholesky_f32(const int64_t *q, const float *a, float *out, int32_t *info,
                           double *scratch) {
  cholesky_run(q, a, out, info, scratch, 1);
}

/*--- Triangular solve ------------------------------------------------------*/

/* A X = B in place on x (n x k): substitution by rows of X. */
static void trsm_left(const double *t, double *x, int64_t n, int64_t k, int upper, int unit) {
  for (int64_t s = 0; s < n; ++s) {
    int64_t i = upper ? n - 1 - s : s;
    double *xi = x + i * k;
    int64_t j0 = upper ? i + 1 : 0, j1 = upper ? n : i;
    for (int64_t j = j0; j < j1; ++j) {
      double aij = t[i * n + j];
      const double *xj = x + j * k;
      for (int64_t c = 0; c < k; ++c)
        xi[c] -= aij * xj[c];
    }
    if (!unit) {
      double d = t[i * n + i];
      for (int64_t c = 0; c < k; ++c)
        xi[c] /= d;
    }
  }
}

/* X A = B in place on x (k x n): each row x solves x A = b, column by
 * column of A; once x_j is final it is taken out of the later x_l along
 * row j of A (contiguous). */
static void trsm_right(const double *t, double *x, int64_t n, int64_t k, int upper, int unit) {
  for (int64_t r = 0; r < k; ++r) {
    double *xr = x + r * n;
    for (int64_t s = 0; s < n; ++s) {
      int64_t j = upper ? s : n - 1 - s;
      if (!unit)
        xr[j] /= t[j * n + j];
      double xj = xr[j];
      const double *tj = t + j * n;
      int64_t l0 = upper ? j + 1 : 0, l1 = upper ? n : j;
      for (int64_t l = l0; l < l1; ++l)
        xr[l] -= xj * tj[l];
    }
  }
}

static void triangular_solve_run(const int64_t *q, const void *a, const void *b, void *x,
                                 double *scratch, int f32) {
  int64_t batch = q[CUVIL_TRIANGULAR_SOLVE_BATCH], n = q[CUVIL_TRIANGULAR_SOLVE_N];
  int64_t k = q[CUVIL_TRIANGULAR_SOLVE_K];
  int upper = q[CUVIL_TRIANGULAR_SOLVE_UPPER] != 0, left = q[CUVIL_TRIANGULAR_SOLVE_LEFT] != 0;
  int unit = q[CUVIL_TRIANGULAR_SOLVE_UNITRIANGULAR] != 0;
  if (n * k == 0)
    return;
  double *t = scratch, *xs = scratch + n * n;
  for (int64_t p = 0; p < batch; ++p) {
    load(t, a, p * n * n, n * n, f32);
    load(xs, b, p * n * k, n * k, f32);
    if (left)
      trsm_left(t, xs, n, k, upper, unit);
    else
      trsm_right(t, xs, n, k, upper, unit);
    store(x, p * n * k, xs, n * k, f32);
  }
}

void cuvil_rt_triangular_solve_f64(const int64_t *q, const double *a, const double *b,
                                   double *x, double *scratch) {
  triangular_solve_run(q, a, b, x, scratch, 0);
}

void cuvil_rt_triangular_solve_f32(const int64_t *q, const float *a, const float *b, float *x,
                                   double *scratch) {
  triangular_solve_run(q, a, b, x, scratch, 1);
}

/*--- QR: geqrf, orgqr, ormqr -----------------------------------------------*/

/* dgeqr2 on a (m x n); tau: min(m, n); work: n. */
static void geqr2(double *a, int64_t m, int64_t n, double *tau, double *work) {
  int64_t k = min64(m, n);
  for (int64_t i = 0; i < k; ++i) {
    double *aii = a + i * n + i;
    tau[i] = larfg(m - i, aii, aii + n, n);
    if (i < n - 1) {
      double beta = *aii;
      *aii = 1;
      reflect_left(m - i, n - i - 1, aii, n, tau[i], aii + 1, n, work);
      *aii = beta;
    }
  }
}

static void geqrf_run(const int64_t *q, const void *a, void *qr, void *tau, double *scratch,
                      int f32) {
  int64_t batch = q[CUVIL_GEQRF_BATCH], m = q[CUVIL_GEQRF_M], n = q[CUVIL_GEQRF_N];
  int64_t k = min64(m, n);
  if (k == 0)
    return;
  double *t = scratch + m * n, *work = t + k;
  for (int64_t b = 0; b < batch; ++b) {
    load(scratch, a, b * m * n, m * n, f32);
    geqr2(scratch, m, n, t, work);
    store(qr, b * m * n, scratch, m * n, f32);
    store(tau, b * k, t, k, f32);
  }
}

void cuvil_rt_geqrf_f64(const int64_t *q, const double *a, double *qr, double *tau,
                        double *scratch) {
  geqrf_run(q, a, qr, tau, scratch, 0);
}

void cuvil_rt_geqrf_f32(const int64_t *q, const float *a, float *qr, float *tau,
                        double *scratch) {
  geqrf_run(q, a, qr, tau, scratch, 1);
}

/* dorg2r on a (m x n, m >= n >= k): the reflectors in, Q's columns out;
 * tau[i * tau_inc] read through get. work: n. */
static void org2r(double *a, int64_t m, int64_t n, int64_t k, const void *tau, int64_t tau_at,
                  int f32, double *work) {
  for (int64_t j = k; j < n; ++j) { /* columns past k: the unit matrix's */
    for (int64_t l = 0; l < m; ++l)
      a[l * n + j] = 0;
    a[j * n + j] = 1;
  }
  for (int64_t i = k - 1; i >= 0; --i) {
    double t = get(tau, tau_at + i, f32);
    double *aii = a + i * n + i;
    if (i < n - 1) {
      *aii = 1;
      reflect_left(m - i, n - i - 1, aii, n, t, aii + 1, n, work);
    }
    for (int64_t l = i + 1; l < m; ++l)
      a[l * n + i] *= -t;
    *aii = 1 - t;
    for (int64_t l = 0; l < i; ++l)
      a[l * n + i] = 0;
  }
}

static void householder_product_run(const int64_t *q, const void *v, const void *tau, void *out,
                                    double *scratch, int f32) {
  int64_t batch = q[CUVIL_HOUSEHOLDER_PRODUCT_BATCH], m = q[CUVIL_HOUSEHOLDER_PRODUCT_M];
  int64_t n = q[CUVIL_HOUSEHOLDER_PRODUCT_N], k = q[CUVIL_HOUSEHOLDER_PRODUCT_K];
  if (m * n == 0)
    return;
  for (int64_t b = 0; b < batch; ++b) {
    load(scratch, v, b * m * n, m * n, f32);
    org2r(scratch, m, n, k, tau, b * k, f32, scratch + m * n);
    store(out, b * m * n, scratch, m * n, f32);
  }
}

void cuvil_rt_householder_product_f64(const int64_t *q, const double *v, const double *tau,
                                      double *out, double *scratch) {
  householder_product_run(q, v, tau, out, scratch, 0);
}

void cuvil_rt_householder_product_f32(const int64_t *q, const float *v, const float *tau,
                                      float *out, double *scratch) {
  householder_product_run(q, v, tau, out, scratch, 1);
}

static void ormqr_run(const int64_t *q, const void *v, const void *tau, const void *c, void *out,
                      double *scratch, int f32) {
  int64_t batch = q[CUVIL_ORMQR_BATCH], m = q[CUVIL_ORMQR_M], n = q[CUVIL_ORMQR_N];
  int64_t k = q[CUVIL_ORMQR_K], vcols = q[CUVIL_ORMQR_V_COLS];
  int left = q[CUVIL_ORMQR_LEFT] != 0, transpose = q[CUVIL_ORMQR_TRANSPOSE] != 0;
  int64_t nq = left ? m : n;
  if (m * n == 0)
    return;
  double *cs = scratch, *vs = scratch + m * n, *work = vs + nq * k;
  /* dorm2r: Q = H(1) .. H(k), so Q C and C Q^T apply H(k) first. */
  int forward = left == transpose;
  for (int64_t b = 0; b < batch; ++b) {
    load(cs, c, b * m * n, m * n, f32);
    for (int64_t r = 0; r < nq; ++r)
      load(vs + r * k, v, (b * nq + r) * vcols, k, f32);
    for (int64_t s = 0; s < k; ++s) {
      int64_t i = forward ? s : k - 1 - s;
      double t = get(tau, b * k + i, f32);
      double *vii = vs + i * k + i;
      *vii = 1;
      if (left)
        reflect_left(m - i, n, vii, k, t, cs + i * n, n, work);
      else
        reflect_right(m, n - i, vii, k, t, cs + i, n, work);
    }
    store(out, b * m * n, cs, m * n, f32);
  }
}

void cuvil_rt_ormqr_f64(const int64_t *q, const double *v, const double *tau, const double *c,
                        double *out, double *scratch) {
  ormqr_run(q, v, tau, c, out, scratch, 0);
}

void cuvil_rt_ormqr_f32(const int64_t *q, const float *v, const float *tau, const float *c,
                        float *out, double *scratch) {
  ormqr_run(q, v, tau, c, out, scratch, 1);
}

/*--- Jacobi methods: eigh, svd ---------------------------------------------*/

/* More sweeps than cyclic Jacobi needs (quadratic convergence: about 10
 * for n in the hundreds): a guard, not a tolerance. */
#define JACOBI_MAX_SWEEPS 100
/* Below it (after scaling the largest entry to about 1) an off-diagonal
 * entry is zero: its square would underflow. */
#define JACOBI_TINY 1e-150

/* *exponent = e with the largest |x[i]| * 2^-e in [0.5, 1): scaling by
 * 2^-e is exact and keeps squares and sums from overflow and underflow.
 * Returns 1; 0 (e untouched) when x is all zeros; -1 when x has a NaN or
 * an infinity. */
static int scale_exponent(const double *x, int64_t n, int *exponent) {
  double big = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (!isfinite(x[i]))
      return -1;
    big = fmax(big, fabs(x[i]));
  }
  if (big == 0)
    return 0;
  frexp(big, exponent);
  return 1;
}

/* The rotation (c, s) with t = s / c the smaller root of t^2 + 2 zeta t = 1
 * (|t| <= 1, the smaller angle); returns t. */
static double rotation(double zeta, double *c, double *s) {
  double t = 1 / (fabs(zeta) + hypot(1, zeta));
  if (zeta < 0)
    t = -t;
  *c = 1 / sqrt(1 + t * t);
  *s = t * *c;
  return t;
}

/* Where x[j] goes when x is sorted stably (ascending or descending). */
static int64_t rank_of(const double *x, int64_t n, int64_t j, int descending) {
  int64_t r = 0;
  for (int64_t i = 0; i < n; ++i) {
    int before = descending ? x[i] > x[j] : x[i] < x[j];
    if (before || (x[i] == x[j] && i < j))
      ++r;
  }
  return r;
}

/* -1 or 1: the sign making the first largest |x[i]| positive. */
static double sign_of_largest(const double *x, int64_t n, int64_t inc) {
  double big = -1, sign = 1;
  for (int64_t i = 0; i < n; ++i)
    if (fabs(x[i * inc]) > big) {
      big = fabs(x[i * inc]);
      sign = x[i * inc] < 0 ? -1 : 1;
    }
  return sign;
}

/* Cyclic Jacobi on the symmetric s (n x n, both triangles), scaled; vt's
 * rows (n x n) collect the eigenvectors. A pair is rotated while its
 * off-diagonal entry exceeds eps sqrt(|a_pp a_qq|): the eigenvalues are
 * then accurate to rounding (relatively so for definite matrices). */
static void jacobi_eigen(double *s, double *vt, int64_t n) {
  for (int64_t i = 0; i < n * n; ++i)
    vt[i] = 0;
  for (int64_t i = 0; i < n; ++i)
    vt[i * n + i] = 1;
  for (int sweep = 0; sweep < JACOBI_MAX_SWEEPS; ++sweep) {
    int rotated = 0;
    for (int64_t p = 0; p + 1 < n; ++p)
      for (int64_t q = p + 1; q < n; ++q) {
        double apq = s[p * n + q], app = s[p * n + p], aqq = s[q * n + q];
        if (fabs(apq) < JACOBI_TINY ||
            fabs(apq) <= DBL_EPSILON * sqrt(fabs(app)) * sqrt(fabs(aqq)))
          continue;
        rotated = 1;
        double c, sn, t = rotation((aqq - app) / (2 * apq), &c, &sn);
        s[p * n + p] = app - t * apq;
        s[q * n + q] = aqq + t * apq;
        s[p * n + q] = s[q * n + p] = 0;
        double *sp = s + p * n, *sq = s + q * n; /* rows p and q; columns by symmetry */
        for (int64_t r = 0; r < n; ++r) {
          if (r == p || r == q)
            continue;
          double xp = sp[r], xq = sq[r];
          sp[r] = s[r * n + p] = c * xp - sn * xq;
          sq[r] = s[r * n + q] = sn * xp + c * xq;
        }
        double *vp = vt + p * n, *vq = vt + q * n;
        for (int64_t r = 0; r < n; ++r) {
          double xp = vp[r], xq = vq[r];
          vp[r] = c * xp - sn * xq;
          vq[r] = sn * xp + c * xq;
        }
      }
    if (!rotated)
      break;
  }
}

static void eigh_run(const int64_t *q, const void *a, void *w, void *v, double *scratch,
                     int f32) {
  int64_t batch = q[CUVIL_EIGH_BATCH], n = q[CUVIL_EIGH_N];
  int upper = q[CUVIL_EIGH_UPPER] != 0, vectors = q[CUVIL_EIGH_VECTORS] != 0;
  if (n == 0)
    return;
  double *s = scratch, *vt = s + n * n, *lambda = vt + n * n;
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t at = b * n * n;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j <= i; ++j)
        s[i * n + j] = s[j * n + i] = get(a, at + (upper ? j * n + i : i * n + j), f32);
    int e = 0, kind = scale_exponent(s, n * n, &e);
    if (kind < 0) {
      for (int64_t i = 0; i < n; ++i)
        put(w, b * n + i, NAN, f32);
      for (int64_t i = 0; vectors && i < n * n; ++i)
        put(v, at + i, NAN, f32);
      continue;
    }
    for (int64_t i = 0; i < n * n; ++i)
      s[i] = ldexp(s[i], -e);
    jacobi_eigen(s, vt, n);
    for (int64_t j = 0; j < n; ++j)
      lambda[j] = ldexp(s[j * n + j], e);
    for (int64_t j = 0; j < n; ++j) {
      int64_t r = rank_of(lambda, n, j, 0);
      put(w, b * n + r, lambda[j], f32);
      if (!vectors)
        continue;
      double sign = sign_of_largest(vt + j * n, n, 1);
      for (int64_t i = 0; i < n; ++i)
        put(v, at + i * n + r, sign * vt[j * n + i], f32);
    }
  }
}

void cuvil_rt_eigh_f64(const int64_t *q, const double *a, double *w, double *v,
                       double *scratch) {
  eigh_run(q, a, w, v, scratch, 0);
}

void cuvil_rt_eigh_f32(const int64_t *q, const float *a, float *w, float *v, double *scratch) {
  eigh_run(q, a, w, v, scratch, 1);
}

/* One-sided Jacobi on the columns of a tall matrix, stored as the rows of
 * g (k rows of length m, k <= m); wt's rows (k x k, or NULL) collect V's
 * columns. A pair is rotated until its columns are orthogonal to sqrt(m)
 * eps relative to their norms: then the norms are the singular values to
 * rounding and the normalised columns are orthonormal, however small. */
static void jacobi_svd(double *g, double *wt, int64_t m, int64_t k) {
  const double tol = sqrt((double)m) * DBL_EPSILON;
  for (int sweep = 0; sweep < JACOBI_MAX_SWEEPS; ++sweep) {
    int rotated = 0;
    for (int64_t p = 0; p + 1 < k; ++p)
      for (int64_t q = p + 1; q < k; ++q) {
        double *gp = g + p * m, *gq = g + q * m;
        double alpha = dot(gp, gp, m), beta = dot(gq, gq, m), gamma = dot(gp, gq, m);
        if (fabs(gamma) < JACOBI_TINY * JACOBI_TINY || /* gamma is a square's scale */
            fabs(gamma) <= tol * sqrt(alpha) * sqrt(beta))
          continue;
        rotated = 1;
        double c, s;
        (void)rotation((beta - alpha) / (2 * gamma), &c, &s);
        for (int64_t i = 0; i < m; ++i) {
          double xp = gp[i], xq = gq[i];
          gp[i] = c * xp - s * xq;
          gq[i] = s * xp + c * xq;
        }
        if (!wt)
          continue;
        double *wp = wt + p * k, *wq = wt + q * k;
        for (int64_t i = 0; i < k; ++i) {
          double xp = wp[i], xq = wq[i];
          wp[i] = c * xp - s * xq;
          wq[i] = s * xp + c * xq;
        }
      }
    if (!rotated)
      break;
  }
}

/* Fills the rows of u (count x m) not marked in `filled` with unit vectors
 * orthogonal to every other row: Gram-Schmidt (twice) of e_0, e_1, ... in
 * order, keeping those with at least 1 / (2 sqrt(m)) of their norm left.
 * (The rejected ones only lose norm as rows are added, and what is left of
 * all m adds up to the missing dimensions, so enough pass.) x: m. */
static void complete_basis(double *u, double *filled, int64_t count, int64_t m, double *x) {
  int64_t next = 0;
  for (int64_t r = 0; r < count; ++r) {
    if (filled[r] != 0)
      continue;
    for (; next < m; ++next) {
      for (int64_t i = 0; i < m; ++i)
        x[i] = i == next ? 1 : 0;
      for (int pass = 0; pass < 2; ++pass)
        for (int64_t f = 0; f < count; ++f) {
          if (filled[f] == 0)
            continue;
          double d = dot(u + f * m, x, m);
          for (int64_t i = 0; i < m; ++i)
            x[i] -= d * u[f * m + i];
        }
      double norm = sqrt(dot(x, x, m));
      if (norm * norm > 0.25 / (double)m)
        break;
    }
    double inv = next < m ? 1 / sqrt(dot(x, x, m)) : 0;
    for (int64_t i = 0; i < m; ++i)
      u[r * m + i] = x[i] * inv;
    filled[r] = 1;
    ++next;
  }
}

static void svd_run(const int64_t *q, const void *a, void *u, void *s, void *vh,
                    double *scratch, int f32) {
  int64_t batch = q[CUVIL_SVD_BATCH], m = q[CUVIL_SVD_M], n = q[CUVIL_SVD_N];
  int full = q[CUVIL_SVD_FULL_MATRICES] != 0, uv = q[CUVIL_SVD_COMPUTE_UV] != 0;
  /* The tall matrix T (big x small) is A, or A^T when A is wide: T = X S
   * W^T. A's left vectors are then X's (tall) or W's (wide). */
  int tall = m >= n;
  int64_t big = max64(m, n), small = min64(m, n), xcount = full ? big : small;
  int64_t ucols = full ? m : small, vrows = full ? n : small;
  if (batch == 0 || big == 0)
    return;
  double *g = scratch, *wt = g + small * big, *sigma = wt + small * small;
  double *order = sigma + small, *x = order + small, *filled = x + xcount * big;
  double *tmp = filled + xcount;
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t at = b * m * n;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        g[tall ? j * big + i : i * big + j] = get(a, at + i * n + j, f32);
    int e = 0, kind = scale_exponent(g, small * big, &e);
    if (kind < 0) {
      for (int64_t j = 0; j < small; ++j)
        put(s, b * small + j, NAN, f32);
      for (int64_t i = 0; uv && i < m * ucols; ++i)
        put(u, b * m * ucols + i, NAN, f32);
      for (int64_t i = 0; uv && i < vrows * n; ++i)
        put(vh, b * vrows * n + i, NAN, f32);
      continue;
    }
    for (int64_t i = 0; i < small * big; ++i)
      g[i] = ldexp(g[i], -e);
    for (int64_t i = 0; uv && i < small * small; ++i)
      wt[i] = i % (small + 1) == 0; /* the identity */
    jacobi_svd(g, uv ? wt : NULL, big, small);
    for (int64_t j = 0; j < small; ++j) /* scaled: tiny values keep their digits */
      sigma[j] = nrm2(big, g + j * big, 1);
    for (int64_t j = 0; j < small; ++j) {
      int64_t r = rank_of(sigma, small, j, 1);
      order[r] = (double)j;
      put(s, b * small + r, ldexp(sigma[j], e), f32);
    }
    if (!uv)
      continue;
    /* X's rows in singular value order: T's normalised columns where their
     * norm means something, a completion for the rest. */
    for (int64_t r = 0; r < xcount; ++r)
      filled[r] = 0;
    for (int64_t r = 0; r < small; ++r) {
      int64_t j = (int64_t)order[r];
      if (sigma[j] < JACOBI_TINY)
        continue;
      for (int64_t i = 0; i < big; ++i)
        x[r * big + i] = g[j * big + i] / sigma[j];
      filled[r] = 1;
    }
    complete_basis(x, filled, xcount, big, tmp);
    for (int64_t r = 0; r < xcount; ++r) {
      const double *xr = x + r * big, *wr = r < small ? wt + (int64_t)order[r] * small : NULL;
      double sign = tall || !wr ? sign_of_largest(xr, big, 1) : sign_of_largest(wr, small, 1);
      if (tall) { /* U = X, Vh = W^T */
        for (int64_t i = 0; i < m; ++i)
          put(u, b * m * ucols + i * ucols + r, sign * xr[i], f32);
        for (int64_t i = 0; wr && i < n; ++i)
          put(vh, b * vrows * n + r * n + i, sign * wr[i], f32);
      } else { /* U = W, Vh = X^T */
        for (int64_t i = 0; i < n; ++i)
          put(vh, b * vrows * n + r * n + i, sign * xr[i], f32);
        for (int64_t i = 0; wr && i < m; ++i)
          put(u, b * m * ucols + i * ucols + r, sign * wr[i], f32);
      }
    }
  }
}

void cuvil_rt_svd_f64(const int64_t *q, const double *a, double *u, double *s, double *vh,
                      double *scratch) {
  svd_run(q, a, u, s, vh, scratch, 0);
}

void cuvil_rt_svd_f32(const int64_t *q, const float *a, float *u, float *s, float *vh,
                      double *scratch) {
  svd_run(q, a, u, s, vh, scratch, 1);
}
