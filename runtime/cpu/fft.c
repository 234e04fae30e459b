/*===- runtime/cpu/fft.c - Discrete Fourier transforms --------------------===*/
#include "fft.h"
#ifndef CUVIL_RUNTIME_MATH_ONLY
#include "schedule.h"
#endif

#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
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

/*--- Eight rows at a time ---------------------------------------------------------*/

/* Rows are transformed 8 at a time, each row a lane: the real and the
 * imaginary parts of a block in [m][8] arrays, so every butterfly is the
 * same operation on 8 rows (vectors of 8 doubles, no shuffles). The forward
 * pass is decimation in frequency (natural order in, bit-reversed order
 * out) and the inverse one decimation in time (bit-reversed in, natural
 * out), so Bluestein's product with the chirp filter's transform needs no
 * reordering between them, and a power-of-two row is read out through the
 * bit reversal. Twiddles, chirp and the filter's transform are kept per
 * (n, direction) for the life of the process (worked out with sin and cos
 * per call, they cost more than the transforms of a few short rows). */
#define LANES 8

typedef struct dft_plan {
  int64_t n, m; /* m: the power-of-two length transformed (n, or Bluestein's) */
  int inverse;
  int32_t *bitrev;        /* [m] */
  double *tw_re, *tw_im;  /* per stage of length L: exp(-2 pi i k / L), k < L/2, at L/2 - 1 + k */
  double *chirp;          /* Bluestein: [n][2], exp(-+i pi j^2 / n) */
  double *filt_re, *filt_im; /* Bluestein: the filter's transform / m, in bit-reversed order */
} dft_plan;

enum { kPlanSlots = 32 };
static dft_plan *plan_slots[kPlanSlots];
static int plans_used;
static pthread_mutex_t plan_lock = PTHREAD_MUTEX_INITIALIZER;

static int64_t log2_of(int64_t m) {
  int64_t b = 0;
  while (((int64_t)1 << b) < m)
    ++b;
  return b;
}

static dft_plan *make_plan(int64_t n, int inverse) {
  const int pow2 = cuvil_dft_pow2(n) == n;
  const int64_t m = pow2 ? n : cuvil_dft_pow2(2 * n - 1);
  size_t bytes = sizeof(dft_plan) + sizeof(int32_t) * (size_t)m + sizeof(double) * 2 * (size_t)m;
  if (!pow2)
    bytes += sizeof(double) * (2 * (size_t)n + 2 * (size_t)m + 6 * (size_t)m);
  char *memory = malloc(bytes);
  if (!memory)
    return NULL;
  dft_plan *p = (dft_plan *)memory;
  memory += sizeof(dft_plan);
  p->n = n, p->m = m, p->inverse = inverse;
  p->tw_re = (double *)memory;
  p->tw_im = p->tw_re + m;
  p->bitrev = (int32_t *)(p->tw_im + m);
  const int64_t bits = log2_of(m);
  for (int64_t i = 0; i < m; ++i) {
    int64_t r = 0;
    for (int64_t b = 0; b < bits; ++b)
      r |= ((i >> b) & 1) << (bits - 1 - b);
    p->bitrev[i] = (int32_t)r;
  }
  for (int64_t len = 2; len <= m; len <<= 1)
    for (int64_t k = 0; k < len / 2; ++k) {
      const double a = -2.0 * kPi * (double)k / (double)len;
      p->tw_re[len / 2 - 1 + k] = cos(a);
      p->tw_im[len / 2 - 1 + k] = sin(a);
    }
  p->chirp = p->filt_re = p->filt_im = NULL;
  if (!pow2) {
    /* The scalar code's setup, in scratch after the plan's arrays. */
    double *scratch = (double *)(p->bitrev + m + (m & 1));
    scratch = (double *)(((uintptr_t)scratch + 7) & ~(uintptr_t)7);
    bluestein b;
    bluestein_setup(&b, n, scratch, inverse);
    p->chirp = b.chirp;
    p->filt_re = b.chirp + 2 * n;
    p->filt_im = p->filt_re + m;
    const double scale = 1.0 / (double)m;
    for (int64_t i = 0; i < m; ++i) {
      const int64_t k = p->bitrev[i];
      p->filt_re[i] = b.b[2 * k] * scale;
      p->filt_im[i] = b.b[2 * k + 1] * scale;
    }
  }
  return p;
}

/* The plan of (n, inverse), made the first time; NULL when memory is short
 * or every slot is taken (the callers then use the scalar code). */
