//===- Fusion.cpp - Form cuvil.fused.group kernels ------------------------===//
//
// Greedy and local: a group grows from its first op along single-use
// edges, one legality check per candidate, so every decision can be
// explained with a remark at the rejected op's source location.
//
//===----------------------------------------------------------------------===//
#include "dialects/Cuvil/Analysis/Aliasing.h"
#include "dialects/Cuvil/IR/CuvilOps.h"
#include "dialects/Cuvil/Transforms/Passes.h"
#include "dialects/Cuvil/Transforms/RewriteObserver.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/CommandLine.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_CUVILFUSEPASS
#include "dialects/Cuvil/Transforms/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;
using namespace mlir::cuvil;

// The tool-wide switch (cuvil-opt --cuvil-fusion-remarks); the pass option
// `remarks` does the same for one pass instance.
static llvm::cl::opt<bool> clFusionRemarks(
    "cuvil-fusion-remarks",
    llvm::cl::desc("Explain, at its source location, every op the fusion pass did not fuse"),
    llvm::cl::init(false));

namespace {

bool isAnchor(Operation *op) {
  return llvm::isa<Conv1DOp, Conv2DOp, ConvTranspose1DOp, ConvTranspose2DOp, LinearOp, MatmulOp,
                   BatchMatmulOp, AddmmOp>(op);
}
FusionKind anchorKind(Operation *op) {
  return llvm::isa<Conv1DOp, Conv2DOp, ConvTranspose1DOp, ConvTranspose2DOp>(op)
             ? FusionKind::Conv
             : FusionKind::Gemm;
}
bool isElementwise(Operation *op) { return op->hasTrait<CuvilElementwise>(); }

struct Group {
  FusionKind kind;
  SmallVector<Operation *> ops; ///< in order; ops.front() is the anchor for conv/gemm
};

struct CuvilFusePass final : mlir::cuvil::impl::CuvilFusePassBase<CuvilFusePass> {
  using Base::Base;

  llvm::DenseSet<Operation *> taken;

  bool explain() const { return remarks || clFusionRemarks; }

  /// Why candidates were turned away, first reason per op. Reported at the
  /// end only for ops that no group took (an add rejected by one group may
  /// be the natural epilogue of the next).
  llvm::MapVector<Operation *, std::string> rejections;

  void reject(Operation *candidate, const Group &g, const Twine &why) {
    if (!explain() || rejections.count(candidate))
      return;
    std::string text;
    llvm::raw_string_ostream os(text);
    os << "'" << candidate->getName() << "' not fused into the " << stringifyFusionKind(g.kind)
       << " group of '" << g.ops.front()->getName() << "': " << why;
    rejections[candidate] = os.str();
  }

  /// The legality rules for `user` joining `g` through its operand `v`.
  bool canJoin(Group &g, Value v, Operation *user) {
    Operation *first = g.ops.front();
    if (user->getBlock() != first->getBlock()) {
      reject(user, g, "it is on the other side of a control-flow boundary");
      return false;
    }
    auto vt = llvm::cast<RankedTensorType>(v.getType());
    auto ut = llvm::cast<RankedTensorType>(user->getResult(0).getType());
    if (ut.getElementType() != vt.getElementType()) {
      reject(user, g, Twine("it changes the element type (dtype mismatch: ") +
                          llvm::Twine(stringOf(vt.getElementType())) + " -> " +
                          stringOf(ut.getElementType()) + ")");
      return false;
    }
    if (ut.getShape() != vt.getShape()) {
      reject(user, g, "it broadcasts the intermediate to a larger shape");
      return false;
    }
    llvm::SmallPtrSet<Value, 4> anchorRoots;
    if (g.kind != FusionKind::Elementwise)
      for (Value in : first->getOperands())
        if (!in.getDefiningOp<ConstantOp>())
          anchorRoots.insert(storageRoot(in));
    for (Value o : user->getOperands()) {
      if (o == v)
        continue;
      if (Operation *strided = firstStridedView(o)) {
        reject(user, g, "its operand is a non-contiguous view ('" +
                            strided->getName().getStringRef() +
                            "'), which the kernel would have to gather");
        return false;
      }
      if (anchorRoots.contains(storageRoot(o))) {
        reject(user, g, "its operand shares storage with the anchor's input (aliasing: the "
                        "fused result may be written in place of that operand while the anchor "
                        "still reads it)");
        return false;
      }
    }
    return true;
  }

