/*===- runtime/cpu/microkernels.c - Which micro-kernels this CPU runs -----===*/
#include "microkernels.h"

#include <pthread.h>

static const cuvil_microkernels *best_kernels;
static pthread_once_t best_kernels_once = PTHREAD_ONCE_INIT;

static void choose_kernels(void) {
  const cuvil_microkernels *k = NULL;
  if (cuvil_cpu_detects_feature("avx512f"))
    k = cuvil_microkernels_avx512();
  if (!k && cuvil_cpu_detects_feature("avx2") && cuvil_cpu_detects_feature("fma"))
    k = cuvil_microkernels_avx2();
  best_kernels = k ? k : cuvil_microkernels_generic();
}

const cuvil_microkernels *cuvil_microkernels_best(void) {
  pthread_once(&best_kernels_once, choose_kernels);
  return best_kernels;
}
