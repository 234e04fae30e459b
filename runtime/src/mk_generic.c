/*===- runtime/src/mk_generic.c - Baseline micro-kernels ------------------===*
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
  static const cuvil_microkernels kernels = {"generic", MK_NR, generic_full, generic_full_store, generic_narrow,
                                             generic_depthwise, generic_depthwise_lanes, MK_VL,
                                                               generic_wino_input, generic_wino_output};
  return &kernels;
}
