/*===- bench/ceilings.c - What this machine's cores and memory can do -----===*
 *
 * cuvil-bench-ceilings prints, as JSON: the fp32 FMA throughput of one core
 * (AVX-512 and AVX2 where the CPU has them, SSE otherwise), the int8
 * dot-product throughput of AVX-512 VNNI where present, and the memory
 * bandwidth of a STREAM-style triad (a = b + s * c over arrays far larger
 * than the caches) with 1 thread and with every online core. Each figure
 * is the best of several runs. The performance benchmark reports kernels and
 * models as fractions of these. With --fma-only it measures only the FMA
 * throughput, briefly: the benchmark measures it again around each of its
 * rounds, as a shared virtual machine's cores speed up and slow down by tens
 * of percent within minutes.
 *
 *===----------------------------------------------------------------------===*/
#define _GNU_SOURCE 1
#include <immintrin.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Timed runs of the FMA loops and iterations per run: fewer with
 * --fma-only, which the benchmark runs again and again. */
static int fma_runs = 5;
static long fma_iterations = 20000000;

/* `accs` independent accumulators (enough to hide the FMA latency on two
 * ports, few enough to stay in registers). The asm barrier keeps the
 * compiler from folding the loop; the sum at the end keeps the results
 * alive. */
#define FMA_BODY(vec, fma, add, set1, store, width, accs)                                    \
  vec acc[accs];                                                                              \
  for (int i = 0; i < accs; ++i)                                                              \
    acc[i] = set1((float)i);                                                                  \
  const vec x = set1(1.0000001f), y = set1(-0.0000001f);                                      \
  double best = 0;                                                                            \
  for (int run = 0; run < fma_runs; ++run) {                                                  \
    const long n = fma_iterations;                                                            \
    double t0 = now();                                                                        \
    for (long r = 0; r < n; ++r) {                                                            \
      for (int i = 0; i < accs; ++i)                                                          \
        acc[i] = fma(acc[i], x, y);                                                           \
      __asm__ volatile("" : "+v"(acc[0]), "+v"(acc[1]), "+v"(acc[2]), "+v"(acc[3]));         \
    }                                                                                         \
    double gflops = 2.0 * (accs) * (width)*n / (now() - t0) / 1e9;                            \
    if (gflops > best)                                                                        \
      best = gflops;                                                                          \
  }                                                                                           \
  vec sum = acc[0];                                                                           \
  for (int i = 1; i < accs; ++i)                                                              \
    sum = add(sum, acc[i]);                                                                   \
  float sink[16];                                                                             \
  store(sink, sum);                                                                           \
  __asm__ volatile("" : : "r"(sink) : "memory");                                              \
  return best;

__attribute__((target("avx512f"))) static double fma_avx512(void) {
  FMA_BODY(__m512, _mm512_fmadd_ps, _mm512_add_ps, _mm512_set1_ps, _mm512_storeu_ps, 16, 24)
}
__attribute__((target("avx2,fma"))) static double fma_avx2(void) {
  FMA_BODY(__m256, _mm256_fmadd_ps, _mm256_add_ps, _mm256_set1_ps, _mm256_storeu_ps, 8, 12)
}
static inline __m128 mul_add(__m128 a, __m128 b, __m128 c) {
  return _mm_add_ps(_mm_mul_ps(a, b), c);
}
static double fma_sse(void) {
  FMA_BODY(__m128, mul_add, _mm_add_ps, _mm_set1_ps, _mm_storeu_ps, 4, 12)
}

/* The int8 dot-product peak of AVX-512 VNNI: vpdpbusd (64 u8 x s8
 * multiply-adds per instruction) on 24 independent accumulators; GOP/s
 * counts a multiply-add as 2 operations, as the FP32 figure does. */
