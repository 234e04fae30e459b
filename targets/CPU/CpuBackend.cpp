//===- CpuBackend.cpp - CPU code generation as a target backend -----------===//
#include "targets/CPU/CpuBackend.h"

#include "targets/CPU/CpuPipeline.h"

#include "dialects/Cuvil/IR/CuvilDialect.h"
#include "targets/CPU/KernelConfig.h"
#include "targets/CPU/RunTimeSymbols.h"
#include "targets/CPU/Weights.h"
#include "tuning/TuningDatabase.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Triple.h"

#include <mutex>

namespace mlir::cuvil {

namespace {

class CpuBackend final : public TargetBackend {
public:
  CpuBackend(CpuTarget target, const TargetOptions &options)
      : target_(std::move(target)), instrument_(options.instrument), tuningDb_(options.tuningDb),
        cacheBytes_(options.cacheBytes), loweringRemarks_(options.loweringRemarks) {}

  std::string name() const override { return target_.name; }
  std::string cpu() const override { return target_.cpu; }
  std::string deviceKey() const override {
    return ::cuvil::tuning::deviceKey(target_.triple, target_.cpu, target_.features);
  }
  std::vector<std::string> requiredFeatures() const override { return cuvil::requiredFeatures(target_); }
  std::vector<std::string> cacheKeyParts() const override {
    return {"target=" + target_.triple, "cpu=" + target_.cpu, "features=" + target_.features,
            "cache-bytes=" + std::to_string(cacheBytes_)};
  }
  std::vector<std::string> cacheKeyFiles() const override {
    std::vector<std::string> files{target_.runtimeArchive};
    if (!tuningDb_.empty())
      files.push_back(tuningDb_);
    return files;
  }

  // Dynamic dimensions need bounds (the arena is planned at them); a shape
  // that depends on tensor values has none: say so, with the input or op
  // concerned, rather than failing somewhere in the lowering.
  ::cuvil::Status checkModel(func::FuncOp entry) const override {
    bool dynamicInputs = false;
    for (auto [i, type] : llvm::enumerate(entry.getArgumentTypes()))
      if (auto t = llvm::dyn_cast<RankedTensorType>(type); t && !t.hasStaticShape()) {
        dynamicInputs = true;
        auto bounds = entry.getArgAttrOfType<DenseI64ArrayAttr>(i, kDimBoundsAttrName);
        auto symbols = entry.getArgAttrOfType<ArrayAttr>(i, kDimSymbolsAttrName);
        if (!bounds || !symbols || bounds.size() != 2 * t.getRank() ||
            symbols.size() != size_t(t.getRank())) {
          std::string shape;
          llvm::raw_string_ostream os(shape);
          os << t;
          return ::cuvil::inputError(
              "input " + std::to_string(i) + " has a dynamic shape (" + shape +
              ") without bounds: import the model with bounds in --input-shape "
              "(e.g. " + std::to_string(i) + "=batch:1..64x16xf32), or give the argument " +
              kDimSymbolsAttrName.str() + " and " + kDimBoundsAttrName.str() + " attributes");
        }
      }
    if (dynamicInputs) {
      // Dynamic results follow from the inputs'; sizes of two symbols must
      // not meet where the code assumes one size.
      if (failed(cpu::checkRunTimeSymbols(entry)))
        return ::cuvil::inputError("checking run-time sizes failed (see the diagnostics above)");
      return ::cuvil::Status();
    }
    Operation *dynamic = nullptr;
    entry.walk([&](Operation *op) {
      for (Type t : op->getResultTypes())
        if (auto r = llvm::dyn_cast<RankedTensorType>(t); r && !r.hasStaticShape()) {
          dynamic = op;
          return WalkResult::interrupt();
        }
      return WalkResult::advance();
    });
    if (dynamic) {
      dynamic->emitError() << "'" << dynamic->getName()
                           << "' has a result whose shape depends on tensor values; the CPU code "
                              "generator compiles shapes that follow from the inputs' only";
      return ::cuvil::inputError("checking shapes failed (see the diagnostics above)");
    }
    return ::cuvil::Status();
  }

