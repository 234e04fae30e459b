//===- HoistRowLoads.cpp - Loads invariant in the innermost dimension -----===//
//
//   scf.parallel (%n, %c, %h, %w) = ... {
//     %i = memref.load %rows[%h]        (the same for every %w)
//     %x = memref.load %in[%n, %c, %i, %w]
//     memref.store ..., %out[%n, %c, %h, %w]
//   }
//
// becomes
//
//   scf.parallel (%n, %c, %h) = ... {
//     %i = memref.load %rows[%h]
//     scf.for %w = ... { %x = memref.load %in[...]; memref.store ... }
//   }
//
// so the innermost loop streams along a row. The loads of %rows stayed in
// the innermost loop before: %out is a view of the same arena, so LLVM
// could not prove the stores leave them alone, found no bounds for the
// run-time checks that would let it vectorize, and ran the loop scalar.
// Only loads from buffers the body never stores to move, and only out of
// loops that run at least once (their indices are only known valid then).
//
//===----------------------------------------------------------------------===//
#include "targets/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_HOISTROWLOADSPASS
#include "targets/CPU/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {

/// Whether `v` depends on `iv` within `body` (through ops of the body).
bool dependsOn(Value v, Value iv, Block *body) {
  if (v == iv)
    return true;
  Operation *def = v.getDefiningOp();
  if (!def || def->getBlock() != body)
    return false;
  return llvm::any_of(def->getOperands(), [&](Value o) { return dependsOn(o, iv, body); });
}

/// The loads of `loop`'s body that can go before an inner loop over its
/// last dimension; empty when the loop does not qualify.
SmallVector<memref::LoadOp> rowLoads(scf::ParallelOp loop) {
  if (loop.getNumLoops() < 2 || loop.getNumReductions() != 0)
    return {};
  unsigned last = loop.getNumLoops() - 1;
  std::optional<int64_t> lb = getConstantIntValue(loop.getLowerBound()[last]);
  std::optional<int64_t> ub = getConstantIntValue(loop.getUpperBound()[last]);
  std::optional<int64_t> step = getConstantIntValue(loop.getStep()[last]);
  if (!lb || !ub || !step || *step <= 0 || *ub <= *lb)
    return {};
  Block *body = loop.getBody();
  Value iv = loop.getInductionVars()[last];
  llvm::SmallPtrSet<Value, 4> written;
  bool simple = true;
  loop.walk([&](Operation *op) {
    if (auto store = llvm::dyn_cast<memref::StoreOp>(op))
      written.insert(store.getMemRef());
    else if (op != loop && op->getNumRegions() > 0)
      simple = false; // nested loops or branches: left as they are
  });
  if (!simple)
    return {};
  SmallVector<memref::LoadOp> loads;
  for (auto load : body->getOps<memref::LoadOp>()) {
    if (written.contains(load.getMemRef()) || !loop.isDefinedOutsideOfLoop(load.getMemRef()))
      continue;
    if (llvm::any_of(load.getIndices(), [&](Value i) { return dependsOn(i, iv, body); }))
      continue;
    loads.push_back(load);
  }
  return loads;
}

void hoist(scf::ParallelOp loop, ArrayRef<memref::LoadOp> loads) {
  unsigned last = loop.getNumLoops() - 1;
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  auto outer = b.create<scf::ParallelOp>(loc, loop.getLowerBound().drop_back(), loop.getUpperBound().drop_back(),
                                         loop.getStep().drop_back());
  Block *body = loop.getBody();
  for (unsigned d = 0; d < last; ++d)
    body->getArgument(d).replaceAllUsesWith(outer.getInductionVars()[d]);
  b.setInsertionPointToStart(outer.getBody());
  auto inner = b.create<scf::ForOp>(loc, loop.getLowerBound()[last], loop.getUpperBound()[last],
                                    loop.getStep()[last]);
  body->getArgument(last).replaceAllUsesWith(inner.getInductionVar());
  // The body (its yield aside) into the inner loop, before its yield.
  Block *innerBody = inner.getBody();
  innerBody->getOperations().splice(innerBody->begin(), body->getOperations(), body->begin(),
                                    std::prev(body->end()));
  // Each hoisted load, and what its indices are computed from, before the
  // inner loop (all of it independent of the inner induction variable).
  llvm::SmallPtrSet<Operation *, 8> hoistable;
  for (memref::LoadOp load : loads)
    hoistable.insert(load);
  for (memref::LoadOp load : loads) {
    SmallVector<Operation *> chain;
    bool pure = true;
    std::function<void(Value)> collect = [&](Value v) {
      Operation *def = v.getDefiningOp();
      if (!def || def->getBlock() != innerBody || llvm::is_contained(chain, def))
        return;
      // Only arithmetic and loads that may move themselves.
      pure &= isMemoryEffectFree(def) || hoistable.contains(def);
      for (Value o : def->getOperands())
        collect(o);
      chain.push_back(def);
    };
    for (Value i : load.getIndices())
      collect(i);
    if (!pure)
      continue;
    chain.push_back(load);
    for (Operation *op : chain)
      op->moveBefore(inner);
  }
  loop.erase();
}

struct HoistRowLoadsPass : mlir::cuvil::impl::HoistRowLoadsPassBase<HoistRowLoadsPass> {
  void runOnOperation() override {
    SmallVector<scf::ParallelOp> loops;
    getOperation()->walk([&](scf::ParallelOp loop) { loops.push_back(loop); });
    for (scf::ParallelOp loop : loops)
      if (SmallVector<memref::LoadOp> loads = rowLoads(loop); !loads.empty())
        hoist(loop, loads);
  }
};

} // namespace
