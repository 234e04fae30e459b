/*===- cuvil/model_abi.h - Between generated code and the runtime --------===*
 *
 * Internal: not installed, not exported. cuvil-export generates an object
 * file that defines the hidden symbol `cuvil_rt_model` (a cuvil_rt_model_desc)
 * and the entry function it points to; the runtime, linked into the same
 * libinference.so, implements the public API (runtime.h) on top of it.
 *
 *===----------------------------------------------------------------------===*/
#ifndef CUVIL_MODEL_ABI_H
#define CUVIL_MODEL_ABI_H

#include "cuvil/runtime.h" /* CUVIL_MODEL_ABI_VERSION, cuvil_dtype */

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version this header describes; the runtime refuses any other. */
#define CUVIL_RT_MODEL_ABI_VERSION CUVIL_MODEL_ABI_VERSION

typedef struct cuvil_rt_tensor_desc {
  const char *name;
  int32_t dtype;        /* a cuvil_dtype */
  int32_t rank;
  const int64_t *shape; /* rank sizes; -1: dynamic, the size of each run */
  /* NULL, or rank entries: the smallest and largest size of each dimension
   * (a static one's are its size). An input's run sizes are checked against
   * them; an output's maxima are the capacity a caller's buffer needs. */
  const int64_t *min_shape;
  const int64_t *max_shape;
  /* NULL, or rank entries: each dynamic dimension's symbol ("seq"), NULL or
   * "" for static ones. Inputs sharing a symbol must have equal sizes. */
  const char *const *symbols;
} cuvil_rt_tensor_desc;

/* The compiled function: reads inputs[i], writes outputs[i], uses `arena`
 * (arena_bytes, 64-byte aligned) for intermediates. input_shapes[i] and
 * output_shapes[i] are the shapes of this run (rank entries each; NULL for
 * rank 0), checked against the description: an input's are the caller's
 * sizes (a dynamic dimension any size within its bounds), an output's are
 * the described static sizes and, for each dynamic dimension, the capacity
 * the caller's buffer has along it. The entry may overwrite an output's
 * dynamic entries with the sizes the run produced (at most the capacity:
 * the output is laid out densely in that shape); those it leaves are the
 * output's sizes. Code for static shapes ignores them. Returns 0, or k > 0 when the model's k-th failure
 * message applies (an assertion in the model failed). `exec` is the
 * runtime's per-call context (threads), passed back to runtime helpers. */
typedef int32_t (*cuvil_rt_entry_fn)(void *const *inputs, const int64_t *const *input_shapes,
                                     void *const *outputs, const int64_t *const *output_shapes,
                                     void *arena, void *exec);

/* What a compiled model is, for any target. abi_version and model_name
 * come first in every version, so a runtime can name and refuse a
 * description of a version it does not know before reading further. */
typedef struct cuvil_rt_model_desc {
  uint32_t abi_version; /* CUVIL_RT_MODEL_ABI_VERSION */
  const char *model_name;
  const char *target;   /* the code's target: "x86_64", "aarch64", ... */
  /* The device the code was tuned for: a CPU ("sapphirerapids", "generic"),
   * or a GPU or NPU model on targets that have one. */
  const char *device;
  /* Features of the device the code needs, in the target's names (CPUs:
   * LLVM feature names without '+', "avx512f", "neon"); create refuses to
   * run on a device that lacks one. */
  const char *const *required_features;
  int32_t num_required_features;
  int32_t num_inputs;
  int32_t num_outputs;
  const cuvil_rt_tensor_desc *inputs;
  const cuvil_rt_tensor_desc *outputs;
  uint64_t arena_bytes; /* a run's working memory, whatever the dynamic sizes */
  cuvil_rt_entry_fn entry;
  /* Messages for the entry's non-zero returns: failure_messages[k - 1]. */
  const char *const *failure_messages;
  int32_t num_failure_messages;
} cuvil_rt_model_desc;

/* Defined by the generated code (hidden visibility). */
extern const cuvil_rt_model_desc cuvil_rt_model;

/* Runtime helpers the generated code may call (hidden visibility). */
/* Runs body(closure, begin, end) over [0, n) split across the call's threads
 * and returns when every block is done. Blocks are contiguous and differ in
 * size by at most one; the calling thread runs the first. A parallel_for
 * from inside a body (or with exec NULL) runs inline. */
void cuvil_rt_parallel_for(void *exec, int64_t n,
                           void (*body)(void *closure, int64_t begin, int64_t end),
                           void *closure);

/* cuvil_rt_parallel_for on the threads of the model call in progress on
 * this thread (the generated code's outlined loops; cuvil-parallelize-loops). */
/* Libraries compiled with --instrument: the sites' names (NUL-separated)
 * at the entry's start, then each kernel call between begin and end. */
void cuvil_rt_profile_sites(const char *table, int64_t count);
void cuvil_rt_profile_begin(int64_t site);
void cuvil_rt_profile_end(int64_t site);

/* Every library with model control flow: the arms' names (NUL-separated) at
 * the entry's start, then a call as each arm starts to run
 * (cuvil-count-branches; cuvil_model_branch_entry reads the counts). */
