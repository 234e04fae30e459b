/*===- runtime/cpu/winograd.h - Winograd 3x3 convolutions ------------------===*
 *
 * What conv2d.c dispatches to for convolutions whose weights the compiler
 * transformed (CUVIL_FLAG_WINOGRAD).
 *
 *===----------------------------------------------------------------------===*/
#ifndef CUVIL_RUNTIME_CPU_WINOGRAD_H
#define CUVIL_RUNTIME_CPU_WINOGRAD_H

#include "microkernels.h"

#pragma GCC visibility push(hidden)

#ifdef __cplusplus
extern "C" {
#endif

/* A 3x3, stride-1 convolution (groups 1, dilation 1) whose weights are in
 * the Winograd F(4x4, 3x3) domain: U = G g G^T stored by blocks of
 * CUVIL_WINO_KC input channels, [ceil(Cin/KC)][36][ceil(Cout/8)][kc][8]
 * (one packed GEMM operand per block and transformed position); with
 * CUVIL_FLAG_WINOGRAD2 in its flags, F(2x2, 3x3)'s, [ceil(Cin/KC)][16][...]. */
void cuvil_conv2d_winograd(const int64_t *q, const float *input, const float *u,
                           const float *bias, const float *residual, float *output,
                           const cuvil_microkernels *kernels, void *exec);

#ifdef __cplusplus
}
#endif

#pragma GCC visibility pop

#endif /* CUVIL_RUNTIME_CPU_WINOGRAD_H */