static const dft_plan *plan_for(int64_t n, int inverse) {
  pthread_mutex_lock(&plan_lock);
  dft_plan *found = NULL;
  for (int i = 0; i < plans_used && !found; ++i)
    if (plan_slots[i]->n == n && plan_slots[i]->inverse == inverse)
      found = plan_slots[i];
  if (!found && plans_used < kPlanSlots && (found = make_plan(n, inverse)))
    plan_slots[plans_used++] = found;
  pthread_mutex_unlock(&plan_lock);
  return found;
}

/* Eight doubles, one per row: the lanes' arithmetic written once for every
 * instruction set (one AVX-512 register, or four SSE2 ones). Loads and
 * stores through an unaligned, aliasing view (macros: a function passing
 * these vectors would have another ABI in each instruction set). */
typedef double lanes_t __attribute__((vector_size(LANES * sizeof(double)), aligned(8), may_alias));
#define lanes_load(p) (*(const lanes_t *)(p))
#define lanes_store(p, v) (*(lanes_t *)(p) = (v))
typedef float lanes_f32_t __attribute__((vector_size(LANES * sizeof(float)), aligned(4), may_alias));

/* v[0..8) as an 8x8 matrix (v[j][l]) transposed in place: three rounds of
 * shuffles. Between lanes (rows) and 4 consecutive complex values of a
 * row: (re, im) of 4 points are 8 values. */
#define LANES_TRANSPOSE8(v)                                                                         \
  do {                                                                                              \
    lanes_t t_[8], u_[8];                                                                           \
    for (int q_ = 0; q_ < 4; ++q_) {                                                                \
      t_[2 * q_] = __builtin_shufflevector(v[2 * q_], v[2 * q_ + 1], 0, 8, 2, 10, 4, 12, 6, 14);    \
      t_[2 * q_ + 1] = __builtin_shufflevector(v[2 * q_], v[2 * q_ + 1], 1, 9, 3, 11, 5, 13, 7, 15); \
    }                                                                                               \
    for (int h_ = 0; h_ < 2; ++h_)                                                                  \
      for (int o_ = 0; o_ < 2; ++o_) {                                                              \
        u_[4 * h_ + 2 * o_] =                                                                       \
            __builtin_shufflevector(t_[4 * h_ + o_], t_[4 * h_ + o_ + 2], 0, 1, 8, 9, 4, 5, 12, 13); \
        u_[4 * h_ + 2 * o_ + 1] =                                                                   \
            __builtin_shufflevector(t_[4 * h_ + o_], t_[4 * h_ + o_ + 2], 2, 3, 10, 11, 6, 7, 14, 15); \
      }                                                                                             \
    /* u_[2 o + e]: lanes 2 e + o and 2 e + o + 4 of v[0..4) (h 0) or v[4..8) (h 1). */             \
    for (int o_ = 0; o_ < 2; ++o_)                                                                  \
      for (int e_ = 0; e_ < 2; ++e_) {                                                              \
        const int lane_ = 2 * e_ + o_;                                                              \
        v[lane_] = __builtin_shufflevector(u_[2 * o_ + e_], u_[4 + 2 * o_ + e_], 0, 1, 2, 3, 8, 9, 10, 11); \
        v[lane_ + 4] =                                                                              \
            __builtin_shufflevector(u_[2 * o_ + e_], u_[4 + 2 * o_ + e_], 4, 5, 6, 7, 12, 13, 14, 15); \
      }                                                                                             \
  } while (0)

/* (xr, xi) times the complex number (c, s), in place. */
#define LANES_CMUL(xr, xi, c, s)                                                                    \
  do {                                                                                              \
    const lanes_t r_ = (xr) * (c) - (xi) * (s), i_ = (xr) * (s) + (xi) * (c);                      \
    (xr) = r_;                                                                                      \
    (xi) = i_;                                                                                      \
  } while (0)

/* The butterflies of a radix-2 pass, stage length `len` from FIRST while
 * COND, by NEXT: the body (__VA_ARGS__) sees the pair's values xr, xi (top)
 * and yr, yi (bottom), their addresses ar, ai, br, bi and the stage's
 * twiddle (c, s) (conjugated with `conj`). */
