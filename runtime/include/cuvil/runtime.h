/*===- cuvil/runtime.h - The C API of a Cuvil-compiled model -------------===*
 *
 * Every libinference.so made by cuvil-export exports exactly these
 * functions (all named cuvil_*). One library holds one model; several
 * libraries can be loaded in one process.
 *
 * Threads: a cuvil_model is thread-compatible. Separate instances (even of
 * the same library) run fully concurrently; one instance runs one call at a
 * time, and a second concurrent cuvil_model_run on it returns
 * CUVIL_ERR_BUSY instead of corrupting it. Error messages are per thread
 * (cuvil_last_error), so concurrent callers never see each other's.
 *
 *===----------------------------------------------------------------------===*/
#ifndef CUVIL_RUNTIME_H
#define CUVIL_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped when a struct or a function of this header changes. 2: models
 * with dynamic dimensions (-1), cuvil_model_abi_version. 3: devices
 * (--target cuda): CUVIL_ERR_DEVICE, cuvil_options.device,
 * cuvil_model_device, cuvil_model_run_device. */
#define CUVIL_ABI_VERSION 3u
/* The model ABI (between a library's compiled model and its runtime) of
 * the libraries made with this header: 2 describes dynamic dimensions and
 * passes each run's shapes to the compiled code. */
#define CUVIL_MODEL_ABI_VERSION 3u

typedef enum cuvil_status {
  CUVIL_OK = 0,
  CUVIL_ERR_INVALID_ARGUMENT = 1, /* NULL pointer, bad index, bad options */
  CUVIL_ERR_COUNT = 2,            /* wrong number of inputs or outputs */
  CUVIL_ERR_DTYPE = 3,            /* a tensor's element type differs from the model's */
  CUVIL_ERR_SHAPE = 4,            /* wrong rank or dimension, or a buffer too small */
  CUVIL_ERR_UNSUPPORTED_CPU = 5,  /* the CPU lacks a feature the code was compiled for */
  CUVIL_ERR_OUT_OF_MEMORY = 6,
  CUVIL_ERR_BUSY = 7,             /* the instance is running a call on another thread */
  CUVIL_ERR_MODEL = 8,            /* the model itself failed (e.g. an assertion in it) */
  CUVIL_ERR_ABI = 9,              /* header/library version or struct size mismatch */
  CUVIL_ERR_DEVICE = 10           /* no GPU driver, no device, a device too old, a device failure */
} cuvil_status;

typedef enum cuvil_dtype {
  CUVIL_DTYPE_F32 = 0,
  CUVIL_DTYPE_F64 = 1,
  CUVIL_DTYPE_F16 = 2,
  CUVIL_DTYPE_BF16 = 3,
  CUVIL_DTYPE_I8 = 4,
  CUVIL_DTYPE_U8 = 5,
  CUVIL_DTYPE_I16 = 6,
  CUVIL_DTYPE_I32 = 7,
  CUVIL_DTYPE_I64 = 8,
  CUVIL_DTYPE_BOOL = 9, /* one byte per element, 0 or 1 */
  CUVIL_DTYPE_C64 = 10, /* complex: (real, imaginary) f32 pairs, as C's float _Complex */
  CUVIL_DTYPE_C128 = 11 /* complex: f64 pairs */
} cuvil_dtype;

/* Where an instance of a library with GPU code (cuvil-export --target
 * cuda, or x86_64,cuda) runs; libraries without GPU code run on the CPU.
 * AUTO: the GPU when a CUDA driver and a device that can run the library's
 * code exist, else the CPU when the library has CPU code too, else create
 * fails with CUVIL_ERR_DEVICE and the reason. CPU: the CPU code
 * (CUVIL_ERR_DEVICE for a library without any). CUDA: the GPU or
 * CUVIL_ERR_DEVICE, never the CPU. */
typedef enum cuvil_device {
  CUVIL_DEVICE_AUTO = 0,
  CUVIL_DEVICE_CPU = 1,
  CUVIL_DEVICE_CUDA = 2
} cuvil_device;

/* Options of an instance. Initialise with cuvil_options_init, then set
 * fields; struct_size lets older callers work with newer libraries. Create
 * refuses (CUVIL_ERR_ABI) a struct_size below this first version's, and a
 * larger one unless the fields this library does not know are all zero; a
 * smaller one (an older header's) leaves the missing fields at their
 * defaults. cuvil_options_init writes this header's whole struct: a caller
 * compiled with an older header must check cuvil_abi_version first (or fill
 * in struct_size and its fields itself). */
