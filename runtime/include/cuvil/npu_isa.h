/*===- cuvil/npu_isa.h - The virtual NPU's command stream -------------------===*
 *
 * The binary contract between the compiler (targets/NPU, which writes NPU
 * programs) and the simulator in the runtime (runtime/npu, which runs
 * them). targets/NPU/ARCHITECTURE.md describes the machine; this header
 * fixes its encoding. Plain C (the runtime is C11), shared with C++.
 *
 * A program is one blob, every field little-endian, every section 8-byte
 * aligned:
 *   cuvil_npu_header | commands[num_commands] | regions[num_regions]
 *   | layers[num_layers] | constants (weights, epilogue tables) | strings
 * Offsets are bytes from the start of the blob.
 *
 * Memory: DRAM is addressed as (region, offset): a region is one of the
 * buffers the segment's call passes (its inputs and outputs, in order), the
 * program's constants, or the segment's scratch buffer (intermediates that
 * live in DRAM between layers). On chip, three SRAMs with addresses from 0:
 * the weight buffer (WBUF), the activation buffer (ABUF) and the int32
 * accumulator buffer (ACC). SRAM addresses are bytes in every SRAM (ACC's
 * int32 element i of a command is at acc_addr + 4 * i); activations in
 * ABUF are u8.
 *
 * Units: LOAD (DMA from DRAM), STORE (DMA to DRAM), MAC (the array) and VEC
 * (the vector unit). The dispatcher sends each command to its unit's queue
 * in stream order; each unit runs its queue in order. A command starts when
 * its unit is free and, for every unit u, unit u has completed at least
 * wait[u] commands (a count from the start of the program). A wait may only
 * name commands earlier in the stream. BARRIER belongs to no unit: it is
 * not counted by any wait[u], and every command after it starts after every
 * command before it has completed. Nothing else orders two units: a
 * command that may touch SRAM another unit's unordered command writes (or
 * write what it reads) is a race, which the simulator refuses.
 *
 *===----------------------------------------------------------------------===*/
#ifndef CUVIL_NPU_ISA_H
#define CUVIL_NPU_ISA_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CUVIL_NPU_MAGIC 0x314e5043u /* "CPN1" */
/* 2: MATMUL's dtype (FP16 on the array) and REQUANT's float epilogue. A
 * version-1 program is a version-2 program with those fields zero. */
#define CUVIL_NPU_ISA_VERSION 2

enum cuvil_npu_unit {
  CUVIL_NPU_UNIT_LOAD = 0,
  CUVIL_NPU_UNIT_STORE = 1,
  CUVIL_NPU_UNIT_MAC = 2,
  CUVIL_NPU_UNIT_VEC = 3,
  CUVIL_NPU_NUM_UNITS = 4
};

enum cuvil_npu_space {
  CUVIL_NPU_DRAM = 0,
  CUVIL_NPU_WBUF = 1,
  CUVIL_NPU_ABUF = 2,
  CUVIL_NPU_ACC = 3
};

enum cuvil_npu_opcode {
  CUVIL_NPU_OP_LOAD = 1,    /* LOAD unit: DRAM -> WBUF or ABUF */
  CUVIL_NPU_OP_STORE = 2,   /* STORE unit: ABUF -> DRAM */
  CUVIL_NPU_OP_MATMUL = 3,  /* MAC unit: ABUF x WBUF -> ACC */
  CUVIL_NPU_OP_REQUANT = 4, /* VEC unit: ACC -> ABUF (8-bit or f32) */
  CUVIL_NPU_OP_ADD = 5,     /* VEC unit: ABUF + ABUF -> ABUF (quantized sum) */
  CUVIL_NPU_OP_POOL = 6,    /* VEC unit: ABUF -> ABUF (max or average pooling) */
  CUVIL_NPU_OP_BARRIER = 7  /* every unit: starts when all earlier commands completed */
};

/* The machine a program was compiled for; the simulator runs it as given
 * (a device profile changes these numbers). */
