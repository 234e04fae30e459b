//===- VerifyFlattening.cpp - cuvil-opt --cuvil-verify-flattening ---------===//
//
// Runs the graph passes that flatten control flow on each function: the
// scf ops' canonicalizations inside cuvil-simplify (a static condition to
// its branch, an if to a select, loop simplifications) and
// cuvil-unroll-loops, with their shape and constant clean-ups in between.
// (The code generators' cuvil-canonicalize checks itself the same way.)
// Each such rewrite checks itself against the dependencies the op had
// before (ControlDependencies.h); this pass collects the checks and reports
// them, ending with "N checked, M violations". A violation is an error at
// the flattened op and fails the pass.
//
//===----------------------------------------------------------------------===//
#include "verify/VerifyFlattening.h"

#include "dialects/Cuvil/Analysis/ControlDependencies.h"
#include "dialects/Cuvil/IR/CuvilOps.h"
#include "dialects/Cuvil/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
using namespace mlir::cuvil;

namespace cuvil::verify {

namespace {

struct VerifyFlatteningPass final : PassWrapper<VerifyFlatteningPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(VerifyFlatteningPass)

  VerifyFlatteningPass() = default;
  VerifyFlatteningPass(const VerifyFlatteningPass &other) : PassWrapper(other) {}

  StringRef getArgument() const final { return "cuvil-verify-flattening"; }
  StringRef getDescription() const final {
    return "Flatten control flow as the graph passes do and check that every data dependency "
           "of each result is kept";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<CuvilDialect, scf::SCFDialect, arith::ArithDialect, tensor::TensorDialect>();
  }

  Option<std::string> reportFile{*this, "report",
                                 llvm::cl::desc("Write the report here instead of stderr")};
  Option<int64_t> maxTripCount{*this, "max-trip-count",
                               llvm::cl::desc("cuvil-unroll-loops' limit on trips"), llvm::cl::init(16)};
  Option<bool> plantIf{*this, "test-plant-wrong-if-conversion",
                       llvm::cl::desc("Testing: turn each scf.if on a run-time condition into its "
                                      "then-branch (a bug the check must catch)"),
                       llvm::cl::init(false)};
  Option<bool> dropCarried{*this, "test-drop-carried",
                           llvm::cl::desc("Testing: cuvil-unroll-loops wires every trip to the "
                                          "initial values (a bug the check must catch)"),
                           llvm::cl::init(false)};

  void runOnOperation() override {
    FlatteningLog log;
    bool ok = true;
    {
      FlatteningLog::Scope scope(&log);
      SmallVector<func::FuncOp> funcs(getOperation().getOps<func::FuncOp>());
      for (func::FuncOp f : funcs) {
        if (f.isExternal())
          continue;
        OpPassManager pm(func::FuncOp::getOperationName());
        if (plantIf) {
          CuvilCanonicalizePassOptions canonicalize;
          canonicalize.testWrongIfConversion = true;
          pm.addPass(createCuvilCanonicalizePass(canonicalize));
        }
        pm.addPass(createCuvilSimplifyPass());
        pm.addPass(createCuvilFoldConstantsPass());
        pm.addPass(createCuvilInferShapesPass());
        pm.addPass(createCuvilSimplifyPass());
        CuvilUnrollLoopsPassOptions unroll;
        unroll.maxTripCount = maxTripCount;
        unroll.testDropCarried = dropCarried;
        pm.addPass(createCuvilUnrollLoopsPass(unroll));
        pm.addPass(createCuvilFoldConstantsPass());
        pm.addPass(createCuvilInferShapesPass());
        pm.addPass(createCuvilSimplifyPass());
        // A lost dependency fails the pass that lost it; go on with the
        // other functions so the report lists them all.
        ok &= succeeded(runPipeline(pm, f));
      }
    }
    if (!print(log))
      return signalPassFailure();
    if (!ok || !log.violations.empty())
      signalPassFailure();
  }

  bool print(const FlatteningLog &log) {
    std::string text;
    llvm::raw_string_ostream os(text);
    int64_t total = 0;
    for (const auto &[name, n] : log.checked)
      total += n;
    os << "flattening check: " << total << " rewrite(s) of control flow\n";
    for (const auto &[name, n] : log.checked)
      os << "  " << n << "  " << name << "\n";
    for (const std::string &v : log.violations)
      os << "  VIOLATION " << v << "\n";
    os << total << " checked, " << log.violations.size() << " violations\n";
    if (reportFile.empty()) {
      llvm::errs() << text;
      return true;
    }
    std::string error;
    auto out = mlir::openOutputFile(reportFile, &error);
    if (!out) {
      getOperation().emitError() << "cannot write the report '" << reportFile << "': " << error;
      return false;
    }
    out->os() << text;
    out->keep();
    return true;
  }
};

} // namespace

void registerVerifyFlatteningPass() { PassRegistration<VerifyFlatteningPass>(); }

} // namespace cuvil::verify
