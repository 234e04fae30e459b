/*===- runtime/npu/sim.c - The virtual NPU's simulator ---------------------===*
 *
 * Three passes over the command stream:
 *  1. validation (analyze): the header, every command's fields and
 *     accesses, and races, with a vector clock per command;
 *  2. timing and 3. execution, together (run): each command's start, end
 *     and bank conflicts, then its effect on the SRAMs and DRAM.
 * Execution in stream order is exact because pass 1 refused every pair of
 * unordered commands that could observe each other's order.
 *
 * Floating-point steps must round one by one (QuantArithmetic.h): compile
 * with -ffp-contract=off; NPU_ROUNDED below also keeps the two products
 * that precede an addition apart from it in case the flag is missing.
 *
 *===----------------------------------------------------------------------===*/
#include "sim.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the simulator reads little-endian programs with memcpy: a little-endian host only"
#endif

_Static_assert(sizeof(cuvil_npu_header) == 128, "cuvil_npu_header is 128 bytes");
_Static_assert(sizeof(cuvil_npu_command) == 128, "cuvil_npu_command is 32 words");
_Static_assert(sizeof(cuvil_npu_region) == 16, "cuvil_npu_region is 16 bytes");
_Static_assert(sizeof(cuvil_npu_layer) == 16, "cuvil_npu_layer is 16 bytes");

#if defined(__GNUC__) && defined(__x86_64__)
#define NPU_ROUNDED(x) __asm__("" : "+x"(x))
#elif defined(__GNUC__) && defined(__aarch64__)
#define NPU_ROUNDED(x) __asm__("" : "+w"(x))
#else
#define NPU_ROUNDED(x) ((void)0)
#endif

enum { NUM_UNITS = CUVIL_NPU_NUM_UNITS, NO_UNIT = -1 };

/* Pixels per block of a conv or GEMM, and the bytes of packed weights one
 * pass over a block uses: the block's sums and that slice of the weights
 * stay in cache while every pixel of the block reads them. */
enum { BLOCK_PIXELS = 64, SLICE_BYTES = 32768 };

/* Memories a command can touch, for the race check: the SRAMs (space - 1),
 * the scratch buffer, and argument i as MEM_ARGUMENT + i. The constants
 * are read-only and not tracked. */
enum { MEM_NONE = -1, MEM_WBUF = 0, MEM_ABUF = 1, MEM_ACC = 2, MEM_SCRATCH = 3, MEM_ARGUMENT = 4 };

static const char *const space_names[] = {"DRAM", "WBUF", "ABUF", "ACC"};
static const char *const unit_names[] = {"load", "store", "mac", "vec"};

static const char *opcode_name(int32_t opcode) { return cuvil_npu_opcode_name(opcode); }

/* NO_UNIT for a barrier (and an unknown opcode). */
static int unit_of_opcode(int32_t opcode) { return cuvil_npu_unit_of(opcode); }

/*--- Errors and checked arithmetic -----------------------------------------*/

__attribute__((format(printf, 3, 4))) static int fail(char *err, size_t size, const char *format, ...) {
  if (err && size) {
    va_list args;
    va_start(args, format);
    vsnprintf(err, size, format, args);
    va_end(args);
  }
  return -1;
}

/* The command being checked, for messages "command 17 (matmul): ...". */
typedef struct checker {
  char *err;
  size_t size;
  uint32_t index;
  int32_t opcode;
} checker;

__attribute__((format(printf, 2, 3))) static int command_fail(const checker *k, const char *format, ...) {
  if (k->err && k->size) {
    int n = snprintf(k->err, k->size, "command %u (%s): ", k->index, opcode_name(k->opcode));
    if (n >= 0 && (size_t)n < k->size) {
      va_list args;
      va_start(args, format);
      vsnprintf(k->err + n, k->size - (size_t)n, format, args);
      va_end(args);
    }
  }
  return -1;
}

/* Products and sums of non-negative values, saturated at INT64_MAX: every
 * bound they are compared with is far below it. */
static int64_t mul_sat(int64_t a, int64_t b) {
  if (a == 0 || b == 0)
    return 0;
  return a > INT64_MAX / b ? INT64_MAX : a * b;
}
static int64_t add_sat(int64_t a, int64_t b) { return a > INT64_MAX - b ? INT64_MAX : a + b; }
static int64_t ceil_div(int64_t a, int64_t b) { return a / b + (a % b != 0); }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

