//===- Commands.cpp - cuvil_npu ops as npu_isa.h commands -----------------===//
#include "targets/NPU/IR/Commands.h"

#include "targets/NPU/IR/NpuDialect.h"

#include "llvm/ADT/TypeSwitch.h"

#include <algorithm>
#include <cstring>

namespace mlir::cuvil::npu {

namespace {

int spaceOf(StringRef name) {
  return name == "wbuf" ? CUVIL_NPU_WBUF : name == "abuf" ? CUVIL_NPU_ABUF : name == "acc" ? CUVIL_NPU_ACC : -1;
}

int32_t at(ArrayRef<int32_t> a, size_t i) { return i < a.size() ? a[i] : 0; }

int32_t bitsOf(float f) {
  int32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

template <typename DmaOp> void encodeDma(DmaOp op, cuvil_npu_command &c) {
  c.u.dma.region = static_cast<int32_t>(op.getRegion());
  c.u.dma.dram_offset = static_cast<int32_t>(op.getDramOffset());
  c.u.dma.space = spaceOf(op.getSpace());
  c.u.dma.sram_addr = static_cast<int32_t>(op.getSramAddr());
  c.u.dma.n2 = at(op.getShape(), 0);
  c.u.dma.n1 = at(op.getShape(), 1);
  c.u.dma.n0 = at(op.getShape(), 2);
  c.u.dma.dram_stride2 = at(op.getDramStrides(), 0);
  c.u.dma.dram_stride1 = at(op.getDramStrides(), 1);
  c.u.dma.sram_stride2 = at(op.getSramStrides(), 0);
  c.u.dma.sram_stride1 = at(op.getSramStrides(), 1);
}

/// [first byte, last byte + 1) of n2 x n1 rows of n0 bytes.
std::pair<int64_t, int64_t> stridedRange(int64_t base, int64_t n2, int64_t n1, int64_t n0, int64_t s2,
                                         int64_t s1) {
  if (n2 <= 0 || n1 <= 0 || n0 <= 0)
    return {base, base};
  int64_t lo = base + std::min<int64_t>(0, (n2 - 1) * s2) + std::min<int64_t>(0, (n1 - 1) * s1);
  int64_t hi = base + std::max<int64_t>(0, (n2 - 1) * s2) + std::max<int64_t>(0, (n1 - 1) * s1) + n0;
  return {lo, hi};
}

} // namespace

int unitOf(int32_t opcode) { return cuvil_npu_unit_of(opcode); }

const char *opcodeName(int32_t opcode) { return cuvil_npu_opcode_name(opcode); }

const char *spaceName(int space) {
  switch (space) {
  case CUVIL_NPU_WBUF:
    return "WBUF";
  case CUVIL_NPU_ABUF:
    return "ABUF";
  case CUVIL_NPU_ACC:
    return "ACC";
  default:
    return "DRAM";
  }
}

int64_t spaceBytes(const cuvil_npu_config &config, int space) {
  switch (space) {
  case CUVIL_NPU_WBUF:
    return config.wbuf_bytes;
  case CUVIL_NPU_ABUF:
    return config.abuf_bytes;
  case CUVIL_NPU_ACC:
    return config.acc_bytes;
  default:
    return 0;
  }
}

cuvil_npu_config configFromWords(ArrayRef<int32_t> words) {
  cuvil_npu_config config;
  std::memset(&config, 0, sizeof config);
  std::memcpy(&config, words.data(), std::min(sizeof config, words.size() * sizeof(int32_t)));
  return config;
}

SmallVector<int32_t> wordsOfConfig(const cuvil_npu_config &config) {
  SmallVector<int32_t> words(sizeof config / sizeof(int32_t));
  std::memcpy(words.data(), &config, sizeof config);
  return words;
}

cuvil_npu_command encodeCommand(Operation *op) {
  cuvil_npu_command c;
  std::memset(&c, 0, sizeof c);
  c.layer = -1;
  if (auto wait = op->getAttrOfType<DenseI32ArrayAttr>("wait"))
    for (size_t u = 0; u < CUVIL_NPU_NUM_UNITS; ++u)
      c.wait[u] = at(wait.asArrayRef(), u);
  if (auto layer = op->getAttrOfType<IntegerAttr>("layer"))
    c.layer = static_cast<int32_t>(layer.getInt());
  llvm::TypeSwitch<Operation *>(op)
      .Case([&](LoadOp l) {
        c.opcode = CUVIL_NPU_OP_LOAD;
        encodeDma(l, c);
      })
      .Case([&](StoreOp s) {
        c.opcode = CUVIL_NPU_OP_STORE;
        encodeDma(s, c);
      })
      .Case([&](MatmulOp m) {
        c.opcode = CUVIL_NPU_OP_MATMUL;
        auto &f = c.u.matmul;
        f.mode = m.getMode() == "conv"        ? CUVIL_NPU_MATMUL_CONV
                 : m.getMode() == "depthwise" ? CUVIL_NPU_MATMUL_DEPTHWISE
                 : m.getMode() == "gemm"      ? CUVIL_NPU_MATMUL_GEMM
                                              : -1;
        f.in_addr = m.getInAddr();
        f.ci = at(m.getInShape(), 0), f.ih = at(m.getInShape(), 1), f.iw = at(m.getInShape(), 2);
        f.w_addr = m.getWAddr();
        f.acc_addr = m.getAccAddr();
        f.co = at(m.getOutShape(), 0), f.oh = at(m.getOutShape(), 1), f.ow = at(m.getOutShape(), 2);
        f.kh = at(m.getKernel(), 0), f.kw = at(m.getKernel(), 1);
        f.sh = at(m.getStride(), 0), f.sw = at(m.getStride(), 1);
        f.dh = at(m.getDilation(), 0), f.dw = at(m.getDilation(), 1);
        f.pad_top = at(m.getPad(), 0), f.pad_left = at(m.getPad(), 1);
        f.pad_value = m.getPadValue();
        f.accumulate = m.getAccumulate() ? 1 : 0;
        f.dtype = m.getFp16() ? CUVIL_NPU_DTYPE_FP16 : CUVIL_NPU_DTYPE_INT8;
      })
      .Case([&](RequantOp r) {
        c.opcode = CUVIL_NPU_OP_REQUANT;
        auto &f = c.u.requant;
        f.mode = r.getMode() == "qnnpack"      ? CUVIL_NPU_REQUANT_QNNPACK
                 : r.getMode() == "onednn"     ? CUVIL_NPU_REQUANT_ONEDNN
                 : r.getMode() == "f32"        ? CUVIL_NPU_REQUANT_F32
                 : r.getMode() == "f32_onednn" ? CUVIL_NPU_REQUANT_F32_ONEDNN
                 : r.getMode() == "float"      ? CUVIL_NPU_REQUANT_FLOAT
                                               : -1;
        f.acc_addr = r.getAccAddr();
        f.pixels = r.getPixels();
        f.channels = r.getChannels();
        f.table_addr = r.getTableAddr();
        f.out_addr = r.getOutAddr();
        f.layout = r.getLayout() == "planes" ? 0 : r.getLayout() == "rows" ? 1 : -1;
        f.out_plane = r.getOutPlane();
        f.y_zero = r.getYZero(), f.y_min = r.getYMin(), f.y_max = r.getYMax();
        f.relu = r.getRelu() ? 1 : 0;
        f.out_f16 = r.getOutF16() ? 1 : 0;
      })
      .Case([&](AddOp a) {
        c.opcode = CUVIL_NPU_OP_ADD;
        auto &f = c.u.add;
        f.mode = a.getMode() == "float" ? CUVIL_NPU_ADD_FLOAT : a.getMode() == "qnnpack" ? CUVIL_NPU_ADD_QNNPACK : -1;
        f.a_addr = a.getAAddr(), f.b_addr = a.getBAddr(), f.out_addr = a.getOutAddr();
        f.count = a.getCount();
        f.relu = a.getRelu() ? 1 : 0;
        ArrayRef<int32_t> p = a.getParams();
        int32_t *fields[] = {&f.sa_bits,      &f.za,           &f.sb_bits, &f.zb,
                             &f.inv_sy_bits,  &f.y_zero,       &f.y_min,   &f.y_max,
                             &f.a_multiplier, &f.b_multiplier, &f.shift,   &f.zero_point_product,
                             &f.remainder_mask, &f.remainder_threshold};
        for (size_t i = 0; i < std::size(fields); ++i)
          *fields[i] = at(p, i);
      })
      .Case([&](PoolOp p) {
        c.opcode = CUVIL_NPU_OP_POOL;
        auto &f = c.u.pool;
        f.mode = p.getMode() == "max"           ? CUVIL_NPU_POOL_MAX
                 : p.getMode() == "avg"         ? CUVIL_NPU_POOL_AVG
                 : p.getMode() == "avg_qnnpack" ? CUVIL_NPU_POOL_AVG_QNNPACK
                                                : -1;
        f.in_addr = p.getInAddr();
        f.channels = at(p.getInShape(), 0), f.ih = at(p.getInShape(), 1), f.iw = at(p.getInShape(), 2);
        f.out_addr = p.getOutAddr();
        f.oh = at(p.getOutShape(), 0), f.ow = at(p.getOutShape(), 1);
        f.kh = at(p.getKernel(), 0), f.kw = at(p.getKernel(), 1);
        f.sh = at(p.getStride(), 0), f.sw = at(p.getStride(), 1);
        f.dh = at(p.getDilation(), 0), f.dw = at(p.getDilation(), 1);
        f.pad_top = at(p.getPad(), 0), f.pad_left = at(p.getPad(), 1);
        f.x_zero = p.getXZero(), f.y_zero = p.getYZero(), f.y_min = p.getYMin(), f.y_max = p.getYMax();
        f.ratio_bits = bitsOf(p.getRatio().convertToFloat());
        f.count_include_pad = p.getCountIncludePad() ? 1 : 0;
        f.round_first = p.getRoundFirst() ? 1 : 0;
      })
      .Case([&](BarrierOp) { c.opcode = CUVIL_NPU_OP_BARRIER; })
      .Default([&](Operation *) { c.opcode = 0; });
  return c;
}

SmallVector<Access, 4> accessesOf(const cuvil_npu_command &c) {
  SmallVector<Access, 4> out;
  auto sram = [&](int space, int64_t lo, int64_t bytes, bool write) {
    out.push_back(Access{space, 0, lo, lo + std::max<int64_t>(bytes, 0), write});
  };
  switch (c.opcode) {
  case CUVIL_NPU_OP_LOAD:
  case CUVIL_NPU_OP_STORE: {
    const auto &d = c.u.dma;
    auto [dlo, dhi] = stridedRange(d.dram_offset, d.n2, d.n1, d.n0, d.dram_stride2, d.dram_stride1);
    auto [slo, shi] = stridedRange(d.sram_addr, d.n2, d.n1, d.n0, d.sram_stride2, d.sram_stride1);
    bool load = c.opcode == CUVIL_NPU_OP_LOAD;
    out.push_back(Access{CUVIL_NPU_DRAM, d.region, dlo, dhi, !load});
    out.push_back(Access{d.space, 0, slo, shi, load});
    break;
  }
  case CUVIL_NPU_OP_MATMUL: {
    const auto &m = c.u.matmul;
    int64_t taps = int64_t(m.kh) * m.kw, element = m.dtype == CUVIL_NPU_DTYPE_FP16 ? 2 : 1;
    int64_t wElements = m.mode == CUVIL_NPU_MATMUL_CONV        ? int64_t(m.ci) * taps * m.co
                        : m.mode == CUVIL_NPU_MATMUL_DEPTHWISE ? taps * m.co
                                                               : int64_t(m.ci) * m.co;
    sram(CUVIL_NPU_ABUF, m.in_addr, int64_t(m.ci) * m.ih * m.iw * element, false);
    sram(CUVIL_NPU_WBUF, m.w_addr, wElements * element, false);
    int64_t accBytes = int64_t(m.oh) * m.ow * m.co * 4;
    if (m.accumulate)
      sram(CUVIL_NPU_ACC, m.acc_addr, accBytes, false);
    sram(CUVIL_NPU_ACC, m.acc_addr, accBytes, true);
    break;
  }
  case CUVIL_NPU_OP_REQUANT: {
    const auto &r = c.u.requant;
    int64_t elem = r.out_f16 ? 2
                   : r.mode == CUVIL_NPU_REQUANT_F32 || r.mode == CUVIL_NPU_REQUANT_F32_ONEDNN ||
                           r.mode == CUVIL_NPU_REQUANT_FLOAT
                       ? 4
                       : 1;
    sram(CUVIL_NPU_ACC, r.acc_addr, int64_t(r.pixels) * r.channels * 4, false);
    sram(CUVIL_NPU_WBUF, r.table_addr, int64_t(r.channels) * 12, false);
    int64_t elements = r.layout == 0 ? int64_t(r.channels - 1) * r.out_plane + r.pixels
                                     : int64_t(r.pixels) * r.channels;
    sram(CUVIL_NPU_ABUF, r.out_addr, elements * elem, true);
    break;
  }
  case CUVIL_NPU_OP_ADD: {
    const auto &a = c.u.add;
    sram(CUVIL_NPU_ABUF, a.a_addr, a.count, false);
    sram(CUVIL_NPU_ABUF, a.b_addr, a.count, false);
    sram(CUVIL_NPU_ABUF, a.out_addr, a.count, true);
    break;
  }
  case CUVIL_NPU_OP_POOL: {
    const auto &p = c.u.pool;
    sram(CUVIL_NPU_ABUF, p.in_addr, int64_t(p.channels) * p.ih * p.iw, false);
    sram(CUVIL_NPU_ABUF, p.out_addr, int64_t(p.channels) * p.oh * p.ow, true);
    break;
  }
  default:
    break;
  }
  return out;
}

std::string checkCommand(const cuvil_npu_command &c, const cuvil_npu_config &config) {
  auto positive = [](std::initializer_list<int32_t> values) {
    return std::all_of(values.begin(), values.end(), [](int32_t v) { return v > 0; });
  };
  for (int32_t w : c.wait)
    if (w < 0)
      return "a wait count is negative";
  switch (c.opcode) {
  case CUVIL_NPU_OP_LOAD:
  case CUVIL_NPU_OP_STORE: {
    const auto &d = c.u.dma;
    if (!positive({d.n2, d.n1, d.n0}))
      return "a transfer's sizes must be positive (static shapes only)";
    bool load = c.opcode == CUVIL_NPU_OP_LOAD;
    if (d.space != CUVIL_NPU_ABUF && !(load && d.space == CUVIL_NPU_WBUF))
      return load ? "a load goes to wbuf or abuf" : "a store reads abuf";
    if (d.dram_offset < 0)
      return "the DRAM offset is negative";
    break;
  }
  case CUVIL_NPU_OP_MATMUL: {
    const auto &m = c.u.matmul;
    if (m.mode < 0)
      return "unknown matmul mode (conv, depthwise or gemm)";
    if (!positive({m.ci, m.ih, m.iw, m.co, m.oh, m.ow, m.kh, m.kw, m.sh, m.sw, m.dh, m.dw}))
      return "shapes, window, strides and dilations must be positive (static shapes only)";
    if (m.mode == CUVIL_NPU_MATMUL_DEPTHWISE && m.ci != m.co)
      return "a depthwise tile has as many output channels as input channels";
    if (m.mode == CUVIL_NPU_MATMUL_GEMM && (m.ow != 1 || m.iw != 1 || m.ih != m.oh || m.kh != 1 || m.kw != 1))
      return "a gemm tile is in_shape [k, m, 1], out_shape [n, m, 1], a 1x1 window";
    if (m.pad_value < 0 || m.pad_value > (m.dtype == CUVIL_NPU_DTYPE_FP16 ? 65535 : 255))
      return m.dtype == CUVIL_NPU_DTYPE_FP16 ? "the padding value is not a binary16" : "the padding value is not a u8";
    break;
  }
  case CUVIL_NPU_OP_REQUANT: {
    const auto &r = c.u.requant;
    if (r.mode < 0 || r.layout < 0)
      return "unknown requant mode or layout";
    if ((r.relu || r.out_f16) && r.mode != CUVIL_NPU_REQUANT_FLOAT)
      return "relu and out_f16 belong to the float mode";
    if (!positive({r.pixels, r.channels}))
      return "pixels and channels must be positive";
    if (r.layout == 0 && r.out_plane < r.pixels)
      return "a plane of the output is shorter than its pixels";
    if (r.y_min > r.y_max)
      return "y_min is above y_max";
    break;
  }
  case CUVIL_NPU_OP_ADD:
    if (c.u.add.mode < 0 || c.u.add.count <= 0)
      return "unknown add mode or no elements";
    if (c.u.add.mode == CUVIL_NPU_ADD_QNNPACK && (c.u.add.shift < 0 || c.u.add.shift > 31))
      return "the qnnpack shift is outside [0, 31]";
    break;
  case CUVIL_NPU_OP_POOL: {
    const auto &p = c.u.pool;
    if (p.mode < 0)
      return "unknown pool mode (max, avg, avg_qnnpack)";
    if (!positive({p.channels, p.ih, p.iw, p.oh, p.ow, p.kh, p.kw, p.sh, p.sw, p.dh, p.dw}))
      return "shapes, window, strides and dilations must be positive (static shapes only)";
    break;
  }
  case CUVIL_NPU_OP_BARRIER:
    return "";
  default:
    return "unknown command";
  }
  for (const Access &a : accessesOf(c)) {
    if (a.space == CUVIL_NPU_DRAM)
      continue;
    int64_t size = spaceBytes(config, a.space);
    if (a.lo < 0 || a.hi > size)
      return std::string(a.write ? "writes " : "reads ") + spaceName(a.space) + " [" + std::to_string(a.lo) +
             ", " + std::to_string(a.hi) + "), outside its " + std::to_string(size) + " bytes";
  }
  // The DMA and the MAC array move whole aligned lines.
  int64_t align = std::max(config.alignment, 1);
  auto aligned = [&](int64_t addr) { return addr % align == 0; };
  if ((c.opcode == CUVIL_NPU_OP_LOAD || c.opcode == CUVIL_NPU_OP_STORE) && !aligned(c.u.dma.sram_addr))
    return "the SRAM address " + std::to_string(c.u.dma.sram_addr) + " is not a multiple of " + std::to_string(align);
  if (c.opcode == CUVIL_NPU_OP_MATMUL &&
      !(aligned(c.u.matmul.in_addr) && aligned(c.u.matmul.w_addr) && aligned(c.u.matmul.acc_addr)))
    return "an operand address is not a multiple of " + std::to_string(align);
  return "";
}

} // namespace mlir::cuvil::npu