#define LANES_STAGES(FIRST, COND, NEXT, ...)                                                        \
  for (int64_t len = (FIRST); COND; NEXT) {                                                         \
    const int64_t half = len / 2;                                                                   \
    const double *wr = p->tw_re + half - 1, *wi = p->tw_im + half - 1;                              \
    for (int64_t start = 0; start < p->m; start += len)                                             \
      for (int64_t k = 0; k < half; ++k) {                                                          \
        const double c = wr[k], s = conj ? -wi[k] : wi[k];                                          \
        double *ar = re + LANES * (start + k), *ai = im + LANES * (start + k);                      \
        double *br = ar + LANES * half, *bi = ai + LANES * half;                                    \
        lanes_t xr = lanes_load(ar), xi = lanes_load(ai), yr = lanes_load(br), yi = lanes_load(bi); \
        __VA_ARGS__                                                                                 \
      }                                                                                             \
  }

#define DEFINE_LANE_PASSES(SUFFIX, ATTR)                                                            \
  /* Forward, decimation in frequency: natural order in, bit-reversed out. */                       \
  ATTR static void dif_##SUFFIX(double *restrict re, double *restrict im, const dft_plan *p,        \
                                int conj) {                                                         \
    LANES_STAGES(p->m, len >= 2, len >>= 1, {                                                       \
      lanes_t dr = xr - yr, di = xi - yi;                                                           \
      LANES_CMUL(dr, di, c, s);                                                                     \
      lanes_store(ar, xr + yr);                                                                     \
      lanes_store(ai, xi + yi);                                                                     \
      lanes_store(br, dr);                                                                          \
      lanes_store(bi, di);                                                                          \
    })                                                                                              \
  }                                                                                                 \
  /* Decimation in time: bit-reversed order in, natural out. */                                     \
  ATTR static void dit_##SUFFIX(double *restrict re, double *restrict im, const dft_plan *p,        \
                                int conj) {                                                         \
    LANES_STAGES(2, len <= p->m, len <<= 1, {                                                       \
      LANES_CMUL(yr, yi, c, s);                                                                     \
      lanes_store(br, xr - yr);                                                                     \
      lanes_store(bi, xi - yi);                                                                     \
      lanes_store(ar, xr + yr);                                                                     \
      lanes_store(ai, xi + yi);                                                                     \
    })                                                                                              \
  }                                                                                                 \
  /* A block's rows in, as lanes (times the chirp for Bluestein), zeros past                        \
   * n. rows[l]: row l's n pairs (f64 or f32). */                                                   \
  ATTR static void load_##SUFFIX(double *restrict re, double *restrict im, const dft_plan *p,       \
                                 const void *const *rows, int f64) {                                \
    const int64_t n = p->n;                                                                         \
    int64_t t0 = 0;                                                                                 \
    /* 4 points at a time: 8 values of each of the 8 rows, transposed. */                           \
    for (; t0 + 4 <= n; t0 += 4) {                                                                  \
      lanes_t v[8];                                                                                 \
      for (int l = 0; l < LANES; ++l)                                                               \
        v[l] = f64 ? lanes_load((const double *)rows[l] + 2 * t0)                                   \
                   : __builtin_convertvector(*(const lanes_f32_t *)((const float *)rows[l] + 2 * t0), \
                                             lanes_t);                                              \
      LANES_TRANSPOSE8(v);                                                                          \
      for (int q = 0; q < 4; ++q) {                                                                 \
        const int64_t t = t0 + q;                                                                   \
        lanes_t xr = v[2 * q], xi = v[2 * q + 1];                                                   \
        if (p->chirp)                                                                               \
          LANES_CMUL(xr, xi, p->chirp[2 * t], p->chirp[2 * t + 1]);                                 \
        lanes_store(re + LANES * t, xr);                                                            \
        lanes_store(im + LANES * t, xi);                                                            \
      }                                                                                             \
    }                                                                                               \
    for (int64_t t = t0; t < n; ++t) {                                                              \
      lanes_t xr, xi;                                                                               \
      for (int l = 0; l < LANES; ++l) {                                                             \
        xr[l] = f64 ? ((const double *)rows[l])[2 * t] : (double)((const float *)rows[l])[2 * t];   \
        xi[l] = f64 ? ((const double *)rows[l])[2 * t + 1]                                          \
                    : (double)((const float *)rows[l])[2 * t + 1];                                  \
      }                                                                                             \
      if (p->chirp)                                                                                 \
        LANES_CMUL(xr, xi, p->chirp[2 * t], p->chirp[2 * t + 1]);                                   \
      lanes_store(re + LANES * t, xr);                                                              \
      lanes_store(im + LANES * t, xi);                                                              \
    }                                                                                               \
    memset(re + LANES * n, 0, sizeof(double) * LANES * (size_t)(p->m - n));                         \
    memset(im + LANES * n, 0, sizeof(double) * LANES * (size_t)(p->m - n));                         \
  }                                                                                                 \
  /* The transforms out to the block's first `count` rows (a power of two's                        \
   * in bit-reversed order; Bluestein's times the chirp). */                                        \
  ATTR static void store_##SUFFIX(const double *restrict re, const double *restrict im,             \
                                  const dft_plan *p, void *const *rows, int64_t count, int f64) {   \
    const int64_t n = p->n;                                                                         \
    int64_t k0 = 0;                                                                                 \
    /* 4 points at a time: transposed to 8 values of each row. */                                   \
    for (; k0 + 4 <= n; k0 += 4) {                                                                  \
      lanes_t v[8];                                                                                 \
      for (int q = 0; q < 4; ++q) {                                                                 \
        const int64_t k = k0 + q, i = p->chirp ? k : p->bitrev[k];                                  \
        lanes_t yr = lanes_load(re + LANES * i), yi = lanes_load(im + LANES * i);                   \
        if (p->chirp)                                                                               \
          LANES_CMUL(yr, yi, p->chirp[2 * k], p->chirp[2 * k + 1]);                                 \
        v[2 * q] = yr;                                                                              \
        v[2 * q + 1] = yi;                                                                          \
      }                                                                                             \
      LANES_TRANSPOSE8(v);                                                                          \
      for (int64_t l = 0; l < count; ++l) {                                                         \
        if (f64)                                                                                    \
          lanes_store((double *)rows[l] + 2 * k0, v[l]);                                            \
        else                                                                                        \
          *(lanes_f32_t *)((float *)rows[l] + 2 * k0) = __builtin_convertvector(v[l], lanes_f32_t); \
      }                                                                                             \
    }                                                                                               \
    for (int64_t k = k0; k < n; ++k) {                                                              \
      const int64_t i = p->chirp ? k : p->bitrev[k];                                                \
      lanes_t yr = lanes_load(re + LANES * i), yi = lanes_load(im + LANES * i);                     \
      if (p->chirp)                                                                                 \
        LANES_CMUL(yr, yi, p->chirp[2 * k], p->chirp[2 * k + 1]);                                   \
      for (int64_t l = 0; l < count; ++l) {                                                         \
        if (f64) {                                                                                  \
          ((double *)rows[l])[2 * k] = yr[l];                                                       \
          ((double *)rows[l])[2 * k + 1] = yi[l];                                                   \
        } else {                                                                                    \
          ((float *)rows[l])[2 * k] = (float)yr[l];                                                 \
          ((float *)rows[l])[2 * k + 1] = (float)yi[l];                                             \
        }                                                                                           \
      }                                                                                             \
    }                                                                                               \
  }                                                                                                 \
  /* Bluestein's middle: the product with the filter's transform (both in                          \
   * bit-reversed order). */                                                                        \
  ATTR static void filter_##SUFFIX(double *restrict re, double *restrict im, const dft_plan *p) {   \
    const int64_t m = p->m;                                                                         \
    const double *fr = p->filt_re, *fi = p->filt_im;                                                \
    for (int64_t i = 0; i < m; ++i) {                                                               \
      lanes_t xr = lanes_load(re + LANES * i), xi = lanes_load(im + LANES * i);                     \
      LANES_CMUL(xr, xi, fr[i], fi[i]);                                                             \
      lanes_store(re + LANES * i, xr);                                                              \
      lanes_store(im + LANES * i, xi);                                                              \
    }                                                                                               \
  }