void cuvil_rt_branch_sites(const char *table, int64_t count);
void cuvil_rt_branch(int64_t site);

void cuvil_rt_parallel_for_current(int64_t n,
                                   void (*body)(void *closure, int64_t begin, int64_t end),
                                   void *closure);

/*--- CUDA (--target cuda, runtime/cuda/) -----------------------------------*/

/* A library with CUDA code also defines the hidden symbol
 * `cuvil_rt_cuda_model` (the runtime declares it weak: other libraries lack
 * it, and stay byte for byte what they were). */
#define CUVIL_RT_CUDA_ABI_VERSION 1u

enum { CUVIL_RT_CUDA_PTX = 0, CUVIL_RT_CUDA_CUBIN = 1 };

/* One compiled form of every kernel of the model. */
typedef struct cuvil_rt_cuda_image {
  int32_t kind;     /* CUVIL_RT_CUDA_PTX (NUL-terminated text) or _CUBIN (ELF) */
  int32_t sm;       /* the architecture: major * 10 + minor (80 = sm_80) */
  const void *data;
  uint64_t size;    /* bytes (PTX: without its NUL) */
} cuvil_rt_cuda_image;

typedef struct cuvil_rt_cuda_desc {
  uint32_t version; /* CUVIL_RT_CUDA_ABI_VERSION */
  /* 1 when cuvil_rt_model.entry is CPU code, run where no suitable device
   * is (--target x86_64,cuda); 0 (--target cuda): no device is an error. */
  int32_t cpu_fallback;
  /* The host code that launches the kernels, with cuvil_rt_entry_fn's
   * arguments: every data pointer it gets (inputs, outputs, arena) is a
   * device pointer; it touches no tensor data itself. */
  cuvil_rt_entry_fn entry;
  int32_t num_images;
  const cuvil_rt_cuda_image *images;
  /* The kernels' names, the same in every image; launches name a kernel by
   * its index here. */
  int32_t num_kernels;
  const char *const *kernel_names;
} cuvil_rt_cuda_desc;

extern const cuvil_rt_cuda_desc cuvil_rt_cuda_model;

/* Called by the CUDA entry, on the instance whose run is in progress on
 * this thread. A failure is recorded there (the run then returns
 * CUVIL_ERR_DEVICE with the driver's message) and later calls of the run do
 * nothing. */
/* Launches kernel `kernel` on the run's stream: params holds num_params
 * 8-byte slots, one per kernel parameter in order (pointers and 64-bit
 * integers whole; a narrower value in the slot's low bytes). */
void cuvil_rt_cuda_launch(int32_t kernel, int64_t grid_x, int64_t grid_y, int64_t grid_z,
                          int64_t block_x, int64_t block_y, int64_t block_z,
                          const int64_t *params, int32_t num_params);
/* The device copy of `bytes` bytes of the library's constant data at
 * `host` (weights), uploaded once per instance; NULL after a failure. */
void *cuvil_rt_cuda_global(const void *host, int64_t bytes);
/* The model's run-time checks run on the device: their status (an int32,
 * 0 or the failed check's number, as the CPU entry returns it) is at
 * `device_status` once the run's kernels are done; the runtime reads it
 * back, and the CUDA entry returns 0. */
void cuvil_rt_cuda_status(const void *device_status);
/* Copies `bytes` bytes at `device` to `host` once the kernels launched so
 * far are done: a scalar the host code needs (the condition of a branch or
 * loop that holds launches). Zeros after a failure. */
void cuvil_rt_cuda_read(const void *device, void *host, int64_t bytes);
/* Copies `bytes` bytes at `host` to `device` and waits for the copy: a
 * buffer a CPU runtime kernel (FFT, sort) wrote on the host for the
 * kernels after it. */
void cuvil_rt_cuda_write(const void *host, void *device, int64_t bytes);

/* The CPU kernels for the model's convolutions, pooling, linear layers and
 * matrix products (runtime/cpu/). `params` is a constant array the
 * compiler writes, laid out as cuvil/kernel_abi.h names it (CUVIL_CONV_*,
 * CUVIL_LINEAR_*, CUVIL_MATMUL_*; flags CUVIL_FLAG_*); weights arrive
 * packed in the layout the kernels read (A panels [ceil(rows/CUVIL_MR)][K]
 * [CUVIL_MR], per group); bias and residual are read only when the flags
 * say so. They use the threads of the call in progress on this thread. */
/* CUVIL_CONV_* params. With CUVIL_FLAG_WINOGRAD (3x3, stride 1, dilation
 * 1, groups 1) the weights are in the Winograd F(4x4, 3x3) domain instead
 * (F(2x2, 3x3)'s with CUVIL_FLAG_WINOGRAD2 too); with CUVIL_FLAG_PIXEL_ROWS
 * they are the B operand, [groups][ceil(Cout_g/CUVIL_B_PANEL)][K]
 * [CUVIL_B_PANEL]. */
void cuvil_rt_conv2d_f32(const int64_t *params, const float *input, const float *weights,
                         const float *bias, const float *residual, float *output);
