/*===- runtime/cpu/conv_pairs.c - Fused depthwise / pointwise pairs --------===*
 *
 * A depthwise 3x3 that only feeds a 1x1 convolution, or a 1x1 convolution
 * that only feeds a depthwise 3x3, run together in bands of rows that stay
 * in the thread's cache, the GEMM of each band on the calling thread.
 *
 *===----------------------------------------------------------------------===*/
#include "gemm.h"
#include "schedule.h"

#include <math.h>
#include <string.h>

/* A 3x3 stride-1 depthwise convolution whose output only feeds a pointwise
 * one, band by band: a band's depthwise output (every channel) stays in the
 * thread's scratch, in cache, for the pointwise GEMM, instead of a whole
 * tensor written out and read back (the first block of mobile networks:
 * 32 x 112 x 112 floats, 1.6 MB, past L2). */
/* Bands of at most `rows` of an image's `total` rows, as many per image as
 * make them a multiple of the threads when there is one image (every
 * thread a share); sets the rows per band and the bands per image. */
static void split_bands(int64_t total, int64_t rows, int64_t images, void *exec,
                        int64_t *band_rows, int64_t *bands) {
  int64_t threads = cuvil_thread_pool_size(exec), n = (total + rows - 1) / rows;
  if (images == 1 && threads > 1)
    n = (n + threads - 1) / threads * threads;
  *band_rows = (total + n - 1) / n;
  *bands = (total + *band_rows - 1) / *band_rows;
}

typedef struct dwpw_job {
  const int64_t *qd, *qp;
  const float *input, *dw_weights, *dw_bias, *pw_weights, *pw_bias, *residual;
  float *output;
  const cuvil_microkernels *mk;
  void *exec;
  float *scratch; /* when running without a pool */
  int64_t band_rows, bands; /* bands per image */
} dwpw_job;

static void dwpw_items(void *closure, int64_t begin, int64_t end) {
  const dwpw_job *job = closure;
  const int64_t *qd = job->qd, *qp = job->qp;
  const int64_t c = qd[CUVIL_CONV_C], h = qd[CUVIL_CONV_H], w = qd[CUVIL_CONV_W], cout = qp[CUVIL_CONV_COUT];
  const int64_t pixels = h * w;
  float *scratch = job->scratch ? job->scratch : cuvil_thread_pool_scratch(job->exec);
  float *band = scratch + CUVIL_GEMM_SCRATCH_FLOATS;   /* [c][rows * w] */
  float *pad = band + c * job->band_rows * w;     /* (rows + 2) x (w + 2) */
  const float lo_d = cuvil_float_from_bits(qd[CUVIL_CONV_LO]), hi_d = cuvil_float_from_bits(qd[CUVIL_CONV_HI]);
  const int64_t fd = qd[CUVIL_CONV_FLAGS], fp = qp[CUVIL_CONV_FLAGS];
  for (int64_t item = begin; item < end; ++item) {
    const int64_t image = item / job->bands, r0 = item % job->bands * job->band_rows;
    const int64_t rows = h - r0 < job->band_rows ? h - r0 : job->band_rows;
    for (int64_t ci = 0; ci < c; ++ci)
      job->mk->depthwise3x3_band(job->input + (image * c + ci) * pixels, 0, h, w, r0, rows, 1,
                                 job->dw_weights + ci * 9,
                                 (fd & CUVIL_FLAG_BIAS) ? job->dw_bias[ci] : 0.0f,
                                 (fd & CUVIL_FLAG_CLAMP) != 0, lo_d, hi_d, pad, band + ci * rows * w);
    cuvil_gemm_matrix b = {band, rows * w};
    const int64_t out_offset = image * cout * pixels + r0 * w;
    cuvil_gemm_problem p = {
        .m = cout, .n = rows * w, .k = c,
        .a_packed = job->pw_weights,
        .pack_b = cuvil_gemm_pack_b_rows, .b_context = &b,
        .b_direct = band, .b_direct_ld = rows * w,
        .c = job->output + out_offset, .c_row_stride = pixels, .c_col_stride = 1,
        .bias = (fp & CUVIL_FLAG_BIAS) ? job->pw_bias : NULL,
        .residual = (fp & CUVIL_FLAG_RESIDUAL) ? job->residual + out_offset : NULL,
        .clamp = (fp & CUVIL_FLAG_CLAMP) != 0,
        .lo = cuvil_float_from_bits(qp[CUVIL_CONV_LO]), .hi = cuvil_float_from_bits(qp[CUVIL_CONV_HI])};
    cuvil_gemm_run_here(&p, job->mk, scratch);
  }
}

