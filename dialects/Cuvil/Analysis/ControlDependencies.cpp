//===- ControlDependencies.cpp - Checking control-flow flattening ---------===//
#include "dialects/Cuvil/Analysis/ControlDependencies.h"

#include "dialects/Cuvil/IR/SourcePosition.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/RegionUtils.h"

#include "llvm/ADT/Twine.h"

namespace mlir::cuvil {

namespace {

bool isConstant(Value v) {
  Operation *d = v.getDefiningOp();
  return d && d->hasTrait<OpTrait::ConstantLike>();
}

/// Equal SSA values, or constants of equal value: selecting between them
/// does not depend on the condition.
bool sameValue(Value a, Value b) {
  if (a == b)
    return true;
  Attribute x, y;
  return matchPattern(a, m_Constant(&x)) && matchPattern(b, m_Constant(&y)) && x == y;
}

void merge(ValueSet &into, const ValueSet &from) {
  for (Value v : from)
    into.insert(v);
}

/// Dependencies of values inside `root` on values outside it. `args` gives
/// the sets of root's own block arguments; nested ops count every value they
/// read (their operands and what their regions read from outside them).
struct Deriver {
  Operation *root;
  llvm::DenseMap<Value, ValueSet> args;
  llvm::DenseMap<Value, ValueSet> memo;

  explicit Deriver(Operation *root) : root(root) {}

  bool inside(Value v) const {
    Operation *parent = v.getParentRegion()->getParentOp();
    return parent == root || root->isProperAncestor(parent);
  }

  ValueSet of(Value v) {
    if (auto it = memo.find(v); it != memo.end())
      return it->second;
    ValueSet s;
    if (isConstant(v)) {
      // no dependency
    } else if (!inside(v)) {
      s.insert(v);
    } else if (llvm::isa<BlockArgument>(v)) {
      if (auto it = args.find(v); it != args.end())
        s = it->second;
    } else {
      Operation *op = v.getDefiningOp();
      for (Value o : op->getOperands())
        merge(s, of(o));
      llvm::SetVector<Value> above;
      getUsedValuesDefinedAbove(op->getRegions(), above);
      for (Value o : above)
        merge(s, of(o));
    }
    memo[v] = s;
    return s;
  }

  /// Recomputes `args` from `update` until no set grows (sets only grow, so
  /// this ends).
  void fixedPoint(llvm::function_ref<void(Deriver &)> update) {
    for (int round = 0; round < 1000; ++round) {
      size_t before = 0;
      for (auto &[v, s] : args)
        before += s.size();
      memo.clear();
      update(*this);
      size_t after = 0;
      for (auto &[v, s] : args)
        after += s.size();
      if (after == before)
        return;
    }
  }
};

ValueSet minus(const ValueSet &want, const llvm::DenseSet<Value> &have) {
  ValueSet missing;
  for (Value v : want)
    if (!have.contains(v))
      missing.insert(v);
  return missing;
}

thread_local FlatteningLog *currentLog = nullptr;

} // namespace

llvm::DenseSet<Value> backwardClosure(ValueRange roots) {
  llvm::DenseSet<Value> seen;
  SmallVector<Value> work(roots.begin(), roots.end());
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (!v || !seen.insert(v).second)
      continue;
    Operation *op = v.getDefiningOp();
    if (!op)
      continue;
    for (Value o : op->getOperands())
      work.push_back(o);
    llvm::SetVector<Value> above;
    getUsedValuesDefinedAbove(op->getRegions(), above);
    work.append(above.begin(), above.end());
  }
  return seen;
}

std::string describeValue(Value v) {
  if (auto arg = llvm::dyn_cast<BlockArgument>(v)) {
    Operation *owner = arg.getOwner()->getParentOp();
    if (auto f = llvm::dyn_cast_or_null<func::FuncOp>(owner)) {
      std::string s = "the function's input #" + std::to_string(arg.getArgNumber());
      if (auto name = f.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "cuvil.name"))
        s += " ('" + name.getValue().str() + "')";
      return s;
    }
    std::string where = owner ? sourcePosition(owner->getLoc()) : "";
    return "argument #" + std::to_string(arg.getArgNumber()) + " of a region of " +
           (owner ? owner->getName().getStringRef().str() : std::string("?")) +
           (where.empty() ? "" : " at " + where);
  }
  auto result = llvm::cast<OpResult>(v);
  Operation *op = result.getOwner();
  std::string where = sourcePosition(op->getLoc());
  std::string s = op->getNumResults() > 1 ? "result #" + std::to_string(result.getResultNumber()) + " of "
                                          : "the result of ";
  return s + op->getName().getStringRef().str() + (where.empty() ? "" : " at " + where);
}

