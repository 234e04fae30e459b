/*===- gpu_check_runner.c - Runs one Cuvil library against stored outputs ===*
 *
 * The GPU check's runner (scripts/gpu-check.sh): loads a libinference.so
 * with dlopen, runs it on DIR/input<i>.npy through the C API and compares
 * every output with DIR/expected<i>.npy (PyTorch's). It depends on libc and
 * libdl only, so that it is built once where the compiler is and copied to
 * a GPU machine with nothing else installed:
 *
 *   cc -O2 -o gpu-check-runner scripts/gpu_check_runner.c -ldl
 *   gpu-check-runner LIB.so --device auto|cpu|cuda --inputs DIR --expected DIR
 *                    [--rtol R] [--atol A] [--runs N] [--name NAME]
 *
 * Its last line on stdout is the verdict,
 *   NAME: ok|MISMATCH|ERROR device=<cuvil_model_device> median_ms=X min_ms=Y max_abs_err=Z
 * and for an ERROR " error=<why>" after it (a mismatch's details go to
 * stderr before it); exit 0 ok, 1 MISMATCH, 2 ERROR.
 *
 * Floats match when |got - want| <= atol * max(1, max|want|) + rtol * |want|
 * (numpy's allclose with atol scaled by the output's magnitude, as
 * test/import/check_import.py compares; NaN never matches, an infinity only
 * itself); integers and booleans must be equal.
 *
 *===----------------------------------------------------------------------===*/
#define _GNU_SOURCE 1
#include <dlfcn.h>
#include <errno.h>
#include <math.h> /* fabs, isnan, isfinite, NAN: compiler built-ins */
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The C API's types, copied from runtime/include/cuvil/runtime.h (C API 3):
 * the runner must build without the source tree. The library's
 * cuvil_abi_version() is checked to be exactly this one before any struct
 * crosses. */
enum { kAbiVersion = 3 };
enum { DEVICE_AUTO = 0, DEVICE_CPU = 1, DEVICE_CUDA = 2 };
enum {
  DT_F32 = 0, DT_F64 = 1, DT_F16 = 2, DT_BF16 = 3, DT_I8 = 4, DT_U8 = 5,
  DT_I16 = 6, DT_I32 = 7, DT_I64 = 8, DT_BOOL = 9, DT_C64 = 10, DT_C128 = 11
};
typedef struct {
  uint32_t struct_size;
  int32_t num_threads;
  int32_t device;
} options_t;
typedef struct {
  const char *name;
  int dtype;
  int32_t rank;
  const int64_t *shape;
} tensor_info_t;
typedef struct {
  void *data;
  size_t byte_size;
  int dtype;
  int32_t rank;
  const int64_t *shape;
} tensor_t;
typedef struct model model_t;

/* The library's functions, resolved by name. */
static struct {
  uint32_t (*abi_version)(void);
  void (*options_init)(options_t *);
  int (*model_create)(const options_t *, model_t **);
  const char *(*model_device)(const model_t *);
  int32_t (*num_inputs)(const model_t *);
  int32_t (*num_outputs)(const model_t *);
  int (*input_info)(const model_t *, int32_t, tensor_info_t *);
  int (*output_info)(const model_t *, int32_t, tensor_info_t *);
  int (*output_bounds)(const model_t *, int32_t, int64_t *, int64_t *); /* optional */
  int (*run)(model_t *, const tensor_t *, int32_t, tensor_t *, int32_t);
  const char *(*last_error)(void);
  void (*model_destroy)(model_t *);
  size_t (*byte_size)(int, int32_t, const int64_t *);
} api;

#define MAX_RANK 16
#define MAX_TENSORS 256

static const char *g_name = "model";
static char g_device[512] = "-";

/* The verdict line (why: an ERROR's reason, else NULL); everything else
 * goes to stderr. */
static void verdict(const char *status, const char *median, const char *min, const char *err,
                    const char *why) {
  fflush(stderr);
  printf("%s: %s device=%s median_ms=%s min_ms=%s max_abs_err=%s%s%s\n", g_name, status,
         g_device, median, min, err, why ? " error=" : "", why ? why : "");
  fflush(stdout);
}

