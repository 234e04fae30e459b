/*===- runtime/core/api.c - The public C API (cuvil/runtime.h) -------------===*
 *
 * Implements runtime.h on top of the generated model description
 * (cuvil_rt_model). Every call validates what the caller passed before it
 * touches anything, and reports failures as a status plus a per-thread
 * message; nothing here aborts or prints.
 *
 *===----------------------------------------------------------------------===*/
#include "internal.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

/*--- Per-thread error messages ---------------------------------------------*/

/* Thread-local so concurrent callers (and instances) never see each
 * other's messages; every call that can fail overwrites it ("" on success). */
static _Thread_local char last_error_message[1024];

__attribute__((format(printf, 2, 3))) static cuvil_status fail(cuvil_status status,
                                                                const char *format, ...) {
  va_list arguments;
  va_start(arguments, format);
  vsnprintf(last_error_message, sizeof(last_error_message), format, arguments);
  va_end(arguments);
  return status;
}

static cuvil_status succeed(void) {
  last_error_message[0] = '\0';
  return CUVIL_OK;
}

const char *cuvil_last_error(void) { return last_error_message; }

uint32_t cuvil_abi_version(void) { return CUVIL_ABI_VERSION; }

/* The description's, not this runtime's: a caller can tell a library it
 * cannot run before creating an instance (create refuses it too). */
uint32_t cuvil_model_abi_version(void) { return cuvil_rt_model.abi_version; }

/*--- Element types ----------------------------------------------------------*/

static size_t dtype_size(int32_t dtype) {
  switch (dtype) {
  case CUVIL_DTYPE_F64:
  case CUVIL_DTYPE_I64:
  case CUVIL_DTYPE_C64:
    return 8;
  case CUVIL_DTYPE_C128:
    return 16;
  case CUVIL_DTYPE_F32:
  case CUVIL_DTYPE_I32:
    return 4;
  case CUVIL_DTYPE_F16:
  case CUVIL_DTYPE_BF16:
  case CUVIL_DTYPE_I16:
    return 2;
  case CUVIL_DTYPE_I8:
  case CUVIL_DTYPE_U8:
  case CUVIL_DTYPE_BOOL:
    return 1;
  }
  return 0; /* not a cuvil_dtype */
}

size_t cuvil_rt_dtype_bytes(int32_t dtype) { return dtype_size(dtype); }

/* Names as the enum spells them. `scratch` holds the text for values that
 * are not a cuvil_dtype. */
static const char *dtype_name(int32_t dtype, char scratch[24]) {
  switch (dtype) {
  case CUVIL_DTYPE_F32: return "f32";
  case CUVIL_DTYPE_F64: return "f64";
  case CUVIL_DTYPE_F16: return "f16";
  case CUVIL_DTYPE_BF16: return "bf16";
  case CUVIL_DTYPE_I8: return "i8";
  case CUVIL_DTYPE_U8: return "u8";
  case CUVIL_DTYPE_I16: return "i16";
  case CUVIL_DTYPE_I32: return "i32";
  case CUVIL_DTYPE_I64: return "i64";
  case CUVIL_DTYPE_BOOL: return "bool";
  case CUVIL_DTYPE_C64: return "c64";
  case CUVIL_DTYPE_C128: return "c128";
  }
  snprintf(scratch, 24, "dtype(%d)", (int)dtype);
  return scratch;
}

/* "[2, 3]" into buffer (truncated with "..." when long). */
static const char *format_shape(const int64_t *shape, int32_t rank, char *buffer, size_t size) {
  size_t used = (size_t)snprintf(buffer, size, "[");
  for (int32_t i = 0; i < rank && used < size; ++i)
    used += (size_t)snprintf(buffer + used, size - used, i ? ", %lld" : "%lld", (long long)shape[i]);
  if (used < size)
    snprintf(buffer + used, size - used, "]");
  else if (size >= 4)
    memcpy(buffer + size - 4, "...", 4);
  return buffer;
}

/*--- Instances --------------------------------------------------------------*/

/* "cuvilive" / "cuvldead" in ASCII: tells a live instance from a destroyed one or a
 * stray pointer, as far as the memory still reads (a sanitizer catches the
 * rest). */
#define LIVE_MAGIC UINT64_C(0x6576696c69767563)
#define DEAD_MAGIC UINT64_C(0x646165646c767563)

struct cuvil_model {
  uint64_t magic;
  const cuvil_rt_model_desc *desc;
  /* 1 while a cuvil_model_run owns the instance: a second concurrent call
   * gets CUVIL_ERR_BUSY instead of sharing the arena and the pool. */
  atomic_int running;
  void *arena;
  cuvil_thread_pool *pool;
  /* One run's checked copy of what the caller passed: byte sizes, the
   * pointer and shape arrays handed to the entry (shapes point into
   * shape_storage), all sized at create so a run never allocates. They
   * belong to the call holding `running`. */
  uint64_t *input_bytes;
  uint64_t *output_bytes;
  void **input_data;
  void **output_data;
  const int64_t **input_shapes;
  const int64_t **output_shapes;
  int64_t *shape_storage;
  /* Per input dimension (the inputs' entries of shape_storage, in order):
   * the entry of the first dynamic input dimension with the same symbol,
   * which a run's size must equal; -1 for the first and for the others. */
  int32_t *symbol_first;
  /* Instrumented libraries (cuvil_rt_profile_*): per site its name (in the
   * library's constant table), calls and nanoseconds. */
  int64_t profile_sites;
  const char **profile_names;
  int64_t *profile_calls;
  uint64_t *profile_ns;
  /* The model's own branches (cuvil_rt_branch_*): per arm its name and how
   * often it ran, in every library. */
  int64_t branch_sites;
  const char **branch_names;
  int64_t *branch_taken;
  /* NPU libraries: the simulator's account of the last run, when recording. */
  bool npu_recording;
  bool npu_report_valid;
  cuvil_rt_text npu_report;
  /* Instances on a device (runtime/cuda): the backend's state (NULL: the
   * CPU), and cuvil_model_device's text. */
  void *device_state;
  char device[320];
};

/* The backend that runs instances on a device, when the library has code
 * for one (it registers itself at load time); NULL otherwise. */
static const cuvil_rt_device_backend *device_backend;

void cuvil_rt_register_device_backend(const cuvil_rt_device_backend *backend) {
  device_backend = backend;
}