static inline int32_t wrap_int32(uint32_t u) {
  int32_t s;
  memcpy(&s, &u, sizeof s);
  return s;
}
static inline float float_of_bits(int32_t bits) {
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

/*--- The program -----------------------------------------------------------*/

typedef struct program {
  const uint8_t *blob;
  cuvil_npu_header h;
  int64_t sram_bytes[4], bank_bytes[4]; /* by space; [CUVIL_NPU_DRAM] unused */
  cuvil_npu_region *regions;            /* num_regions, copied out of the blob */
} program;

static void read_command(const program *p, uint32_t index, cuvil_npu_command *c) {
  memcpy(c, p->blob + p->h.commands_offset + (uint64_t)index * sizeof *c, sizeof *c);
}

/* A NUL-terminated string at `offset` of the strings section. */
static bool valid_string(const program *p, uint32_t offset) {
  if (offset >= p->h.strings_bytes)
    return false;
  const uint8_t *s = p->blob + p->h.strings_offset;
  return memchr(s + offset, 0, p->h.strings_bytes - offset) != NULL;
}

typedef struct section {
  const char *name;
  uint64_t offset, bytes;
} section;

static int check_config(const cuvil_npu_config *c, char *err, size_t size) {
  struct {
    const char *name;
    int32_t value, min;
  } fields[] = {{"array_k", c->array_k, 1},
                {"array_n", c->array_n, 1},
                {"wbuf_bytes", c->wbuf_bytes, 1},
                {"abuf_bytes", c->abuf_bytes, 1},
                {"acc_bytes", c->acc_bytes, 1},
                {"wbuf_banks", c->wbuf_banks, 1},
                {"abuf_banks", c->abuf_banks, 1},
                {"acc_banks", c->acc_banks, 1},
                {"dram_bytes_per_cycle", c->dram_bytes_per_cycle, 1},
                {"dram_latency", c->dram_latency, 0},
                {"dram_burst", c->dram_burst, 1},
                {"vector_lanes", c->vector_lanes, 1},
                {"clock_mhz", c->clock_mhz, 1},
                {"alignment", c->alignment, 1}};
  for (size_t i = 0; i < sizeof fields / sizeof fields[0]; ++i)
    if (fields[i].value < fields[i].min)
      return fail(err, size, "config.%s is %d, must be at least %d", fields[i].name, fields[i].value,
                  fields[i].min);
  const int32_t bytes[3] = {c->wbuf_bytes, c->abuf_bytes, c->acc_bytes};
  const int32_t banks[3] = {c->wbuf_banks, c->abuf_banks, c->acc_banks};
  for (int i = 0; i < 3; ++i)
    if (bytes[i] % banks[i] != 0)
      return fail(err, size, "config: %s's %d bytes do not split into %d equal banks", space_names[i + 1],
                  bytes[i], banks[i]);
  return 0;
}

/* The header, sections, regions, layers and name; p->regions is allocated
 * on success (free it). */
static int load_program(const uint8_t *blob, uint64_t bytes, program *p, char *err, size_t size) {
  memset(p, 0, sizeof *p);
  p->blob = blob;
  if (!blob)
    return fail(err, size, "no program (NULL)");
  if (bytes < sizeof p->h)
    return fail(err, size, "the blob (%llu bytes) is shorter than the header (%zu bytes)",
                (unsigned long long)bytes, sizeof p->h);
  memcpy(&p->h, blob, sizeof p->h);
  const cuvil_npu_header *h = &p->h;
  if (h->magic != CUVIL_NPU_MAGIC)
    return fail(err, size, "bad magic 0x%08x (expected 0x%08x, \"CPN1\")", h->magic, CUVIL_NPU_MAGIC);
  /* Version 2 added fields that are zero in every version-1 program. */
  if (h->version < 1 || h->version > CUVIL_NPU_ISA_VERSION)
    return fail(err, size, "ISA version %u, this simulator runs versions 1 to %d", h->version,
                CUVIL_NPU_ISA_VERSION);
  if (h->blob_bytes > bytes)
    return fail(err, size, "truncated program: the header says %u bytes, the blob has %llu", h->blob_bytes,
                (unsigned long long)bytes);
  if (h->blob_bytes < sizeof p->h)
    return fail(err, size, "the header's blob_bytes (%u) is smaller than the header", h->blob_bytes);
  if (check_config(&h->config, err, size))
    return -1;
  p->sram_bytes[CUVIL_NPU_WBUF] = h->config.wbuf_bytes;
  p->sram_bytes[CUVIL_NPU_ABUF] = h->config.abuf_bytes;
  p->sram_bytes[CUVIL_NPU_ACC] = h->config.acc_bytes;
  p->bank_bytes[CUVIL_NPU_WBUF] = h->config.wbuf_bytes / h->config.wbuf_banks;
  p->bank_bytes[CUVIL_NPU_ABUF] = h->config.abuf_bytes / h->config.abuf_banks;
  p->bank_bytes[CUVIL_NPU_ACC] = h->config.acc_bytes / h->config.acc_banks;

  const section sections[] = {
      {"commands", h->commands_offset, (uint64_t)h->num_commands * sizeof(cuvil_npu_command)},
      {"regions", h->regions_offset, (uint64_t)h->num_regions * sizeof(cuvil_npu_region)},
      {"layers", h->layers_offset, (uint64_t)h->num_layers * sizeof(cuvil_npu_layer)},
      {"constants", h->constants_offset, h->constants_bytes},
      {"strings", h->strings_offset, h->strings_bytes}};
  enum { NUM_SECTIONS = sizeof sections / sizeof sections[0] };
  for (int i = 0; i < NUM_SECTIONS; ++i) {
    const section *s = &sections[i];
    if (s->bytes == 0)
      continue; /* an empty section's offset means nothing */
    if (s->offset % 8 != 0)
      return fail(err, size, "the %s section's offset %llu is not 8-byte aligned", s->name,
                  (unsigned long long)s->offset);
    if (s->offset < sizeof p->h || s->offset + s->bytes > h->blob_bytes)
      return fail(err, size, "the %s section [%llu, %llu) is outside the blob after the header [%zu, %u)",
                  s->name, (unsigned long long)s->offset, (unsigned long long)(s->offset + s->bytes),
                  sizeof p->h, h->blob_bytes);
    for (int j = 0; j < i; ++j) {
      const section *t = &sections[j];
      if (t->bytes && s->offset < t->offset + t->bytes && t->offset < s->offset + s->bytes)
        return fail(err, size, "the %s section [%llu, %llu) overlaps the %s section [%llu, %llu)", s->name,
                    (unsigned long long)s->offset, (unsigned long long)(s->offset + s->bytes), t->name,
                    (unsigned long long)t->offset, (unsigned long long)(t->offset + t->bytes));
    }
  }
  if (!valid_string(p, h->name_offset))
    return fail(err, size, "the program's name (strings + %u) is not a string of the strings section (%u bytes)",
                h->name_offset, h->strings_bytes);

  for (uint32_t i = 0; i < h->num_layers; ++i) {
    cuvil_npu_layer l;
    memcpy(&l, blob + h->layers_offset + (uint64_t)i * sizeof l, sizeof l);
    if (!valid_string(p, l.name_offset) || !valid_string(p, l.kind_offset))
      return fail(err, size, "layer %u: its name (%u) or kind (%u) is not a string of the strings section", i,
                  l.name_offset, l.kind_offset);
    if (l.macs < 0)
      return fail(err, size, "layer %u: macs is %lld", i, (long long)l.macs);
  }

  p->regions = malloc(h->num_regions ? (size_t)h->num_regions * sizeof *p->regions : 1);
  if (!p->regions)
    return fail(err, size, "out of memory for %u regions", h->num_regions);
  if (h->num_regions)
    memcpy(p->regions, blob + h->regions_offset, (size_t)h->num_regions * sizeof *p->regions);
  for (uint32_t i = 0; i < h->num_regions; ++i) {
    const cuvil_npu_region *r = &p->regions[i];
    int bad = 0;
    if (r->bytes < 0 || r->index < 0)
      bad = fail(err, size, "region %u: index %d and bytes %lld must not be negative", i, r->index,
                 (long long)r->bytes);
    else if (r->kind == CUVIL_NPU_REGION_ARGUMENT) {
      if ((uint32_t)r->index >= h->num_arguments)
        bad = fail(err, size, "region %u: argument %d, but the call passes %u", i, r->index, h->num_arguments);
    } else if (r->kind == CUVIL_NPU_REGION_CONSTANTS) {
      if ((uint64_t)r->index + (uint64_t)r->bytes > h->constants_bytes)
        bad = fail(err, size, "region %u: constants [%d, %lld) are outside the constants section (%u bytes)", i,
                   r->index, (long long)r->index + r->bytes, h->constants_bytes);
    } else if (r->kind == CUVIL_NPU_REGION_SCRATCH) {
      if ((uint64_t)r->index + (uint64_t)r->bytes > h->scratch_bytes)
        bad = fail(err, size, "region %u: scratch [%d, %lld) is outside the scratch buffer (%u bytes)", i,
                   r->index, (long long)r->index + r->bytes, h->scratch_bytes);
    } else {
      bad = fail(err, size, "region %u: unknown kind %d", i, r->kind);
    }
    if (bad) {
      free(p->regions);
      p->regions = NULL;
      return -1;
    }
  }
  return 0;
}

/*--- One command: its fields, accesses, duration ---------------------------*/

typedef struct access {
  int64_t memory; /* MEM_*, MEM_ARGUMENT + argument index, MEM_NONE */
  int32_t space;  /* the SRAM (banks), CUVIL_NPU_DRAM for DRAM */
  int32_t write;
  int64_t lo, hi; /* bytes [lo, hi) of the memory */
  const char *what;
} access;

typedef struct command_info {
  int32_t unit; /* NO_UNIT: barrier */
  int32_t num_accesses;
  access accesses[4];
  int64_t duration, bytes, macs;
  /* Host work space the execution needs. */
  int64_t patch_bytes, pair_words, row_words, taps, channels;
} command_info;

static int add_sram_access(const checker *k, const program *p, command_info *info, int32_t space, int64_t addr,
                           int64_t bytes, bool aligned, bool write, const char *what) {
  int64_t end = add_sat(addr, bytes);
  if (addr < 0 || end > p->sram_bytes[space])
    return command_fail(k, "%s [%lld, %lld) is outside %s (%lld bytes)", what, (long long)addr, (long long)end,
                        space_names[space], (long long)p->sram_bytes[space]);
  if (aligned && addr % p->h.config.alignment != 0)
    return command_fail(k, "%s address %lld in %s is not a multiple of the alignment (%d)", what, (long long)addr,
                        space_names[space], p->h.config.alignment);
  access *a = &info->accesses[info->num_accesses++];
  *a = (access){space - 1, space, write, addr, end, what};
  return 0;
}

static int add_dram_access(const checker *k, const program *p, command_info *info, int32_t region, int64_t offset,
                           int64_t bytes, bool write, const char *what) {
  if (region < 0 || (uint32_t)region >= p->h.num_regions)
    return command_fail(k, "region %d does not exist (%u regions)", region, p->h.num_regions);
  const cuvil_npu_region *r = &p->regions[region];
  if (write && r->kind == CUVIL_NPU_REGION_CONSTANTS)
    return command_fail(k, "stores into region %d, the program's constants", region);
  int64_t end = add_sat(offset, bytes);
  if (offset < 0 || end > r->bytes)
    return command_fail(k, "%s [%lld, %lld) is outside region %d (%lld bytes)", what, (long long)offset,
                        (long long)end, region, (long long)r->bytes);
  access *a = &info->accesses[info->num_accesses++];
  *a = (access){MEM_NONE, CUVIL_NPU_DRAM, write, offset, end, what};
  if (r->kind == CUVIL_NPU_REGION_ARGUMENT) {
    a->memory = MEM_ARGUMENT + (int64_t)r->index;
  } else if (r->kind == CUVIL_NPU_REGION_SCRATCH) {
    a->memory = MEM_SCRATCH;
    a->lo += r->index;
    a->hi += r->index;
  }
  return 0;
}

static int at_least(const checker *k, const char *name, int32_t value, int32_t min) {
  return value < min ? command_fail(k, "%s is %d, must be at least %d", name, value, min) : 0;
}
static int flag(const checker *k, const char *name, int32_t value) {
  return value != 0 && value != 1 ? command_fail(k, "%s is %d, must be 0 or 1", name, value) : 0;
}
/* An 8-bit output's range: stored as one byte (u8, or s8 as its bits). */
static int byte_range(const checker *k, int32_t lo, int32_t hi) {
  if (lo > hi || lo < -128 || hi > 255)
    return command_fail(k, "[y_min, y_max] = [%d, %d] is not a range of 8-bit values", lo, hi);
  return 0;
}
static int unused_zero(const checker *k, const cuvil_npu_command *c, int used) {
  for (int i = used; i < 26; ++i)
    if (c->u.words[i] != 0)
      return command_fail(k, "operand word %d is %d; unused words must be 0", i, c->u.words[i]);
  return 0;
}

/* [lo, hi) of two accesses overlap. */
static bool overlap(const access *a, const access *b) { return a->lo < b->hi && b->lo < a->hi; }

/* [lo, hi) of n2 planes of n1 rows of n0 bytes from `base`. */
static void strided_range(int64_t base, int64_t n2, int64_t n1, int64_t n0, int64_t stride2, int64_t stride1,
                          int64_t *lo, int64_t *hi) {
  const int64_t planes = (n2 - 1) * stride2, rows = (n1 - 1) * stride1;
  *lo = base + min64(0, planes) + min64(0, rows);
  *hi = base + max64(0, planes) + max64(0, rows) + n0;
}

static int describe_dma(const checker *k, const program *p, const cuvil_npu_command *c, command_info *info) {
  const bool load = c->opcode == CUVIL_NPU_OP_LOAD;
  info->unit = load ? CUVIL_NPU_UNIT_LOAD : CUVIL_NPU_UNIT_STORE;
  const __typeof__(c->u.dma) *d = &c->u.dma;
  if (unused_zero(k, c, 11) || at_least(k, "n0", d->n0, 1) || at_least(k, "n1", d->n1, 1) ||
      at_least(k, "n2", d->n2, 1))
    return -1;
  if (load && d->space != CUVIL_NPU_WBUF && d->space != CUVIL_NPU_ABUF)
    return command_fail(k, "space %d: loads go to WBUF (%d) or ABUF (%d)", d->space, CUVIL_NPU_WBUF,
                        CUVIL_NPU_ABUF);
  if (!load && d->space != CUVIL_NPU_ABUF)
    return command_fail(k, "space %d: stores read ABUF (%d)", d->space, CUVIL_NPU_ABUF);
  /* The bounding ranges, from the lowest byte to the highest (strides may
   * be negative); |products| < 2^62, so the sums cannot overflow. */
  int64_t moved = mul_sat(mul_sat(d->n2, d->n1), d->n0);
  int64_t dram_lo, dram_hi, sram_lo, sram_hi;
  strided_range(d->dram_offset, d->n2, d->n1, d->n0, d->dram_stride2, d->dram_stride1, &dram_lo, &dram_hi);
  strided_range(d->sram_addr, d->n2, d->n1, d->n0, d->sram_stride2, d->sram_stride1, &sram_lo, &sram_hi);
  if (d->sram_addr % p->h.config.alignment != 0)
    return command_fail(k, "%s address %d in %s is not a multiple of the alignment (%d)",
                        load ? "destination" : "source", d->sram_addr, space_names[d->space],
                        p->h.config.alignment);
  int64_t sram_span = sram_hi - sram_lo;
  if (load) {
    if (add_dram_access(k, p, info, d->region, dram_lo, dram_hi - dram_lo, false, "source") ||
        add_sram_access(k, p, info, d->space, sram_lo, sram_span, false, true, "destination"))
      return -1;
  } else {
    if (add_sram_access(k, p, info, d->space, sram_lo, sram_span, false, false, "source") ||
        add_dram_access(k, p, info, d->region, dram_lo, dram_hi - dram_lo, true, "destination"))
      return -1;
  }
  /* Rows that overlap in SRAM are a mistake, and this bounds the work. */
  if (moved > sram_span)
    return command_fail(k, "moves %lld bytes within an SRAM range of %lld: its rows overlap", (long long)moved,
                        (long long)sram_span);
  const cuvil_npu_config *cfg = &p->h.config;
  int64_t charged = mul_sat(mul_sat(d->n2, d->n1), ceil_div(d->n0, cfg->dram_burst) * cfg->dram_burst);
  info->duration = cfg->dram_latency + ceil_div(charged, cfg->dram_bytes_per_cycle);
  info->bytes = moved;
  return 0;
}

static int describe_matmul(const checker *k, const program *p, const cuvil_npu_command *c, command_info *info) {
  info->unit = CUVIL_NPU_UNIT_MAC;
  const __typeof__(c->u.matmul) *m = &c->u.matmul;
  if (unused_zero(k, c, 21))
    return -1;
  if (m->mode < CUVIL_NPU_MATMUL_CONV || m->mode > CUVIL_NPU_MATMUL_GEMM)
    return command_fail(k, "unknown mode %d", m->mode);
  if (m->dtype != CUVIL_NPU_DTYPE_INT8 && m->dtype != CUVIL_NPU_DTYPE_FP16)
    return command_fail(k, "unknown dtype %d (0: int8, 1: fp16)", m->dtype);
  const bool fp16 = m->dtype == CUVIL_NPU_DTYPE_FP16;
  const int64_t element = fp16 ? 2 : 1;
  if (at_least(k, "ci", m->ci, 1) || at_least(k, "co", m->co, 1) || at_least(k, "oh", m->oh, 1) ||
      at_least(k, "ow", m->ow, 1) || flag(k, "accumulate", m->accumulate))
    return -1;
  const bool gemm = m->mode == CUVIL_NPU_MATMUL_GEMM;
  if (gemm) {
    if (m->ow != 1)
      return command_fail(k, "a GEMM has ow == 1, not %d", m->ow);
  } else {
    if (at_least(k, "ih", m->ih, 1) || at_least(k, "iw", m->iw, 1) || at_least(k, "kh", m->kh, 1) ||
        at_least(k, "kw", m->kw, 1) || at_least(k, "sh", m->sh, 1) || at_least(k, "sw", m->sw, 1) ||
        at_least(k, "dh", m->dh, 1) || at_least(k, "dw", m->dw, 1))
      return -1;
    if (m->pad_value < 0 || m->pad_value > (fp16 ? 65535 : 255))
      return command_fail(k, "pad_value %d is not a %s", m->pad_value, fp16 ? "binary16" : "u8");
    if (m->mode == CUVIL_NPU_MATMUL_DEPTHWISE && m->ci != m->co)
      return command_fail(k, "a depthwise product has ci == co, not %d and %d", m->ci, m->co);
  }
  int64_t taps = gemm ? 1 : mul_sat(m->kh, m->kw);
  int64_t pixels = mul_sat(m->oh, m->ow);
  int64_t in_bytes = gemm ? mul_sat(m->oh, m->ci) : mul_sat(m->ci, mul_sat(m->ih, m->iw));
  int64_t reduction = m->mode == CUVIL_NPU_MATMUL_DEPTHWISE ? taps : mul_sat(m->ci, taps);
  if (add_sram_access(k, p, info, CUVIL_NPU_ABUF, m->in_addr, mul_sat(element, in_bytes), true, false, "input") ||
      add_sram_access(k, p, info, CUVIL_NPU_WBUF, m->w_addr, mul_sat(element, mul_sat(reduction, m->co)), true,
                      false, "weights") ||
      add_sram_access(k, p, info, CUVIL_NPU_ACC, m->acc_addr, mul_sat(4, mul_sat(pixels, m->co)), true, true,
                      "accumulators"))
    return -1;
  const cuvil_npu_config *cfg = &p->h.config;
  int64_t column_blocks = ceil_div(m->co, cfg->array_n);
  int64_t steps = m->mode == CUVIL_NPU_MATMUL_DEPTHWISE ? taps : ceil_div(reduction, cfg->array_k);
  /* FP16: half the reduction lanes, so twice the steps. */
  info->duration = mul_sat(mul_sat(mul_sat(pixels, steps), column_blocks), element) + cfg->array_k + cfg->array_n;
  info->macs = mul_sat(mul_sat(pixels, m->co), reduction);
  const int64_t block = min64(BLOCK_PIXELS, pixels);
  /* FP16 work space: windows and weights as floats (4 bytes, 2 words). */
  info->patch_bytes = fp16 ? mul_sat(reduction, 4) : m->mode == CUVIL_NPU_MATMUL_CONV ? mul_sat(block, reduction) : 0;
  info->pair_words = m->mode == CUVIL_NPU_MATMUL_DEPTHWISE ? 0 : mul_sat(reduction + 1, m->co) * (fp16 ? 2 : 1);
  info->row_words = m->mode == CUVIL_NPU_MATMUL_DEPTHWISE ? m->ow : mul_sat(block, m->co);
  info->taps = m->mode == CUVIL_NPU_MATMUL_DEPTHWISE ? taps : 0;
  return 0;
}

static int describe_requant(const checker *k, const program *p, const cuvil_npu_command *c, command_info *info) {
  info->unit = CUVIL_NPU_UNIT_VEC;
  const __typeof__(c->u.requant) *r = &c->u.requant;
  if (unused_zero(k, c, 13))
    return -1;
  if (r->mode < CUVIL_NPU_REQUANT_QNNPACK || r->mode > CUVIL_NPU_REQUANT_FLOAT)
    return command_fail(k, "unknown mode %d", r->mode);
  if (at_least(k, "pixels", r->pixels, 1) || at_least(k, "channels", r->channels, 1) ||
      flag(k, "layout", r->layout) || flag(k, "relu", r->relu) || flag(k, "out_f16", r->out_f16))
    return -1;
  const bool float_mode = r->mode == CUVIL_NPU_REQUANT_FLOAT;
  if (!float_mode && (r->relu || r->out_f16))
    return command_fail(k, "relu and out_f16 belong to the float mode");
  const bool to_float = r->mode == CUVIL_NPU_REQUANT_F32 || r->mode == CUVIL_NPU_REQUANT_F32_ONEDNN || float_mode;
  if (!to_float && byte_range(k, r->y_min, r->y_max))
    return -1;
  int64_t elements = mul_sat(r->pixels, r->channels), element_bytes = r->out_f16 ? 2 : to_float ? 4 : 1;
  int64_t out_elements = elements;
  if (r->layout == 0) {
    if (r->out_plane < r->pixels)
      return command_fail(k, "out_plane %d is smaller than pixels %d: the channel planes overlap", r->out_plane,
                          r->pixels);
    out_elements = add_sat(mul_sat(r->channels - 1, r->out_plane), r->pixels);
  }
  if (add_sram_access(k, p, info, CUVIL_NPU_ACC, r->acc_addr, mul_sat(4, elements), false, false, "accumulators") ||
      add_sram_access(k, p, info, CUVIL_NPU_WBUF, r->table_addr, mul_sat(12, r->channels), false, false, "table") ||
      add_sram_access(k, p, info, CUVIL_NPU_ABUF, r->out_addr, mul_sat(element_bytes, out_elements), false, true,
                      "output"))
    return -1;
  info->duration = ceil_div(elements, p->h.config.vector_lanes) + 8;
  info->channels = r->channels;
  return 0;
}

static int describe_add(const checker *k, const program *p, const cuvil_npu_command *c, command_info *info) {
  info->unit = CUVIL_NPU_UNIT_VEC;
  const __typeof__(c->u.add) *a = &c->u.add;
  if (unused_zero(k, c, 20))
    return -1;
  if (a->mode != CUVIL_NPU_ADD_FLOAT && a->mode != CUVIL_NPU_ADD_QNNPACK)
    return command_fail(k, "unknown mode %d", a->mode);
  if (at_least(k, "count", a->count, 1) || flag(k, "relu", a->relu) || byte_range(k, a->y_min, a->y_max))
    return -1;
  /* Shifts by 32 or more are undefined in C (QNNPACK asserts shift < 32). */
  if (a->mode == CUVIL_NPU_ADD_QNNPACK && (a->shift < 0 || a->shift > 31))
    return command_fail(k, "shift %d is outside [0, 31]", a->shift);
  if (add_sram_access(k, p, info, CUVIL_NPU_ABUF, a->a_addr, a->count, false, false, "a") ||
      add_sram_access(k, p, info, CUVIL_NPU_ABUF, a->b_addr, a->count, false, false, "b") ||
      add_sram_access(k, p, info, CUVIL_NPU_ABUF, a->out_addr, a->count, false, true, "output"))
    return -1;
  /* In place is fine element by element; shifted by some bytes it is not. */
  for (int i = 0; i < 2; ++i) {
    const access *in = &info->accesses[i], *out = &info->accesses[2];
    if (overlap(in, out) && in->lo != out->lo)
      return command_fail(k, "output [%lld, %lld) overlaps %s [%lld, %lld) at another address", (long long)out->lo,
                          (long long)out->hi, in->what, (long long)in->lo, (long long)in->hi);
  }
  info->duration = ceil_div(a->count, p->h.config.vector_lanes) + 8;
  return 0;
}

static int describe_pool(const checker *k, const program *p, const cuvil_npu_command *c, command_info *info) {
  info->unit = CUVIL_NPU_UNIT_VEC;
  const __typeof__(c->u.pool) *o = &c->u.pool;
  if (unused_zero(k, c, 23))
    return -1;
  if (o->mode < CUVIL_NPU_POOL_MAX || o->mode > CUVIL_NPU_POOL_AVG_QNNPACK)
    return command_fail(k, "unknown mode %d", o->mode);
  if (at_least(k, "channels", o->channels, 1) || at_least(k, "ih", o->ih, 1) || at_least(k, "iw", o->iw, 1) ||
      at_least(k, "oh", o->oh, 1) || at_least(k, "ow", o->ow, 1) || at_least(k, "kh", o->kh, 1) ||
      at_least(k, "kw", o->kw, 1) || at_least(k, "sh", o->sh, 1) || at_least(k, "sw", o->sw, 1) ||
      at_least(k, "dh", o->dh, 1) || at_least(k, "dw", o->dw, 1))
    return -1;
  if (o->mode != CUVIL_NPU_POOL_MAX) {
    if (o->dh != 1 || o->dw != 1)
      return command_fail(k, "an average pool's taps are adjacent (dh = dw = 1), not %d, %d", o->dh, o->dw);
    if (flag(k, "count_include_pad", o->count_include_pad) || flag(k, "round_first", o->round_first) ||
        byte_range(k, o->y_min, o->y_max))
      return -1;
  }
  if (add_sram_access(k, p, info, CUVIL_NPU_ABUF, o->in_addr, mul_sat(o->channels, mul_sat(o->ih, o->iw)), false,
                      false, "input") ||
      add_sram_access(k, p, info, CUVIL_NPU_ABUF, o->out_addr, mul_sat(o->channels, mul_sat(o->oh, o->ow)), false,
                      true, "output"))
    return -1;
  if (overlap(&info->accesses[0], &info->accesses[1]))
    return command_fail(k, "output [%lld, %lld) overlaps input [%lld, %lld)", (long long)info->accesses[1].lo,
                        (long long)info->accesses[1].hi, (long long)info->accesses[0].lo,
                        (long long)info->accesses[0].hi);
  int64_t work = mul_sat(mul_sat(o->channels, mul_sat(o->oh, o->ow)), mul_sat(o->kh, o->kw));
  info->duration = ceil_div(work, p->h.config.vector_lanes) + 8;
  return 0;
}

/* Checks command c's fields and fills info (unit, accesses, duration...). */
static int describe(const checker *k, const program *p, const cuvil_npu_command *c, command_info *info) {
  memset(info, 0, sizeof *info);
  if (c->layer < -1 || (c->layer >= 0 && (uint32_t)c->layer >= p->h.num_layers))
    return command_fail(k, "layer %d does not exist (%u layers)", c->layer, p->h.num_layers);
  switch (c->opcode) {
  case CUVIL_NPU_OP_LOAD:
  case CUVIL_NPU_OP_STORE:
    return describe_dma(k, p, c, info);
  case CUVIL_NPU_OP_MATMUL:
    return describe_matmul(k, p, c, info);
  case CUVIL_NPU_OP_REQUANT:
    return describe_requant(k, p, c, info);
  case CUVIL_NPU_OP_ADD:
    return describe_add(k, p, c, info);
  case CUVIL_NPU_OP_POOL:
    return describe_pool(k, p, c, info);
  case CUVIL_NPU_OP_BARRIER:
    info->unit = NO_UNIT;
    return unused_zero(k, c, 0);
  default:
    return command_fail(k, "unknown opcode %d", c->opcode);
  }
}

/*--- Validation: waits and races -------------------------------------------*/

/* What a command touched, kept while some unit may still run unordered
 * with it. */
typedef struct access_record {
  int64_t lo, hi;
  int32_t seq;     /* the command's position in its unit's queue */
  uint32_t command;
  int32_t opcode, write;
  const char *what;
} access_record;

typedef struct record_list {
  access_record *items;
  size_t first, count, capacity; /* items[first, count) are live */
} record_list;

/* Vector clocks: vc[v] = how many unit-v commands are known complete. */
typedef struct analysis {
  uint32_t unit_commands[NUM_UNITS];
  int32_t *done_after[NUM_UNITS]; /* per unit command: the clock once it completed (4 each) */
  int32_t next_clock[NUM_UNITS][NUM_UNITS]; /* what unit u's next command knows at the least */
  int32_t *arguments; /* the argument indices regions name, sorted, unique */
  size_t num_arguments;
  record_list *lists; /* [memory slot][unit] */
  /* The largest host work space any command needs. */
  int64_t patch_bytes, pair_words, row_words, taps, channels;
} analysis;

static void free_analysis(analysis *a) {
  for (int u = 0; u < NUM_UNITS; ++u)
    free(a->done_after[u]);
  if (a->lists)
    for (size_t i = 0; i < (MEM_ARGUMENT + a->num_arguments) * NUM_UNITS; ++i)
      free(a->lists[i].items);
  free(a->lists);
  free(a->arguments);
}

static int compare_int32(const void *x, const void *y) {
  int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
  return (a > b) - (a < b);
}

static record_list *records_of(analysis *a, int64_t memory, int32_t unit) {
  size_t slot = (size_t)memory;
  if (memory >= MEM_ARGUMENT) {
    int32_t key = (int32_t)(memory - MEM_ARGUMENT);
    const int32_t *found = bsearch(&key, a->arguments, a->num_arguments, sizeof key, compare_int32);
    slot = MEM_ARGUMENT + (size_t)(found - a->arguments);
  }
  return &a->lists[slot * NUM_UNITS + (size_t)unit];
}

static void memory_name(int64_t memory, char *out, size_t size) {
  if (memory >= MEM_ARGUMENT)
    snprintf(out, size, "argument %lld", (long long)(memory - MEM_ARGUMENT));
  else
    snprintf(out, size, "%s", memory == MEM_SCRATCH ? "scratch" : space_names[memory + 1]);
}

static void join_clock(int32_t *into, const int32_t *from) {
  for (int u = 0; u < NUM_UNITS; ++u)
    if (from[u] > into[u])
      into[u] = from[u];
}

/* Drops the records every unit's next command is ordered after. */
static void prune_records(analysis *a) {
  size_t slots = MEM_ARGUMENT + a->num_arguments;
  for (size_t s = 0; s < slots; ++s)
    for (int unit = 0; unit < NUM_UNITS; ++unit) {
      record_list *l = &a->lists[s * NUM_UNITS + (size_t)unit];
      int32_t floor = INT32_MAX;
      for (int u = 0; u < NUM_UNITS; ++u)
        if (u != unit && a->next_clock[u][unit] < floor)
          floor = a->next_clock[u][unit];
      while (l->first < l->count && l->items[l->first].seq < floor)
        ++l->first;
      if (l->first > 64 && l->first * 2 > l->count) {
        memmove(l->items, l->items + l->first, (l->count - l->first) * sizeof *l->items);
        l->count -= l->first;
        l->first = 0;
      }
    }
}

static int record_access(analysis *a, const access *x, int32_t unit, int32_t seq, uint32_t command,
                         int32_t opcode, char *err, size_t size) {
  record_list *l = records_of(a, x->memory, unit);
  if (l->count == l->capacity) {
    size_t capacity = l->capacity ? 2 * l->capacity : 16;
    access_record *items = realloc(l->items, capacity * sizeof *items);
    if (!items)
      return fail(err, size, "out of memory while checking races");
    l->items = items;
    l->capacity = capacity;
  }
  l->items[l->count++] = (access_record){x->lo, x->hi, seq, command, opcode, x->write, x->what};
  return 0;
}

/* The first access of this command that overlaps an unordered access of
 * another unit, one of them writing. */
static int check_races(analysis *a, const checker *k, const command_info *info, const int32_t *clock) {
  for (int i = 0; i < info->num_accesses; ++i) {
    const access *x = &info->accesses[i];
    if (x->memory == MEM_NONE)
      continue;
    for (int32_t unit = 0; unit < NUM_UNITS; ++unit) {
      if (unit == info->unit)
        continue;
      const record_list *l = records_of(a, x->memory, unit);
      /* Newest first: older ones this command already waits for. */
      for (size_t j = l->count; j > l->first; --j) {
        const access_record *r = &l->items[j - 1];
        if (r->seq < clock[unit])
          break;
        if (r->lo < x->hi && x->lo < r->hi && (r->write || x->write)) {
          char name[32];
          memory_name(x->memory, name, sizeof name);
          return command_fail(k,
                              "races with command %u (%s): its %s %s [%lld, %lld) (%s) overlaps that command's %s "
                              "%s [%lld, %lld) (%s) and nothing orders them (it needs wait[%s] >= %d; its waits "
                              "guarantee %d)",
                              r->command, opcode_name(r->opcode), x->what, name, (long long)x->lo,
                              (long long)x->hi, x->write ? "written" : "read", r->what, name, (long long)r->lo,
                              (long long)r->hi, r->write ? "written" : "read", unit_names[unit], r->seq + 1,
                              clock[unit]);
        }
      }
    }
  }
  return 0;
}

/* Pass 1: every check. On success *a holds the per-unit clocks (freed by
 * free_analysis) and the work space sizes. */
static int analyze(const program *p, analysis *a, char *err, size_t size) {
  memset(a, 0, sizeof *a);
  const uint32_t n = p->h.num_commands;
  checker k = {err, size, 0, 0};

  /* The argument indices regions name, for the per-memory record lists. */
  a->arguments = malloc((p->h.num_regions ? p->h.num_regions : 1) * sizeof *a->arguments);
  if (!a->arguments)
    return fail(err, size, "out of memory");
  for (uint32_t i = 0; i < p->h.num_regions; ++i)
    if (p->regions[i].kind == CUVIL_NPU_REGION_ARGUMENT)
      a->arguments[a->num_arguments++] = p->regions[i].index;
  qsort(a->arguments, a->num_arguments, sizeof *a->arguments, compare_int32);
  size_t unique = 0;
  for (size_t i = 0; i < a->num_arguments; ++i)
    if (unique == 0 || a->arguments[unique - 1] != a->arguments[i])
      a->arguments[unique++] = a->arguments[i];
  a->num_arguments = unique;
  a->lists = calloc((MEM_ARGUMENT + a->num_arguments) * NUM_UNITS, sizeof *a->lists);

  uint32_t totals[NUM_UNITS] = {0};
  for (uint32_t i = 0; i < n; ++i) {
    cuvil_npu_command c;
    read_command(p, i, &c);
    const int unit = unit_of_opcode(c.opcode);
    if (unit != NO_UNIT)
      ++totals[unit];
  }
  for (int u = 0; u < NUM_UNITS; ++u) {
    a->done_after[u] = malloc(((size_t)totals[u] + 1) * NUM_UNITS * sizeof(int32_t));
    if (!a->done_after[u])
      return fail(err, size, "out of memory for %u commands", n);
  }
  if (!a->lists)
    return fail(err, size, "out of memory");

  for (uint32_t i = 0; i < n; ++i) {
    cuvil_npu_command c;
    read_command(p, i, &c);
    k.index = i;
    k.opcode = c.opcode;
    command_info info;
    if (describe(&k, p, &c, &info))
      return -1;
    for (int u = 0; u < NUM_UNITS; ++u)
      if (c.wait[u] < 0 || (uint32_t)c.wait[u] > a->unit_commands[u])
        return command_fail(&k, "waits for %d %s commands, but %u precede it in the stream", c.wait[u],
                            unit_names[u], a->unit_commands[u]);
    a->patch_bytes = max64(a->patch_bytes, info.patch_bytes);
    a->pair_words = max64(a->pair_words, info.pair_words);
    a->row_words = max64(a->row_words, info.row_words);
    a->taps = max64(a->taps, info.taps);
    a->channels = max64(a->channels, info.channels);

    if (info.unit == NO_UNIT) { /* a barrier: everything before is complete */
      for (int u = 0; u < NUM_UNITS; ++u)
        for (int v = 0; v < NUM_UNITS; ++v)
          if ((int32_t)a->unit_commands[v] > a->next_clock[u][v])
            a->next_clock[u][v] = (int32_t)a->unit_commands[v];
      continue;
    }
    const int32_t unit = info.unit, seq = (int32_t)a->unit_commands[unit];
    int32_t *clock = a->done_after[unit] + (size_t)seq * NUM_UNITS;
    memcpy(clock, a->next_clock[unit], sizeof a->next_clock[unit]);
    for (int v = 0; v < NUM_UNITS; ++v)
      if (c.wait[v] > 0)
        join_clock(clock, a->done_after[v] + (size_t)(c.wait[v] - 1) * NUM_UNITS);
    if (check_races(a, &k, &info, clock))
      return -1;
    for (int j = 0; j < info.num_accesses; ++j)
      if (info.accesses[j].memory != MEM_NONE &&
          record_access(a, &info.accesses[j], unit, seq, i, c.opcode, err, size))
        return -1;
    clock[unit] = seq + 1;
    memcpy(a->next_clock[unit], clock, sizeof a->next_clock[unit]);
    ++a->unit_commands[unit];
    if (i % 256 == 255)
      prune_records(a);
  }
  return 0;
}

/*--- Timing ----------------------------------------------------------------*/

/* The banks a command touches: up to three SRAM ranges. */
typedef struct bank_use {
  int32_t count;
  int32_t space[4], first[4], last[4];
} bank_use;

typedef struct timeline {
  int64_t *start[NUM_UNITS], *end[NUM_UNITS]; /* per unit command, both non-decreasing */
  bank_use *banks[NUM_UNITS];
  uint32_t count[NUM_UNITS];
  int64_t unit_free[NUM_UNITS];
  int64_t fence;   /* the last barrier's time */
  int64_t max_end; /* of every command so far */
} timeline;

static bank_use banks_of(const program *p, const command_info *info) {
  bank_use b = {0, {0}, {0}, {0}};
  for (int i = 0; i < info->num_accesses; ++i) {
    const access *x = &info->accesses[i];
    if (x->space == CUVIL_NPU_DRAM)
      continue;
    int64_t bank = p->bank_bytes[x->space];
    b.space[b.count] = x->space;
    b.first[b.count] = (int32_t)(x->lo / bank);
    b.last[b.count] = (int32_t)((x->hi - 1) / bank);
    ++b.count;
  }
  return b;
}

static bool share_bank(const bank_use *a, const bank_use *b) {
  for (int i = 0; i < a->count; ++i)
    for (int j = 0; j < b->count; ++j)
      if (a->space[i] == b->space[j] && a->first[i] <= b->last[j] && b->first[j] <= a->last[i])
        return true;
  return false;
}

/* Half the time overlap with each command of another unit, already timed,
 * that runs while [start, end) and touches one of the same banks. */
static int64_t conflict_cycles(const timeline *t, int32_t unit, const bank_use *banks, int64_t start, int64_t end) {
  int64_t extra = 0;
  if (banks->count == 0)
    return 0;
  for (int v = 0; v < NUM_UNITS; ++v) {
    if (v == unit || t->count[v] == 0)
      continue;
    /* The first of v's commands that ends after `start`. */
    uint32_t lo = 0, hi = t->count[v];
    while (lo < hi) {
      uint32_t mid = lo + (hi - lo) / 2;
      if (t->end[v][mid] > start)
        hi = mid;
      else
        lo = mid + 1;
    }
    for (uint32_t j = lo; j < t->count[v] && t->start[v][j] < end; ++j)
      if (share_bank(banks, &t->banks[v][j]))
        extra = add_sat(extra, (min64(end, t->end[v][j]) - max64(start, t->start[v][j])) / 2);
  }
  return extra;
}

/* The union of two interval lists, each sorted by start: its disjoint
 * intervals in out_* and their total length. */
static int64_t merge_intervals(const int64_t *s1, const int64_t *e1, uint32_t n1, const int64_t *s2,
                               const int64_t *e2, uint32_t n2, int64_t *out_start, int64_t *out_end,
                               uint32_t *out_count) {
  uint32_t i = 0, j = 0, m = 0;
  int64_t total = 0;
  while (i < n1 || j < n2) {
    int64_t s, e;
    if (j >= n2 || (i < n1 && s1[i] <= s2[j])) {
      s = s1[i];
      e = e1[i++];
    } else {
      s = s2[j];
      e = e2[j++];
    }
    if (m > 0 && s <= out_end[m - 1]) {
      if (e > out_end[m - 1])
        out_end[m - 1] = e;
    } else {
      out_start[m] = s;
      out_end[m++] = e;
    }
  }
  for (uint32_t x = 0; x < m; ++x)
    total = add_sat(total, out_end[x] - out_start[x]);
  *out_count = m;
  return total;
}

static void dma_figures(const timeline *t, int64_t *scratch, cuvil_npu_result *r) {
  enum { L = CUVIL_NPU_UNIT_LOAD, S = CUVIL_NPU_UNIT_STORE, M = CUVIL_NPU_UNIT_MAC, V = CUVIL_NPU_UNIT_VEC };
  uint32_t nd, nc;
  int64_t *ds = scratch, *de = ds + t->count[L] + t->count[S];
  int64_t *cs = de + t->count[L] + t->count[S], *ce = cs + t->count[M] + t->count[V];
  r->dma_busy = merge_intervals(t->start[L], t->end[L], t->count[L], t->start[S], t->end[S], t->count[S], ds, de, &nd);
  merge_intervals(t->start[M], t->end[M], t->count[M], t->start[V], t->end[V], t->count[V], cs, ce, &nc);
  int64_t hidden = 0;
  for (uint32_t i = 0, j = 0; i < nd && j < nc;) {
    int64_t s = max64(ds[i], cs[j]), e = min64(de[i], ce[j]);
    if (e > s)
      hidden += e - s;
    if (de[i] < ce[j])
      ++i;
    else
      ++j;
  }
  r->dma_exposed = r->dma_busy - hidden;
}

/*--- Execution -------------------------------------------------------------*/

typedef struct machine {
  uint8_t *sram[4]; /* by space; [CUVIL_NPU_DRAM] unused */
  uint8_t **region_base;
  uint8_t *patch;   /* a block of pixels' windows, ci * kh * kw bytes each */
  int16_t *pairs;   /* the weights of a conv or GEMM, packed by pack_pairs */
  uint32_t *row;    /* a block of pixels' co sums (conv, GEMM) or a row's ow (depthwise) */
  int32_t *taps;    /* a depthwise channel's weights */
  int32_t *offsets; /* a requant table, unpacked */
  float *multipliers, *biases;
} machine;

static void execute_dma(machine *m, const cuvil_npu_command *c) {
  const __typeof__(c->u.dma) *d = &c->u.dma;
  uint8_t *sram = m->sram[d->space] + d->sram_addr;
  uint8_t *dram = m->region_base[d->region] + d->dram_offset;
  const bool load = c->opcode == CUVIL_NPU_OP_LOAD;
  for (int64_t i2 = 0; i2 < d->n2; ++i2)
    for (int64_t i1 = 0; i1 < d->n1; ++i1) {
      uint8_t *s = sram + i2 * d->sram_stride2 + i1 * d->sram_stride1;
      uint8_t *x = dram + i2 * d->dram_stride2 + i1 * d->dram_stride1;
      if (load)
        memcpy(s, x, (size_t)d->n0);
      else
        memcpy(x, s, (size_t)d->n0);
    }
}

/* The weights [taps][co] s8 as int16 pairs of taps, pairs[t * co + 2 * c
 * + j] = w[(t + j) * co + c] for even t (0 past the last tap): the layout
 * of a 16-bit multiply-add of adjacent lanes (x86's pmaddwd), which
 * compilers find in accumulate_taps' loop. */
static void pack_pairs(const int8_t *w, int64_t taps, int64_t co, int16_t *pairs) {
  for (int64_t t = 0; t < taps; t += 2) {
    const int8_t *w0 = w + t * co, *w1 = t + 1 < taps ? w0 + co : NULL;
    int16_t *out = pairs + t * co;
    for (int64_t c = 0; c < co; ++c) {
      out[2 * c] = w0[c];
      out[2 * c + 1] = w1 ? w1[c] : 0;
    }
  }
}

/* row[c] += sum_t x[t] * w[t * co + c] for c < co, in uint32 (int32
 * wrapping), the weights packed by pack_pairs. Four taps per pass: the row
 * is read and written once per four weight rows. Every product of u8 and
 * s8 and every sum of four fits in int32. */
static void accumulate_taps(const uint8_t *x, int64_t taps, const int16_t *pairs, int64_t co,
                            uint32_t *restrict row) {
  int64_t t = 0;
  for (; t + 4 <= taps; t += 4) {
    const int16_t x0 = x[t], x1 = x[t + 1], x2 = x[t + 2], x3 = x[t + 3];
    if ((x0 | x1 | x2 | x3) == 0)
      continue; /* zero inputs (after a ReLU) are common */
    const int16_t *restrict a = pairs + t * co, *restrict b = a + 2 * co;
    for (int64_t c = 0; c < co; ++c)
      row[c] += (uint32_t)((a[2 * c] * x0 + a[2 * c + 1] * x1) + (b[2 * c] * x2 + b[2 * c + 1] * x3));
  }
  for (; t < taps; t += 2) {
    const int16_t x0 = x[t], x1 = t + 1 < taps ? x[t + 1] : 0;
    const int16_t *restrict a = pairs + t * co;
    for (int64_t c = 0; c < co; ++c)
      row[c] += (uint32_t)(a[2 * c] * x0 + a[2 * c + 1] * x1);
  }
}

/* The taps k < taps of a window whose tap k reads start + k * step that fall
 * inside [0, size): [*first, *end). */
static void taps_inside(int64_t start, int64_t step, int64_t taps, int64_t size, int64_t *first, int64_t *end) {
  int64_t lo = start >= 0 ? 0 : ceil_div(-start, step);
  int64_t hi = size - 1 - start >= 0 ? (size - 1 - start) / step + 1 : 0;
  *first = min64(lo, taps);
  *end = max64(min64(hi, taps), *first);
}

typedef struct conv_shape {
  int64_t ci, ih, iw, kh, kw, sh, sw, dh, dw, pad_top, pad_left;
  uint8_t pad_value;
} conv_shape;

/* Output pixel (y, x)'s window, [ch][ky][kx], pad_value outside the tile. */
static void gather_patch(const conv_shape *s, const uint8_t *in, int64_t y, int64_t x, uint8_t *patch) {
  const int64_t r0 = y * s->sh - s->pad_top, q0 = x * s->sw - s->pad_left, plane = s->ih * s->iw;
  const bool inside = r0 >= 0 && r0 + (s->kh - 1) * s->dh < s->ih && q0 >= 0 && q0 + (s->kw - 1) * s->dw < s->iw;
  if (inside) {
    for (int64_t ch = 0; ch < s->ci; ++ch)
      for (int64_t ky = 0; ky < s->kh; ++ky) {
        const uint8_t *src = in + ch * plane + (r0 + ky * s->dh) * s->iw + q0;
        for (int64_t kx = 0; kx < s->kw; ++kx)
          patch[kx] = src[kx * s->dw];
        patch += s->kw;
      }
    return;
  }
  for (int64_t ch = 0; ch < s->ci; ++ch)
    for (int64_t ky = 0; ky < s->kh; ++ky) {
      const int64_t r = r0 + ky * s->dh;
      const bool row_inside = r >= 0 && r < s->ih;
      for (int64_t kx = 0; kx < s->kw; ++kx) {
        const int64_t q = q0 + kx * s->dw;
        patch[kx] = row_inside && q >= 0 && q < s->iw ? in[ch * plane + r * s->iw + q] : s->pad_value;
      }
      patch += s->kw;
    }
}

static void load_row(uint32_t *row, const uint8_t *acc, int64_t n, bool accumulate) {
  if (accumulate)
    memcpy(row, acc, (size_t)n * 4);
  else
    memset(row, 0, (size_t)n * 4);
}

static void execute_depthwise(machine *m, const cuvil_npu_command *c) {
  const __typeof__(c->u.matmul) *mm = &c->u.matmul;
  const uint8_t *in = m->sram[CUVIL_NPU_ABUF] + mm->in_addr;
  const int8_t *w = (const int8_t *)(m->sram[CUVIL_NPU_WBUF] + mm->w_addr);
  uint8_t *acc = m->sram[CUVIL_NPU_ACC] + mm->acc_addr;
  const int64_t co = mm->co, ih = mm->ih, iw = mm->iw, oh = mm->oh, ow = mm->ow, kh = mm->kh, kw = mm->kw;
  const int64_t sw = mm->sw, pad_left = mm->pad_left;
  const int32_t pad = mm->pad_value;
  uint32_t *s = m->row;
  for (int64_t ch = 0; ch < co; ++ch) {
    const uint8_t *plane = in + ch * ih * iw;
    for (int64_t t = 0; t < kh * kw; ++t)
      m->taps[t] = w[t * co + ch];
    for (int64_t y = 0; y < oh; ++y) {
      for (int64_t x = 0; x < ow; ++x) {
        uint32_t v = 0;
        if (mm->accumulate)
          memcpy(&v, acc + ((y * ow + x) * co + ch) * 4, 4);
        s[x] = v;
      }
      for (int64_t ky = 0; ky < kh; ++ky) {
        const int64_t r = y * mm->sh - mm->pad_top + ky * mm->dh;
        const bool row_inside = r >= 0 && r < ih;
        for (int64_t kx = 0; kx < kw; ++kx) {
          const int32_t tap = m->taps[ky * kw + kx];
          const uint32_t padded = (uint32_t)(pad * tap);
          /* Column q = x * sw + offset is inside for x in [x_lo, x_hi). */
          const int64_t offset = kx * mm->dw - pad_left;
          int64_t x_lo = 0, x_hi = 0;
          if (row_inside)
            taps_inside(offset, sw, ow, iw, &x_lo, &x_hi);
          if (padded) {
            for (int64_t x = 0; x < x_lo; ++x)
              s[x] += padded;
            for (int64_t x = x_hi; x < ow; ++x)
              s[x] += padded;
          }
          if (x_hi > x_lo) {
            const uint8_t *src = plane + r * iw; /* src[x * sw + offset] is inside the row */
            for (int64_t x = x_lo; x < x_hi; ++x)
              s[x] += (uint32_t)(src[x * sw + offset] * tap);
          }
        }
      }
      for (int64_t x = 0; x < ow; ++x)
        memcpy(acc + ((y * ow + x) * co + ch) * 4, &s[x], 4);
    }
  }
}

/*--- FP16 -------------------------------------------------------------------*/

/* IEEE binary16 to float: exact (subnormals, infinities and NaNs too). */
static inline float half_to_float(uint16_t h) {
  const uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu;
  uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else {
    /* Zero or subnormal: mantissa * 2^-24, exact in float. */
    float f = (float)mantissa * 5.9604644775390625e-8f;
    memcpy(&bits, &f, 4);
    bits |= sign;
  }
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

/* Float to binary16, rounded to nearest even; past its range: infinity;
 * NaN stays NaN (quiet). */
static inline uint16_t float_to_half(float f) {
  uint32_t bits;
  memcpy(&bits, &f, 4);
  const uint16_t sign = (uint16_t)((bits >> 16) & 0x8000u);
  const uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u)
    return (uint16_t)(sign | 0x7e00u | ((magnitude >> 13) & 0x3ffu));
  if (magnitude >= 0x477ff000u) /* 65520 and up round past 65504 */
    return (uint16_t)(sign | 0x7c00u);
  if (magnitude < 0x38800000u) {
    /* Below 2^-14: a subnormal, in units of 2^-24, rounded to even
     * (the float multiply is exact, nearbyintf rounds ties to even). */
    float a;
    memcpy(&a, &magnitude, 4);
    return (uint16_t)(sign | (uint16_t)nearbyintf(a * 16777216.0f));
  }
  /* Normal: drop 13 mantissa bits, to nearest even; a carry moves into the
   * exponent, which is right. */
  const uint32_t rebased = magnitude - (112u << 23);
  const uint32_t rounded = rebased + 0xfffu + ((rebased >> 13) & 1u);
  return (uint16_t)(sign | (uint16_t)(rounded >> 13));
}

static void halves_to_floats(const uint8_t *src, int64_t n, float *dst) {
  for (int64_t i = 0; i < n; ++i) {
    uint16_t h;
    memcpy(&h, src + 2 * i, 2);
    dst[i] = half_to_float(h);
  }
}

/* row[c] += x[t] * w[t * co + c] for t < taps in turn: each addition one
 * rounding, as npu_isa.h fixes. A product of two binary16 values is exact
 * in float, so a fused multiply-add rounds the same. */
static void accumulate_taps_f32(const float *x, int64_t taps, const float *w, int64_t co, float *restrict row) {
  for (int64_t t = 0; t < taps; ++t) {
    const float xt = x[t];
    const float *restrict wt = w + t * co;
    for (int64_t c = 0; c < co; ++c) {
      row[c] += xt * wt[c];
    }
  }
}

/* Output pixel (y, x)'s window as floats, [ch][ky][kx], pad outside. */
static void gather_patch_f16(const conv_shape *s, const uint8_t *in, float pad, int64_t y, int64_t x, float *patch) {
  const int64_t r0 = y * s->sh - s->pad_top, q0 = x * s->sw - s->pad_left, plane = s->ih * s->iw;
  for (int64_t ch = 0; ch < s->ci; ++ch)
    for (int64_t ky = 0; ky < s->kh; ++ky) {
      const int64_t r = r0 + ky * s->dh;
      const bool row_inside = r >= 0 && r < s->ih;
      for (int64_t kx = 0; kx < s->kw; ++kx) {
        const int64_t q = q0 + kx * s->dw;
        uint16_t h;
        if (row_inside && q >= 0 && q < s->iw) {
          memcpy(&h, in + 2 * (ch * plane + r * s->iw + q), 2);
          patch[kx] = half_to_float(h);
        } else {
          patch[kx] = pad;
        }
      }
      patch += s->kw;
    }
}

static void execute_matmul_f16(machine *m, const cuvil_npu_command *c) {
  const __typeof__(c->u.matmul) *mm = &c->u.matmul;
  const uint8_t *in = m->sram[CUVIL_NPU_ABUF] + mm->in_addr;
  const uint8_t *w = m->sram[CUVIL_NPU_WBUF] + mm->w_addr;
  uint8_t *acc = m->sram[CUVIL_NPU_ACC] + mm->acc_addr;
  const float pad = half_to_float((uint16_t)mm->pad_value);
  const int64_t co = mm->co, ih = mm->ih, iw = mm->iw, oh = mm->oh, ow = mm->ow, kh = mm->kh, kw = mm->kw;
  float *row = (float *)m->row;
  if (mm->mode == CUVIL_NPU_MATMUL_DEPTHWISE) {
    float *taps = (float *)m->taps;
    for (int64_t ch = 0; ch < co; ++ch) {
      for (int64_t t = 0; t < kh * kw; ++t) {
        uint16_t h;
        memcpy(&h, w + 2 * (t * co + ch), 2);
        taps[t] = half_to_float(h);
      }
      for (int64_t y = 0; y < oh; ++y) {
        for (int64_t x = 0; x < ow; ++x) {
          float v = 0;
          if (mm->accumulate)
            memcpy(&v, acc + ((y * ow + x) * co + ch) * 4, 4);
          row[x] = v;
        }
        for (int64_t ky = 0; ky < kh; ++ky) {
          const int64_t r = y * mm->sh - mm->pad_top + ky * mm->dh;
          for (int64_t kx = 0; kx < kw; ++kx) {
            const float tap = taps[ky * kw + kx];
            for (int64_t x = 0; x < ow; ++x) {
              const int64_t q = x * mm->sw - mm->pad_left + kx * mm->dw;
              float xv = pad;
              if (r >= 0 && r < ih && q >= 0 && q < iw) {
                uint16_t h;
                memcpy(&h, in + 2 * ((ch * ih + r) * iw + q), 2);
                xv = half_to_float(h);
              }
              row[x] += xv * tap;
            }
          }
        }
        for (int64_t x = 0; x < ow; ++x)
          memcpy(acc + ((y * ow + x) * co + ch) * 4, &row[x], 4);
      }
    }
    return;
  }
  const bool gemm = mm->mode == CUVIL_NPU_MATMUL_GEMM;
  const conv_shape s = {mm->ci,       mm->ih, mm->iw, mm->kh, mm->kw, mm->sh, mm->sw,
                        mm->dh,       mm->dw, mm->pad_top,    mm->pad_left,   0};
  const int64_t taps = gemm ? s.ci : s.ci * s.kh * s.kw, pixels = oh * ow;
  float *weights = (float *)m->pairs, *patch = (float *)m->patch;
  halves_to_floats(w, taps * co, weights);
  for (int64_t p0 = 0; p0 < pixels; p0 += BLOCK_PIXELS) {
    const int64_t n = min64(BLOCK_PIXELS, pixels - p0);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t p = p0 + i;
      float *window = patch;
      if (gemm)
        halves_to_floats(in + 2 * p * s.ci, s.ci, window);
      else
        gather_patch_f16(&s, in, pad, p / ow, p % ow, window);
      if (mm->accumulate)
        memcpy(row, acc + p * co * 4, (size_t)co * 4);
      else
        memset(row, 0, (size_t)co * 4);
      accumulate_taps_f32(window, taps, weights, co, row);
      memcpy(acc + p * co * 4, row, (size_t)co * 4);
    }
  }
}

