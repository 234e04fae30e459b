//===- VerifyLifetimes.cpp - No arena bytes held by two live buffers ------===//
//
// cuvil-verify-lifetimes: after cuvil-allocs-to-arena, every intermediate
// buffer is a view of the arena at a constant offset. This pass checks the
// placement independently of the planner that made it: it derives each
// buffer's live range again (from its view to its last use through any
// alias: views, casts, selects, region results; a buffer a loop reads, or
// hands from one iteration to the next, lives for the whole loop) and
// fails when two buffers whose bytes overlap are live at once, naming both
// and the use that would read overwritten data.
//
//===----------------------------------------------------------------------===//
#include "targets/CPU/Passes.h"

#include "targets/CPU/SizeBounds.h"

#include "mlir/Interfaces/LoopLikeInterface.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::cuvil {

#define GEN_PASS_DEF_VERIFYLIFETIMESPASS
#include "targets/CPU/Passes.h.inc"

namespace {

/// Every op's position in a pre-order walk, and the last position inside
/// its regions.
class Positions {
public:
  explicit Positions(func::FuncOp f) { number(f.getBody()); }
  int64_t of(Operation *op) const { return pos.lookup(op); }
  int64_t endOf(Operation *op) const { return last.lookup(op); }

private:
  llvm::DenseMap<Operation *, int64_t> pos, last;
  int64_t next = 0;
  void number(Region &region) {
    for (Block &b : region)
      for (Operation &op : b) {
        pos[&op] = next++;
        for (Region &r : op.getRegions())
          number(r);
        last[&op] = next - 1;
      }
  }
};

struct Buffer {
  memref::ViewOp view;
  int64_t lo = 0, hi = 0;       ///< bytes of the arena
  int64_t start = 0, end = 0;   ///< positions
  Operation *lastUser = nullptr;
};

std::string where(Location loc) {
  if (auto f = llvm::dyn_cast<FileLineColLoc>(loc))
    return (f.getFilename().getValue() + ":" + llvm::Twine(f.getLine())).str();
  if (auto n = llvm::dyn_cast<NameLoc>(loc))
    return n.getName().getValue().str() + " (" + where(n.getChildLoc()) + ")";
  if (auto f = llvm::dyn_cast<FusedLoc>(loc))
    for (Location l : f.getLocations())
      if (std::string s = where(l); !s.empty() && s != "?")
        return s;
  if (auto c = llvm::dyn_cast<CallSiteLoc>(loc))
    return where(c.getCallee());
  return "?";
}

/// The outermost loop around `user` that does not also hold `def`: the
/// user runs on every iteration, the buffer must survive them all.
Operation *enclosingLoopWithout(Operation *user, Operation *def) {
  Operation *outer = nullptr;
  for (Operation *p = user->getParentOp(); p && !llvm::isa<func::FuncOp>(p); p = p->getParentOp())
    if (llvm::isa<LoopLikeOpInterface>(p) && !p->isAncestor(def))
      outer = p;
  return outer;
}

/// `b`'s live range: from its view to the last use of anything aliasing it.
void liveRange(Buffer &b, const Positions &positions) {
  Operation *def = b.view;
  b.start = b.end = positions.of(def);
  SmallVector<Value> worklist{b.view.getResult()};
  llvm::DenseSet<Value> seen;
  auto extendTo = [&](int64_t end, Operation *user) {
    if (end > b.end) {
      b.end = end;
      b.lastUser = user;
    }
  };
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    if (!seen.insert(v).second)
      continue;
    for (Operation *user : v.getUsers()) {
      extendTo(positions.of(user), user);
      if (Operation *loop = enclosingLoopWithout(user, def))
        extendTo(positions.endOf(loop), user);
      // An op with regions takes the buffer into them (a loop's initial
      // values, a branch's operands): live through all of it.
      if (user->getNumRegions() > 0)
        extendTo(positions.endOf(user), user);
      for (Value r : user->getResults())
        if (llvm::isa<BaseMemRefType>(r.getType()))
          worklist.push_back(r);
      if (!user->hasTrait<OpTrait::IsTerminator>())
        continue;
      Operation *parent = user->getParentOp();
      if (!parent || llvm::isa<func::FuncOp>(parent))
        continue;
      // Handed out of a region: it is the parent's result; out of a loop's
      // iteration: also the next iteration's, so live over the whole loop.
      if (llvm::isa<LoopLikeOpInterface>(parent)) {
        b.start = std::min(b.start, positions.of(parent));
        extendTo(positions.endOf(parent), user);
      }
      for (Value r : parent->getResults())
        if (llvm::isa<BaseMemRefType>(r.getType()))
          worklist.push_back(r);
    }
  }
}

