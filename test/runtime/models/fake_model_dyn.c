/*===- fake_model_dyn.c - A model with dynamic dimensions ----------------===*
 *
 * Model "fake_dyn": x f32 [-1, 3] (rows dynamic), k i64 [2] -> y f32
 * [-1, 3] (y = k[0] * x, rows past x's zero) and seen i64 [4]: the shapes
 * the entry was given (x's rows and columns, y's rows and columns), so a
 * test sees what the runtime passes. Fails with 1 when y has room for
 * fewer rows than x has.
 *
 *===----------------------------------------------------------------------===*/
#include "cuvil/model_abi.h"
#include "cuvil/runtime.h"

#include <stdint.h>

static int32_t fake_dyn_entry(void *const *inputs, const int64_t *const *input_shapes,
                              void *const *outputs, const int64_t *const *output_shapes,
                              void *arena, void *exec) {
  (void)arena;
  (void)exec;
  const float *x = inputs[0];
  const int64_t *k = inputs[1];
  float *y = outputs[0];
  int64_t *seen = outputs[1];
  const int64_t rows = input_shapes[0][0], columns = input_shapes[0][1];
  const int64_t capacity = output_shapes[0][0];
  seen[0] = rows;
  seen[1] = columns;
  seen[2] = capacity;
  seen[3] = output_shapes[0][1];
  if (capacity < rows)
    return 1;
  for (int64_t i = 0; i < capacity * columns; ++i)
    y[i] = i < rows * columns ? (float)k[0] * x[i] : 0.0f;
  return 0;
}

static const int64_t kXShape[] = {-1, 3};
static const int64_t kKShape[] = {2};
static const int64_t kSeenShape[] = {4};
static const cuvil_rt_tensor_desc kInputs[] = {
    {"x", CUVIL_DTYPE_F32, 2, kXShape},
    {"k", CUVIL_DTYPE_I64, 1, kKShape},
};
static const cuvil_rt_tensor_desc kOutputs[] = {
    {"y", CUVIL_DTYPE_F32, 2, kXShape},
    {"seen", CUVIL_DTYPE_I64, 1, kSeenShape},
};
static const char *const kFailures[] = {"output 'y' has room for fewer rows than input 'x'"};

const cuvil_rt_model_desc cuvil_rt_model = {
    .abi_version = CUVIL_RT_MODEL_ABI_VERSION,
    .model_name = "fake_dyn",
#if defined(__x86_64__)
    .target = "x86_64",
#else
    .target = "aarch64",
#endif
    .device = "generic",
    .num_inputs = 2,
    .num_outputs = 2,
    .inputs = kInputs,
    .outputs = kOutputs,
    .entry = fake_dyn_entry,
    .failure_messages = kFailures,
    .num_failure_messages = 1,
};
