//===- RewriteValidator.cpp -----------------------------------------------===//
#include "verify/RewriteValidator.h"

#include "dialects/Cuvil/IR/CuvilOps.h"
#include "dialects/Cuvil/Transforms/BatchNormFolding.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/Format.h"

#include <chrono>
#include <set>

using namespace mlir;

namespace cuvil::verify {

const char *verdictName(Verdict v) {
  switch (v) {
  case Verdict::Proved: return "proved";
  case Verdict::Refuted: return "refuted";
  case Verdict::Unknown: return "unknown";
  }
  return "";
}

Claim claimOf(StringRef name) {
  if (name == "recognize softmax" || name == "recognize layer norm")
    return Claim::Algebraic;
  if (name == "fold batch norm into weights" || name == "batch norm to scale and shift")
    return Claim::Numeric;
  return Claim::Exact;
}

RewriteValidator::RewriteValidator(Options options)
    : options_(options), solver_(ctx_),
      bitBlaster_((z3::tactic(ctx_, "simplify") & z3::tactic(ctx_, "propagate-values") &
                   z3::tactic(ctx_, "fpa2bv") & z3::tactic(ctx_, "simplify") &
                   z3::tactic(ctx_, "bit-blast") & z3::tactic(ctx_, "sat"))
                      .mk_solver()) {
  z3::params p(ctx_);
  p.set("timeout", options_.timeoutMs);
  solver_.set(p);
  bitBlaster_.set(p);
}

void RewriteValidator::beginRewrite(Operation *, StringRef name) {
  current_ = name.str();
  inserted_.clear();
}

void RewriteValidator::notifyOperationInserted(Operation *op, OpBuilder::InsertPoint) {
  inserted_.insert(op);
}

void RewriteValidator::notifyOperationReplaced(Operation *op, ValueRange replacement) {
  std::string name = current_.empty() ? "unnamed rewrite of " + op->getName().getStringRef().str()
                                      : current_;
  Outcome o = validate(op, replacement, claimOf(name));
  RewriteTally &t = tallies_[name];
  t.arithmetic = o.arithmetic;
  switch (o.verdict) {
  case Verdict::Proved:
    ++t.proved;
    break;
  case Verdict::Refuted:
    ++t.refuted;
    if (t.firstRefutation.empty())
      t.firstRefutation = o.detail;
    op->emitError() << "rewrite '" << name << "' is wrong (refuted in "
                    << arithmeticName(o.arithmetic) << "): " << o.detail;
    break;
  case Verdict::Unknown:
    ++t.unknown;
    if (t.firstUnknown.empty()) {
      std::string where;
      llvm::raw_string_ostream os(where);
      os << op->getLoc();
      t.firstUnknown = o.detail + " (first at " + os.str() + ")";
    }
    break;
  }
  // Later replacements in the same rewrite (a pattern replacing two ops)
  // see the ops inserted so far too.
}

int64_t RewriteValidator::count(Verdict v) const {
  int64_t n = 0;
  for (const auto &[name, t] : tallies_)
    n += t.verdict() == v;
  return n;
}

Outcome RewriteValidator::validate(Operation *op, ValueRange replacement, Claim claim) {
  Arithmetic arithmetic = claim == Claim::Exact ? Arithmetic::IEEE : Arithmetic::Real;
  // z3++ reports its errors (a sort mismatch in an encoding) as exceptions.
  try {
    return check(op, replacement, arithmetic);
  } catch (const z3::exception &e) {
    return {Verdict::Unknown, arithmetic, std::string("solver error: ") + e.msg()};
  }
}

namespace {

/// The constant op defining `v`, or null.
mlir::cuvil::ConstantOp constantOf(Value v) { return v.getDefiningOp<mlir::cuvil::ConstantOp>(); }

} // namespace

/// A batch norm folded into numbers: the numbers stand for terms of the
/// batch norm's own constants, computed by the pass's formulas
/// (BatchNormFolding.h) in solver arithmetic, and bound in the encoder in
/// their place. What is proved is the algebra, the channel each weight
/// element belongs to and the rewiring; the rounding of the numbers is not a
/// claim.
static std::string bindFoldedBatchNorm(Encoder &enc, Operation *op, ValueRange replacement,
                                       const llvm::SetVector<Operation *> &inserted) {
  auto bn = llvm::dyn_cast<mlir::cuvil::BatchNormOp>(op);
  if (!bn || replacement.size() != 1)
    return "not a batch norm";
  auto f32 = llvm::cast<RankedTensorType>(bn.getType()).getElementType();
  std::optional<z3::sort> sort = enc.sortOf(f32);
  const SymTensor *mean = enc.encode(bn.getMean()), *var = enc.encode(bn.getVar());
  const SymTensor *weight = bn.getWeight() ? enc.encode(bn.getWeight()) : nullptr;
  const SymTensor *bias = bn.getBias() ? enc.encode(bn.getBias()) : nullptr;
  if (!sort || !mean || !var || (bn.getWeight() && !weight) || (bn.getBias() && !bias))
    return "the batch norm's statistics are not encoded: " + enc.reason();
  z3::expr eps = enc.numeral(bn.getEps().convertToDouble(), *sort);
  z3::sort s = *sort;
  // Scale and shift of channel c (an index term).
  auto scaleShift = [=, &enc](const z3::expr &c) {
    return mlir::cuvil::batchNormScaleShift<z3::expr>(
        mean->at({c}), var->at({c}), weight ? weight->at({c}) : enc.numeral(1, s),
        bias ? bias->at({c}) : enc.numeral(0, s), eps,
        [&enc](const z3::expr &x) { return enc.squareRoot(x); },
        [&enc](const z3::expr &a, const z3::expr &b) { return enc.divide(a, b); });
  };
  Operation *made = replacement[0].getDefiningOp();
  if (!made || !inserted.contains(made))
    return "the replacement is not a new op";
  if (auto add = llvm::dyn_cast<mlir::cuvil::AddOp>(made)) { // x * scale + shift
    auto mul = add.getLhs().getDefiningOp<mlir::cuvil::MulOp>();
    if (!mul || !constantOf(mul.getRhs()) || !constantOf(add.getRhs()))
      return "not the scale-and-shift form";
    enc.bind(mul.getRhs(), enc.makeTensor(mul.getRhs().getType(), "bn scale", [=](ArrayRef<z3::expr> i) {
      return scaleShift(i[0]).scale;
    }));
    enc.bind(add.getRhs(), enc.makeTensor(add.getRhs().getType(), "bn shift", [=](ArrayRef<z3::expr> i) {
      return scaleShift(i[0]).shift;
    }));
    return "";
  }
  // A layer rebuilt with folded weight and bias: element k of the weight
  // belongs to the channel foldedChannel says, as in the pass.
  if (made->getNumOperands() != 3 || !constantOf(made->getOperand(1)) ||
      !constantOf(made->getOperand(2)))
    return "not a layer with a folded weight and bias";
  Operation *producer = bn.getInput().getDefiningOp();
  if (!producer || producer->getName() != made->getName())
    return "the folded layer is not the batch norm's producer rebuilt";
  const SymTensor *w = enc.encode(producer->getOperand(1));
  const SymTensor *b = producer->getNumOperands() > 2 ? enc.encode(producer->getOperand(2)) : nullptr;
  if (!w || (producer->getNumOperands() > 2 && !b))
    return "the layer's weight is not encoded: " + enc.reason();
  SmallVector<int64_t> wshape = w->shape;
  int64_t numel = w->numElements();
  if (numel > Encoder::kMaxConstant)
    return "a weight of " + std::to_string(numel) + " elements is not enumerated";
  std::vector<int64_t> channel(numel);
  for (int64_t k = 0; k < numel; ++k)
    channel[k] = mlir::cuvil::foldedChannel(producer, wshape, k);
  z3::context &c = enc.context();
  enc.bind(made->getOperand(1), enc.makeTensor(made->getOperand(1).getType(), "bn folded weight",
      [=, &c](ArrayRef<z3::expr> idx) {
        z3::expr lin = c.int_val(0);
        SmallVector<int64_t> strides(wshape.size(), 1);
        for (int64_t d = static_cast<int64_t>(wshape.size()) - 2; d >= 0; --d)
          strides[d] = strides[d + 1] * wshape[d + 1];
        for (size_t d = 0; d < idx.size(); ++d)
          lin = lin + idx[d] * c.int_val(strides[d]);
        lin = lin.simplify();
        // Element k: w[k] scaled by its channel's scale.
        std::optional<z3::expr> r;
        for (int64_t k = numel - 1; k >= 0; --k) {
          std::vector<z3::expr> at;
          for (size_t d = 0; d < wshape.size(); ++d)
            at.push_back(c.int_val((k / strides[d]) % wshape[d]));
          z3::expr v = mlir::cuvil::foldedWeight<z3::expr>(w->at(at),
                                                          scaleShift(c.int_val(channel[k])));
          r = r ? z3::ite(lin == c.int_val(k), v, *r) : v;
        }
        return *r;
      }));
  enc.bind(made->getOperand(2), enc.makeTensor(made->getOperand(2).getType(), "bn folded bias",
      [=, &enc](ArrayRef<z3::expr> idx) {
        return mlir::cuvil::foldedBias<z3::expr>(b ? b->at({idx[0]}) : enc.numeral(0, s),
                                                 scaleShift(idx[0]));
      }));
  return "";
}

namespace {

/// The model's values of a free tensor, as "[i, j] = v" entries.
std::string describeFree(const z3::model &m, const FreeTensor &f, size_t maxEntries) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << f.name;
  if (f.tensor->shape.empty()) {
    z3::expr v = m.eval(f.tensor->at({}), true);
    os << " = " << formatValue(v);
    return os.str();
  }
  // Read at one index only (flattenSingleReads): its value there.
  for (unsigned i = 0; i < m.num_consts(); ++i)
    if (m.get_const_decl(i).name().str() == f.name + "@read") {
      os << " = " << formatValue(m.get_const_interp(m.get_const_decl(i))) << " there";
      return os.str();
    }
  // The function interpretation Z3 chose: a few entries and the rest.
  z3::func_decl decl(m.ctx());
  bool found = false;
  for (unsigned i = 0; i < m.num_funcs(); ++i) {
    if (m.get_func_decl(i).name().str() == f.name) {
      decl = m.get_func_decl(i);
      found = true;
      break;
    }
  }
  if (!found) {
    os << ": any values";
    return os.str();
  }
  z3::func_interp interp = m.get_func_interp(decl);
  os << ":";
  for (unsigned e = 0; e < interp.num_entries() && e < maxEntries; ++e) {
    z3::func_entry entry = interp.entry(e);
    os << " [";
    for (unsigned a = 0; a < entry.num_args(); ++a)
      os << (a ? ", " : "") << entry.arg(a).to_string();
    os << "] = " << formatValue(entry.value()) << ",";
  }
  os << " elsewhere " << formatValue(interp.else_value());
  return os.str();
}

/// Free tensors read at one index only (every element-wise rewrite) are
/// just unknown numbers: replacing each application by a constant leaves a
/// pure floating-point problem, which Z3 bit-blasts far faster than one that
/// mixes integer indices, functions and floats.
/// Returns the substitution (reads -> constants), empty when some free
/// tensor is read at two indices.
std::pair<z3::expr_vector, z3::expr_vector>
singleReads(const z3::expr &goal, const std::vector<FreeTensor> &free) {
  z3::expr_vector from(goal.ctx()), to(goal.ctx());
  std::set<std::string> names;
  for (const FreeTensor &f : free)
    if (!f.tensor->shape.empty())
      names.insert(f.name);
  if (names.empty())
    return {from, to};
  std::map<std::string, std::vector<z3::expr>> reads;
  std::set<unsigned> seen;
  std::vector<z3::expr> stack{goal};
  while (!stack.empty()) {
    z3::expr e = stack.back();
    stack.pop_back();
    if (!seen.insert(Z3_get_ast_id(e.ctx(), e)).second || !e.is_app())
      continue;
    std::string name = e.decl().name().str();
    if (names.count(name)) {
      std::vector<z3::expr> &r = reads[name];
      bool known = llvm::any_of(r, [&](const z3::expr &x) { return z3::eq(x, e); });
      if (!known)
        r.push_back(e);
      if (r.size() > 1)
        return {from, to}; // read at two indices: keep the function
    }
    for (unsigned i = 0; i < e.num_args(); ++i)
      stack.push_back(e.arg(i));
  }
  for (auto &[name, r] : reads) {
    from.push_back(r[0]);
    to.push_back(goal.ctx().constant((name + "@read").c_str(), r[0].get_sort()));
  }
  return {from, to};
}

/// Whether `goal` or the axioms mention integers (indices) or functions.
bool hasIntegerOrFunction(const z3::expr &goal, const std::vector<z3::expr> &axioms) {
  std::vector<z3::expr> stack(axioms.begin(), axioms.end());
  stack.push_back(goal);
  std::set<unsigned> seen;
  while (!stack.empty()) {
    z3::expr e = stack.back();
    stack.pop_back();
    if (!seen.insert(Z3_get_ast_id(e.ctx(), e)).second)
      continue;
    if (e.is_int() || e.is_real())
      return true;
    if (!e.is_app())
      return true;
    if (e.decl().decl_kind() == Z3_OP_UNINTERPRETED && e.num_args() > 0)
      return true;
    for (unsigned i = 0; i < e.num_args(); ++i)
      stack.push_back(e.arg(i));
  }
  return false;
}

} // namespace