static void execute_matmul(machine *m, const cuvil_npu_command *c) {
  const __typeof__(c->u.matmul) *mm = &c->u.matmul;
  if (mm->dtype == CUVIL_NPU_DTYPE_FP16) {
    execute_matmul_f16(m, c);
    return;
  }
  if (mm->mode == CUVIL_NPU_MATMUL_DEPTHWISE) {
    execute_depthwise(m, c);
    return;
  }
  const bool gemm = mm->mode == CUVIL_NPU_MATMUL_GEMM;
  const uint8_t *in = m->sram[CUVIL_NPU_ABUF] + mm->in_addr;
  const int8_t *w = (const int8_t *)(m->sram[CUVIL_NPU_WBUF] + mm->w_addr);
  uint8_t *acc = m->sram[CUVIL_NPU_ACC] + mm->acc_addr;
  const int64_t co = mm->co, pixels = (int64_t)mm->oh * mm->ow;
  const conv_shape s = {mm->ci, mm->ih,  mm->iw,      mm->kh,       mm->kw,
                        mm->sh, mm->sw,  mm->dh,      mm->dw,       mm->pad_top,
                        mm->pad_left, (uint8_t)mm->pad_value};
  const int64_t taps = gemm ? s.ci : s.ci * s.kh * s.kw;
  /* A multiple of 4 taps (accumulate_taps' step), so slices start at pairs. */
  const int64_t slice = max64(4, SLICE_BYTES / (4 * co) * 4);
  pack_pairs(w, taps, co, m->pairs);
  for (int64_t p0 = 0; p0 < pixels; p0 += BLOCK_PIXELS) {
    const int64_t n = min64(BLOCK_PIXELS, pixels - p0);
    const uint8_t *windows[BLOCK_PIXELS];
    for (int64_t i = 0; i < n; ++i) {
      const int64_t p = p0 + i;
      if (gemm) {
        windows[i] = in + p * s.ci;
      } else {
        gather_patch(&s, in, p / mm->ow, p % mm->ow, m->patch + i * taps);
        windows[i] = m->patch + i * taps;
      }
      load_row(m->row + i * co, acc + p * co * 4, co, mm->accumulate);
    }
    for (int64_t t0 = 0; t0 < taps; t0 += slice) {
      const int64_t count = min64(slice, taps - t0);
      for (int64_t i = 0; i < n; ++i)
        accumulate_taps(windows[i] + t0, count, m->pairs + t0 * co, co, m->row + i * co);
    }
    memcpy(acc + p0 * co * 4, m->row, (size_t)(n * co) * 4);
  }
}

