/*===- runtime/cpu/pool.c - Max pooling -----------------------------------===*/
#include "depthwise.h"

/* Max pooling on the depthwise kernels' grid (args.max_pool), plane by
 * plane; the compiler sends only windows that lie inside the padded input
 * (no ceil_mode overhang). */
void cuvil_rt_max_pool2d_f32(const int64_t *q, const float *input, float *output) {
  const cuvil_depthwise_args args = {q, input, NULL, NULL, NULL, output, 1};
  int64_t planes = q[CUVIL_CONV_N] * q[CUVIL_CONV_C];
  int64_t work = planes * q[CUVIL_CONV_OH] * q[CUVIL_CONV_OW] * q[CUVIL_CONV_KH] * q[CUVIL_CONV_KW];
  cuvil_depthwise_run_planes(&args, planes, work);
}
