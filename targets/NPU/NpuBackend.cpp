//===- NpuBackend.cpp - The npu target ------------------------------------===//
//
// --target npu: the NPU takes the segments the partitioner gives it
// (scheduled into command streams that the library carries), the host CPU
// (x86_64, this machine's) everything else and the calls that run the
// segments on the runtime's NPU backend. So the backend is the host's CPU
// backend with the NPU passes in front of its kernel choice and lowering.
//
//===----------------------------------------------------------------------===//
#include "targets/NPU/NpuBackend.h"

#include "targets/HostedBackend.h"

#include "targets/NPU/NpuConfig.h"
#include "targets/NPU/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

#include <mutex>

namespace mlir::cuvil {

namespace {

class NpuBackend final : public HostedBackend {
public:
  NpuBackend(std::unique_ptr<TargetBackend> host, std::string config, std::string partitionReport,
             bool doubleBuffering)
      : HostedBackend(std::move(host)), config_(std::move(config)), partitionReport_(std::move(partitionReport)),
        doubleBuffering_(doubleBuffering) {}

  std::string name() const override { return "npu"; }
  std::string cpu() const override { return config_; }
  std::string deviceKey() const override { return "npu/" + config_ + "/" + host().deviceKey(); }
  std::vector<std::string> cacheKeyParts() const override {
    std::vector<std::string> parts = host().cacheKeyParts();
    parts.push_back("npu-config=" + config_);
    parts.push_back(std::string("npu-double-buffering=") + (doubleBuffering_ ? "1" : "0"));
    return parts;
  }

  void buildKernelChoicePipeline(OpPassManager &pm) const override {
    npu::NpuPartitionPassOptions partition;
    partition.config = config_;
    partition.report = partitionReport_;
    pm.addPass(npu::createNpuPartitionPass(partition));
    npu::NpuSchedulePassOptions schedule;
    schedule.config = config_;
    schedule.doubleBuffering = doubleBuffering_;
    pm.addPass(npu::createNpuSchedulePass(schedule));
    host().buildKernelChoicePipeline(pm);
  }
  void buildLoweringPipeline(OpPassManager &pm) const override {
    pm.addPass(npu::createNpuLowerProgramsPass());
    host().buildLoweringPipeline(pm);
  }

private:
  std::string config_, partitionReport_;
  bool doubleBuffering_;
};

std::string configList() {
  std::string names;
  for (const auto &[name, description] : npu::configNames())
    names += (names.empty() ? "" : ", ") + name;
  return names;
}

} // namespace

void registerNpuTarget() {
  TargetInfo info;
  info.name = "npu";
  info.description = "Cuvil's virtual NPU (targets/NPU/ARCHITECTURE.md), run by the runtime's simulator, with "
                     "the host x86-64 CPU for what it lacks (--cpu: " + configList() + ")";
  info.registerDialects = [](DialectRegistry &registry) {
    registry.insert<npu::NpuDialect, bufferization::BufferizationDialect, memref::MemRefDialect>();
    if (const TargetInfo *host = lookupTarget("x86_64"); host && host->registerDialects)
      host->registerDialects(registry);
  };
  info.registerPasses = [] {
    static std::once_flag once;
    std::call_once(once, [] { npu::registerNPUPasses(); });
    if (const TargetInfo *host = lookupTarget("x86_64"); host && host->registerPasses)
      host->registerPasses();
  };
  info.create = [](const TargetOptions &options) -> ::cuvil::Result<std::unique_ptr<TargetBackend>> {
    std::string config = options.cpu.empty() ? npu::kDefaultConfig : options.cpu;
    if (!npu::lookupConfig(config))
      return ::cuvil::usageError("--cpu: unknown NPU configuration '" + config + "' (the configurations: " +
                                 configList() + ")");
    bool doubleBuffering = true;
    for (const std::string &o : options.targetOptions) {
      if (o == "double-buffering=0" || o == "double-buffering=1")
        doubleBuffering = o.back() == '1';
      else
        return ::cuvil::usageError("--target-option: '" + o + "' is not an option of the npu target (it takes "
                                   "double-buffering=0|1)");
    }
    TargetOptions hostOptions = options;
    hostOptions.cpu = "";
    hostOptions.targetOptions.clear();
    ::cuvil::Result<std::unique_ptr<TargetBackend>> host = createTargetBackend("x86_64", hostOptions);
    if (!host)
      return host.error();
    return std::unique_ptr<TargetBackend>(
        std::make_unique<NpuBackend>(std::move(*host), config, options.partitionReport, doubleBuffering));
  };
  registerTarget(std::move(info));
}

} // namespace mlir::cuvil