/* A rounded value to its stored byte: NaN or beyond int64 -> lo (what
 * x86's conversion to int64 makes of it, QuantArithmetic.h), else clamped
 * to [lo, hi]; an s8 value is stored as its bits. */
static inline uint8_t to_storage(float v, int32_t lo, int32_t hi) {
  if (!(v > -9223372036854775808.0f && v < 9223372036854775808.0f))
    return (uint8_t)lo;
  int64_t q = (int64_t)v;
  return (uint8_t)(q < lo ? lo : q > hi ? hi : q);
}

static void execute_requant(machine *m, const cuvil_npu_command *c) {
  const __typeof__(c->u.requant) *r = &c->u.requant;
  const uint8_t *acc = m->sram[CUVIL_NPU_ACC] + r->acc_addr;
  const uint8_t *table = m->sram[CUVIL_NPU_WBUF] + r->table_addr;
  uint8_t *out = m->sram[CUVIL_NPU_ABUF] + r->out_addr;
  const int64_t channels = r->channels;
  for (int64_t ch = 0; ch < channels; ++ch) {
    memcpy(&m->offsets[ch], table + ch * 12, 4);
    memcpy(&m->multipliers[ch], table + ch * 12 + 4, 4);
    memcpy(&m->biases[ch], table + ch * 12 + 8, 4);
  }
  const float zero = (float)r->y_zero;
  for (int64_t p = 0; p < r->pixels; ++p)
    for (int64_t ch = 0; ch < channels; ++ch) {
      uint32_t raw;
      memcpy(&raw, acc + (p * channels + ch) * 4, 4);
      const float a = (float)wrap_int32(raw + (uint32_t)m->offsets[ch]);
      const float multiplier = m->multipliers[ch];
      const int64_t at = r->layout == 0 ? ch * r->out_plane + p : p * channels + ch;
      switch (r->mode) {
      case CUVIL_NPU_REQUANT_QNNPACK:
        out[at] = to_storage(zero + nearbyintf(a * multiplier), r->y_min, r->y_max);
        break;
      case CUVIL_NPU_REQUANT_ONEDNN: {
        float t = (a + m->biases[ch]) * multiplier;
        NPU_ROUNDED(t);
        out[at] = to_storage(nearbyintf(t + zero), r->y_min, r->y_max);
        break;
      }
      case CUVIL_NPU_REQUANT_F32: {
        const float y = a * multiplier;
        memcpy(out + at * 4, &y, 4);
        break;
      }
      case CUVIL_NPU_REQUANT_FLOAT: {
        float y;
        memcpy(&y, acc + (p * channels + ch) * 4, 4);
        y += m->biases[ch];
        if (r->relu && y < 0)
          y = 0;
        if (r->out_f16) {
          const uint16_t h = float_to_half(y);
          memcpy(out + at * 2, &h, 2);
        } else {
          memcpy(out + at * 4, &y, 4);
        }
        break;
      }
      default: { /* CUVIL_NPU_REQUANT_F32_ONEDNN */
        const float y = (a + m->biases[ch]) * multiplier;
        memcpy(out + at * 4, &y, 4);
        break;
      }
      }
    }
}