std::optional<ControlDependencies> ControlDependencies::of(Operation *op) {
  if (auto ifOp = llvm::dyn_cast<scf::IfOp>(op)) {
    ControlDependencies deps(op);
    Deriver d(op);
    Value cond = ifOp.getCondition();
    llvm::APInt constant;
    bool isStatic = matchPattern(cond, m_ConstantInt(&constant));
    for (unsigned i = 0; i < ifOp.getNumResults(); ++i) {
      Value thenValue = ifOp.thenYield().getOperand(i);
      Value elseValue = ifOp.elseYield().getOperand(i);
      ValueSet s;
      if (isStatic) {
        s = d.of(constant.isZero() ? elseValue : thenValue);
      } else {
        merge(s, d.of(thenValue));
        merge(s, d.of(elseValue));
        if (!sameValue(thenValue, elseValue))
          merge(s, d.of(cond));
      }
      deps.results.push_back(std::move(s));
    }
    return deps;
  }

  if (auto forOp = llvm::dyn_cast<scf::ForOp>(op)) {
    ControlDependencies deps(op);
    Deriver d(op);
    ValueSet bounds;
    for (Value b : {forOp.getLowerBound(), forOp.getUpperBound(), forOp.getStep()})
      merge(bounds, d.of(b));
    auto yields = forOp.getBody()->getTerminator()->getOperands();
    d.args[forOp.getInductionVar()] = bounds;
    for (BlockArgument a : forOp.getRegionIterArgs())
      d.args[a] = {};
    d.fixedPoint([&](Deriver &d) {
      for (auto [k, a] : llvm::enumerate(forOp.getRegionIterArgs())) {
        ValueSet s = d.of(forOp.getInitArgs()[k]);
        merge(s, d.of(yields[k]));
        d.args[a] = s;
      }
    });
    for (auto [k, a] : llvm::enumerate(forOp.getRegionIterArgs())) {
      ValueSet s = d.of(forOp.getInitArgs()[k]);
      if (yields[k] != a) { // a value the body changes depends on the trip count
        merge(s, d.of(yields[k]));
        merge(s, bounds);
      }
      deps.results.push_back(std::move(s));
    }
    return deps;
  }

  if (auto whileOp = llvm::dyn_cast<scf::WhileOp>(op)) {
    ControlDependencies deps(op);
    Block *before = whileOp.getBeforeBody();
    Block *after = whileOp.getAfterBody();
    scf::ConditionOp condition = whileOp.getConditionOp();
    auto forwarded = condition.getArgs();
    auto yields = whileOp.getYieldOp().getOperands();

    Deriver d(op);
    for (BlockArgument a : before->getArguments())
      d.args[a] = {};
    for (BlockArgument a : after->getArguments())
      d.args[a] = {};
    d.fixedPoint([&](Deriver &d) {
      for (auto [k, a] : llvm::enumerate(before->getArguments())) {
        ValueSet s = d.of(whileOp.getInits()[k]);
        merge(s, d.of(yields[k]));
        d.args[a] = s;
      }
      for (auto [k, a] : llvm::enumerate(after->getArguments()))
        d.args[a] = d.of(forwarded[k]);
    });
    ValueSet cond = d.of(condition.getCondition());
    for (unsigned k = 0; k < whileOp.getNumResults(); ++k) {
      ValueSet s = d.of(forwarded[k]);
      bool passedThrough = k < before->getNumArguments() && forwarded[k] == before->getArgument(k) &&
                           yields[k] == after->getArgument(k);
      if (!passedThrough)
        merge(s, cond);
      deps.results.push_back(std::move(s));
    }

    // One trip, in terms of the before block's arguments: condition, body.
    if (before->getNumArguments() == after->getNumArguments()) {
      Deriver trip(op);
      for (BlockArgument a : before->getArguments())
        trip.args[a].insert(a);
      for (auto [k, a] : llvm::enumerate(after->getArguments()))
        trip.args[a] = trip.of(forwarded[k]);
      for (Value y : yields)
        deps.perTrip.push_back(trip.of(y));
      for (Value f : forwarded)
        deps.atExit.push_back(trip.of(f));
      deps.inits.assign(whileOp.getInits().begin(), whileOp.getInits().end());
      deps.loopArgs.assign(before->getArguments().begin(), before->getArguments().end());
    }
    return deps;
  }
  return std::nullopt;
}