enum {
  kMaxThreads = 1024,
  kMaxRank = 64,
  kMaxOptionsSize = 4096,
  kArenaAlignment = 64,
};

/* The size of cuvil_options in ABI version 1; no caller can have less. */
#define OPTIONS_V1_SIZE (offsetof(cuvil_options, num_threads) + sizeof(int32_t))
#define OPTIONS_HAS_FIELD(options, field)                                                     \
  ((options)->struct_size >= offsetof(cuvil_options, field) + sizeof((options)->field))

static const char *model_name(const cuvil_rt_model_desc *desc) {
  return desc->model_name ? desc->model_name : "(unnamed)";
}

static cuvil_status check_live(const cuvil_model *model) {
  if (!model)
    return fail(CUVIL_ERR_INVALID_ARGUMENT, "model is NULL");
  if (model->magic != LIVE_MAGIC)
    return fail(CUVIL_ERR_INVALID_ARGUMENT,
                "model %p is not a live instance (destroyed, or not made by cuvil_model_create)",
                (const void *)model);
  if (model->desc != &cuvil_rt_model)
    return fail(CUVIL_ERR_INVALID_ARGUMENT,
                "model %p was created by another model library; use that library's functions",
                (const void *)model);
  return CUVIL_OK;
}

void cuvil_options_init(cuvil_options *options) {
  if (!options) {
    fail(CUVIL_ERR_INVALID_ARGUMENT, "options is NULL");
    return;
  }
  /* This header's whole struct (ABI 3: 12 bytes). A caller compiled with
   * an older header has a smaller one and must not call this (runtime.h:
   * it checks cuvil_abi_version first); create still reads its smaller
   * struct, version 1's size being the floor. */
  memset(options, 0, sizeof(*options));
  options->struct_size = (uint32_t)sizeof(cuvil_options);
  options->num_threads = 0;
  options->device = CUVIL_DEVICE_AUTO;
  succeed();
}

static cuvil_status read_options(const cuvil_options *options, int32_t *num_threads,
                                 int32_t *device) {
  *num_threads = 0;
  *device = CUVIL_DEVICE_AUTO;
  if (!options)
    return CUVIL_OK;
  uint32_t size = options->struct_size;
  if (size < OPTIONS_V1_SIZE)
    return fail(CUVIL_ERR_ABI,
                "options.struct_size is %u, smaller than the %u bytes of the first cuvil_options; "
                "initialise options with cuvil_options_init",
                size, (unsigned)OPTIONS_V1_SIZE);
  if (size > sizeof(cuvil_options)) {
    if (size > kMaxOptionsSize)
      return fail(CUVIL_ERR_ABI, "options.struct_size is %u: not a cuvil_options", size);
    /* A newer header's fields are fine as long as they keep their defaults
     * (zero): this library would otherwise silently ignore a setting. */
    const unsigned char *bytes = (const unsigned char *)options;
    for (uint32_t i = sizeof(cuvil_options); i < size; ++i)
      if (bytes[i] != 0)
        return fail(CUVIL_ERR_ABI,
                    "options set a field at byte %u, beyond the %u bytes this library (ABI %u) "
                    "knows; use a library built with the same cuvil/runtime.h",
                    i, (unsigned)sizeof(cuvil_options), CUVIL_ABI_VERSION);
  }
  if (OPTIONS_HAS_FIELD(options, num_threads)) {
    if (options->num_threads < 0 || options->num_threads > kMaxThreads)
      return fail(CUVIL_ERR_INVALID_ARGUMENT,
                  "options.num_threads is %d; use 0 (all online cores) or 1..%d",
                  options->num_threads, kMaxThreads);
    *num_threads = options->num_threads;
  }
  /* ABI 2's callers have no device: the default. */
  if (OPTIONS_HAS_FIELD(options, device)) {
    if (options->device != CUVIL_DEVICE_AUTO && options->device != CUVIL_DEVICE_CPU &&
        options->device != CUVIL_DEVICE_CUDA)
      return fail(CUVIL_ERR_INVALID_ARGUMENT,
                  "options.device is %d; use CUVIL_DEVICE_AUTO (0), CUVIL_DEVICE_CPU (1) or "
                  "CUVIL_DEVICE_CUDA (2)",
                  options->device);
    *device = options->device;
  }
  return CUVIL_OK;
}

/* Bytes of `rank` sizes of `dtype` (sizes >= 0); false if they do not fit
 * the address space. */
static bool shape_bytes(int32_t dtype, const int64_t *shape, int32_t rank, uint64_t *bytes) {
  uint64_t total = dtype_size(dtype);
  for (int32_t i = 0; i < rank; ++i)
    if (__builtin_mul_overflow(total, (uint64_t)shape[i], &total))
      return false;
  *bytes = total;
  return total <= SIZE_MAX;
}

/* The symbol of an input's dynamic dimension, or NULL. */
static const char *dim_symbol(const cuvil_rt_tensor_desc *t, int32_t d) {
  if (t->shape[d] >= 0 || !t->symbols || !t->symbols[d] || !*t->symbols[d])
    return NULL;
  return t->symbols[d];
}

/* cuvil_model's symbol_first, once at create (a run only compares). */
static void link_symbols(const cuvil_rt_model_desc *desc, int32_t *first) {
  int32_t p = 0;
  for (int32_t i = 0; i < desc->num_inputs; ++i)
    for (int32_t d = 0; d < desc->inputs[i].rank; ++d, ++p) {
      first[p] = -1;
      const char *symbol = dim_symbol(&desc->inputs[i], d);
      int32_t q = 0;
      for (int32_t j = 0; j <= i && symbol && first[p] < 0; ++j)
        for (int32_t e = 0; e < desc->inputs[j].rank && q < p; ++e, ++q) {
          const char *other = dim_symbol(&desc->inputs[j], e);
          if (other && strcmp(other, symbol) == 0) {
            first[p] = q;
            break;
          }
        }
    }
}

/* The input and dimension of the inputs' shape entry p. */
static void input_dim_at(const cuvil_rt_model_desc *desc, int32_t p, int32_t *input, int32_t *dim) {
  for (*input = 0; *input < desc->num_inputs && p >= desc->inputs[*input].rank; ++*input)
    p -= desc->inputs[*input].rank;
  *dim = p;
}