static void execute_add(machine *m, const cuvil_npu_command *c) {
  const __typeof__(c->u.add) *d = &c->u.add;
  uint8_t *abuf = m->sram[CUVIL_NPU_ABUF];
  const uint8_t *a = abuf + d->a_addr, *b = abuf + d->b_addr;
  uint8_t *out = abuf + d->out_addr;
  if (d->mode == CUVIL_NPU_ADD_QNNPACK) {
    const uint32_t am = (uint32_t)d->a_multiplier, bm = (uint32_t)d->b_multiplier;
    const int32_t mask = d->remainder_mask, threshold = d->remainder_threshold, shift = d->shift;
    for (int64_t i = 0; i < d->count; ++i) {
      const int32_t acc = wrap_int32((uint32_t)d->zero_point_product + a[i] * am + b[i] * bm);
      const int32_t remainder = (acc & mask) - (int32_t)(acc < 0);
      /* >> of a negative int32: arithmetic on every compiler this builds with. */
      const int64_t y = (int64_t)((acc >> shift) + (int32_t)(remainder > threshold)) + d->y_zero;
      out[i] = (uint8_t)(y < d->y_min ? d->y_min : y > d->y_max ? d->y_max : y);
    }
    return;
  }
  /* dequantizeFused: fma(s, q, s * -z), one rounding. */
  const float sa = float_of_bits(d->sa_bits), sb = float_of_bits(d->sb_bits);
  const float inverse = float_of_bits(d->inv_sy_bits), zero = (float)d->y_zero;
  const float pa = sa * (float)(-(int64_t)d->za), pb = sb * (float)(-(int64_t)d->zb);
  for (int64_t i = 0; i < d->count; ++i) {
    float sum = fmaf(sa, (float)a[i], pa) + fmaf(sb, (float)b[i], pb);
    if (d->relu)
      sum = fmaxf(sum, 0.0f);
    out[i] = to_storage(zero + nearbyintf(sum * inverse), d->y_min, d->y_max);
  }
}