Outcome RewriteValidator::check(Operation *op, ValueRange replacement, Arithmetic arithmetic) {
  Outcome out;
  out.arithmetic = arithmetic;
  // Control flow has no encoding (a loop's or a branch's results are not
  // terms of its operands): its rewrites are unknown here, never refuted,
  // and the flattening check (ControlDependencies.h) covers them.
  // (A loop the constants bound is unrolled into the encoding.)
  if (op->getNumRegions() > 0 && !llvm::isa<mlir::cuvil::FusedGroupOp, mlir::scf::WhileOp>(op))
    return {Verdict::Unknown, arithmetic,
            "not encoded: control flow ('" + op->getName().getStringRef().str() +
                "'); the flattening check covers its dependencies"};
  // Ops to look through. The new ones, entirely. The values they read
  // that existed before (and old values used as replacements) are where
  // the two sides meet: every old op on a path from the replaced op back to
  // them is encoded too, or one side would stop at a free tensor the other
  // computes through (a fusion group clones a whole chain). Around that,
  // `depth` ops more on both sides, so relu(relu(x)) -> relu(x) sees the
  // inner relu.
  llvm::DenseSet<Operation *> expand(inserted_.begin(), inserted_.end());
  llvm::DenseSet<Value> meet;
  for (Operation *n : inserted_)
    n->walk([&](Operation *inner) {
      for (Value o : inner->getOperands()) {
        Operation *d = o.getDefiningOp();
        bool local = d ? (n->isAncestor(d) || inserted_.contains(d))
                       : n->isAncestor(llvm::cast<BlockArgument>(o).getOwner()->getParentOp());
        if (!local)
          meet.insert(o);
      }
    });
  for (Value v : replacement)
    if (v && (!v.getDefiningOp() || !inserted_.contains(v.getDefiningOp())))
      meet.insert(v);
  // Old ops from which a meeting value is reachable (bounded search).
  llvm::DenseMap<Operation *, bool> reaches;
  unsigned budget = 4096;
  std::function<bool(Operation *)> onPath = [&](Operation *o) -> bool {
    auto it = reaches.find(o);
    if (it != reaches.end())
      return it->second;
    reaches[o] = false;
    if (budget == 0 || o->getBlock() != op->getBlock())
      return false;
    --budget;
    bool r = false;
    for (Value v : o->getOperands()) {
      if (meet.contains(v))
        r = true;
      else if (Operation *d = v.getDefiningOp())
        r = onPath(d) || r;
    }
    reaches[o] = r;
    return r;
  };
  if (onPath(op))
    for (auto &[o, r] : reaches)
      if (r)
        expand.insert(o);
  llvm::SmallVector<Operation *> frontier{op};
  for (Value v : meet)
    if (Operation *d = v.getDefiningOp())
      frontier.push_back(d);
  for (unsigned level = 0; level <= options_.depth && !frontier.empty(); ++level) {
    llvm::SmallVector<Operation *> next;
    for (Operation *o : frontier) {
      expand.insert(o);
      for (Value v : o->getOperands())
        if (Operation *d = v.getDefiningOp(); d && !expand.contains(d))
          next.push_back(d);
    }
    frontier = std::move(next);
  }

  Encoder enc(ctx_, arithmetic);
  enc.setExpandable([&](Operation *o) { return expand.contains(o); });
  if (claimOf(current_) == Claim::Numeric) {
    std::string why = bindFoldedBatchNorm(enc, op, replacement, inserted_);
    if (!why.empty())
      return {Verdict::Unknown, arithmetic, "a batch norm folded into numbers: " + why};
  }
  for (auto [before, after] : llvm::zip(op->getResults(), replacement)) {
    if (!after) // an unused result the rewrite dropped
      continue;
    if (before.getType() != after.getType()) {
      std::string text;
      llvm::raw_string_ostream os(text);
      os << "the replacement has type " << after.getType() << " where the op had "
         << before.getType();
      return {Verdict::Refuted, arithmetic, os.str()};
    }
    const SymTensor *b = enc.encode(before);
    if (const std::string *why = enc.whyLoopFree(op))
      return {Verdict::Unknown, arithmetic,
              "not encoded: " + *why + "; the flattening check covers its dependencies"};
    const SymTensor *a = b ? enc.encode(after) : nullptr;
    if (!a)
      return {Verdict::Unknown, arithmetic, "not encoded: " + enc.reason()};
    std::vector<z3::expr> idx;
    z3::expr_vector bounds(ctx_);
    for (size_t d = 0; d < b->shape.size(); ++d) {
      if (b->shape[d] == 1) { // one index: a number, so reads agree syntactically
        idx.push_back(ctx_.int_val(0));
        continue;
      }
      z3::expr i = ctx_.int_const(("i" + std::to_string(d)).c_str());
      bounds.push_back(i >= 0 && i < ctx_.int_val(b->shape[d]));
      idx.push_back(i);
    }
    z3::expr eb = b->at(idx), ea = a->at(idx);
    auto [from, to] = singleReads(!enc.same(eb, ea), enc.freeTensors());
    if (!from.empty()) {
      eb = eb.substitute(from, to);
      ea = ea.substitute(from, to);
    }
    // A goal of floating-point (and Boolean, bit-vector) terms only, as
    // element-wise rewrites leave once their reads are constants, goes to
    // Z3's bit-blasting pipeline directly (f64 x * 1 in 0.3 s against 4 s
    // in the SMT core); the rest to the incremental SMT solver, one scope
    // per check.
    // Real arithmetic: when both sides are the same polynomial (over reads,
    // reciprocals and function terms as atoms), Z3's sum-of-monomials
    // normal form of their difference is 0 and no search is needed; the
    // nonlinear search is slow and does not always stop at its time limit.
    if (arithmetic == Arithmetic::Real && eb.is_real()) {
      z3::params som(ctx_);
      som.set("som", true);
      som.set("arith_lhs", true);
      z3::expr diff = (eb - ea).simplify(som);
      if (diff.is_numeral() && diff.get_decimal_string(0) == "0")
        continue;
    }
    z3::expr goal = (!enc.same(eb, ea)).simplify();
    bool pureBits = !hasIntegerOrFunction(goal, enc.axioms());
    // Index arithmetic of view chains (div/mod of linear offsets) can defeat
    // the symbolic check; a small tensor is then proved index by index,
    // where every offset is a number (a proof over the whole finite domain).
    int64_t count = b->numElements();
    bool canEnumerate = !pureBits && !idx.empty() && count <= kMaxEnumerated;
    // `axioms`: the encoding's facts, over the same index terms as `g`.
    auto solve = [&](const z3::expr &g, const std::vector<z3::expr> &axioms, bool bits,
                     unsigned ms) {
      z3::solver solver = bits ? bitBlaster_ : solver_;
      z3::params p(ctx_);
      p.set("timeout", ms);
      solver.set(p);
      if (bits)
        solver.reset();
      else
        solver.push();
      for (const z3::expr &ax : axioms)
        solver.add(ax);
      if (!bits)
        for (unsigned k = 0; k < bounds.size(); ++k)
          solver.add(bounds[k]);
      solver.add(g);
      z3::check_result r = solver.check();
      std::optional<z3::model> m;
      std::string why = r == z3::unknown ? solver.reason_unknown() : "";
      if (r == z3::sat) {
        // A refutation stands only if its model, completed, satisfies the
        // query and every axiom when evaluated: a wrong verdict is never
        // reported on the solver's word alone.
        m = solver.get_model();
        bool holds = m->eval(g, true).is_true();
        for (const z3::expr &ax : axioms)
          holds = holds && m->eval(ax, true).is_true();
        for (unsigned k = 0; k < bounds.size() && !bits; ++k)
          holds = holds && m->eval(bounds[k], true).is_true();
        if (!holds) {
          r = z3::unknown;
          m.reset();
          why = "the solver's counterexample does not hold when evaluated (discarded)";
        }
      }
      if (!bits)
        solver.pop();
      // An interrupted incremental solver is not trusted with the next
      // check: start a fresh one.
      if (r == z3::unknown && !bits) {
        solver_ = z3::solver(ctx_);
      }
      return std::make_tuple(r, m, why);
    };
    auto [r, model, why] = solve(goal, enc.axioms(), pureBits,
                                 canEnumerate ? std::max(options_.timeoutMs / 5, 1u)
                                              : options_.timeoutMs);
    if (r == z3::unknown && canEnumerate) {
      // At most kEnumerationBudget checks' worth of time in all.
      auto deadline = std::chrono::steady_clock::now() +
                      std::chrono::milliseconds(options_.timeoutMs) * kEnumerationBudget;
      r = z3::unsat;
      for (int64_t k = 0; k < count && r == z3::unsat; ++k) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                        deadline - std::chrono::steady_clock::now()).count();
        if (left <= 0) {
          r = z3::unknown;
          why = "checked " + std::to_string(k) + " of " + std::to_string(count) +
                " indices one by one before the time limit (" +
                std::to_string(options_.timeoutMs * kEnumerationBudget) + " ms)";
          break;
        }
        z3::expr_vector from(ctx_), to(ctx_);
        int64_t rest = k;
        for (int64_t d = static_cast<int64_t>(idx.size()) - 1; d >= 0; --d) {
          from.push_back(idx[d]);
          to.push_back(ctx_.int_val(rest % b->shape[d]));
          rest /= b->shape[d];
        }
        // The index is a number in the goal and, as the goal's terms then
        // differ from the axioms', in the axioms too (exp(x[i]) > 0 must
        // become exp(x[0]) > 0, or exp(x[0]) is unconstrained).
        z3::expr g = goal;
        g = g.substitute(from, to).simplify();
        std::vector<z3::expr> axioms;
        for (z3::expr ax : enc.axioms())
          axioms.push_back(ax.substitute(from, to).simplify());
        std::tie(r, model, why) =
            solve(g, axioms, !hasIntegerOrFunction(g, axioms),
                  static_cast<unsigned>(std::min<int64_t>(left, options_.timeoutMs)));
        if (r == z3::sat) { // the counterexample is at this index
          for (unsigned d = 0; d < from.size(); ++d)
            idx[idx.size() - 1 - d] = to[d];
          eb = eb.substitute(from, to);
          ea = ea.substitute(from, to);
        }
      }
    }
    Outcome result;
    result.arithmetic = arithmetic;
    if (r == z3::sat) {
      z3::model m = *model;
      std::string text;
      llvm::raw_string_ostream os(text);
      os << "at index [";
      for (size_t d = 0; d < idx.size(); ++d)
        os << (d ? ", " : "") << m.eval(idx[d], true).to_string();
      os << "] the op gives " << formatValue(m.eval(eb, true)) << " and its replacement "
         << formatValue(m.eval(ea, true));
      for (const FreeTensor &f : enc.freeTensors())
        os << "; " << describeFree(m, f, 4);
      result = {Verdict::Refuted, arithmetic, os.str()};
    } else if (r == z3::unknown) {
      if (why == "timeout" || why == "canceled")
        why = "the solver gave up after " + std::to_string(options_.timeoutMs) + " ms";
      result = {Verdict::Unknown, arithmetic, why};
    }
    if (result.verdict != Verdict::Proved)
      return result;
  }
  return out;
}

