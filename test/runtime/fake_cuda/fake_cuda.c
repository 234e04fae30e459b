/*===- fake_cuda.c - A stand-in CUDA driver for the runtime's tests --------===*
 *
 * Test only (libcuvil_fake_cuda.so, never installed): the CUDA driver API
 * functions runtime/cuda/cuda.c calls, with their real names and ABI, on
 * host memory. The runtime loads it instead of libcuda.so.1 when
 * CUVIL_CUDA_DRIVER names it.
 *
 * Device memory is malloc'd (a CUdeviceptr is the host address), so copies
 * are memcpy and a test can read what was copied; every copy and kernel
 * argument is checked against the live allocations (CUDA_ERROR_INVALID_VALUE,
 * CUDA_ERROR_ILLEGAL_ADDRESS). Memory calls need cuInit and a current
 * context, as the real driver's do.
 *
 * Images: PTX is text with ".version", ".target sm_XY" and
 * ".entry NAME(.param ..., ...)" lines; a cubin is "\x7fELF" followed by the
 * same text ("cubin sm_XY" instead of .target), NUL-terminated, or a real
 * cubin as ptxas writes it (ELF, OS ABI 0x41, the sm in e_flags bits 8-15;
 * its kernels found by name in its string table, their parameters not
 * checked). A cubin runs
 * on the same major architecture with a minor at most the device's; PTX on
 * any device at least its target (JIT). Kernels: fake_copy(src, dst, bytes)
 * copies, fake_add(a, b, out, n) adds n floats; others do nothing.
 *
 * Environment, read at every call:
 *   CUVIL_FAKE_CUDA_LOG      file to append one line per call to
 *   CUVIL_FAKE_CUDA_DEVICES  number of devices (default 1)
 *   CUVIL_FAKE_CUDA_SM       compute capability as major*10+minor (default 80)
 *   CUVIL_FAKE_CUDA_FAIL     comma-separated FUNCTION[:CODE][@N]: FUNCTION
 *                            returns CODE (default 999) from its N-th call on
 *                            (default 1) in this process
 *
 *===----------------------------------------------------------------------===*/
#define _GNU_SOURCE 1
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

typedef int CUresult;
typedef int CUdevice;
typedef int CUjit_option;
typedef unsigned long long CUdeviceptr;

enum {
  SUCCESS = 0,
  INVALID_VALUE = 1,
  OUT_OF_MEMORY = 2,
  NOT_INITIALIZED = 3,
  NO_DEVICE = 100,
  INVALID_DEVICE = 101,
  INVALID_IMAGE = 200,
  INVALID_CONTEXT = 201,
  NO_BINARY_FOR_GPU = 209,
  INVALID_PTX = 218,
  INVALID_HANDLE = 400,
  NOT_FOUND = 500,
  ILLEGAL_ADDRESS = 700,
  LAUNCH_FAILED = 719,
  UNKNOWN = 999,
};

