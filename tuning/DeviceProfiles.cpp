//===- DeviceProfiles.cpp - Device profiles: built in, read, measured ----===//
#include "tuning/DeviceProfiles.h"

#include "support/AtomicFile.h"
#include "tuning/HostMeasure.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/TargetParser/Host.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace cuvil::tuning {
namespace {

struct Builtin {
  const char *name, *description, *target, *cpu;
  std::vector<std::string> features; // empty: the CPU's own
  unsigned l1dKiB, l2KiB, l3KiB;
  double fp32, int8, bf16, bandwidth; // nominal, per core / all cores
};

// Nominal figures (vendor clocks and issue widths), for the heuristics and
// the cost model when a device is not at hand; a measured profile replaces
// them. A profile's `target` says which target it configures.
const std::vector<Builtin> &builtins() {
  static const std::vector<Builtin> list = {
      {"x86-64-v3", "x86-64 with AVX2 and FMA (Haswell and later, Zen 1-3)", "x86_64", "x86-64-v3",
       {}, 32, 1024, 8192, 96, 0, 0, 40},
      {"x86-64-v4", "x86-64 with AVX-512 F/BW/CD/DQ/VL (Skylake-SP and later, Zen 4)", "x86_64",
       "x86-64-v4", {}, 32, 1024, 8192, 192, 0, 0, 60},
      {"sapphirerapids", "Intel Xeon 4th generation (AVX-512, VNNI, BF16, AMX)", "x86_64",
       "sapphirerapids", {}, 48, 2048, 1920, 192, 768, 384, 120},
      {"znver4", "AMD Zen 4 (AVX-512 on 256-bit units, VNNI, BF16)", "x86_64", "znver4", {}, 32, 1024,
       4096, 118, 472, 236, 80},
      {"aarch64-v8.2", "Armv8.2-A with NEON and the dot product (dotprod)", "aarch64", "generic",
       {"v8.2a", "neon", "fp-armv8", "dotprod"}, 64, 512, 2048, 32, 128, 0, 25},
      {"neoverse-n1", "Arm Neoverse N1 (Armv8.2-A, dotprod; Graviton2, Ampere Altra)", "aarch64",
       "neoverse-n1", {}, 64, 1024, 1024, 42, 166, 0, 100},
      // The virtual NPU's configurations (targets/NPU/ARCHITECTURE.md, the
      // `cpu` names NpuConfig.cpp knows): int8 peak = 2 x MACs per cycle at
      // 1 GHz, bandwidth = one DMA unit's bytes per cycle; the SRAMs in
      // place of caches (weights, activations, sums).
      {"npu-32x32", "Cuvil virtual NPU: 32x32 int8 MACs, 512 KiB / 1 MiB / 256 KiB SRAM, 32 B/cycle DMA", "npu",
       "npu-32x32", {}, 512, 1024, 256, 0, 2048, 0, 32},
      {"npu-16x16", "Cuvil virtual NPU: 16x16 int8 MACs, SRAM and DMA as npu-32x32", "npu", "npu-16x16", {}, 512,
       1024, 256, 0, 512, 0, 32},
      {"npu-64x64", "Cuvil virtual NPU: 64x64 int8 MACs, 2 MiB / 2 MiB / 1 MiB SRAM, 64 B/cycle DMA", "npu",
       "npu-64x64", {}, 2048, 2048, 1024, 0, 8192, 0, 64},
      {"npu-32x32-small-sram", "Cuvil virtual NPU: npu-32x32 with 128 KiB / 256 KiB / 64 KiB SRAM", "npu",
       "npu-32x32-small-sram", {}, 128, 256, 64, 0, 2048, 0, 32},
      {"npu-32x32-slow-dram", "Cuvil virtual NPU: npu-32x32 with 8 B/cycle DMA", "npu", "npu-32x32-slow-dram", {},
       512, 1024, 256, 0, 2048, 0, 8},
  };
  return list;
}

DeviceProfile fromBuiltin(const Builtin &b) {
  DeviceProfile p;
  p.set_version(kDeviceProfileVersion);
  p.set_name(b.name);
  p.set_description(b.description);
  p.set_target(b.target);
  p.set_cpu(b.cpu);
  for (const std::string &f : b.features)
    p.add_features(f);
  unsigned level = 1;
  for (unsigned kib : {b.l1dKiB, b.l2KiB, b.l3KiB}) {
    CacheLevel *c = p.add_caches();
    c->set_level(level);
    c->set_type(level == 1 ? "data" : "unified");
    c->set_size_bytes(uint64_t(kib) * 1024);
    c->set_line_bytes(64);
    c->set_shared_by_cores(level == 3 ? 0 : 1);
    ++level;
  }
  p.set_fp32_gflops_core(b.fp32);
  p.set_int8_gops_core(b.int8);
  p.set_bf16_gflops_core(b.bf16);
  p.set_bandwidth_gbs(b.bandwidth);
  p.set_measured(false);
  p.set_producer("cuvil built-in");
  return p;
}

bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

struct FirstError : google::protobuf::io::ErrorCollector {
  std::string message;
  void AddError(int line, int column, const std::string &msg) override {
    if (message.empty())
      message = "line " + std::to_string(line + 1) + ":" + std::to_string(column + 1) + ": " + msg;
  }
};

std::string readSmall(const std::string &path) {
  std::ifstream in(path);
  std::string s;
  std::getline(in, s);
  return s;
}

/// "32K", "1024K", "32M" -> bytes.
uint64_t sizeBytes(const std::string &text) {
  char *end = nullptr;
  uint64_t n = std::strtoull(text.c_str(), &end, 10);
  if (end && (*end == 'K' || *end == 'k'))
    n <<= 10;
  else if (end && (*end == 'M' || *end == 'm'))
    n <<= 20;
  return n;
}

/// CPUs in a sysfs list ("0-3,8").
unsigned countList(const std::string &list) {
  unsigned n = 0;
  std::stringstream ss(list);
  std::string part;
  while (std::getline(ss, part, ',')) {
    size_t dash = part.find('-');
    if (dash == std::string::npos)
      n += part.empty() ? 0 : 1;
    else
      n += unsigned(std::stoul(part.substr(dash + 1)) - std::stoul(part.substr(0, dash)) + 1);
  }
  return n;
}

void addHostCaches(DeviceProfile &p) {
  for (int i = 0; i < 16; ++i) {
    std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    std::string level = readSmall(dir + "level");
    if (level.empty())
      break;
    std::string type = readSmall(dir + "type");
    if (type == "Instruction")
      continue;
    CacheLevel *c = p.add_caches();
    c->set_level(unsigned(std::stoul(level)));
    c->set_type(type == "Data" ? "data" : "unified");
    c->set_size_bytes(sizeBytes(readSmall(dir + "size")));
    std::string line = readSmall(dir + "coherency_line_size");
    c->set_line_bytes(line.empty() ? 64 : unsigned(std::stoul(line)));
    try {
      c->set_shared_by_cores(countList(readSmall(dir + "shared_cpu_list")));
    } catch (...) {
      c->set_shared_by_cores(0);
    }
  }
}

} // namespace

