/*===- runtime/src/mk_avx512.c - AVX-512 micro-kernels --------------------===*
 *
 * Compiled with -mavx512f -mfma (runtime/CMakeLists.txt) and only called on
 * a CPU that has AVX-512F. 8 x 32 tile: 16 of the 32 zmm registers
 * accumulate, two hold the row of B, one the broadcast element of A.
 *
 *===----------------------------------------------------------------------===*/
#include "kernels.h"

#if defined(__x86_64__)
#define MK_PREFIX avx512
#define MK_VL 16
#define MK_NV 2
#include "microkernel.inc"
#include "depthwise.inc"
#include "winograd.inc"

const cuvil_microkernels *cuvil_microkernels_avx512(void) {
  static const cuvil_microkernels kernels = {"avx512", MK_NR, avx512_full, avx512_full_store, avx512_narrow,
                                             avx512_depthwise, avx512_depthwise_lanes, MK_VL,
                                                              avx512_wino_input, avx512_wino_output};
  return &kernels;
}
#else
const cuvil_microkernels *cuvil_microkernels_avx512(void) { return NULL; }
#endif