/* The same params; weights [Cout][1][KH][KW] as PyTorch stores them. */
void cuvil_rt_depthwise_conv2d_f32(const int64_t *params, const float *input,
                                   const float *weights, const float *bias,
                                   const float *residual, float *output);
/* A 3x3 stride-1 padding-1 depthwise convolution (width of 16 or more, at
 * most 64 channels, C x W at most 65536) whose output only feeds a 1x1
 * stride-1 convolution, in bands of rows that stay in cache: params is the
 * depthwise params then the pointwise ones (CUVIL_CONV_NUM_PARAMS each);
 * the depthwise weights as PyTorch stores them, the pointwise ones packed
 * as for cuvil_rt_conv2d_f32 (no Winograd, no pixel rows); the residual,
 * if any, is the pointwise one's. */
void cuvil_rt_depthwise_pointwise_f32(const int64_t *params, const float *input,
                                      const float *dw_weights, const float *dw_bias,
                                      const float *pw_weights, const float *pw_bias,
                                      const float *residual, float *output);
/* A 1x1 stride-1 convolution (groups 1, no residual) whose output only
 * feeds a 3x3 padding-1 depthwise one (channel multiplier 1, stride 1 or 2,
 * no residual; output width 16 or more, even input width at stride 2;
 * C x W at most 32768, C the depthwise channels), in bands of rows that
 * stay in cache: params is the pointwise params then the depthwise ones
 * (CUVIL_CONV_NUM_PARAMS each); the pointwise weights packed as for
 * cuvil_rt_conv2d_f32 (no Winograd, no pixel rows), the depthwise ones as
 * PyTorch stores them. */
void cuvil_rt_pointwise_depthwise_f32(const int64_t *params, const float *input,
                                      const float *pw_weights, const float *pw_bias,
                                      const float *dw_weights, const float *dw_bias,
                                      float *output);
/* CUVIL_CONV_* params with Cout = groups = C, flags 0: max over each window
 * (padding never wins, NaN does), every window inside the padded input. */
void cuvil_rt_max_pool2d_f32(const int64_t *params, const float *input, float *output);
/* The same on quantized tensors' integers (ui8 and i8): the maximum of the
 * window's values (padding never wins). */
void cuvil_rt_max_pool2d_u8(const int64_t *params, const uint8_t *input, uint8_t *output);
void cuvil_rt_max_pool2d_s8(const int64_t *params, const int8_t *input, int8_t *output);
/* CUVIL_LINEAR_* params: y[M][N] = x[M][K] . W[N][K]^T; with
 * CUVIL_FLAG_PIXEL_ROWS (several rows) the weights are B panels
 * [ceil(N/CUVIL_B_PANEL)][K][CUVIL_B_PANEL]. */
void cuvil_rt_linear_f32(const int64_t *params, const float *x, const float *weights,
                         const float *bias, const float *residual, float *y);
/* CUVIL_MATMUL_* params: c[i][M][N] = a[i][M][K] . b[i][K][N], both at
 * run time; a batch stride of 0 broadcasts that operand. */
void cuvil_rt_matmul_f32(const int64_t *params, const float *a, const float *b, float *c);
/* int8 convolution and linear layers (CUVIL_QCONV_*, CUVIL_QLINEAR_*):
 * u8 x s8 with int32 sums and the requantize epilogue (or, with Y_FLOAT,
 * f32 outputs: the sums dequantized); the micro-kernel is
 * chosen at run time (AVX-512 VNNI, else portable C). */
void cuvil_rt_qconv2d_u8s8(const int64_t *params, const uint8_t *input, const int8_t *weights,
                           const int32_t *offset, const float *multiplier, uint8_t *workspace,
                           void *output);
void cuvil_rt_qlinear_u8s8(const int64_t *params, const uint8_t *x, const int8_t *weights,
                           const int32_t *offset, const float *multiplier, void *y);
/* The same with Y_FLOAT: f32 outputs (one declared output type per name). */
void cuvil_rt_qconv2d_u8s8_f32(const int64_t *params, const uint8_t *input, const int8_t *weights,
                               const int32_t *offset, const float *multiplier, uint8_t *workspace,
                               float *output);
void cuvil_rt_qlinear_u8s8_f32(const int64_t *params, const uint8_t *x, const int8_t *weights,
                               const int32_t *offset, const float *multiplier, float *y);
/* The convolution with pixels as GEMM rows (kernel_abi.h,
 * cuvil_qconv_rows_workspace_bytes): the same params and results. */
void cuvil_rt_qconv2d_u8s8_rows(const int64_t *params, const uint8_t *input, const int8_t *weights,
                                const int32_t *offset, const float *multiplier, uint8_t *workspace,
                                void *output);
void cuvil_rt_qconv2d_u8s8_rows_f32(const int64_t *params, const uint8_t *input,
                                    const int8_t *weights, const int32_t *offset,
                                    const float *multiplier, uint8_t *workspace, float *output);

#ifdef __cplusplus
}
#endif

#endif /* CUVIL_MODEL_ABI_H */
