//===- RunTimeSymbols.cpp - Which input symbol each run-time size is -----===//
#include "targets/CPU/RunTimeSymbols.h"

#include "dialects/Cuvil/IR/CuvilDialect.h"
#include "dialects/Cuvil/IR/CuvilOps.h"
#include "dialects/Cuvil/IR/RunTimeSizes.h"
#include "passes/Conversion/CuvilToLinalg/LoweringUtils.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

#include <limits>

namespace mlir::cuvil::cpu {
namespace {

/// Per value, per dimension: the input symbol of a run-time size, or "".
class SymbolTracker {
public:
  LogicalResult run(func::FuncOp entry) {
    for (BlockArgument arg : entry.getArguments())
      if (auto symbols = entry.getArgAttrOfType<ArrayAttr>(arg.getArgNumber(), kDimSymbolsAttrName)) {
        std::vector<std::string> &l = labels[arg];
        for (Attribute a : symbols)
          l.push_back(llvm::isa<StringAttr>(a) ? llvm::cast<StringAttr>(a).str() : "");
      }
    return visit(entry.getBody().front());
  }

private:
  llvm::DenseMap<Value, std::vector<std::string>> labels;

  std::string labelOf(Value v, int64_t dim) {
    auto it = labels.find(v);
    auto t = llvm::dyn_cast<RankedTensorType>(v.getType());
    if (it == labels.end() || !t || dim < 0 || dim >= int64_t(it->second.size()) || !t.isDynamicDim(dim))
      return "";
    return it->second[dim];
  }

  /// Two known labels of one size must agree; the known one of the two.
  FailureOr<std::string> meet(Operation *op, int64_t dim, const std::string &a, const std::string &b) {
    if (a.empty() || b.empty() || a == b)
      return a.empty() ? b : a;
    return op->emitError() << "'" << op->getName() << "' combines, along its dimension " << dim
                           << ", run-time sizes of two different symbols ('" << a << "' and '" << b
                           << "'); the code assumes they are equal and broadcasting along a run-time "
                              "dimension is not supported: give those inputs one symbol in "
                              "--input-shape (e.g. 0=nx16xf32 1=nx16xf32, not two '?')";
  }

  LogicalResult elementwise(Operation *op) {
    auto result = llvm::dyn_cast<RankedTensorType>(op->getResult(0).getType());
    if (!result)
      return success();
    int64_t rank = result.getRank();
    std::vector<std::string> out(rank);
    for (Value v : op->getOperands()) {
      auto t = llvm::dyn_cast<RankedTensorType>(v.getType());
      if (!t)
        continue;
      int64_t offset = rank - t.getRank();
      for (int64_t d = 0; d < t.getRank(); ++d) {
        FailureOr<std::string> m = meet(op, d + offset, out[d + offset], labelOf(v, d));
        if (failed(m))
          return failure();
        out[d + offset] = *m;
      }
    }
    labels[op->getResult(0)] = std::move(out);
    return success();
  }

  /// A view's run-time sizes in order, where the static sizes between them
  /// agree (as the lowering pairs them); else nothing is said.
  void view(Value in, Value out) {
    auto it = llvm::cast<RankedTensorType>(in.getType()), ot = llvm::cast<RankedTensorType>(out.getType());
    if (!keepsRunTimeSizesInOrder(it, ot))
      return;
    std::vector<std::string> inLabels, l(ot.getRank());
    for (int64_t d = 0; d < it.getRank(); ++d)
      if (it.isDynamicDim(d))
        inLabels.push_back(labelOf(in, d));
    size_t next = 0;
    for (int64_t d = 0; d < ot.getRank(); ++d)
      if (ot.isDynamicDim(d))
        l[d] = inLabels[next++];
    labels[out] = std::move(l);
  }