/* An error: the ERROR verdict with its message; exit 2. */
static void fail(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void fail(const char *fmt, ...) {
  char why[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, sizeof why, fmt, ap);
  va_end(ap);
  for (char *p = why; *p; ++p)
    if (*p == '\n' || *p == '\r') *p = ' '; /* the verdict stays one line */
  verdict("ERROR", "-", "-", "-", why);
  exit(2);
}

/* A crash inside the library (a driver fault, a bad kernel) still ends with
 * a verdict line, so that gpu-check.sh's table names the model; only
 * async-signal-safe calls here. */
static char g_crash_line[1024];
static void on_signal(int sig) {
  const char *what = sig == SIGSEGV ? "SIGSEGV" : sig == SIGBUS ? "SIGBUS" : sig == SIGFPE ? "SIGFPE"
                   : sig == SIGILL ? "SIGILL" : "SIGABRT";
  char msg[128];
  (void)!write(1, g_crash_line, strlen(g_crash_line));
  int n = snprintf(msg, sizeof msg, " error=%s (a crash in the library)\n", what);
  if (n > 0) (void)!write(1, msg, (size_t)n);
  _exit(2);
}
static void arm_crash_line(void) {
  snprintf(g_crash_line, sizeof g_crash_line,
           "%s: ERROR device=%s median_ms=- min_ms=- max_abs_err=-", g_name, g_device);
}

static void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) fail("out of memory allocating %zu bytes", n);
  return p;
}

/* ---- .npy files ------------------------------------------------------- */

typedef struct {
  int dtype;
  int rank;
  int64_t shape[MAX_RANK];
  size_t elem_size;
  size_t count;
  void *data; /* malloc'd: aligned for every element type */
  size_t bytes;
} npy_t;

static const char *dtype_name(int dt) {
  static const char *names[] = {"f32", "f64", "f16", "bf16", "i8", "u8", "i16", "i32", "i64",
                                "bool", "c64", "c128"};
  return dt >= 0 && dt <= DT_C128 ? names[dt] : "unknown";
}
static size_t dtype_size(int dt) {
  static const size_t sizes[] = {4, 8, 2, 2, 1, 1, 2, 4, 8, 1, 8, 16};
  return dt >= 0 && dt <= DT_C128 ? sizes[dt] : 0;
}
static const char *shape_str(int rank, const int64_t *shape, char *buf, size_t n) {
  size_t at = 0;
  buf[0] = 0;
  if (rank == 0) snprintf(buf, n, "scalar");
  for (int i = 0; i < rank && at < n; ++i)
    at += (size_t)snprintf(buf + at, n - at, i ? "x%lld" : "%lld", (long long)shape[i]);
  return buf;
}

/* numpy's descr ("<f4", "|b1", ...) to a Cuvil dtype; -1 when unsupported
 * (big-endian, bfloat16 has no numpy descr, strings, records). */
static int dtype_from_descr(const char *d) {
  static const struct { const char *code; int dt; } codes[] = {
      {"f4", DT_F32}, {"f8", DT_F64}, {"f2", DT_F16}, {"i1", DT_I8}, {"u1", DT_U8},
      {"i2", DT_I16}, {"i4", DT_I32}, {"i8", DT_I64}, {"b1", DT_BOOL}, {"c8", DT_C64},
      {"c16", DT_C128}};
  if (d[0] != '<' && d[0] != '|' && d[0] != '=') return -1; /* x86 is little-endian */
  for (size_t i = 0; i < sizeof codes / sizeof codes[0]; ++i)
    if (!strcmp(d + 1, codes[i].code)) return codes[i].dt;
  return -1;
}

/* The value of 'key' in the header dict, NULL if missing. */
static const char *dict_value(const char *header, const char *key) {
  char quoted[32];
  snprintf(quoted, sizeof quoted, "'%s'", key);
  const char *p = strstr(header, quoted);
  if (!p) return NULL;
  p += strlen(quoted);
  while (*p == ' ') ++p;
  if (*p != ':') return NULL;
  ++p;
  while (*p == ' ') ++p;
  return p;
}

/* Reads an .npy file (format 1, 2 or 3, C order); fills *out or returns a
 * message in err. */