typedef struct cuvil_npu_config {
  int32_t array_k;        /* MAC array: reduction lanes (input values per cycle) */
  int32_t array_n;        /* MAC array: output lanes (output channels per cycle) */
  int32_t wbuf_bytes, abuf_bytes, acc_bytes;
  int32_t wbuf_banks, abuf_banks, acc_banks; /* equal contiguous banks per SRAM */
  int32_t dram_bytes_per_cycle;              /* per DMA unit (LOAD, STORE) */
  int32_t dram_latency;                      /* cycles before a transfer's first byte */
  int32_t dram_burst;                        /* bytes: a row shorter than this costs this much */
  int32_t vector_lanes;                      /* VEC elements per cycle */
  int32_t clock_mhz;
  int32_t alignment; /* SRAM addresses of LOAD/STORE/MATMUL operands: multiples of this */
  int32_t reserved[2];
} cuvil_npu_config;

typedef struct cuvil_npu_header {
  uint32_t magic, version;
  cuvil_npu_config config;
  uint32_t num_commands, commands_offset;
  uint32_t num_regions, regions_offset;
  uint32_t num_layers, layers_offset;
  uint32_t constants_offset, constants_bytes;
  uint32_t strings_offset, strings_bytes;
  uint32_t num_arguments;   /* pointers the call passes (inputs, then outputs) */
  uint32_t scratch_bytes;   /* the scratch buffer the call passes */
  uint32_t blob_bytes;      /* the whole program */
  uint32_t name_offset;     /* the segment's name (strings) */
} cuvil_npu_header;

enum cuvil_npu_region_kind {
  CUVIL_NPU_REGION_ARGUMENT = 0,  /* base: the call's pointer number `index` */
  CUVIL_NPU_REGION_CONSTANTS = 1, /* base: constants section + `index` bytes */
  CUVIL_NPU_REGION_SCRATCH = 2    /* base: scratch buffer + `index` bytes */
};

typedef struct cuvil_npu_region {
  int32_t kind, index;
  int64_t bytes; /* accesses must stay within [base, base + bytes) */
} cuvil_npu_region;

/* A layer of the model (one cuvil op) the commands are tagged with, for
 * the reports. */
typedef struct cuvil_npu_layer {
  uint32_t name_offset; /* strings: the op's location or name */
  uint32_t kind_offset; /* strings: "conv2d", "linear", "add", ... */
  int64_t macs;         /* useful multiply-accumulates of the whole layer */
} cuvil_npu_layer;

/* MATMUL modes. */
enum cuvil_npu_matmul_mode {
  CUVIL_NPU_MATMUL_CONV = 0,      /* input [ci][ih][iw] u8, weights [ci*kh*kw][co] s8 */
  CUVIL_NPU_MATMUL_DEPTHWISE = 1, /* input [c][ih][iw] u8, weights [kh*kw][c] s8 (co == ci) */
  CUVIL_NPU_MATMUL_GEMM = 2       /* input [m][k] u8 (m = oh, k = ci), weights [k][n] s8 (n = co) */
};

/* MATMUL element types: INT8 (u8 activations x s8 weights into int32
 * sums, wrapping) or FP16 (IEEE binary16 activations and weights into f32
 * sums: each product is exact in f32, and each output's sum is taken in
 * order of the reduction index, one f32 rounding, to nearest even, per
 * addition; the array runs FP16 at half rate). */
enum cuvil_npu_dtype {
  CUVIL_NPU_DTYPE_INT8 = 0,
  CUVIL_NPU_DTYPE_FP16 = 1
};

/* REQUANT modes: y from a = acc + offset[c] (int32, wrapping) with the
 * column's table entry {int32 offset; float multiplier; float bias}:
 *   QNNPACK:      clamp(float(y_zero) + nearbyint(float(a) * multiplier))
 *   ONEDNN:       clamp(nearbyint((float(a) + bias) * multiplier + float(y_zero)))
 *   F32:          float(a) * multiplier                         (4-byte output)
 *   F32_ONEDNN:   (float(a) + bias) * multiplier                (4-byte output)
 * each step rounded to float, no fused multiply-add, ties to even; a value
 * that is NaN or beyond int64 becomes y_min (QuantArithmetic.h), else it
 * is clamped to [y_min, y_max] and stored as one byte. */
enum cuvil_npu_requant_mode {
  CUVIL_NPU_REQUANT_QNNPACK = 0,
  CUVIL_NPU_REQUANT_ONEDNN = 1,
  CUVIL_NPU_REQUANT_F32 = 2,
  CUVIL_NPU_REQUANT_F32_ONEDNN = 3,
  /* FP16 products: acc holds f32 sums; y = acc + bias (the table entry's
   * float bias, one f32 rounding), max(y, 0) with relu (a NaN stays NaN),
   * written as f32 (4 bytes) or, with out_f16, rounded to binary16 (to
   * nearest even; beyond its range: infinity). offset, multiplier, y_zero,
   * y_min and y_max are not read. */
  CUVIL_NPU_REQUANT_FLOAT = 4
};

