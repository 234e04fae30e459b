//===- RunTimeSymbols.cpp - Which input symbol each run-time size is -----===//
#include "targets/CPU/RunTimeSymbols.h"

#include "dialects/Cuvil/IR/CuvilDialect.h"
#include "dialects/Cuvil/IR/CuvilOps.h"

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

  LogicalResult visit(Block &block) {
    for (Operation &op : block) {
      if (auto g = llvm::dyn_cast<FusedGroupOp>(op)) {
        Block &body = g.getBody().front();
        for (auto [arg, input] : llvm::zip(body.getArguments(), g.getInputs()))
          if (auto it = labels.find(input); it != labels.end())
            labels[arg] = it->second;
        if (failed(visit(body)))
          return failure();
        if (auto it = labels.find(g.getYielded()); it != labels.end())
          labels[g.getResult()] = it->second;
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
      } else if (llvm::isa<SoftmaxOp, LayerNormOp>(op)) {
        if (auto it = labels.find(op.getOperand(0)); it != labels.end())
          labels[r] = it->second;
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
