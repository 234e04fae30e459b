//===- ChooseKernels.cpp - A kernel configuration on every kernel op -----===//
//
// The choose half of kernel selection: asks the configuration provider for
// every kernel op that has no #cuvil.kernel yet. The apply half
// (SelectKernels.cpp) builds what the attributes say.
//
//===----------------------------------------------------------------------===//
#include "targets/CPU/Passes.h"

#include "targets/CPU/KernelConfig.h"
#include "targets/CPU/LoweringRules.h"
#include "tuning/TuningDatabase.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_CHOOSECPUKERNELSPASS
#define GEN_PASS_DEF_PRINTLOWERINGTABLEPASS
#define GEN_PASS_DEF_EXPLAINLOWERINGPASS
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
    if (remarks)
      remarkGeneralPaths(module);
  }

  /// Each kernel op left to linalg although a rule covers it: a remark with
  /// every rule's first failing condition.
  static void remarkGeneralPaths(ModuleOp module) {
    for (Operation *op : kernelOps(module)) {
      KernelConfigAttr config = kernelConfigOf(op);
      if (!config || config.getKernel() != kernel::Linalg)
        continue;
      std::string why;
      for (const LoweringRule &rule : loweringRules()) {
        if (rule.op != op->getName().getStringRef())
          continue;
        std::string reason = checkLoweringRule(op, rule.kernel, rule.variants.front());
        if (reason.empty())
          continue; // the provider preferred linalg over a kernel that could run
        why += (why.empty() ? "" : "; ") + (rule.kernel + " " + rule.variants.front()).str() + ": " + reason;
      }
      if (!why.empty())
        op->emitRemark() << op->getName() << " takes the general lowering (linalg): " << why;
    }
  }
};

struct PrintLoweringTablePass final
    : mlir::cuvil::impl::PrintLoweringTablePassBase<PrintLoweringTablePass> {
  void runOnOperation() override { printLoweringTable(llvm::errs()); }
};

struct ExplainLoweringPass final : mlir::cuvil::impl::ExplainLoweringPassBase<ExplainLoweringPass> {
  void runOnOperation() override {
    getOperation().walk([](Operation *op) {
      bool covered = llvm::any_of(loweringRules(), [&](const LoweringRule &r) {
        return r.op == op->getName().getStringRef();
      });
      if (!covered)
        return;
      auto fn = op->getParentOfType<func::FuncOp>();
      llvm::errs() << op->getName() << " in @" << (fn ? fn.getSymName() : StringRef("?")) << "\n";
      explainLowering(op, llvm::errs());
    });
  }
};

} // namespace