static cuvil_status check_tensor_descs(const cuvil_rt_model_desc *desc, const char *role,
                                       const cuvil_rt_tensor_desc *tensors, int32_t count) {
  if (count < 0 || (count > 0 && !tensors))
    return fail(CUVIL_ERR_ABI, "model '%s': malformed %s list", model_name(desc), role);
  for (int32_t i = 0; i < count; ++i) {
    const cuvil_rt_tensor_desc *tensor = &tensors[i];
    if (!tensor->name || dtype_size(tensor->dtype) == 0 || tensor->rank < 0 ||
        tensor->rank > kMaxRank || (tensor->rank > 0 && !tensor->shape))
      return fail(CUVIL_ERR_ABI, "model '%s': malformed description of %s %d", model_name(desc),
                  role, (int)i);
    /* The static sizes alone must fit: a run's can only be larger. */
    int64_t static_sizes[kMaxRank];
    for (int32_t d = 0; d < tensor->rank; ++d) {
      if (tensor->shape[d] < -1)
        return fail(CUVIL_ERR_ABI, "model '%s': %s '%s' dim %d is %lld (a size, or -1: dynamic)",
                    model_name(desc), role, tensor->name, (int)d,
                    (long long)tensor->shape[d]);
      static_sizes[d] = tensor->shape[d] < 0 ? 1 : tensor->shape[d];
      if (tensor->min_shape && tensor->max_shape) {
        int64_t lo = tensor->min_shape[d], hi = tensor->max_shape[d];
        if (lo < 0 || lo > hi || (tensor->shape[d] >= 0 && (lo != tensor->shape[d] || hi != lo)))
          return fail(CUVIL_ERR_ABI, "model '%s': %s '%s' dim %d has bounds %lld..%lld",
                      model_name(desc), role, tensor->name, (int)d, (long long)lo, (long long)hi);
      }
    }
    if ((tensor->min_shape == NULL) != (tensor->max_shape == NULL))
      return fail(CUVIL_ERR_ABI, "model '%s': %s '%s' has one of its bounds only", model_name(desc),
                  role, tensor->name);
    uint64_t bytes;
    if (!shape_bytes(tensor->dtype, static_sizes, tensor->rank, &bytes))
      return fail(CUVIL_ERR_ABI, "model '%s': %s '%s' is larger than the address space",
                  model_name(desc), role, tensor->name);
  }
  return CUVIL_OK;
}

/* The generated description comes from a matching cuvil-export, but a
 * mismatched runtime archive or a damaged object must not crash us. */
static cuvil_status check_desc(const cuvil_rt_model_desc *desc) {
  if (desc->abi_version != CUVIL_RT_MODEL_ABI_VERSION)
    return fail(CUVIL_ERR_ABI,
                "model '%s' was generated for runtime model ABI %u but this runtime implements %u; "
                "re-export it with a matching cuvil-export",
                model_name(desc), desc->abi_version, CUVIL_RT_MODEL_ABI_VERSION);
  /* A library with GPU code only (--target cuda) may have no CPU entry. */
  if (!desc->entry && !(device_backend && !device_backend->cpu_fallback))
    return fail(CUVIL_ERR_ABI, "model '%s' has no entry function", model_name(desc));
  if (desc->num_required_features < 0 ||
      (desc->num_required_features > 0 && !desc->required_features) ||
      desc->num_failure_messages < 0 ||
      (desc->num_failure_messages > 0 && !desc->failure_messages))
    return fail(CUVIL_ERR_ABI, "model '%s': malformed description", model_name(desc));
  cuvil_status status = check_tensor_descs(desc, "input", desc->inputs, desc->num_inputs);
  if (status != CUVIL_OK)
    return status;
  return check_tensor_descs(desc, "output", desc->outputs, desc->num_outputs);
}

/* Appends text to a bounded message buffer. */
static void append(char *buffer, size_t size, size_t *used, const char *text) {
  if (*used >= size)
    return;
  int written = snprintf(buffer + *used, size - *used, "%s", text);
  if (written > 0)
    *used += (size_t)written;
}

static cuvil_status check_cpu(const cuvil_rt_model_desc *desc) {
  char missing[512] = "";
  size_t used = 0;
  int32_t num_missing = 0;
  for (int32_t i = 0; i < desc->num_required_features; ++i) {
    const char *feature = desc->required_features[i] ? desc->required_features[i] : "(null)";
    bool hidden = cuvil_cpu_feature_hidden_for_test(feature);
    if (!hidden && cuvil_cpu_detects_feature(feature))
      continue;
    if (num_missing++ > 0)
      append(missing, sizeof(missing), &used, ", ");
    append(missing, sizeof(missing), &used, feature);
    if (hidden)
      append(missing, sizeof(missing), &used, " (hidden by CUVIL_TEST_HIDE_CPU_FEATURES)");
    else if (!cuvil_cpu_feature_known(feature))
      append(missing, sizeof(missing), &used, " (unknown to this runtime)");
  }
  if (num_missing == 0)
    return CUVIL_OK;
  char this_cpu[64];
  cuvil_cpu_describe(this_cpu, sizeof(this_cpu));
  return fail(CUVIL_ERR_UNSUPPORTED_CPU,
              "model '%s' was compiled for %s CPU '%s' and needs CPU features this machine "
              "lacks: %s%s%s%s; re-export it with a --cpu this machine supports",
              model_name(desc), desc->target ? desc->target : cuvil_runtime_target(),
              desc->device ? desc->device : "generic", missing, this_cpu[0] ? " (this CPU: " : "",
              this_cpu, this_cpu[0] ? ")" : "");
}

static int32_t online_cores(void) {
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  if (cores < 1)
    return 1;
  return cores > kMaxThreads ? kMaxThreads : (int32_t)cores;
}

static void free_model(cuvil_model *model) {
  if (model->device_state)
    device_backend->destroy(model->device_state);
  cuvil_thread_pool_destroy(model->pool);
  free(model->arena);
  free(model->input_bytes);
  free(model->output_bytes);
  free(model->input_data);
  free(model->output_data);
  free(model->input_shapes);
  free(model->output_shapes);
  free(model->shape_storage);
  free(model->symbol_first);
  free(model->npu_report.data);
  free(model->profile_names);
  free(model->profile_calls);
  free(model->profile_ns);
  free(model->branch_names);
  free(model->branch_taken);
  model->magic = DEAD_MAGIC;
  free(model);
}