__attribute__((target("avx512f,avx512vnni"))) static double vnni_avx512(void) {
  __m512i acc[24];
  for (int i = 0; i < 24; ++i)
    acc[i] = _mm512_set1_epi32(i);
  const __m512i x = _mm512_set1_epi8(3), y = _mm512_set1_epi8(-1);
  double best = 0;
  for (int run = 0; run < fma_runs; ++run) {
    const long n = fma_iterations;
    double t0 = now();
    for (long r = 0; r < n; ++r) {
      for (int i = 0; i < 24; ++i)
        acc[i] = _mm512_dpbusd_epi32(acc[i], x, y);
      __asm__ volatile("" : "+v"(acc[0]), "+v"(acc[1]), "+v"(acc[2]), "+v"(acc[3]));
    }
    double gops = 2.0 * 24 * 64 * n / (now() - t0) / 1e9;
    if (gops > best)
      best = gops;
  }
  __m512i sum = acc[0];
  for (int i = 1; i < 24; ++i)
    sum = _mm512_add_epi32(sum, acc[i]);
  int sink[16];
  _mm512_storeu_si512(sink, sum);
  __asm__ volatile("" : : "r"(sink) : "memory");
  return best;
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

/* GB/s of a triad over n floats per array (3 arrays of traffic). */
static double bandwidth(float *a, float *b, float *c, size_t n, int threads) {
  double best = 0;
  for (int run = 0; run < 5; ++run) {
    pthread_t tid[256];
    triad_job jobs[256];
    double t0 = now();
    for (int t = 0; t < threads; ++t) {
      jobs[t] = (triad_job){a, b, c, n * t / threads, n * (t + 1) / threads};
      pthread_create(&tid[t], NULL, triad, &jobs[t]);
    }
    for (int t = 0; t < threads; ++t)
      pthread_join(tid[t], NULL);
    double gbs = 3.0 * sizeof(float) * n / (now() - t0) / 1e9;
    if (gbs > best)
      best = gbs;
  }
  return best;
}

int main(int argc, char **argv) {
  int fma_only = 0;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--fma-only")) {
      fma_only = 1;
      fma_runs = 3;
      fma_iterations = 10000000;
    } else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      printf("usage: cuvil-bench-ceilings [--fma-only]\n\n"
             "Prints as JSON this machine's fp32 FMA throughput per core (GFLOP/s) and\n"
             "its memory bandwidth (GB/s, STREAM triad) with 1 thread and with all cores.\n"
             "  --fma-only  measure only the FMA throughput, briefly (a few tenths of a second)\n");
      return 0;
    } else {
      fprintf(stderr, "cuvil-bench-ceilings: unknown argument '%s' (see --help)\n", argv[i]);
      return 2;
    }
  }
  __builtin_cpu_init();
  int has512 = __builtin_cpu_supports("avx512f");
  int has2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  if (cores < 1)
    cores = 1;
  if (cores > 256)
    cores = 256;
  double f512 = has512 ? fma_avx512() : 0;
  if (fma_only && has512) { /* the others cannot be the best: skip them */
    printf("{\n  \"fp32_fma_gflops_per_core\": {\"avx512\": %.1f, \"best\": %.1f}\n}\n", f512, f512);
    return 0;
  }
  double f2 = has2 ? fma_avx2() : 0, fsse = fma_sse();
  double fbest = f512 > f2 ? (f512 > fsse ? f512 : fsse) : (f2 > fsse ? f2 : fsse);
  if (fma_only) {
    printf("{\n  \"fp32_fma_gflops_per_core\": {\"avx512\": %.1f, \"avx2\": %.1f, \"sse\": %.1f, "
           "\"best\": %.1f}\n}\n", f512, f2, fsse, fbest);
    return 0;
  }

  size_t n = (size_t)64 << 20; /* 256 MiB per array */
  float *a = malloc(n * sizeof(float)), *b = malloc(n * sizeof(float)),
        *c = malloc(n * sizeof(float));
  if (!a || !b || !c) {
    fprintf(stderr, "cuvil-bench-ceilings: out of memory\n");
    return 1;
  }
  for (size_t i = 0; i < n; ++i) {
    a[i] = 0.0f;
    b[i] = 1.0f;
    c[i] = 2.0f;
  }
  double bw1 = bandwidth(a, b, c, n, 1), bwall = bandwidth(a, b, c, n, (int)cores);
  int has_vnni = has512 && __builtin_cpu_supports("avx512vnni");
  double vnni = has_vnni ? vnni_avx512() : 0;
  printf("{\n  \"cores\": %ld,\n  \"fp32_fma_gflops_per_core\": {\"avx512\": %.1f, \"avx2\": %.1f, "
         "\"sse\": %.1f, \"best\": %.1f},\n  \"int8_dot_gops_per_core\": {\"avx512_vnni\": %.1f},\n"
         "  \"triad_bandwidth_gbs\": {\"1_thread\": %.1f, \"all_cores\": %.1f}\n}\n",
         cores, f512, f2, fsse, fbest, vnni, bw1, bwall);
  free(a);
  free(b);
  free(c);
  return 0;
}