/* Computed with the -ffp-contract of the file either way: each pass
 * rounds as the scalar code's. */
DEFINE_LANE_PASSES(generic, )
#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
DEFINE_LANE_PASSES(avx512, __attribute__((target("avx512f,avx512dq,avx512vl"))))
#define CUVIL_DFT_HAVE_AVX512 1
#endif

typedef struct {
  void (*dif)(double *, double *, const dft_plan *, int);
  void (*dit)(double *, double *, const dft_plan *, int);
  void (*filter)(double *, double *, const dft_plan *);
  void (*load)(double *, double *, const dft_plan *, const void *const *, int);
  void (*store)(const double *, const double *, const dft_plan *, void *const *, int64_t, int);
} lane_passes;

static bool generic_passes_for_test;

void cuvil_dft_generic_passes_for_test(bool generic) { generic_passes_for_test = generic; }

#ifdef CUVIL_DFT_HAVE_AVX512
/* Asked once: CPUID leaves the virtual machine on every call (a tenth of a
 * short transform's time when asked per call). */
static bool cpu_has_avx512;
static pthread_once_t cpu_checked = PTHREAD_ONCE_INIT;

static void check_cpu(void) {
#ifdef CUVIL_RUNTIME_MATH_ONLY /* the reference evaluator's copy: no runtime core */
  cpu_has_avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
#else
  cpu_has_avx512 = cuvil_cpu_detects_feature("avx512f") && cuvil_cpu_detects_feature("avx512dq") &&
                   !cuvil_cpu_feature_hidden_for_test("avx512f");
#endif
}
#endif

