//===- Canonicalize.cpp - MLIR's canonicalizer with the flattening check ---===//
//
// The code generators run MLIR's canonicalization after lowering, where
// the scf patterns still see the model's branches and loops (an if whose
// arms only choose between values becomes a select): the same greedy
// driver, with the flattening check listening (FlatteningListener.h).
//
//===----------------------------------------------------------------------===//
#include "dialects/Cuvil/Transforms/FlatteningListener.h"
#include "dialects/Cuvil/Transforms/Passes.h"

#include "mlir/Rewrite/FrozenRewritePatternSet.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_CUVILCANONICALIZEPASS
#include "dialects/Cuvil/Transforms/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {

struct CuvilCanonicalizePass final
    : mlir::cuvil::impl::CuvilCanonicalizePassBase<CuvilCanonicalizePass> {
  using Base::Base;

  FrozenRewritePatternSet patterns;

  LogicalResult initialize(MLIRContext *context) override {
    RewritePatternSet set = mlir::cuvil::canonicalizationPatterns(context);
    if (testWrongIfConversion)
      mlir::cuvil::populateWrongIfConversionForTests(set);
    patterns = FrozenRewritePatternSet(std::move(set));
    return success();
  }

  void runOnOperation() override {
    mlir::cuvil::FlatteningListener flattening;
    GreedyRewriteConfig config;
    config.useTopDownTraversal = true;
    config.enableRegionSimplification = GreedySimplifyRegionLevel::Normal;
    config.listener = &flattening;
    // Not converging is no error here (as for MLIR's canonicalize).
    (void)applyPatternsAndFoldGreedily(getOperation(), patterns, config);
    if (flattening.lostDependency())
      signalPassFailure();
  }
};

} // namespace

RewritePatternSet mlir::cuvil::canonicalizationPatterns(MLIRContext *context) {
  RewritePatternSet set(context);
  for (Dialect *dialect : context->getLoadedDialects())
    dialect->getCanonicalizationPatterns(set);
  for (RegisteredOperationName op : context->getRegisteredOperations())
    op.getCanonicalizationPatterns(set, context);
  return set;
}
