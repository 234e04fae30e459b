//===- NpuSimTest.cpp - The virtual NPU's simulator -----------------------===//
//
// Programs written by hand (NpuProgram lays them out as npu_isa.h says) and
// run by runtime/npu/sim.c: the MAC array against the ISA's loops, the
// vector unit against QuantArithmetic.h bit for bit, a tiled pipeline end to
// end, the validator's refusals (bounds, waits, corrupt blobs, races) and
// the cycle model (overlap, bank conflicts, figures that add up).
//
//===----------------------------------------------------------------------===//
#include "npu/sim.h"

#include "dialects/Cuvil/IR/QuantArithmetic.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace q = mlir::cuvil::quant;

namespace {

struct Waits {
  int32_t load = 0, store = 0, mac = 0, vec = 0;
};

cuvil_npu_config defaultConfig() {
  cuvil_npu_config c{};
  c.array_k = 16;
  c.array_n = 16;
  c.wbuf_bytes = c.abuf_bytes = c.acc_bytes = 1 << 20;
  c.wbuf_banks = c.abuf_banks = c.acc_banks = 8;
  c.dram_bytes_per_cycle = 16;
  c.dram_latency = 50;
  c.dram_burst = 64;
  c.vector_lanes = 16;
  c.clock_mhz = 1000;
  c.alignment = 16;
  return c;
}

int32_t bitsOf(float f) {
  int32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

// A program under construction; build() lays it out per npu_isa.h.
struct NpuProgram {
  cuvil_npu_config config = defaultConfig();
  std::vector<cuvil_npu_command> commands;
  std::vector<cuvil_npu_region> regions;
  std::vector<cuvil_npu_layer> layers;
  std::vector<uint8_t> constants;
  std::string strings = std::string("test", 5); // the name, NUL-terminated
  uint32_t numArguments = 0, scratchBytes = 0;

  int32_t argument(int32_t index, int64_t bytes) {
    regions.push_back({CUVIL_NPU_REGION_ARGUMENT, index, bytes});
    numArguments = std::max<uint32_t>(numArguments, static_cast<uint32_t>(index) + 1);
    return static_cast<int32_t>(regions.size() - 1);
  }
  int32_t constant(const void *data, size_t bytes) {
    constants.resize((constants.size() + 7) & ~size_t(7));
    int32_t at = static_cast<int32_t>(constants.size());
    constants.insert(constants.end(), static_cast<const uint8_t *>(data), static_cast<const uint8_t *>(data) + bytes);
    regions.push_back({CUVIL_NPU_REGION_CONSTANTS, at, static_cast<int64_t>(bytes)});
    return static_cast<int32_t>(regions.size() - 1);
  }
  int32_t scratch(int32_t offset, int64_t bytes) {
    regions.push_back({CUVIL_NPU_REGION_SCRATCH, offset, bytes});
    scratchBytes = std::max<uint32_t>(scratchBytes, static_cast<uint32_t>(offset + bytes));
    return static_cast<int32_t>(regions.size() - 1);
  }
  int32_t layer(const char *name, const char *kind, int64_t macs) {
    cuvil_npu_layer l{};
    l.name_offset = static_cast<uint32_t>(strings.size());
    strings.append(name).push_back('\0');
    l.kind_offset = static_cast<uint32_t>(strings.size());
    strings.append(kind).push_back('\0');
    l.macs = macs;
    layers.push_back(l);
    return static_cast<int32_t>(layers.size() - 1);
  }
  // The new command; set its fields before adding another.
  cuvil_npu_command &command(int32_t opcode, Waits w = {}) {
    cuvil_npu_command c{};
    c.opcode = opcode;
    c.layer = -1;
    c.wait[CUVIL_NPU_UNIT_LOAD] = w.load;
    c.wait[CUVIL_NPU_UNIT_STORE] = w.store;
    c.wait[CUVIL_NPU_UNIT_MAC] = w.mac;
    c.wait[CUVIL_NPU_UNIT_VEC] = w.vec;
    commands.push_back(c);
    return commands.back();
  }
  // A DMA of n2 planes of n1 rows of n0 bytes (contiguous when strides are 0).
  cuvil_npu_command &dma(int32_t opcode, int32_t region, int32_t dramOffset, int32_t space, int32_t sramAddr,
                         int32_t n0, Waits w = {}, int32_t n1 = 1, int32_t n2 = 1, int32_t dramStride1 = 0,
                         int32_t sramStride1 = 0, int32_t dramStride2 = 0, int32_t sramStride2 = 0) {
    cuvil_npu_command &c = command(opcode, w);
    c.u.dma.region = region;
    c.u.dma.dram_offset = dramOffset;
    c.u.dma.space = space;
    c.u.dma.sram_addr = sramAddr;
    c.u.dma.n0 = n0;
    c.u.dma.n1 = n1;
    c.u.dma.n2 = n2;
    c.u.dma.dram_stride1 = dramStride1 ? dramStride1 : n0;
    c.u.dma.sram_stride1 = sramStride1 ? sramStride1 : n0;
    c.u.dma.dram_stride2 = dramStride2 ? dramStride2 : n0 * n1;
    c.u.dma.sram_stride2 = sramStride2 ? sramStride2 : n0 * n1;
    return c;
  }
  cuvil_npu_command &load(int32_t region, int32_t dramOffset, int32_t space, int32_t sramAddr, int32_t bytes,
                          Waits w = {}) {
    return dma(CUVIL_NPU_OP_LOAD, region, dramOffset, space, sramAddr, bytes, w);
  }
  cuvil_npu_command &store(int32_t region, int32_t dramOffset, int32_t sramAddr, int32_t bytes, Waits w = {}) {
    return dma(CUVIL_NPU_OP_STORE, region, dramOffset, CUVIL_NPU_ABUF, sramAddr, bytes, w);
  }
  cuvil_npu_command &gemm(int32_t inAddr, int32_t wAddr, int32_t accAddr, int32_t m, int32_t k, int32_t n,
                          Waits w = {}) {
    cuvil_npu_command &c = command(CUVIL_NPU_OP_MATMUL, w);
    c.u.matmul.mode = CUVIL_NPU_MATMUL_GEMM;
    c.u.matmul.in_addr = inAddr;
    c.u.matmul.w_addr = wAddr;
    c.u.matmul.acc_addr = accAddr;
    c.u.matmul.oh = m;
    c.u.matmul.ow = 1;
    c.u.matmul.ci = k;
    c.u.matmul.co = n;
    return c;
  }
  // acc [pixels][channels] -> floats float(acc + offset) * multiplier, rows.
  cuvil_npu_command &requant(int32_t mode, int32_t accAddr, int32_t pixels, int32_t channels, int32_t tableAddr,
                             int32_t outAddr, Waits w = {}) {
    cuvil_npu_command &c = command(CUVIL_NPU_OP_REQUANT, w);
    c.u.requant.mode = mode;
    c.u.requant.acc_addr = accAddr;
    c.u.requant.pixels = pixels;
    c.u.requant.channels = channels;
    c.u.requant.table_addr = tableAddr;
    c.u.requant.out_addr = outAddr;
    c.u.requant.layout = 1;
    c.u.requant.y_min = 0;
    c.u.requant.y_max = 255;
    return c;
  }

  std::vector<uint8_t> build() const {
    auto align8 = [](size_t x) { return (x + 7) & ~size_t(7); };
    cuvil_npu_header h{};
    h.magic = CUVIL_NPU_MAGIC;
    h.version = CUVIL_NPU_ISA_VERSION;
    h.config = config;
    size_t at = sizeof h;
    auto place = [&](uint32_t &offset, size_t bytes) {
      offset = static_cast<uint32_t>(at);
      at = align8(at + bytes);
    };
    h.num_commands = static_cast<uint32_t>(commands.size());
    place(h.commands_offset, commands.size() * sizeof(cuvil_npu_command));
    h.num_regions = static_cast<uint32_t>(regions.size());
    place(h.regions_offset, regions.size() * sizeof(cuvil_npu_region));
    h.num_layers = static_cast<uint32_t>(layers.size());
    place(h.layers_offset, layers.size() * sizeof(cuvil_npu_layer));
    h.constants_bytes = static_cast<uint32_t>(constants.size());
    place(h.constants_offset, constants.size());
    h.strings_bytes = static_cast<uint32_t>(strings.size());
    place(h.strings_offset, strings.size());
    h.num_arguments = numArguments;
    h.scratch_bytes = scratchBytes;
    h.blob_bytes = static_cast<uint32_t>(at);
    h.name_offset = 0;
    std::vector<uint8_t> blob(at, 0);
    std::memcpy(blob.data(), &h, sizeof h);
    auto copy = [&](uint32_t offset, const void *data, size_t bytes) {
      if (bytes)
        std::memcpy(blob.data() + offset, data, bytes);
    };
    copy(h.commands_offset, commands.data(), commands.size() * sizeof(cuvil_npu_command));
    copy(h.regions_offset, regions.data(), regions.size() * sizeof(cuvil_npu_region));
    copy(h.layers_offset, layers.data(), layers.size() * sizeof(cuvil_npu_layer));
    copy(h.constants_offset, constants.data(), constants.size());
    copy(h.strings_offset, strings.data(), strings.size());
    return blob;
  }
};

struct RunResult {
  int status = 0;
  std::string error;
  cuvil_npu_result result{};
  std::vector<cuvil_npu_event> events;
};

RunResult run(const NpuProgram &p, std::vector<void *> args, uint8_t *scratch = nullptr) {
  std::vector<uint8_t> blob = p.build();
  RunResult r;
  r.events.resize(p.commands.size());
  char err[512] = "";
  r.status = cuvil_npu_run(blob.data(), blob.size(), args.data(), scratch, &r.result, r.events.data(), err,
                           sizeof err);
  r.error = err;
  return r;
}

std::string validate(const NpuProgram &p) {
  std::vector<uint8_t> blob = p.build();
  char err[512] = "";
  int status = cuvil_npu_validate(blob.data(), blob.size(), err, sizeof err);
  return status == 0 ? std::string("ok") : std::string(err);
}

bool contains(const std::string &s, const std::string &part) { return s.find(part) != std::string::npos; }

int32_t align16(int64_t x) { return static_cast<int32_t>((x + 15) & ~int64_t(15)); }

// The table entry REQUANT reads per channel.
struct TableEntry {
  int32_t offset;
  float multiplier, bias;
};
static_assert(sizeof(TableEntry) == 12, "the ISA's table entries are 12 bytes");

/*--- MATMUL against the ISA's loops ----------------------------------------*/

struct MatmulCase {
  int32_t mode = CUVIL_NPU_MATMUL_CONV;
  int32_t ci = 1, ih = 1, iw = 1, co = 1, oh = 1, ow = 1, kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1;
  int32_t padTop = 0, padLeft = 0, padValue = 0;

  int64_t inBytes() const { return mode == CUVIL_NPU_MATMUL_GEMM ? int64_t(oh) * ci : int64_t(ci) * ih * iw; }
  int64_t weightBytes() const {
    int64_t taps = mode == CUVIL_NPU_MATMUL_GEMM ? 1 : int64_t(kh) * kw;
    return (mode == CUVIL_NPU_MATMUL_DEPTHWISE ? taps : ci * taps) * co;
  }
  int64_t outputs() const { return int64_t(oh) * ow * co; }
};

// The ISA's formula, literally.
std::vector<int32_t> naiveMatmul(const MatmulCase &m, const std::vector<uint8_t> &in, const std::vector<int8_t> &w) {
  std::vector<int32_t> out(m.outputs());
  auto X = [&](int64_t ch, int64_t r, int64_t c) -> int32_t {
    if (r < 0 || r >= m.ih || c < 0 || c >= m.iw)
      return m.padValue;
    return in[(ch * m.ih + r) * m.iw + c];
  };
  for (int64_t y = 0; y < m.oh; ++y)
    for (int64_t x = 0; x < m.ow; ++x)
      for (int64_t c = 0; c < m.co; ++c) {
        uint32_t s = 0;
        if (m.mode == CUVIL_NPU_MATMUL_GEMM) {
          for (int64_t k = 0; k < m.ci; ++k)
            s += static_cast<uint32_t>(in[y * m.ci + k] * w[k * m.co + c]);
        } else {
          for (int64_t ky = 0; ky < m.kh; ++ky)
            for (int64_t kx = 0; kx < m.kw; ++kx) {
              int64_t r = y * m.sh - m.padTop + ky * m.dh, col = x * m.sw - m.padLeft + kx * m.dw;
              if (m.mode == CUVIL_NPU_MATMUL_DEPTHWISE)
                s += static_cast<uint32_t>(X(c, r, col) * w[(ky * m.kw + kx) * m.co + c]);
              else
                for (int64_t ch = 0; ch < m.ci; ++ch)
                  s += static_cast<uint32_t>(X(ch, r, col) * w[((ch * m.kh + ky) * m.kw + kx) * m.co + c]);
            }
        }
        out[(y * m.ow + x) * m.co + c] = static_cast<int32_t>(s);
      }
  return out;
}

cuvil_npu_command &addMatmul(NpuProgram &p, const MatmulCase &m, int32_t inAddr, int32_t wAddr, int32_t accAddr,
                             bool accumulate, Waits w) {
  cuvil_npu_command &c = p.command(CUVIL_NPU_OP_MATMUL, w);
  auto &f = c.u.matmul;
  f.mode = m.mode;
  f.in_addr = inAddr;
  f.ci = m.ci;
  f.ih = m.ih;
  f.iw = m.iw;
  f.w_addr = wAddr;
  f.acc_addr = accAddr;
  f.co = m.co;
  f.oh = m.oh;
  f.ow = m.ow;
  f.kh = m.kh;
  f.kw = m.kw;
  f.sh = m.sh;
  f.sw = m.sw;
  f.dh = m.dh;
  f.dw = m.dw;
  f.pad_top = m.padTop;
  f.pad_left = m.padLeft;
  f.pad_value = m.padValue;
  f.accumulate = accumulate;
  return c;
}

// One product (two with `twice`: the second accumulates onto the first,
// with other inputs and weights), read back through REQUANT F32 with
// multiplier 1 (exact: the tests keep |sums| below 2^24).
void checkMatmul(const MatmulCase &m, uint32_t seed, bool twice) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> byte(0, 255), weight(-128, 127);
  std::vector<uint8_t> in1(m.inBytes()), in2(m.inBytes());
  std::vector<int8_t> w1(m.weightBytes()), w2(m.weightBytes());
  for (auto *v : {&in1, &in2})
    for (uint8_t &x : *v)
      x = static_cast<uint8_t>(byte(rng));
  for (auto *v : {&w1, &w2})
    for (int8_t &x : *v)
      x = static_cast<int8_t>(weight(rng));
  std::vector<TableEntry> table(m.co, TableEntry{0, 1.0f, 0.0f});

  NpuProgram p;
  int32_t rIn1 = p.argument(0, m.inBytes()), rW1 = p.argument(1, m.weightBytes());
  int32_t rIn2 = p.argument(2, m.inBytes()), rW2 = p.argument(3, m.weightBytes());
  int32_t rOut = p.argument(4, m.outputs() * 4);
  int32_t rTable = p.constant(table.data(), table.size() * sizeof(TableEntry));
  const int32_t in2Addr = align16(m.inBytes()), w2Addr = align16(m.weightBytes());
  const int32_t tableAddr = 2 * w2Addr, outAddr = 2 * in2Addr;
  p.load(rIn1, 0, CUVIL_NPU_ABUF, 0, static_cast<int32_t>(m.inBytes()));
  p.load(rW1, 0, CUVIL_NPU_WBUF, 0, static_cast<int32_t>(m.weightBytes()));
  p.load(rIn2, 0, CUVIL_NPU_ABUF, in2Addr, static_cast<int32_t>(m.inBytes()));
  p.load(rW2, 0, CUVIL_NPU_WBUF, w2Addr, static_cast<int32_t>(m.weightBytes()));
  p.load(rTable, 0, CUVIL_NPU_WBUF, tableAddr, m.co * 12);
  addMatmul(p, m, 0, 0, 0, false, Waits{2, 0, 0, 0});
  if (twice)
    addMatmul(p, m, in2Addr, w2Addr, 0, true, Waits{4, 0, 0, 0});
  p.requant(CUVIL_NPU_REQUANT_F32, 0, m.oh * m.ow, m.co, tableAddr, outAddr, Waits{5, 0, twice ? 2 : 1, 0});
  p.store(rOut, 0, outAddr, static_cast<int32_t>(m.outputs() * 4), Waits{0, 0, 0, 1});

  std::vector<float> out(m.outputs(), -1.0f);
  RunResult r = run(p, {in1.data(), w1.data(), in2.data(), w2.data(), out.data()});
  INFO(r.error);
  REQUIRE(r.status == 0);
  std::vector<int32_t> want = naiveMatmul(m, in1, w1);
  if (twice) {
    std::vector<int32_t> more = naiveMatmul(m, in2, w2);
    for (size_t i = 0; i < want.size(); ++i)
      want[i] += more[i];
  }
  int64_t wrong = 0;
  for (size_t i = 0; i < want.size(); ++i)
    if (out[i] != static_cast<float>(want[i]) && wrong++ < 5)
      FAIL_CHECK("output " << i << ": got " << out[i] << ", expected " << want[i]);
  CHECK(wrong == 0);
  CHECK(r.result.macs == (twice ? 2 : 1) * m.outputs() * m.weightBytes() / m.co);
}

/*--- The vector unit against QuantArithmetic.h -----------------------------*/

bool sameFloat(float a, float b) {
  return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof a) == 0;
}

