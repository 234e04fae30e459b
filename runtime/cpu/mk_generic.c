/*===- runtime/cpu/mk_generic.c - Baseline micro-kernels -------------------===*
 *
 * x86-64: SSE2 (4 floats per register, 8 x 4 tile); aarch64: NEON, which
 * every Armv8-A CPU has (4 floats per register, 8 x 8 tile: 16 of the 32
 * vector registers hold the accumulators).
 *
 *===----------------------------------------------------------------------===*/
#define MK_PREFIX generic
#define MK_VL 4
#if defined(__aarch64__)
#define MK_NV 2
#else
#define MK_NV 1
#endif
#include "microkernel.inc"
#include "depthwise.inc"
#include "winograd.inc"

const cuvil_microkernels *cuvil_microkernels_generic(void) {
  static const cuvil_microkernels kernels = {
      .name = "generic", .nr = MK_NR, .full = generic_full, .rows = generic_rows, .full_store = generic_full_store,
      .narrow = generic_narrow, .depthwise = generic_depthwise,
      .depthwise_lanes = generic_depthwise_lanes, .even_floats = generic_even_floats,
      .depthwise3x3_band = generic_dw3x3_band,
      .im2col_s2_k3 = generic_im2col_s2_k3,
      .im2col_s2 = generic_im2col_s2, .vl = MK_VL, .wino_input = generic_wino_input,
      .wino_output = generic_wino_output,
      .wino2_input = generic_wino2_input, .wino2_output = generic_wino2_output};
  return &kernels;
}