cuvil_status cuvil_model_create(const cuvil_options *options, cuvil_model **model) {
  if (!model)
    return fail(CUVIL_ERR_INVALID_ARGUMENT, "model (the out-parameter) is NULL");
  *model = NULL;
  int32_t num_threads, device;
  cuvil_status status = read_options(options, &num_threads, &device);
  if (status != CUVIL_OK)
    return status;
  const cuvil_rt_model_desc *desc = &cuvil_rt_model;
  if ((status = check_desc(desc)) != CUVIL_OK || (status = check_cpu(desc)) != CUVIL_OK)
    return status;
  if (device == CUVIL_DEVICE_CUDA && !device_backend)
    return fail(CUVIL_ERR_DEVICE,
                "model '%s' has no CUDA code (its target is %s): export it with --target cuda "
                "(or x86_64,cuda) to run it on a GPU",
                model_name(desc), desc->target ? desc->target : "unknown");
  if (num_threads == 0)
    num_threads = online_cores();

  cuvil_model *created = calloc(1, sizeof(*created));
  if (!created)
    return fail(CUVIL_ERR_OUT_OF_MEMORY, "out of memory creating an instance of '%s'",
                model_name(desc));
  created->desc = desc;
  atomic_init(&created->running, 0);
  /* calloc(0, ...) may return NULL; one slot keeps "NULL means failed". */
  size_t input_slots = desc->num_inputs > 0 ? (size_t)desc->num_inputs : 1;
  size_t output_slots = desc->num_outputs > 0 ? (size_t)desc->num_outputs : 1;
  created->input_bytes = calloc(input_slots, sizeof(uint64_t));
  created->output_bytes = calloc(output_slots, sizeof(uint64_t));
  created->input_data = calloc(input_slots, sizeof(void *));
  created->output_data = calloc(output_slots, sizeof(void *));
  created->input_shapes = calloc(input_slots, sizeof(int64_t *));
  created->output_shapes = calloc(output_slots, sizeof(int64_t *));
  size_t dims = 1;
  for (int32_t i = 0; i < desc->num_inputs; ++i)
    dims += (size_t)desc->inputs[i].rank;
  for (int32_t i = 0; i < desc->num_outputs; ++i)
    dims += (size_t)desc->outputs[i].rank;
  created->shape_storage = calloc(dims, sizeof(int64_t));
  created->symbol_first = calloc(dims, sizeof(int32_t));
  if (!created->input_bytes || !created->output_bytes || !created->input_data ||
      !created->output_data || !created->input_shapes || !created->output_shapes ||
      !created->shape_storage || !created->symbol_first) {
    free_model(created);
    return fail(CUVIL_ERR_OUT_OF_MEMORY, "out of memory creating an instance of '%s'",
                model_name(desc));
  }
  link_symbols(desc, created->symbol_first);

  snprintf(created->device, sizeof created->device, "cpu");
  if (device_backend) {
    char reason[CUVIL_RT_FAILURE_BYTES] = "";
    status = device_backend->create(desc, device, &created->device_state, reason, sizeof reason);
    if (status != CUVIL_OK) {
      created->device_state = NULL;
      free_model(created);
      return fail(status, "model '%s': %s", model_name(desc), reason);
    }
    if (created->device_state) {
      /* The device holds the arena and the tensors; the entry only
       * launches kernels, on the calling thread. */
      snprintf(created->device, sizeof created->device, "%s",
               device_backend->describe(created->device_state));
      created->magic = LIVE_MAGIC;
      *model = created;
      return succeed();
    }
    if (reason[0])
      snprintf(created->device, sizeof created->device, "cpu (fallback: %s)", reason);
  }

  if (desc->arena_bytes > 0) {
    if (desc->arena_bytes > SIZE_MAX - kArenaAlignment) {
      free_model(created);
      return fail(CUVIL_ERR_OUT_OF_MEMORY, "model '%s' needs %llu bytes of working memory",
                  model_name(desc), (unsigned long long)desc->arena_bytes);
    }
    /* aligned_alloc wants a multiple of the alignment. */
    size_t rounded = ((size_t)desc->arena_bytes + kArenaAlignment - 1) &
                     ~(size_t)(kArenaAlignment - 1);
    created->arena = aligned_alloc(kArenaAlignment, rounded);
    if (!created->arena) {
      free_model(created);
      return fail(CUVIL_ERR_OUT_OF_MEMORY,
                  "cannot allocate the %llu bytes of working memory model '%s' needs",
                  (unsigned long long)desc->arena_bytes, model_name(desc));
    }
  }

  int error_number = 0;
  created->pool = cuvil_thread_pool_create(num_threads, &error_number);
  if (!created->pool) {
    free_model(created);
    return fail(CUVIL_ERR_OUT_OF_MEMORY, "cannot start %d threads for model '%s': %s",
                (int)num_threads, model_name(desc), strerror(error_number));
  }
  created->magic = LIVE_MAGIC;
  *model = created;
  return succeed();
}

void cuvil_model_destroy(cuvil_model *model) {
  if (!model) {
    succeed();
    return;
  }
  if (check_live(model) != CUVIL_OK)
    return;
  /* A run still in progress on another thread owns the arena and the
   * pool: wait for it instead of freeing them under it. */
  int idle = 0;
  while (!atomic_compare_exchange_weak_explicit(&model->running, &idle, 1, memory_order_acquire,
                                                memory_order_relaxed)) {
    idle = 0;
    sched_yield();
  }
  free_model(model);
  succeed();
}

/*--- Queries ----------------------------------------------------------------*/

int32_t cuvil_model_num_inputs(const cuvil_model *model) {
  if (check_live(model) != CUVIL_OK)
    return -1;
  succeed();
  return model->desc->num_inputs;
}

int32_t cuvil_model_num_outputs(const cuvil_model *model) {
  if (check_live(model) != CUVIL_OK)
    return -1;
  succeed();
  return model->desc->num_outputs;
}

/* The description of input (output) `index` of a live instance, or a
 * failed status naming what is wrong. */