static int npy_read(const char *path, npy_t *out, char *err, size_t errn) {
  memset(out, 0, sizeof *out);
  FILE *f = fopen(path, "rb");
  if (!f) {
    snprintf(err, errn, "cannot open %s: %s", path, strerror(errno));
    return 0;
  }
  unsigned char pre[12];
  char *header = NULL;
  int ok = 0;
  size_t header_len, prefix;
  if (fread(pre, 1, 10, f) != 10 || memcmp(pre, "\x93NUMPY", 6) != 0) {
    snprintf(err, errn, "%s: not an .npy file (no \\x93NUMPY magic)", path);
    goto done;
  }
  if (pre[6] == 1) {
    header_len = pre[8] | (size_t)pre[9] << 8;
    prefix = 10;
  } else if (pre[6] == 2 || pre[6] == 3) {
    if (fread(pre + 10, 1, 2, f) != 2) {
      snprintf(err, errn, "%s: truncated header", path);
      goto done;
    }
    header_len = pre[8] | (size_t)pre[9] << 8 | (size_t)pre[10] << 16 | (size_t)pre[11] << 24;
    prefix = 12;
  } else {
    snprintf(err, errn, "%s: .npy format version %d.%d not supported", path, pre[6], pre[7]);
    goto done;
  }
  if (header_len > (1u << 20)) {
    snprintf(err, errn, "%s: header of %zu bytes is implausible", path, header_len);
    goto done;
  }
  header = xmalloc(header_len + 1);
  if (fread(header, 1, header_len, f) != header_len) {
    snprintf(err, errn, "%s: truncated header", path);
    goto done;
  }
  header[header_len] = 0;

  const char *descr = dict_value(header, "descr");
  const char *order = dict_value(header, "fortran_order");
  const char *shape = dict_value(header, "shape");
  if (!descr || !order || !shape || (*descr != '\'' && *descr != '"') || *shape != '(') {
    snprintf(err, errn, "%s: malformed header: %s", path, header);
    goto done;
  }
  char code[16] = {0};
  size_t n = 0;
  for (++descr; *descr && *descr != '\'' && *descr != '"' && n + 1 < sizeof code; ++descr)
    code[n++] = *descr;
  out->dtype = dtype_from_descr(code);
  if (out->dtype < 0) {
    snprintf(err, errn, "%s: dtype '%s' not supported (little-endian f4 f8 f2 i8 i4 i2 i1 u1 b1 "
             "c8 c16 only)", path, code);
    goto done;
  }
  out->elem_size = dtype_size(out->dtype);
  for (const char *p = shape + 1;;) {
    while (*p == ' ' || *p == ',') ++p;
    if (*p == ')') break;
    char *end;
    errno = 0;
    long long v = strtoll(p, &end, 10);
    if (end == p || v < 0 || errno) {
      snprintf(err, errn, "%s: malformed shape in header: %s", path, header);
      goto done;
    }
    if (out->rank == MAX_RANK) {
      snprintf(err, errn, "%s: rank above %d", path, MAX_RANK);
      goto done;
    }
    out->shape[out->rank++] = v;
    p = end;
  }
  out->count = 1;
  for (int i = 0; i < out->rank; ++i) {
    if (out->shape[i] && out->count > SIZE_MAX / 16 / (size_t)out->shape[i]) {
      snprintf(err, errn, "%s: shape too large", path);
      goto done;
    }
    out->count *= (size_t)out->shape[i];
  }
  /* Fortran order is the same bytes as C order for rank <= 1 (and for
   * arrays with at most one dimension above 1). */
  int nontrivial = 0;
  for (int i = 0; i < out->rank; ++i) nontrivial += out->shape[i] > 1;
  if (!strncmp(order, "True", 4) && nontrivial > 1) {
    snprintf(err, errn, "%s: Fortran-order arrays are not supported (save with C order)", path);
    goto done;
  }
  out->bytes = out->count * out->elem_size;
  out->data = xmalloc(out->bytes);
  if (fread(out->data, 1, out->bytes, f) != out->bytes) {
    snprintf(err, errn, "%s: truncated data (%zu bytes expected after a %zu-byte header)", path,
             out->bytes, prefix + header_len);
    goto done;
  }
  ok = 1;
done:
  free(header);
  fclose(f);
  if (!ok) {
    free(out->data);
    out->data = NULL;
  }
  return ok;
}

static int file_exists(const char *path) { return access(path, F_OK) == 0; }

/* ---- Comparison --------------------------------------------------------- */

/* No libm (the runner links libc and libdl only): a square root for the
 * complex modulus, by Newton's method from an exponent-halved guess. */
