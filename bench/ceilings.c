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
 * of percent within minutes. The measuring is tuning/HostMeasure.c's, which
 * cuvil-autotune profile shares.
 *
 *===----------------------------------------------------------------------===*/
#include "tuning/HostMeasure.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
  /* Timed runs of the FMA loops and iterations per run: fewer with
   * --fma-only, which the benchmark runs again and again. */
  int fma_only = 0, fma_runs = 5;
  long fma_iterations = 20000000;
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
  int cores = cuvil_online_cores();
  /* Each figure is 0 where the CPU lacks the ISA. */
  double f512 = cuvil_measure_fp32("avx512", fma_runs, fma_iterations);
  if (fma_only && f512 > 0) { /* the others cannot be the best: skip them */
    printf("{\n  \"fp32_fma_gflops_per_core\": {\"avx512\": %.1f, \"best\": %.1f}\n}\n", f512, f512);
    return 0;
  }
  double f2 = cuvil_measure_fp32("avx2", fma_runs, fma_iterations),
         fsse = cuvil_measure_fp32("sse", fma_runs, fma_iterations);
  double fbest = f512 > f2 ? (f512 > fsse ? f512 : fsse) : (f2 > fsse ? f2 : fsse);
  if (fma_only) {
    printf("{\n  \"fp32_fma_gflops_per_core\": {\"avx512\": %.1f, \"avx2\": %.1f, \"sse\": %.1f, "
           "\"best\": %.1f}\n}\n", f512, f2, fsse, fbest);
    return 0;
  }

  double bw1 = 0, bwall = 0; /* 256 MiB per array */
  if (cuvil_measure_bandwidth((size_t)64 << 20, 5, cores, &bw1, &bwall)) {
    fprintf(stderr, "cuvil-bench-ceilings: out of memory\n");
    return 1;
  }
  double vnni = cuvil_measure_int8_vnni(fma_runs, fma_iterations);
  printf("{\n  \"cores\": %d,\n  \"fp32_fma_gflops_per_core\": {\"avx512\": %.1f, \"avx2\": %.1f, "
         "\"sse\": %.1f, \"best\": %.1f},\n  \"int8_dot_gops_per_core\": {\"avx512_vnni\": %.1f},\n"
         "  \"triad_bandwidth_gbs\": {\"1_thread\": %.1f, \"all_cores\": %.1f}\n}\n",
         cores, f512, f2, fsse, fbest, vnni, bw1, bwall);
  return 0;
}