static cuvil_status find_tensor(const cuvil_model *model, const char *role, int32_t index,
                                bool is_output, const cuvil_rt_tensor_desc **tensor) {
  cuvil_status status = check_live(model);
  if (status != CUVIL_OK)
    return status;
  const cuvil_rt_model_desc *desc = model->desc;
  int32_t count = is_output ? desc->num_outputs : desc->num_inputs;
  if (index < 0 || index >= count)
    return fail(CUVIL_ERR_INVALID_ARGUMENT, "%s index %d is out of range: the model has %d %s%s",
                role, (int)index, (int)count, role, count == 1 ? "" : "s");
  *tensor = is_output ? &desc->outputs[index] : &desc->inputs[index];
  return CUVIL_OK;
}

static cuvil_status tensor_info(const cuvil_model *model, const char *role, int32_t index,
                                cuvil_tensor_info *info, bool is_output) {
  cuvil_status status = check_live(model);
  if (status != CUVIL_OK)
    return status;
  if (!info)
    return fail(CUVIL_ERR_INVALID_ARGUMENT, "info is NULL");
  const cuvil_rt_tensor_desc *tensor;
  if ((status = find_tensor(model, role, index, is_output, &tensor)) != CUVIL_OK)
    return status;
  info->name = tensor->name;
  info->dtype = (cuvil_dtype)tensor->dtype;
  info->rank = tensor->rank;
  info->shape = tensor->shape;
  return succeed();
}

cuvil_status cuvil_model_input_info(const cuvil_model *model, int32_t index,
                                    cuvil_tensor_info *info) {
  return tensor_info(model, "input", index, info, false);
}

cuvil_status cuvil_model_output_info(const cuvil_model *model, int32_t index,
                                     cuvil_tensor_info *info) {
  return tensor_info(model, "output", index, info, true);
}

static cuvil_status tensor_bounds(const cuvil_model *model, const char *role, int32_t index,
                                  bool is_output, int64_t *min_shape, int64_t *max_shape) {
  const cuvil_rt_tensor_desc *tensor;
  cuvil_status status = find_tensor(model, role, index, is_output, &tensor);
  if (status != CUVIL_OK)
    return status;
  for (int32_t d = 0; d < tensor->rank; ++d) {
    bool fixed = tensor->shape[d] >= 0;
    if (min_shape)
      min_shape[d] = fixed ? tensor->shape[d] : tensor->min_shape ? tensor->min_shape[d] : 0;
    if (max_shape)
      max_shape[d] = fixed ? tensor->shape[d] : tensor->max_shape ? tensor->max_shape[d] : -1;
  }
  return succeed();
}

cuvil_status cuvil_model_input_bounds(const cuvil_model *model, int32_t index, int64_t *min_shape,
                                      int64_t *max_shape) {
  return tensor_bounds(model, "input", index, false, min_shape, max_shape);
}

cuvil_status cuvil_model_output_bounds(const cuvil_model *model, int32_t index, int64_t *min_shape,
                                       int64_t *max_shape) {
  return tensor_bounds(model, "output", index, true, min_shape, max_shape);
}

static int32_t tensor_index(const cuvil_model *model, const char *role, const char *name,
                            bool is_output) {
  if (check_live(model) != CUVIL_OK)
    return -1;
  if (!name) {
    fail(CUVIL_ERR_INVALID_ARGUMENT, "the %s name is NULL", role);
    return -1;
  }
  const cuvil_rt_model_desc *desc = model->desc;
  int32_t count = is_output ? desc->num_outputs : desc->num_inputs;
  const cuvil_rt_tensor_desc *tensors = is_output ? desc->outputs : desc->inputs;
  for (int32_t i = 0; i < count; ++i)
    if (tensors[i].name && strcmp(tensors[i].name, name) == 0) {
      succeed();
      return i;
    }
  fail(CUVIL_ERR_INVALID_ARGUMENT, "model '%s' has no %s named '%s'", model_name(desc), role, name);
  return -1;
}

int32_t cuvil_model_input_index(const cuvil_model *model, const char *name) {
  return tensor_index(model, "input", name, false);
}

int32_t cuvil_model_output_index(const cuvil_model *model, const char *name) {
  return tensor_index(model, "output", name, true);
}

size_t cuvil_tensor_byte_size(cuvil_dtype dtype, int32_t rank, const int64_t *shape) {
  if (dtype_size(dtype) == 0 || rank < 0 || (rank > 0 && !shape))
    return 0;
  for (int32_t i = 0; i < rank; ++i)
    if (shape[i] < 0)
      return 0;
  uint64_t bytes = 0;
  return shape_bytes(dtype, shape, rank, &bytes) ? (size_t)bytes : SIZE_MAX;
}

/*--- Device backends (runtime/npu) -----------------------------------------*/

_Thread_local char cuvil_rt_device_failure[CUVIL_RT_FAILURE_BYTES];
_Thread_local cuvil_rt_text *cuvil_rt_npu_record;

void cuvil_rt_text_append(cuvil_rt_text *text, const char *bytes, size_t size) {
  if (text->failed)
    return;
  if (text->size + size + 1 > text->capacity) {
    size_t capacity = text->capacity ? text->capacity : 4096;
    while (capacity < text->size + size + 1)
      capacity *= 2;
    char *grown = realloc(text->data, capacity);
    if (!grown) {
      text->failed = true;
      return;
    }
    text->data = grown, text->capacity = capacity;
  }
  memcpy(text->data + text->size, bytes, size);
  text->size += size;
  text->data[text->size] = '\0';
}

void cuvil_rt_text_printf(cuvil_rt_text *text, const char *format, ...) {
  char small[512];
  va_list arguments;
  va_start(arguments, format);
  int n = vsnprintf(small, sizeof small, format, arguments);
  va_end(arguments);
  if (n < 0) {
    text->failed = true;
    return;
  }
  if ((size_t)n < sizeof small) {
    cuvil_rt_text_append(text, small, (size_t)n);
    return;
  }
  char *large = malloc((size_t)n + 1);
  if (!large) {
    text->failed = true;
    return;
  }
  va_start(arguments, format);
  vsnprintf(large, (size_t)n + 1, format, arguments);
  va_end(arguments);
  cuvil_rt_text_append(text, large, (size_t)n);
  free(large);
}

cuvil_status cuvil_model_set_npu_recording(cuvil_model *model, int32_t enabled) {
  cuvil_status status = check_live(model);
  if (status != CUVIL_OK)
    return status;
  model->npu_recording = enabled != 0;
  model->npu_report_valid = false;
  return succeed();
}