static double root(double x) {
  if (!(x > 0) || !isfinite(x)) return x > 0 ? x : 0;
  uint64_t bits;
  memcpy(&bits, &x, 8);
  bits = (bits >> 1) + (UINT64_C(1023) << 51); /* about sqrt(x) */
  double r;
  memcpy(&r, &bits, 8);
  for (int i = 0; i < 6; ++i) r = 0.5 * (r + x / r);
  return r;
}
static double modulus(double re, double im) { return root(re * re + im * im); }

static double half_to_double(uint16_t h) {
  int e = (h >> 10) & 31, m = h & 1023;
  double v = e == 0 ? m / 16777216.0 /* m * 2^-24 */
           : e == 31 ? (m ? NAN : INFINITY)
           : (m | 1024) * (double)((uint64_t)1 << e) / 33554432.0 /* * 2^(e-25) */;
  return (h & 0x8000) ? -v : v;
}

/* Element i of a real-valued buffer as a double (complex: part `part`). */
static double element(const void *data, int dt, size_t i, int part) {
  switch (dt) {
  case DT_F32: return ((const float *)data)[i];
  case DT_F64: return ((const double *)data)[i];
  case DT_F16: return half_to_double(((const uint16_t *)data)[i]);
  case DT_BF16: {
    uint32_t bits = (uint32_t)((const uint16_t *)data)[i] << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
  }
  case DT_C64: return ((const float *)data)[2 * i + part];
  case DT_C128: return ((const double *)data)[2 * i + part];
  default: return 0;
  }
}
static int64_t int_element(const void *data, int dt, size_t i) {
  switch (dt) {
  case DT_I8: return ((const int8_t *)data)[i];
  case DT_U8: return ((const uint8_t *)data)[i];
  case DT_BOOL: return ((const uint8_t *)data)[i] != 0;
  case DT_I16: return ((const int16_t *)data)[i];
  case DT_I32: return ((const int32_t *)data)[i];
  default: return ((const int64_t *)data)[i];
  }
}
static int is_float(int dt) {
  return dt == DT_F32 || dt == DT_F64 || dt == DT_F16 || dt == DT_BF16 || dt == DT_C64 ||
         dt == DT_C128;
}

/* Compares `count` elements; returns 1 when all match. *max_err becomes
 * the largest |got - want| so far (NaN once a NaN or an infinity differs).
 * Reports the first mismatch and the number of mismatches on stderr. */
