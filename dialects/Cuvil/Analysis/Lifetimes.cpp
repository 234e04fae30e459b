//===- Lifetimes.cpp - Buffers and live ranges of a function --------------===//
#include "dialects/Cuvil/Analysis/Lifetimes.h"

#include "dialects/Cuvil/Analysis/Aliasing.h"
#include "dialects/Cuvil/IR/CuvilOps.h"

namespace mlir::cuvil {

int64_t tensorBytes(Type type) {
  auto t = llvm::dyn_cast<RankedTensorType>(type);
  if (!t || !t.hasStaticShape())
    return -1;
  Type e = t.getElementType();
  int64_t bits = e.isIntOrFloat() ? e.getIntOrFloatBitWidth() : 0;
  if (bits == 0)
    return -1;
  return t.getNumElements() * std::max<int64_t>(bits / 8, 1);
}

FunctionLifetimes::FunctionLifetimes(func::FuncOp func) {
  Block &body = func.getBody().front();
  for (Operation &op : body) {
    positions_[&op] = static_cast<int64_t>(ops_.size());
    ops_.push_back(&op);
  }
  auto addStorage = [&](Value root, StorageKind kind, int64_t start) {
    Storage s;
    s.root = root;
    s.kind = kind;
    s.bytes = tensorBytes(root.getType());
    if (s.bytes < 0 && kind == StorageKind::Intermediate)
      s.kind = StorageKind::Unplanned;
    s.start = s.end = start;
    indexOfRoot_[root] = storages_.size();
    storages_.push_back(s);
  };
  for (BlockArgument arg : body.getArguments())
    addStorage(arg, StorageKind::Input, 0);
  for (Operation *op : ops_)
    for (Value r : op->getResults()) {
      if (!llvm::isa<RankedTensorType>(r.getType()) || isViewOp(op))
        continue;
      StorageKind kind = llvm::isa<ConstantOp>(op) ? StorageKind::Constant : StorageKind::Intermediate;
      // Results of control flow (scf.if) come from its branches, which
      // are planned with the code generated for them; ops with several
      // results would need one offset each.
      if (op->getNumResults() != 1 || (op->getNumRegions() > 0 && !llvm::isa<FusedGroupOp>(op)))
        kind = StorageKind::Unplanned;
      addStorage(r, kind, positions_[op]);
    }
  // Live ranges: every use of a value or of a view of it.
  func.walk([&](Operation *user) {
    if (user == func.getOperation())
      return;
    int64_t at = position(user);
    for (Value v : user->getOperands()) {
      auto it = indexOfRoot_.find(storageRoot(v));
      if (it == indexOfRoot_.end())
        continue;
      Storage &s = storages_[it->second];
      s.end = std::max(s.end, at);
      if (llvm::isa<func::ReturnOp>(user) && s.kind == StorageKind::Intermediate)
        s.kind = StorageKind::Output; // the caller's buffer
    }
  });
}

int64_t FunctionLifetimes::position(Operation *op) const {
  while (op) {
    auto it = positions_.find(op);
    if (it != positions_.end())
      return it->second;
    op = op->getParentOp();
  }
  return -1;
}

const Storage *FunctionLifetimes::storageOf(Value v) const {
  auto it = indexOfRoot_.find(storageRoot(v));
  return it == indexOfRoot_.end() ? nullptr : &storages_[it->second];
}

llvm::SmallVector<Value> FunctionLifetimes::inPlaceCandidates(Operation *op) const {
  llvm::SmallVector<Value> out;
  if (op->getNumResults() != 1)
    return out;
  const Storage *result = storageOf(op->getResult(0));
  if (!result || result->root != op->getResult(0) || result->kind != StorageKind::Intermediate)
    return out;
  // The operands the op reads element by element, at the written index.
  llvm::SmallVector<Value> readBeforeWrite;
  if (op->hasTrait<CuvilElementwise>()) {
    readBeforeWrite.append(op->operand_begin(), op->operand_end());
  } else if (auto group = llvm::dyn_cast<FusedGroupOp>(op)) {
    Block &body = group.getBody().front();
    Operation *anchor = group.getAnchor();
    for (auto [arg, input] : llvm::zip(body.getArguments(), group.getInputs())) {
      bool epilogueOnly = !arg.use_empty();
      for (Operation *u : arg.getUsers())
        epilogueOnly &= u != anchor && u->hasTrait<CuvilElementwise>();
      if (epilogueOnly)
        readBeforeWrite.push_back(input);
    }
  }
  int64_t at = position(op);
  for (Value v : readBeforeWrite) {
    const Storage *s = storageOf(v);
    if (!s || s->kind != StorageKind::Intermediate || s->end != at || s->bytes != result->bytes ||
        v.getType() != op->getResult(0).getType() || firstStridedView(v))
      continue;
    if (llvm::is_contained(out, v))
      continue;
    out.push_back(v);
  }
  return out;
}

} // namespace mlir::cuvil