/*--- FP16: MATMUL and REQUANT's float mode against npu_isa.h's rules ------*/

// The compiler's own binary16 (clang's _Float16) is the oracle of the
// conversions: independent of the simulator's bit manipulation.
uint16_t toHalf(float f) {
  _Float16 h = static_cast<_Float16>(f);
  uint16_t b;
  std::memcpy(&b, &h, 2);
  return b;
}
float fromHalf(uint16_t b) {
  _Float16 h;
  std::memcpy(&h, &b, 2);
  return static_cast<float>(h);
}

// The ISA's FP16 formula, literally: f32 sums in the reduction's order,
// then the bias, relu, and f32 or binary16 out.
std::vector<float> naiveMatmulFp16(const MatmulCase &m, const std::vector<uint16_t> &in,
                                   const std::vector<uint16_t> &w, std::vector<float> acc) {
  auto X = [&](int64_t ch, int64_t r, int64_t c) -> float {
    if (r < 0 || r >= m.ih || c < 0 || c >= m.iw)
      return fromHalf(static_cast<uint16_t>(m.padValue));
    return fromHalf(in[(ch * m.ih + r) * m.iw + c]);
  };
  auto W = [&](int64_t i) { return fromHalf(w[i]); };
  for (int64_t y = 0; y < m.oh; ++y)
    for (int64_t x = 0; x < m.ow; ++x)
      for (int64_t c = 0; c < m.co; ++c) {
        volatile float s = acc[(y * m.ow + x) * m.co + c]; // volatile: one rounding per step
        if (m.mode == CUVIL_NPU_MATMUL_GEMM) {
          for (int64_t k = 0; k < m.ci; ++k)
            s = s + fromHalf(in[y * m.ci + k]) * W(k * m.co + c);
        } else if (m.mode == CUVIL_NPU_MATMUL_DEPTHWISE) {
          for (int64_t ky = 0; ky < m.kh; ++ky)
            for (int64_t kx = 0; kx < m.kw; ++kx)
              s = s + X(c, y * m.sh - m.padTop + ky * m.dh, x * m.sw - m.padLeft + kx * m.dw) *
                          W((ky * m.kw + kx) * m.co + c);
        } else {
          for (int64_t ch = 0; ch < m.ci; ++ch)
            for (int64_t ky = 0; ky < m.kh; ++ky)
              for (int64_t kx = 0; kx < m.kw; ++kx)
                s = s + X(ch, y * m.sh - m.padTop + ky * m.dh, x * m.sw - m.padLeft + kx * m.dw) *
                            W(((ch * m.kh + ky) * m.kw + kx) * m.co + c);
        }
        acc[(y * m.ow + x) * m.co + c] = s;
      }
  return acc;
}

// Random binary16 values of magnitude about `scale`, with specials.
std::vector<uint16_t> randomHalves(std::mt19937 &rng, int64_t n, float scale) {
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<uint16_t> v(n);
  for (uint16_t &h : v)
    h = toHalf(normal(rng));
  const uint16_t specials[] = {0x8000, 0x0001, 0x03ff, 0x7bff, 0x0400};
  for (size_t i = 0; i < std::size(specials) && i < v.size(); ++i)
    v[i * 7 % v.size()] = specials[i];
  return v;
}

// One FP16 product (two with `twice`, the second accumulating), then
// REQUANT float with random biases, relu or not, f32 or binary16 out,
// against naiveMatmulFp16 bit for bit.
void checkMatmulFp16(MatmulCase m, uint32_t seed, bool twice, bool relu, bool outF16) {
  std::mt19937 rng(seed);
  const int64_t inElements = m.inBytes(), wElements = m.weightBytes(); // elements here
  std::vector<uint16_t> in1 = randomHalves(rng, inElements, 2.0f), in2 = randomHalves(rng, inElements, 1.0f);
  std::vector<uint16_t> w1 = randomHalves(rng, wElements, 0.5f), w2 = randomHalves(rng, wElements, 0.25f);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<TableEntry> table(m.co);
  for (TableEntry &e : table)
    e = TableEntry{12345, 3.0f, normal(rng)}; // offset and multiplier are not read
  const int32_t outBytes = outF16 ? 2 : 4;
  const int32_t pixels = m.oh * m.ow;

  NpuProgram p;
  int32_t rIn1 = p.argument(0, inElements * 2), rW1 = p.argument(1, wElements * 2);
  int32_t rIn2 = p.argument(2, inElements * 2), rW2 = p.argument(3, wElements * 2);
  int32_t rOut = p.argument(4, m.outputs() * outBytes);
  int32_t rTable = p.constant(table.data(), table.size() * sizeof(TableEntry));
  const int32_t in2Addr = align16(inElements * 2), w2Addr = align16(wElements * 2);
  const int32_t tableAddr = 2 * w2Addr, outAddr = 2 * in2Addr;
  p.load(rIn1, 0, CUVIL_NPU_ABUF, 0, static_cast<int32_t>(inElements * 2));
  p.load(rW1, 0, CUVIL_NPU_WBUF, 0, static_cast<int32_t>(wElements * 2));
  p.load(rIn2, 0, CUVIL_NPU_ABUF, in2Addr, static_cast<int32_t>(inElements * 2));
  p.load(rW2, 0, CUVIL_NPU_WBUF, w2Addr, static_cast<int32_t>(wElements * 2));
  p.load(rTable, 0, CUVIL_NPU_WBUF, tableAddr, m.co * 12);
  addMatmul(p, m, 0, 0, 0, false, Waits{2, 0, 0, 0}).u.matmul.dtype = CUVIL_NPU_DTYPE_FP16;
  if (twice)
    addMatmul(p, m, in2Addr, w2Addr, 0, true, Waits{4, 0, 0, 0}).u.matmul.dtype = CUVIL_NPU_DTYPE_FP16;
  cuvil_npu_command &rq = p.requant(CUVIL_NPU_REQUANT_FLOAT, 0, pixels, m.co, tableAddr, outAddr,
                                    Waits{5, 0, twice ? 2 : 1, 0});
  rq.u.requant.layout = 0; // channel planes
  rq.u.requant.out_plane = pixels;
  rq.u.requant.y_min = rq.u.requant.y_max = 0;
  rq.u.requant.relu = relu;
  rq.u.requant.out_f16 = outF16;
  p.store(rOut, 0, outAddr, static_cast<int32_t>(m.outputs() * outBytes), Waits{0, 0, 0, 1});

  std::vector<uint8_t> out(m.outputs() * outBytes, 0xEE);
  RunResult r = run(p, {in1.data(), w1.data(), in2.data(), w2.data(), out.data()});
  INFO(r.error);
  REQUIRE(r.status == 0);
  std::vector<float> sums = naiveMatmulFp16(m, in1, w1, std::vector<float>(m.outputs(), 0.0f));
  if (twice)
    sums = naiveMatmulFp16(m, in2, w2, sums);
  int64_t wrong = 0;
  for (int32_t px = 0; px < pixels; ++px)
    for (int32_t c = 0; c < m.co; ++c) {
      volatile float y = sums[px * m.co + c];
      y = y + table[c].bias;
      float want = relu && y < 0 ? 0.0f : static_cast<float>(y);
      int64_t at = int64_t(c) * pixels + px;
      float got;
      if (outF16) {
        uint16_t h;
        std::memcpy(&h, out.data() + at * 2, 2);
        got = fromHalf(h);
        want = fromHalf(toHalf(want));
      } else {
        std::memcpy(&got, out.data() + at * 4, 4);
      }
      if (!sameFloat(got, want) && wrong++ < 5)
        FAIL_CHECK("pixel " << px << " channel " << c << ": got " << got << ", expected " << want);
    }
  CHECK(wrong == 0);
  CHECK(r.result.macs == (twice ? 2 : 1) * m.outputs() * m.weightBytes() / m.co);
}