static void execute_pool(machine *m, const cuvil_npu_command *c) {
  const __typeof__(c->u.pool) *o = &c->u.pool;
  const uint8_t *in = m->sram[CUVIL_NPU_ABUF] + o->in_addr;
  uint8_t *out = m->sram[CUVIL_NPU_ABUF] + o->out_addr;
  const int64_t ih = o->ih, iw = o->iw, oh = o->oh, ow = o->ow;
  const float ratio = float_of_bits(o->ratio_bits), zero = (float)o->y_zero;
  for (int64_t ch = 0; ch < o->channels; ++ch) {
    const uint8_t *plane = in + ch * ih * iw;
    for (int64_t y = 0; y < oh; ++y)
      for (int64_t x = 0; x < ow; ++x) {
        /* Only the taps inside the input count (this also bounds the
         * work of a window far larger than the input). */
        int64_t ky0, ky1, kx0, kx1;
        taps_inside(y * o->sh - o->pad_top, o->dh, o->kh, ih, &ky0, &ky1);
        taps_inside(x * o->sw - o->pad_left, o->dw, o->kw, iw, &kx0, &kx1);
        uint32_t sum = 0;
        int64_t taps = 0;
        uint8_t largest = 0; /* an empty window's max is 0 (PyTorch's u8 lowest) */
        for (int64_t ky = ky0; ky < ky1; ++ky) {
          const int64_t r = y * o->sh - o->pad_top + ky * o->dh;
          for (int64_t kx = kx0; kx < kx1; ++kx) {
            const uint8_t v = plane[r * iw + x * o->sw - o->pad_left + kx * o->dw];
            largest = v > largest ? v : largest;
            sum += (uint32_t)v - (uint32_t)o->x_zero;
            ++taps;
          }
        }
        uint8_t *y_out = out + (ch * oh + y) * ow + x;
        if (o->mode == CUVIL_NPU_POOL_MAX) {
          *y_out = largest;
          continue;
        }
        /* averageMultiplier / averageValue */
        float multiplier = ratio;
        if (o->mode == CUVIL_NPU_POOL_AVG)
          multiplier = ratio / (float)(o->count_include_pad ? (int64_t)o->kh * o->kw : taps);
        float t = (float)wrap_int32(sum) * multiplier;
        NPU_ROUNDED(t);
        const float v = o->round_first ? nearbyintf(t) + zero : nearbyintf(t + zero);
        /* NaN (an empty window without count_include_pad): y_min. */
        *y_out = (uint8_t)(isnan(v) || v < (float)o->y_min ? o->y_min : v > (float)o->y_max ? o->y_max : (int32_t)v);
      }
  }
}

