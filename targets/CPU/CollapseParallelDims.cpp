//===- CollapseParallelDims.cpp - One loop for contiguous parallel dims ---===//
//
// The general lowering's element-wise ops keep the tensor's rank as their
// loop nest: on a [8, 960, 6, 8] tensor the innermost loop runs 8 times,
// and LLVM's loop vectorizer, which works on innermost loops, finds 8
// elements not worth the run-time checks that the input and output (views
// of one arena) do not overlap: the loop stays scalar. Where consecutive
// parallel dimensions are read contiguously by every operand, they are one
// dimension: upstream's collapsing of linalg iteration spaces does the
// rest (reshapes of the operands, which bufferization makes views).
//
//===----------------------------------------------------------------------===//
#include "targets/CPU/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_COLLAPSEPARALLELDIMSPASS
#include "targets/CPU/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {

/// The runs of two or more consecutive parallel dimensions of `op` that
/// every indexing map keeps together and in order.
SmallVector<ReassociationIndices> collapsibleDims(linalg::LinalgOp op) {
  auto generic = llvm::dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!generic || !generic.hasPureTensorSemantics())
    return {};
  auto staticShaped = [](Type t) {
    auto s = llvm::dyn_cast<ShapedType>(t);
    return !s || s.hasStaticShape();
  };
  if (!llvm::all_of(generic->getOperandTypes(), staticShaped) ||
      !llvm::all_of(generic->getResultTypes(), staticShaped))
    return {};
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  // Maps of dimensions only (a kept reduced dimension reads index 0: a
  // constant, which upstream's collapsing does not rewrite).
  if (!llvm::all_of(maps, [](AffineMap m) { return m.isProjectedPermutation(); }))
    return {};
  SmallVector<utils::IteratorType> iterators = generic.getIteratorTypesArray();
  SmallVector<ReassociationIndices> groups;
  ReassociationIndices current;
  auto flush = [&] {
    if (current.size() > 1)
      groups.push_back(current);
    current.clear();
  };
  for (int64_t d = 0, n = static_cast<int64_t>(iterators.size()); d < n; ++d) {
    if (iterators[d] != utils::IteratorType::parallel) {
      flush();
      continue;
    }
    if (!current.empty()) {
      ReassociationIndices grown = current;
      grown.push_back(d);
      if (linalg::areDimSequencesPreserved(maps, {grown})) {
        current = grown;
        continue;
      }
      flush();
    }
    current.push_back(d);
  }
  flush();
  return groups;
}

struct CollapseParallelDimsPass
    : mlir::cuvil::impl::CollapseParallelDimsPassBase<CollapseParallelDimsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    linalg::populateCollapseDimensions(patterns, collapsibleDims);
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
