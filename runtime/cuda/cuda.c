/*===- runtime/cuda/cuda.c - The CUDA backend (--target cuda) --------------===*
 *
 * Runs instances of a library with CUDA code (cuvil_rt_cuda_model) on an
 * NVIDIA GPU through the CUDA driver API. The driver, libcuda.so.1, is
 * loaded with dlopen at create (CUVIL_CUDA_DRIVER names another file, as
 * the tests do), so a library starts on a machine without one: it runs on
 * the CPU when it has CPU code, or fails create with the reason. No CUDA
 * header: the few types and functions are declared here with the driver's
 * ABI (the `_v2` names where the driver has them).
 *
 * The C API (core/api.c) drives it through the table registered at load
 * time (cuvil_rt_device_backend); the generated entry calls
 * cuvil_rt_cuda_launch and cuvil_rt_cuda_global, which act on the instance
 * whose run is in progress on this thread.
 *
 *===----------------------------------------------------------------------===*/
#include "../core/internal.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Libraries without CUDA code lack it: the backend then never registers. */
extern const cuvil_rt_cuda_desc cuvil_rt_cuda_model __attribute__((weak));

/*--- The driver API ----------------------------------------------------------*/

typedef int CUresult;
typedef int CUdevice;
typedef int CUjit_option;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;

enum {
  CUDA_SUCCESS = 0,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
  CU_JIT_ERROR_LOG_BUFFER = 5,
  CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
  CU_STREAM_NON_BLOCKING = 1,
};

typedef struct cuda_driver {
  void *handle;
  CUresult (*Init)(unsigned flags);
  CUresult (*DeviceGetCount)(int *count);
  CUresult (*DeviceGet)(CUdevice *device, int ordinal);
  CUresult (*DeviceGetAttribute)(int *value, int attribute, CUdevice device);
  CUresult (*DeviceGetName)(char *name, int length, CUdevice device);
  CUresult (*DevicePrimaryCtxRetain)(CUcontext *context, CUdevice device);
  CUresult (*DevicePrimaryCtxRelease)(CUdevice device);
  CUresult (*CtxPushCurrent)(CUcontext context);
  CUresult (*CtxPopCurrent)(CUcontext *context);
  CUresult (*ModuleLoadDataEx)(CUmodule *module, const void *image, unsigned num_options,
                               CUjit_option *options, void **values);
  CUresult (*ModuleUnload)(CUmodule module);
  CUresult (*ModuleGetFunction)(CUfunction *function, CUmodule module, const char *name);
  CUresult (*MemAlloc)(CUdeviceptr *pointer, size_t bytes);
  CUresult (*MemFree)(CUdeviceptr pointer);
  CUresult (*MemcpyHtoDAsync)(CUdeviceptr destination, const void *source, size_t bytes,
                              CUstream stream);
  CUresult (*MemcpyDtoHAsync)(void *destination, CUdeviceptr source, size_t bytes,
                              CUstream stream);
  CUresult (*StreamCreate)(CUstream *stream, unsigned flags);
  CUresult (*StreamDestroy)(CUstream stream);
  CUresult (*StreamSynchronize)(CUstream stream);
  CUresult (*LaunchKernel)(CUfunction function, unsigned grid_x, unsigned grid_y,
                           unsigned grid_z, unsigned block_x, unsigned block_y,
                           unsigned block_z, unsigned shared_bytes, CUstream stream,
                           void **params, void **extra);
  CUresult (*GetErrorName)(CUresult result, const char **name);
  CUresult (*GetErrorString)(CUresult result, const char **text);
} cuda_driver;

/* "CUDA_ERROR_OUT_OF_MEMORY: out of memory" into buffer. */
static const char *result_text(const cuda_driver *driver, CUresult result, char *buffer,
                               size_t size) {
  const char *name = NULL, *text = NULL;
  if (driver->GetErrorName && driver->GetErrorName(result, &name) != CUDA_SUCCESS)
    name = NULL;
  if (driver->GetErrorString && driver->GetErrorString(result, &text) != CUDA_SUCCESS)
    text = NULL;
  if (name && text)
    snprintf(buffer, size, "%s: %s", name, text);
  else if (name)
    snprintf(buffer, size, "%s", name);
  else
    snprintf(buffer, size, "CUresult %d", (int)result);
  return buffer;
}

/*--- Instances ---------------------------------------------------------------*/

typedef struct device_buffer {
  CUdeviceptr pointer; /* 0 when none */
  uint64_t capacity;
} device_buffer;

/* One uploaded constant (weights): the library's host copy -> the device's. */
typedef struct uploaded {
  const void *host; /* NULL: a free slot */
  uint64_t bytes;
  CUdeviceptr device;
} uploaded;