/* ADD modes (QuantArithmetic.h's addValues and qnnpackAdd). */
enum cuvil_npu_add_mode {
  CUVIL_NPU_ADD_FLOAT = 0,  /* fma(sa, a, sa * -za) + fma(sb, b, sb * -zb), relu, quantized */
  CUVIL_NPU_ADD_QNNPACK = 1 /* QNNPACK's fixed-point sum */
};

/* POOL modes. */
enum cuvil_npu_pool_mode {
  CUVIL_NPU_POOL_MAX = 0,         /* taps outside the input are skipped */
  CUVIL_NPU_POOL_AVG = 1,         /* PyTorch's x86 quantized average (averageMultiplier) */
  CUVIL_NPU_POOL_AVG_QNNPACK = 2  /* QNNPACK's (qnnpackAverageMultiplier, precomputed) */
};

/* One command: 32 words (128 bytes). Unused words are zero. */
typedef struct cuvil_npu_command {
  int32_t opcode; /* cuvil_npu_opcode */
  int32_t layer;  /* index into the layers, -1: none */
  int32_t wait[CUVIL_NPU_NUM_UNITS];
  union {
    int32_t words[26];
    /* LOAD: DRAM (region, offset) -> space (WBUF or ABUF) at sram_addr;
     * STORE: ABUF (space == CUVIL_NPU_ABUF) at sram_addr -> DRAM. n2
     * planes of n1 rows of n0 contiguous bytes (each at least 1); strides
     * in bytes, possibly negative; the SRAM rows must not overlap.
     * Alignment applies to sram_addr. */
    struct {
      int32_t region, dram_offset, space, sram_addr;
      int32_t n2, n1, n0;
      int32_t dram_stride2, dram_stride1, sram_stride2, sram_stride1;
    } dma;
    /* MATMUL: for output pixel p = (y, x), y < oh, x < ow, and column
     * c < co, with X(ch, r, q) = in[ch * ih * iw + r * iw + q] inside the
     * tile and pad_value outside it, r = y * sh - pad_top + ky * dh,
     * q = x * sw - pad_left + kx * dw:
     *   CONV:      s = sum_{ch < ci, ky < kh, kx < kw} X(ch, r, q) * W[((ch * kh + ky) * kw + kx) * co + c]
     *   DEPTHWISE: s = sum_{ky, kx} X(c, r, q) * W[(ky * kw + kx) * co + c]            (ci == co)
     *   GEMM:      s = sum_{k < ci} in[y * ci + k] * W[k * co + c]                     (ow == 1)
     * (GEMM reads oh * ci input bytes and no ih, iw, kernel, stride,
     * dilation or padding; CONV and DEPTHWISE pads may be negative)
     * acc[(y * ow + x) * co + c] = (accumulate ? acc[...] : 0) + s, int32
     * wrapping; inputs u8, weights s8. With dtype FP16 every element of
     * the input and the weights is 2 bytes (binary16; addresses and sizes
     * above count elements), pad_value is the bits of a binary16, and the
     * sums are f32: acc + product for each reduction index in turn
     * (cuvil_npu_dtype). */
    struct {
      int32_t mode;
      int32_t in_addr, ci, ih, iw;
      int32_t w_addr;
      int32_t acc_addr, co, oh, ow;
      int32_t kh, kw, sh, sw, dh, dw;
      int32_t pad_top, pad_left, pad_value;
      int32_t accumulate;
      int32_t dtype; /* cuvil_npu_dtype */
    } matmul;
    /* REQUANT: acc [pixels][channels] int32 at acc_addr; the table
     * ({int32, float, float} per channel, 12 bytes) at table_addr in WBUF;
     * the output in ABUF at out_addr: layout 0 = channel planes,
     * out[c * out_plane + p] (elements, out_plane >= pixels), layout 1 =
     * rows, out[p * channels + c]. relu and out_f16 (flags) are read by
     * the FLOAT mode only. */
    struct {
      int32_t mode;
      int32_t acc_addr, pixels, channels;
      int32_t table_addr;
      int32_t out_addr, layout, out_plane;
      int32_t y_zero, y_min, y_max;
      int32_t relu, out_f16;
    } requant;
    /* ADD: out[i] from a[i], b[i], i < count, all ABUF bytes. FLOAT:
     * s = fma(sa, a, sa * -za) + fma(sb, b, sb * -zb), max(s, 0) with
     * relu, y = clamp(float(y_zero) + nearbyint(s * inv_sy), y_min, y_max).
     * out may be a or b itself (in place), else overlaps neither.
     * QNNPACK (relu not read: y_min is the floor; shift < 32):
     * QuantArithmetic.h's qnnpackAdd with these parameters and
     * lo = y_min, hi = y_max. Floats are passed as their bits. */
    struct {
      int32_t mode;
      int32_t a_addr, b_addr, out_addr, count;
      int32_t relu;
      int32_t sa_bits, za, sb_bits, zb, inv_sy_bits;
      int32_t y_zero, y_min, y_max;
      int32_t a_multiplier, b_multiplier, shift, zero_point_product, remainder_mask,
          remainder_threshold;
    } add;
    /* POOL: channels c < channels, planes in [c][ih][iw] -> out [c][oh][ow]
     * (ABUF bytes); the window of (y, x) starts at row y * sh - pad_top,
     * column x * sw - pad_left (taps dh, dw apart; average pools: 1).
     * AVG: acc = sum (q - x_zero) (uint32 wrapping, as int32) over the taps
     * inside the input, d = count_include_pad ? kh * kw : taps,
     * m = float(ratio) / float(d), ratio = float(sx) / float(sy);
     * AVG_QNNPACK: m = ratio (the precomputed multiplier). Then
     * y = round_first ? nearbyint(float(acc) * m) + float(y_zero)
     *                 : nearbyint(float(acc) * m + float(y_zero)),
     * clamped to [y_min, y_max] (QuantArithmetic.h's averageValue; NaN,
     * from a window with no taps and d = 0, gives y_min).
     * MAX: the largest tap inside the input, 0 when there is none; x_zero,
     * y_zero, y_min, y_max and ratio are not read. in and out must not
     * overlap. */
    struct {
      int32_t mode;
      int32_t in_addr, channels, ih, iw;
      int32_t out_addr, oh, ow;
      int32_t kh, kw, sh, sw, dh, dw, pad_top, pad_left;
      int32_t x_zero, y_zero, y_min, y_max;
      int32_t ratio_bits, count_include_pad, round_first;
    } pool;
  } u;
} cuvil_npu_command;

