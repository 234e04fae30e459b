//===- ChooseKernels.cpp - A kernel configuration on every kernel op -----===//
//
// The choose half of kernel selection: asks the configuration provider for
// every kernel op that has no #cuvil.kernel yet. The apply half
// (SelectKernels.cpp) builds what the attributes say.
//
//===----------------------------------------------------------------------===//
#include "targets/CPU/Passes.h"

#include "targets/CPU/KernelConfig.h"
#include "tuning/TuningDatabase.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_CHOOSECPUKERNELSPASS
#include "targets/CPU/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;
using namespace mlir::cuvil;
using namespace mlir::cuvil::cpu;

namespace {

struct ChooseCpuKernelsPass final
    : mlir::cuvil::impl::ChooseCpuKernelsPassBase<ChooseCpuKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (provider != "heuristics") {
      module.emitError() << "cuvil-choose-cpu-kernels: unknown configuration provider '"
                         << provider << "' (available: heuristics)";
      return signalPassFailure();
    }
    if (!tuningDb.empty()) {
      if (device.empty()) {
        module.emitError() << "cuvil-choose-cpu-kernels: tuning-db needs the device whose records to use";
        return signalPassFailure();
      }
      ::cuvil::tuning::LoadReport report;
      ::cuvil::Result<::cuvil::tuning::TuningDatabase> db = ::cuvil::tuning::readTuningDatabase(tuningDb, &report);
      if (!db) {
        module.emitError() << db.error().message;
        return signalPassFailure();
      }
      if (std::string w = report.summary(); !w.empty())
        module.emitWarning() << "tuning database '" << tuningDb << "': " << w;
      createTuningDbProvider(std::make_shared<::cuvil::tuning::TuningDatabase>(std::move(*db)), tuningDb,
                             device)
          ->configure(module);
    }
    HeuristicOptions options;
    options.winograd = winograd;
    options.winograd2x2 = winograd2x2;
    options.winogradMinTiles = winogradMinTiles;
    options.fuseDepthwiseMinBytes = fuseDepthwiseMinBytes;
    createHeuristicProvider(options)->configure(module);
  }
};

} // namespace
