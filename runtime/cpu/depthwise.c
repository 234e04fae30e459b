/*===- runtime/cpu/depthwise.c - Depthwise convolution ---------------------===*
 *
 * cuvil_rt_depthwise_conv2d_f32: plane by plane on the micro-kernels' grid,
 * or a vector of channels at a time for small planes.
 *
 *===----------------------------------------------------------------------===*/
#include "depthwise.h"
#include "schedule.h"

typedef struct depthwise_job {
  cuvil_depthwise_args args;
  const cuvil_microkernels *mk;
  void *exec;
  float *scratch;          /* when running without a pool */
  int lanes;               /* units are blocks of vl channels (depthwise_lanes) */
  int64_t blocks_per_image;
} depthwise_job;

/* Channels go a vector at a time (a lane each) where a plane's output rows
 * are shorter than a vector, so that the plane's own rows would waste
 * lanes (7x7 and 14x14 outputs; longer rows are computed a row of vectors
 * at a time, better), and its input is at most this many pixels (the
 * interleaved block stays in L2). */
enum { DW_LANES_MAX_PIXELS = 1024 };

static void depthwise_units(void *closure, int64_t begin, int64_t end) {
  const depthwise_job *job = closure;
  float *scratch = job->scratch ? job->scratch : cuvil_thread_pool_scratch(job->exec);
  const int64_t c = job->args.q[CUVIL_CONV_C];
  for (int64_t u = begin; u < end; ++u) {
    if (job->lanes)
      job->mk->depthwise_lanes(&job->args,
                               u / job->blocks_per_image * c +
                                   u % job->blocks_per_image * job->mk->vl,
                               scratch);
    else
      job->mk->depthwise(&job->args, u, scratch);
  }
}

void cuvil_rt_depthwise_conv2d_f32(const int64_t *q, const float *input, const float *weights,
                                   const float *bias, const float *residual, float *output) {
  depthwise_job job = {.args = {q, input, weights, bias, residual, output, 0},
                       .mk = cuvil_microkernels_best(), .exec = cuvil_rt_current_exec};
  const int64_t vl = job.mk->vl;
  const int64_t block_floats =
      ((q[CUVIL_CONV_H] + 2 * q[CUVIL_CONV_PH]) * (q[CUVIL_CONV_W] + 2 * q[CUVIL_CONV_PW]) + q[CUVIL_CONV_OH] * q[CUVIL_CONV_OW]) * vl;
  job.lanes = q[CUVIL_CONV_COUT] == q[CUVIL_CONV_C] && q[CUVIL_CONV_KH] * q[CUVIL_CONV_KW] <= 64 &&
              q[CUVIL_CONV_OW] < vl && q[CUVIL_CONV_H] * q[CUVIL_CONV_W] <= DW_LANES_MAX_PIXELS &&
              block_floats * (int64_t)sizeof(float) <= (int64_t)CUVIL_THREAD_SCRATCH_BYTES;
  job.blocks_per_image = (q[CUVIL_CONV_C] + vl - 1) / vl;
  int64_t units = q[CUVIL_CONV_N] * (job.lanes ? job.blocks_per_image : q[CUVIL_CONV_COUT]);
  int64_t work = q[CUVIL_CONV_N] * q[CUVIL_CONV_COUT] * q[CUVIL_CONV_OH] * q[CUVIL_CONV_OW] * q[CUVIL_CONV_KH] * q[CUVIL_CONV_KW];
  cuvil_run_items(job.exec, units, work, depthwise_units, &job, &job.scratch);
}

void cuvil_depthwise_run_planes(const cuvil_depthwise_args *args, int64_t planes, int64_t work) {
  depthwise_job job = {.args = *args, .mk = cuvil_microkernels_best(),
                       .exec = cuvil_rt_current_exec};
  cuvil_run_items(job.exec, planes, work, depthwise_units, &job, &job.scratch);
}