static const struct {
  CUresult code;
  const char *name, *text;
} kErrors[] = {
    {0, "CUDA_SUCCESS", "no error"},
    {1, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {3, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {4, "CUDA_ERROR_DEINITIALIZED", "driver shutting down"},
    {35, "CUDA_ERROR_INSUFFICIENT_DRIVER",
     "CUDA driver version is insufficient for CUDA runtime version"},
    {100, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {101, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {200, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {201, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {209, "CUDA_ERROR_NO_BINARY_FOR_GPU", "no kernel image is available for execution on the device"},
    {218, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
    {222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
     "the provided PTX was compiled with an unsupported toolchain."},
    {400, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {500, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {700, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"},
    {701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "too many resources requested for launch"},
    {702, "CUDA_ERROR_LAUNCH_TIMEOUT", "the launch timed out and was terminated"},
    {719, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
    {999, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int initialized;

/*--- Log and injected failures ------------------------------------------------*/

__attribute__((format(printf, 1, 2))) static void log_line(const char *format, ...) {
  const char *path = getenv("CUVIL_FAKE_CUDA_LOG");
  if (!path || !*path)
    return;
  FILE *file = fopen(path, "a");
  if (!file)
    return;
  va_list arguments;
  va_start(arguments, format);
  vfprintf(file, format, arguments);
  va_end(arguments);
  fputc('\n', file);
  fclose(file);
}

static int env_int(const char *name, int fallback) {
  const char *value = getenv(name);
  return value && *value ? atoi(value) : fallback;
}

/* Calls per function name, for FUNCTION@N (below). */
static struct {
  char name[48];
  long calls;
} counters[64];

/* Forgets the calls counted for FUNCTION@N: a test starts from here. */
EXPORT void fake_cuda_reset_counts(void) {
  pthread_mutex_lock(&lock);
  memset(counters, 0, sizeof counters);
  pthread_mutex_unlock(&lock);
}


static long count_call(const char *function) {
  pthread_mutex_lock(&lock);
  long calls = 0;
  for (int i = 0; i < 64; ++i) {
    if (!counters[i].name[0])
      snprintf(counters[i].name, sizeof counters[i].name, "%s", function);
    if (strcmp(counters[i].name, function) == 0) {
      calls = ++counters[i].calls;
      break;
    }
  }
  pthread_mutex_unlock(&lock);
  return calls;
}

/* The code CUVIL_FAKE_CUDA_FAIL makes `function` return now, or 0. */
static CUresult injected(const char *function) {
  long calls = count_call(function);
  const char *spec = getenv("CUVIL_FAKE_CUDA_FAIL");
  size_t length = strlen(function);
  while (spec && *spec) {
    const char *end = strchr(spec, ',');
    size_t item = end ? (size_t)(end - spec) : strlen(spec);
    if (item >= length && strncmp(spec, function, length) == 0 &&
        (item == length || spec[length] == ':' || spec[length] == '@')) {
      CUresult code = UNKNOWN;
      long from = 1;
      const char *rest = spec + length;
      if (*rest == ':') {
        char *after = NULL;
        code = (CUresult)strtol(rest + 1, &after, 10);
        rest = after;
      }
      if (*rest == '@')
        from = strtol(rest + 1, NULL, 10);
      if (calls >= from) {
        log_line("%s -> injected %d", function, code);
        return code;
      }
    }
    spec = end ? end + 1 : NULL;
  }
  return SUCCESS;
}

#define INJECT(function)                                                                   \
  do {                                                                                     \
    CUresult injected_result = injected(function);                                         \
    if (injected_result != SUCCESS)                                                        \
      return injected_result;                                                              \
  } while (0)

/*--- Memory -------------------------------------------------------------------*/

typedef struct allocation {
  unsigned char *data;
  size_t bytes;
  struct allocation *next;
} allocation;
static allocation *allocations;
static long live_allocations;

/* Whether [pointer, pointer + bytes) lies inside one live allocation. */
static int inside(CUdeviceptr pointer, size_t bytes) {
  pthread_mutex_lock(&lock);
  int found = 0;
  for (allocation *a = allocations; a && !found; a = a->next) {
    uintptr_t begin = (uintptr_t)a->data;
    found = pointer >= begin && pointer - begin <= a->bytes && bytes <= a->bytes - (pointer - begin);
  }
  pthread_mutex_unlock(&lock);
  return found;
}

/* Live allocations: a test's leak check after destroy. */
EXPORT long fake_cuda_live_allocations(void) { return live_allocations; }


/*--- Contexts and streams -------------------------------------------------------*/

struct CUctx_st {
  int device;
  int references;
};
static struct CUctx_st primary[16];
static _Thread_local struct CUctx_st *context_stack[16];
static _Thread_local int context_depth;

#define STREAM_MAGIC 0x53545245u
struct CUstream_st {
  unsigned magic;
};

static CUresult need_context(void) {
  if (!initialized)
    return NOT_INITIALIZED;
  return context_depth > 0 ? SUCCESS : INVALID_CONTEXT;
}

static int good_stream(struct CUstream_st *stream) {
  return !stream || stream->magic == STREAM_MAGIC;
}

/*--- Modules --------------------------------------------------------------------*/

struct CUmod_st {
  int cubin;
  char *text;
  size_t size; /* a real cubin's bytes (text holds them), else 0 */
};
struct CUfunc_st {
  char name[64];
  int params;
};

/* The sm after `key` in text, or -1. */
static int find_sm(const char *text, const char *key) {
  const char *at = strstr(text, key);
  return at ? atoi(at + strlen(key)) : -1;
}

static int device_sm(void) { return env_int("CUVIL_FAKE_CUDA_SM", 80); }

/*--- The driver API -------------------------------------------------------------*/

EXPORT CUresult cuInit(unsigned flags) {
  log_line("cuInit %u", flags);
  INJECT("cuInit");
  if (env_int("CUVIL_FAKE_CUDA_DEVICES", 1) <= 0)
    return NO_DEVICE;
  initialized = 1;
  return SUCCESS;
}

EXPORT CUresult cuDeviceGetCount(int *count) {
  log_line("cuDeviceGetCount");
  INJECT("cuDeviceGetCount");
  if (!initialized)
    return NOT_INITIALIZED;
  int devices = env_int("CUVIL_FAKE_CUDA_DEVICES", 1);
  *count = devices < 0 ? 0 : devices > 16 ? 16 : devices;
  return SUCCESS;
}

EXPORT CUresult cuDeviceGet(CUdevice *device, int ordinal) {
  log_line("cuDeviceGet %d", ordinal);
  INJECT("cuDeviceGet");
  if (!initialized)
    return NOT_INITIALIZED;
  int devices = env_int("CUVIL_FAKE_CUDA_DEVICES", 1);
  if (ordinal < 0 || ordinal >= devices || ordinal >= 16)
    return INVALID_DEVICE;
  *device = ordinal;
  return SUCCESS;
}

EXPORT CUresult cuDeviceGetAttribute(int *value, int attribute, CUdevice device) {
  log_line("cuDeviceGetAttribute %d device=%d", attribute, device);
  INJECT("cuDeviceGetAttribute");
  if (!initialized)
    return NOT_INITIALIZED;
  if (attribute == 75)
    *value = device_sm() / 10;
  else if (attribute == 76)
    *value = device_sm() % 10;
  else
    return INVALID_VALUE;
  return SUCCESS;
}

EXPORT CUresult cuDeviceGetName(char *name, int length, CUdevice device) {
  log_line("cuDeviceGetName device=%d", device);
  INJECT("cuDeviceGetName");
  if (!initialized)
    return NOT_INITIALIZED;
  snprintf(name, (size_t)length, "Cuvil Fake GPU %d", device);
  return SUCCESS;
}

EXPORT CUresult cuDevicePrimaryCtxRetain(struct CUctx_st **context, CUdevice device) {
  log_line("cuDevicePrimaryCtxRetain device=%d", device);
  INJECT("cuDevicePrimaryCtxRetain");
  if (!initialized)
    return NOT_INITIALIZED;
  if (device < 0 || device >= 16)
    return INVALID_DEVICE;
  primary[device].device = device;
  primary[device].references += 1;
  *context = &primary[device];
  return SUCCESS;
}

EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice device) {
  if (device >= 0 && device < 16 && primary[device].references > 0)
    primary[device].references -= 1;
  log_line("cuDevicePrimaryCtxRelease_v2 device=%d references=%d", device,
           device >= 0 && device < 16 ? primary[device].references : -1);
  INJECT("cuDevicePrimaryCtxRelease_v2");
  return SUCCESS;
}

EXPORT CUresult cuCtxPushCurrent_v2(struct CUctx_st *context) {
  INJECT("cuCtxPushCurrent_v2");
  if (!context || context->references <= 0 || context_depth >= 16)
    return INVALID_CONTEXT;
  context_stack[context_depth++] = context;
  return SUCCESS;
}

EXPORT CUresult cuCtxPopCurrent_v2(struct CUctx_st **context) {
  INJECT("cuCtxPopCurrent_v2");
  if (context_depth <= 0)
    return INVALID_CONTEXT;
  struct CUctx_st *top = context_stack[--context_depth];
  if (context)
    *context = top;
  return SUCCESS;
}

EXPORT CUresult cuModuleLoadDataEx(struct CUmod_st **module, const void *image,
                                   unsigned num_options, CUjit_option *options, void **values) {
  const char *text = image;
  int cubin = memcmp(text, "\x7f" "ELF", 4) == 0;
  /* A real cubin: its size from the ELF header (section headers last). */
  size_t real_size = 0;
  if (cubin && (unsigned char)text[7] == 0x41 && text[4] == 2) {
    uint64_t shoff;
    uint16_t shentsize, shnum;
    memcpy(&shoff, text + 0x28, 8);
    memcpy(&shentsize, text + 0x3a, 2);
    memcpy(&shnum, text + 0x3c, 2);
    real_size = (size_t)shoff + (size_t)shentsize * shnum;
  }
  log_line("cuModuleLoadDataEx kind=%s bytes=%zu", cubin ? "cubin" : "ptx",
           real_size ? real_size : strlen(text));
  char *log = NULL;
  size_t log_size = 0;
  for (unsigned i = 0; i < num_options; ++i) {
    if (options[i] == 5)
      log = values[i];
    else if (options[i] == 6)
      log_size = (size_t)(uintptr_t)values[i];
  }
  if (log && log_size)
    log[0] = '\0';
  INJECT("cuModuleLoadDataEx");
  CUresult result = need_context();
  if (result != SUCCESS)
    return result;
  int sm = device_sm();
  if (real_size) {
    uint32_t flags;
    memcpy(&flags, text + 0x30, 4);
    int target = (int)((flags >> 8) & 0xff);
    if (target / 10 != sm / 10 || target > sm)
      return NO_BINARY_FOR_GPU;
  } else if (cubin) {
    int target = find_sm(text, "cubin sm_");
    if (target < 0)
      return INVALID_IMAGE;
    if (target / 10 != sm / 10 || target > sm)
      return NO_BINARY_FOR_GPU;
  } else {
    int target = find_sm(text, ".target sm_");
    if (!strstr(text, ".version") || target < 0) {
      if (log && log_size)
        snprintf(log, log_size, "ptxas application ptx input, line 1; fatal   : Parsing error "
                                "near '%.16s': syntax error\n", text);
      return INVALID_PTX;
    }
    if (target > sm) {
      if (log && log_size)
        snprintf(log, log_size, "ptxas fatal   : SM version specified by .target (sm_%d) is "
                                "higher than the device's (sm_%d)\n", target, sm);
      return INVALID_PTX;
    }
  }
  struct CUmod_st *loaded = calloc(1, sizeof *loaded);
  if (loaded && real_size && (loaded->text = malloc(real_size)))
    memcpy(loaded->text, text, real_size);
  else if (loaded && !real_size)
    loaded->text = strdup(text);
  if (!loaded || !loaded->text) {
    free(loaded);
    return OUT_OF_MEMORY;
  }
  loaded->size = real_size;
  loaded->cubin = cubin;
  *module = loaded;
  return SUCCESS;
}

EXPORT CUresult cuModuleUnload(struct CUmod_st *module) {
  log_line("cuModuleUnload");
  INJECT("cuModuleUnload");
  if (!module)
    return INVALID_HANDLE;
  free(module->text);
  free(module);
  return SUCCESS;
}

EXPORT CUresult cuModuleGetFunction(struct CUfunc_st **function, struct CUmod_st *module,
                                    const char *name) {
  log_line("cuModuleGetFunction name=%s", name);
  INJECT("cuModuleGetFunction");
  if (!module)
    return INVALID_HANDLE;
  size_t length = strlen(name);
  if (module->size) { /* a real cubin: the name in its string table */
    if (!memmem(module->text, module->size, name, length + 1))
      return NOT_FOUND;
    struct CUfunc_st *found = calloc(1, sizeof *found);
    if (!found)
      return OUT_OF_MEMORY;
    snprintf(found->name, sizeof found->name, "%s", name);
    found->params = -1; /* not known: not checked */
    static struct CUfunc_st *kept_real[4096];
    static int num_kept_real;
    pthread_mutex_lock(&lock);
    if (num_kept_real < 4096)
      kept_real[num_kept_real++] = found;
    pthread_mutex_unlock(&lock);
    *function = found;
    return SUCCESS;
  }
  for (const char *at = strstr(module->text, ".entry "); at; at = strstr(at + 1, ".entry ")) {
    const char *entry = at + 7;
    if (strncmp(entry, name, length) != 0 || entry[length] != '(')
      continue;
    struct CUfunc_st *found = calloc(1, sizeof *found);
    if (!found)
      return OUT_OF_MEMORY;
    snprintf(found->name, sizeof found->name, "%s", name);
    const char *close = strchr(entry, ')');
    for (const char *p = strstr(entry, ".param"); p && (!close || p < close);
         p = strstr(p + 1, ".param"))
      found->params += 1;
    /* Functions live as long as their module in the real driver; the fake
     * keeps them on a list freed at exit, so leak checkers stay quiet. */
    static struct CUfunc_st *kept[256];
    static int num_kept;
    pthread_mutex_lock(&lock);
    if (num_kept < 256)
      kept[num_kept++] = found;
    pthread_mutex_unlock(&lock);
    *function = found;
    return SUCCESS;
  }
  return NOT_FOUND;
}

EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *pointer, size_t bytes) {
  log_line("cuMemAlloc_v2 bytes=%zu", bytes);
  INJECT("cuMemAlloc_v2");
  CUresult result = need_context();
  if (result != SUCCESS)
    return result;
  if (bytes == 0)
    return INVALID_VALUE;
  allocation *a = malloc(sizeof *a);
  unsigned char *data = a ? malloc(bytes) : NULL;
  if (!data) {
    free(a);
    return OUT_OF_MEMORY;
  }
  memset(data, 0xA5, bytes); /* device memory starts as garbage */
  a->data = data, a->bytes = bytes;
  pthread_mutex_lock(&lock);
  a->next = allocations, allocations = a;
  live_allocations += 1;
  pthread_mutex_unlock(&lock);
  *pointer = (CUdeviceptr)(uintptr_t)data;
  return SUCCESS;
}

EXPORT CUresult cuMemFree_v2(CUdeviceptr pointer) {
  log_line("cuMemFree_v2");
  INJECT("cuMemFree_v2");
  CUresult result = need_context();
  if (result != SUCCESS)
    return result;
  pthread_mutex_lock(&lock);
  for (allocation **link = &allocations; *link; link = &(*link)->next)
    if ((uintptr_t)(*link)->data == pointer) {
      allocation *a = *link;
      *link = a->next;
      live_allocations -= 1;
      pthread_mutex_unlock(&lock);
      free(a->data);
      free(a);
      return SUCCESS;
    }
  pthread_mutex_unlock(&lock);
  return INVALID_VALUE;
}

static CUresult copy_to_device(const char *function, CUdeviceptr destination, const void *source,
                               size_t bytes, struct CUstream_st *stream) {
  log_line("%s bytes=%zu", function, bytes);
  INJECT(function);
  CUresult result = need_context();
  if (result != SUCCESS)
    return result;
  if (!good_stream(stream))
    return INVALID_HANDLE;
  if (!inside(destination, bytes) || !source)
    return INVALID_VALUE;
  memcpy((void *)(uintptr_t)destination, source, bytes);
  return SUCCESS;
}

EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr destination, const void *source, size_t bytes) {
  return copy_to_device("cuMemcpyHtoD_v2", destination, source, bytes, NULL);
}

EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr destination, const void *source, size_t bytes,
                                     struct CUstream_st *stream) {
  return copy_to_device("cuMemcpyHtoDAsync_v2", destination, source, bytes, stream);
}

static CUresult copy_to_host(const char *function, void *destination, CUdeviceptr source,
                             size_t bytes, struct CUstream_st *stream) {
  log_line("%s bytes=%zu", function, bytes);
  INJECT(function);
  CUresult result = need_context();
  if (result != SUCCESS)
    return result;
  if (!good_stream(stream))
    return INVALID_HANDLE;
  if (!inside(source, bytes) || !destination)
    return INVALID_VALUE;
  memcpy(destination, (const void *)(uintptr_t)source, bytes);
  return SUCCESS;
}

EXPORT CUresult cuMemcpyDtoH_v2(void *destination, CUdeviceptr source, size_t bytes) {
  return copy_to_host("cuMemcpyDtoH_v2", destination, source, bytes, NULL);
}

EXPORT CUresult cuMemcpyDtoHAsync_v2(void *destination, CUdeviceptr source, size_t bytes,
                                     struct CUstream_st *stream) {
  return copy_to_host("cuMemcpyDtoHAsync_v2", destination, source, bytes, stream);
}

EXPORT CUresult cuStreamCreate(struct CUstream_st **stream, unsigned flags) {
  log_line("cuStreamCreate flags=%u", flags);
  INJECT("cuStreamCreate");
  CUresult result = need_context();
  if (result != SUCCESS)
    return result;
  struct CUstream_st *created = malloc(sizeof *created);
  if (!created)
    return OUT_OF_MEMORY;
  created->magic = STREAM_MAGIC;
  *stream = created;
  return SUCCESS;
}

EXPORT CUresult cuStreamDestroy_v2(struct CUstream_st *stream) {
  log_line("cuStreamDestroy_v2");
  INJECT("cuStreamDestroy_v2");
  if (!stream || stream->magic != STREAM_MAGIC)
    return INVALID_HANDLE;
  stream->magic = 0;
  free(stream);
  return SUCCESS;
}

EXPORT CUresult cuStreamSynchronize(struct CUstream_st *stream) {
  log_line("cuStreamSynchronize");
  INJECT("cuStreamSynchronize");
  return good_stream(stream) ? SUCCESS : INVALID_HANDLE;
}

EXPORT CUresult cuLaunchKernel(struct CUfunc_st *function, unsigned grid_x, unsigned grid_y,
                               unsigned grid_z, unsigned block_x, unsigned block_y,
                               unsigned block_z, unsigned shared_bytes,
                               struct CUstream_st *stream, void **params, void **extra) {
  (void)extra;
  log_line("cuLaunchKernel name=%s grid=%u,%u,%u block=%u,%u,%u shared=%u params=%d",
           function ? function->name : "(null)", grid_x, grid_y, grid_z, block_x, block_y,
           block_z, shared_bytes, function ? function->params : -1);
  INJECT("cuLaunchKernel");
  CUresult result = need_context();
  if (result != SUCCESS)
    return result;
  if (!function || !good_stream(stream))
    return INVALID_HANDLE;
  if (function->params > 0 && !params)
    return INVALID_VALUE;
  if (strcmp(function->name, "fake_copy") == 0 && function->params == 3) {
    CUdeviceptr source = *(CUdeviceptr *)params[0], destination = *(CUdeviceptr *)params[1];
    size_t bytes = (size_t) * (uint64_t *)params[2];
    if (!inside(source, bytes) || !inside(destination, bytes))
      return ILLEGAL_ADDRESS;
    memmove((void *)(uintptr_t)destination, (const void *)(uintptr_t)source, bytes);
  } else if (strcmp(function->name, "fake_add") == 0 && function->params == 4) {
    CUdeviceptr a = *(CUdeviceptr *)params[0], b = *(CUdeviceptr *)params[1],
                out = *(CUdeviceptr *)params[2];
    size_t n = (size_t) * (uint64_t *)params[3];
    if (!inside(a, n * 4) || !inside(b, n * 4) || !inside(out, n * 4))
      return ILLEGAL_ADDRESS;
    for (size_t i = 0; i < n; ++i)
      ((float *)(uintptr_t)out)[i] = ((const float *)(uintptr_t)a)[i] + ((const float *)(uintptr_t)b)[i];
  }
  return SUCCESS;
}

EXPORT CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total_bytes) {
  *free_bytes = (size_t)1 << 33, *total_bytes = (size_t)1 << 34;
  return SUCCESS;
}

EXPORT CUresult cuGetErrorName(CUresult result, const char **name) {
  for (size_t i = 0; i < sizeof kErrors / sizeof kErrors[0]; ++i)
    if (kErrors[i].code == result) {
      *name = kErrors[i].name;
      return SUCCESS;
    }
  *name = NULL;
  return INVALID_VALUE;
}

EXPORT CUresult cuGetErrorString(CUresult result, const char **text) {
  for (size_t i = 0; i < sizeof kErrors / sizeof kErrors[0]; ++i)
    if (kErrors[i].code == result) {
      *text = kErrors[i].text;
      return SUCCESS;
    }
  *text = NULL;
  return INVALID_VALUE;
}
