/*===- runtime/cpu/sort.h - Stable sorting along a dimension ---------------===*
 *
 * The generated code calls the per-dtype entry points by name.
 *
 *===----------------------------------------------------------------------===*/
#ifndef CUVIL_RUNTIME_CPU_SORT_H
#define CUVIL_RUNTIME_CPU_SORT_H

#include "../core/internal.h"

#pragma GCC visibility push(hidden)

#ifdef __cplusplus
extern "C" {
#endif

/* Sorts lines of `input` stably (sort.c; parameters in cuvil/kernel_abi.h). */
void cuvil_rt_sort(const int64_t *params, const void *input, void *values, int64_t *indices,
                   int64_t *scratch);
#define CUVIL_SORT_DECLARE(suffix)                                                             \
  void cuvil_rt_sort_##suffix(const int64_t *, const void *, void *, int64_t *, int64_t *);
CUVIL_SORT_DECLARE(f32)
CUVIL_SORT_DECLARE(f64)
CUVIL_SORT_DECLARE(f16)
CUVIL_SORT_DECLARE(bf16)
CUVIL_SORT_DECLARE(i1)
CUVIL_SORT_DECLARE(i8)
CUVIL_SORT_DECLARE(i16)
CUVIL_SORT_DECLARE(i32)
CUVIL_SORT_DECLARE(i64)
#undef CUVIL_SORT_DECLARE

#ifdef __cplusplus
}
#endif

#pragma GCC visibility pop

#endif /* CUVIL_RUNTIME_CPU_SORT_H */