typedef struct cuvil_options {
  uint32_t struct_size; /* sizeof(cuvil_options) */
  int32_t num_threads;  /* threads for one call, 1..1024; 0 = all online cores */
  int32_t device;       /* a cuvil_device (ABI 3; default CUVIL_DEVICE_AUTO) */
} cuvil_options;

/* What the model takes or gives at one position. */
typedef struct cuvil_tensor_info {
  const char *name;     /* the model's parameter name, or "output0", ... */
  cuvil_dtype dtype;
  int32_t rank;
  const int64_t *shape; /* rank entries; -1 for a dynamic dimension */
} cuvil_tensor_info;

/* A caller's buffer of byte_size bytes, enough for its shape.
 * Inputs: shape is the actual shape (rank entries). A static dimension of
 * the model must be matched exactly; a dynamic one (-1 in its info) takes
 * any size >= 0.
 * Outputs: shape points to rank writable entries. On entry the static
 * dimensions are not read; a dynamic one must give the buffer's capacity
 * along it (>= 0; cuvil_model_output_bounds gives one that always
 * suffices). On success the run writes the output's shape there: the
 * model's static dimensions and, for each dynamic one, the size the run
 * produced (its data lies densely in that shape at the buffer's start), or
 * the capacity for a model that fills the buffer whole. */
typedef struct cuvil_tensor {
  void *data;
  size_t byte_size;
  cuvil_dtype dtype;
  int32_t rank;
  /* const so that an info's shape (or any array) passes for an input
   * without a cast, in C and C++; for an output it must point to the
   * caller's writable array, which cuvil_model_run writes. */
  const int64_t *shape;
} cuvil_tensor;

typedef struct cuvil_model cuvil_model;

/* CUVIL_ABI_VERSION of the library. */
uint32_t cuvil_abi_version(void);

/* The model ABI version the library's compiled model was generated for
 * (CUVIL_MODEL_ABI_VERSION of the cuvil-export that made it). Create
 * refuses (CUVIL_ERR_ABI) a model whose version the library's runtime does
 * not implement. */
uint32_t cuvil_model_abi_version(void);

/* Fills *options with the defaults. */
void cuvil_options_init(cuvil_options *options);

/* The message of the last error on this thread. Every call that can fail
 * resets it, so it is "" after a call that succeeded. Valid until the next
 * cuvil_* call on this thread. */
const char *cuvil_last_error(void);

/* Creates an instance. options may be NULL (defaults). Checks the CPU's
 * features (CUVIL_ERR_UNSUPPORTED_CPU names the missing ones), chooses the
 * device (options.device; CUVIL_ERR_DEVICE names why none fits), allocates
 * the instance's working memory (on the GPU too: CUVIL_ERR_OUT_OF_MEMORY
 * names the bytes) and starts its threads. *model is NULL on failure. */
cuvil_status cuvil_model_create(const cuvil_options *options, cuvil_model **model);

/* Destroys an instance (NULL is ignored). A call still running on it on
 * another thread is waited for; the instance must not be used afterwards. */
void cuvil_model_destroy(cuvil_model *model);

/* -1 (and a message) when model is NULL or not a live instance. */
int32_t cuvil_model_num_inputs(const cuvil_model *model);
int32_t cuvil_model_num_outputs(const cuvil_model *model);
cuvil_status cuvil_model_input_info(const cuvil_model *model, int32_t index, cuvil_tensor_info *info);
cuvil_status cuvil_model_output_info(const cuvil_model *model, int32_t index, cuvil_tensor_info *info);

/* The bounds of an input's (output's) dimensions: min_shape and max_shape
 * (either may be NULL) receive rank entries. A static dimension's bounds are
 * its size; a dynamic one's are those it was compiled with (cuvil-export
 * --strategy hybrid: an input's the range a run may give, an output's
 * maximum the capacity that always suffices), or 0 and -1 when the model
 * declares none. */
cuvil_status cuvil_model_input_bounds(const cuvil_model *model, int32_t index, int64_t *min_shape,
                                      int64_t *max_shape);
cuvil_status cuvil_model_output_bounds(const cuvil_model *model, int32_t index, int64_t *min_shape,
                                       int64_t *max_shape);

/* The position of the input (output) whose info's name is `name`, or -1
 * (and a message) when there is none or model is not a live instance. */
int32_t cuvil_model_input_index(const cuvil_model *model, const char *name);
int32_t cuvil_model_output_index(const cuvil_model *model, const char *name);

