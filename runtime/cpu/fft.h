/*===- runtime/cpu/fft.h - Discrete Fourier transforms for torch.fft -------===*
 *
 * The one transform the compiled code calls for torch.fft and torch.stft:
 * an unnormalised complex DFT of length n along the rows of a batch,
 *   forward:  X[k] = sum_j x[j] exp(-2 pi i j k / n)
 *   inverse:  X[k] = sum_j x[j] exp(+2 pi i j k / n)
 * on (real, imaginary) pairs. Everything else (real inputs, one-sided
 * spectra, Hermitian inputs, scaling, several dimensions, frames) the
 * compiler builds around it from ordinary ops.
 *
 * Computed in double whatever the element type: radix-2 for powers of two,
 * Bluestein's chirp-z (three power-of-two transforms) for other lengths, so
 * every length costs O(n log n). Rows go 8 at a time, one a vector lane,
 * over the threads, with twiddles and chirps kept per (n, direction) for
 * the process (a table of 32, made once, under a lock); where that table
 * is full, memory is short or 8 rows do not fit a thread's scratch, row by
 * row in the caller's scratch (cuvil_dft_scratch(n) doubles). An output may
 * be its input buffer (each block of rows is read whole first).
 *
 *===----------------------------------------------------------------------===*/
#ifndef CUVIL_RUNTIME_FFT_H
#define CUVIL_RUNTIME_FFT_H

#include "../core/internal.h"
#include "cuvil/kernel_abi.h" /* CUVIL_DFT_* parameters, cuvil_dft_scratch */

#pragma GCC visibility push(hidden)

#ifdef __cplusplus
extern "C" {
#endif

#include <stdbool.h>

/* params {batch, n, inverse} (CUVIL_DFT_*). x, out: [batch][n][2]. */
void cuvil_rt_dft_f32(const int64_t *params, const float *x, float *out, double *scratch);
void cuvil_rt_dft_f64(const int64_t *params, const double *x, double *out, double *scratch);
/* Tests: the portable passes over 8 rows even where AVX-512 runs. */
void cuvil_dft_generic_passes_for_test(bool generic);

#ifdef __cplusplus
}
#endif

#pragma GCC visibility pop

#endif /* CUVIL_RUNTIME_FFT_H */
