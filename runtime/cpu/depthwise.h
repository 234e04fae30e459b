/*===- runtime/cpu/depthwise.h - Depthwise convolution planes --------------===*
 *
 * The depthwise driver, also what max pooling runs on (its windows on the
 * same grid).
 *
 *===----------------------------------------------------------------------===*/
#ifndef CUVIL_RUNTIME_CPU_DEPTHWISE_H
#define CUVIL_RUNTIME_CPU_DEPTHWISE_H

#include "microkernels.h"

#pragma GCC visibility push(hidden)

#ifdef __cplusplus
extern "C" {
#endif

/* Runs the micro-kernels' depthwise grid (mk->depthwise) on each of the
 * `planes` (image, channel) planes of args, over the threads of the model
 * call in progress when `work` (window taps) is worth it. */
void cuvil_depthwise_run_planes(const cuvil_depthwise_args *args, int64_t planes, int64_t work);

#ifdef __cplusplus
}
#endif

#pragma GCC visibility pop

#endif /* CUVIL_RUNTIME_CPU_DEPTHWISE_H */