struct RequantCase {
  int32_t mode, layout, yZero, yMin, yMax;
};

void checkRequant(const RequantCase &t, uint32_t seed) {
  std::mt19937 rng(seed);
  const int32_t pixels = 37, channels = 24;
  const bool toFloat = t.mode == CUVIL_NPU_REQUANT_F32 || t.mode == CUVIL_NPU_REQUANT_F32_ONEDNN;
  std::uniform_int_distribution<int> byte(0, 255), weight(-128, 127);
  std::uniform_int_distribution<uint32_t> word;
  std::uniform_real_distribution<float> exponent(-24.0f, 12.0f), unit(-1.0f, 1.0f);
  // GEMM with k = 1 makes acc[p][c] = x[p] * w[c]; the offsets spread
  // a = acc + offset over int32, wrapping included.
  std::vector<uint8_t> x(pixels);
  std::vector<int8_t> w(channels);
  for (uint8_t &v : x)
    v = static_cast<uint8_t>(byte(rng));
  for (int8_t &v : w)
    v = static_cast<int8_t>(weight(rng));
  x[0] = 255;
  w[0] = 127;
  w[1] = -128;
  std::vector<TableEntry> table(channels);
  const float specials[] = {1e30f, -1e30f, std::numeric_limits<float>::infinity(), std::nanf(""), 0.0f,
                            1.0f,  0.5f,   std::ldexp(1.0f, 40)};
  for (int32_t c = 0; c < channels; ++c) {
    table[c].offset = static_cast<int32_t>(word(rng));
    table[c].multiplier = std::copysign(std::exp2(exponent(rng)), unit(rng));
    table[c].bias = unit(rng) * std::exp2(exponent(rng));
    if (c < 8)
      table[c].multiplier = specials[c];
  }
  table[0].offset = std::numeric_limits<int32_t>::max() - 100; // 255 * 127 past INT32_MAX: wraps
  table[1].offset = std::numeric_limits<int32_t>::min() + 5;   // 255 * -128 past INT32_MIN: wraps
  table[9].offset = 0;
  table[9].multiplier = 0.5f; // ties to even
  table[9].bias = 0.5f;

  const int32_t outPlane = pixels + 3, elementBytes = toFloat ? 4 : 1;
  const int64_t outElements = t.layout == 0 ? int64_t(channels - 1) * outPlane + pixels : int64_t(pixels) * channels;
  NpuProgram p;
  int32_t rX = p.argument(0, pixels), rW = p.argument(1, channels), rOut = p.argument(2, outElements * elementBytes);
  int32_t rTable = p.constant(table.data(), table.size() * sizeof(TableEntry));
  p.load(rX, 0, CUVIL_NPU_ABUF, 0, pixels);
  p.load(rW, 0, CUVIL_NPU_WBUF, 0, channels);
  p.load(rTable, 0, CUVIL_NPU_WBUF, 64, channels * 12);
  p.gemm(0, 0, 0, pixels, 1, channels, Waits{2, 0, 0, 0});
  cuvil_npu_command &rq = p.requant(t.mode, 0, pixels, channels, 64, 64, Waits{3, 0, 1, 0});
  rq.u.requant.layout = t.layout;
  rq.u.requant.out_plane = t.layout == 0 ? outPlane : 0;
  rq.u.requant.y_zero = t.yZero;
  rq.u.requant.y_min = t.yMin;
  rq.u.requant.y_max = t.yMax;
  p.store(rOut, 0, 64, static_cast<int32_t>(outElements * elementBytes), Waits{0, 0, 0, 1});
  std::vector<uint8_t> out(outElements * elementBytes, 0xAB);
  RunResult r = run(p, {x.data(), w.data(), out.data()});
  INFO(r.error);
  REQUIRE(r.status == 0);

  int64_t wrong = 0;
  for (int32_t px = 0; px < pixels; ++px)
    for (int32_t c = 0; c < channels; ++c) {
      int32_t a = static_cast<int32_t>(static_cast<uint32_t>(x[px] * w[c]) + static_cast<uint32_t>(table[c].offset));
      int64_t at = t.layout == 0 ? int64_t(c) * outPlane + px : int64_t(px) * channels + c;
      const TableEntry &e = table[c];
      if (toFloat) {
        float want = t.mode == CUVIL_NPU_REQUANT_F32 ? q::dequantizeAccumulator(a, e.multiplier)
                                                     : (static_cast<float>(a) + e.bias) * e.multiplier;
        float got;
        std::memcpy(&got, out.data() + at * 4, 4);
        if (!sameFloat(got, want) && wrong++ < 5)
          FAIL_CHECK("pixel " << px << " channel " << c << " (a = " << a << "): got " << got << ", expected " << want);
      } else {
        int64_t want = t.mode == CUVIL_NPU_REQUANT_QNNPACK
                           ? q::roundToStorage(static_cast<float>(a), e.multiplier, t.yZero, t.yMin, t.yMax)
                           : q::onednnRequantize(a, q::OnednnEpilogue{e.bias, e.multiplier},
                                                 static_cast<float>(t.yZero), t.yMin, t.yMax);
        if (out[at] != static_cast<uint8_t>(want) && wrong++ < 5)
          FAIL_CHECK("pixel " << px << " channel " << c << " (a = " << a << ", m = " << e.multiplier
                              << "): got " << int(out[at]) << ", expected " << want);
      }
    }
  CHECK(wrong == 0);
  // The NaN/int64 rule is exercised: channels 0-3 (m = +-1e30, inf, NaN)
  // give y_min wherever QuantArithmetic.h does.
  if (!toFloat) {
    int64_t floors = 0;
    for (int32_t px = 0; px < pixels; ++px)
      floors += out[t.layout == 0 ? 3 * outPlane + px : px * channels + 3] == static_cast<uint8_t>(t.yMin);
    CHECK(floors == pixels); // NaN multiplier: every value NaN
  }
}

// ABUF a, b -> out through ADD; returns the stored outputs.
std::vector<uint8_t> runAdd(const cuvil_npu_command &add, const std::vector<uint8_t> &a, const std::vector<uint8_t> &b,
                            bool inPlace) {
  const int32_t n = static_cast<int32_t>(a.size()), bAddr = align16(n), outAddr = inPlace ? 0 : 2 * bAddr;
  NpuProgram p;
  int32_t rA = p.argument(0, n), rB = p.argument(1, n), rOut = p.argument(2, n);
  p.load(rA, 0, CUVIL_NPU_ABUF, 0, n);
  p.load(rB, 0, CUVIL_NPU_ABUF, bAddr, n);
  cuvil_npu_command &c = p.command(CUVIL_NPU_OP_ADD, Waits{2, 0, 0, 0});
  c.u.add = add.u.add;
  c.u.add.a_addr = 0;
  c.u.add.b_addr = bAddr;
  c.u.add.out_addr = outAddr;
  c.u.add.count = n;
  p.store(rOut, 0, outAddr, n, Waits{0, 0, 0, 1});
  std::vector<uint8_t> out(n, 0xCD);
  RunResult r = run(p, {const_cast<uint8_t *>(a.data()), const_cast<uint8_t *>(b.data()), out.data()});
  INFO(r.error);
  REQUIRE(r.status == 0);
  return out;
}

} // namespace

TEST_CASE("npu: CONV, DEPTHWISE and GEMM products against the ISA's loops", "[npu]") {
  MatmulCase conv;
  conv.ci = 5, conv.ih = 9, conv.iw = 11, conv.co = 19, conv.kh = 3, conv.kw = 2;
  conv.sh = 2, conv.sw = 1, conv.dh = 1, conv.dw = 2, conv.padTop = 1, conv.padLeft = 2, conv.padValue = 7;
  conv.oh = 6, conv.ow = 12; // the last rows and columns hang past the input: padding there too
  SECTION("conv: padding, stride, dilation, pad value") { checkMatmul(conv, 1, false); }
  SECTION("conv: accumulate") { checkMatmul(conv, 2, true); }
  SECTION("conv: 3x3, 64 channels, interior and border pixels") {
    MatmulCase m;
    m.ci = 7, m.ih = 10, m.iw = 10, m.co = 64, m.kh = 3, m.kw = 3, m.padTop = 1, m.padLeft = 1;
    m.oh = 10, m.ow = 10;
    checkMatmul(m, 3, true);
  }
  SECTION("conv: 1x1, zero inputs skipped") {
    MatmulCase m;
    m.ci = 33, m.ih = 4, m.iw = 5, m.co = 20, m.oh = 4, m.ow = 5;
    checkMatmul(m, 4, false);
  }
  SECTION("depthwise: stride, dilation, padding, pad value") {
    MatmulCase m;
    m.mode = CUVIL_NPU_MATMUL_DEPTHWISE;
    m.ci = m.co = 13, m.ih = 9, m.iw = 10, m.kh = 3, m.kw = 3, m.sh = 2, m.sw = 2, m.dh = 2, m.dw = 1;
    m.padTop = 2, m.padLeft = 1, m.padValue = 3, m.oh = 5, m.ow = 6;
    checkMatmul(m, 5, false);
    checkMatmul(m, 6, true);
  }
  SECTION("negative padding: windows that start inside the tile") {
    MatmulCase m = conv;
    m.padTop = -1, m.padLeft = -2, m.oh = 4, m.ow = 8;
    checkMatmul(m, 10, false);
    m.mode = CUVIL_NPU_MATMUL_DEPTHWISE;
    m.ci = m.co = 6;
    checkMatmul(m, 11, false);
  }
  SECTION("depthwise: windows wider than the input") {
    MatmulCase m;
    m.mode = CUVIL_NPU_MATMUL_DEPTHWISE;
    m.ci = m.co = 4, m.ih = 2, m.iw = 3, m.kh = 5, m.kw = 5, m.padTop = 2, m.padLeft = 3, m.padValue = 0;
    m.oh = 3, m.ow = 4;
    checkMatmul(m, 7, false);
  }
  SECTION("gemm") {
    MatmulCase m;
    m.mode = CUVIL_NPU_MATMUL_GEMM;
    m.oh = 7, m.ci = 37, m.co = 21;
    checkMatmul(m, 8, false);
    checkMatmul(m, 9, true);
  }
}

