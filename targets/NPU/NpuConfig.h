//===- NpuConfig.h - The virtual NPU's configurations -----------*- C++ -*-===//
//
// The machines `--target npu --cpu NAME` compiles for (ARCHITECTURE.md,
// "Configurations"): the default npu-32x32 and variants of its array,
// SRAM and DRAM bandwidth, to explore the design space.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_TARGETS_NPU_NPUCONFIG_H
#define CUVIL_TARGETS_NPU_NPUCONFIG_H

#include "cuvil/npu_isa.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::cuvil::npu {

inline constexpr const char *kDefaultConfig = "npu-32x32";

/// The configuration named `name`, or nothing.
std::optional<cuvil_npu_config> lookupConfig(const std::string &name);
/// Every name, in a fixed order, with one line each.
std::vector<std::pair<std::string, std::string>> configNames();

} // namespace mlir::cuvil::npu

#endif // CUVIL_TARGETS_NPU_NPUCONFIG_H