struct VerifyLifetimesPass final : impl::VerifyLifetimesPassBase<VerifyLifetimesPass> {
  LogicalResult verify(func::FuncOp func) {
    if (func.isExternal() || !func->hasAttr("cuvil.arena_bytes") || func.getNumArguments() == 0)
      return success();
    Value arena = func.getArgument(func.getNumArguments() - 1);
    Positions positions(func);
    std::vector<Buffer> buffers;
    LogicalResult placed = success();
    func.walk([&](memref::ViewOp view) {
      if (view.getSource() != arena)
        return;
      IntegerAttr offset;
      if (!matchPattern(view.getByteShift(), m_Constant(&offset))) {
        placed = view.emitError() << "cuvil-verify-lifetimes: an arena buffer at a run-time offset";
        return;
      }
      MemRefType t = view.getType();
      int64_t bytes = std::max<int64_t>(t.getElementType().getIntOrFloatBitWidth() / 8, 1);
      for (int64_t d = 0; d < t.getRank(); ++d) {
        std::optional<int64_t> size = cpu::dimUpperBound(view.getResult(), d);
        if (!size) {
          placed = view.emitError() << "cuvil-verify-lifetimes: dimension " << d << " of " << t
                                    << " has no bound";
          return;
        }
        bytes *= *size;
      }
      Buffer b;
      b.view = view;
      b.lo = offset.getInt();
      b.hi = b.lo + bytes;
      liveRange(b, positions);
      buffers.push_back(b);
    });
    if (failed(placed))
      return failure();
    // By offset: only neighbours can overlap.
    std::sort(buffers.begin(), buffers.end(), [](const Buffer &a, const Buffer &b) { return a.lo < b.lo; });
    for (size_t i = 0; i < buffers.size(); ++i)
      for (size_t j = i + 1; j < buffers.size() && buffers[j].lo < buffers[i].hi; ++j) {
        Buffer &a = buffers[i], &b = buffers[j];
        if (a.hi <= b.lo || a.end < b.start || b.end < a.start)
          continue;
        // The one placed first is overwritten by the other while still used.
        Buffer &first = a.start <= b.start ? a : b, &second = a.start <= b.start ? b : a;
        Operation *reader = first.lastUser ? first.lastUser : first.view.getOperation();
        InFlightDiagnostic d = second.view.emitError()
                               << "cuvil-verify-lifetimes: arena bytes [" << std::max(a.lo, b.lo) << ", "
                               << std::min(a.hi, b.hi) << ") hold two buffers live at once: this "
                               << second.view.getType() << " (" << where(second.view.getLoc())
                               << ") is placed over a " << first.view.getType() << " ("
                               << where(first.view.getLoc()) << ") that '" << reader->getName()
                               << "' still reads afterwards (" << where(reader->getLoc()) << ")";
        d.attachNote(first.view.getLoc()) << "the earlier buffer";
        d.attachNote(reader->getLoc()) << "its last use";
        return failure();
      }
    return success();
  }

  void runOnOperation() override {
    for (func::FuncOp func : getOperation().getOps<func::FuncOp>())
      if (failed(verify(func)))
        return signalPassFailure();
  }
};

} // namespace

} // namespace mlir::cuvil