  void buildKernelChoicePipeline(OpPassManager &pm) const override {
    buildCpuKernelChoicePipeline(pm, tuningDb_, tuningDb_.empty() ? "" : deviceKey(), cacheBytes_,
                                 loweringRemarks_);
  }
  llvm::json::Array kernelReport(ModuleOp module) const override {
    return cpu::kernelReport(module);
  }
  void buildLoweringPipeline(OpPassManager &pm) const override {
    buildCpuLoweringPipeline(pm, instrument_);
  }

  ::cuvil::Result<std::string> emitCode(llvm::Module &module, CodeKind kind) const override {
    return emitMachineCode(module, target_, kind == CodeKind::Assembly ? OutputKind::Assembly : OutputKind::Object);
  }

  bool hasWeightsTable() const override { return true; }
  ::cuvil::Status extractWeights(ModuleOp module, WeightsTable &table) const override {
    cuvil::extractWeights(module, table);
    return ::cuvil::Status();
  }
  ::cuvil::Result<std::string> emitWeights(const WeightsTable &table) const override {
    return weightsObject(table, elfMachine());
  }
  ::cuvil::Result<std::string> combineObjects(const std::vector<std::string> &objects,
                                              const std::string &nextTo) const override {
    return cuvil::combineObjects(objects, target_, nextTo);
  }
  ::cuvil::Status link(const std::vector<std::string> &objects, const std::string &path,
                       const LinkOptions &options) const override {
    if (!options.weights)
      return linkSharedLibrary(objects, target_, path, options.soname, options.symbolPrefix);
    // The weights' place reserved at the link, their bytes written after it
    // (placeWeights): lld never copies them.
    std::vector<std::string> all = objects;
    all.push_back(weightsObject(*options.weights, elfMachine(), WeightsBytes::Reserved));
    // The SONAME too is written after the link, into its placeholder.
    const std::string &soname = options.weights->soname;
    std::string linkedSoname = soname.empty() ? options.soname : sonamePlaceholder(soname.size());
    if (::cuvil::Status s = linkSharedLibrary(all, target_, path, linkedSoname, options.symbolPrefix); !s)
      return s;
    // Read, not mapped: the same file is rewritten.
    auto image = llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false,
                                             /*IsVolatile=*/true);
    if (!image)
      return ::cuvil::ioError("cannot read the linked library '" + path + "': " + image.getError().message());
    if (options.linkedImage)
      *options.linkedImage = (*image)->getBuffer().str();
    return cuvil::placeWeights((*image)->getBuffer(), *options.weights, path);
  }
  ::cuvil::Status placeWeights(llvm::StringRef image, const WeightsTable &table,
                               const std::string &path) const override {
    return cuvil::placeWeights(image, table, path);
  }

private:
  uint16_t elfMachine() const {
    return llvm::Triple(target_.triple).getArch() == llvm::Triple::aarch64 ? 183 /*EM_AARCH64*/
                                                                            : 62 /*EM_X86_64*/;
  }

  CpuTarget target_;
  bool instrument_;
  std::string tuningDb_;
  uint64_t cacheBytes_;
  bool loweringRemarks_;
};

} // namespace

void registerCpuTarget(CpuTargetSpec spec, std::string description) {
  TargetInfo info;
  info.name = spec.name;
  info.description = std::move(description);
  info.registerDialects = registerCpuLoweringDialects;
  // Every CPU architecture shares the pipelines: registered once.
  info.registerPasses = [] {
    static std::once_flag once;
    std::call_once(once, registerCpuLoweringPipeline);
  };
  info.create = [spec](const TargetOptions &options) -> ::cuvil::Result<std::unique_ptr<TargetBackend>> {
    ::cuvil::Result<CpuTarget> t = makeCpuTarget(spec, options.cpu, options.features);
    if (!t)
      return t.error();
    return std::unique_ptr<TargetBackend>(std::make_unique<CpuBackend>(std::move(*t), options));
  };
  registerTarget(std::move(info));
}

} // namespace mlir::cuvil
