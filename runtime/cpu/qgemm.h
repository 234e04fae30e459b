/*===- runtime/cpu/qgemm.h - The int8 micro-kernel interface ---------------===*
 *
 * The two register-blocked int8 tiles the int8 convolution and linear
 * kernels (qgemm.c) are built on, one table per instruction set (portable
 * C in qgemm.c, AVX-512 VNNI in mk_qvnni512.c), chosen at run time:
 *   conv tile:   rows = output channels (up to CUVIL_QCONV_MR), columns =
 *                pixels (up to CUVIL_QCONV_NP), B packed [Kp/4][NP][4] u8;
 *   linear tile: rows = rows of x (up to CUVIL_QLINEAR_MR), columns =
 *                output features (up to CUVIL_QLINEAR_NV panels of 16),
 *                weights packed [panel][Kp/4][16][4] s8.
 * Both finish with the requantize epilogue (cuvil/kernel_abi.h).
 *
 *===----------------------------------------------------------------------===*/
#ifndef CUVIL_RUNTIME_CPU_QGEMM_H
#define CUVIL_RUNTIME_CPU_QGEMM_H

#include "../core/internal.h"
#include "cuvil/kernel_abi.h"

#pragma GCC visibility push(hidden)

#ifdef __cplusplus
extern "C" {
#endif

#define CUVIL_QCONV_MR 8
#define CUVIL_QCONV_NP 48
#define CUVIL_QLINEAR_MR 4
#define CUVIL_QLINEAR_NV 4

typedef struct cuvil_qepilogue {
  const int32_t *offset;   /* the tile's first row's (conv) or column's (linear) */
  const float *multiplier; /* likewise */
  int32_t y_zero, y_min, y_max;
  /* f32 output (the sums dequantized: float(acc + offset) * multiplier):
   * `out`/`y` of the tiles then point to floats, strides in elements. */
  int32_t y_float;
  /* oneDNN's epilogue (PyTorch's onednn engine) when not NULL: the bias in
   * the sums' domain per row/column as offset and multiplier, and y =
   * nearbyint((float(acc + offset) + bias) * multiplier + y_zero), each
   * step rounded to float (f32 output: (float(acc + offset) + bias) *
   * multiplier). */
  const float *bias;
} cuvil_qepilogue;

/* out[r * ldo + p] for r < rows, p < cols: the tile of w[rows][kp] (s8,
 * rows kp bytes apart) times b[kp/4][NP][4] (u8; its rows of NP words ldb
 * bytes apart, NP * 4 when packed), requantized. Words past `cols` in b's
 * rows may be read (and not used). */
typedef void (*cuvil_qconv_tile_fn)(int64_t kp, const int8_t *w, const uint8_t *b, int64_t ldb,
                                    int64_t rows, int64_t cols, const cuvil_qepilogue *e, void *out,
                                    int64_t ldo);
/* y[m * ldy + n] for m < rows, n < cols (cols <= 16 * NV): x's rows (kp
 * bytes, ldx apart) times `panels` ([nv][kp/4][16][4], panel_stride bytes
 * apart), requantized. */
typedef void (*cuvil_qlinear_tile_fn)(int64_t kp, const uint8_t *x, int64_t ldx, int64_t rows,
                                      const int8_t *panels, int64_t panel_stride, int64_t cols,
                                      const cuvil_qepilogue *e, void *y, int64_t ldy);

/* A depthwise convolution's output plane out[oh][ow] from its input plane
 * padded with the zero point (rows wp bytes apart): sum x * w with the
 * taps as floats (exact: every partial sum is an integer below 2^24 for up
 * to 514 taps), then + offset (which holds -zx * sum w), requantized (e:
 * this channel's). g: kh, kw, sh, sw, dh, dw. */
typedef void (*cuvil_qdepthwise_plane_fn)(const uint8_t *plane, int64_t wp, int64_t oh, int64_t ow,
                                          const int64_t *g, const float *taps,
                                          const cuvil_qepilogue *e, void *out);

/* The runs of output pixels a conv tile covers: run s is n[s] pixels
 * whose windows start at word start[s] of a plane (then every sw words),
 * at position p[s] of the tile. */
typedef struct cuvil_qsegments {
  int64_t count, p[CUVIL_QCONV_NP], start[CUVIL_QCONV_NP], n[CUVIL_QCONV_NP];
} cuvil_qsegments;

/* A stride-1 tile over the padded grid (cuvil_qkernels.conv_tile_grid):
 * its np positions are consecutive words of the padded, interleaved
 * planes, wp words a row, of which the first ow of each row are output
 * pixels and the rest (the padding's width) are computed and dropped.
 * Byte i of a segment s (bits of mask[s]) goes to out + base[s] + i. */
#define CUVIL_QGRID_MAX_SEGMENTS 4
typedef struct cuvil_qgrid {
  int64_t count;
  uint64_t mask[CUVIL_QGRID_MAX_SEGMENTS];
  int64_t base[CUVIL_QGRID_MAX_SEGMENTS];
} cuvil_qgrid;

/* out[r * ldo + ...] for r < rows: the tile of w[rows][kp] times the
 * words at b + k4_offsets[k4] (bytes; the tap's and quad's shift in the
 * workspace, so nothing is packed), np <= NP positions, requantized and
 * stored by the grid's segments. Words past np may be read. */
typedef void (*cuvil_qconv_grid_fn)(int64_t kp, const int8_t *w, const uint8_t *b,
                                    const int32_t *k4_offsets, int64_t rows, int64_t np,
                                    const cuvil_qgrid *grid, const cuvil_qepilogue *e, void *out,
                                    int64_t ldo);

/* A tile's patches b[Kp/4][NP][4]: for each window tap (a, b) (a < g[0],
 * b < g[1]; the tap's words g[2] * a + g[3] * b past the window's corner)
 * and each of `quads` planes (plane_words apart), the segments' words. */
typedef void (*cuvil_qpack_fn)(const uint32_t *planes, int64_t plane_words, const int64_t *g,
                               int64_t quads, int64_t sw, const cuvil_qsegments *s, uint32_t *b);

/* out[x] = r0[x] | r1[x] << 8 | r2[x] << 16 | r3[x] << 24 for x < w: four
 * channel rows as the words vpdpbusd/sdot take. */
typedef void (*cuvil_qinterleave_fn)(uint32_t *out, const uint8_t *r0, const uint8_t *r1,
                                     const uint8_t *r2, const uint8_t *r3, int64_t w);

typedef struct cuvil_qkernels {
  const char *name; /* "avx512_vnni", "neon_dotprod", "generic" */
  cuvil_qconv_tile_fn conv_tile;
  cuvil_qlinear_tile_fn linear_tile;
  cuvil_qdepthwise_plane_fn depthwise_plane;
  cuvil_qpack_fn pack_patches;         /* NULL: cuvil_qpack_patches_portable */
  cuvil_qinterleave_fn interleave_row; /* NULL: a loop in C */
  /* The largest linear tile that keeps its sums in registers (rows x
   * panels of 16 columns), which convolutions with pixels as rows use
   * (the linear layers' blocks are CUVIL_QLINEAR_MR x CUVIL_QLINEAR_NV). */
  struct {
    int64_t rows, panels;
  } rows_block;
  /* The depthwise plane read straight from the unpadded input (h x w,
   * padding ph, pw of zero point zx), false (nothing written) for windows
   * it does not take; NULL: the padded plane and depthwise_plane. */
  bool (*depthwise_direct)(const uint8_t *input, int64_t h, int64_t w, int64_t ph, int64_t pw,
                           uint8_t zx, int64_t oh, int64_t ow, const int64_t *g,
                           const float *taps, const cuvil_qepilogue *e, void *out);
  /* Depthwise planes by a plan worked out once per layer geometry (the
   * kernels keep it; `memory`, `bytes` of it 64-byte aligned, is where it
   * is worked out): the plan to run, or NULL where this geometry is not
   * taken, the row kernels are better, or a plane does not fit a stage of
   * stage_bytes. Then run plane by plane with a thread's stage (fresh: the
   * first plane of a run on this thread) on the unpadded input (h x w),
   * its weights (the layer's row: tap t at byte 4t) and epilogue. NULL:
   * depthwise_direct or depthwise_plane. force (tests): a plan wherever
   * the geometry is taken, better or not. */
  const void *(*depthwise_prepare)(void *memory, size_t bytes, size_t stage_bytes,
                                   const int64_t *g, int64_t h, int64_t w, int64_t ph, int64_t pw,
                                   uint8_t zx, int64_t oh, int64_t ow, bool force);
  void (*depthwise_run)(const void *plan, uint8_t *stage, bool fresh, const uint8_t *input,
                        const int8_t *weights, const cuvil_qepilogue *e, void *out);
  /* Stride-1 convolutions without packed patches (NULL: patches). */
  cuvil_qconv_grid_fn conv_tile_grid;
  /* even[x] = row[2x], odd[x] = row[2x + 1] for 2x (+ 1) < n: a padded row's
   * words to its two phases (NULL: a loop in C). */
  void (*split_row2)(uint32_t *even, uint32_t *odd, const uint32_t *row, int64_t n);
  /* One plane of an 8-bit max pool (h x w in, oh x ow out; window: kh, kw,
   * sh, sw, ph, pw, dh, dw; flip 0x80 for signed bytes), false (nothing
   * written) for windows it does not take; NULL: the loops in pool.c. */
  bool (*max_pool_plane)(const uint8_t *in, int64_t h, int64_t w, uint8_t *out, int64_t oh,
                         int64_t ow, const int64_t *window, uint8_t flip);
  /* out[x] = row[s x] | row[s x + 1] << 8 | row[s x + 2] << 16 |
   * row[s x + 3] << 24 for x < n (s: 1, 2 or 4; row readable 64 bytes past
   * s n): a padded row's words of adjacent columns (NULL: a loop in C). */
  void (*column_words)(uint32_t *out, const uint8_t *row, int64_t n, int64_t s);
  /* dst[c ldd + r] = src[r lds + c] for r < rows, c < cols (both at most
   * 16): a block of the pixel-major output to channel planes (NULL: a loop
   * in C). */
  void (*transpose_bytes)(uint8_t *dst, int64_t ldd, const uint8_t *src, int64_t lds, int64_t rows,
                          int64_t cols);
} cuvil_qkernels;

void cuvil_qpack_patches_portable(const uint32_t *planes, int64_t plane_words, const int64_t *g,
                                  int64_t quads, int64_t sw, const cuvil_qsegments *s, uint32_t *b);

/* Depthwise convolutions the row kernels take: at most this many taps. */
#define CUVIL_QDEPTHWISE_MAX_TAPS 64

const cuvil_qkernels *cuvil_qkernels_generic(void);
/* NULL where not compiled in (not x86-64, not aarch64). */
const cuvil_qkernels *cuvil_qkernels_avx512_vnni(void);
const cuvil_qkernels *cuvil_qkernels_neon_dotprod(void);
/* avx512_vnni with the depthwise convolution in integers (vpermb: also
 * needs AVX-512 VBMI); NULL where not compiled in. */
const cuvil_qkernels *cuvil_qkernels_avx512_vnni_vbmi(void);
/* mk_qvbmi512.c's depthwise plane (cuvil_qdepthwise_plane_fn), false
 * (nothing written) for windows it does not take. */
bool cuvil_qdepthwise_vbmi(const uint8_t *plane, int64_t wp, int64_t oh, int64_t ow,
                           const int64_t *g, const float *taps, const cuvil_qepilogue *e,
                           void *out);
/* The same on the unpadded input (cuvil_qkernels.depthwise_direct). */
bool cuvil_qdepthwise_vbmi_direct(const uint8_t *input, int64_t h, int64_t w, int64_t ph,
                                  int64_t pw, uint8_t zx, int64_t oh, int64_t ow,
                                  const int64_t *g, const float *taps, const cuvil_qepilogue *e,
                                  void *out);
/* mk_qvbmi512.c's words of adjacent columns (cuvil_qkernels.column_words). */
void cuvil_qcolumn_words_vbmi(uint32_t *out, const uint8_t *row, int64_t n, int64_t s);
/* mk_qvbmi512.c's 8-bit max pool plane (cuvil_qkernels.max_pool_plane). */
bool cuvil_qmax_pool_vbmi(const uint8_t *in, int64_t h, int64_t w, uint8_t *out, int64_t oh,
                          int64_t ow, const int64_t *window, uint8_t flip);
/* mk_qvbmi512.c's depthwise plans (cuvil_qkernels.depthwise_prepare and
 * depthwise_run). */
const void *cuvil_qdepthwise_vbmi_prepare(void *memory, size_t bytes, size_t stage_bytes,
                                          const int64_t *g, int64_t h, int64_t w, int64_t ph,
                                          int64_t pw, uint8_t zx, int64_t oh, int64_t ow,
                                          bool force);
void cuvil_qdepthwise_vbmi_run(const void *plan, uint8_t *stage, bool fresh, const uint8_t *input,
                               const int8_t *weights, const cuvil_qepilogue *e, void *out);
/* The best this CPU runs (CUVIL_TEST_HIDE_CPU_FEATURES hides features, so
 * tests can run each variant). */
const cuvil_qkernels *cuvil_qkernels_best(void);
/* Tests: the variant the entry points use from now on (NULL: the best). */
void cuvil_qkernels_use_for_test(const cuvil_qkernels *kernels);
/* Tests and benchmarks: depthwise plans where the kernels judge them
 * better (0, the default), wherever the geometry is taken (1), never (-1). */
void cuvil_qdepthwise_plans_for_test(int mode);
/* Tests and benchmarks: stride-1 convolutions on the padded grid where
 * the kernels have it (true, the default) or always with patches. */
void cuvil_qconv_grid_for_test(bool enabled);
/* Tests and benchmarks: layers with few input channels in words of
 * adjacent columns (true, the default) or of channels. */
void cuvil_qconv_columns_for_test(bool enabled);

/* Accumulator `i` of a tile to out[at]: requantized, or dequantized. */
static inline void cuvil_qstore(const cuvil_qepilogue *e, int32_t acc, int64_t channel, void *out,
                                int64_t at);

/* Keeps a float in a register as it is, so that the compiler cannot fuse
 * the multiplication before with the addition after (the runtime builds
 * with -ffp-contract=fast; oneDNN's epilogue rounds each step). */
#if defined(__aarch64__)
#define CUVIL_FP_ROUNDED(x) __asm__("" : "+w"(x))
#else
#define CUVIL_FP_ROUNDED(x) __asm__("" : "+x"(x))
#endif

/* The epilogue's arithmetic for one accumulator (QuantArithmetic.h). */
static inline uint8_t cuvil_requantize(int32_t acc, int32_t offset, float multiplier,
                                       int32_t zero, int32_t lo, int32_t hi) {
  int32_t sum = (int32_t)((uint32_t)acc + (uint32_t)offset);
  float t = (float)sum * multiplier;
  /* Beyond +-2^30 everything clamps the same way (and stays an int32). */
  t = t > 1073741824.0f ? 1073741824.0f : t < -1073741824.0f ? -1073741824.0f : t;
  int32_t v = (int32_t)__builtin_nearbyintf(t) + zero;
  return (uint8_t)(v < lo ? lo : v > hi ? hi : v);
}

static inline void cuvil_qstore(const cuvil_qepilogue *e, int32_t acc, int64_t channel, void *out,
                                int64_t at) {
  if (e->bias) { /* oneDNN's steps, each rounded (no fused multiply-add) */
    int32_t sum = (int32_t)((uint32_t)acc + (uint32_t)e->offset[channel]);
    float real = (float)sum + e->bias[channel];
    CUVIL_FP_ROUNDED(real);
    float t = real * e->multiplier[channel];
    if (e->y_float) {
      ((float *)out)[at] = t;
      return;
    }
    CUVIL_FP_ROUNDED(t);
    t = t + (float)e->y_zero;
    t = t > 1073741824.0f ? 1073741824.0f : t < -1073741824.0f ? -1073741824.0f : t;
    int32_t v = (int32_t)__builtin_nearbyintf(t);
    ((uint8_t *)out)[at] = (uint8_t)(v < e->y_min ? e->y_min : v > e->y_max ? e->y_max : v);
    return;
  }
  if (e->y_float) {
    int32_t sum = (int32_t)((uint32_t)acc + (uint32_t)e->offset[channel]);
    ((float *)out)[at] = (float)sum * e->multiplier[channel];
  } else {
    ((uint8_t *)out)[at] = cuvil_requantize(acc, e->offset[channel], e->multiplier[channel],
                                            e->y_zero, e->y_min, e->y_max);
  }
}

#ifdef __cplusplus
}
#endif

#pragma GCC visibility pop

#endif /* CUVIL_RUNTIME_CPU_QGEMM_H */