/*--- Entry points ----------------------------------------------------------*/

int cuvil_npu_validate(const uint8_t *blob, uint64_t bytes, char *err, size_t err_size) {
  program p;
  if (load_program(blob, bytes, &p, err, err_size))
    return -1;
  analysis a;
  int status = analyze(&p, &a, err, err_size);
  free_analysis(&a);
  free(p.regions);
  return status;
}

static void free_run(machine *m, timeline *t) {
  for (int s = 1; s < 4; ++s)
    free(m->sram[s]);
  free(m->region_base);
  free(m->patch);
  free(m->pairs);
  free(m->row);
  free(m->taps);
  free(m->offsets);
  free(m->multipliers);
  free(m->biases);
  for (int u = 0; u < NUM_UNITS; ++u) {
    free(t->start[u]);
    free(t->end[u]);
    free(t->banks[u]);
  }
}

/* Pointers to every region's first byte; -1 when the call lacks one that
 * a region of some bytes needs (an empty region is never accessed). */
static int bind_regions(const program *p, machine *m, void *const *args, uint8_t *scratch, char *err,
                        size_t size) {
  m->region_base = calloc(p->h.num_regions ? p->h.num_regions : 1, sizeof *m->region_base);
  if (!m->region_base)
    return fail(err, size, "out of memory");
  for (uint32_t i = 0; i < p->h.num_regions; ++i) {
    const cuvil_npu_region *r = &p->regions[i];
    if (r->kind == CUVIL_NPU_REGION_ARGUMENT) {
      if (r->bytes > 0 && (!args || !args[r->index]))
        return fail(err, size, "region %u: argument %d is NULL", i, r->index);
      m->region_base[i] = args ? (uint8_t *)args[r->index] : NULL;
    } else if (r->kind == CUVIL_NPU_REGION_CONSTANTS) {
      /* Loads only read it (stores into the constants are refused). */
      m->region_base[i] = (uint8_t *)(uintptr_t)(p->blob + p->h.constants_offset + r->index);
    } else {
      if (r->bytes > 0 && !scratch)
        return fail(err, size, "region %u: the scratch buffer is NULL", i);
      m->region_base[i] = scratch ? scratch + r->index : NULL;
    }
  }
  return 0;
}