void RewriteValidator::print(llvm::raw_ostream &os, ArrayRef<std::string> expected) const {
  os << "rewrite validation (Z3, " << options_.timeoutMs << " ms per check):\n";
  size_t width = 8;
  for (const auto &[name, t] : tallies_)
    width = std::max(width, name.size());
  for (const auto &[name, t] : tallies_) {
    int64_t uses = t.proved + t.refuted + t.unknown;
    os << "  " << llvm::format("%-8s", verdictName(t.verdict())) << name
       << std::string(width - name.size() + 2, ' ') << uses << (uses == 1 ? " use " : " uses")
       << "  " << arithmeticName(t.arithmetic);
    if (t.refuted)
      os << "\n      counterexample: " << t.firstRefutation;
    else if (t.unknown)
      os << "\n      reason: " << t.firstUnknown;
    os << "\n";
  }
  std::vector<std::string> missing;
  for (const std::string &e : expected)
    if (!tallies_.count(e))
      missing.push_back(e);
  if (!missing.empty()) {
    os << "  not exercised:";
    for (const std::string &m : missing)
      os << " " << m << (&m == &missing.back() ? "" : ",");
    os << "\n";
  }
  os << count(Verdict::Proved) << " proved, " << count(Verdict::Refuted) << " refuted, "
     << count(Verdict::Unknown) << " unknown\n";
}

} // namespace cuvil::verify
