/*===- runtime/cpu/winograd.c - Winograd 3x3 convolutions ------------------===*
 *
 * A 3x3 stride-1 convolution as 36 matrix products in the Winograd domain
 * of F(4x4, 3x3): 4x fewer multiply-adds than the direct form per tile
 * (less the ragged edge), and no im2col copy; or as 16 products of
 * F(2x2, 3x3) (2.25x fewer) where an image has too few 4x4 tiles (7x7:
 * four, sixteen of 2x2). The output is cut into 4x4 (2x2) tiles,
 * numbered over all images; a work item is NR of them (the micro-kernel's
 * tile width) and a block of output channels. For each item, per block of
 * input channels:
 *   V[xi][ci][tile] = (B^T d B)[xi]                 (wino_input, per channel)
 *   M[xi][co][tile] += U[xi][co][ci] . V[xi][ci][tile]  (the micro-kernel)
 * then Y = A^T M A plus the epilogue, per output channel (wino_output).
 * V and M live in the thread's scratch; U was transformed and packed at
 * compile time.
 *
 *===----------------------------------------------------------------------===*/
#include "winograd.h"
#include "schedule.h"

/* Input channels per block of V: V's block for one position (KCW x NR)
 * stays in L1 while the micro-kernel runs over the output channels; U is
 * packed in these blocks (winograd.h). */
enum { KCW = CUVIL_WINO_KC };
/* The 36 positions' rows of V and of M lie a power of two apart (16 KiB):
 * one more cache line between them keeps a transform's 36 loads or stores
 * from all landing in the same L1 set. */
enum { XI_PAD = 16 };

typedef struct wino_job {
  const int64_t *q;
  const float *input, *u, *bias, *residual;
  float *output;
  const cuvil_microkernels *mk;
  void *exec;
  float *scratch; /* when running without a pool */
  cuvil_wino_input_fn transform_input;
  cuvil_wino_output_fn transform_output;
  int64_t side;   /* of an output tile: 4 or 2 */
  int64_t xi;     /* transformed positions: 36 or 16 */
  int64_t tiles;  /* over all images */
  int64_t mcb;    /* output channels per block of M (a multiple of MR) */
  int64_t co_blocks;
} wino_job;

static void wino_items(void *closure, int64_t begin, int64_t end) {
  const wino_job *job = closure;
  const int64_t *q = job->q;
  const cuvil_microkernels *mk = job->mk;
  const int64_t nr = mk->nr, cin = q[CUVIL_CONV_C], cout = q[CUVIL_CONV_COUT];
  const int64_t plane = q[CUVIL_CONV_H] * q[CUVIL_CONV_W];
  const int64_t panels = (cout + CUVIL_MR - 1) / CUVIL_MR;
  const int64_t side = job->side, xis = job->xi;
  const int64_t tiles_x = (q[CUVIL_CONV_OW] + side - 1) / side;
  const int64_t tiles_per_image = tiles_x * ((q[CUVIL_CONV_OH] + side - 1) / side);
  float *scratch = job->scratch ? job->scratch : cuvil_thread_pool_scratch(job->exec);
  float *v = scratch;             /* [xi][kc][nr] */
  float *m = v + xis * (KCW * nr + XI_PAD); /* [xi][mcb][nr], rows XI_PAD apart */
  for (int64_t item = begin; item < end; ++item) {
    int64_t block = item / job->co_blocks, co0 = item % job->co_blocks * job->mcb;
    int64_t t0 = block * nr, nt = job->tiles - t0 < nr ? job->tiles - t0 : nr;
    int64_t rows = cout - co0 < job->mcb ? cout - co0 : job->mcb;
    int64_t p0 = co0 / CUVIL_MR, np = (rows + CUVIL_MR - 1) / CUVIL_MR;
    cuvil_wino_tiles tiles = {.n = nt};
    for (int64_t t = 0; t < nt; ++t) {
      int64_t tile = t0 + t, r = tile % tiles_per_image;
      tiles.image[t] = tile / tiles_per_image;
      tiles.oy0[t] = r / tiles_x * side;
      tiles.ox0[t] = r % tiles_x * side;
      tiles.iy0[t] = tiles.oy0[t] - q[CUVIL_CONV_PH];
      tiles.ix0[t] = tiles.ox0[t] - q[CUVIL_CONV_PW];
      tiles.interior[t] = tiles.iy0[t] >= 0 && tiles.iy0[t] + side + 2 <= q[CUVIL_CONV_H] &&
                          tiles.ix0[t] >= 0 && tiles.ix0[t] + side + 2 <= q[CUVIL_CONV_W];
    }
    for (int64_t ci0 = 0; ci0 < cin; ci0 += KCW) {
      int64_t kc = cin - ci0 < KCW ? cin - ci0 : KCW;
      for (int64_t ci = 0; ci < kc; ++ci)
        job->transform_input(q, job->input + (ci0 + ci) * plane, &tiles, v + ci * nr,
                             kc * nr + XI_PAD);
      /* This block of U: [xi][panels][kc][MR], after the full blocks before it. */
      const float *u = job->u + ci0 * xis * panels * CUVIL_MR;
      for (int64_t xi = 0; xi < xis; ++xi)
        for (int64_t p = 0; p < np; ++p)
          mk->full(kc, u + (xi * panels + p0 + p) * kc * CUVIL_MR,
                   v + xi * (kc * nr + XI_PAD), nr,
                   m + xi * (job->mcb * nr + XI_PAD) + p * CUVIL_MR * nr, ci0 > 0);
    }
    for (int64_t r = 0; r < rows; ++r)
      job->transform_output(q, m + r * nr, job->mcb * nr + XI_PAD, &tiles, co0 + r, job->bias,
                            job->residual, job->output);
  }
}