bool isTextProtoPath(const std::string &path) {
  return endsWith(path, ".textproto") || endsWith(path, ".pbtxt") || endsWith(path, ".txtpb");
}

std::vector<std::string> builtinProfileNames() {
  std::vector<std::string> names;
  for (const Builtin &b : builtins())
    names.push_back(b.name);
  return names;
}

Result<DeviceProfile> builtinProfile(const std::string &name) {
  for (const Builtin &b : builtins())
    if (name == b.name)
      return fromBuiltin(b);
  std::string list;
  for (const std::string &n : builtinProfileNames())
    list += (list.empty() ? "" : ", ") + n;
  return usageError("unknown device profile '" + name + "' (built in: " + list +
                    "; or a file written by `cuvil-autotune profile`)");
}

Status checkDeviceProfile(const DeviceProfile &p, const std::string &what) {
  // Every issue at once: a profile written by hand gets fixed in one go.
  std::vector<std::string> issues;
  if (p.version() != kDeviceProfileVersion)
    issues.push_back("version " + std::to_string(p.version()) + " is not supported (this compiler reads version " +
                     std::to_string(kDeviceProfileVersion) + ")");
  if (p.name().empty())
    issues.push_back("it has no name");
  if (p.target().empty())
    issues.push_back("it names no target (x86_64, aarch64, ...)");
  if (p.cpu().empty())
    issues.push_back("it names no cpu");
  for (const std::string &f : p.features())
    if (f.empty() || f[0] == '+' || f[0] == '-' || f.find_first_of(", \t") != std::string::npos)
      issues.push_back("feature '" + f + "' is not an LLVM feature name (write them without a sign: avx512f)");
  const std::pair<const char *, double> peaks[] = {{"fp32_gflops_core", p.fp32_gflops_core()},
                                                   {"int8_gops_core", p.int8_gops_core()},
                                                   {"bf16_gflops_core", p.bf16_gflops_core()},
                                                   {"bandwidth_gbs", p.bandwidth_gbs()},
                                                   {"bandwidth_gbs_1thread", p.bandwidth_gbs_1thread()}};
  for (auto [name, v] : peaks)
    if (!std::isfinite(v) || v < 0)
      issues.push_back(std::string(name) + " is negative or not finite");
  for (const CacheLevel &c : p.caches())
    if (c.level() < 1 || c.level() > 4 || c.size_bytes() == 0 || (c.line_bytes() & (c.line_bytes() - 1)) != 0)
      issues.push_back("cache level " + std::to_string(c.level()) +
                       " is impossible (levels 1-4, a size, a power-of-two line)");
  if (issues.empty())
    return Status();
  std::string text;
  for (size_t i = 0; i < issues.size(); ++i)
    text += (i ? "; " : "") + issues[i];
  return inputError("device profile " + what + ": " + text);
}