TEST_CASE("npu: FP16 products and the float epilogue follow the ISA's rules bit for bit", "[npu]") {
  MatmulCase conv;
  conv.ci = 5, conv.ih = 9, conv.iw = 11, conv.co = 19, conv.kh = 3, conv.kw = 2;
  conv.sh = 2, conv.sw = 1, conv.dh = 1, conv.dw = 2, conv.padTop = 1, conv.padLeft = 2, conv.padValue = 0;
  conv.oh = 6, conv.ow = 12;
  SECTION("conv: padding, stride, dilation; f32 out") { checkMatmulFp16(conv, 61, false, false, false); }
  SECTION("conv: accumulate, relu, binary16 out") { checkMatmulFp16(conv, 62, true, true, true); }
  SECTION("conv: a non-zero binary16 pad value") {
    MatmulCase m = conv;
    m.padValue = 0x3c00; // 1.0
    checkMatmulFp16(m, 63, false, false, true);
  }
  SECTION("depthwise: stride, dilation, padding") {
    MatmulCase m;
    m.mode = CUVIL_NPU_MATMUL_DEPTHWISE;
    m.ci = m.co = 13, m.ih = 9, m.iw = 10, m.kh = 3, m.kw = 3, m.sh = 2, m.sw = 2, m.dh = 2, m.dw = 1;
    m.padTop = 2, m.padLeft = 1, m.oh = 5, m.ow = 6;
    checkMatmulFp16(m, 64, false, true, true);
    checkMatmulFp16(m, 65, true, false, false);
  }
  SECTION("gemm: a long reduction (rounding order shows)") {
    MatmulCase m;
    m.mode = CUVIL_NPU_MATMUL_GEMM;
    m.oh = 7, m.ci = 301, m.co = 21;
    checkMatmulFp16(m, 66, false, false, false);
    checkMatmulFp16(m, 67, true, true, true);
  }
  SECTION("FP16 runs at half rate: twice the cycles of the same INT8 product") {
    MatmulCase m;
    m.mode = CUVIL_NPU_MATMUL_GEMM;
    m.oh = 64, m.ci = 64, m.co = 64;
    std::vector<uint64_t> cycles;
    for (int32_t dtype : {CUVIL_NPU_DTYPE_INT8, CUVIL_NPU_DTYPE_FP16}) {
      NpuProgram p;
      addMatmul(p, m, 0, 0, 0, false, Waits{}).u.matmul.dtype = dtype;
      RunResult r = run(p, {});
      INFO(r.error);
      REQUIRE(r.status == 0);
      cycles.push_back(r.events[0].end - r.events[0].start);
    }
    const uint64_t fill = 16 + 16; // array_k + array_n of the test configuration
    CHECK(cycles[1] - fill == 2 * (cycles[0] - fill));
  }
  SECTION("the validator: dtype, binary16 pad values, float-mode flags") {
    NpuProgram p;
    MatmulCase m;
    m.mode = CUVIL_NPU_MATMUL_GEMM;
    m.oh = 4, m.ci = 16, m.co = 16;
    cuvil_npu_command &c = addMatmul(p, m, 0, 0, 0, false, Waits{});
    c.u.matmul.dtype = 2;
    CHECK(contains(validate(p), "unknown dtype 2"));
    c.u.matmul.dtype = CUVIL_NPU_DTYPE_FP16;
    CHECK(validate(p) == "ok");
    MatmulCase k = conv;
    k.padValue = 0x7c00; // +inf: a binary16, not a u8
    NpuProgram q;
    addMatmul(q, k, 0, 0, 0, false, Waits{}).u.matmul.dtype = CUVIL_NPU_DTYPE_FP16;
    CHECK(validate(q) == "ok");
    q.commands[0].u.matmul.dtype = CUVIL_NPU_DTYPE_INT8;
    CHECK(contains(validate(q), "is not a u8"));
    NpuProgram v;
    cuvil_npu_command &rq = v.requant(CUVIL_NPU_REQUANT_F32, 0, 4, 16, 0, 0);
    rq.u.requant.relu = 1;
    CHECK(contains(validate(v), "belong to the float mode"));
    rq.u.requant.mode = CUVIL_NPU_REQUANT_FLOAT;
    CHECK(validate(v) == "ok");
    rq.u.requant.out_f16 = 2;
    CHECK(contains(validate(v), "out_f16"));
  }
}

TEST_CASE("npu: REQUANT in all four modes is QuantArithmetic.h's, bit for bit", "[npu]") {
  SECTION("qnnpack, u8, rows") { checkRequant({CUVIL_NPU_REQUANT_QNNPACK, 1, 128, 0, 255}, 11); }
  SECTION("qnnpack, s8, channel planes") { checkRequant({CUVIL_NPU_REQUANT_QNNPACK, 0, -5, -128, 127}, 12); }
  SECTION("onednn, u8, channel planes") { checkRequant({CUVIL_NPU_REQUANT_ONEDNN, 0, 3, 0, 255}, 13); }
  SECTION("onednn, narrow range, rows") { checkRequant({CUVIL_NPU_REQUANT_ONEDNN, 1, 100, 20, 200}, 14); }
  SECTION("f32, rows") { checkRequant({CUVIL_NPU_REQUANT_F32, 1, 0, 0, 0}, 15); }
  SECTION("f32 onednn, channel planes") { checkRequant({CUVIL_NPU_REQUANT_F32_ONEDNN, 0, 0, 0, 0}, 16); }
}

TEST_CASE("npu: ADD in float and QNNPACK modes", "[npu]") {
  // Every pair of operands (65536 elements per ADD), so that the rare cases
  // happen: a single rounding (fma) vs two deciding the result, QNNPACK's
  // remainder landing on its threshold.
  std::mt19937 rng(21);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_real_distribution<float> scale(0.002f, 0.2f);
  const int32_t n = 256 * 256;
  std::vector<uint8_t> a(n), b(n);
  for (int32_t i = 0; i < n; ++i) {
    a[i] = static_cast<uint8_t>(i >> 8);
    b[i] = static_cast<uint8_t>(i & 255);
  }
  // QNNPACK's remainder equals its threshold for about one sum in 2^shift:
  // the parameters of round 8 are drawn until some unclamped ones do.
  auto thresholdHits = [&](const q::QnnpackAddParams &qp, int64_t zy, int64_t lo) {
    int64_t hits = 0;
    for (int32_t i = 0; i < n; ++i) {
      int32_t acc = static_cast<int32_t>(static_cast<uint32_t>(qp.zeroPointProduct) + a[i] * qp.aMultiplier +
                                         b[i] * qp.bMultiplier);
      int32_t remainder = (acc & qp.remainderMask) - static_cast<int32_t>(acc < 0);
      int64_t y = (acc >> qp.shift) + zy;
      hits += remainder == qp.remainderThreshold && y >= lo && y < 255;
    }
    return hits;
  };
  int64_t fmaDecides = 0, onThreshold = 0;
  for (int round = 0; round < 9; ++round) {
    float sa = scale(rng), sb = scale(rng);
    // Round 7: an output scale so small that the sums pass int64 (-> y_min).
    float sy = round == 7 ? 1e-30f : scale(rng);
    int32_t za = byte(rng), zb = byte(rng), zy = byte(rng);
    for (int tries = 0; round == 8 && tries < 1000; ++tries) {
      if (thresholdHits(q::qnnpackAddParams(sa, za, sb, zb, sy), zy, round % 2 ? zy : 0) > 0)
        break;
      sa = scale(rng), sb = scale(rng), sy = scale(rng), za = byte(rng), zb = byte(rng), zy = byte(rng);
    }
    const bool relu = round % 2 == 1, inPlace = round % 4 == 2;
    INFO("round " << round << ": sa " << sa << " za " << za << " sb " << sb << " zb " << zb << " sy " << sy
                  << " zy " << zy << (relu ? " relu" : ""));
    cuvil_npu_command c{};
    c.u.add.mode = CUVIL_NPU_ADD_FLOAT;
    c.u.add.relu = relu;
    c.u.add.sa_bits = bitsOf(sa), c.u.add.za = za, c.u.add.sb_bits = bitsOf(sb), c.u.add.zb = zb;
    c.u.add.inv_sy_bits = bitsOf(1.0f / sy);
    c.u.add.y_zero = zy, c.u.add.y_min = 0, c.u.add.y_max = 255;
    std::vector<uint8_t> out = runAdd(c, a, b, inPlace);
    int64_t wrong = 0;
    for (int32_t i = 0; i < n; ++i) {
      int64_t want = q::addValues(a[i], sa, za, b[i], sb, zb, relu, sy, zy, 0, 255);
      // The same with each operand rounded twice: the test's sensitivity.
      volatile float pa = sa * a[i], pb = sb * b[i], ta = pa + sa * -float(za), tb = pb + sb * -float(zb);
      float sum = ta + tb;
      fmaDecides += want != q::quantizeValue(relu ? std::fmax(sum, 0.0f) : sum, sy, zy, 0, 255);
      if (out[i] != want && wrong++ < 5)
        FAIL_CHECK("float add " << i << ": " << int(a[i]) << " + " << int(b[i]) << " gave " << int(out[i])
                                << ", expected " << want);
    }
    CHECK(wrong == 0);

    if (round == 7)
      continue; // outside QNNPACK's range
    q::QnnpackAddParams qp = q::qnnpackAddParams(sa, za, sb, zb, sy);
    REQUIRE(qp.valid);
    REQUIRE(qp.shift < 32);
    const int64_t lo = relu ? zy : 0;
    c.u.add = {};
    c.u.add.mode = CUVIL_NPU_ADD_QNNPACK;
    c.u.add.y_zero = zy, c.u.add.y_min = static_cast<int32_t>(lo), c.u.add.y_max = 255;
    c.u.add.a_multiplier = static_cast<int32_t>(qp.aMultiplier);
    c.u.add.b_multiplier = static_cast<int32_t>(qp.bMultiplier);
    c.u.add.shift = static_cast<int32_t>(qp.shift);
    c.u.add.zero_point_product = qp.zeroPointProduct;
    c.u.add.remainder_mask = qp.remainderMask;
    c.u.add.remainder_threshold = qp.remainderThreshold;
    out = runAdd(c, a, b, inPlace);
    onThreshold += thresholdHits(qp, zy, lo);
    for (int32_t i = 0; i < n; ++i) {
      int64_t want = q::qnnpackAdd(a[i], b[i], qp, zy, lo, 255);
      if (out[i] != want && wrong++ < 5)
        FAIL_CHECK("qnnpack add " << i << ": " << int(a[i]) << " + " << int(b[i]) << " gave " << int(out[i])
                                  << ", expected " << want);
    }
    CHECK(wrong == 0);
  }
  CHECK(fmaDecides > 0);
  CHECK(onThreshold > 0);
}