void cuvil_rt_depthwise_pointwise_f32(const int64_t *q, const float *input,
                                      const float *dw_weights, const float *dw_bias,
                                      const float *pw_weights, const float *pw_bias,
                                      const float *residual, float *output) {
  dwpw_job job = {.qd = q, .qp = q + CUVIL_CONV_NUM_PARAMS, .input = input,
                  .dw_weights = dw_weights, .dw_bias = dw_bias, .pw_weights = pw_weights,
                  .pw_bias = pw_bias, .residual = residual, .output = output,
                  .mk = cuvil_microkernels_best(), .exec = cuvil_rt_current_exec};
  const int64_t c = q[CUVIL_CONV_C], h = q[CUVIL_CONV_H], w = q[CUVIL_CONV_W];
  /* Bands of about 64 Ki floats of depthwise output (256 KiB: in L2 with
   * the GEMM's blocks); the scratch past the GEMM's holds a band and its
   * padded input rows. */
  const int64_t left = (int64_t)(CUVIL_THREAD_SCRATCH_BYTES / sizeof(float)) - CUVIL_GEMM_SCRATCH_FLOATS;
  int64_t rows = 65536 / (c * w);
  while (rows > 1 && c * rows * w + (rows + 2) * (w + 2) > left)
    --rows;
  if (rows < 1)
    rows = 1;
  split_bands(h, rows, q[CUVIL_CONV_N], job.exec, &job.band_rows, &job.bands);
  int64_t work = q[CUVIL_CONV_N] * h * w * c * (9 + q[CUVIL_CONV_NUM_PARAMS + CUVIL_CONV_COUT]);
  cuvil_run_items(job.exec, q[CUVIL_CONV_N] * job.bands, work, dwpw_items, &job, &job.scratch);
}

/*--- Pointwise then depthwise, in bands of rows ----------------------------*/

/* A 1x1 convolution (an inverted residual block's expansion) whose output
 * only feeds a 3x3 depthwise one (stride 1 or 2, padding 1), band by band:
 * the band's expanded rows (every channel) go into the thread's scratch, in
 * cache, for the depthwise rows, instead of a whole tensor written out and
 * read back (mobilenet_v2's 96 x 112 x 112 floats, 4.8 MB). Consecutive
 * bands of one work range share input rows (2 at stride 1, 1 at stride 2):
 * those are moved to the front of the band, not computed again. */
typedef struct pwdw_job {
  const int64_t *qp, *qd;
  const float *input, *pw_weights, *pw_bias, *dw_weights, *dw_bias;
  float *output;
  const cuvil_microkernels *mk;
  void *exec;
  float *scratch;           /* when running without a pool */
  int64_t band_rows, bands; /* output rows per band, bands per image */
  int64_t slot;             /* floats per channel in the band buffer */
} pwdw_job;