  static std::string stringOf(Type t) {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << t;
    return s;
  }

  /// Grows a group from `first` along single-use element-wise edges.
  Group grow(Operation *first, FusionKind kind) {
    Group g{kind, {first}};
    Operation *cur = first;
    while (true) {
      Value v = cur->getResult(0);
      if (v.use_empty())
        break;
      if (!v.hasOneUse()) {
        // Explain for the element-wise users that could have joined.
        unsigned users = std::distance(v.getUsers().begin(), v.getUsers().end());
        for (Operation *u : v.getUsers())
          if (isElementwise(u) && !taken.contains(u))
            reject(u, g, "the intermediate it consumes has " + Twine(users) +
                             " users, so it must be stored");
        break;
      }
      Operation *user = *v.getUsers().begin();
      if (!isElementwise(user) || taken.contains(user) || user->getNumResults() != 1)
        break;
      if (!canJoin(g, v, user))
        break;
      g.ops.push_back(user);
      cur = user;
    }
    return g;
  }

  void outline(const Group &g) {
    Operation *last = g.ops.back();
    llvm::SmallPtrSet<Operation *, 8> inGroup(g.ops.begin(), g.ops.end());
    llvm::SetVector<Value> inputs;
    SmallVector<Location> locs;
    for (Operation *op : g.ops) {
      locs.push_back(op->getLoc());
      for (Value o : op->getOperands())
        if (!inGroup.contains(o.getDefiningOp()))
          inputs.insert(o);
    }
    announceRewrite(last, ("fuse " + stringifyFusionKind(g.kind) + " group").str());
    IRRewriter b(last->getContext(), RewriteObserver::current());
    b.setInsertionPoint(last);
    Location loc = b.getFusedLoc(locs);
    auto group = b.create<FusedGroupOp>(loc, last->getResult(0).getType(),
                                        FusionKindAttr::get(&getContext(), g.kind),
                                        inputs.getArrayRef());
    Block *body = new Block();
    group.getBody().push_back(body);
    IRMapping map;
    for (Value in : inputs)
      map.map(in, body->addArgument(in.getType(), in.getLoc()));
    OpBuilder inner = OpBuilder::atBlockEnd(body);
    for (Operation *op : g.ops)
      inner.clone(*op, map);
    inner.create<FusedYieldOp>(last->getLoc(), map.lookup(last->getResult(0)));
    b.replaceOp(last, group.getResult());
    for (Operation *op : llvm::reverse(g.ops))
      if (op != last)
        b.eraseOp(op);
    ++numGroups;
    numFusedOps += g.ops.size();
  }

  void runOnOperation() override {
    SmallVector<Group> groups;
    auto collect = [&](bool anchors) {
      getOperation().walk([&](Operation *op) {
        if (taken.contains(op) || op->getNumResults() != 1 || op->getParentOfType<FusedGroupOp>())
          return;
        if (anchors ? !isAnchor(op) : !isElementwise(op))
          return;
        Group g = grow(op, anchors ? anchorKind(op) : FusionKind::Elementwise);
        if (g.ops.size() < 2)
          return; // nothing to fuse with
        taken.insert(g.ops.begin(), g.ops.end());
        groups.push_back(std::move(g));
      });
    };
    // Epilogues first: an element-wise op after a conv belongs with it.
    collect(/*anchors=*/true);
    collect(/*anchors=*/false);
    for (auto &[op, why] : rejections)
      if (!taken.contains(op))
        op->emitRemark() << why;
    for (const Group &g : groups)
      outline(g);
  }
};

} // namespace
