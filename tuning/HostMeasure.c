/*===- tuning/HostMeasure.c - This machine's compute and memory peaks ------===*
 *
 * Each compute figure runs independent accumulators (enough to hide the
 * instruction latency on two ports, few enough to stay in registers) through
 * a long loop; an empty asm keeps the compiler from folding the loop, a sum
 * at the end keeps the results alive, and the best of several runs is kept,
 * as a shared machine's cores speed up and slow down. The per-ISA loops are
 * compiled with target attributes and chosen at run time, so the file needs
 * no -m flags.
 *
 *===----------------------------------------------------------------------===*/
#define _GNU_SOURCE 1
#include "tuning/HostMeasure.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

#if defined(__x86_64__)

/* The accumulators stay in registers only if the loops over them are
 * unrolled (GCC does not at -O2 unasked) and none is live across a call
 * (every vector register is caller-saved): each run sets them up and sums
 * them inside its timed region, which costs nanoseconds. */
#define UNROLL _Pragma("GCC unroll 32")

/* Accumulators start afresh each run so that no run's values grow towards
 * infinity, however many iterations a caller asks for. */
#define FMA_BODY(vec, fma, add, set1, store, width, accs)                      \
  vec acc[accs];                                                               \
  const vec x = set1(1.0000001f), y = set1(-0.0000001f);                       \
  double best = 0;                                                             \
  for (int run = 0; run < runs; ++run) {                                       \
    double t0 = now();                                                         \
    UNROLL for (int i = 0; i < accs; ++i) { acc[i] = set1((float)i); }         \
    for (long r = 0; r < iterations; ++r) {                                    \
      UNROLL for (int i = 0; i < accs; ++i) { acc[i] = fma(acc[i], x, y); }    \
      __asm__ volatile(""                                                      \
                       : "+v"(acc[0]), "+v"(acc[1]), "+v"(acc[2]),             \
                         "+v"(acc[3]));                                        \
    }                                                                          \
    vec sum = acc[0];                                                          \
    UNROLL for (int i = 1; i < accs; ++i) { sum = add(sum, acc[i]); }          \
    double gflops =                                                            \
        2.0 * (accs) * (width) * (double)iterations / (now() - t0) / 1e9;      \
    if (gflops > best)                                                         \
      best = gflops;                                                           \
    float sink[16];                                                            \
    store(sink, sum);                                                          \
    __asm__ volatile("" : : "r"(sink) : "memory");                             \
  }                                                                            \
  return best;

__attribute__((target("avx512f"))) static double fp32_avx512(int runs,
                                                             long iterations) {
  FMA_BODY(__m512, _mm512_fmadd_ps, _mm512_add_ps, _mm512_set1_ps,
           _mm512_storeu_ps, 16, 24)
}
__attribute__((target("avx2,fma"))) static double fp32_avx2(int runs,
                                                            long iterations) {
  FMA_BODY(__m256, _mm256_fmadd_ps, _mm256_add_ps, _mm256_set1_ps,
           _mm256_storeu_ps, 8, 12)
}
static inline __m128 mul_add(__m128 a, __m128 b, __m128 c) {
  return _mm_add_ps(_mm_mul_ps(a, b), c);
}
static double fp32_sse(int runs, long iterations) {
  FMA_BODY(__m128, mul_add, _mm_add_ps, _mm_set1_ps, _mm_storeu_ps, 4, 12)
}

/* vpdpbusd: 64 u8 x s8 multiply-adds per instruction, 2 operations each.
 * Written as asm because GCC 12 copies and spills the accumulators of the
 * intrinsic, halving the figure. */
__attribute__((target("avx512f,avx512vnni"))) static double
int8_vnni(int runs, long iterations) {
  __m512i acc[24];
  /* Each instruction adds 4 * 3 * -1 to a lane: int32 wraps only after
   * about 1.8e8 iterations, and wrapping costs nothing. */
  const __m512i x = _mm512_set1_epi8(3), y = _mm512_set1_epi8(-1);
  double best = 0;
  for (int run = 0; run < runs; ++run) {
    double t0 = now();
    UNROLL for (int i = 0; i < 24; ++i) { acc[i] = _mm512_set1_epi32(i); }
    for (long r = 0; r < iterations; ++r) {
      UNROLL for (int i = 0; i < 24; ++i) {
        __asm__("vpdpbusd %2, %1, %0" : "+v"(acc[i]) : "v"(x), "v"(y));
      }
      __asm__ volatile(""
                       : "+v"(acc[0]), "+v"(acc[1]), "+v"(acc[2]),
                         "+v"(acc[3]));
    }
    __m512i sum = acc[0];
    UNROLL for (int i = 1; i < 24; ++i) { sum = _mm512_add_epi32(sum, acc[i]); }
    double gops = 2.0 * 24 * 64 * (double)iterations / (now() - t0) / 1e9;
    if (gops > best)
      best = gops;
    int sink[16];
    _mm512_storeu_si512(sink, sum);
    __asm__ volatile("" : : "r"(sink) : "memory");
  }
  return best;
}

