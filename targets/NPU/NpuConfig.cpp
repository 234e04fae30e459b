//===- NpuConfig.cpp - The virtual NPU's configurations -------------------===//
#include "targets/NPU/NpuConfig.h"

#include <cstring>

namespace mlir::cuvil::npu {

namespace {

struct Named {
  const char *name, *description;
  int32_t arrayK, arrayN, wbufKiB, abufKiB, accKiB, dramBytesPerCycle;
};

// The default is the machine ARCHITECTURE.md describes; each variant
// changes one thing.
constexpr Named kConfigs[] = {
    {"npu-32x32", "32x32 int8 MACs, 512 KiB weights, 1 MiB activations, 256 KiB sums, 32 B/cycle DMA", 32, 32,
     512, 1024, 256, 32},
    {"npu-16x16", "16x16 MACs (a quarter of the array), SRAM and DMA as npu-32x32", 16, 16, 512, 1024, 256, 32},
    {"npu-64x64", "64x64 MACs (four times the array), 2 MiB weights, 2 MiB activations, 1 MiB sums, 64 B/cycle",
     64, 64, 2048, 2048, 1024, 64},
    {"npu-32x32-small-sram", "npu-32x32 with 128 KiB weights, 256 KiB activations, 64 KiB sums", 32, 32, 128,
     256, 64, 32},
    {"npu-32x32-slow-dram", "npu-32x32 with 8 B/cycle DMA", 32, 32, 512, 1024, 256, 8},
};

cuvil_npu_config make(const Named &n) {
  cuvil_npu_config c;
  std::memset(&c, 0, sizeof c);
  c.array_k = n.arrayK;
  c.array_n = n.arrayN;
  c.wbuf_bytes = n.wbufKiB * 1024;
  c.abuf_bytes = n.abufKiB * 1024;
  c.acc_bytes = n.accKiB * 1024;
  c.wbuf_banks = 8;
  c.abuf_banks = 16;
  c.acc_banks = 8;
  c.dram_bytes_per_cycle = n.dramBytesPerCycle;
  c.dram_latency = 200;
  c.dram_burst = 32;
  c.vector_lanes = 64;
  c.clock_mhz = 1000;
  c.alignment = 64;
  return c;
}

} // namespace

std::optional<cuvil_npu_config> lookupConfig(const std::string &name) {
  for (const Named &n : kConfigs)
    if (name == n.name)
      return make(n);
  return std::nullopt;
}

std::vector<std::pair<std::string, std::string>> configNames() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const Named &n : kConfigs)
    out.emplace_back(n.name, n.description);
  return out;
}

} // namespace mlir::cuvil::npu