static int compare(int index, const void *got, const void *want, int dt, size_t count,
                   double rtol, double atol, double *max_err) {
  int complex = dt == DT_C64 || dt == DT_C128;
  size_t first = SIZE_MAX, bad = 0;
  double err_out = 0;
  double scale = 1; /* atol is relative to max(1, max|want|) */
  if (is_float(dt))
    for (size_t i = 0; i < count; ++i) {
      double w = complex ? modulus(element(want, dt, i, 0), element(want, dt, i, 1))
                         : fabs(element(want, dt, i, 0));
      if (isfinite(w) && w > scale) scale = w;
    }
  for (size_t i = 0; i < count; ++i) {
    int close;
    if (is_float(dt)) {
      double gr = element(got, dt, i, 0), wr = element(want, dt, i, 0);
      double gi = complex ? element(got, dt, i, 1) : 0, wi = complex ? element(want, dt, i, 1) : 0;
      if (isfinite(gr) && isfinite(wr) && isfinite(gi) && isfinite(wi)) {
        double err = complex ? modulus(gr - wr, gi - wi) : fabs(gr - wr);
        close = err <= atol * scale + rtol * (complex ? modulus(wr, wi) : fabs(wr));
        if (err > err_out) err_out = err;
      } else {
        /* Infinities match only themselves; NaN matches nothing (allclose). */
        close = !isnan(gr) && !isnan(wr) && !isnan(gi) && !isnan(wi) && gr == wr && gi == wi;
        if (!close) err_out = NAN;
      }
      if (!close && first == SIZE_MAX) {
        if (complex)
          fprintf(stderr, "output %d: first mismatch at flat index %zu: got (%.9g, %.9g), "
                  "expected (%.9g, %.9g)\n", index, i, gr, gi, wr, wi);
        else
          fprintf(stderr, "output %d: first mismatch at flat index %zu: got %.9g, expected %.9g\n",
                  index, i, gr, wr);
      }
    } else {
      int64_t g = int_element(got, dt, i), w = int_element(want, dt, i);
      close = g == w;
      double err = fabs((double)g - (double)w);
      if (err > err_out) err_out = err;
      if (!close && first == SIZE_MAX)
        fprintf(stderr, "output %d: first mismatch at flat index %zu: got %lld, expected %lld\n",
                index, i, (long long)g, (long long)w);
    }
    if (!close) {
      if (first == SIZE_MAX) first = i;
      ++bad;
    }
  }
  if (!isnan(*max_err) && !(err_out <= *max_err)) *max_err = err_out;
  if (bad)
    fprintf(stderr, "output %d: %zu elements %s, max abs error %.3g, %zu mismatched -> MISMATCH\n",
            index, count, dtype_name(dt), err_out, bad);
  else
    fprintf(stderr, "output %d: %zu elements %s, max abs error %.3g -> ok\n", index, count,
            dtype_name(dt), err_out);
  return bad == 0;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* ---- Main ----------------------------------------------------------------- */

static void usage(void) {
  fprintf(stderr,
          "usage: gpu-check-runner LIB.so --device auto|cpu|cuda --inputs DIR --expected DIR\n"
          "                        [--rtol R (1e-3)] [--atol A (1e-4)] [--runs N (20)] [--name NAME]\n");
  exit(2);
}

/* The model's name for the verdict: the library's folder for .../NAME/lib.so
 * (the bundle's layout), else the file name without .so. */
static const char *default_name(const char *lib) {
  static char buf[256];
  const char *slash = strrchr(lib, '/');
  const char *base = slash ? slash + 1 : lib;
  if (!strcmp(base, "lib.so") && slash) {
    const char *start = slash;
    while (start > lib && start[-1] != '/') --start;
    snprintf(buf, sizeof buf, "%.*s", (int)(slash - start), start);
    if (buf[0]) return buf;
  }
  snprintf(buf, sizeof buf, "%s", base);
  char *dot = strstr(buf, ".so");
  if (dot && dot != buf) *dot = 0;
  return buf;
}

static double parse_double(const char *flag, const char *s) {
  char *end;
  double v = strtod(s, &end);
  if (end == s || *end || !(v >= 0)) {
    fprintf(stderr, "gpu-check-runner: %s: '%s' is not a number >= 0\n", flag, s);
    exit(2);
  }
  return v;
}

int main(int argc, char **argv) {
  const char *lib = NULL, *device_arg = NULL, *inputs_dir = NULL, *expected_dir = NULL;
  const char *name = NULL;
  double rtol = 1e-3, atol = 1e-4;
  long runs = 20;
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) usage();
    if (a[0] == '-' && a[1] == '-') {
      if (!v) {
        fprintf(stderr, "gpu-check-runner: %s needs a value\n", a);
        usage();
      }
      ++i;
      if (!strcmp(a, "--device")) device_arg = v;
      else if (!strcmp(a, "--inputs")) inputs_dir = v;
      else if (!strcmp(a, "--expected")) expected_dir = v;
      else if (!strcmp(a, "--rtol")) rtol = parse_double(a, v);
      else if (!strcmp(a, "--atol")) atol = parse_double(a, v);
      else if (!strcmp(a, "--name")) name = v;
      else if (!strcmp(a, "--runs")) {
        char *end;
        runs = strtol(v, &end, 10);
        if (end == v || *end || runs < 1 || runs > 1000000) {
          fprintf(stderr, "gpu-check-runner: --runs: '%s' is not a count >= 1\n", v);
          exit(2);
        }
      } else {
        fprintf(stderr, "gpu-check-runner: unknown option %s\n", a);
        usage();
      }
    } else if (!lib) {
      lib = a;
    } else {
      fprintf(stderr, "gpu-check-runner: unexpected argument %s\n", a);
      usage();
    }
  }
  if (!lib || !device_arg || !inputs_dir || !expected_dir) usage();
  g_name = name ? name : default_name(lib);
  int device;
  if (!strcmp(device_arg, "auto")) device = DEVICE_AUTO;
  else if (!strcmp(device_arg, "cpu")) device = DEVICE_CPU;
  else if (!strcmp(device_arg, "cuda")) device = DEVICE_CUDA;
  else fail("--device: '%s' not in {auto,cpu,cuda}", device_arg);

  arm_crash_line();
  signal(SIGSEGV, on_signal);
  signal(SIGBUS, on_signal);
  signal(SIGFPE, on_signal);
  signal(SIGILL, on_signal);
  signal(SIGABRT, on_signal);

  /* dlopen needs a path with a slash to not search the library path. */
  char lib_path[4096];
  snprintf(lib_path, sizeof lib_path, "%s%s", strchr(lib, '/') ? "" : "./", lib);
  if (!file_exists(lib_path)) fail("no library at %s", lib_path);
  void *handle = dlopen(lib_path, RTLD_NOW | RTLD_LOCAL);
  if (!handle) fail("dlopen %s: %s", lib_path, dlerror());