static lane_passes passes_for_this_cpu(void) {
#ifdef CUVIL_DFT_HAVE_AVX512
  pthread_once(&cpu_checked, check_cpu);
  if (cpu_has_avx512 && !generic_passes_for_test)
    return (lane_passes){dif_avx512, dit_avx512, filter_avx512, load_avx512, store_avx512};
#endif
  return (lane_passes){dif_generic, dit_generic, filter_generic, load_generic, store_generic};
}

typedef struct {
  const dft_plan *plan;
  lane_passes passes;
  const void *x;
  void *out;
  int64_t batch;
  int f64;
  float *scratch;
  void *exec;
} dft_job;

/* Rows [8 begin, 8 end) of the batch, 8 at a time (a short last block's
 * missing lanes repeat its first row and are never stored). */
static void dft_blocks(void *closure, int64_t begin, int64_t end) {
  const dft_job *j = closure;
  const dft_plan *p = j->plan;
  const int64_t n = p->n, m = p->m, pair = j->f64 ? 2 * sizeof(double) : 2 * sizeof(float);
  double *re = (double *)(j->scratch ? (void *)j->scratch : cuvil_thread_pool_scratch(j->exec));
  double *im = re + LANES * m;
  for (int64_t block = begin; block < end; ++block) {
    const int64_t r0 = block * LANES, rows = j->batch - r0 < LANES ? j->batch - r0 : LANES;
    /* A short block's missing lanes read its first row again (their
     * transforms are not stored). */
    const void *in[LANES];
    void *out[LANES];
    for (int64_t l = 0; l < LANES; ++l) {
      const int64_t r = r0 + (l < rows ? l : 0);
      in[l] = (const char *)j->x + r * n * pair;
      out[l] = (char *)j->out + r * n * pair;
    }
    j->passes.load(re, im, p, in, j->f64);
    if (!p->chirp) {
      j->passes.dif(re, im, p, p->inverse);
    } else {
      j->passes.dif(re, im, p, 0);
      j->passes.filter(re, im, p);
      j->passes.dit(re, im, p, 1);
    }
    j->passes.store(re, im, p, out, rows, j->f64);
  }
}

/* The batch by blocks of 8 rows over the threads, where a plan exists and
 * a block fits a thread's scratch; false otherwise (the scalar code). */
static bool dft_by_blocks(const int64_t *params, const void *x, void *out, int f64) {
  const int64_t batch = params[CUVIL_DFT_BATCH], n = params[CUVIL_DFT_N];
  const int64_t m = cuvil_dft_pow2(n) == n ? n : cuvil_dft_pow2(2 * n - 1);
  if (n < 2 || (int64_t)sizeof(double) * 2 * LANES * m > (int64_t)CUVIL_THREAD_SCRATCH_BYTES)
    return false;
  const dft_plan *plan = plan_for(n, params[CUVIL_DFT_INVERSE] != 0);
  if (!plan)
    return false;
  const int64_t blocks = (batch + LANES - 1) / LANES;
#ifdef CUVIL_RUNTIME_MATH_ONLY /* one thread, its own scratch */
  float *scratch = malloc(sizeof(double) * 2 * LANES * (size_t)m);
  if (!scratch)
    return false;
  dft_job job = {plan, passes_for_this_cpu(), x, out, batch, f64, scratch, NULL};
  dft_blocks(&job, 0, blocks);
  free(scratch);
#else
  dft_job job = {plan, passes_for_this_cpu(), x, out, batch, f64, NULL, cuvil_rt_current_exec};
  cuvil_run_items(job.exec, blocks, batch * m * (log2_of(m) + 1) * 4, dft_blocks, &job, &job.scratch);
#endif
  return true;
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
    if (dft_by_blocks(params, x, out, sizeof(T) == sizeof(double)))                                 \
      return;                                                                                       \
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