namespace {

struct PoolCase {
  int32_t mode, channels, ih, iw, oh, ow, kh, kw, sh, sw, dh, dw, padTop, padLeft;
  int32_t countIncludePad = 0, roundFirst = 0;
  float sx = 0, sy = 0;  // 0: random
  int32_t zx = -1, zy = -1; // -1: random
};

void checkPool(const PoolCase &t, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_real_distribution<float> scale(0.01f, 0.1f);
  std::vector<uint8_t> in(int64_t(t.channels) * t.ih * t.iw);
  for (uint8_t &v : in)
    v = static_cast<uint8_t>(byte(rng));
  const float sx = t.sx ? t.sx : scale(rng), sy = t.sy ? t.sy : scale(rng);
  const int32_t zx = t.zx >= 0 ? t.zx : byte(rng), zy = t.zy >= 0 ? t.zy : byte(rng), yMin = 10, yMax = 240;
  int64_t ties = 0;
  const int64_t outs = int64_t(t.channels) * t.oh * t.ow;
  NpuProgram p;
  int32_t rIn = p.argument(0, static_cast<int64_t>(in.size())), rOut = p.argument(1, outs);
  p.load(rIn, 0, CUVIL_NPU_ABUF, 0, static_cast<int32_t>(in.size()));
  cuvil_npu_command &c = p.command(CUVIL_NPU_OP_POOL, Waits{1, 0, 0, 0});
  auto &f = c.u.pool;
  f.mode = t.mode, f.in_addr = 0, f.channels = t.channels, f.ih = t.ih, f.iw = t.iw;
  f.out_addr = 4096, f.oh = t.oh, f.ow = t.ow, f.kh = t.kh, f.kw = t.kw, f.sh = t.sh, f.sw = t.sw;
  f.dh = t.dh, f.dw = t.dw, f.pad_top = t.padTop, f.pad_left = t.padLeft;
  if (t.mode != CUVIL_NPU_POOL_MAX) {
    f.x_zero = zx, f.y_zero = zy, f.y_min = yMin, f.y_max = yMax;
    f.count_include_pad = t.countIncludePad, f.round_first = t.roundFirst;
    f.ratio_bits = bitsOf(t.mode == CUVIL_NPU_POOL_AVG ? sx / sy
                                                       : q::qnnpackAverageMultiplier(sx, sy, int64_t(t.kh) * t.kw));
  }
  p.store(rOut, 0, 4096, static_cast<int32_t>(outs), Waits{0, 0, 0, 1});
  std::vector<uint8_t> out(outs, 0xEE);
  RunResult r = run(p, {in.data(), out.data()});
  INFO(r.error);
  REQUIRE(r.status == 0);

  int64_t wrong = 0;
  for (int64_t ch = 0; ch < t.channels; ++ch)
    for (int64_t i = 0; i < t.oh; ++i)
      for (int64_t j = 0; j < t.ow; ++j) {
        // EvalQuant.cpp's loop (max: the largest tap inside the input).
        uint32_t acc = 0;
        int64_t taps = 0;
        int32_t largest = 0;
        for (int64_t u = 0; u < t.kh; ++u)
          for (int64_t v = 0; v < t.kw; ++v) {
            int64_t row = i * t.sh - t.padTop + u * t.dh, col = j * t.sw - t.padLeft + v * t.dw;
            if (row < 0 || row >= t.ih || col < 0 || col >= t.iw)
              continue;
            int32_t x = in[(ch * t.ih + row) * t.iw + col];
            acc += static_cast<uint32_t>(x - zx);
            largest = std::max(largest, x);
            ++taps;
          }
        int64_t want = largest;
        if (t.mode != CUVIL_NPU_POOL_MAX) {
          int64_t divisor = t.countIncludePad ? int64_t(t.kh) * t.kw : taps;
          float m = t.mode == CUVIL_NPU_POOL_AVG_QNNPACK ? q::qnnpackAverageMultiplier(sx, sy, int64_t(t.kh) * t.kw)
                                                         : q::averageMultiplier(sx, sy, divisor);
          want = q::averageValue(static_cast<int32_t>(acc), m, zy, t.roundFirst, yMin, yMax);
          ties += want != q::averageValue(static_cast<int32_t>(acc), m, zy, !t.roundFirst, yMin, yMax);
        }
        int64_t at = (ch * t.oh + i) * t.ow + j;
        if (out[at] != want && wrong++ < 5)
          FAIL_CHECK("channel " << ch << " (" << i << ", " << j << "): got " << int(out[at]) << ", expected " << want);
      }
  CHECK(wrong == 0);
  if (t.sx != 0) // exact scales: the case is there for the ties
    CHECK(ties > 0);
}

} // namespace

TEST_CASE("npu: POOL max, average and QNNPACK average against the reference loop", "[npu]") {
  SECTION("max: padding, stride, dilation") {
    checkPool({CUVIL_NPU_POOL_MAX, 3, 7, 9, 4, 9, 3, 2, 2, 1, 2, 1, 1, 1}, 31);
  }
  SECTION("max: 3x3 stride 2 (resnet)") { checkPool({CUVIL_NPU_POOL_MAX, 4, 12, 12, 6, 6, 3, 3, 2, 2, 1, 1, 1, 1}, 32); }
  for (int include = 0; include < 2; ++include)
    for (int roundFirst = 0; roundFirst < 2; ++roundFirst) {
      DYNAMIC_SECTION("avg: count_include_pad " << include << ", round_first " << roundFirst) {
        checkPool({CUVIL_NPU_POOL_AVG, 3, 7, 8, 4, 4, 3, 3, 2, 2, 1, 1, 1, 1, include, roundFirst},
                  40 + 2 * include + roundFirst);
      }
    }
  // ratio 4.5 over 9 taps: m = 0.5, so odd sums are ties, which the two
  // orders of rounding and adding an odd zero point resolve differently.
  for (int roundFirst = 0; roundFirst < 2; ++roundFirst) {
    DYNAMIC_SECTION("avg: ties, round_first " << roundFirst) {
      PoolCase t{CUVIL_NPU_POOL_AVG, 3, 7, 8, 4, 4, 3, 3, 2, 2, 1, 1, 1, 1, 1, roundFirst};
      t.sx = 0.5625f, t.sy = 0.125f, t.zx = 128, t.zy = 101;
      checkPool(t, 45);
    }
  }
  SECTION("avg qnnpack") { checkPool({CUVIL_NPU_POOL_AVG_QNNPACK, 3, 7, 8, 4, 4, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1}, 50); }
  SECTION("a window far larger than the input: only the taps inside are visited") {
    std::vector<uint8_t> in(2 * 5 * 6), out(2, 0);
    for (size_t i = 0; i < in.size(); ++i)
      in[i] = static_cast<uint8_t>((i * 37) % 101);
    NpuProgram p;
    int32_t rIn = p.argument(0, static_cast<int64_t>(in.size())), rOut = p.argument(1, 2);
    p.load(rIn, 0, CUVIL_NPU_ABUF, 0, static_cast<int32_t>(in.size()));
    auto &f = p.command(CUVIL_NPU_OP_POOL, Waits{1, 0, 0, 0}).u.pool;
    f.mode = CUVIL_NPU_POOL_MAX, f.channels = 2, f.ih = 5, f.iw = 6, f.out_addr = 256, f.oh = f.ow = 1;
    f.kh = f.kw = 1 << 30, f.sh = f.sw = f.dh = f.dw = 1, f.pad_top = f.pad_left = 1 << 29;
    p.store(rOut, 0, 256, 2, Waits{0, 0, 0, 1});
    RunResult r = run(p, {in.data(), out.data()});
    INFO(r.error);
    REQUIRE(r.status == 0);
    CHECK(out[0] == *std::max_element(in.begin(), in.begin() + 30));
    CHECK(out[1] == *std::max_element(in.begin() + 30, in.end()));
  }
  SECTION("global average") { checkPool({CUVIL_NPU_POOL_AVG, 5, 7, 7, 1, 1, 7, 7, 1, 1, 1, 1, 0, 0, 0, 0}, 51); }
}

TEST_CASE("npu: strided DMA gathers and scatters, and costs bursts", "[npu]") {
  // A 4x6 block out of a 2-plane 8x10 array, stored transposed plane-wise.
  std::vector<uint8_t> src(2 * 8 * 10), dst(2 * 4 * 16, 0);
  for (size_t i = 0; i < src.size(); ++i)
    src[i] = static_cast<uint8_t>(i * 7 + 1);
  NpuProgram p;
  int32_t rSrc = p.argument(0, static_cast<int64_t>(src.size())), rDst = p.argument(1, static_cast<int64_t>(dst.size()));
  // planes 80 apart, rows 10 apart, 6 bytes from (2, 3) -> ABUF rows 16 apart, planes 64.
  p.dma(CUVIL_NPU_OP_LOAD, rSrc, 2 * 10 + 3, CUVIL_NPU_ABUF, 0, 6, {}, 4, 2, 10, 16, 80, 64);
  // Back out with the planes swapped: sram plane 1 first.
  p.dma(CUVIL_NPU_OP_STORE, rDst, 0, CUVIL_NPU_ABUF, 64, 6, Waits{1, 0, 0, 0}, 4, 1, 16, 16, 64, 64);
  p.dma(CUVIL_NPU_OP_STORE, rDst, 64, CUVIL_NPU_ABUF, 0, 6, Waits{1, 0, 0, 0}, 4, 1, 16, 16, 64, 64);
  RunResult r = run(p, {src.data(), dst.data()});
  INFO(r.error);
  REQUIRE(r.status == 0);
  for (int plane = 0; plane < 2; ++plane)
    for (int row = 0; row < 4; ++row)
      for (int col = 0; col < 16; ++col) {
        int srcPlane = 1 - plane;
        uint8_t want = col < 6 ? src[srcPlane * 80 + (2 + row) * 10 + 3 + col] : 0;
        CHECK(dst[plane * 64 + row * 16 + col] == want);
      }
  // 8 rows of 6 bytes, each a 64-byte burst: 50 + 8 * 64 / 16.
  CHECK(r.events[0].end - r.events[0].start == 50 + 32);
  CHECK(r.events[0].bytes == 48);
  // The two stores run one after the other on the STORE unit: 50 + 4 * 4 each.
  CHECK(r.events[1].start == r.events[0].end);
  CHECK(r.events[2].start == r.events[1].end);
  CHECK(r.events[2].end - r.events[2].start == 66);
  CHECK(r.result.load_bytes == 48);
  CHECK(r.result.store_bytes == 48);
}

TEST_CASE("npu: DMA with negative strides", "[npu]") {
  // Rows of a 5x8 array loaded bottom up (dram_stride1 = -8), stored as is.
  std::vector<uint8_t> src(40), dst(40, 0);
  for (size_t i = 0; i < src.size(); ++i)
    src[i] = static_cast<uint8_t>(i + 1);
  NpuProgram p;
  int32_t rSrc = p.argument(0, 40), rDst = p.argument(1, 40);
  p.dma(CUVIL_NPU_OP_LOAD, rSrc, 32, CUVIL_NPU_ABUF, 0, 8, {}, 5, 1, -8, 8);
  p.store(rDst, 0, 0, 40, Waits{1, 0, 0, 0});
  RunResult r = run(p, {src.data(), dst.data()});
  INFO(r.error);
  REQUIRE(r.status == 0);
  for (int row = 0; row < 5; ++row)
    for (int col = 0; col < 8; ++col)
      CHECK(dst[row * 8 + col] == src[(4 - row) * 8 + col]);
  // One row too many reaches below the region's start.
  p.commands[0].u.dma.n1 = 6;
  CHECK(validate(p) == "command 0 (load): source [-8, 40) is outside region 0 (40 bytes)");
}

namespace {

// A GEMM y = requant(x W) over `tiles` tiles of 32 rows, double-buffered:
// tile t's input, sums and output live in slot t % 2, so each command waits
// for what last used its slot. `dropWait` removes one wait to make a race.
struct Pipeline {
  static constexpr int32_t rows = 32, k = 48, n = 40;
  int32_t tiles;
  std::vector<uint8_t> x;
  std::vector<int8_t> w;
  std::vector<TableEntry> table;
  NpuProgram p;