cuvil_status cuvil_model_npu_report(const cuvil_model *model, const char **json) {
  cuvil_status status = check_live(model);
  if (status != CUVIL_OK)
    return status;
  if (!json)
    return fail(CUVIL_ERR_INVALID_ARGUMENT, "json is NULL");
  *json = model->npu_report_valid ? model->npu_report.data : NULL;
  return succeed();
}

/*--- Profiling (cuvil-export --instrument) ----------------------------------*/

/* The instance running on this thread, and the current site's start. */
static _Thread_local cuvil_model *profiled_model;
static _Thread_local uint64_t profile_start;

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Called by an instrumented entry at its start: `table` holds the sites'
 * names, NUL-separated. The instance's counters are made on first use. */
void cuvil_rt_profile_sites(const char *table, int64_t count) {
  cuvil_model *m = profiled_model;
  if (!m || m->profile_names || count <= 0)
    return;
  const char **names = calloc((size_t)count, sizeof *names);
  int64_t *calls = calloc((size_t)count, sizeof *calls);
  uint64_t *ns = calloc((size_t)count, sizeof *ns);
  if (!names || !calls || !ns) { /* no profile rather than no run */
    free(names), free(calls), free(ns);
    return;
  }
  for (int64_t i = 0; i < count; ++i) {
    names[i] = table;
    table += strlen(table) + 1;
  }
  m->profile_names = names, m->profile_calls = calls, m->profile_ns = ns;
  m->profile_sites = count;
}

void cuvil_rt_profile_begin(int64_t site) {
  (void)site;
  profile_start = now_ns();
}

void cuvil_rt_profile_end(int64_t site) {
  cuvil_model *m = profiled_model;
  if (!m || site < 0 || site >= m->profile_sites)
    return;
  m->profile_ns[site] += now_ns() - profile_start;
  m->profile_calls[site] += 1;
}

int32_t cuvil_model_profile_count(const cuvil_model *model) {
  if (check_live(model) != CUVIL_OK)
    return -1;
  succeed();
  return (int32_t)model->profile_sites;
}

cuvil_status cuvil_model_profile_entry(const cuvil_model *model, int32_t index, const char **name,
                                       int64_t *calls, double *total_ms) {
  cuvil_status status = check_live(model);
  if (status != CUVIL_OK)
    return status;
  if (index < 0 || index >= model->profile_sites)
    return fail(CUVIL_ERR_INVALID_ARGUMENT, "profile index %d is out of range: the library has %d site(s)%s",
                (int)index, (int)model->profile_sites,
                model->profile_sites ? "" : " (compile it with cuvil-export --instrument)");
  if (name)
    *name = model->profile_names[index];
  if (calls)
    *calls = model->profile_calls[index];
  if (total_ms)
    *total_ms = (double)model->profile_ns[index] * 1e-6;
  return succeed();
}

void cuvil_model_profile_reset(cuvil_model *model) {
  if (check_live(model) != CUVIL_OK)
    return;
  for (int64_t i = 0; i < model->profile_sites; ++i)
    model->profile_calls[i] = 0, model->profile_ns[i] = 0;
  succeed();
}

/*--- Branch coverage --------------------------------------------------------*/

/* Called by an entry with branches at its start: `table` holds the arms'
 * names, NUL-separated. The instance's counters are made on first use. */
void cuvil_rt_branch_sites(const char *table, int64_t count) {
  cuvil_model *m = profiled_model;
  if (!m || m->branch_names || count <= 0)
    return;
  const char **names = calloc((size_t)count, sizeof *names);
  int64_t *taken = calloc((size_t)count, sizeof *taken);
  if (!names || !taken) { /* no coverage rather than no run */
    free(names), free(taken);
    return;
  }
  for (int64_t i = 0; i < count; ++i) {
    names[i] = table;
    table += strlen(table) + 1;
  }
  m->branch_names = names, m->branch_taken = taken;
  m->branch_sites = count;
}

/* An arm of the model's control flow runs (an if's branch, a loop's trip). */
void cuvil_rt_branch(int64_t site) {
  cuvil_model *m = profiled_model;
  if (m && site >= 0 && site < m->branch_sites)
    m->branch_taken[site] += 1;
}

int32_t cuvil_model_branch_count(const cuvil_model *model) {
  if (check_live(model) != CUVIL_OK)
    return -1;
  succeed();
  return (int32_t)model->branch_sites;
}

cuvil_status cuvil_model_branch_entry(const cuvil_model *model, int32_t index, const char **name,
                                      int64_t *taken) {
  cuvil_status status = check_live(model);
  if (status != CUVIL_OK)
    return status;
  if (index < 0 || index >= model->branch_sites)
    return fail(CUVIL_ERR_INVALID_ARGUMENT, "branch index %d is out of range: the library has %d arm(s)",
                (int)index, (int)model->branch_sites);
  if (name)
    *name = model->branch_names[index];
  if (taken)
    *taken = model->branch_taken[index];
  return succeed();
}

void cuvil_model_branch_reset(cuvil_model *model) {
  if (check_live(model) != CUVIL_OK)
    return;
  for (int64_t i = 0; i < model->branch_sites; ++i)
    model->branch_taken[i] = 0;
  succeed();
}

/*--- Running ----------------------------------------------------------------*/

/* One caller tensor against the description, into the run's copies: its
 * shape (`shape`, rank entries) and byte size. Inputs give every size (a
 * dynamic dimension any size >= 0); outputs only their dynamic ones (the
 * buffer's capacity), the static ones come from the description. */
