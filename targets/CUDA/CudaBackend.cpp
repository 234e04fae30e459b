//===- CudaBackend.cpp - The cuda target ----------------------------------===//
//
// --target cuda: the model's loops run as CUDA kernels (PTX and cubins in
// the library), launched by host code for the x86_64 CPU through the
// runtime, which loads the driver at run time (runtime/cuda/). The library
// keeps the model's CPU code too: with --target x86_64,cuda it runs where
// no suitable device is. So the backend is the x86_64 backend whose
// lowering copies the model function and turns the copy's loops into
// kernels (Passes.td).
//
//===----------------------------------------------------------------------===//
#include "targets/CUDA/CudaBackend.h"

#include "targets/CPU/CpuPipeline.h"
#include "targets/HostedBackend.h"
#include "targets/CUDA/Passes.h"
#include "targets/CUDA/Ptx.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"

#include <mutex>

namespace mlir::cuvil {

namespace {

class CudaBackend final : public HostedBackend {
public:
  CudaBackend(std::unique_ptr<TargetBackend> host, std::vector<std::string> archs, bool cpuFallback,
              bool instrument, std::string ptxas, bool emulate)
      : HostedBackend(std::move(host)), archs_(std::move(archs)), cpuFallback_(cpuFallback), instrument_(instrument),
        ptxas_(std::move(ptxas)), emulate_(emulate) {}

  std::string name() const override { return cpuFallback_ ? host().name() + ",cuda" : "cuda"; }
  std::string cpu() const override { return archList(); }
  std::string deviceKey() const override { return "cuda/" + archList() + "/" + host().deviceKey(); }
  std::vector<std::string> cacheKeyParts() const override {
    std::vector<std::string> parts = host().cacheKeyParts();
    parts.push_back("cuda-archs=" + archList());
    parts.push_back(std::string("cuda-cpu-fallback=") + (cpuFallback_ ? "1" : "0"));
    parts.push_back("ptxas=" + cuda::findPtxas(ptxas_));
    parts.push_back(std::string("cuda-emulate=") + (emulate_ ? "1" : "0"));
    return parts;
  }
  std::vector<std::string> cacheKeyFiles() const override {
    std::vector<std::string> files = HostedBackend::cacheKeyFiles();
    if (std::string ptxas = cuda::findPtxas(ptxas_); !ptxas.empty())
      files.push_back(ptxas);
    return files;
  }
  ::cuvil::Status checkModel(func::FuncOp entry) const override {
    // Run-time sizes live in a host array the kernels cannot read.
    for (auto [i, type] : llvm::enumerate(entry.getArgumentTypes()))
      if (auto t = llvm::dyn_cast<RankedTensorType>(type); t && !t.hasStaticShape())
        return ::cuvil::usageError("input " + std::to_string(i) +
                                   " has run-time dimensions: the CUDA target compiles static shapes (give every "
                                   "dimension with --input-shape, or compile the run-time sizes for x86_64)");
    return HostedBackend::checkModel(entry);
  }

  void buildLoweringPipeline(OpPassManager &pm) const override {
    if (emulate_) {
      // The model function itself, its launches as loops on the CPU.
      pm.addPass(cuda::createCudaCloneEntryPass(cuda::CudaCloneEntryPassOptions{/*inPlace=*/true}));
      buildCpuLoweringPipeline(pm, instrument_, /*testOverlapBuffers=*/false, [](OpPassManager &device) {
        cuda::CudaMapLoopsPassOptions map;
        map.emulate = true;
        device.addPass(cuda::createCudaMapLoopsPass(map));
        device.addPass(cuda::createCudaEmulateLaunchesPass());
      });
      return;
    }
    cuda::CudaCloneEntryPassOptions clone;
    clone.keepCpu = cpuFallback_;
    pm.addPass(cuda::createCudaCloneEntryPass(clone));
    std::string archs = archList();
    bool fallback = cpuFallback_;
    std::string ptxas = ptxas_;
    buildCpuLoweringPipeline(pm, instrument_, /*testOverlapBuffers=*/false, [=](OpPassManager &device) {
      device.addPass(cuda::createCudaMapLoopsPass());
      device.addPass(createGpuKernelOutliningPass());
      device.addPass(cuda::createCudaLowerLaunchesPass());
      cuda::CudaSerializeKernelsPassOptions serialize;
      serialize.archs = archs;
      serialize.cpuFallback = fallback;
      serialize.ptxas = ptxas;
      device.addPass(cuda::createCudaSerializeKernelsPass(serialize));
    });
  }
private:
  std::string archList() const {
    std::string s;
    for (const std::string &a : archs_)
      s += (s.empty() ? "" : ",") + a;
    return s;
  }

  std::vector<std::string> archs_;
  bool cpuFallback_, instrument_;
  std::string ptxas_;
  bool emulate_;
};

} // namespace

void registerCudaTarget() {
  TargetInfo info;
  info.name = "cuda";
  info.description = "NVIDIA GPUs through CUDA: kernels as PTX and cubins (--cuda-arch: " + cuda::supportedArchs() +
                     "), the driver loaded at run time; x86_64,cuda also keeps the CPU code as the fallback";
  info.registerDialects = [](DialectRegistry &registry) {
    registry.insert<gpu::GPUDialect, NVVM::NVVMDialect, index::IndexDialect>();
    registerNVVMDialectTranslation(registry);
    registerGPUDialectTranslation(registry);
    if (const TargetInfo *host = lookupTarget("x86_64"); host && host->registerDialects)
      host->registerDialects(registry);
  };
  info.registerPasses = [] {
    static std::once_flag once;
    std::call_once(once, [] {
      cuda::registerCUDAPasses();
      registerGpuKernelOutliningPass(); // MLIR's, which the lowering runs
    });
    if (const TargetInfo *host = lookupTarget("x86_64"); host && host->registerPasses)
      host->registerPasses();
  };
  info.createWithHost = [](const TargetOptions &options,
                           const std::string &hostName) -> ::cuvil::Result<std::unique_ptr<TargetBackend>> {
    std::string archList = options.cudaArch.empty() ? "sm_80,sm_90" : options.cudaArch;
    FailureOr<std::vector<std::string>> archs = cuda::parseArchs(archList);
    if (failed(archs))
      return ::cuvil::usageError("--cuda-arch: '" + archList + "' is not a comma-separated list of " +
                                 cuda::supportedArchs());
    std::string ptxas;
    bool emulate = false;
    for (const std::string &o : options.targetOptions) {
      if (llvm::StringRef(o).starts_with("ptxas="))
        ptxas = o.substr(6);
      else if (o == "emulate=1" || o == "emulate=0")
        emulate = o.back() == '1';
      else
        return ::cuvil::usageError("--target-option: '" + o + "' is not an option of the cuda target (it takes "
                                   "ptxas=PATH|none, emulate=0|1)");
    }
    bool fallback = !hostName.empty();
    if (fallback && hostName != "x86_64")
      return ::cuvil::usageError("--target " + hostName + ",cuda: the CUDA target's host is x86_64");
    TargetOptions hostOptions = options;
    hostOptions.targetOptions.clear();
    hostOptions.cudaArch.clear();
    ::cuvil::Result<std::unique_ptr<TargetBackend>> host = createTargetBackend("x86_64", hostOptions);
    if (!host)
      return host.error();
    return std::unique_ptr<TargetBackend>(
        std::make_unique<CudaBackend>(std::move(*host), *archs, fallback, options.instrument, ptxas, emulate));
  };
  info.create = [create = info.createWithHost](const TargetOptions &options) { return create(options, ""); };
  registerTarget(std::move(info));
}

} // namespace mlir::cuvil
