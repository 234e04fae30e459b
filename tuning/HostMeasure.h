/*===- tuning/HostMeasure.h - This machine's compute and memory peaks ------===*
 *
 * Measures, in-process, what one core can compute (fp32 FMA, int8 VNNI, bf16
 * dot products) and what memory delivers (STREAM-style triad, 1 thread and
 * all cores). Used by cuvil-autotune profile and bench/ceilings.c.
 *
 * The compute loops rely on the optimizer keeping their accumulators in
 * registers: compile HostMeasure.c with -O2 or more, even in a Debug build.
 * Figures are 0 ("not measured") where the CPU lacks the instructions or,
 * for the compute figures, off x86-64.
 *
 *===----------------------------------------------------------------------===*/
#ifndef CUVIL_TUNING_HOSTMEASURE_H
#define CUVIL_TUNING_HOSTMEASURE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cuvil_host_peaks {
  /* fp32 FMA throughput of one core, GFLOP/s (2 flops per FMA lane), best
   * ISA the CPU runs */
  double fp32_gflops_core;
  /* "avx512", "avx2" or "sse" ("none" off x86-64) */
  const char *fp32_isa;
  /* AVX-512 VNNI vpdpbusd int8 multiply-adds x2 per second per core, GOP/s;
   * 0 when the CPU lacks VNNI */
  double int8_gops_core;
  /* AVX-512 BF16 vdpbf16ps, GFLOP/s per core; 0 when absent */
  double bf16_gflops_core;
  /* STREAM-style triad, GB/s, one thread */
  double bandwidth_gbs_1thread;
  /* the same with every online core */
  double bandwidth_gbs_all;
  /* online cores used for the all-core figure */
  int threads;
} cuvil_host_peaks;

/* Measures; `quick` != 0 keeps the whole measurement under about 1.5 s (else
 * about 4 s). Returns 0 on success. */
int cuvil_measure_host_peaks(cuvil_host_peaks *out, int quick);

/* The pieces, for tools that want one figure or every ISA's
 * (bench/ceilings.c). Each is the best of `runs` timed runs. */

/* fp32 FMA GFLOP/s of one core with `isa` ("avx512", "avx2" or "sse"; sse
 * counts a mul + add as an FMA); 0 when the CPU lacks it. */
double cuvil_measure_fp32(const char *isa, int runs, long iterations);
/* int8 vpdpbusd GOP/s of one core; 0 without AVX-512 VNNI. */
double cuvil_measure_int8_vnni(int runs, long iterations);
/* bf16 vdpbf16ps GFLOP/s of one core; 0 without AVX-512 BF16. */
double cuvil_measure_bf16(int runs, long iterations);
/* Triad a = b + s * c over three arrays of `floats` floats each, with 1
 * thread and with `threads` (at most CUVIL_MAX_THREADS); writes GB/s to
 * whichever of the two pointers is not NULL. Returns 0 on success, nonzero
 * when the arrays cannot be allocated or the arguments are invalid. */
int cuvil_measure_bandwidth(size_t floats, int runs, int threads,
                            double *gbs_1thread, double *gbs_all);
/* Online cores, 1 to CUVIL_MAX_THREADS. */
int cuvil_online_cores(void);

/* More threads than this add nothing to a triad's bandwidth. */
#define CUVIL_MAX_THREADS 256

#ifdef __cplusplus
}
#endif

#endif /* CUVIL_TUNING_HOSTMEASURE_H */