/* The bytes a tensor of `dtype` and `shape` (rank entries, each >= 0)
 * takes: what byte_size must at least be. 0 for an unknown dtype, a
 * negative dimension or a negative rank; SIZE_MAX when it does not fit. */
size_t cuvil_tensor_byte_size(cuvil_dtype dtype, int32_t rank, const int64_t *shape);

/* Libraries compiled with cuvil-export --instrument time every kernel call
 * of every run of an instance: the number of sites (0 for other
 * libraries, -1 for a bad model), and per site its name (the layer's
 * module path where it has weights, else its source line, with the
 * kernel), the calls and their total time. Reset clears the totals. */
int32_t cuvil_model_profile_count(const cuvil_model *model);
cuvil_status cuvil_model_profile_entry(const cuvil_model *model, int32_t index, const char **name,
                                       int64_t *calls, double *total_ms);
void cuvil_model_profile_reset(cuvil_model *model);

/* The arms of the model's own control flow (each branch of a data-dependent
 * `if`, each loop's body; not those the compiler flattened) and how often
 * each ran, over every run of an instance since it was made or reset:
 * cuvil-verify's branch coverage. Count: the number of arms (0 for a model
 * without control flow, -1 for a bad model); an arm's name is
 * "FILE:LINE if then", "FILE:LINE if else" or "FILE:LINE loop body" (the
 * model's source line). Counters exist once the instance has run. */
int32_t cuvil_model_branch_count(const cuvil_model *model);
cuvil_status cuvil_model_branch_entry(const cuvil_model *model, int32_t index, const char **name,
                                      int64_t *taken);
void cuvil_model_branch_reset(cuvil_model *model);

/* Libraries compiled with cuvil-export --target npu run their NPU segments
 * on the runtime's NPU backend, a simulator of the NPU that is exact in
 * results and approximate in cycles. With recording on, each run of the
 * instance keeps the simulator's account of it as JSON text,
 * {"segments": [{"name", "config", "cycles", "units", "layers", "events",
 * ...}]} (a library without NPU code records no segment), which
 * cuvil_model_npu_report returns, valid until the next run, the next
 * change of recording or the instance's destruction; NULL before any
 * recorded run. Recording costs time and memory (every command's
 * interval). */
cuvil_status cuvil_model_set_npu_recording(cuvil_model *model, int32_t enabled);
cuvil_status cuvil_model_npu_report(const cuvil_model *model, const char **json);

/* Runs the model. Every input and output is checked (count, dtype, rank,
 * shape against the model's static and dynamic dimensions, buffer size for
 * the actual shape, NULL, alignment to the element size, outputs
 * overlapping inputs or each other) before anything runs; a failed check
 * returns its status with a message naming the tensor and the dimension,
 * and leaves the outputs untouched. Output shapes are written on success. */
cuvil_status cuvil_model_run(cuvil_model *model, const cuvil_tensor *inputs, int32_t num_inputs,
                             cuvil_tensor *outputs, int32_t num_outputs);

/* Where the instance runs: "cpu" (a library without GPU code, or
 * CUVIL_DEVICE_CPU), "cpu (fallback: REASON)" (CUVIL_DEVICE_AUTO found no
 * usable GPU and the library has CPU code), or "cuda:NAME (sm_XY, ...)"
 * (the GPU's name and architecture, then its ordinal and the code loaded).
 * The text stays valid while the instance lives; NULL for a bad model. */
const char *cuvil_model_device(const cuvil_model *model);

/* cuvil_model_run for callers whose tensors already live on the GPU of a
 * CUDA instance: every data pointer is a device pointer (a CUdeviceptr cast
 * to void *; shapes stay host arrays, checked as cuvil_model_run checks
 * them), nothing is copied. The kernels go on `stream` (a CUstream of the
 * instance's device, in the primary context; NULL: the instance's own
 * stream). With a stream the call returns once everything is launched: the
 * outputs are ready when the stream's work is, and a failure of a kernel
 * while it runs shows on the stream, not here; with NULL it waits for the
 * kernels and reports their failures. CUVIL_ERR_DEVICE on an instance that
 * runs on the CPU. */
cuvil_status cuvil_model_run_device(cuvil_model *model, const cuvil_tensor *inputs,
                                    int32_t num_inputs, cuvil_tensor *outputs,
                                    int32_t num_outputs, void *stream);

#ifdef __cplusplus
}
#endif

#endif /* CUVIL_RUNTIME_H */