static cuvil_status check_tensor(const char *role, const cuvil_tensor *tensor,
                                 const cuvil_rt_tensor_desc *expected, bool is_output,
                                 int64_t *shape, uint64_t *bytes) {
  char got_type[24], expected_type[24], shape_text[128];
  const char *name = expected->name;
  if ((int32_t)tensor->dtype != expected->dtype)
    return fail(CUVIL_ERR_DTYPE, "%s '%s': expected dtype %s, got %s", role, name,
                dtype_name(expected->dtype, expected_type), dtype_name(tensor->dtype, got_type));
  if (tensor->rank != expected->rank)
    return fail(CUVIL_ERR_SHAPE, "%s '%s': expected rank %d, got %d", role, name,
                (int)expected->rank, (int)tensor->rank);
  if (expected->rank > 0 && !tensor->shape)
    return fail(CUVIL_ERR_INVALID_ARGUMENT, "%s '%s': shape is NULL (rank %d)", role, name,
                (int)expected->rank);
  for (int32_t d = 0; d < expected->rank; ++d) {
    int64_t want = expected->shape[d];
    if (is_output && want >= 0) {
      shape[d] = want; /* written by the run, not read */
      continue;
    }
    int64_t got = tensor->shape[d];
    if (want >= 0 && got != want)
      return fail(CUVIL_ERR_SHAPE, "%s '%s' dim %d: expected %lld, got %lld", role, name, (int)d,
                  (long long)want, (long long)got);
    if (got < 0)
      return fail(CUVIL_ERR_SHAPE,
                  is_output ? "%s '%s' dim %d is dynamic: its shape entry must be the buffer's "
                              "capacity along it (>= 0), got %lld"
                            : "%s '%s' dim %d is dynamic: expected a size >= 0, got %lld",
                  role, name, (int)d, (long long)got);
    /* The compiled code is planned for the bounds: a size outside them is
     * refused before it could run past the arena. */
    if (!is_output && want < 0 && expected->min_shape &&
        (got < expected->min_shape[d] || got > expected->max_shape[d])) {
      const char *symbol = expected->symbols && expected->symbols[d] ? expected->symbols[d] : "";
      return fail(CUVIL_ERR_SHAPE,
                  "%s '%s' dim %d%s%s%s is %lld, outside the bounds %lld..%lld it was compiled for",
                  role, name, (int)d, *symbol ? " (" : "", symbol, *symbol ? ")" : "",
                  (long long)got, (long long)expected->min_shape[d],
                  (long long)expected->max_shape[d]);
    }
    shape[d] = got;
  }
  if (!shape_bytes(expected->dtype, shape, expected->rank, bytes))
    return fail(CUVIL_ERR_SHAPE, "%s '%s': %s %s is larger than the address space", role, name,
                dtype_name(expected->dtype, expected_type),
                format_shape(shape, expected->rank, shape_text, sizeof(shape_text)));
  if (!tensor->data && *bytes > 0)
    return fail(CUVIL_ERR_INVALID_ARGUMENT, "%s '%s': data is NULL", role, name);
  if (tensor->byte_size < *bytes)
    return fail(CUVIL_ERR_SHAPE, "%s '%s': buffer holds %llu bytes, needs %llu (%s %s)", role,
                name, (unsigned long long)tensor->byte_size, (unsigned long long)*bytes,
                dtype_name(expected->dtype, expected_type),
                format_shape(shape, expected->rank, shape_text, sizeof(shape_text)));
  /* Generated code accesses whole elements; a misaligned buffer would be
   * undefined behaviour (and a fault on some CPUs). */
  size_t element = dtype_size(expected->dtype);
  if ((uintptr_t)tensor->data % element != 0)
    return fail(CUVIL_ERR_INVALID_ARGUMENT, "%s '%s': data %p is not aligned to its %zu-byte elements",
                role, name, tensor->data, element);
  return CUVIL_OK;
}

static bool ranges_overlap(const void *a, uint64_t a_bytes, const void *b, uint64_t b_bytes) {
  if (a_bytes == 0 || b_bytes == 0)
    return false;
  uintptr_t a_begin = (uintptr_t)a, b_begin = (uintptr_t)b;
  return a_begin < b_begin + b_bytes && b_begin < a_begin + a_bytes;
}

/* Outputs are written while inputs are still read, and generated code
 * assumes no aliasing: in-place runs are refused, not silently wrong. */
static cuvil_status check_overlaps(const cuvil_model *model, const cuvil_tensor *inputs,
                                   const cuvil_tensor *outputs) {
  const cuvil_rt_model_desc *desc = model->desc;
  for (int32_t o = 0; o < desc->num_outputs; ++o) {
    const void *data = outputs[o].data;
    uint64_t bytes = model->output_bytes[o];
    for (int32_t i = 0; i < desc->num_inputs; ++i)
      if (ranges_overlap(data, bytes, inputs[i].data, model->input_bytes[i]))
        return fail(CUVIL_ERR_INVALID_ARGUMENT,
                    "output '%s' overlaps input '%s'; in-place runs are not supported",
                    desc->outputs[o].name, desc->inputs[i].name);
    for (int32_t other = 0; other < o; ++other)
      if (ranges_overlap(data, bytes, outputs[other].data, model->output_bytes[other]))
        return fail(CUVIL_ERR_INVALID_ARGUMENT, "output '%s' overlaps output '%s'",
                    desc->outputs[o].name, desc->outputs[other].name);
  }
  return CUVIL_OK;
}

/* Every tensor of a run into the instance's copies (the caller holds
 * `running`), so that the entry reads what was checked even if the caller's
 * arrays change meanwhile. */
static cuvil_status prepare_run(cuvil_model *model, const cuvil_tensor *inputs,
                                const cuvil_tensor *outputs) {
  const cuvil_rt_model_desc *desc = model->desc;
  int64_t *storage = model->shape_storage;
  cuvil_status status;
  for (int32_t i = 0; i < desc->num_inputs; ++i) {
    if ((status = check_tensor("input", &inputs[i], &desc->inputs[i], false, storage,
                               &model->input_bytes[i])) != CUVIL_OK)
      return status;
    model->input_data[i] = inputs[i].data;
    model->input_shapes[i] = desc->inputs[i].rank > 0 ? storage : NULL;
    storage += desc->inputs[i].rank;
  }
  /* Inputs that share a symbol: equal sizes (the code reads one of them). */
  for (int32_t p = 0; p < (int32_t)(storage - model->shape_storage); ++p) {
    int32_t f = model->symbol_first[p];
    if (f < 0 || model->shape_storage[p] == model->shape_storage[f])
      continue;
    int32_t i, d, j, e;
    input_dim_at(desc, p, &i, &d);
    input_dim_at(desc, f, &j, &e);
    return fail(CUVIL_ERR_SHAPE,
                "input '%s' dim %d is %lld but input '%s' dim %d is %lld: both are symbol '%s', "
                "which takes one size per run",
                desc->inputs[i].name, (int)d, (long long)model->shape_storage[p],
                desc->inputs[j].name, (int)e, (long long)model->shape_storage[f],
                dim_symbol(&desc->inputs[i], d));
  }
  for (int32_t i = 0; i < desc->num_outputs; ++i) {
    if ((status = check_tensor("output", &outputs[i], &desc->outputs[i], true, storage,
                               &model->output_bytes[i])) != CUVIL_OK)
      return status;
    model->output_data[i] = outputs[i].data;
    model->output_shapes[i] = desc->outputs[i].rank > 0 ? storage : NULL;
    storage += desc->outputs[i].rank;
  }
  return check_overlaps(model, inputs, outputs);
}

