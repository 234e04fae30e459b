//===- ValidateRewrites.cpp - cuvil-opt --cuvil-validate-rewrites ---------===//
//
// Runs the graph pipeline's rewriting passes on each function with a
// RewriteValidator watching, so every fold, canonicalization pattern,
// recognized composite and fusion group applied to this module is checked
// by Z3. The module comes out as the passes left it; the report goes to
// stderr (or `report=FILE`) and ends with "N proved, M refuted, K unknown".
// A refuted rewrite is an error at the rewritten op and fails the pass.
//
//===----------------------------------------------------------------------===//
#include "verify/ValidateRewrites.h"

#include "verify/RewriteValidator.h"

#include "dialects/Cuvil/IR/CuvilOps.h"
#include "dialects/Cuvil/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/ToolOutputFile.h"
#include "mlir/Support/FileUtilities.h"

#include <set>

using namespace mlir;
using namespace mlir::cuvil;

namespace cuvil::verify {

namespace {

/// The graph passes whose rewrites are validated, in pipeline order.
/// (`plantWrong`: the steps with a test bug of their own plant it.)
using StepFactory = std::function<std::unique_ptr<Pass>(bool plantWrong)>;
const std::vector<std::pair<std::string, StepFactory>> &steps() {
  static const std::vector<std::pair<std::string, StepFactory>> s = {
      {"simplify", [](bool) { return createCuvilSimplifyPass(); }},
      {"fold-constants", [](bool) { return createCuvilFoldConstantsPass(); }},
      {"fold-batch-norm", [](bool) { return createCuvilFoldBatchNormPass(); }},
      {"recognize-composites", [](bool) { return createCuvilRecognizeCompositesPass(); }},
      {"fusion", [](bool) { return createCuvilFusePass(); }},
      {"unroll-loops",
       [](bool plantWrong) {
         // Planted: every trip reads the loop's initial values.
         CuvilUnrollLoopsPassOptions o;
         o.testDropCarried = plantWrong;
         return createCuvilUnrollLoopsPass(o);
       }},
  };
  return s;
}

/// Names of the rewrites the steps can apply (folds excepted: any op with a
/// folder), for the report's "not exercised" line.
std::vector<std::string> knownRewrites(MLIRContext *ctx, const std::set<std::string> &chosen) {
  std::vector<std::string> names;
  if (chosen.count("simplify")) {
    RewritePatternSet set(ctx);
    for (RegisteredOperationName op : ctx->getRegisteredOperations())
      if (op.getDialectNamespace() == "cuvil")
        op.getCanonicalizationPatterns(set, ctx);
    std::set<std::string> unique;
    for (const std::unique_ptr<RewritePattern> &p : set.getNativePatterns())
      unique.insert(patternName(*p));
    names.insert(names.end(), unique.begin(), unique.end());
  }
  if (chosen.count("fold-batch-norm"))
    names.insert(names.end(), {"batch norm to scale and shift", "fold batch norm into weights"});
  if (chosen.count("recognize-composites"))
    names.insert(names.end(), {"recognize layer norm", "recognize softmax"});
  if (chosen.count("fusion"))
    names.insert(names.end(), {"fuse conv group", "fuse elementwise group", "fuse gemm group"});
  if (chosen.count("unroll-loops"))
    names.push_back("unroll scf.while");
  return names;
}

/// Deliberately wrong rewrites, so tests can see the validator refute them:
/// x + 0.0 -> x (wrong for x = -0.0, why the real folder only drops -0.0)
/// and a - b -> b - a (and, in the unroll-loops step, trips that read the
/// loop's initial values).
void plantWrongRewrites(func::FuncOp f, RewriteObserver *observer) {
  IRRewriter rewriter(f.getContext(), observer);
  SmallVector<Operation *> ops;
  f.walk([&](Operation *op) { ops.push_back(op); });
  for (Operation *op : ops) {
    if (auto add = llvm::dyn_cast<AddOp>(op)) {
      auto c = add.getRhs().getDefiningOp<ConstantOp>();
      auto dense = c ? llvm::dyn_cast<DenseElementsAttr>(c.getValue()) : nullptr;
      if (dense && dense.isSplat() && llvm::isa<FloatType>(dense.getElementType()) &&
          dense.getSplatValue<APFloat>().isPosZero() && add.getLhs().getType() == add.getType()) {
        observer->beginRewrite(add, "test: x + 0.0 -> x");
        rewriter.replaceOp(add, add.getLhs());
      }
    } else if (auto sub = llvm::dyn_cast<SubOp>(op)) {
      observer->beginRewrite(sub, "test: a - b -> b - a");
      rewriter.setInsertionPoint(sub);
      Value swapped = rewriter.create<SubOp>(sub.getLoc(), sub.getType(), sub.getRhs(), sub.getLhs());
      rewriter.replaceOp(sub, swapped);
    }
  }
}

struct ValidateRewritesPass final
    : PassWrapper<ValidateRewritesPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ValidateRewritesPass)

