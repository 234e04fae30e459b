/*===- aarch64_driver.c - The aarch64 runtime under qemu-user -------------===*
 *
 *   runtime_driver LIBFAKE_MODEL_A.so LIBFAKE_MODEL_B.so LIBFAKE_MODEL_DYN.so
 * Loads the aarch64 builds of fake models A, B and dyn with dlopen and
 * checks the ABI versions, results, validation messages, the thread pool's
 * split, the CPU feature refusal and a dynamic dimension. Prints each
 * failed check; exits 1 if any failed.
 *
 *===----------------------------------------------------------------------===*/
#define _GNU_SOURCE 1
#include "cuvil/runtime.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define CHECK(condition)                                                                      \
  do {                                                                                        \
    if (!(condition)) {                                                                       \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #condition);           \
      ++failures;                                                                             \
    }                                                                                         \
  } while (0)

typedef struct api {
  void *handle;
  uint32_t (*abi_version)(void);
  uint32_t (*model_abi_version)(void);
  const char *(*last_error)(void);
  void (*options_init)(cuvil_options *);
  cuvil_status (*create)(const cuvil_options *, cuvil_model **);
  void (*destroy)(cuvil_model *);
  int32_t (*num_inputs)(const cuvil_model *);
  cuvil_status (*run)(cuvil_model *, const cuvil_tensor *, int32_t, cuvil_tensor *, int32_t);
} api;

static int load(const char *path, api *out) {
  out->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!out->handle) {
    fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
    return 0;
  }
  /* POSIX dlsym returns void *; the cast through memcpy keeps -Wpedantic quiet. */
#define BIND(field, symbol)                                                                   \
  do {                                                                                        \
    void *address = dlsym(out->handle, symbol);                                               \
    if (!address) {                                                                           \
      fprintf(stderr, "dlsym %s\n", symbol);                                                  \
      return 0;                                                                               \
    }                                                                                         \
    memcpy(&out->field, &address, sizeof(address));                                          \
  } while (0)
  BIND(abi_version, "cuvil_abi_version");
  BIND(model_abi_version, "cuvil_model_abi_version");
  BIND(last_error, "cuvil_last_error");
  BIND(options_init, "cuvil_options_init");
  BIND(create, "cuvil_model_create");
  BIND(destroy, "cuvil_model_destroy");
  BIND(num_inputs, "cuvil_model_num_inputs");
  BIND(run, "cuvil_model_run");
#undef BIND
  return 1;
}

static cuvil_model *make(api *lib, int32_t threads) {
  cuvil_options options;
  lib->options_init(&options);
  options.num_threads = threads;
  cuvil_model *model = NULL;
  if (lib->create(&options, &model) != CUVIL_OK) {
    fprintf(stderr, "create: %s\n", lib->last_error());
    ++failures;
    return NULL;
  }
  return model;
}

static void check_model_a(api *lib) {
  cuvil_model *model = make(lib, 4);
  if (!model)
    return;
  CHECK(lib->num_inputs(model) == 2);
  float x[6] = {1, 2, 3, 4, 5, 6}, y[6] = {0};
  int64_t k[1] = {10}, x_shape[2] = {2, 3}, k_shape[1] = {1}, y_shape[2] = {0, 0};
  cuvil_tensor inputs[2] = {{x, sizeof(x), CUVIL_DTYPE_F32, 2, x_shape},
                            {k, sizeof(k), CUVIL_DTYPE_I64, 1, k_shape}};
  cuvil_tensor outputs[1] = {{y, sizeof(y), CUVIL_DTYPE_F32, 2, y_shape}};
  CHECK(lib->run(model, inputs, 2, outputs, 1) == CUVIL_OK);
  for (int i = 0; i < 6; ++i)
    CHECK(y[i] == x[i] + 10.0f);
  CHECK(y_shape[0] == 2 && y_shape[1] == 3);

  x_shape[0] = 409;
  CHECK(lib->run(model, inputs, 2, outputs, 1) == CUVIL_ERR_SHAPE);
  CHECK(strcmp(lib->last_error(), "input 'x' dim 0: expected 2, got 409") == 0);
  CHECK(lib->run(model, inputs, 1, outputs, 1) == CUVIL_ERR_COUNT);
  CHECK(strcmp(lib->last_error(), "model 'fake_a': expected 2 inputs, got 1") == 0);
  lib->destroy(model);

  setenv("CUVIL_TEST_HIDE_CPU_FEATURES", "neon", 1);
  cuvil_model *refused = NULL;
  CHECK(lib->create(NULL, &refused) == CUVIL_ERR_UNSUPPORTED_CPU);
  CHECK(refused == NULL);
  CHECK(strstr(lib->last_error(), "compiled for aarch64 CPU 'generic'") != NULL);
  CHECK(strstr(lib->last_error(), "neon (hidden by CUVIL_TEST_HIDE_CPU_FEATURES)") != NULL);
  unsetenv("CUVIL_TEST_HIDE_CPU_FEATURES");
}

