/*===- fake_model_a.c - Hand-written stand-in for generated code ---------===*
 *
 * Model "fake_a": y = x + k[0], with x f32 [2, 3], k i64 [1], y f32 [2, 3].
 * Rows go through cuvil_rt_parallel_for and the sum is staged in the arena,
 * so two calls sharing one instance at the same time would mix their
 * results (what the busy guard prevents). Requires sse4.2 (x86-64) or neon
 * (aarch64): present on every test machine, and hideable by
 * CUVIL_TEST_HIDE_CPU_FEATURES.
 *
 *===----------------------------------------------------------------------===*/
#include "cuvil/model_abi.h"
#include "cuvil/runtime.h"

#include <stdint.h>
#include <string.h>

enum { kRows = 2, kColumns = 3 };

typedef struct add_rows_closure {
  const float *x;
  float offset;
  float *staged;
} add_rows_closure;

static void add_rows(void *closure, int64_t begin, int64_t end) {
  const add_rows_closure *c = closure;
  for (int64_t row = begin; row < end; ++row)
    for (int64_t column = 0; column < kColumns; ++column)
      c->staged[row * kColumns + column] = c->x[row * kColumns + column] + c->offset;
}

static int32_t fake_a_entry(void *const *inputs, const int64_t *const *input_shapes,
                             void *const *outputs, const int64_t *const *output_shapes, void *arena,
                             void *exec) {
  (void)input_shapes; /* static shapes */
  (void)output_shapes;
  if ((uintptr_t)arena % 64 != 0)
    return 1;
  add_rows_closure closure = {inputs[0], (float)*(const int64_t *)inputs[1], arena};
  cuvil_rt_parallel_for(exec, kRows, add_rows, &closure);
  memcpy(outputs[0], arena, sizeof(float) * kRows * kColumns);
  return 0;
}

static const int64_t kXShape[] = {kRows, kColumns};
static const int64_t kKShape[] = {1};
static const cuvil_rt_tensor_desc kInputs[] = {
    {"x", CUVIL_DTYPE_F32, 2, kXShape},
    {"k", CUVIL_DTYPE_I64, 1, kKShape},
};
static const cuvil_rt_tensor_desc kOutputs[] = {{"y", CUVIL_DTYPE_F32, 2, kXShape}};
#if defined(__x86_64__)
static const char *const kFeatures[] = {"sse4.2"};
#define FAKE_TARGET "x86_64"
#define FAKE_CPU "x86-64-v2"
#else
static const char *const kFeatures[] = {"neon"};
#define FAKE_TARGET "aarch64"
#define FAKE_CPU "generic"
#endif
static const char *const kFailures[] = {"the arena is not 64-byte aligned"};

const cuvil_rt_model_desc cuvil_rt_model = {
    .abi_version = CUVIL_RT_MODEL_ABI_VERSION,
    .model_name = "fake_a",
    .target = FAKE_TARGET,
    .device = FAKE_CPU,
    .required_features = kFeatures,
    .num_required_features = 1,
    .num_inputs = 2,
    .num_outputs = 1,
    .inputs = kInputs,
    .outputs = kOutputs,
    .arena_bytes = sizeof(float) * kRows * kColumns,
    .entry = fake_a_entry,
    .failure_messages = kFailures,
    .num_failure_messages = 1,
};
