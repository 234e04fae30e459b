/*===- runtime/cpu/mk_avx2.c - AVX2 + FMA micro-kernels --------------------===*
 *
 * Compiled with -mavx2 -mfma (runtime/CMakeLists.txt) and only called on a
 * CPU that has both. 8 x 8 tile: 8 of the 16 ymm registers accumulate.
 *
 *===----------------------------------------------------------------------===*/
#include "microkernels.h"

#if defined(__x86_64__)
#define MK_PREFIX avx2
#define MK_VL 8
#define MK_NV 1
#include "microkernel.inc"
#include "depthwise.inc"
#include "winograd.inc"

const cuvil_microkernels *cuvil_microkernels_avx2(void) {
  static const cuvil_microkernels kernels = {
      .name = "avx2", .nr = MK_NR, .full = avx2_full, .rows = avx2_rows, .full_store = avx2_full_store,
      .narrow = avx2_narrow, .depthwise = avx2_depthwise,
      .depthwise_lanes = avx2_depthwise_lanes, .even_floats = avx2_even_floats,
      .depthwise3x3_band = avx2_dw3x3_band,
      .im2col_s2_k3 = avx2_im2col_s2_k3,
      .im2col_s2 = avx2_im2col_s2, .vl = MK_VL, .wino_input = avx2_wino_input,
      .wino_output = avx2_wino_output,
      .wino2_input = avx2_wino2_input, .wino2_output = avx2_wino2_output};
  return &kernels;
}
#else
const cuvil_microkernels *cuvil_microkernels_avx2(void) { return NULL; }
#endif