  Pipeline(int32_t tiles, uint32_t seed, const char *dropWait = nullptr) : tiles(tiles) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> byte(0, 255), weight(-128, 127), offset(-50000, 50000);
    x.resize(int64_t(tiles) * rows * k);
    w.resize(k * n);
    for (uint8_t &v : x)
      v = static_cast<uint8_t>(byte(rng));
    for (int8_t &v : w)
      v = static_cast<int8_t>(weight(rng));
    for (int32_t c = 0; c < n; ++c)
      table.push_back({offset(rng), std::ldexp(1.0f + byte(rng) / 256.0f, -14), 0.0f});

    int32_t rX = p.argument(0, static_cast<int64_t>(x.size())), rY = p.argument(1, int64_t(tiles) * rows * n);
    int32_t rW = p.constant(w.data(), w.size()), rTable = p.constant(table.data(), table.size() * 12);
    int32_t layer = p.layer("fc", "linear", int64_t(tiles) * rows * k * n);
    const int32_t inSlot[2] = {0, 4096}, outSlot[2] = {8192, 12288}, accSlot[2] = {0, 32768};
    p.load(rW, 0, CUVIL_NPU_WBUF, 0, k * n);
    p.load(rTable, 0, CUVIL_NPU_WBUF, 4096, n * 12);
    auto drop = [&](const char *which, int32_t value) { return dropWait && !std::strcmp(dropWait, which) ? 0 : value; };
    for (int32_t t = 0; t < tiles; ++t) {
      const int s = t % 2;
      // Input slot: free once matmul t - 2 (which read it) is done.
      p.load(rX, t * rows * k, CUVIL_NPU_ABUF, inSlot[s], rows * k,
             Waits{0, 0, t >= 2 ? drop("load-mac", t - 1) : 0, 0});
      // Sums slot: free once requant t - 2 read it.
      p.gemm(inSlot[s], 0, accSlot[s], rows, k, n, Waits{t + 3, 0, 0, t >= 2 ? drop("mac-vec", t - 1) : 0}).layer =
          layer;
      // Output slot: free once store t - 2 read it.
      p.requant(CUVIL_NPU_REQUANT_QNNPACK, accSlot[s], rows, n, 4096, outSlot[s],
                Waits{0, t >= 2 ? drop("vec-store", t - 1) : 0, t + 1, 0})
          .u.requant.y_zero = 7;
      p.store(rY, t * rows * n, outSlot[s], rows * n, Waits{0, 0, 0, drop("store-vec", t + 1)});
    }
  }

  std::vector<uint8_t> expected() const {
    std::vector<uint8_t> y(int64_t(tiles) * rows * n);
    for (int64_t r = 0; r < int64_t(tiles) * rows; ++r)
      for (int32_t c = 0; c < n; ++c) {
        uint32_t acc = static_cast<uint32_t>(table[c].offset);
        for (int32_t i = 0; i < k; ++i)
          acc += static_cast<uint32_t>(x[r * k + i] * w[i * n + c]);
        y[r * n + c] = static_cast<uint8_t>(
            q::requantizeAccumulator(static_cast<int32_t>(acc), table[c].multiplier, 7, 0, 255));
      }
    return y;
  }
};

// Per unit: the events' durations and stalls sum to the result's, and busy
// + stall is the unit's last end (the unit is always busy or waiting).
void checkFiguresAddUp(const RunResult &r) {
  int64_t busy[4] = {}, stall[4] = {}, lastEnd[4] = {}, macs = 0, conflicts = 0, maxEnd = 0;
  for (const cuvil_npu_event &e : r.events) {
    REQUIRE(e.end >= e.start);
    maxEnd = std::max(maxEnd, e.end);
    if (e.unit < 0)
      continue;
    busy[e.unit] += e.end - e.start;
    stall[e.unit] += e.stall;
    lastEnd[e.unit] = e.end;
    macs += e.macs;
    conflicts += e.conflict;
  }
  for (int u = 0; u < 4; ++u) {
    CHECK(r.result.busy[u] == busy[u]);
    CHECK(r.result.stall[u] == stall[u]);
    CHECK(busy[u] + stall[u] == lastEnd[u]);
  }
  CHECK(r.result.cycles == maxEnd);
  CHECK(r.result.macs == macs);
  CHECK(r.result.conflict_cycles == conflicts);
  CHECK(r.result.mac_slot_cycles == busy[CUVIL_NPU_UNIT_MAC]);
  CHECK(r.result.dma_exposed <= r.result.dma_busy);
  CHECK(r.result.dma_busy <= busy[CUVIL_NPU_UNIT_LOAD] + busy[CUVIL_NPU_UNIT_STORE]);
}

} // namespace

TEST_CASE("npu: a double-buffered LOAD -> MATMUL -> REQUANT -> STORE pipeline", "[npu]") {
  Pipeline pipe(300, 61); // 1202 commands: the race records are pruned along the way
  std::vector<uint8_t> x = pipe.x, y(pipe.expected().size(), 0);
  RunResult r = run(pipe.p, {x.data(), y.data()});
  INFO(r.error);
  REQUIRE(r.status == 0);
  CHECK(y == pipe.expected());
  checkFiguresAddUp(r);
  // Every command starts after what it waits for ends.
  const std::vector<cuvil_npu_command> &cmds = pipe.p.commands;
  std::vector<std::vector<const cuvil_npu_event *>> byUnit(4);
  for (size_t i = 0; i < cmds.size(); ++i) {
    const cuvil_npu_event &e = r.events[i];
    CHECK(e.command == int32_t(i));
    CHECK(e.opcode == cmds[i].opcode);
    for (int u = 0; u < 4; ++u)
      if (cmds[i].wait[u] > 0)
        CHECK(e.start >= byUnit[u][cmds[i].wait[u] - 1]->end);
    byUnit[e.unit].push_back(&e);
  }
  CHECK(r.events[3].layer == 0);
  CHECK(r.result.macs == int64_t(300) * Pipeline::rows * Pipeline::k * Pipeline::n);
  CHECK(r.result.load_bytes == int64_t(Pipeline::k) * Pipeline::n + Pipeline::n * 12 + int64_t(x.size()));
  CHECK(r.result.store_bytes == int64_t(y.size()));
  // The units overlap: the makespan is well below the sum of the work.
  int64_t work = 0;
  for (int u = 0; u < 4; ++u)
    work += r.result.busy[u];
  CHECK(r.result.cycles < work * 3 / 4);
  CHECK(r.result.dma_exposed < r.result.dma_busy);

  SECTION("dropping any one wait is a race the validator names") {
    for (const char *drop : {"load-mac", "mac-vec", "vec-store", "store-vec"}) {
      Pipeline racy(6, 61, drop);
      std::string error = validate(racy.p);
      INFO(drop << ": " << error);
      CHECK(contains(error, "): races with command"));
    }
  }
}

TEST_CASE("npu: the validator refuses bad programs and corrupt blobs", "[npu]") {
  // A good program to spoil.
  auto good = [] {
    NpuProgram p;
    int32_t rIn = p.argument(0, 4096), rOut = p.argument(1, 4096);
    p.load(rIn, 0, CUVIL_NPU_ABUF, 0, 1024);
    p.load(rIn, 1024, CUVIL_NPU_WBUF, 0, 1024);
    p.gemm(0, 0, 0, 16, 64, 16, Waits{2, 0, 0, 0});
    p.requant(CUVIL_NPU_REQUANT_QNNPACK, 0, 16, 16, 2048, 4096, Waits{0, 0, 1, 0});
    p.store(rOut, 0, 4096, 256, Waits{0, 0, 0, 1});
    return p;
  };
  REQUIRE(validate(good()) == "ok");

  SECTION("an SRAM access past the end") {
    NpuProgram p = good();
    p.config.abuf_bytes = 8192;
    p.config.abuf_banks = 8;
    p.commands[2].u.matmul.in_addr = 8192 - 512;
    std::string e = validate(p);
    CHECK(e == "command 2 (matmul): input [7680, 8704) is outside ABUF (8192 bytes)");
  }
  SECTION("an unaligned SRAM address") {
    NpuProgram p = good();
    p.commands[0].u.dma.sram_addr = 8;
    CHECK(validate(p) == "command 0 (load): destination address 8 in ABUF is not a multiple of the alignment (16)");
  }
  SECTION("a DRAM access outside its region") {
    NpuProgram p = good();
    p.commands[1].u.dma.dram_offset = 3584;
    CHECK(validate(p) == "command 1 (load): source [3584, 4608) is outside region 0 (4096 bytes)");
  }
  SECTION("a region naming an argument the call does not pass") {
    NpuProgram p = good();
    p.regions[1].index = 5;
    p.numArguments = 2; // the writer would raise it
    std::vector<uint8_t> blob = p.build();
    char err[256];
    REQUIRE(cuvil_npu_validate(blob.data(), blob.size(), err, sizeof err) == -1);
    CHECK(std::string(err) == "region 1: argument 5, but the call passes 2");
  }
  SECTION("a store into the constants") {
    NpuProgram p = good();
    std::vector<uint8_t> c(256);
    int32_t rc = p.constant(c.data(), c.size());
    p.store(rc, 0, 4096, 256, Waits{0, 0, 0, 1});
    CHECK(validate(p) == "command 5 (store): stores into region 2, the program's constants");
  }
  SECTION("a wait on a later command") {
    NpuProgram p = good();
    p.commands[2].wait[CUVIL_NPU_UNIT_VEC] = 1;
    CHECK(validate(p) == "command 2 (matmul): waits for 1 vec commands, but 0 precede it in the stream");
  }
  SECTION("fields out of range") {
    NpuProgram p = good();
    p.commands[3].u.requant.y_max = 300;
    CHECK(contains(validate(p), "command 3 (requant): [y_min, y_max] = [0, 300]"));
    p = good();
    p.commands[2].u.matmul.ow = 2;
    CHECK(validate(p) == "command 2 (matmul): a GEMM has ow == 1, not 2");
    p = good();
    p.commands[2].u.words[25] = 1;
    CHECK(validate(p) == "command 2 (matmul): operand word 25 is 1; unused words must be 0");
    p = good();
    p.commands[4].opcode = 42;
    CHECK(validate(p) == "command 4 (?): unknown opcode 42");
    p = good();
    p.commands[0].layer = 0;
    CHECK(validate(p) == "command 0 (load): layer 0 does not exist (0 layers)");
  }
  SECTION("bad magic, version, truncated or short blobs") {
    std::vector<uint8_t> blob = good().build();
    char err[256];
    std::vector<uint8_t> bad = blob;
    bad[0] ^= 1;
    CHECK(cuvil_npu_validate(bad.data(), bad.size(), err, sizeof err) == -1);
    CHECK(contains(err, "bad magic"));
    bad = blob;
    bad[4] = CUVIL_NPU_ISA_VERSION + 1;
    CHECK(cuvil_npu_validate(bad.data(), bad.size(), err, sizeof err) == -1);
    CHECK(contains(err, "ISA version " + std::to_string(CUVIL_NPU_ISA_VERSION + 1)));
    bad[4] = 0;
    CHECK(cuvil_npu_validate(bad.data(), bad.size(), err, sizeof err) == -1);
    CHECK(contains(err, "ISA version 0"));
    bad[4] = 1; // version 1: a version-2 program with the new fields zero
    CHECK(cuvil_npu_validate(bad.data(), bad.size(), err, sizeof err) == 0);
    CHECK(cuvil_npu_validate(blob.data(), blob.size() - 8, err, sizeof err) == -1);
    CHECK(contains(err, "truncated program"));
    CHECK(cuvil_npu_validate(blob.data(), 100, err, sizeof err) == -1);
    CHECK(contains(err, "shorter than the header"));
    CHECK(cuvil_npu_validate(nullptr, 0, err, sizeof err) == -1);
    CHECK(cuvil_npu_validate(blob.data(), blob.size(), nullptr, 0) == 0);
    // A section running past the blob.
    bad = blob;
    cuvil_npu_header h;
    std::memcpy(&h, bad.data(), sizeof h);
    h.num_commands += 1000;
    std::memcpy(bad.data(), &h, sizeof h);
    CHECK(cuvil_npu_validate(bad.data(), bad.size(), err, sizeof err) == -1);
    CHECK(contains(err, "the commands section"));
  }
  SECTION("random corruption never crashes") {
    std::vector<uint8_t> blob = good().build();
    std::mt19937 rng(71);
    std::uniform_int_distribution<size_t> where(0, blob.size() - 1);
    std::uniform_int_distribution<int> byte(0, 255), flips(1, 4);
    int refused = 0;
    for (int i = 0; i < 3000; ++i) {
      std::vector<uint8_t> bad = blob;
      for (int f = flips(rng); f > 0; --f)
        bad[where(rng)] = static_cast<uint8_t>(byte(rng));
      char err[256];
      refused += cuvil_npu_validate(bad.data(), bad.size(), err, sizeof err) != 0;
    }
    CHECK(refused > 1000);
  }
  SECTION("mutated commands: refused, or run without a fault") {
    // Command words set to small or random values; whatever validates must
    // run (the regions are intact, so the arguments' sizes still hold).
    const NpuProgram base = good();
    std::mt19937 rng(73);
    std::uniform_int_distribution<int> command(0, static_cast<int>(base.commands.size()) - 1), word(0, 31),
        small(-2, 300);
    std::vector<uint8_t> in(4096, 9), out(4096);
    int accepted = 0;
    for (int i = 0; i < 4000; ++i) {
      NpuProgram p = base;
      for (int f = 0; f < 2; ++f) {
        int32_t value = rng() % 4 == 0 ? static_cast<int32_t>(rng()) : small(rng) * (rng() % 2 ? 16 : 1);
        std::memcpy(reinterpret_cast<int32_t *>(&p.commands[command(rng)]) + word(rng), &value, 4);
      }
      if (validate(p) != "ok")
        continue;
      ++accepted;
      RunResult r = run(p, {in.data(), out.data()});
      INFO(r.error);
      REQUIRE(r.status == 0);
    }
    CHECK(accepted > 100);
  }
  SECTION("a message is truncated to the buffer") {
    NpuProgram p = good();
    p.commands[1].u.dma.dram_offset = 3584;
    std::vector<uint8_t> blob = p.build();
    char err[16];
    CHECK(cuvil_npu_validate(blob.data(), blob.size(), err, sizeof err) == -1);
    CHECK(std::string(err) == "command 1 (load");
  }
  SECTION("a NULL argument is refused by run") {
    NpuProgram p = good();
    std::vector<uint8_t> in(4096);
    RunResult r = run(p, {in.data(), nullptr});
    CHECK(r.status == -1);
    CHECK(r.error == "region 1: argument 1 is NULL");
    // An empty scratch region (what the compiler writes when nothing
    // spills) needs no buffer; one with bytes does.
    p.scratch(0, 0);
    std::vector<uint8_t> out(4096);
    CHECK(run(p, {in.data(), out.data()}).status == 0);
    p.regions.back().bytes = 64;
    p.scratchBytes = 64;
    CHECK(run(p, {in.data(), out.data()}).error == "region 2: the scratch buffer is NULL");
  }
}