  /// The result's dimension d is the input's dimension from(d) (-1: none).
  void mapped(Value in, Value out, llvm::function_ref<int64_t(int64_t)> from) {
    int64_t rank = llvm::cast<RankedTensorType>(out.getType()).getRank();
    std::vector<std::string> l(rank);
    for (int64_t d = 0; d < rank; ++d)
      if (int64_t f = from(d); f >= 0)
        l[d] = labelOf(in, f);
    labels[out] = std::move(l);
  }

  template <typename OpTy> bool reduction(Operation &op) {
    auto r = llvm::dyn_cast<OpTy>(op);
    if (!r)
      return false;
    auto in = llvm::cast<RankedTensorType>(r.getInput().getType());
    llvm::SmallDenseSet<int64_t> reduced(r.getDims().begin(), r.getDims().end());
    SmallVector<int64_t> source; // result dim -> input dim
    for (int64_t d = 0; d < in.getRank(); ++d)
      if (!reduced.contains(d))
        source.push_back(d);
      else if (r.getKeepdim())
        source.push_back(-1);
    if (int64_t(source.size()) == llvm::cast<RankedTensorType>(r.getType()).getRank())
      mapped(r.getInput(), r.getResult(), [&](int64_t d) { return source[d]; });
    return true;
  }

  /// The label of a run-time size (a 0-d value): its dimension's symbol,
  /// or an expression of it and constants ("(seq+1)"), so that sizes of
  /// one symbol that differ are told apart; "" for any other size.
  std::string sizeLabel(Value size, int depth = 0) {
    Value v = lookThroughSize(size);
    if (auto d = v.getDefiningOp<DimOp>())
      return labelOf(d.getInput(), d.getDim());
    Operation *def = v.getDefiningOp();
    if (depth > 8 || !def || !llvm::isa<AddOp, SubOp, MulOp, DivOp>(def))
      return "";
    std::optional<int64_t> c = constantSize(lookThroughSize(def->getOperand(1)));
    std::string l = sizeLabel(def->getOperand(0), depth + 1);
    if (!c || l.empty())
      return "";
    const char *sign = llvm::isa<AddOp>(def) ? "+" : llvm::isa<SubOp>(def) ? "-" : llvm::isa<MulOp>(def) ? "*" : "/";
    return "(" + l + sign + std::to_string(*c) + ")";
  }

  /// `to` has `from`'s labels (copied first: inserting may move them).
  void copyLabels(Value from, Value to) {
    if (auto it = labels.find(from); it != labels.end()) {
      std::vector<std::string> l = it->second;
      labels[to] = std::move(l);
    }
  }

  /// A data-dependent loop: its arguments and results have the sizes it
  /// starts from, which holds only if every iteration hands on the same
  /// run-time sizes (the code sizes what it carries by them).
  LogicalResult loop(scf::WhileOp loop) {
    for (auto [init, arg] : llvm::zip(loop.getInits(), loop.getBeforeArguments()))
      copyLabels(init, arg);
    if (failed(visit(loop.getBefore().front())))
      return failure();
    for (auto [forwarded, arg, result] :
         llvm::zip(loop.getConditionOp().getArgs(), loop.getAfterArguments(), loop.getResults())) {
      copyLabels(forwarded, arg);
      copyLabels(forwarded, result);
    }
    if (failed(visit(loop.getAfter().front())))
      return failure();
    // What an iteration hands to the next has the sizes the loop started
    // with.
    for (auto [init, v] : llvm::zip(loop.getInits(), loop.getYieldOp().getResults())) {
      auto t = llvm::dyn_cast<RankedTensorType>(v.getType());
      if (!t)
        continue;
      for (int64_t d = 0; d < t.getRank(); ++d) {
        if (!t.isDynamicDim(d))
          continue;
        std::string before = labelOf(init, d), after = labelOf(v, d);
        if (!before.empty() && before == after)
          continue;
        return loop.emitError() << "this data-dependent loop hands on a tensor of type " << t
                                << " whose run-time size " << d << " may change between iterations (it starts as "
                                << (before.empty() ? std::string("a size of no input symbol") : "'" + before + "'")
                                << ", an iteration leaves "
                                << (after.empty() ? std::string("a size of no input symbol") : "'" + after + "'")
                                << "): a loop may carry run-time sizes only unchanged";
      }
    }
    return success();
  }

