/*===- fake_model_c.c - A model this CPU cannot run ----------------------===*
 *
 * Model "fake_c" (y = x, f32 [1]) requires a real feature that a test
 * machine may or may not have (avx512f / sve) and one no CPU has
 * ("cuvil-test-feature"): creating it must fail with
 * CUVIL_ERR_UNSUPPORTED_CPU, never run.
 *
 *===----------------------------------------------------------------------===*/
#include "cuvil/model_abi.h"
#include "cuvil/runtime.h"

#include <string.h>

static int32_t fake_c_entry(void *const *inputs, const int64_t *const *input_shapes,
                             void *const *outputs, const int64_t *const *output_shapes, void *arena,
                             void *exec) {
  (void)input_shapes;
  (void)output_shapes;
  (void)arena;
  (void)exec;
  memcpy(outputs[0], inputs[0], sizeof(float));
  return 0;
}

static const int64_t kShape[] = {1};
static const cuvil_rt_tensor_desc kInputs[] = {{"x", CUVIL_DTYPE_F32, 1, kShape}};
static const cuvil_rt_tensor_desc kOutputs[] = {{"y", CUVIL_DTYPE_F32, 1, kShape}};
#if defined(__x86_64__)
static const char *const kFeatures[] = {"avx512f", "cuvil-test-feature"};
#define FAKE_TARGET "x86_64"
#define FAKE_CPU "sapphirerapids"
#else
static const char *const kFeatures[] = {"sve", "cuvil-test-feature"};
#define FAKE_TARGET "aarch64"
#define FAKE_CPU "neoverse-v1"
#endif

const cuvil_rt_model_desc cuvil_rt_model = {
    .abi_version = CUVIL_RT_MODEL_ABI_VERSION,
    .model_name = "fake_c",
    .target = FAKE_TARGET,
    .device = FAKE_CPU,
    .required_features = kFeatures,
    .num_required_features = 2,
    .num_inputs = 1,
    .num_outputs = 1,
    .inputs = kInputs,
    .outputs = kOutputs,
    .arena_bytes = 0,
    .entry = fake_c_entry,
    .failure_messages = NULL,
    .num_failure_messages = 0,
};