TEST_CASE("npu: races between units are refused, ordered accesses accepted", "[npu]") {
  // LOAD x -> ABUF [0, 1024); LOAD w; MATMUL reads [0, 1024); then a LOAD
  // overwrites [512, 1536) — refused unless it waits for the MATMUL.
  auto program = [](Waits secondLoad) {
    NpuProgram p;
    int32_t rIn = p.argument(0, 8192);
    p.load(rIn, 0, CUVIL_NPU_ABUF, 0, 1024);
    p.load(rIn, 1024, CUVIL_NPU_WBUF, 0, 1024);
    p.gemm(0, 0, 0, 16, 64, 16, Waits{2, 0, 0, 0});
    p.load(rIn, 2048, CUVIL_NPU_ABUF, 512, 1024, secondLoad);
    return p;
  };
  SECTION("a load overwriting a tile the matmul reads") {
    CHECK(validate(program({})) ==
          "command 3 (load): races with command 2 (matmul): its destination ABUF [512, 1536) (written) overlaps "
          "that command's input ABUF [0, 1024) (read) and nothing orders them (it needs wait[mac] >= 1; its waits "
          "guarantee 0)");
    CHECK(validate(program(Waits{0, 0, 1, 0})) == "ok");
  }
  SECTION("a matmul reading a tile before its load completes") {
    NpuProgram p = program(Waits{0, 0, 1, 0});
    p.commands[2].wait[CUVIL_NPU_UNIT_LOAD] = 1; // waits for x but not for w
    CHECK(contains(validate(p), "command 2 (matmul): races with command 1 (load): its weights WBUF [0, 1024) (read)"));
  }
  SECTION("a store of ABUF that a requant writes") {
    auto storeAfterRequant = [](Waits w) {
      NpuProgram p;
      int32_t rIn = p.argument(0, 8192), rOut = p.argument(1, 4096);
      p.load(rIn, 0, CUVIL_NPU_ABUF, 0, 1024);
      p.load(rIn, 1024, CUVIL_NPU_WBUF, 0, 1024);
      p.gemm(0, 0, 0, 16, 64, 16, Waits{2, 0, 0, 0});
      p.requant(CUVIL_NPU_REQUANT_QNNPACK, 0, 16, 16, 2048, 4096, Waits{0, 0, 1, 0});
      p.store(rOut, 0, 4096 + 128, 64, w);
      return p;
    };
    CHECK(contains(validate(storeAfterRequant({})),
                   "command 4 (store): races with command 3 (requant): its source ABUF [4224, 4288) (read) overlaps "
                   "that command's output ABUF [4096, 4352) (written)"));
    CHECK(validate(storeAfterRequant(Waits{0, 0, 0, 1})) == "ok");
    // Waiting for the matmul only is not enough.
    CHECK(contains(validate(storeAfterRequant(Waits{0, 0, 1, 0})), "races with command 3 (requant)"));
  }
  SECTION("order through chains of waits and through barriers") {
    NpuProgram p;
    int32_t rIn = p.argument(0, 8192), rOut = p.argument(1, 8192);
    p.load(rIn, 0, CUVIL_NPU_ABUF, 0, 1024);                   // 0
    p.load(rIn, 1024, CUVIL_NPU_WBUF, 0, 1024);                // 1
    p.gemm(0, 0, 0, 16, 64, 16, Waits{2, 0, 0, 0});            // 2
    p.requant(CUVIL_NPU_REQUANT_QNNPACK, 0, 16, 16, 2048, 4096, Waits{0, 0, 1, 0}); // 3
    // Reads the loaded tile; ordered after load 0 through requant -> matmul -> load.
    p.store(rOut, 0, 0, 1024, Waits{0, 0, 0, 1});              // 4
    p.command(CUVIL_NPU_OP_BARRIER);                           // 5
    p.load(rIn, 4096, CUVIL_NPU_ABUF, 0, 1024);                // 6: after the store, by the barrier
    p.gemm(0, 0, 0, 16, 64, 16);                               // 7: no wait! races with 6
    CHECK(contains(validate(p), "command 7 (matmul): races with command 6 (load): its input ABUF [0, 1024) (read)"));
    p.commands[7].wait[CUVIL_NPU_UNIT_LOAD] = 3;
    CHECK(validate(p) == "ok");
  }
  SECTION("DRAM: a load of scratch a store writes") {
    NpuProgram p;
    int32_t rIn = p.argument(0, 8192);
    int32_t rA = p.scratch(0, 4096), rB = p.scratch(2048, 2048); // B aliases A's second half
    p.load(rIn, 0, CUVIL_NPU_ABUF, 0, 1024);
    p.store(rA, 2048, 0, 1024, Waits{1, 0, 0, 0});
    p.load(rB, 512, CUVIL_NPU_ABUF, 4096, 256);
    CHECK(contains(validate(p),
                   "command 2 (load): races with command 1 (store): its source scratch [2560, 2816) (read) overlaps "
                   "that command's destination scratch [2048, 3072) (written)"));
    p.commands[2].wait[CUVIL_NPU_UNIT_STORE] = 1;
    CHECK(validate(p) == "ok");
    std::vector<uint8_t> in(8192), scratch(p.scratchBytes, 0);
    for (size_t i = 0; i < in.size(); ++i)
      in[i] = static_cast<uint8_t>(i % 251);
    RunResult r = run(p, {in.data()}, scratch.data());
    INFO(r.error);
    REQUIRE(r.status == 0);
    CHECK(std::equal(in.begin(), in.begin() + 1024, scratch.begin() + 2048));
  }
  SECTION("a race with a command hundreds of commands back") {
    // The records are pruned every 256 commands; the load's must survive
    // while the STORE unit has not been ordered after it.
    NpuProgram p;
    int32_t rIn = p.argument(0, 8192), rOut = p.argument(1, 8192);
    p.load(rIn, 0, CUVIL_NPU_ABUF, 0, 1024);
    p.load(rIn, 1024, CUVIL_NPU_WBUF, 0, 1024);
    for (int i = 0; i < 600; ++i)
      p.gemm(0, 0, 0, 16, 64, 16, Waits{2, 0, 0, 0});
    p.store(rOut, 0, 512, 512);
    CHECK(contains(validate(p), "command 602 (store): races with command 0 (load): its source ABUF [512, 1024)"));
    p.commands.back().wait[CUVIL_NPU_UNIT_LOAD] = 1;
    CHECK(validate(p) == "ok");
  }
  SECTION("reads on two units need no order") {
    NpuProgram p;
    int32_t rIn = p.argument(0, 8192), rOut = p.argument(1, 8192);
    p.load(rIn, 0, CUVIL_NPU_ABUF, 0, 1024);
    p.load(rIn, 1024, CUVIL_NPU_WBUF, 0, 1024);
    p.gemm(0, 0, 0, 16, 64, 16, Waits{2, 0, 0, 0});
    p.store(rOut, 0, 0, 1024, Waits{1, 0, 0, 0}); // reads the tile while the matmul reads it
    CHECK(validate(p) == "ok");
  }
}

namespace {

// Two 64x64x64 GEMM tiles. LOAD: 50 + 4096 / 16 = 306 cycles; MATMUL:
// 64 * 4 * 4 + 32 = 1056. Stream: LOAD W, LOAD X1, MATMUL 1, LOAD X2,
// MATMUL 2; or, with a barrier, the three loads, BARRIER, the matmuls
// without waits.
enum class Tiles { Overlap, Serialize, Barrier };

NpuProgram twoTiles(int32_t x2Addr, Tiles mode, int32_t x1Addr = 0) {
  NpuProgram p;
  p.config.abuf_bytes = p.config.wbuf_bytes = p.config.acc_bytes = 65536;
  p.config.abuf_banks = p.config.wbuf_banks = p.config.acc_banks = 4; // 16 KiB banks
  int32_t rIn = p.argument(0, 3 * 4096);
  p.load(rIn, 0, CUVIL_NPU_WBUF, 0, 4096);
  p.load(rIn, 4096, CUVIL_NPU_ABUF, x1Addr, 4096);
  if (mode == Tiles::Barrier) {
    p.load(rIn, 8192, CUVIL_NPU_ABUF, x2Addr, 4096);
    p.command(CUVIL_NPU_OP_BARRIER);
    p.gemm(0, 0, 0, 64, 64, 64);
    p.gemm(x2Addr, 0, 32768, 64, 64, 64);
    return p;
  }
  p.gemm(x1Addr, 0, 0, 64, 64, 64, Waits{2, 0, 0, 0});
  p.load(rIn, 8192, CUVIL_NPU_ABUF, x2Addr, 4096, Waits{0, 0, mode == Tiles::Serialize ? 1 : 0, 0});
  p.gemm(x2Addr, 0, 32768, 64, 64, 64, Waits{3, 0, 0, 0});
  return p;
}

} // namespace

