//===- UnrollLoops.cpp - Unroll loops with a compile-time trip count -------===//
//
// The trip count is found by running the loop's control at compile time:
// the carried values that start as constants are evaluated trip by trip
// with the reference evaluator (the same semantics the tests check), and
// the condition with them. Carried values computed from anything else
// (tensor data) are simply not known; a condition that needs one leaves
// the loop alone.
//
//===----------------------------------------------------------------------===//
#include "dialects/Cuvil/Analysis/ControlDependencies.h"
#include "dialects/Cuvil/IR/CuvilOps.h"
#include "dialects/Cuvil/Reference/Evaluator.h"
#include "dialects/Cuvil/Transforms/Passes.h"
#include "dialects/Cuvil/Transforms/RewriteObserver.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_CUVILUNROLLLOOPSPASS
#include "dialects/Cuvil/Transforms/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;
using namespace mlir::cuvil;

namespace {

/// Values that the control evaluation may compute: small, so running the
/// control of a loop stays cheap.
constexpr int64_t kMaxEvaluatedElements = 4096;

/// Evaluates values of one loop trip from the carried values known so far.
/// Fails (nullopt) on anything not computable at compile time.
class TripEvaluator {
public:
  explicit TripEvaluator(Operation *loop) : loop(loop) {}

  void bind(Value v, const reference::Tensor &t) { env[v] = t; }

  std::optional<reference::Tensor> evaluate(Value v) {
    if (auto it = env.find(v); it != env.end())
      return it->second;
    if (failedValues.contains(v))
      return std::nullopt;
    std::optional<reference::Tensor> out = compute(v);
    if (!out)
      failedValues.insert(v);
    return out;
  }

private:
  std::optional<reference::Tensor> compute(Value v) {
    Attribute attr;
    if (matchPattern(v, m_Constant(&attr))) {
      auto elements = llvm::dyn_cast<ElementsAttr>(attr);
      if (!elements || elements.getNumElements() > kMaxEvaluatedElements)
        return std::nullopt;
      FailureOr<reference::Tensor> t = reference::tensorFromAttr(elements, v.getLoc());
      if (failed(t))
        return std::nullopt;
      return env[v] = *t;
    }
    Operation *op = v.getDefiningOp();
    // Block arguments not bound, and values of the loop's surroundings
    // that are not constants, are unknown.
    if (!op || !loop->isProperAncestor(op) || op->getNumRegions() || !isMemoryEffectFree(op))
      return std::nullopt;
    if (auto extract = llvm::dyn_cast<tensor::ExtractOp>(op)) {
      if (!extract.getIndices().empty())
        return std::nullopt;
      std::optional<reference::Tensor> t = evaluate(extract.getTensor());
      if (!t)
        return std::nullopt;
      return env[v] = *t; // the 0-d tensor stands for its element
    }
    for (Type t : op->getResultTypes()) {
      auto ranked = llvm::dyn_cast<RankedTensorType>(t);
      if (!ranked || !ranked.hasStaticShape() || ranked.getNumElements() > kMaxEvaluatedElements)
        return std::nullopt;
    }
    if (!reference::canEvaluate(op))
      return std::nullopt;
    SmallVector<reference::Tensor> operands;
    for (Value o : op->getOperands()) {
      std::optional<reference::Tensor> t = evaluate(o);
      if (!t)
        return std::nullopt;
      operands.push_back(std::move(*t));
    }
    // An evaluation error (an index out of range) is the run time's to
    // report: the loop just stays.
    ScopedDiagnosticHandler silence(op->getContext(), [](Diagnostic &) { return success(); });
    FailureOr<SmallVector<reference::Tensor>> results = reference::evaluateOp(op, operands);
    if (failed(results))
      return std::nullopt;
    for (auto [r, t] : llvm::zip(op->getResults(), *results))
      env[r] = t;
    return env[v];
  }

  Operation *loop;
  llvm::DenseMap<Value, reference::Tensor> env;
  llvm::DenseSet<Value> failedValues;
};

struct CuvilUnrollLoopsPass final : mlir::cuvil::impl::CuvilUnrollLoopsPassBase<CuvilUnrollLoopsPass> {
  using Base::Base;

