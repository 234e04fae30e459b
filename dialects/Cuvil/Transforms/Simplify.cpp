//===- Simplify.cpp - Folders and canonicalization patterns, no DCE -------===//
//
// MLIR's greedy rewrite driver erases every trivially dead op it visits,
// which would make dead-code elimination impossible to switch off. This
// driver sweeps the function in program order, folds each op or applies
// the first matching canonicalization pattern, and erases only what a fold
// or pattern replaces.
//
// Rewrites of scf.if, scf.for and scf.while (static conditions, if to
// select, loop simplifications) flatten control flow: each is checked to
// keep every data dependency of the op's results (ControlDependencies.h),
// and a lost one fails the pass.
//
//===----------------------------------------------------------------------===//
#include "dialects/Cuvil/IR/CuvilOps.h"
#include "dialects/Cuvil/Transforms/FlatteningListener.h"
#include "dialects/Cuvil/Transforms/Passes.h"
#include "dialects/Cuvil/Transforms/RewriteObserver.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"
#include "mlir/Rewrite/PatternApplicator.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_CUVILSIMPLIFYPASS
#include "dialects/Cuvil/Transforms/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {

/// PatternRewriter's constructor is protected: a plain concrete rewriter.
struct SweepRewriter : PatternRewriter {
  explicit SweepRewriter(MLIRContext *ctx) : PatternRewriter(ctx) {}
};

struct CuvilSimplifyPass final
    : mlir::cuvil::impl::CuvilSimplifyPassBase<CuvilSimplifyPass> {
  using Base::Base;

  FrozenRewritePatternSet patterns;

  LogicalResult initialize(MLIRContext *context) override {
    patterns = FrozenRewritePatternSet(mlir::cuvil::canonicalizationPatterns(context));
    return success();
  }

  /// Folds `op` in place or into existing values/constants. True on change.
  bool fold(Operation *op, PatternRewriter &rewriter) {
    SmallVector<OpFoldResult> results;
    if (failed(op->fold(results)))
      return false;
    if (results.empty())
      return true; // folded in place (attributes or operands changed)
    SmallVector<Value> replacements;
    SmallVector<Operation *> made;
    rewriter.setInsertionPoint(op);
    for (auto [result, folded] : llvm::zip(op->getResults(), results)) {
      if (auto v = llvm::dyn_cast<Value>(folded)) {
        replacements.push_back(v);
        continue;
      }
      Operation *c = op->getDialect()->materializeConstant(
          rewriter, llvm::cast<Attribute>(folded), result.getType(), op->getLoc());
      if (!c) { // cannot materialize: leave the op as it was
        for (Operation *m : made)
          rewriter.eraseOp(m);
        return false;
      }
      made.push_back(c);
      replacements.push_back(c->getResult(0));
    }
    rewriter.replaceOp(op, replacements);
    return true;
  }

  void runOnOperation() override {
    PatternApplicator applicator(patterns);
    applicator.applyDefaultCostModel();
    SweepRewriter rewriter(&getContext());
    mlir::cuvil::RewriteObserver *observer = mlir::cuvil::RewriteObserver::current();
    for (int64_t sweep = 0; sweep < maxIterations; ++sweep) {
      SmallVector<Operation *> ops;
      getOperation().walk<WalkOrder::PreOrder>([&](Operation *op) {
        if (op != getOperation().getOperation())
          ops.push_back(op);
      });
      // Ops erased during the sweep are skipped: track what is still alive.
      llvm::DenseSet<Operation *> erased;
      // Checks rewrites of control flow, then forwards to the rewrite
      // observer (translation validation), if any.
      mlir::cuvil::FlatteningListener flattening(observer);
      struct Listener : RewriterBase::ForwardingListener {
        llvm::DenseSet<Operation *> &erased;
        Listener(llvm::DenseSet<Operation *> &e, RewriterBase::Listener *n) : ForwardingListener(n), erased(e) {}
        void notifyOperationErased(Operation *op) override {
          ForwardingListener::notifyOperationErased(op);
          op->walk([&](Operation *inner) { erased.insert(inner); });
        }
      } listener(erased, &flattening);
      rewriter.setListener(&listener);
      bool changed = false;
      for (Operation *op : ops) {
        if (erased.contains(op) || op->hasTrait<OpTrait::ConstantLike>())
          continue;
        if (observer)
          observer->beginRewrite(op, ("fold " + op->getName().getStringRef()).str());
        flattening.watch(op, ("fold " + op->getName().getStringRef()).str());
        if (fold(op, rewriter)) {
          ++numFolded;
          changed = true;
          continue;
        }
        rewriter.setInsertionPoint(op);
        auto announce = [&](const Pattern &p) {
          if (observer)
            observer->beginRewrite(op, mlir::cuvil::patternName(p));
          flattening.rename(mlir::cuvil::patternName(p));
          return true;
        };
        if (succeeded(applicator.matchAndRewrite(op, rewriter, announce))) {
          ++numRewritten;
          changed = true;
        }
      }
      rewriter.setListener(nullptr);
      if (flattening.lostDependency())
        return signalPassFailure();
      if (!changed)
        return;
    }
  }
};

} // namespace