void cuvil_conv2d_winograd(const int64_t *q, const float *input, const float *u,
                           const float *bias, const float *residual, float *output,
                           const cuvil_microkernels *mk, void *exec) {
  const int small = (q[CUVIL_CONV_FLAGS] & CUVIL_FLAG_WINOGRAD2) != 0;
  const int64_t side = small ? 2 : 4;
  const int64_t tiles_y = (q[CUVIL_CONV_OH] + side - 1) / side, tiles_x = (q[CUVIL_CONV_OW] + side - 1) / side;
  wino_job job = {.q = q, .input = input, .u = u, .bias = bias, .residual = residual,
                  .output = output, .mk = mk, .exec = exec, .side = side,
                  .xi = (side + 2) * (side + 2), .tiles = q[CUVIL_CONV_N] * tiles_y * tiles_x};
  if (job.tiles == 0 || q[CUVIL_CONV_COUT] == 0)
    return;
  /* Few tiles (a 14x14 image has 16): the half-width kernels when they
   * leave at least a quarter fewer lanes empty. */
  if (mk->half && ((job.tiles + mk->half->nr - 1) / mk->half->nr * mk->half->nr) * 4 <=
                      ((job.tiles + mk->nr - 1) / mk->nr * mk->nr) * 3)
    job.mk = mk = mk->half;
  job.transform_input = small ? mk->wino2_input : mk->wino_input;
  job.transform_output = small ? mk->wino2_output : mk->wino_output;
  const int64_t nr = mk->nr, xis = job.xi;
  /* M gets what the scratch has left after V: whole MR-row panels. When
   * there are too few blocks of tiles to keep the threads busy, the output
   * channels are split too; each item transforms its tiles' input again. */
  int64_t left = (int64_t)(CUVIL_THREAD_SCRATCH_BYTES / sizeof(float)) - xis * (KCW * nr + XI_PAD);
  int64_t mcb = (left - xis * XI_PAD) / (xis * nr) / CUVIL_MR * CUVIL_MR;
  int64_t cout8 = (q[CUVIL_CONV_COUT] + CUVIL_MR - 1) / CUVIL_MR * CUVIL_MR;
  int64_t blocks = (job.tiles + nr - 1) / nr, threads = exec ? cuvil_thread_pool_size(exec) : 1;
  int64_t splits = 1;
  while (blocks * splits < threads && cout8 / (2 * splits) >= 4 * CUVIL_MR)
    splits *= 2;
  int64_t per_split = (cout8 / CUVIL_MR + splits - 1) / splits * CUVIL_MR;
  job.mcb = mcb < per_split ? mcb : per_split;
  job.co_blocks = (q[CUVIL_CONV_COUT] + job.mcb - 1) / job.mcb;
  int64_t items = blocks * job.co_blocks;
  int64_t work = job.tiles * xis * q[CUVIL_CONV_C] * q[CUVIL_CONV_COUT];
  cuvil_run_items(exec, items, work, wino_items, &job, &job.scratch);
}