  ValidateRewritesPass() = default;
  ValidateRewritesPass(const ValidateRewritesPass &other) : PassWrapper(other) {}

  StringRef getArgument() const final { return "cuvil-validate-rewrites"; }
  StringRef getDescription() const final {
    return "Run the graph passes' rewrites and prove each one with Z3 (translation validation)";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<CuvilDialect>();
  }

  ListOption<std::string> stepNames{
      *this, "steps",
      llvm::cl::desc("Graph passes to run and validate (simplify, fold-constants, "
                     "fold-batch-norm, recognize-composites, fusion, unroll-loops; default: all)")};
  Option<unsigned> timeoutMs{*this, "timeout-ms", llvm::cl::desc("Solver time limit per check"),
                             llvm::cl::init(500)};
  Option<unsigned> depth{*this, "depth",
                         llvm::cl::desc("Ops above a rewrite encoded before inputs are free"),
                         llvm::cl::init(6)};
  Option<std::string> reportFile{*this, "report",
                                 llvm::cl::desc("Write the report here instead of stderr")};
  Option<bool> plantWrong{*this, "test-plant-wrong-rewrites",
                          llvm::cl::desc("Testing: also apply two deliberately wrong rewrites"),
                          llvm::cl::init(false)};

  void runOnOperation() override {
    std::set<std::string> chosen;
    for (const std::string &s : stepNames)
      chosen.insert(s);
    for (const std::string &s : chosen) {
      bool known = llvm::any_of(steps(), [&](const auto &st) { return st.first == s; });
      if (!known) {
        getOperation().emitError() << "cuvil-validate-rewrites: unknown step '" << s
                                   << "' (known: simplify, fold-constants, fold-batch-norm, "
                                      "recognize-composites, fusion, unroll-loops)";
        return signalPassFailure();
      }
    }
    if (chosen.empty())
      for (const auto &st : steps())
        chosen.insert(st.first);

    RewriteValidator validator({timeoutMs, depth});
    {
      RewriteObserver::Scope scope(&validator);
      SmallVector<func::FuncOp> funcs(getOperation().getOps<func::FuncOp>());
      for (func::FuncOp f : funcs) {
        if (f.isExternal())
          continue;
        if (plantWrong)
          plantWrongRewrites(f, &validator);
        for (const auto &[name, make] : steps()) {
          if (!chosen.count(name))
            continue;
          OpPassManager pm(func::FuncOp::getOperationName());
          pm.addPass(make(plantWrong));
          if (failed(runPipeline(pm, f)))
            return signalPassFailure();
        }
      }
    }
    std::vector<std::string> expected = knownRewrites(&getContext(), chosen);
    if (reportFile.empty()) {
      validator.print(llvm::errs(), expected);
    } else {
      std::string error;
      auto out = mlir::openOutputFile(reportFile, &error);
      if (!out) {
        getOperation().emitError() << "cannot write the report '" << reportFile
                                   << "': " << error;
        return signalPassFailure();
      }
      validator.print(out->os(), expected);
      out->keep();
    }
    if (validator.count(Verdict::Refuted))
      signalPassFailure();
  }
};

} // namespace

void registerValidateRewritesPass() { PassRegistration<ValidateRewritesPass>(); }

} // namespace cuvil::verify