/* cuvil_model_run, and cuvil_model_run_device (on_device) with `stream`. */
static cuvil_status run_model(cuvil_model *model, const cuvil_tensor *inputs, int32_t num_inputs,
                              cuvil_tensor *outputs, int32_t num_outputs, bool on_device,
                              void *stream) {
  cuvil_status status = check_live(model);
  if (status != CUVIL_OK)
    return status;
  const cuvil_rt_model_desc *desc = model->desc;
  if (on_device && !model->device_state)
    return fail(CUVIL_ERR_DEVICE,
                "model '%s': the instance runs on the CPU (%s); cuvil_model_run_device needs an "
                "instance on a GPU (use cuvil_model_run)",
                model_name(desc), model->device);
  if (num_inputs != desc->num_inputs)
    return fail(CUVIL_ERR_COUNT, "model '%s': expected %d input%s, got %d", model_name(desc),
                (int)desc->num_inputs, desc->num_inputs == 1 ? "" : "s", (int)num_inputs);
  if (num_outputs != desc->num_outputs)
    return fail(CUVIL_ERR_COUNT, "model '%s': expected %d output%s, got %d", model_name(desc),
                (int)desc->num_outputs, desc->num_outputs == 1 ? "" : "s", (int)num_outputs);
  if (num_inputs > 0 && !inputs)
    return fail(CUVIL_ERR_INVALID_ARGUMENT, "inputs is NULL (the model takes %d input%s)",
                (int)num_inputs, num_inputs == 1 ? "" : "s");
  if (num_outputs > 0 && !outputs)
    return fail(CUVIL_ERR_INVALID_ARGUMENT, "outputs is NULL (the model gives %d output%s)",
                (int)num_outputs, num_outputs == 1 ? "" : "s");

  int idle = 0;
  if (!atomic_compare_exchange_strong_explicit(&model->running, &idle, 1, memory_order_acquire,
                                               memory_order_relaxed))
    return fail(CUVIL_ERR_BUSY,
                "model %p is running a call on another thread; an instance runs one call at a "
                "time (create one instance per thread)",
                (void *)model);
  if ((status = prepare_run(model, inputs, outputs)) != CUVIL_OK) {
    atomic_store_explicit(&model->running, 0, memory_order_release);
    return status;
  }
  /* The kernels the generated code calls find this call's threads here. */
  void *outer_exec = cuvil_rt_current_exec;
  cuvil_model *outer_profiled = profiled_model;
  cuvil_rt_text *outer_record = cuvil_rt_npu_record;
  cuvil_rt_current_exec = model->pool;
  profiled_model = model;
  cuvil_rt_device_failure[0] = '\0';
  if (model->npu_recording) {
    model->npu_report.size = 0;
    model->npu_report.failed = false;
    cuvil_rt_text_printf(&model->npu_report, "{\"segments\": [");
  }
  cuvil_rt_npu_record = model->npu_recording ? &model->npu_report : NULL;
  int32_t result = 0;
  cuvil_status device_status = CUVIL_OK;
  char device_message[CUVIL_RT_FAILURE_BYTES] = "";
  if (model->device_state) {
    cuvil_rt_device_run run = {model->input_data,   model->input_bytes, model->input_shapes,
                               model->output_data,  model->output_bytes, model->output_shapes,
                               on_device,           stream};
    device_status = device_backend->run(model->device_state, &run, &result, device_message,
                                        sizeof device_message);
  } else {
    result = desc->entry(model->input_data, model->input_shapes, model->output_data,
                         model->output_shapes, model->arena, model->pool);
  }
  cuvil_rt_current_exec = outer_exec;
  profiled_model = outer_profiled;
  cuvil_rt_npu_record = outer_record;
  if (model->npu_recording) {
    cuvil_rt_text_printf(&model->npu_report, "]}\n");
    model->npu_report_valid = !model->npu_report.failed;
  }
  if (device_status == CUVIL_OK && result == 0)
    for (int32_t i = 0; i < num_outputs; ++i)
      if (desc->outputs[i].rank > 0)
        memcpy((void *)(uintptr_t)outputs[i].shape, model->output_shapes[i], /* the caller's array */
               (size_t)desc->outputs[i].rank * sizeof(int64_t));
  atomic_store_explicit(&model->running, 0, memory_order_release);

  if (device_status != CUVIL_OK)
    return fail(device_status, "model '%s': %s", model_name(desc), device_message);
  if (result == 0 && cuvil_rt_device_failure[0])
    return fail(CUVIL_ERR_MODEL, "model '%s' failed on its device: %s", model_name(desc),
                cuvil_rt_device_failure);
  if (result != 0) {
    if (result > 0 && result <= desc->num_failure_messages && desc->failure_messages[result - 1])
      return fail(CUVIL_ERR_MODEL, "model '%s' failed: %s", model_name(desc),
                  desc->failure_messages[result - 1]);
    return fail(CUVIL_ERR_MODEL, "model '%s' failed with code %d (no message for it)",
                model_name(desc), (int)result);
  }
  return succeed();
}

cuvil_status cuvil_model_run(cuvil_model *model, const cuvil_tensor *inputs, int32_t num_inputs,
                             cuvil_tensor *outputs, int32_t num_outputs) {
  return run_model(model, inputs, num_inputs, outputs, num_outputs, false, NULL);
}

cuvil_status cuvil_model_run_device(cuvil_model *model, const cuvil_tensor *inputs,
                                    int32_t num_inputs, cuvil_tensor *outputs,
                                    int32_t num_outputs, void *stream) {
  return run_model(model, inputs, num_inputs, outputs, num_outputs, true, stream);
}

const char *cuvil_model_device(const cuvil_model *model) {
  if (check_live(model) != CUVIL_OK)
    return NULL;
  succeed();
  return model->device;
}
