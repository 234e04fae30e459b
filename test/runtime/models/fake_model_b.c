/*===- fake_model_b.c - A second fake model, with failures ---------------===*
 *
 * Model "fake_b": a i32 [37] -> doubled i32 [37] (= 2 * a) and blocks i32
 * (rank 0: how many blocks cuvil_rt_parallel_for split the 37 elements
 * into). Checks in the arena that every element was visited exactly once.
 * Failures, to exercise the runtime's message mapping:
 *   1  a negative element ("input 'a' must not be negative");
 *   2  the hold below timed out;
 *   3  parallel_for missed or repeated an element;
 *   7  a[0] == 12345, a code with no message.
 * Hold: with a[1] == 777 the entry sets doubled[0] = 1 and waits until the
 * caller sets a[2] != 0, so a test can keep a call running on purpose.
 *
 *===----------------------------------------------------------------------===*/
#define _POSIX_C_SOURCE 200809L /* clock_gettime under -std=c11 */
#include "cuvil/model_abi.h"
#include "cuvil/runtime.h"

#include <stdint.h>
#include <string.h>
#include <time.h>

enum { kLength = 37, kHoldMarker = 777, kNoMessageMarker = 12345 };

typedef struct double_closure {
  const int32_t *a;
  int32_t *doubled;
  int32_t *visits;
  int32_t blocks; /* updated atomically */
} double_closure;

static void double_block(void *closure, int64_t begin, int64_t end) {
  double_closure *c = closure;
  __atomic_fetch_add(&c->blocks, 1, __ATOMIC_RELAXED);
  for (int64_t i = begin; i < end; ++i) {
    c->doubled[i] = 2 * c->a[i];
    ++c->visits[i];
  }
}

static double seconds_now(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)now.tv_sec + 1e-9 * (double)now.tv_nsec;
}

/* Keeps the call running until the caller releases it (or 10 s pass). */
static int32_t hold(const int32_t *a, int32_t *doubled) {
  __atomic_store_n(&doubled[0], 1, __ATOMIC_RELEASE);
  double deadline = seconds_now() + 10.0;
  while (__atomic_load_n(&a[2], __ATOMIC_ACQUIRE) == 0)
    if (seconds_now() > deadline)
      return 2;
  return 0;
}

static int32_t fake_b_entry(void *const *inputs, const int64_t *const *input_shapes,
                             void *const *outputs, const int64_t *const *output_shapes, void *arena,
                             void *exec) {
  (void)input_shapes; /* static shapes */
  (void)output_shapes;
  const int32_t *a = inputs[0];
  int32_t *doubled = outputs[0];
  if (a[1] == kHoldMarker)
    return hold(a, doubled);
  if (a[0] == kNoMessageMarker)
    return 7;
  for (int i = 0; i < kLength; ++i)
    if (a[i] < 0)
      return 1;
  double_closure closure = {a, doubled, arena, 0};
  memset(arena, 0, sizeof(int32_t) * kLength);
  cuvil_rt_parallel_for(exec, kLength, double_block, &closure);
  for (int i = 0; i < kLength; ++i)
    if (closure.visits[i] != 1)
      return 3;
  *(int32_t *)outputs[1] = closure.blocks;
  return 0;
}

static const int64_t kAShape[] = {kLength};
static const cuvil_rt_tensor_desc kInputs[] = {{"a", CUVIL_DTYPE_I32, 1, kAShape}};
static const cuvil_rt_tensor_desc kOutputs[] = {
    {"doubled", CUVIL_DTYPE_I32, 1, kAShape},
    {"blocks", CUVIL_DTYPE_I32, 0, NULL},
};
static const char *const kFailures[] = {
    "input 'a' must not be negative",
    "the hold was not released within 10 s",
    "parallel_for did not visit every element exactly once",
};

const cuvil_rt_model_desc cuvil_rt_model = {
    .abi_version = CUVIL_RT_MODEL_ABI_VERSION,
    .model_name = "fake_b",
#if defined(__x86_64__)
    .target = "x86_64",
#else
    .target = "aarch64",
#endif
    .device = "generic",
    .required_features = NULL,
    .num_required_features = 0,
    .num_inputs = 1,
    .num_outputs = 2,
    .inputs = kInputs,
    .outputs = kOutputs,
    .arena_bytes = sizeof(int32_t) * kLength,
    .entry = fake_b_entry,
    .failure_messages = kFailures,
    .num_failure_messages = 3,
};