static void check_model_b(api *lib) {
  for (int32_t threads = 1; threads <= 8; threads *= 2) {
    cuvil_model *model = make(lib, threads);
    if (!model)
      return;
    int32_t a[37], doubled[37], blocks = -1;
    int64_t a_shape[1] = {37}, doubled_shape[1] = {0};
    for (int i = 0; i < 37; ++i)
      a[i] = i * threads;
    cuvil_tensor inputs[1] = {{a, sizeof(a), CUVIL_DTYPE_I32, 1, a_shape}};
    cuvil_tensor outputs[2] = {{doubled, sizeof(doubled), CUVIL_DTYPE_I32, 1, doubled_shape},
                               {&blocks, sizeof(blocks), CUVIL_DTYPE_I32, 0, NULL}};
    CHECK(lib->run(model, inputs, 1, outputs, 2) == CUVIL_OK);
    for (int i = 0; i < 37; ++i)
      CHECK(doubled[i] == 2 * a[i]);
    CHECK(blocks == threads);
    a[3] = -1;
    CHECK(lib->run(model, inputs, 1, outputs, 2) == CUVIL_ERR_MODEL);
    CHECK(strcmp(lib->last_error(), "model 'fake_b' failed: input 'a' must not be negative") ==
          0);
    lib->destroy(model);
  }
}

/* x f32 [-1, 3] -> y = k[0] x, seen = the shapes the entry got. */
static void check_model_dyn(api *lib) {
  cuvil_model *model = make(lib, 2);
  if (!model)
    return;
  float x[12], y[12];
  int64_t k[2] = {3, 0}, seen[4] = {0};
  int64_t x_shape[2] = {4, 3}, k_shape[1] = {2}, y_shape[2] = {4, 0}, seen_shape[1] = {0};
  for (int i = 0; i < 12; ++i)
    x[i] = (float)i;
  cuvil_tensor inputs[2] = {{x, sizeof(x), CUVIL_DTYPE_F32, 2, x_shape},
                            {k, sizeof(k), CUVIL_DTYPE_I64, 1, k_shape}};
  cuvil_tensor outputs[2] = {{y, sizeof(y), CUVIL_DTYPE_F32, 2, y_shape},
                             {seen, sizeof(seen), CUVIL_DTYPE_I64, 1, seen_shape}};
  CHECK(lib->run(model, inputs, 2, outputs, 2) == CUVIL_OK);
  for (int i = 0; i < 12; ++i)
    CHECK(y[i] == 3.0f * x[i]);
  CHECK(seen[0] == 4 && seen[1] == 3 && seen[2] == 4 && seen[3] == 3);
  CHECK(y_shape[0] == 4 && y_shape[1] == 3);
  x_shape[0] = 2;
  y_shape[0] = 2;
  CHECK(lib->run(model, inputs, 2, outputs, 2) == CUVIL_OK);
  CHECK(seen[0] == 2 && seen[2] == 2);
  x_shape[1] = 4;
  CHECK(lib->run(model, inputs, 2, outputs, 2) == CUVIL_ERR_SHAPE);
  CHECK(strcmp(lib->last_error(), "input 'x' dim 1: expected 3, got 4") == 0);
  lib->destroy(model);
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s LIBFAKE_MODEL_A.so LIBFAKE_MODEL_B.so LIBFAKE_MODEL_DYN.so\n",
            argv[0]);
    return 2;
  }
  api a, b, d;
  if (!load(argv[1], &a) || !load(argv[2], &b) || !load(argv[3], &d))
    return 1;
  CHECK(a.abi_version() == CUVIL_ABI_VERSION);
  CHECK(a.model_abi_version() == CUVIL_MODEL_ABI_VERSION);
  check_model_a(&a);
  check_model_b(&b);
  check_model_dyn(&d);
  dlclose(a.handle);
  dlclose(b.handle);
  dlclose(d.handle);
  if (failures) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("aarch64 runtime: all checks passed\n");
  return 0;
}