/* vdpbf16ps: 32 bf16 products summed pairwise into 16 fp32 lanes per
 * instruction, 2 flops each. cvtne2ps_pbh builds the bf16 operands so that
 * no bf16 scalar type (which differs between compilers) is needed. */
__attribute__((target("avx512f,avx512bf16"))) static double
bf16_avx512(int runs, long iterations) {
  __m512 acc[24];
  const __m512bh x =
      _mm512_cvtne2ps_pbh(_mm512_set1_ps(0.5f), _mm512_set1_ps(0.5f));
  const __m512bh y =
      _mm512_cvtne2ps_pbh(_mm512_set1_ps(-1e-7f), _mm512_set1_ps(-1e-7f));
  double best = 0;
  for (int run = 0; run < runs; ++run) {
    double t0 = now();
    UNROLL for (int i = 0; i < 24; ++i) { acc[i] = _mm512_set1_ps((float)i); }
    for (long r = 0; r < iterations; ++r) {
      UNROLL for (int i = 0; i < 24; ++i) {
        acc[i] = _mm512_dpbf16_ps(acc[i], x, y);
      }
      __asm__ volatile(""
                       : "+v"(acc[0]), "+v"(acc[1]), "+v"(acc[2]),
                         "+v"(acc[3]));
    }
    __m512 sum = acc[0];
    UNROLL for (int i = 1; i < 24; ++i) { sum = _mm512_add_ps(sum, acc[i]); }
    double gflops = 2.0 * 24 * 32 * (double)iterations / (now() - t0) / 1e9;
    if (gflops > best)
      best = gflops;
    float sink[16];
    _mm512_storeu_ps(sink, sum);
    __asm__ volatile("" : : "r"(sink) : "memory");
  }
  return best;
}

