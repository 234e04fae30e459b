/*===- runtime/src/mk_avx512.c - AVX-512 micro-kernels --------------------===*
 *
 * Compiled with -mavx512f -mfma (runtime/CMakeLists.txt) and only called on
 * a CPU that has AVX-512F. 8 x 32 tile: 16 of the 32 zmm registers
 * accumulate, two hold the row of B, one the broadcast element of A; and
 * an 8 x 16 set (`half`) for products with few columns.
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

/* 8 x 16 tiles (8 accumulators): for Winograd blocks with few tiles. */
#undef MK_PREFIX
#undef MK_NV
#define MK_PREFIX avx512h
#define MK_NV 1
#include "microkernel.inc"
#include "winograd.inc"

static const cuvil_microkernels half = {
    .name = "avx512-16", .nr = MK_NR, .full = avx512h_full, .full_store = avx512h_full_store,
    .narrow = avx512h_narrow, .wino_input = avx512h_wino_input,
    .wino_output = avx512h_wino_output};
#undef MK_NV
#define MK_NV 2

const cuvil_microkernels *cuvil_microkernels_avx512(void) {
  static const cuvil_microkernels kernels = {
      .name = "avx512", .nr = MK_NR, .full = avx512_full, .full_store = avx512_full_store,
      .narrow = avx512_narrow, .depthwise = avx512_depthwise,
      .depthwise_lanes = avx512_depthwise_lanes, .vl = MK_VL, .wino_input = avx512_wino_input,
      .wino_output = avx512_wino_output, .half = &half};
  return &kernels;
}
#else
const cuvil_microkernels *cuvil_microkernels_avx512(void) { return NULL; }
#endif