static void pwdw_items(void *closure, int64_t begin, int64_t end) {
  const pwdw_job *job = closure;
  const int64_t *qp = job->qp, *qd = job->qd;
  const int64_t cin = qp[CUVIL_CONV_C], c = qp[CUVIL_CONV_COUT], h = qp[CUVIL_CONV_H], w = qp[CUVIL_CONV_W];
  const int64_t s = qd[CUVIL_CONV_SH], oh = qd[CUVIL_CONV_OH], ow = qd[CUVIL_CONV_OW];
  float *scratch = job->scratch ? job->scratch : cuvil_thread_pool_scratch(job->exec);
  float *band = scratch + CUVIL_GEMM_SCRATCH_FLOATS; /* [c][slot]: input rows [lo, hi) */
  float *pad = band + c * job->slot;
  const float lo_d = cuvil_float_from_bits(qd[CUVIL_CONV_LO]), hi_d = cuvil_float_from_bits(qd[CUVIL_CONV_HI]);
  const int64_t fp = qp[CUVIL_CONV_FLAGS], fd = qd[CUVIL_CONV_FLAGS];
  int64_t prev_lo = 0, prev_hi = 0; /* rows held from the item before (same image) */
  for (int64_t item = begin; item < end; ++item) {
    const int64_t image = item / job->bands, o0 = item % job->bands * job->band_rows;
    const int64_t rows = oh - o0 < job->band_rows ? oh - o0 : job->band_rows;
    /* Input rows the band's output rows read: [o0 s - 1, (o0 + rows - 1) s + 1]. */
    const int64_t lo = o0 * s - 1 < 0 ? 0 : o0 * s - 1;
    const int64_t hi = (o0 + rows - 1) * s + 2 > h ? h : (o0 + rows - 1) * s + 2;
    int64_t from = lo; /* first row to compute */
    if (item > begin && o0 > 0 && prev_hi > lo && prev_lo <= lo) {
      for (int64_t ci = 0; ci < c; ++ci)
        memmove(band + ci * job->slot, band + ci * job->slot + (lo - prev_lo) * w,
                (size_t)((prev_hi - lo) * w) * sizeof(float));
      from = prev_hi;
    }
    prev_lo = lo, prev_hi = hi;
    const float *src = job->input + image * cin * h * w + from * w;
    cuvil_gemm_matrix b = {src, h * w};
    cuvil_gemm_problem p = {
        .m = c, .n = (hi - from) * w, .k = cin,
        .a_packed = job->pw_weights,
        .pack_b = cuvil_gemm_pack_b_rows, .b_context = &b,
        .b_direct = src, .b_direct_ld = h * w,
        .c = band + (from - lo) * w, .c_row_stride = job->slot, .c_col_stride = 1,
        .bias = (fp & CUVIL_FLAG_BIAS) ? job->pw_bias : NULL,
        .clamp = (fp & CUVIL_FLAG_CLAMP) != 0,
        .lo = cuvil_float_from_bits(qp[CUVIL_CONV_LO]), .hi = cuvil_float_from_bits(qp[CUVIL_CONV_HI])};
    cuvil_gemm_run_here(&p, job->mk, scratch);
    for (int64_t ci = 0; ci < c; ++ci)
      job->mk->depthwise3x3_band(band + ci * job->slot, lo, h, w, o0, rows, (int)s,
                                 job->dw_weights + ci * 9,
                                 (fd & CUVIL_FLAG_BIAS) ? job->dw_bias[ci] : 0.0f,
                                 (fd & CUVIL_FLAG_CLAMP) != 0, lo_d, hi_d, pad,
                                 job->output + (image * c + ci) * oh * ow + o0 * ow);
  }
}

void cuvil_rt_pointwise_depthwise_f32(const int64_t *q, const float *input,
                                      const float *pw_weights, const float *pw_bias,
                                      const float *dw_weights, const float *dw_bias,
                                      float *output) {
  pwdw_job job = {.qp = q, .qd = q + CUVIL_CONV_NUM_PARAMS, .input = input,
                  .pw_weights = pw_weights, .pw_bias = pw_bias, .dw_weights = dw_weights,
                  .dw_bias = dw_bias, .output = output, .mk = cuvil_microkernels_best(),
                  .exec = cuvil_rt_current_exec};
  const int64_t c = q[CUVIL_CONV_COUT], w = q[CUVIL_CONV_W], s = job.qd[CUVIL_CONV_SH], oh = job.qd[CUVIL_CONV_OH];
  /* Bands of about 96 Ki floats of expanded rows (384 KiB: in L2 with the
   * GEMM's blocks), at least 3 rows; the scratch past the GEMM's holds the
   * band and the depthwise rows' padding. */
  const int64_t left = (int64_t)(CUVIL_THREAD_SCRATCH_BYTES / sizeof(float)) - CUVIL_GEMM_SCRATCH_FLOATS;
  int64_t in_rows = 98304 / (c * w);
  if (in_rows < 3)
    in_rows = 3;
  int64_t rows = (in_rows - 3) / s + 1; /* output rows whose input rows fit */
  split_bands(oh, rows, q[CUVIL_CONV_N], job.exec, &job.band_rows, &job.bands);
  job.slot = ((job.band_rows - 1) * s + 3) * w;
  if (c * job.slot + (job.band_rows + 2) * (w + 2) > left) {
    /* Past the ABI's C x W bound (the compiler never calls it so): NaN, not
     * a silent partial result. */
    for (int64_t i = 0; i < q[CUVIL_CONV_N] * c * oh * job.qd[CUVIL_CONV_OW]; ++i)
      output[i] = NAN;
    return;
  }
  int64_t work = q[CUVIL_CONV_N] * c * (q[CUVIL_CONV_H] * w * q[CUVIL_CONV_C] + oh * job.qd[CUVIL_CONV_OW] * 9);
  cuvil_run_items(job.exec, q[CUVIL_CONV_N] * job.bands, work, pwdw_items, &job, &job.scratch);
}