typedef struct cuda_instance {
  const cuvil_rt_model_desc *desc;
  const cuvil_rt_cuda_desc *cuda;
  cuda_driver driver;
  int ordinal;
  CUdevice device;
  bool retained; /* the primary context */
  CUcontext context;
  CUmodule module;
  CUfunction *functions; /* per kernel of cuda->kernel_names */
  CUstream stream;
  CUdeviceptr arena;
  device_buffer *inputs, *outputs;
  void **input_pointers, **output_pointers; /* what the entry gets */
  /* Open addressing on the host pointer; capacity a power of two. */
  uploaded *uploads;
  size_t num_uploads, upload_capacity;
  /* The run in progress: its stream and the first failure. */
  CUstream run_stream;
  cuvil_status failure;
  char message[CUVIL_RT_FAILURE_BYTES];
  int32_t last_kernel; /* -1 before the first launch */
  /* The model's run-time checks: the device word the run's status lands in
   * (cuvil_rt_cuda_status; 0 when the model has none), read after the run. */
  CUdeviceptr status_pointer;
  int32_t status_host;
  char description[256];
} cuda_instance;

/* The instance whose run is in progress on this thread (the entry's calls
 * of cuvil_rt_cuda_launch and cuvil_rt_cuda_global act on it). */
static _Thread_local cuda_instance *current_instance;

__attribute__((format(printf, 3, 4))) static void record(cuda_instance *instance,
                                                          cuvil_status status,
                                                          const char *format, ...) {
  if (instance->failure != CUVIL_OK)
    return; /* the first failure is the one to report */
  va_list arguments;
  va_start(arguments, format);
  vsnprintf(instance->message, sizeof instance->message, format, arguments);
  va_end(arguments);
  instance->failure = status;
}

/* Records a failed driver call `what` (nothing when it succeeded). */
static bool check_call(cuda_instance *instance, CUresult result, cuvil_status status,
                       const char *what) {
  if (result == CUDA_SUCCESS)
    return true;
  char text[256];
  record(instance, status, "%s failed: %s", what, result_text(&instance->driver, result, text,
                                                              sizeof text));
  return false;
}

/*--- Loading the driver and choosing the device ------------------------------*/

/* Failures of this kind mean "no usable GPU here": an instance of a library
 * with CPU code runs on the CPU instead (CUVIL_DEVICE_AUTO). */
typedef enum open_result { OPENED, NO_DEVICE, BROKEN } open_result;

