//===- PromoteAccumulators.cpp - Reduction accumulators into registers ----===//
//
// linalg's loops keep a reduction's running value in its output buffer:
//
//   scf.for %j ... {
//     %acc = memref.load %out[%i]          (%i defined outside the loop)
//     %x = memref.load %in[%i, %j]
//     %r = arith.maximumf %acc, %x
//     memref.store %r, %out[%i]
//   }
//
// LLVM cannot keep that value in a register: every buffer is a view of one
// arena and the indices differ, so it cannot prove that the stores never
// reach the other loads. Each step then waits on a store and a load, and
// the loop is never vectorized. Where the body only loads, computes (loops
// of the same kind included) and makes such stores, each at indices
// defined outside the loop and read once before it by a load of the same
// buffer and indices, the running value becomes an iter_arg of the loop:
// loaded once before it, stored once after. Bufferized linalg ops never
// read their output buffer through another view, so no other load could
// have seen the stores this leaves out.
//
//===----------------------------------------------------------------------===//
#include "targets/CPU/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_PROMOTEACCUMULATORSPASS
#include "targets/CPU/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {

struct Accumulator {
  memref::LoadOp load;
  memref::StoreOp store;
};

/// Whether `op` (nested ops included) only reads memory or computes: loads
/// and memory-effect-free ops, in loops of the same kind.
bool readsOrComputes(Operation *op) {
  if (llvm::isa<memref::LoadOp>(op) || isMemoryEffectFree(op))
    return true;
  if (auto loop = llvm::dyn_cast<scf::ForOp>(op))
    return llvm::all_of(loop.getBody()->without_terminator(),
                        [](Operation &inner) { return readsOrComputes(&inner); });
  return false;
}

bool sameAccess(memref::LoadOp load, memref::StoreOp store) {
  return load.getMemRef() == store.getMemRef() && llvm::equal(load.getIndices(), store.getIndices());
}

/// The loop's accumulators, or nothing when the loop does not have the
/// form above (one store per buffer, its load before it, nothing else
/// touching that buffer, nothing else written).
std::optional<SmallVector<Accumulator>> accumulatorsOf(scf::ForOp loop) {
  if (loop.getNumRegionIterArgs() != 0)
    return std::nullopt;
  SmallVector<memref::StoreOp> stores;
  for (Operation &op : loop.getBody()->without_terminator()) {
    if (auto store = llvm::dyn_cast<memref::StoreOp>(&op)) {
      stores.push_back(store);
      continue;
    }
    if (!readsOrComputes(&op))
      return std::nullopt;
  }
  if (stores.empty())
    return std::nullopt;
  SmallVector<Accumulator> result;
  for (memref::StoreOp store : stores) {
    Value buffer = store.getMemRef();
    if (!loop.isDefinedOutsideOfLoop(buffer) ||
        !llvm::all_of(store.getIndices(),
                      [&](Value i) { return loop.isDefinedOutsideOfLoop(i); }))
      return std::nullopt;
    // Every use of the buffer inside the loop: this store and one load of
    // the same element before it, directly in the body.
    memref::LoadOp load;
    for (OpOperand &use : buffer.getUses()) {
      Operation *user = use.getOwner();
      if (user == store.getOperation() || !loop->isProperAncestor(user))
        continue;
      auto l = llvm::dyn_cast<memref::LoadOp>(user);
      if (!l || load || l->getBlock() != loop.getBody() || !sameAccess(l, store) ||
          !l->isBeforeInBlock(store))
        return std::nullopt;
      load = l;
    }
    if (!load)
      return std::nullopt;
    result.push_back({load, store});
  }
  return result;
}

void promote(scf::ForOp loop, MutableArrayRef<Accumulator> accumulators) {
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  SmallVector<std::pair<Value, SmallVector<Value>>> elements; // buffer, indices
  SmallVector<Value> inits;
  for (Accumulator &a : accumulators) {
    elements.push_back({a.store.getMemRef(), SmallVector<Value>(a.store.getIndices())});
    inits.push_back(b.create<memref::LoadOp>(loc, elements.back().first, elements.back().second));
  }
  auto promoted = b.create<scf::ForOp>(loc, loop.getLowerBound(), loop.getUpperBound(),
                                       loop.getStep(), inits);
  Block *body = loop.getBody(), *newBody = promoted.getBody();
  body->getArgument(0).replaceAllUsesWith(promoted.getInductionVar());
  SmallVector<Value> yields;
  for (auto [a, arg] : llvm::zip(accumulators, promoted.getRegionIterArgs())) {
    a.load.getResult().replaceAllUsesWith(arg);
    yields.push_back(a.store.getValueToStore());
    a.load.erase();
    a.store.erase();
  }
  body->getTerminator()->erase();
  newBody->getOperations().splice(newBody->end(), body->getOperations());
  b.setInsertionPointToEnd(newBody);
  b.create<scf::YieldOp>(loc, yields);
  b.setInsertionPointAfter(promoted);
  for (auto [element, result] : llvm::zip(elements, promoted.getResults()))
    b.create<memref::StoreOp>(loc, result, element.first, element.second);
  loop.erase();
}

struct PromoteAccumulatorsPass
    : cuvil::impl::PromoteAccumulatorsPassBase<PromoteAccumulatorsPass> {
  void runOnOperation() override {
    // Innermost loops first: a promoted inner loop leaves its outer loop
    // of the same form (load before, store after).
    SmallVector<scf::ForOp> loops;
    getOperation()->walk([&](scf::ForOp loop) { loops.push_back(loop); });
    for (scf::ForOp loop : loops)
      if (std::optional<SmallVector<Accumulator>> accumulators = accumulatorsOf(loop))
        promote(loop, *accumulators);
  }
};

} // namespace