  /// The trip count of `loop` if its control runs at compile time within
  /// the limit.
  std::optional<int64_t> tripCount(scf::WhileOp loop) {
    Block *before = loop.getBeforeBody();
    Block *after = loop.getAfterBody();
    scf::ConditionOp condition = loop.getConditionOp();
    if (before->getNumArguments() != loop.getInits().size() ||
        after->getNumArguments() != condition.getArgs().size())
      return std::nullopt;
    // The carried values known at the start of the next trip.
    SmallVector<std::optional<reference::Tensor>> carried;
    {
      TripEvaluator start(loop);
      for (Value init : loop.getInits())
        carried.push_back(start.evaluate(init));
    }
    for (int64_t trip = 0; trip <= maxTripCount; ++trip) {
      TripEvaluator eval(loop);
      for (auto [a, t] : llvm::zip(before->getArguments(), carried))
        if (t)
          eval.bind(a, *t);
      std::optional<reference::Tensor> go = eval.evaluate(condition.getCondition());
      if (!go || go->numElements() != 1)
        return std::nullopt;
      if (go->getInt(0) == 0)
        return trip;
      for (auto [a, forwarded] : llvm::zip(after->getArguments(), condition.getArgs()))
        if (std::optional<reference::Tensor> t = eval.evaluate(forwarded))
          eval.bind(a, *t);
      auto yields = loop.getYieldOp().getOperands();
      for (auto [i, y] : llvm::enumerate(yields))
        carried[i] = carried[i] ? eval.evaluate(y) : std::nullopt;
    }
    return std::nullopt;
  }

  /// Copies the body once per trip; the loop's results become what the
  /// condition forwards after the last. Checks the copies' dependencies.
  LogicalResult unroll(scf::WhileOp loop, int64_t trips) {
    std::optional<ControlDependencies> deps = ControlDependencies::of(loop);
    Block *before = loop.getBeforeBody();
    Block *after = loop.getAfterBody();
    // Through a rewriter the translation validator (if any) hears of.
    announceRewrite(loop, "unroll scf.while");
    IRRewriter b(loop->getContext(), RewriteObserver::current());
    b.setInsertionPoint(loop);
    SmallVector<Value> inits(loop.getInits().begin(), loop.getInits().end());
    SmallVector<SmallVector<Value>> iterations{inits};
    // The before region's ops that compute what the condition forwards
    // (the condition itself is known: not copied).
    llvm::DenseSet<Value> needed(loop.getConditionOp().getArgs().begin(),
                                 loop.getConditionOp().getArgs().end());
    llvm::DenseSet<Operation *> forwarding;
    for (Operation &op : llvm::reverse(before->without_terminator())) {
      if (llvm::none_of(op.getResults(), [&](Value r) { return needed.contains(r); }))
        continue;
      forwarding.insert(&op);
      needed.insert(op.getOperands().begin(), op.getOperands().end());
      op.walk([&](Operation *inner) { needed.insert(inner->getOperands().begin(), inner->getOperands().end()); });
    }
    // Clones them for the carried values `cur`: what the condition forwards.
    auto forward = [&](ArrayRef<Value> cur) {
      IRMapping m;
      for (auto [a, v] : llvm::zip(before->getArguments(), cur))
        m.map(a, v);
      for (Operation &op : before->without_terminator())
        if (forwarding.contains(&op))
          b.clone(op, m);
      SmallVector<Value> out;
      for (Value v : loop.getConditionOp().getArgs())
        out.push_back(m.lookupOrDefault(v));
      return out;
    };
    for (int64_t k = 0; k < trips; ++k) {
      ArrayRef<Value> cur = testDropCarried && k > 0 ? ArrayRef<Value>(inits) : iterations.back();
      SmallVector<Value> forwarded = forward(cur);
      IRMapping m;
      for (auto [a, v] : llvm::zip(after->getArguments(), forwarded))
        m.map(a, v);
      for (Operation &op : after->without_terminator())
        b.clone(op, m);
      SmallVector<Value> next;
      for (Value y : loop.getYieldOp().getOperands())
        next.push_back(m.lookupOrDefault(y));
      iterations.push_back(std::move(next));
    }
    SmallVector<Value> results = forward(iterations.back());
    std::string name = "unroll scf.while (" + std::to_string(trips) + " trips)";
    LogicalResult checked = deps ? deps->checkUnrolled(iterations, results, name) : failure();
    b.replaceOp(loop, results);
    ++numUnrolled;
    return checked;
  }

  void runOnOperation() override {
    bool lostDependency = false;
    // Outer loops first; copies of inner loops are visited on the next round.
    for (int round = 0; round < 4; ++round) {
      SmallVector<scf::WhileOp> loops;
      getOperation().walk<WalkOrder::PreOrder>([&](scf::WhileOp w) { loops.push_back(w); });
      llvm::DenseSet<Operation *> erased;
      bool changed = false;
      for (scf::WhileOp loop : loops) {
        if (erased.contains(loop))
          continue;
        if (!llvm::all_of(loop.getBeforeBody()->without_terminator(),
                          [](Operation &op) { return isPure(&op); }))
          continue;
        std::optional<int64_t> trips = tripCount(loop);
        if (!trips)
          continue;
        int64_t bodyOps = 0;
        loop.getAfter().walk([&](Operation *) { ++bodyOps; });
        loop.getBefore().walk([&](Operation *) { ++bodyOps; });
        if (*trips * bodyOps > maxUnrolledOps)
          continue;
        loop->walk([&](Operation *op) { erased.insert(op); });
        lostDependency |= failed(unroll(loop, *trips));
        changed = true;
      }
      if (!changed)
        break;
    }
    if (lostDependency)
      signalPassFailure();
  }
};

} // namespace