static open_result load_driver(cuda_instance *instance) {
  const char *path = getenv("CUVIL_CUDA_DRIVER");
  if (!path || !*path)
    path = "libcuda.so.1";
  cuda_driver *d = &instance->driver;
  dlerror();
  d->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!d->handle) {
    /* dlerror names the file already, as in "libcuda.so.1: cannot open ...". */
    const char *why = dlerror();
    if (why && strncmp(why, path, strlen(path)) == 0)
      record(instance, CUVIL_ERR_DEVICE, "no CUDA driver (%s)", why);
    else
      record(instance, CUVIL_ERR_DEVICE, "no CUDA driver (%s: %s)", path,
             why ? why : "cannot be loaded");
    return NO_DEVICE;
  }
  struct {
    void *slot;
    const char *name;
  } symbols[] = {
#define SYMBOL(field, name) {(void *)&d->field, name}
      SYMBOL(Init, "cuInit"),
      SYMBOL(DeviceGetCount, "cuDeviceGetCount"),
      SYMBOL(DeviceGet, "cuDeviceGet"),
      SYMBOL(DeviceGetAttribute, "cuDeviceGetAttribute"),
      SYMBOL(DeviceGetName, "cuDeviceGetName"),
      SYMBOL(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"),
      SYMBOL(DevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2"),
      SYMBOL(CtxPushCurrent, "cuCtxPushCurrent_v2"),
      SYMBOL(CtxPopCurrent, "cuCtxPopCurrent_v2"),
      SYMBOL(ModuleLoadDataEx, "cuModuleLoadDataEx"),
      SYMBOL(ModuleUnload, "cuModuleUnload"),
      SYMBOL(ModuleGetFunction, "cuModuleGetFunction"),
      SYMBOL(MemAlloc, "cuMemAlloc_v2"),
      SYMBOL(MemFree, "cuMemFree_v2"),
      SYMBOL(MemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2"),
      SYMBOL(MemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2"),
      SYMBOL(StreamCreate, "cuStreamCreate"),
      SYMBOL(StreamDestroy, "cuStreamDestroy_v2"),
      SYMBOL(StreamSynchronize, "cuStreamSynchronize"),
      SYMBOL(LaunchKernel, "cuLaunchKernel"),
      SYMBOL(GetErrorName, "cuGetErrorName"),
      SYMBOL(GetErrorString, "cuGetErrorString"),
#undef SYMBOL
  };
  for (size_t i = 0; i < sizeof symbols / sizeof symbols[0]; ++i) {
    void *function = dlsym(d->handle, symbols[i].name);
    if (!function) {
      record(instance, CUVIL_ERR_DEVICE,
             "the CUDA driver %s has no %s (a driver older than CUDA 11?)", path,
             symbols[i].name);
      return NO_DEVICE;
    }
    memcpy(symbols[i].slot, &function, sizeof function);
  }
  return OPENED;
}

static int image_sm_compare(const void *a, const void *b) {
  return *(const int32_t *)a - *(const int32_t *)b;
}

/* "sm_80, sm_90": the architectures of the images, once each. */
static void list_architectures(const cuvil_rt_cuda_desc *cuda, int32_t kind, char *buffer,
                               size_t size) {
  int32_t sms[64];
  int32_t count = 0;
  for (int32_t i = 0; i < cuda->num_images && count < 64; ++i)
    if (kind < 0 || cuda->images[i].kind == kind)
      sms[count++] = cuda->images[i].sm;
  qsort(sms, (size_t)count, sizeof sms[0], image_sm_compare);
  size_t used = 0;
  buffer[0] = '\0';
  for (int32_t i = 0; i < count; ++i) {
    if (i > 0 && sms[i] == sms[i - 1])
      continue;
    int written = snprintf(buffer + used, used < size ? size - used : 0, "%ssm_%d",
                           used ? ", " : "", (int)sms[i]);
    if (written > 0)
      used += (size_t)written;
  }
}

/* The image to load on a device of architecture `sm`: a cubin of the same
 * major architecture and a minor one at most the device's (the newest
 * such), else the newest PTX not newer than the device (the driver
 * compiles it); -1 when none fits. */
static int32_t choose_image(const cuvil_rt_cuda_desc *cuda, int sm) {
  int32_t best = -1;
  for (int32_t i = 0; i < cuda->num_images; ++i) {
    const cuvil_rt_cuda_image *image = &cuda->images[i];
    if (image->kind == CUVIL_RT_CUDA_CUBIN && image->sm / 10 == sm / 10 && image->sm <= sm &&
        (best < 0 || image->sm > cuda->images[best].sm))
      best = i;
  }
  if (best >= 0)
    return best;
  for (int32_t i = 0; i < cuda->num_images; ++i) {
    const cuvil_rt_cuda_image *image = &cuda->images[i];
    if (image->kind == CUVIL_RT_CUDA_PTX && image->sm <= sm &&
        (best < 0 || image->sm > cuda->images[best].sm))
      best = i;
  }
  return best;
}

/* Driver, device, architecture and image: everything that decides whether
 * this machine can run the library's GPU code. *image gets the choice. */
static open_result open_device(cuda_instance *instance, int32_t *image) {
  open_result opened = load_driver(instance);
  if (opened != OPENED)
    return opened;
  cuda_driver *d = &instance->driver;
  char text[256];
  CUresult result = d->Init(0);
  if (result != CUDA_SUCCESS) {
    record(instance, CUVIL_ERR_DEVICE, "cuInit failed: %s",
           result_text(d, result, text, sizeof text));
    return NO_DEVICE;
  }
  int count = 0;
  if ((result = d->DeviceGetCount(&count)) != CUDA_SUCCESS) {
    record(instance, CUVIL_ERR_DEVICE, "cuDeviceGetCount failed: %s",
           result_text(d, result, text, sizeof text));
    return NO_DEVICE;
  }
  if (count <= 0) {
    record(instance, CUVIL_ERR_DEVICE, "no CUDA device");
    return NO_DEVICE;
  }
  const char *chosen = getenv("CUVIL_CUDA_DEVICE");
  instance->ordinal = 0;
  if (chosen && *chosen) {
    char *end = NULL;
    long ordinal = strtol(chosen, &end, 10);
    if (*end != '\0' || ordinal < 0 || ordinal >= count) {
      record(instance, CUVIL_ERR_DEVICE,
             "CUVIL_CUDA_DEVICE is '%s', but the devices are 0..%d", chosen, count - 1);
      return BROKEN;
    }
    instance->ordinal = (int)ordinal;
  }
  int major = 0, minor = 0;
  char name[128] = "";
  if (!check_call(instance, d->DeviceGet(&instance->device, instance->ordinal),
                  CUVIL_ERR_DEVICE, "cuDeviceGet") ||
      !check_call(instance,
                  d->DeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                                        instance->device),
                  CUVIL_ERR_DEVICE, "cuDeviceGetAttribute (compute capability major)") ||
      !check_call(instance,
                  d->DeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                                        instance->device),
                  CUVIL_ERR_DEVICE, "cuDeviceGetAttribute (compute capability minor)") ||
      !check_call(instance, d->DeviceGetName(name, (int)sizeof name - 1, instance->device),
                  CUVIL_ERR_DEVICE, "cuDeviceGetName"))
    return NO_DEVICE;
  name[sizeof name - 1] = '\0';
  int sm = major * 10 + minor;
  *image = choose_image(instance->cuda, sm);
  if (*image < 0) {
    char all[192], ptx[192];
    list_architectures(instance->cuda, -1, all, sizeof all);
    list_architectures(instance->cuda, CUVIL_RT_CUDA_PTX, ptx, sizeof ptx);
    bool older = true;
    for (int32_t i = 0; i < instance->cuda->num_images; ++i)
      older &= sm < instance->cuda->images[i].sm;
    if (older)
      record(instance, CUVIL_ERR_DEVICE,
             "device %d '%s' is sm_%d, older than every architecture this library was "
             "compiled for (%s)",
             instance->ordinal, name, sm, all);
    else
      record(instance, CUVIL_ERR_DEVICE,
             "device %d '%s' is sm_%d: this library has cubins for %s only (none of its "
             "major architecture) and %s%s",
             instance->ordinal, name, sm, all, ptx[0] ? "PTX newer than it: " : "no PTX",
             ptx[0] ? ptx : " the driver could compile for it");
    return NO_DEVICE;
  }
  const cuvil_rt_cuda_image *picked = &instance->cuda->images[*image];
  snprintf(instance->description, sizeof instance->description,
           "cuda:%s (sm_%d, device %d, %s sm_%d)", name, sm, instance->ordinal,
           picked->kind == CUVIL_RT_CUDA_PTX ? "PTX compiled by the driver from" : "cubin",
           (int)picked->sm);
  return OPENED;
}

/*--- Memory ------------------------------------------------------------------*/

static bool allocate(cuda_instance *instance, CUdeviceptr *pointer, uint64_t bytes,
                     const char *what) {
  *pointer = 0;
  if (bytes == 0)
    return true;
  char text[256];
  CUresult result = bytes > SIZE_MAX ? 2 /* CUDA_ERROR_OUT_OF_MEMORY */
                                     : instance->driver.MemAlloc(pointer, (size_t)bytes);
  if (result == CUDA_SUCCESS)
    return true;
  *pointer = 0;
  record(instance, result == 2 ? CUVIL_ERR_OUT_OF_MEMORY : CUVIL_ERR_DEVICE,
         "cannot allocate %llu bytes of GPU memory for %s: cuMemAlloc_v2 failed: %s",
         (unsigned long long)bytes, what, result_text(&instance->driver, result, text,
                                                      sizeof text));
  return false;
}

static void release(cuda_instance *instance, CUdeviceptr *pointer) {
  if (*pointer)
    instance->driver.MemFree(*pointer);
  *pointer = 0;
}

/* A buffer holding at least `bytes` (its contents are not kept). */
static bool reserve(cuda_instance *instance, device_buffer *buffer, uint64_t bytes,
                    const char *role, const char *name) {
  if (bytes <= buffer->capacity && (buffer->pointer || bytes == 0))
    return true;
  release(instance, &buffer->pointer);
  buffer->capacity = 0;
  char what[192];
  snprintf(what, sizeof what, "%s '%s'", role, name);
  if (!allocate(instance, &buffer->pointer, bytes, what))
    return false;
  buffer->capacity = bytes;
  return true;
}

/* The largest bytes a tensor can take: its static sizes and the maxima of
 * its dynamic ones; false when a dynamic one has no maximum. */
static bool largest_bytes(const cuvil_rt_tensor_desc *tensor, uint64_t *bytes) {
  uint64_t total = cuvil_rt_dtype_bytes(tensor->dtype);
  for (int32_t d = 0; d < tensor->rank; ++d) {
    int64_t size = tensor->shape[d];
    if (size < 0)
      size = tensor->max_shape ? tensor->max_shape[d] : -1;
    if (size < 0)
      return false;
    if (__builtin_mul_overflow(total, (uint64_t)size, &total))
      total = UINT64_MAX;
  }
  *bytes = total;
  return true;
}

/*--- Create and destroy ------------------------------------------------------*/

static void destroy_instance(void *state) {
  cuda_instance *instance = state;
  if (!instance)
    return;
  cuda_driver *d = &instance->driver;
  /* Without the context current nothing can be freed; releasing the
   * primary context (its last reference) frees it all then. */
  bool pushed = instance->retained && d->CtxPushCurrent(instance->context) == CUDA_SUCCESS;
  if (pushed) {
    for (size_t i = 0; i < instance->upload_capacity; ++i)
      if (instance->uploads[i].host)
        release(instance, &instance->uploads[i].device);
    for (int32_t i = 0; instance->inputs && i < instance->desc->num_inputs; ++i)
      release(instance, &instance->inputs[i].pointer);
    for (int32_t i = 0; instance->outputs && i < instance->desc->num_outputs; ++i)
      release(instance, &instance->outputs[i].pointer);
    release(instance, &instance->arena);
  }
  /* These name their context themselves. */
  if (instance->stream)
    d->StreamDestroy(instance->stream);
  if (instance->module)
    d->ModuleUnload(instance->module);
  if (pushed) {
    CUcontext popped;
    d->CtxPopCurrent(&popped);
  }
  if (instance->retained)
    d->DevicePrimaryCtxRelease(instance->device);
  if (d->handle)
    dlclose(d->handle);
  free(instance->functions);
  free(instance->inputs);
  free(instance->outputs);
  free(instance->input_pointers);
  free(instance->output_pointers);
  free(instance->uploads);
  free(instance);
}

/* The description the generated code wrote, before anything trusts it. */
static bool check_cuda_desc(const cuvil_rt_cuda_desc *cuda, char *message, size_t size) {
  if (cuda->version != CUVIL_RT_CUDA_ABI_VERSION) {
    snprintf(message, size,
             "its CUDA code was generated for CUDA ABI %u but this runtime implements %u; "
             "re-export it with a matching cuvil-export",
             cuda->version, CUVIL_RT_CUDA_ABI_VERSION);
    return false;
  }
  bool good = cuda->entry && cuda->num_images > 0 && cuda->images && cuda->num_kernels >= 0 &&
              (cuda->num_kernels == 0 || cuda->kernel_names);
  for (int32_t i = 0; good && i < cuda->num_images; ++i) {
    const cuvil_rt_cuda_image *image = &cuda->images[i];
    good = image->data && image->size > 0 && image->sm > 0 &&
           (image->kind == CUVIL_RT_CUDA_CUBIN ||
            (image->kind == CUVIL_RT_CUDA_PTX &&
             ((const char *)image->data)[image->size] == '\0'));
  }
  for (int32_t i = 0; good && i < cuda->num_kernels; ++i)
    good = cuda->kernel_names[i] && cuda->kernel_names[i][0];
  if (!good)
    snprintf(message, size, "malformed description of its CUDA code");
  return good;
}

/* Context, module, kernels, stream and memory of an opened device. */
static bool set_up(cuda_instance *instance, int32_t chosen) {
  cuda_driver *d = &instance->driver;
  const cuvil_rt_model_desc *desc = instance->desc;
  const cuvil_rt_cuda_desc *cuda = instance->cuda;
  if (!check_call(instance, d->DevicePrimaryCtxRetain(&instance->context, instance->device),
                  CUVIL_ERR_DEVICE, "cuDevicePrimaryCtxRetain"))
    return false;
  instance->retained = true;
  if (!check_call(instance, d->CtxPushCurrent(instance->context), CUVIL_ERR_DEVICE,
                  "cuCtxPushCurrent_v2"))
    return false;
  bool good = false;
  const cuvil_rt_cuda_image *image = &cuda->images[chosen];
  char log[1024] = "";
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {log, (void *)(uintptr_t)(sizeof log - 1)};
  CUresult result = d->ModuleLoadDataEx(&instance->module, image->data, 2, options, values);
  if (result != CUDA_SUCCESS) {
    char text[256];
    log[sizeof log - 1] = '\0';
    size_t length = strlen(log);
    while (length > 0 && (log[length - 1] == '\n' || log[length - 1] == ' '))
      log[--length] = '\0';
    instance->module = NULL;
    record(instance, CUVIL_ERR_DEVICE, "loading its %s for sm_%d failed: %s%s%s",
           image->kind == CUVIL_RT_CUDA_PTX ? "PTX (compiled by the driver)" : "cubin",
           (int)image->sm, result_text(d, result, text, sizeof text), log[0] ? ": " : "", log);
    goto done;
  }
  for (int32_t k = 0; k < cuda->num_kernels; ++k) {
    result = d->ModuleGetFunction(&instance->functions[k], instance->module,
                                  cuda->kernel_names[k]);
    if (result != CUDA_SUCCESS) {
      char text[256];
      record(instance, CUVIL_ERR_DEVICE, "kernel '%s' is not in its %s for sm_%d: %s",
             cuda->kernel_names[k], image->kind == CUVIL_RT_CUDA_PTX ? "PTX" : "cubin",
             (int)image->sm, result_text(d, result, text, sizeof text));
      goto done;
    }
  }
  if (!check_call(instance, d->StreamCreate(&instance->stream, CU_STREAM_NON_BLOCKING),
                  CUVIL_ERR_DEVICE, "cuStreamCreate"))
    goto done;
  if (!allocate(instance, &instance->arena, desc->arena_bytes, "the arena (working memory)"))
    goto done;
  for (int32_t i = 0; i < desc->num_inputs; ++i) {
    uint64_t bytes;
    if (largest_bytes(&desc->inputs[i], &bytes) &&
        !reserve(instance, &instance->inputs[i], bytes, "input", desc->inputs[i].name))
      goto done;
  }
  for (int32_t i = 0; i < desc->num_outputs; ++i) {
    uint64_t bytes;
    if (largest_bytes(&desc->outputs[i], &bytes) &&
        !reserve(instance, &instance->outputs[i], bytes, "output", desc->outputs[i].name))
      goto done;
  }
  good = true;
done:;
  CUcontext popped;
  d->CtxPopCurrent(&popped);
  return good;
}

static cuvil_status create_instance(const cuvil_rt_model_desc *desc, int32_t option, void **state,
                                    char *message, size_t message_size) {
  *state = NULL;
  message[0] = '\0';
  const cuvil_rt_cuda_desc *cuda = &cuvil_rt_cuda_model;
  if (!check_cuda_desc(cuda, message, message_size))
    return CUVIL_ERR_ABI;
  if (option == CUVIL_DEVICE_CPU) {
    if (cuda->cpu_fallback)
      return CUVIL_OK;
    snprintf(message, message_size,
             "this library has no CPU code: re-export with --target x86_64,cuda");
    return CUVIL_ERR_DEVICE;
  }
  cuda_instance *instance = calloc(1, sizeof *instance);
  size_t inputs = desc->num_inputs > 0 ? (size_t)desc->num_inputs : 1;
  size_t outputs = desc->num_outputs > 0 ? (size_t)desc->num_outputs : 1;
  size_t kernels = cuda->num_kernels > 0 ? (size_t)cuda->num_kernels : 1;
  if (instance) {
    instance->desc = desc, instance->cuda = cuda, instance->last_kernel = -1;
    instance->functions = calloc(kernels, sizeof *instance->functions);
    instance->inputs = calloc(inputs, sizeof *instance->inputs);
    instance->outputs = calloc(outputs, sizeof *instance->outputs);
    instance->input_pointers = calloc(inputs, sizeof(void *));
    instance->output_pointers = calloc(outputs, sizeof(void *));
  }
  if (!instance || !instance->functions || !instance->inputs || !instance->outputs ||
      !instance->input_pointers || !instance->output_pointers) {
    destroy_instance(instance);
    snprintf(message, message_size, "out of memory creating a CUDA instance");
    return CUVIL_ERR_OUT_OF_MEMORY;
  }
  int32_t image = -1;
  open_result opened = open_device(instance, &image);
  if (opened == OPENED && set_up(instance, image)) {
    *state = instance;
    return CUVIL_OK;
  }
  snprintf(message, message_size, "%s", instance->message);
  cuvil_status status = instance->failure;
  destroy_instance(instance);
  /* No usable GPU: the CPU code, where there is some and the caller let us. */
  if (opened == NO_DEVICE && option == CUVIL_DEVICE_AUTO && cuda->cpu_fallback)
    return CUVIL_OK;
  return status;
}

static const char *describe_instance(const void *state) {
  return ((const cuda_instance *)state)->description;
}

/*--- Running -----------------------------------------------------------------*/

static cuvil_status run_instance(void *state, const cuvil_rt_device_run *run, int32_t *result,
                                 char *message, size_t message_size) {
  cuda_instance *instance = state;
  cuda_driver *d = &instance->driver;
  const cuvil_rt_model_desc *desc = instance->desc;
  instance->failure = CUVIL_OK;
  instance->message[0] = '\0';
  instance->last_kernel = -1;
  instance->status_pointer = 0;
  instance->status_host = 0;
  *result = 0;
  if (!check_call(instance, d->CtxPushCurrent(instance->context), CUVIL_ERR_DEVICE,
                  "cuCtxPushCurrent_v2")) {
    snprintf(message, message_size, "%s", instance->message);
    return instance->failure;
  }
  CUstream stream = run->device_pointers && run->stream ? (CUstream)run->stream : instance->stream;
  bool synchronize = !(run->device_pointers && run->stream);
  instance->run_stream = stream;
  char what[192];
  if (run->device_pointers) {
    for (int32_t i = 0; i < desc->num_inputs; ++i)
      instance->input_pointers[i] = run->inputs[i];
    for (int32_t i = 0; i < desc->num_outputs; ++i)
      instance->output_pointers[i] = run->outputs[i];
  } else {
    for (int32_t i = 0; i < desc->num_inputs && instance->failure == CUVIL_OK; ++i) {
      device_buffer *buffer = &instance->inputs[i];
      uint64_t bytes = run->input_bytes[i];
      if (!reserve(instance, buffer, bytes, "input", desc->inputs[i].name))
        break;
      instance->input_pointers[i] = (void *)(uintptr_t)buffer->pointer;
      snprintf(what, sizeof what, "cuMemcpyHtoDAsync_v2 of input '%s' (%llu bytes)",
               desc->inputs[i].name, (unsigned long long)bytes);
      if (bytes > 0)
        check_call(instance, d->MemcpyHtoDAsync(buffer->pointer, run->inputs[i], bytes, stream),
                   CUVIL_ERR_DEVICE, what);
    }
    for (int32_t i = 0; i < desc->num_outputs && instance->failure == CUVIL_OK; ++i) {
      device_buffer *buffer = &instance->outputs[i];
      if (!reserve(instance, buffer, run->output_bytes[i], "output", desc->outputs[i].name))
        break;
      instance->output_pointers[i] = (void *)(uintptr_t)buffer->pointer;
    }
  }
  if (instance->failure == CUVIL_OK) {
    cuda_instance *outer = current_instance;
    current_instance = instance;
    *result = instance->cuda->entry(instance->input_pointers, run->input_shapes,
                                    instance->output_pointers, run->output_shapes,
                                    (void *)(uintptr_t)instance->arena, NULL);
    current_instance = outer;
  }
  if (instance->failure == CUVIL_OK && *result == 0 && !run->device_pointers)
    for (int32_t i = 0; i < desc->num_outputs && instance->failure == CUVIL_OK; ++i) {
      uint64_t bytes = run->output_bytes[i];
      snprintf(what, sizeof what, "cuMemcpyDtoHAsync_v2 of output '%s' (%llu bytes)",
               desc->outputs[i].name, (unsigned long long)bytes);
      if (bytes > 0)
        check_call(instance,
                   d->MemcpyDtoHAsync(run->outputs[i], instance->outputs[i].pointer, bytes,
                                      stream),
                   CUVIL_ERR_DEVICE, what);
    }
  /* The checks' status: read back, so the run must finish here even on a
   * caller's stream. */
  if (instance->failure == CUVIL_OK && instance->status_pointer) {
    check_call(instance,
               d->MemcpyDtoHAsync(&instance->status_host, instance->status_pointer,
                                  sizeof(int32_t), stream),
               CUVIL_ERR_DEVICE, "cuMemcpyDtoHAsync_v2 of the run's status");
    synchronize = true;
  }
  /* Even after a failure: nothing of this run may still be running (or
   * copying into the caller's buffers) once the call returns. */
  if (synchronize) {
    CUresult synchronized = d->StreamSynchronize(stream);
    if (synchronized != CUDA_SUCCESS) {
      char text[256];
      if (instance->last_kernel >= 0)
        record(instance, CUVIL_ERR_DEVICE,
               "cuStreamSynchronize failed: %s (the last kernel launched was '%s')",
               result_text(d, synchronized, text, sizeof text),
               instance->cuda->kernel_names[instance->last_kernel]);
      else
        record(instance, CUVIL_ERR_DEVICE, "cuStreamSynchronize failed: %s",
               result_text(d, synchronized, text, sizeof text));
    }
  }
  if (instance->failure == CUVIL_OK && *result == 0 && instance->status_host != 0)
    *result = instance->status_host;
  CUcontext popped;
  d->CtxPopCurrent(&popped);
  instance->run_stream = NULL;
  if (instance->failure != CUVIL_OK)
    snprintf(message, message_size, "%s", instance->message);
  return instance->failure;
}

/*--- Called by the generated entry --------------------------------------------*/

void cuvil_rt_cuda_launch(int32_t kernel, int64_t grid_x, int64_t grid_y, int64_t grid_z,
                          int64_t block_x, int64_t block_y, int64_t block_z,
                          const int64_t *params, int32_t num_params) {
  cuda_instance *instance = current_instance;
  if (!instance || instance->failure != CUVIL_OK)
    return;
  const cuvil_rt_cuda_desc *cuda = instance->cuda;
  if (kernel < 0 || kernel >= cuda->num_kernels) {
    record(instance, CUVIL_ERR_DEVICE, "launch of kernel %d: the library has %d kernels",
           (int)kernel, (int)cuda->num_kernels);
    return;
  }
  const char *name = cuda->kernel_names[kernel];
  /* The driver's limits for every device since sm_30. */
  if (grid_x < 1 || grid_y < 1 || grid_z < 1 || grid_x > INT32_MAX || grid_y > 65535 ||
      grid_z > 65535 || block_x < 1 || block_y < 1 || block_z < 1 || block_x > 1024 ||
      block_y > 1024 || block_z > 64 || block_x * block_y * block_z > 1024) {
    record(instance, CUVIL_ERR_DEVICE,
           "launch of kernel '%s' with grid %lld x %lld x %lld and block %lld x %lld x %lld: "
           "outside the device's limits",
           name, (long long)grid_x, (long long)grid_y, (long long)grid_z, (long long)block_x,
           (long long)block_y, (long long)block_z);
    return;
  }
  if (num_params < 0 || (num_params > 0 && !params)) {
    record(instance, CUVIL_ERR_DEVICE, "launch of kernel '%s' with %d parameters", name,
           (int)num_params);
    return;
  }
  void *on_stack[32];
  void **slots = num_params <= 32 ? on_stack : malloc((size_t)num_params * sizeof(void *));
  if (!slots) {
    record(instance, CUVIL_ERR_OUT_OF_MEMORY, "out of memory launching kernel '%s'", name);
    return;
  }
  for (int32_t i = 0; i < num_params; ++i)
    slots[i] = (void *)(uintptr_t)&params[i]; /* the driver only reads them */
  CUresult result = instance->driver.LaunchKernel(
      instance->functions[kernel], (unsigned)grid_x, (unsigned)grid_y, (unsigned)grid_z,
      (unsigned)block_x, (unsigned)block_y, (unsigned)block_z, 0, instance->run_stream, slots,
      NULL);
  if (slots != on_stack)
    free(slots);
  char what[192];
  snprintf(what, sizeof what, "cuLaunchKernel of kernel '%s'", name);
  if (check_call(instance, result, CUVIL_ERR_DEVICE, what))
    instance->last_kernel = kernel;
}

static size_t hash_pointer(const void *pointer, size_t capacity) {
  uint64_t key = (uint64_t)(uintptr_t)pointer;
  key ^= key >> 33;
  key *= UINT64_C(0xff51afd7ed558ccd);
  key ^= key >> 33;
  return (size_t)key & (capacity - 1);
}

/* Doubles the table (or makes its first 64 slots). */
static bool grow_uploads(cuda_instance *instance) {
  size_t capacity = instance->upload_capacity ? instance->upload_capacity * 2 : 64;
  uploaded *table = calloc(capacity, sizeof *table);
  if (!table)
    return false;
  for (size_t i = 0; i < instance->upload_capacity; ++i) {
    uploaded *entry = &instance->uploads[i];
    if (!entry->host)
      continue;
    size_t slot = hash_pointer(entry->host, capacity);
    while (table[slot].host)
      slot = (slot + 1) & (capacity - 1);
    table[slot] = *entry;
  }
  free(instance->uploads);
  instance->uploads = table;
  instance->upload_capacity = capacity;
  return true;
}

void cuvil_rt_cuda_status(const void *device_status) {
  cuda_instance *instance = current_instance;
  if (!instance || instance->failure != CUVIL_OK)
    return;
  instance->status_pointer = (CUdeviceptr)(uintptr_t)device_status;
}

void cuvil_rt_cuda_read(const void *device, void *host, int64_t bytes) {
  cuda_instance *instance = current_instance;
  if (bytes <= 0 || !host)
    return;
  memset(host, 0, (size_t)bytes);
  if (!instance || instance->failure != CUVIL_OK || !device)
    return;
  cuda_driver *d = &instance->driver;
  if (check_call(instance,
                 d->MemcpyDtoHAsync(host, (CUdeviceptr)(uintptr_t)device, (size_t)bytes,
                                    instance->run_stream),
                 CUVIL_ERR_DEVICE, "cuMemcpyDtoHAsync_v2 of a value the host code reads"))
    check_call(instance, d->StreamSynchronize(instance->run_stream), CUVIL_ERR_DEVICE,
               "cuStreamSynchronize before the host code reads a value");
}

void cuvil_rt_cuda_write(const void *host, void *device, int64_t bytes) {
  cuda_instance *instance = current_instance;
  if (bytes <= 0 || !host || !device || !instance || instance->failure != CUVIL_OK)
    return;
  cuda_driver *d = &instance->driver;
  if (check_call(instance,
                 d->MemcpyHtoDAsync((CUdeviceptr)(uintptr_t)device, host, (size_t)bytes,
                                    instance->run_stream),
                 CUVIL_ERR_DEVICE, "cuMemcpyHtoDAsync_v2 of a buffer a CPU kernel wrote"))
    /* The host buffer is freed next. */
    check_call(instance, d->StreamSynchronize(instance->run_stream), CUVIL_ERR_DEVICE,
               "cuStreamSynchronize after copying a CPU kernel's buffer to the device");
}

void *cuvil_rt_cuda_global(const void *host, int64_t bytes) {
  cuda_instance *instance = current_instance;
  if (!instance || instance->failure != CUVIL_OK)
    return NULL;
  if (!host || bytes <= 0) {
    record(instance, CUVIL_ERR_DEVICE, "constant data at %p of %lld bytes", host,
           (long long)bytes);
    return NULL;
  }
  size_t capacity = instance->upload_capacity;
  if (capacity) {
    for (size_t slot = hash_pointer(host, capacity); instance->uploads[slot].host;
         slot = (slot + 1) & (capacity - 1))
      if (instance->uploads[slot].host == host && instance->uploads[slot].bytes == (uint64_t)bytes)
        return (void *)(uintptr_t)instance->uploads[slot].device;
  }
  if ((instance->num_uploads + 1) * 2 > capacity && !grow_uploads(instance)) {
    record(instance, CUVIL_ERR_OUT_OF_MEMORY, "out of memory recording constant data");
    return NULL;
  }
  capacity = instance->upload_capacity;
  CUdeviceptr device = 0;
  char what[96];
  snprintf(what, sizeof what, "%lld bytes of constant data (weights)", (long long)bytes);
  if (!allocate(instance, &device, (uint64_t)bytes, what))
    return NULL;
  /* On the run's stream, so its kernels find the copy done (a copy from
   * pageable memory may still be in flight when cuMemcpyHtoD returns, and
   * the stream does not wait for the default one); the library's constant
   * data outlives any copy. */
  snprintf(what, sizeof what, "cuMemcpyHtoDAsync_v2 of %lld bytes of constant data (weights)",
           (long long)bytes);
  if (!check_call(instance,
                  instance->driver.MemcpyHtoDAsync(device, host, (size_t)bytes,
                                                   instance->run_stream),
                  CUVIL_ERR_DEVICE, what)) {
    release(instance, &device);
    return NULL;
  }
  size_t slot = hash_pointer(host, capacity);
  while (instance->uploads[slot].host)
    slot = (slot + 1) & (capacity - 1);
  instance->uploads[slot] = (uploaded){host, (uint64_t)bytes, device};
  instance->num_uploads += 1;
  return (void *)(uintptr_t)device;
}

/*--- Registration --------------------------------------------------------------*/

static const cuvil_rt_device_backend cuda_backend_with_cpu = {
    true, create_instance, destroy_instance, describe_instance, run_instance};
static const cuvil_rt_device_backend cuda_backend_without_cpu = {
    false, create_instance, destroy_instance, describe_instance, run_instance};

__attribute__((constructor)) static void register_cuda_backend(void) {
  if (&cuvil_rt_cuda_model != NULL)
    cuvil_rt_register_device_backend(cuvil_rt_cuda_model.cpu_fallback
                                         ? &cuda_backend_with_cpu
                                         : &cuda_backend_without_cpu);
}