TEST_CASE("npu: timing: overlap, bank conflicts, stalls and figures", "[npu]") {
  std::vector<uint8_t> in(3 * 4096, 1);
  SECTION("double buffering beats serialized tiles") {
    RunResult overlap = run(twoTiles(32768, Tiles::Overlap), {in.data()});
    RunResult serial = run(twoTiles(32768, Tiles::Serialize), {in.data()});
    INFO(overlap.error << serial.error);
    REQUIRE(overlap.status == 0);
    REQUIRE(serial.status == 0);
    // Overlapped: loads [0, 306) [306, 612) [612, 918); matmuls [612, 1668) [1668, 2724).
    CHECK(overlap.events[2].start == 612);
    CHECK(overlap.events[2].stall == 612);
    CHECK(overlap.events[3].start == 612);
    CHECK(overlap.events[3].stall == 0);
    CHECK(overlap.events[4].start == 1668);
    CHECK(overlap.events[4].stall == 0);
    CHECK(overlap.result.cycles == 2724);
    CHECK(overlap.result.conflict_cycles == 0);
    // Serialized: the second load waits for matmul 1: [1668, 1974), matmul 2 [1974, 3030).
    CHECK(serial.events[3].start == 1668);
    CHECK(serial.events[3].stall == 1668 - 612);
    CHECK(serial.events[4].start == 1974);
    CHECK(serial.events[4].stall == 1974 - 1668);
    CHECK(serial.result.cycles == 3030);
    CHECK(overlap.result.cycles < serial.result.cycles);
    // DMA: busy [0, 918) either way; exposed [0, 612) vs [0, 612) + [1668, 1974).
    CHECK(overlap.result.dma_busy == 918);
    CHECK(overlap.result.dma_exposed == 612);
    CHECK(serial.result.dma_busy == 918);
    CHECK(serial.result.dma_exposed == 918);
    for (const RunResult *r : {&overlap, &serial}) {
      CHECK(r->result.macs == 2 * 64 * 64 * 64);
      CHECK(r->result.mac_slot_cycles == 2 * 1056);
      CHECK(r->result.load_bytes == 3 * 4096);
      CHECK(r->events[0].bytes == 4096);
      CHECK(r->events[2].macs == 64 * 64 * 64);
      CHECK(r->events[2].bytes == 0);
      CHECK(r->result.busy[CUVIL_NPU_UNIT_LOAD] == 3 * 306);
      checkFiguresAddUp(*r);
    }
  }
  SECTION("two units on one bank at once: the later command slows down") {
    // X2 at 8192 shares ABUF bank 0 with X1, which matmul 1 reads while X2
    // loads: the load (timed after the matmul) overlaps it for [612, 918).
    RunResult r = run(twoTiles(8192, Tiles::Overlap), {in.data()});
    INFO(r.error);
    REQUIRE(r.status == 0);
    CHECK(r.events[2].conflict == 0);
    CHECK(r.events[3].conflict == 306 / 2);
    CHECK(r.events[3].end == 612 + 306 + 153);
    CHECK(r.result.conflict_cycles == 153);
    CHECK(r.result.dma_busy == 918 + 153);
    CHECK(r.result.cycles == 2724); // matmul 2 waits for matmul 1 anyway
    checkFiguresAddUp(r);
    // Another bank of the same SRAM, or the same bank of another: no conflict.
    CHECK(run(twoTiles(16384, Tiles::Overlap), {in.data()}).result.conflict_cycles == 0);
    // X1 [14336, 18432) spans banks 0 and 1; X2 [24576, 28672) is in bank 1.
    CHECK(run(twoTiles(24576, Tiles::Overlap, 14336), {in.data()}).result.conflict_cycles == 153);
  }
  SECTION("a barrier holds every later command") {
    RunResult r = run(twoTiles(32768, Tiles::Barrier), {in.data()});
    INFO(r.error);
    REQUIRE(r.status == 0);
    CHECK(r.events[3].unit == -1);
    CHECK(r.events[3].opcode == CUVIL_NPU_OP_BARRIER);
    CHECK(r.events[3].start == 918);
    CHECK(r.events[3].end == 918);
    CHECK(r.events[4].start == 918);
    CHECK(r.events[4].stall == 918);
    CHECK(r.result.cycles == 918 + 2 * 1056);
    checkFiguresAddUp(r);
    // Without the barrier the unwaited matmuls race with the loads.
    NpuProgram p = twoTiles(32768, Tiles::Barrier);
    p.commands.erase(p.commands.begin() + 3);
    CHECK(contains(validate(p), "command 3 (matmul): races with command 1 (load)"));
  }
  SECTION("vector unit durations") {
    NpuProgram p;
    int32_t rIn = p.argument(0, 8192);
    p.load(rIn, 0, CUVIL_NPU_ABUF, 0, 1000);
    cuvil_npu_command &pool = p.command(CUVIL_NPU_OP_POOL, Waits{1, 0, 0, 0});
    pool.u.pool = {};
    auto &f = pool.u.pool;
    f.channels = 10, f.ih = 10, f.iw = 10, f.out_addr = 2048, f.oh = 5, f.ow = 5, f.kh = 3, f.kw = 3;
    f.sh = f.sw = 2, f.dh = f.dw = 1, f.pad_top = f.pad_left = 1;
    cuvil_npu_command &add = p.command(CUVIL_NPU_OP_ADD, Waits{1, 0, 0, 0});
    add.u.add.mode = CUVIL_NPU_ADD_QNNPACK;
    add.u.add.a_addr = 0, add.u.add.b_addr = 0, add.u.add.out_addr = 4096, add.u.add.count = 1000;
    add.u.add.y_max = 255, add.u.add.shift = 20;
    std::vector<uint8_t> data(8192);
    RunResult r = run(p, {data.data()});
    INFO(r.error);
    REQUIRE(r.status == 0);
    CHECK(r.events[1].end - r.events[1].start == (10 * 25 * 9 + 15) / 16 + 8);
    CHECK(r.events[2].end - r.events[2].start == (1000 + 15) / 16 + 8);
    CHECK(r.events[2].start == r.events[1].end); // one unit, in order
    checkFiguresAddUp(r);
  }
}

namespace {

double secondsToRun(const std::vector<uint8_t> &blob, std::vector<void *> args, int reps) {
  char err[256];
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < reps; ++i)
    REQUIRE(cuvil_npu_run(blob.data(), blob.size(), args.data(), nullptr, nullptr, nullptr, err, sizeof err) == 0);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / reps;
}

// A 3x3 convolution, padding 1, stride 1, as `products` MATMULs of the
// whole layer (each accumulating onto the last), SRAMs just large enough.
std::vector<uint8_t> convProgram(const MatmulCase &m, int products) {
  NpuProgram p;
  auto fit = [](int64_t bytes) { return static_cast<int32_t>((bytes + 65535) & ~int64_t(65535)); };
  p.config.abuf_bytes = fit(m.inBytes());
  p.config.wbuf_bytes = fit(m.weightBytes());
  p.config.acc_bytes = fit(m.outputs() * 4);
  int32_t rIn = p.argument(0, m.inBytes()), rW = p.argument(1, m.weightBytes());
  p.load(rIn, 0, CUVIL_NPU_ABUF, 0, static_cast<int32_t>(m.inBytes()));
  p.load(rW, 0, CUVIL_NPU_WBUF, 0, static_cast<int32_t>(m.weightBytes()));
  for (int i = 0; i < products; ++i)
    addMatmul(p, m, 0, 0, 0, i > 0, Waits{2, 0, 0, 0});
  return p.build();
}

void benchmarkConv(int32_t c, int32_t hw) {
  MatmulCase m;
  m.ci = m.co = c, m.ih = m.iw = m.oh = m.ow = hw, m.kh = m.kw = 3, m.padTop = m.padLeft = 1;
  std::mt19937 rng(1);
  std::vector<uint8_t> in(m.inBytes()), w(m.weightBytes());
  for (uint8_t &v : in)
    v = static_cast<uint8_t>(rng() % 200 + 1); // no zeros: no input is skipped
  for (uint8_t &v : w)
    v = static_cast<uint8_t>(rng());
  std::vector<void *> args = {in.data(), w.data()};
  double one = secondsToRun(convProgram(m, 1), args, 10);
  double five = secondsToRun(convProgram(m, 5), args, 4);
  double macs = double(m.outputs()) * m.ci * 9;
  WARN(c << "->" << c << " 3x3 on " << hw << "x" << hw << " (" << macs / 1e6 << " M MACs): one run " << one * 1e3
         << " ms = " << macs / one / 1e9 << " G MAC/s; each further MATMUL " << (five - one) / 4 * 1e3 << " ms = "
         << macs / ((five - one) / 4) / 1e9 << " G MAC/s");
}

} // namespace

TEST_CASE("npu: simulation speed (benchmark)", "[.benchmark][npu]") {
  benchmarkConv(64, 56);
  benchmarkConv(256, 14);
  benchmarkConv(128, 28);
  benchmarkConv(512, 7);

  // resnet18 at 224x224: each convolution (and the classifier) as one
  // MATMUL of the whole layer, run as many times as the network has it.
  struct Layer {
    int32_t ci, co, hw, k, stride, count;
  };
  const Layer layers[] = {{3, 64, 224, 7, 2, 1},    {64, 64, 56, 3, 1, 4},    {64, 128, 56, 3, 2, 1},
                          {128, 128, 28, 3, 1, 3},  {64, 128, 56, 1, 2, 1},   {128, 256, 28, 3, 2, 1},
                          {256, 256, 14, 3, 1, 3},  {128, 256, 28, 1, 2, 1},  {256, 512, 14, 3, 2, 1},
                          {512, 512, 7, 3, 1, 3},   {256, 512, 14, 1, 2, 1}};
  double seconds = 0, macs = 0;
  for (const Layer &l : layers) {
    MatmulCase m;
    m.ci = l.ci, m.co = l.co, m.ih = m.iw = l.hw, m.kh = m.kw = l.k, m.sh = m.sw = l.stride;
    m.padTop = m.padLeft = l.k / 2, m.oh = m.ow = (l.hw + 2 * (l.k / 2) - l.k) / l.stride + 1;
    std::vector<uint8_t> in(m.inBytes(), 7), w(m.weightBytes(), 3);
    seconds += l.count * secondsToRun(convProgram(m, 1), {in.data(), w.data()}, 3);
    macs += double(l.count) * m.outputs() * m.weightBytes() / m.co;
  }
  MatmulCase fc;
  fc.mode = CUVIL_NPU_MATMUL_GEMM, fc.oh = 1, fc.ci = 512, fc.co = 1000;
  std::vector<uint8_t> x(512, 7), w(512 * 1000, 3);
  seconds += secondsToRun(convProgram(fc, 1), {x.data(), w.data()}, 3);
  macs += 512.0 * 1000;
  WARN("resnet18's products (" << macs / 1e9 << " G MACs): " << seconds * 1e3 << " ms, " << macs / seconds / 1e9
                               << " G MAC/s");
}