Result<DeviceProfile> loadDeviceProfile(const std::string &nameOrFile) {
  if (nameOrFile.find('/') == std::string::npos && nameOrFile.find('.') == std::string::npos)
    return builtinProfile(nameOrFile);
  Result<std::string> bytes = readFile(nameOrFile, uint64_t(64) << 20);
  if (!bytes) {
    if (Result<DeviceProfile> b = builtinProfile(nameOrFile))
      return b;
    return bytes.error();
  }
  DeviceProfile p;
  if (isTextProtoPath(nameOrFile)) {
    google::protobuf::TextFormat::Parser parser;
    FirstError errors;
    parser.RecordErrorsTo(&errors);
    if (!parser.ParseFromString(*bytes, &p))
      return inputError("device profile '" + nameOrFile + "' is not a valid text DeviceProfile: " +
                        errors.message);
  } else if (!p.ParseFromString(*bytes)) {
    return inputError("device profile '" + nameOrFile +
                      "' is not a valid binary DeviceProfile (corrupt or another format; text "
                      "profiles end in .textproto)");
  }
  if (Status s = checkDeviceProfile(p, "'" + nameOrFile + "'"); !s)
    return s.error();
  return p;
}

Status writeDeviceProfile(const std::string &path, const DeviceProfile &profile) {
  std::string bytes;
  if (isTextProtoPath(path)) {
    google::protobuf::TextFormat::Printer printer;
    if (!printer.PrintToString(profile, &bytes))
      return ioError("cannot print the device profile for '" + path + "'");
    bytes = "# cuvil device profile (schema: tuning/DeviceProfile.proto)\n" + bytes;
  } else if (!profile.SerializeToString(&bytes)) {
    return ioError("cannot serialize the device profile for '" + path + "'");
  }
  return writeFileAtomically(path, bytes);
}

Result<DeviceProfile> measureHostProfile(bool quick) {
  DeviceProfile p;
  p.set_version(kDeviceProfileVersion);
  p.set_name("host");
#if defined(__x86_64__)
  p.set_target("x86_64");
#elif defined(__aarch64__)
  p.set_target("aarch64");
#else
  return inputError("cuvil-autotune profile measures x86-64 and aarch64 machines only");
#endif
  std::string cpu = llvm::sys::getHostCPUName().str();
  p.set_cpu(cpu);
  p.set_description("this machine (" + cpu + "), measured");
  std::vector<std::string> features;
  for (auto &f : llvm::sys::getHostCPUFeatures())
    if (f.second)
      features.push_back(f.first().str());
  std::sort(features.begin(), features.end());
  for (const std::string &f : features)
    p.add_features(f);
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  p.set_cores(cores > 0 ? unsigned(cores) : 1);
  addHostCaches(p);
  cuvil_host_peaks peaks{};
  if (cuvil_measure_host_peaks(&peaks, quick ? 1 : 0) != 0)
    return ioError("measuring this machine's peaks failed (out of memory?)");
  p.set_fp32_gflops_core(peaks.fp32_gflops_core);
  p.set_int8_gops_core(peaks.int8_gops_core);
  p.set_bf16_gflops_core(peaks.bf16_gflops_core);
  p.set_bandwidth_gbs(peaks.bandwidth_gbs_all);
  p.set_bandwidth_gbs_1thread(peaks.bandwidth_gbs_1thread);
  p.set_measured(true);
  return p;
}

std::string featureString(const DeviceProfile &profile) {
  std::string s;
  for (const std::string &f : profile.features())
    s += (s.empty() ? "+" : ",+") + f;
  return s;
}

} // namespace cuvil::tuning