void ControlDependencies::noteReplaced(Operation *op, ValueRange replacements) {
  auto substitute = [&](Value v) -> Value {
    if (auto r = llvm::dyn_cast<OpResult>(v); r && r.getOwner() == op && r.getResultNumber() < replacements.size())
      return replacements[r.getResultNumber()];
    return v;
  };
  auto substituteSet = [&](ValueSet &set) {
    ValueSet out;
    for (Value v : set)
      if (Value w = substitute(v); w && !isConstant(w))
        out.insert(w);
    set = std::move(out);
  };
  for (ValueSet &s : results)
    substituteSet(s);
  for (ValueSet &s : perTrip)
    substituteSet(s);
  for (ValueSet &s : atExit)
    substituteSet(s);
  for (Value &v : inits)
    v = substitute(v);
}

LogicalResult ControlDependencies::checkReplacement(ValueRange replacements, StringRef rewrite) const {
  bool ok = true;
  for (auto [i, value] : llvm::enumerate(replacements)) {
    if (i >= results.size())
      break;
    if (!value) // an unused result a rewrite dropped
      continue;
    ValueSet missing = minus(results[i], backwardClosure(value));
    for (Value lost : missing) {
      ok = false;
      std::string what = "result #" + std::to_string(i) + " of " + name + " no longer depends on " +
                         describeValue(lost);
      emitError(loc) << "control-flow flattening '" << rewrite << "' lost a dependency: " << what;
      if (FlatteningLog *log = FlatteningLog::current())
        log->violations.push_back(rewrite.str() + ": " + what);
    }
  }
  if (FlatteningLog *log = FlatteningLog::current())
    log->record(rewrite, ok, name);
  return success(ok);
}

LogicalResult ControlDependencies::checkUnrolled(ArrayRef<SmallVector<Value>> iterations,
                                                 ValueRange exits, StringRef rewrite) const {
  bool ok = true;
  auto fail = [&](const std::string &what) {
    ok = false;
    emitError(loc) << "control-flow flattening '" << rewrite << "' lost a dependency: " << what;
    if (FlatteningLog *log = FlatteningLog::current())
      log->violations.push_back(rewrite.str() + ": " + what);
  };
  // `value` must reach each of `needs`, a loop argument standing for its
  // value in trip `k`.
  auto require = [&](Value value, const ValueSet &needs, size_t k, const std::string &what) {
    llvm::DenseSet<Value> reached = backwardClosure(value);
    for (Value need : needs) {
      Value want = need;
      std::string as = describeValue(need);
      if (auto it = llvm::find(loopArgs, need); it != loopArgs.end()) {
        size_t i = it - loopArgs.begin();
        want = iterations[k][i];
        as = "trip " + std::to_string(k) + "'s loop value #" + std::to_string(i);
      }
      if (want && !isConstant(want) && !reached.contains(want))
        fail(what + " of " + name + " no longer depends on " + as);
    }
  };
  if (perTrip.empty() || iterations.empty() || iterations[0].size() != loopArgs.size()) {
    fail("the unrolled trips do not match " + name + "'s loop values");
  } else {
    for (auto [j, init] : llvm::enumerate(inits))
      if (iterations[0][j] != init)
        fail("trip 0's value #" + std::to_string(j) + " is not the loop's initial value");
    for (size_t k = 0; k + 1 < iterations.size(); ++k)
      for (size_t j = 0; j < perTrip.size() && j < iterations[k + 1].size(); ++j)
        require(iterations[k + 1][j], perTrip[j], k,
                "after trip " + std::to_string(k + 1) + ", loop value #" + std::to_string(j));
    for (size_t j = 0; j < atExit.size() && j < exits.size(); ++j)
      require(exits[j], atExit[j], iterations.size() - 1, "result #" + std::to_string(j));
  }
  if (FlatteningLog *log = FlatteningLog::current())
    log->record(rewrite, ok, name);
  return success(ok);
}

FlatteningLog *FlatteningLog::current() { return currentLog; }

void FlatteningLog::record(StringRef rewrite, bool, StringRef what) {
  ++checked[(rewrite + " (" + what + ")").str()];
}

FlatteningLog::Scope::Scope(FlatteningLog *log) : previous(currentLog) { currentLog = log; }
FlatteningLog::Scope::~Scope() { currentLog = previous; }

} // namespace mlir::cuvil