int cuvil_npu_run(const uint8_t *blob, uint64_t bytes, void *const *args, uint8_t *scratch,
                  cuvil_npu_result *result, cuvil_npu_event *events, char *err, size_t err_size) {
  program p;
  if (load_program(blob, bytes, &p, err, err_size))
    return -1;
  analysis a;
  int status = analyze(&p, &a, err, err_size);
  uint32_t unit_commands[NUM_UNITS];
  memcpy(unit_commands, a.unit_commands, sizeof unit_commands);
  const int64_t patch_bytes = a.patch_bytes, pair_words = a.pair_words, row_words = a.row_words, taps = a.taps,
                channels = a.channels;
  free_analysis(&a);
  if (status) {
    free(p.regions);
    return -1;
  }

  machine m;
  timeline t;
  memset(&m, 0, sizeof m);
  memset(&t, 0, sizeof t);
  const int64_t sram_bytes[4] = {0, p.h.config.wbuf_bytes, p.h.config.abuf_bytes, p.h.config.acc_bytes};
  for (int s = 1; s < 4; ++s)
    m.sram[s] = calloc((size_t)sram_bytes[s], 1);
  m.patch = malloc((size_t)patch_bytes + 1);
  m.pairs = malloc(((size_t)pair_words + 1) * sizeof *m.pairs);
  m.row = malloc(((size_t)row_words + 1) * sizeof *m.row);
  m.taps = malloc(((size_t)taps + 1) * sizeof *m.taps);
  m.offsets = malloc(((size_t)channels + 1) * sizeof *m.offsets);
  m.multipliers = malloc(((size_t)channels + 1) * sizeof *m.multipliers);
  m.biases = malloc(((size_t)channels + 1) * sizeof *m.biases);
  bool allocated = m.sram[1] && m.sram[2] && m.sram[3] && m.patch && m.pairs && m.row && m.taps && m.offsets &&
                   m.multipliers && m.biases;
  for (int u = 0; u < NUM_UNITS; ++u) {
    t.start[u] = malloc(((size_t)unit_commands[u] + 1) * sizeof(int64_t));
    t.end[u] = malloc(((size_t)unit_commands[u] + 1) * sizeof(int64_t));
    t.banks[u] = malloc(((size_t)unit_commands[u] + 1) * sizeof(bank_use));
    allocated = allocated && t.start[u] && t.end[u] && t.banks[u];
  }
  if (!allocated) {
    free_run(&m, &t);
    free(p.regions);
    return fail(err, err_size, "out of memory for the SRAMs (%d + %d + %d bytes) and the timeline",
                p.h.config.wbuf_bytes, p.h.config.abuf_bytes, p.h.config.acc_bytes);
  }
  if (bind_regions(&p, &m, args, scratch, err, err_size)) {
    free_run(&m, &t);
    free(p.regions);
    return -1;
  }

  cuvil_npu_result r;
  memset(&r, 0, sizeof r);
  checker k = {err, err_size, 0, 0};
  for (uint32_t i = 0; i < p.h.num_commands; ++i) {
    cuvil_npu_command c;
    read_command(&p, i, &c);
    command_info info;
    k.index = i;
    k.opcode = c.opcode;
    (void)describe(&k, &p, &c, &info); /* cannot fail: analyze accepted it */
    cuvil_npu_event e = {(int32_t)i, unit_of_opcode(c.opcode), c.opcode, c.layer, 0, 0, 0, 0, 0, 0};
    if (info.unit == NO_UNIT) {
      t.fence = t.max_end;
      e.start = e.end = t.fence;
    } else {
      const int32_t unit = info.unit;
      const uint32_t seq = t.count[unit];
      const int64_t ready = max64(t.unit_free[unit], t.fence);
      int64_t start = ready;
      for (int v = 0; v < NUM_UNITS; ++v)
        if (c.wait[v] > 0)
          start = max64(start, t.end[v][c.wait[v] - 1]);
      const bank_use banks = banks_of(&p, &info);
      const int64_t conflict = conflict_cycles(&t, unit, &banks, start, start + info.duration);
      /* Saturating: a hostile program's cycle counts must not overflow. */
      e.start = start;
      e.end = add_sat(add_sat(start, info.duration), conflict);
      e.stall = start - t.unit_free[unit];
      e.conflict = conflict;
      e.bytes = info.bytes;
      e.macs = info.macs;
      t.start[unit][seq] = e.start;
      t.end[unit][seq] = e.end;
      t.banks[unit][seq] = banks;
      t.count[unit] = seq + 1;
      t.unit_free[unit] = e.end;
      t.max_end = max64(t.max_end, e.end);

      r.busy[unit] = add_sat(r.busy[unit], e.end - e.start);
      r.stall[unit] = add_sat(r.stall[unit], e.stall);
      r.conflict_cycles = add_sat(r.conflict_cycles, conflict);
      r.macs = add_sat(r.macs, e.macs);
      if (unit == CUVIL_NPU_UNIT_LOAD)
        r.load_bytes = add_sat(r.load_bytes, e.bytes);
      if (unit == CUVIL_NPU_UNIT_STORE)
        r.store_bytes = add_sat(r.store_bytes, e.bytes);

      switch (c.opcode) {
      case CUVIL_NPU_OP_LOAD:
      case CUVIL_NPU_OP_STORE:
        execute_dma(&m, &c);
        break;
      case CUVIL_NPU_OP_MATMUL:
        execute_matmul(&m, &c);
        break;
      case CUVIL_NPU_OP_REQUANT:
        execute_requant(&m, &c);
        break;
      case CUVIL_NPU_OP_ADD:
        execute_add(&m, &c);
        break;
      default:
        execute_pool(&m, &c);
        break;
      }
    }
    if (events)
      events[i] = e;
  }
  r.cycles = t.max_end;
  r.mac_slot_cycles = r.busy[CUVIL_NPU_UNIT_MAC];

  uint32_t all = 0;
  for (int u = 0; u < NUM_UNITS; ++u)
    all += t.count[u];
  int64_t *sweep = malloc(((size_t)all + 1) * 2 * sizeof *sweep);
  if (!sweep) {
    free_run(&m, &t);
    free(p.regions);
    return fail(err, err_size, "out of memory");
  }
  dma_figures(&t, sweep, &r);
  free(sweep);
  if (result)
    *result = r;
  free_run(&m, &t);
  free(p.regions);
  return 0;
}
