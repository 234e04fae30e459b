/*===- runtime/core/internal.h - Shared by the runtime's sources -----------===*
 *
 * Every runtime source includes this first. The sources are compiled with
 * -fvisibility=hidden; the pragmas give the public API (runtime.h) default
 * visibility and keep the generated-code contract (model_abi.h) hidden even
 * for declarations, so references to cuvil_rt_model bind inside the library.
 *
 *===----------------------------------------------------------------------===*/
#ifndef CUVIL_RUNTIME_INTERNAL_H
#define CUVIL_RUNTIME_INTERNAL_H

/* pthread_setname_np, syscall, getauxval: the sources are strict C11. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#pragma GCC visibility push(default)
#include "cuvil/runtime.h"
#pragma GCC visibility pop

#pragma GCC visibility push(hidden)
#include "cuvil/model_abi.h"

#ifdef __cplusplus
extern "C" { /* the runtime's own tests are C++ */
#endif

/*--- Thread pool (thread_pool.c) -------------------------------------------*/

/* The threads of one instance: num_threads - 1 workers plus the thread that
 * calls cuvil_model_run. A pointer to it is the `exec` handed to the entry. */
typedef struct cuvil_thread_pool cuvil_thread_pool;

/* Starts num_threads - 1 workers (num_threads >= 1). Returns NULL and sets
 * *error_number (an errno value) on failure. */
cuvil_thread_pool *cuvil_thread_pool_create(int32_t num_threads, int *error_number);
/* Stops and joins the workers. No parallel_for may be running on it. */
void cuvil_thread_pool_destroy(cuvil_thread_pool *pool);
/* The threads a parallel_for started here would use: the pool's, or 1
 * inside a parallel_for body (nested ones run inline). */
int32_t cuvil_thread_pool_size(const cuvil_thread_pool *pool);
/* Bytes of scratch memory each thread of a pool owns (64-byte aligned). */
#define CUVIL_THREAD_SCRATCH_BYTES (2048u * 1024u)
/* The calling thread's scratch: valid inside a parallel_for body on `pool`
 * (or on the caller, outside one). NULL when pool is NULL. */
void *cuvil_thread_pool_scratch(cuvil_thread_pool *pool);
/* The thread pool of the model call running on this thread (set by
 * cuvil_model_run around the entry; NULL: run inline). Kernels find their
 * threads here, since the generated code does not pass them. */
extern _Thread_local void *cuvil_rt_current_exec;

/*--- What a device backend tells the C API (api.c) -------------------------*/

/* A growable text a backend appends its account of a run to. */
typedef struct cuvil_rt_text {
  char *data;
  size_t size, capacity;
  bool failed; /* an allocation failed: the text is incomplete */
} cuvil_rt_text;
void cuvil_rt_text_append(cuvil_rt_text *text, const char *bytes, size_t size);
__attribute__((format(printf, 2, 3))) void cuvil_rt_text_printf(cuvil_rt_text *text, const char *format, ...);

/* The NPU backend (runtime/npu) of the call running on this thread: a
 * failure it met (the C API returns CUVIL_ERR_MODEL with it; "" = none),
 * and where it appends its account of each segment it ran (a JSON object
 * per segment, comma-separated) when the instance records (NULL: not). */
#define CUVIL_RT_FAILURE_BYTES 512
extern _Thread_local char cuvil_rt_device_failure[CUVIL_RT_FAILURE_BYTES];
extern _Thread_local cuvil_rt_text *cuvil_rt_npu_record;

/*--- A backend that runs whole instances on a device (runtime/cuda) ---------*/

/* The C API drives such a backend through this table, which the backend
 * registers when the library is loaded (a constructor, and only in a
 * library with code for it): core/ never calls into a backend by name. */
typedef struct cuvil_rt_device_run {
  /* The checked copies of the run (api.c): pointers, byte sizes, shapes. */
  void *const *inputs;
  const uint64_t *input_bytes;
  const int64_t *const *input_shapes;
  void *const *outputs;
  const uint64_t *output_bytes;
  const int64_t *const *output_shapes;
  /* cuvil_model_run_device: the pointers are the device's, `stream` the
   * caller's (NULL: the instance's own). */
  bool device_pointers;
  void *stream;
} cuvil_rt_device_run;

typedef struct cuvil_rt_device_backend {
  /* Whether cuvil_rt_model.entry is CPU code an instance may run instead. */
  bool cpu_fallback;
  /* At create, after the description and CPU checks, for `option` (a
   * cuvil_device): CUVIL_OK with *state set (the instance runs on the
   * device) or NULL (it runs cuvil_rt_model.entry on the CPU; `message`
   * then says why, "" when the caller asked for the CPU); or a failed
   * status and the reason in `message` (without the model's name). */
  cuvil_status (*create)(const cuvil_rt_model_desc *desc, int32_t option, void **state,
                         char *message, size_t message_size);
  /* Frees everything of a state create returned. */
  void (*destroy)(void *state);
  /* cuvil_model_device's text for the instance. */
  const char *(*describe)(const void *state);
  /* One run of the instance: CUVIL_OK and the entry's return in *result,
   * or a failed status and the reason in `message`. */
  cuvil_status (*run)(void *state, const cuvil_rt_device_run *run, int32_t *result,
                      char *message, size_t message_size);
} cuvil_rt_device_backend;

/* Called once, by a backend's constructor. */
void cuvil_rt_register_device_backend(const cuvil_rt_device_backend *backend);
/* Bytes of one element of `dtype` (a cuvil_dtype); 0 for another value. */
size_t cuvil_rt_dtype_bytes(int32_t dtype);

/*--- CPU features (cpu_features.c) -----------------------------------------*/

/* Whether this CPU (and the OS) supports the LLVM feature `name`; false for
 * names this runtime does not know. Ignores CUVIL_TEST_HIDE_CPU_FEATURES. */
bool cuvil_cpu_detects_feature(const char *name);
/* Whether `name` is listed in CUVIL_TEST_HIDE_CPU_FEATURES. */
bool cuvil_cpu_feature_hidden_for_test(const char *name);
/* Whether this runtime knows how to detect the feature `name`. */
bool cuvil_cpu_feature_known(const char *name);
/* The CPU's own name where the hardware reports one ("" otherwise). */
void cuvil_cpu_describe(char *buffer, size_t buffer_size);
/* The architecture this runtime was built for: "x86_64" or "aarch64". */
const char *cuvil_runtime_target(void);

#ifdef __cplusplus
}
#endif

#pragma GCC visibility pop

#endif /* CUVIL_RUNTIME_INTERNAL_H */
