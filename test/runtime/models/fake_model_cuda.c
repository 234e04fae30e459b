/*===- fake_model_cuda.c - A fake model with CUDA code ---------------------===*
 *
 * Model "fake_cuda": x f32 [2, 3] -> y f32 [2, 3] = x + 1, and z f32 [-1]
 * (dynamic, no bounds) -> w f32 [-1] = z. Two entries that compute the
 * same: the CPU one (cuvil_rt_model.entry) and the CUDA one
 * (cuvil_rt_cuda_model.entry), which launches the stand-in driver's kernels
 * (test/runtime/fake_cuda): fake_copy x -> arena, fake_add arena + ones ->
 * y (ones: constant data, uploaded with cuvil_rt_cuda_global), fake_copy
 * z -> w. Images: PTX for sm_80 and a cubin for sm_90, in the stand-in's
 * format.
 *
 * Variants, by definitions on the command line:
 *   FAKE_CPU_FALLBACK=0   --target cuda: no CPU code (default 1)
 *   FAKE_MISSING_KERNEL   a third kernel name no image has
 *   FAKE_BAD_PTX          the PTX does not parse (the cubin is fine)
 *   FAKE_BOUNDED          z and w have bounds 0..512 (device buffers sized
 *                         at create; cuvil-run can allocate w)
 *
 *===----------------------------------------------------------------------===*/
#include "cuvil/model_abi.h"
#include "cuvil/runtime.h"

#include <stdint.h>
#include <string.h>

#ifndef FAKE_CPU_FALLBACK
#define FAKE_CPU_FALLBACK 1
#endif

static const float kOnes[6] = {1, 1, 1, 1, 1, 1};

/* w's size: z's (at most the caller's capacity, which the runtime gave). */
static void set_size(const int64_t *const *output_shapes, int64_t n) {
  if (n <= output_shapes[1][0])
    *(int64_t *)(uintptr_t)output_shapes[1] = n;
}

static int32_t cpu_entry(void *const *inputs, const int64_t *const *input_shapes,
                         void *const *outputs, const int64_t *const *output_shapes, void *arena,
                         void *exec) {
  (void)arena, (void)exec;
  const float *x = inputs[0];
  float *y = outputs[0];
  for (int i = 0; i < 6; ++i)
    y[i] = x[i] + kOnes[i];
  memcpy(outputs[1], inputs[1], (size_t)input_shapes[1][0] * sizeof(float));
  set_size(output_shapes, input_shapes[1][0]);
  return 0;
}

enum { kCopy = 0, kAdd = 1, kMissing = 2 };

static int64_t pointer(const void *p) { return (int64_t)(uintptr_t)p; }

static int32_t cuda_entry(void *const *inputs, const int64_t *const *input_shapes,
                          void *const *outputs, const int64_t *const *output_shapes, void *arena,
                          void *exec) {
  (void)exec;
  void *ones = cuvil_rt_cuda_global(kOnes, sizeof kOnes);
  int64_t copy[3] = {pointer(inputs[0]), pointer(arena), 6 * sizeof(float)};
  cuvil_rt_cuda_launch(kCopy, 1, 1, 1, 6, 1, 1, copy, 3);
  int64_t add[4] = {pointer(arena), pointer(ones), pointer(outputs[0]), 6};
  cuvil_rt_cuda_launch(kAdd, 1, 1, 1, 6, 1, 1, add, 4);
  int64_t n = input_shapes[1][0];
  if (n > 0) {
    int64_t copy_z[3] = {pointer(inputs[1]), pointer(outputs[1]), n * (int64_t)sizeof(float)};
    cuvil_rt_cuda_launch(kCopy, (n + 255) / 256, 1, 1, 256, 1, 1, copy_z, 3);
  }
  set_size(output_shapes, n);
  return 0;
}

static const int64_t kShape[2] = {2, 3};
static const int64_t kDynamic[1] = {-1};
#ifdef FAKE_BOUNDED
static const int64_t kMin[1] = {0}, kMax[1] = {512};
#define BOUNDS kMin, kMax
#else
#define BOUNDS NULL, NULL
#endif
static const cuvil_rt_tensor_desc kInputs[2] = {
    {"x", CUVIL_DTYPE_F32, 2, kShape, NULL, NULL, NULL},
    {"z", CUVIL_DTYPE_F32, 1, kDynamic, BOUNDS, NULL},
};
static const cuvil_rt_tensor_desc kOutputs[2] = {
    {"y", CUVIL_DTYPE_F32, 2, kShape, NULL, NULL, NULL},
    {"w", CUVIL_DTYPE_F32, 1, kDynamic, BOUNDS, NULL},
};

const cuvil_rt_model_desc cuvil_rt_model = {
    .abi_version = CUVIL_RT_MODEL_ABI_VERSION,
    .model_name = "fake_cuda",
    .target = FAKE_CPU_FALLBACK ? "x86_64,cuda" : "cuda",
    .device = "generic",
    .required_features = NULL,
    .num_required_features = 0,
    .num_inputs = 2,
    .num_outputs = 2,
    .inputs = kInputs,
    .outputs = kOutputs,
    .arena_bytes = 6 * sizeof(float),
    .entry = cpu_entry,
    .failure_messages = NULL,
    .num_failure_messages = 0,
};

#define KERNELS                                                                                \
  ".visible .entry fake_copy(.param .u64 p0, .param .u64 p1, .param .u64 p2)\n{ ret; }\n"      \
  ".visible .entry fake_add(.param .u64 p0, .param .u64 p1, .param .u64 p2, .param .u64 p3)\n" \
  "{ ret; }\n"
#ifdef FAKE_BAD_PTX
static const char kPtx[] = "this is not PTX\n" KERNELS;
#else
static const char kPtx[] = ".version 8.0\n.target sm_80\n.address_size 64\n" KERNELS;
#endif
static const char kCubin[] = "\x7f"
                             "ELF fake cubin sm_90\n" KERNELS;

static const cuvil_rt_cuda_image kImages[2] = {
    {CUVIL_RT_CUDA_PTX, 80, kPtx, sizeof kPtx - 1},
    {CUVIL_RT_CUDA_CUBIN, 90, kCubin, sizeof kCubin - 1},
};

static const char *const kKernelNames[] = {"fake_copy", "fake_add", "fake_missing"};

const cuvil_rt_cuda_desc cuvil_rt_cuda_model = {
    .version = CUVIL_RT_CUDA_ABI_VERSION,
    .cpu_fallback = FAKE_CPU_FALLBACK,
    .entry = cuda_entry,
    .num_images = 2,
    .images = kImages,
#ifdef FAKE_MISSING_KERNEL
    .num_kernels = 3,
#else
    .num_kernels = 2,
#endif
    .kernel_names = kKernelNames,
};
