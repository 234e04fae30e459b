//===- ExpandArith.cpp - arith ops LLVM lacks, float min/max kept ---------===//
//
// Upstream's arith-expand also expands maximumf/minimumf into compares and
// selects. The LLVM lowering has intrinsics for them, and LLVM's loop
// vectorizer reduces those intrinsics in vector lanes (exact: a maximum is
// the same in any order); it does not recognize the compare-and-select
// form, so reductions of maxima (a softmax's row maximum) stayed scalar.
//
//===----------------------------------------------------------------------===//
#include "targets/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_EXPANDARITHPASS
#include "targets/CPU/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {

struct ExpandArithPass : mlir::cuvil::impl::ExpandArithPassBase<ExpandArithPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    arith::populateCeilFloorDivExpandOpsPatterns(patterns);
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