#define RESOLVE(field, symbol, required)                                                        \
  do {                                                                                          \
    *(void **)&api.field = dlsym(handle, symbol);                                               \
    if (!api.field && (required)) fail("%s does not export %s (not a Cuvil library?)", lib, symbol); \
  } while (0)
  RESOLVE(abi_version, "cuvil_abi_version", 1);
  RESOLVE(options_init, "cuvil_options_init", 1);
  RESOLVE(model_create, "cuvil_model_create", 1);
  RESOLVE(model_device, "cuvil_model_device", 1);
  RESOLVE(num_inputs, "cuvil_model_num_inputs", 1);
  RESOLVE(num_outputs, "cuvil_model_num_outputs", 1);
  RESOLVE(input_info, "cuvil_model_input_info", 1);
  RESOLVE(output_info, "cuvil_model_output_info", 1);
  RESOLVE(output_bounds, "cuvil_model_output_bounds", 0);
  RESOLVE(run, "cuvil_model_run", 1);
  RESOLVE(last_error, "cuvil_last_error", 1);
  RESOLVE(model_destroy, "cuvil_model_destroy", 1);
  RESOLVE(byte_size, "cuvil_tensor_byte_size", 1);
#undef RESOLVE
  uint32_t abi = api.abi_version();
  if (abi != kAbiVersion)
    fail("%s has C API %u; this runner speaks C API %d (rebuild it from the same Cuvil)", lib,
         abi, kAbiVersion);

  options_t options;
  api.options_init(&options);
  options.device = device;
  model_t *model = NULL;
  int status = api.model_create(&options, &model);
  if (status != 0 || !model)
    fail("cuvil_model_create (--device %s) failed with status %d: %s", device_arg, status,
         api.last_error());
  const char *dev = api.model_device(model);
  snprintf(g_device, sizeof g_device, "%s", dev ? dev : "?");
  arm_crash_line();

  /* Inputs: input0.npy, input1.npy, ... checked against the model's. */
  int32_t n_in = api.num_inputs(model), n_out = api.num_outputs(model);
  if (n_in < 0 || n_out < 0 || n_in > MAX_TENSORS || n_out > MAX_TENSORS)
    fail("the model reports %d inputs and %d outputs: %s", n_in, n_out, api.last_error());
  char path[4096], err[1024], a[256], b[256];
  snprintf(path, sizeof path, "%s/input%d.npy", inputs_dir, n_in);
  if (file_exists(path))
    fail("%s exists but the model takes %d inputs", path, n_in);
  npy_t *in_npy = xmalloc(sizeof(npy_t) * (size_t)(n_in + 1));
  tensor_t *in_t = xmalloc(sizeof(tensor_t) * (size_t)(n_in + 1));
  for (int32_t i = 0; i < n_in; ++i) {
    tensor_info_t info;
    if (api.input_info(model, i, &info) != 0) fail("input %d's info: %s", i, api.last_error());
    snprintf(path, sizeof path, "%s/input%d.npy", inputs_dir, i);
    if (!npy_read(path, &in_npy[i], err, sizeof err)) fail("input %d: %s", i, err);
    npy_t *t = &in_npy[i];
    int bad = t->dtype != info.dtype || t->rank != info.rank;
    for (int d = 0; !bad && d < t->rank; ++d)
      bad = info.shape[d] >= 0 && info.shape[d] != t->shape[d];
    if (bad)
      fail("input %d ('%s'): %s holds %s %s, the model takes %s %s (-1: any size)", i,
           info.name ? info.name : "?", path, shape_str(t->rank, t->shape, a, sizeof a),
           dtype_name(t->dtype), shape_str(info.rank, info.shape, b, sizeof b),
           dtype_name(info.dtype));
    in_t[i] = (tensor_t){t->data, t->bytes, t->dtype, t->rank, t->shape};
  }

  /* Outputs: expected0.npy, ... one per model output; buffers sized by the
   * model's shape (a dynamic dimension: its bound, else the expected size). */
  snprintf(path, sizeof path, "%s/expected%d.npy", expected_dir, n_out);
  if (file_exists(path))
    fail("%s exists but the model gives %d outputs", path, n_out);
  npy_t *want = xmalloc(sizeof(npy_t) * (size_t)(n_out + 1));
  tensor_t *out_t = xmalloc(sizeof(tensor_t) * (size_t)(n_out + 1));
  int64_t(*out_shape)[MAX_RANK] = xmalloc(sizeof(int64_t[MAX_RANK]) * (size_t)(n_out + 1));
  tensor_info_t *out_info = xmalloc(sizeof(tensor_info_t) * (size_t)(n_out + 1));
  for (int32_t i = 0; i < n_out; ++i) {
    tensor_info_t *info = &out_info[i];
    if (api.output_info(model, i, info) != 0) fail("output %d's info: %s", i, api.last_error());
    snprintf(path, sizeof path, "%s/expected%d.npy", expected_dir, i);
    if (!npy_read(path, &want[i], err, sizeof err)) fail("output %d: %s", i, err);
    if (info->rank > MAX_RANK) fail("output %d: rank %d above %d", i, info->rank, MAX_RANK);
    int64_t max_shape[MAX_RANK];
    int have_bounds = api.output_bounds && api.output_bounds(model, i, NULL, max_shape) == 0;
    for (int d = 0; d < info->rank; ++d) {
      int64_t cap = info->shape[d];
      if (cap < 0) {
        cap = have_bounds && max_shape[d] >= 0 ? max_shape[d] : 0;
        if (d < want[i].rank && want[i].shape[d] > cap) cap = want[i].shape[d];
      }
      out_shape[i][d] = cap;
    }
    size_t bytes = api.byte_size(info->dtype, info->rank, out_shape[i]);
    if (bytes == 0 && dtype_size(info->dtype) == 0) fail("output %d: unknown dtype %d", i, info->dtype);
    if (bytes == SIZE_MAX) fail("output %d: buffer size overflows", i);
    /* 0xFF bytes (NaN for floats) so that a run that leaves an output
     * unwritten cannot pass by chance. */
    void *data = xmalloc(bytes);
    memset(data, 0xFF, bytes);
    out_t[i] = (tensor_t){data, bytes, info->dtype, info->rank, out_shape[i]};
  }

  /* One warm-up run (module loads, first-touch allocations), then timed ones. */
  status = api.run(model, in_t, n_in, out_t, n_out);
  if (status != 0) fail("cuvil_model_run failed with status %d: %s", status, api.last_error());
  double *ms = xmalloc(sizeof(double) * (size_t)runs);
  for (long r = 0; r < runs; ++r) {
    double t0 = now_ms();
    status = api.run(model, in_t, n_in, out_t, n_out);
    ms[r] = now_ms() - t0;
    if (status != 0)
      fail("cuvil_model_run (timed run %ld) failed with status %d: %s", r + 1, status,
           api.last_error());
  }
  qsort(ms, (size_t)runs, sizeof(double), cmp_double);
  double median = runs % 2 ? ms[runs / 2] : (ms[runs / 2 - 1] + ms[runs / 2]) / 2;

  /* Compare: dtype and shape first, then the values. */
  int all_ok = 1;
  double max_err = 0;
  for (int32_t i = 0; i < n_out; ++i) {
    npy_t *w = &want[i];
    int same = out_t[i].dtype == w->dtype && out_t[i].rank == w->rank;
    for (int d = 0; same && d < w->rank; ++d) same = out_shape[i][d] == w->shape[d];
    if (!same) {
      fprintf(stderr, "output %d: the model gave %s %s, PyTorch's is %s %s -> MISMATCH\n", i,
              shape_str(out_t[i].rank, out_shape[i], a, sizeof a), dtype_name(out_t[i].dtype),
              shape_str(w->rank, w->shape, b, sizeof b), dtype_name(w->dtype));
      all_ok = 0;
      max_err = NAN;
      continue;
    }
    all_ok &= compare(i, out_t[i].data, w->data, w->dtype, w->count, rtol, atol, &max_err);
  }
  api.model_destroy(model);

  char med[32], mn[32], er[32];
  snprintf(med, sizeof med, "%.4g", median);
  snprintf(mn, sizeof mn, "%.4g", ms[0]);
  snprintf(er, sizeof er, "%.3g", max_err);
  verdict(all_ok ? "ok" : "MISMATCH", med, mn, er, NULL);
  return all_ok ? 0 : 1;
}
