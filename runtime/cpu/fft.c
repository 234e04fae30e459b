/*===- runtime/cpu/fft.c - Discrete Fourier transforms --------------------===*/
#include "fft.h"

#include <math.h>
#include <string.h>

static const double kPi = 3.14159265358979323846264338327950288;

/* twiddle[k] = exp(-2 pi i k / m), k < m/2, each from its own angle (no
 * accumulated rounding). */
static void twiddles(double *w, int64_t m) {
  for (int64_t k = 0; k < m / 2; ++k) {
    double a = -2.0 * kPi * (double)k / (double)m;
    w[2 * k] = cos(a);
    w[2 * k + 1] = sin(a);
  }
}

/* In-place forward radix-2 FFT of m (a power of two) interleaved pairs;
 * `inverse` conjugates the twiddles. */
static void fft_pow2(double *z, int64_t m, const double *w, int inverse) {
  for (int64_t i = 1, j = 0; i < m; ++i) { /* bit reversal */
    int64_t bit = m >> 1;
    for (; j & bit; bit >>= 1)
      j ^= bit;
    j ^= bit;
    if (i < j) {
      double r = z[2 * i], s = z[2 * i + 1];
      z[2 * i] = z[2 * j];
      z[2 * i + 1] = z[2 * j + 1];
      z[2 * j] = r;
      z[2 * j + 1] = s;
    }
  }
  for (int64_t len = 2; len <= m; len <<= 1) {
    int64_t half = len / 2, stride = m / len;
    for (int64_t start = 0; start < m; start += len)
      for (int64_t k = 0; k < half; ++k) {
        double wr = w[2 * k * stride], wi = inverse ? -w[2 * k * stride + 1] : w[2 * k * stride + 1];
        double *a = z + 2 * (start + k), *b = z + 2 * (start + k + half);
        double tr = b[0] * wr - b[1] * wi, ti = b[0] * wi + b[1] * wr;
        b[0] = a[0] - tr;
        b[1] = a[1] - ti;
        a[0] += tr;
        a[1] += ti;
      }
  }
}

/* Bluestein: jk = (j^2 + k^2 - (k-j)^2) / 2 turns the DFT into a
 * convolution with the chirp exp(i pi l^2 / n), done by power-of-two FFTs.
 * chirp[j] = exp(-i pi j^2 / n) (forward); j^2 is reduced mod 2n first so
 * the angle stays exact for long rows. */
typedef struct {
  int64_t n, m;
  double *a, *b, *w, *chirp;
} bluestein;

static void bluestein_setup(bluestein *p, int64_t n, double *scratch, int inverse) {
  p->n = n;
  p->m = cuvil_dft_pow2(2 * n - 1);
  p->a = scratch;
  p->b = scratch + 2 * p->m;
  p->w = scratch + 4 * p->m;
  p->chirp = scratch + 5 * p->m;
  twiddles(p->w, p->m);
  for (int64_t j = 0; j < n; ++j) {
    int64_t q = (int64_t)(((unsigned long long)j * (unsigned long long)j) % (unsigned long long)(2 * n));
    double a = (inverse ? kPi : -kPi) * (double)q / (double)n;
    p->chirp[2 * j] = cos(a);
    p->chirp[2 * j + 1] = sin(a);
  }
  /* b[l] = conj(chirp[|l|]) for |l| < n, wrapped, and its transform. */
  memset(p->b, 0, sizeof(double) * 2 * (size_t)p->m);
  for (int64_t l = 0; l < n; ++l) {
    p->b[2 * l] = p->chirp[2 * l];
    p->b[2 * l + 1] = -p->chirp[2 * l + 1];
    if (l) {
      p->b[2 * (p->m - l)] = p->chirp[2 * l];
      p->b[2 * (p->m - l) + 1] = -p->chirp[2 * l + 1];
    }
  }
  fft_pow2(p->b, p->m, p->w, 0);
}

/* row (n pairs, in p->a[0..2n)) -> its DFT in p->a[0..2n). */
static void bluestein_run(const bluestein *p) {
  int64_t n = p->n, m = p->m;
  double *a = p->a;
  for (int64_t j = 0; j < n; ++j) {
    double xr = a[2 * j], xi = a[2 * j + 1], cr = p->chirp[2 * j], ci = p->chirp[2 * j + 1];
    a[2 * j] = xr * cr - xi * ci;
    a[2 * j + 1] = xr * ci + xi * cr;
  }
  memset(a + 2 * n, 0, sizeof(double) * 2 * (size_t)(m - n));
  fft_pow2(a, m, p->w, 0);
  for (int64_t k = 0; k < m; ++k) {
    double xr = a[2 * k], xi = a[2 * k + 1], br = p->b[2 * k], bi = p->b[2 * k + 1];
    a[2 * k] = xr * br - xi * bi;
    a[2 * k + 1] = xr * bi + xi * br;
  }
  fft_pow2(a, m, p->w, 1);
  double scale = 1.0 / (double)m;
  for (int64_t k = 0; k < n; ++k) {
    double xr = a[2 * k] * scale, xi = a[2 * k + 1] * scale, cr = p->chirp[2 * k], ci = p->chirp[2 * k + 1];
    a[2 * k] = xr * cr - xi * ci;
    a[2 * k + 1] = xr * ci + xi * cr;
  }
}

#define DEFINE_DFT(SUFFIX, T)                                                                       \
  void cuvil_rt_dft_##SUFFIX(const int64_t *params, const T *x, T *out, double *scratch) {           \
    int64_t batch = params[CUVIL_DFT_BATCH], n = params[CUVIL_DFT_N];                              \
    int inverse = params[CUVIL_DFT_INVERSE] != 0;                                                   \
    if (batch <= 0 || n <= 0)                                                                       \
      return;                                                                                       \
    if (n == 1) {                                                                                   \
      for (int64_t i = 0; i < 2 * batch; ++i)                                                       \
        out[i] = x[i];                                                                              \
      return;                                                                                       \
    }                                                                                               \
    int pow2 = cuvil_dft_pow2(n) == n;                                                              \
    bluestein plan;                                                                                 \
    double *row = scratch, *w = scratch + 2 * n;                                                    \
    if (pow2)                                                                                       \
      twiddles(w, n);                                                                               \
    else {                                                                                          \
      bluestein_setup(&plan, n, scratch, inverse);                                                  \
      row = plan.a;                                                                                 \
    }                                                                                               \
    for (int64_t r = 0; r < batch; ++r) {                                                           \
      const T *src = x + 2 * n * r;                                                                 \
      for (int64_t i = 0; i < 2 * n; ++i)                                                           \
        row[i] = (double)src[i];                                                                    \
      if (pow2)                                                                                     \
        fft_pow2(row, n, w, inverse);                                                               \
      else                                                                                          \
        bluestein_run(&plan);                                                                       \
      T *dst = out + 2 * n * r;                                                                     \
      for (int64_t i = 0; i < 2 * n; ++i)                                                           \
        dst[i] = (T)row[i];                                                                         \
    }                                                                                               \
  }

DEFINE_DFT(f32, float)
DEFINE_DFT(f64, double)