  LogicalResult visit(Block &block) {
    for (Operation &op : block) {
      if (auto w = llvm::dyn_cast<scf::WhileOp>(op)) {
        if (failed(loop(w)))
          return failure();
        continue;
      }
      if (auto i = llvm::dyn_cast<scf::IfOp>(op)) {
        // Each branch on its own; a result keeps the labels both agree on.
        for (Region *r : {&i.getThenRegion(), &i.getElseRegion()})
          if (!r->empty() && failed(visit(r->front())))
            return failure();
        if (i.getElseRegion().empty())
          continue;
        for (auto [k, result] : llvm::enumerate(i.getResults())) {
          auto t = llvm::dyn_cast<RankedTensorType>(result.getType());
          if (!t)
            continue;
          Value a = i.thenYield().getOperand(k), b = i.elseYield().getOperand(k);
          std::vector<std::string> l(t.getRank());
          for (int64_t d = 0; d < t.getRank(); ++d)
            if (labelOf(a, d) == labelOf(b, d))
              l[d] = labelOf(a, d);
          labels[result] = std::move(l);
        }
        continue;
      }
      if (auto g = llvm::dyn_cast<FusedGroupOp>(op)) {
        Block &body = g.getBody().front();
        for (auto [arg, input] : llvm::zip(body.getArguments(), g.getInputs()))
          copyLabels(input, arg);
        if (failed(visit(body)))
          return failure();
        copyLabels(g.getYielded(), g.getResult());
        continue;
      }
      if (op.getNumResults() != 1)
        continue;
      Value r = op.getResult(0);
      auto rt = llvm::dyn_cast<RankedTensorType>(r.getType());
      if (!rt)
        continue;
      if (op.hasTrait<CuvilElementwise>()) {
        if (failed(elementwise(&op)))
          return failure();
      } else if (llvm::isa<ReshapeOp, FlattenOp, SqueezeOp, UnsqueezeOp>(op)) {
        view(op.getOperand(0), r);
      } else if (auto t = llvm::dyn_cast<TransposeOp>(op)) {
        int64_t a = t.getDim0(), b = t.getDim1();
        mapped(t.getInput(), r, [&](int64_t d) { return d == a ? b : d == b ? a : d; });
      } else if (auto p = llvm::dyn_cast<PermuteOp>(op)) {
        ArrayRef<int64_t> perm = p.getDims();
        mapped(p.getInput(), r, [&](int64_t d) { return d < int64_t(perm.size()) ? perm[d] : -1; });
      } else if (auto sl = llvm::dyn_cast<SliceOp>(op)) {
        int64_t sliced = sl.getDim();
        // A whole slice along a run-time dimension keeps its size.
        bool whole = sl.getStep() == 1 && sl.getStart() == 0 &&
                     sl.getEnd() >= std::numeric_limits<int64_t>::max() / 2;
        mapped(sl.getInput(), r, [&](int64_t d) { return d != sliced || whole ? d : -1; });
      } else if (auto st = llvm::dyn_cast<SliceToOp>(op)) {
        int64_t cut = st.getDim();
        mapped(st.getInput(), r, [&](int64_t d) { return d == cut ? int64_t(-1) : d; });
        if (auto d = st.getSize().getDefiningOp<DimOp>())
          labels[r][cut] = labelOf(d.getInput(), d.getDim());
      } else if (auto x = llvm::dyn_cast<ExpandDynamicOp>(op)) {
        // A dimension other than a static 1 keeps the input's size.
        auto in = llvm::cast<RankedTensorType>(x.getInput().getType());
        int64_t offset = rt.getRank() - in.getRank();
        std::vector<std::string> out(rt.getRank());
        for (int64_t d = 0; d < rt.getRank(); ++d) {
          std::string size = sizeLabel(x.getSizes()[d]);
          int64_t j = d - offset;
          if (j >= 0 && in.getDimSize(j) != 1) {
            FailureOr<std::string> m = meet(&op, d, labelOf(x.getInput(), j), size);
            if (failed(m))
              return failure();
            size = *m;
          }
          out[d] = rt.isDynamicDim(d) ? size : "";
        }
        labels[r] = std::move(out);
      } else if (auto cat = llvm::dyn_cast<ConcatOp>(op)) {
        // The inputs agree outside the concatenated dimension; that one is
        // their sum (no symbol's).
        std::vector<std::string> out(rt.getRank());
        for (Value in : cat.getInputs())
          for (int64_t d = 0; d < rt.getRank(); ++d) {
            if (d == int64_t(cat.getDim()))
              continue;
            FailureOr<std::string> m = meet(&op, d, out[d], labelOf(in, d));
            if (failed(m))
              return failure();
            out[d] = *m;
          }
        labels[r] = std::move(out);
      } else if (auto iota = llvm::dyn_cast<IotaOp>(op)) {
        labels[r] = {sizeLabel(iota.getCount())};
      } else if (reduction<SumOp>(op) || reduction<ProdOp>(op) || reduction<MeanOp>(op) ||
                 reduction<MaxOp>(op) || reduction<MinOp>(op) || reduction<AnyOp>(op) ||
                 reduction<AllOp>(op) || reduction<VarOp>(op) || reduction<StdOp>(op)) {
      } else if (llvm::isa<Conv2DOp, MaxPool2DOp, AdaptiveAvgPool2DOp, AvgPool2DOp>(op)) {
        mapped(op.getOperand(0), r, [](int64_t d) { return d == 0 ? int64_t(0) : int64_t(-1); });
      } else if (llvm::isa<SoftmaxOp, LayerNormOp>(op)) {
        copyLabels(op.getOperand(0), r);
      } else if (auto linear = llvm::dyn_cast<LinearOp>(op)) {
        std::vector<std::string> out(rt.getRank());
        for (int64_t d = 0; d + 1 < rt.getRank(); ++d)
          out[d] = labelOf(linear.getInput(), d);
        labels[r] = std::move(out);
      } else if (llvm::isa<MatmulOp, BatchMatmulOp>(op)) {
        Value a = op.getOperand(0), b = op.getOperand(1);
        auto at = llvm::cast<RankedTensorType>(a.getType()), bt = llvm::cast<RankedTensorType>(b.getType());
        if (at.getRank() < 2 || bt.getRank() < 2 || rt.getRank() < 2)
          continue;
        // K: the left's last dimension against the right's second to last.
        if (failed(meet(&op, at.getRank() - 1, labelOf(a, at.getRank() - 1), labelOf(b, bt.getRank() - 2))))
          return failure();
        std::vector<std::string> out(rt.getRank());
        int64_t batch = rt.getRank() - 2;
        for (int64_t d = 0; d < batch; ++d) {
          int64_t da = d - (batch - (at.getRank() - 2)), db = d - (batch - (bt.getRank() - 2));
          FailureOr<std::string> m = meet(&op, d, da >= 0 ? labelOf(a, da) : "", db >= 0 ? labelOf(b, db) : "");
          if (failed(m))
            return failure();
          out[d] = *m;
        }
        out[batch] = labelOf(a, at.getRank() - 2);
        out[batch + 1] = labelOf(b, bt.getRank() - 1);
        labels[r] = std::move(out);
      }
    }
    return success();
  }
};

} // namespace

LogicalResult checkRunTimeSymbols(func::FuncOp entry) { return SymbolTracker().run(entry); }

} // namespace mlir::cuvil::cpu
