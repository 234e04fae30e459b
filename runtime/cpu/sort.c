/*===- runtime/cpu/sort.c - Stable sorting along a dimension ---------------===*
 *
 * torch.sort (and what is built on it: topk, argsort, kthvalue, median,
 * quantile): each line along the sorted dimension is sorted stably by a
 * bottom-up merge sort of its indices, then the values are gathered. NaN
 * is greater than every number (last ascending, first descending), as in
 * PyTorch; equal keys keep their order.
 *
 *===----------------------------------------------------------------------===*/
#include "sort.h"

#include "cuvil/kernel_abi.h"
#include "cuvil/runtime.h"

#include <math.h>
#include <string.h>

static float half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
  if (exp == 0x1f)
    bits = sign | 0x7f800000u | (man << 13); /* inf, NaN */
  else if (exp != 0)
    bits = sign | ((exp + 112) << 23) | (man << 13);
  else if (man == 0)
    bits = sign; /* zero */
  else { /* subnormal: normalise */
    exp = 113;
    while (!(man & 0x400)) {
      man <<= 1;
      --exp;
    }
    bits = sign | (exp << 23) | ((man & 0x3ff) << 13);
  }
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

static double key_double(const void *base, int dtype, int64_t i) {
  switch (dtype) {
  case CUVIL_DTYPE_F32: return ((const float *)base)[i];
  case CUVIL_DTYPE_F64: return ((const double *)base)[i];
  case CUVIL_DTYPE_F16: return half_to_float(((const uint16_t *)base)[i]);
  case CUVIL_DTYPE_BF16: {
    uint32_t bits = (uint32_t)((const uint16_t *)base)[i] << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
  }
  default: return 0;
  }
}

static int64_t key_int(const void *base, int dtype, int64_t i) {
  switch (dtype) {
  case CUVIL_DTYPE_I8: return ((const int8_t *)base)[i];
  case CUVIL_DTYPE_U8:
  case CUVIL_DTYPE_BOOL: return ((const uint8_t *)base)[i];
  case CUVIL_DTYPE_I16: return ((const int16_t *)base)[i];
  case CUVIL_DTYPE_I32: return ((const int32_t *)base)[i];
  default: return ((const int64_t *)base)[i];
  }
}

static int is_float_dtype(int dtype) {
  return dtype == CUVIL_DTYPE_F32 || dtype == CUVIL_DTYPE_F64 || dtype == CUVIL_DTYPE_F16 ||
         dtype == CUVIL_DTYPE_BF16;
}

static size_t dtype_size(int dtype) {
  switch (dtype) {
  case CUVIL_DTYPE_F64:
  case CUVIL_DTYPE_I64: return 8;
  case CUVIL_DTYPE_F32:
  case CUVIL_DTYPE_I32: return 4;
  case CUVIL_DTYPE_F16:
  case CUVIL_DTYPE_BF16:
  case CUVIL_DTYPE_I16: return 2;
  default: return 1;
  }
}

typedef struct sort_line {
  const void *input;
  int dtype;
  int64_t stride; /* elements between consecutive keys of the line */
  int descending;
} sort_line;

/* Whether element a must come before element b (strictly). */
static int before(const sort_line *l, int64_t a, int64_t b) {
  if (is_float_dtype(l->dtype)) {
    double x = key_double(l->input, l->dtype, a * l->stride);
    double y = key_double(l->input, l->dtype, b * l->stride);
    int xn = isnan(x), yn = isnan(y);
    if (xn || yn) /* NaN is the greatest */
      return l->descending ? (xn && !yn) : (!xn && yn);
    return l->descending ? x > y : x < y;
  }
  int64_t x = key_int(l->input, l->dtype, a * l->stride);
  int64_t y = key_int(l->input, l->dtype, b * l->stride);
  return l->descending ? x > y : x < y;
}

/* Sorts idx[0..n) by key, stably; tmp has n slots. The result is in idx. */
static void merge_sort(const sort_line *l, int64_t *idx, int64_t *tmp, int64_t n) {
  int64_t *src = idx, *dst = tmp;
  for (int64_t width = 1; width < n; width *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * width) {
      int64_t mid = lo + width < n ? lo + width : n;
      int64_t hi = lo + 2 * width < n ? lo + 2 * width : n;
      int64_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi)
        dst[k++] = before(l, src[j], src[i]) ? src[j++] : src[i++]; /* ties: left first */
      while (i < mid)
        dst[k++] = src[i++];
      while (j < hi)
        dst[k++] = src[j++];
    }
    int64_t *t = src;
    src = dst;
    dst = t;
  }
  if (src != idx)
    memcpy(idx, src, (size_t)n * sizeof *idx);
}

void cuvil_rt_sort(const int64_t *q, const void *input, void *values, int64_t *indices,
                   int64_t *scratch) {
  int dtype = (int)q[CUVIL_SORT_DTYPE];
  int64_t outer = q[CUVIL_SORT_OUTER], len = q[CUVIL_SORT_LEN], inner = q[CUVIL_SORT_INNER];
  size_t esize = dtype_size(dtype);
  int64_t *idx = scratch, *tmp = scratch + len;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      int64_t start = o * len * inner + i;
      sort_line l = {(const char *)input + (size_t)start * esize, dtype, inner,
                     (int)q[CUVIL_SORT_DESCENDING]};
      for (int64_t k = 0; k < len; ++k)
        idx[k] = k;
      merge_sort(&l, idx, tmp, len);
      for (int64_t k = 0; k < len; ++k) {
        int64_t to = start + k * inner, from = start + idx[k] * inner;
        memcpy((char *)values + (size_t)to * esize, (const char *)input + (size_t)from * esize, esize);
        indices[to] = idx[k];
      }
    }
}

/* The compiled code calls one symbol per element type (its declarations are
 * typed); the dtype parameter tells the kernel the rest. */
#define CUVIL_SORT_ENTRY(suffix)                                                               \
  void cuvil_rt_sort_##suffix(const int64_t *q, const void *input, void *values,              \
                              int64_t *indices, int64_t *scratch) {                           \
    cuvil_rt_sort(q, input, values, indices, scratch);                                         \
  }
CUVIL_SORT_ENTRY(f32)
CUVIL_SORT_ENTRY(f64)
CUVIL_SORT_ENTRY(f16)
CUVIL_SORT_ENTRY(bf16)
CUVIL_SORT_ENTRY(i1)
CUVIL_SORT_ENTRY(i8)
CUVIL_SORT_ENTRY(i16)
CUVIL_SORT_ENTRY(i32)
CUVIL_SORT_ENTRY(i64)