/* The unit that runs `opcode`; -1 for a barrier (no unit) and unknown
 * opcodes. */
static inline int cuvil_npu_unit_of(int32_t opcode) {
  switch (opcode) {
  case CUVIL_NPU_OP_LOAD:
    return CUVIL_NPU_UNIT_LOAD;
  case CUVIL_NPU_OP_STORE:
    return CUVIL_NPU_UNIT_STORE;
  case CUVIL_NPU_OP_MATMUL:
    return CUVIL_NPU_UNIT_MAC;
  case CUVIL_NPU_OP_REQUANT:
  case CUVIL_NPU_OP_ADD:
  case CUVIL_NPU_OP_POOL:
    return CUVIL_NPU_UNIT_VEC;
  default:
    return -1;
  }
}

/* "load", "matmul", ...; "?" for an unknown opcode. */
static inline const char *cuvil_npu_opcode_name(int32_t opcode) {
  static const char *const names[] = {"?", "load", "store", "matmul", "requant", "add", "pool", "barrier"};
  return opcode >= CUVIL_NPU_OP_LOAD && opcode <= CUVIL_NPU_OP_BARRIER ? names[opcode] : "?";
}

/* The call a compiled model makes for each segment:
 *   cuvil_rt_npu_segment_N(const int64_t *params, const uint8_t *program,
 *                          uint8_t *scratch, void *buffer_0, ..., buffer_{N-1})
 * params: {CUVIL_NPU_SEGMENT_PARAMS_VERSION, program bytes, N}; the
 * buffers: the segment's inputs, then its outputs (num_arguments). */
#define CUVIL_NPU_SEGMENT_PARAMS_VERSION 1
#define CUVIL_NPU_MAX_SEGMENT_BUFFERS 16

#ifdef __cplusplus
}
#endif

#endif /* CUVIL_NPU_ISA_H */