static int has_avx512(void) {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f");
}
static int has_avx2(void) {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

#endif /* __x86_64__ */

double cuvil_measure_fp32(const char *isa, int runs, long iterations) {
  if (!isa || runs < 1 || iterations < 1)
    return 0;
#if defined(__x86_64__)
  if (!strcmp(isa, "avx512"))
    return has_avx512() ? fp32_avx512(runs, iterations) : 0;
  if (!strcmp(isa, "avx2"))
    return has_avx2() ? fp32_avx2(runs, iterations) : 0;
  if (!strcmp(isa, "sse"))
    return fp32_sse(runs, iterations);
#endif
  return 0;
}

double cuvil_measure_int8_vnni(int runs, long iterations) {
  if (runs < 1 || iterations < 1)
    return 0;
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vnni"))
    return int8_vnni(runs, iterations);
#endif
  return 0;
}

double cuvil_measure_bf16(int runs, long iterations) {
  if (runs < 1 || iterations < 1)
    return 0;
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bf16"))
    return bf16_avx512(runs, iterations);
#endif
  return 0;
}

int cuvil_online_cores(void) {
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  if (cores < 1)
    return 1;
  return cores > CUVIL_MAX_THREADS ? CUVIL_MAX_THREADS : (int)cores;
}

typedef struct triad_job {
  float *a, *b, *c;
  size_t begin, end;
} triad_job;

static void *triad(void *argument) {
  triad_job *j = argument;
  for (size_t i = j->begin; i < j->end; ++i)
    j->a[i] = j->b[i] + 3.0f * j->c[i];
  return NULL;
}

/* First touch by the threads that later stream the same range puts each
 * page on their memory node (as STREAM does), and faults pages in parallel. */
static void *fill(void *argument) {
  triad_job *j = argument;
  for (size_t i = j->begin; i < j->end; ++i) {
    j->a[i] = 0.0f;
    j->b[i] = 1.0f;
    j->c[i] = 2.0f;
  }
  return NULL;
}

/* Runs `work` on n equal slices; a slice whose thread cannot start runs
 * here instead, so the work is always done. */
static void split(void *(*work)(void *), float *a, float *b, float *c, size_t n,
                  int threads) {
  pthread_t tid[CUVIL_MAX_THREADS];
  triad_job jobs[CUVIL_MAX_THREADS];
  int started[CUVIL_MAX_THREADS];
  for (int t = 0; t < threads; ++t) {
    jobs[t] = (triad_job){a, b, c, n * (size_t)t / (size_t)threads,
                          n * (size_t)(t + 1) / (size_t)threads};
    started[t] =
        threads > 1 && pthread_create(&tid[t], NULL, work, &jobs[t]) == 0;
    if (!started[t])
      work(&jobs[t]);
  }
  for (int t = 0; t < threads; ++t)
    if (started[t])
      pthread_join(tid[t], NULL);
}

/* GB/s of a triad over n floats per array (3 arrays of traffic). */
static double triad_gbs(float *a, float *b, float *c, size_t n, int runs,
                        int threads) {
  double best = 0;
  for (int run = 0; run < runs; ++run) {
    double t0 = now();
    split(triad, a, b, c, n, threads);
    double gbs = 3.0 * sizeof(float) * (double)n / (now() - t0) / 1e9;
    if (gbs > best)
      best = gbs;
  }
  __asm__ volatile("" : : "r"(a) : "memory"); /* the stores are results */
  return best;
}

int cuvil_measure_bandwidth(size_t floats, int runs, int threads,
                            double *gbs_1thread, double *gbs_all) {
  if (floats < 1 || floats > SIZE_MAX / sizeof(float) || runs < 1 ||
      threads < 1 || threads > CUVIL_MAX_THREADS)
    return 1;
  float *a = malloc(floats * sizeof(float)),
        *b = malloc(floats * sizeof(float)),
        *c = malloc(floats * sizeof(float));
  if (!a || !b || !c) {
    free(a);
    free(b);
    free(c);
    return 1;
  }
  split(fill, a, b, c, floats, threads);
  if (gbs_1thread)
    *gbs_1thread = triad_gbs(a, b, c, floats, runs, 1);
  if (gbs_all)
    *gbs_all = triad_gbs(a, b, c, floats, runs, threads);
  free(a);
  free(b);
  free(c);
  return 0;
}

typedef double (*kernel)(int runs, long iterations);
#if defined(__x86_64__)
static double fp32_512(int runs, long n) {
  return cuvil_measure_fp32("avx512", runs, n);
}
static double fp32_256(int runs, long n) {
  return cuvil_measure_fp32("avx2", runs, n);
}
static double fp32_128(int runs, long n) {
  return cuvil_measure_fp32("sse", runs, n);
}
#endif

/* The iteration counts fit today's cores; a probe of 1/16 of them caps each
 * run at `seconds` on a slower core (one AVX-512 port, say), so that the
 * whole stays within its time. The probe also wakes the vector units. */
static double within(kernel f, double ops_per_iteration, int runs,
                     long iterations, double seconds) {
  long probe = iterations / 16;
  double rate = f(1, probe); /* Gop/s */
  if (rate <= 0)
    return 0;
  double fit = seconds * rate * 1e9 / ops_per_iteration;
  long n = fit < (double)iterations ? (long)fit : iterations;
  double best = f(runs, n > probe ? n : probe);
  return best > rate ? best : rate;
}

int cuvil_measure_host_peaks(cuvil_host_peaks *out, int quick) {
  if (!out)
    return 1;
  /* Quick: what bench/ceilings.c --fma-only uses, briefly enough to repeat;
   * else what it uses for its full figures. */
  const int runs = quick ? 3 : 5;
  const long iterations = quick ? 10000000 : 20000000;
  const double seconds = quick ? 0.05 : 0.1;
  memset(out, 0, sizeof *out);
  out->fp32_isa = "none";
#if defined(__x86_64__)
  /* AVX-512 on one port, or double-pumped, is no faster than AVX2 (and may
   * clock lower): measure both and keep the better. Ops per iteration are
   * accumulators x lanes x 2. */
  double f512 = within(fp32_512, 24 * 16 * 2, runs, iterations, seconds);
  double f2 = within(fp32_256, 12 * 8 * 2, runs, iterations, seconds);
  if (f512 > 0 && f512 >= f2) {
    out->fp32_gflops_core = f512;
    out->fp32_isa = "avx512";
  } else if (f2 > 0) {
    out->fp32_gflops_core = f2;
    out->fp32_isa = "avx2";
  } else {
    out->fp32_gflops_core =
        within(fp32_128, 12 * 4 * 2, runs, iterations, seconds);
    out->fp32_isa = "sse";
  }
#endif
  out->int8_gops_core =
      within(cuvil_measure_int8_vnni, 24 * 64 * 2, runs, iterations, seconds);
  out->bf16_gflops_core =
      within(cuvil_measure_bf16, 24 * 32 * 2, runs, iterations, seconds);
  out->threads = cuvil_online_cores();
  /* 256 MiB per array, as bench/ceilings.c: 768 MiB of traffic outgrows
   * the last-level caches. */
  return cuvil_measure_bandwidth((size_t)64 << 20, runs, out->threads,
                                 &out->bandwidth_gbs_1thread,
                                 &out->bandwidth_gbs_all);
}
