//===- AllocsToArena.cpp - Intermediate buffers as views of one arena ------===//
#include "targets/CPU/Passes.h"

#include "support/ArenaPlacement.h"
#include "targets/CPU/SizeBounds.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_ALLOCSTOARENAPASS
#include "targets/CPU/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {

constexpr int64_t kAlignment = 64;
/// Past this, an arena is a mistake in the bounds (and offsets would
/// overflow in the arithmetic the views lower to).
constexpr int64_t kMaxArenaBytes = int64_t(1) << 48;
/// A whole arena past this (64 GiB) would not be allocated at run time on
/// the machines Cuvil serves: refused when compiling, naming the bounds.
constexpr int64_t kMaxTotalArenaBytes = int64_t(64) << 30;

struct Buffer {
  memref::AllocOp alloc;
  int64_t bytes = 0;
  int64_t start = 0, end = 0;
  int64_t offset = 0;
};

/// The bytes of `alloc`'s buffer at its largest: a run-time size at its
/// bound (SizeBounds.h), or nullopt when it has none or it overflows.
std::optional<int64_t> maxBytesOf(memref::AllocOp alloc) {
  MemRefType t = alloc.getType();
  int64_t bits = t.getElementType().isIntOrFloat() ? t.getElementType().getIntOrFloatBitWidth() : 0;
  int64_t bytes = std::max<int64_t>(bits / 8, 1);
  for (int64_t d = 0; d < t.getRank(); ++d) {
    std::optional<int64_t> size = mlir::cuvil::cpu::dimUpperBound(alloc.getResult(), d);
    if (!size || __builtin_mul_overflow(bytes, *size, &bytes))
      return std::nullopt;
  }
  return bytes;
}

/// Program order for live ranges: every op numbered in a pre-order walk,
/// so the branches of an scf.if are straight-line code one after the other
/// (they never run both, and both lead to what follows, so a buffer of one
/// may take the bytes of a buffer of the other); a loop is one position as
/// a whole (what it holds is live across its iterations).
class ProgramOrder {
public:
  explicit ProgramOrder(func::FuncOp func) { number(func.getBody().front()); }

  int64_t of(Operation *op) const {
    Operation *at = op;
    for (Operation *p = op; p && !llvm::isa<func::FuncOp>(p); p = p->getParentOp())
      if (llvm::isa<LoopLikeOpInterface>(p))
        at = p; // the outermost loop
    auto it = pos.find(at);
    return it == pos.end() ? 0 : it->second;
  }

private:
  llvm::DenseMap<Operation *, int64_t> pos;
  int64_t next = 0;

  void number(Block &block) {
    for (Operation &op : block) {
      pos[&op] = next++;
      if (llvm::isa<LoopLikeOpInterface>(op))
        continue;
      for (Region &r : op.getRegions())
        for (Block &b : r)
          number(b);
    }
  }
};

/// The alloc whose buffer `v` is (through view-like ops), if any.
memref::AllocOp rootAlloc(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (auto alloc = llvm::dyn_cast<memref::AllocOp>(def))
      return alloc;
    auto view = llvm::dyn_cast<ViewLikeOpInterface>(def);
    if (!view)
      return {};
    v = view.getViewSource();
  }
  return {};
}

/// An arena buffer has one place for the whole run, but a buffer that an
/// scf.while's iteration allocates and hands on (yielded, or forwarded by
/// its condition) would be written again by the next iteration while it is
/// still read there as an argument. So every value a loop's region hands
/// on is copied, at the region's end, into a buffer of its own allocated
/// there (a carry: in the loop, its place differs from every other buffer
/// of the loop's, and it is written only after the iteration's last read).
/// Values that are themselves arguments or carries (`a, b = b, a + b`) go
/// through a fresh buffer first, so no copy reads a carry already written.
void carryLoopValuesInOwnBuffers(func::FuncOp func) {
  llvm::SmallPtrSet<Operation *, 8> carries;
  func.walk([&](scf::WhileOp loop) {
    for (Operation *terminator : {static_cast<Operation *>(loop.getConditionOp()),
                                  static_cast<Operation *>(loop.getYieldOp())}) {
      bool isCondition = llvm::isa<scf::ConditionOp>(terminator);
      unsigned first = isCondition ? 1 : 0;
      OpBuilder b(terminator);
      Location loc = terminator->getLoc();
      auto allocLike = [&](Value v) -> Value {
        auto type = llvm::cast<MemRefType>(v.getType());
        SmallVector<Value> sizes;
        for (int64_t d = 0; d < type.getRank(); ++d)
          if (type.isDynamicDim(d))
            sizes.push_back(b.create<memref::DimOp>(loc, v, d));
        auto plain = MemRefType::get(type.getShape(), type.getElementType());
        return b.create<memref::AllocOp>(loc, plain, sizes);
      };
      auto handOn = [&](Value buffer, Type type) -> Value {
        return buffer.getType() == type ? buffer : b.create<memref::CastOp>(loc, type, buffer).getResult();
      };
      SmallVector<std::pair<OpOperand *, Value>> toCarry; // operand, value to copy
      for (OpOperand &operand : llvm::drop_begin(terminator->getOpOperands(), first)) {
        Value v = operand.get();
        if (!llvm::isa<MemRefType>(v.getType()))
          continue;
        unsigned k = operand.getOperandNumber() - first;
        // What goes on unchanged needs nothing: the before region's
        // argument k forwarded as k, the after region's argument j yielded
        // back where it came from.
        if (isCondition && k < loop.getBeforeArguments().size() && v == loop.getBeforeArguments()[k])
          continue;
        if (!isCondition) {
          if (auto arg = llvm::dyn_cast<BlockArgument>(v); arg && arg.getOwner() == loop.getAfterBody() &&
                                                           loop.getConditionOp().getArgs()[arg.getArgNumber()] ==
                                                               loop.getBeforeArguments()[k])
            continue;
        }
        memref::AllocOp root = rootAlloc(v);
        bool fresh = root && loop->isProperAncestor(root) && !carries.contains(root);
        if (!fresh && (!root || loop->isProperAncestor(root))) {
          // An argument, a carry or a view of one: through a fresh buffer.
          Value temp = allocLike(v);
          b.create<linalg::CopyOp>(loc, v, temp);
          v = temp;
        }
        toCarry.emplace_back(&operand, v);
      }
      for (auto [operand, v] : toCarry) {
        Value carry = allocLike(v);
        carries.insert(carry.getDefiningOp());
        b.create<linalg::CopyOp>(loc, v, carry);
        operand->set(handOn(carry, operand->get().getType()));
      }
    }
  });
}

struct AllocsToArenaPass final : mlir::cuvil::impl::AllocsToArenaPassBase<AllocsToArenaPass> {
  using Base::Base;

  LogicalResult planFunction(func::FuncOp func) {
    if (func.isExternal())
      return success();
    carryLoopValuesInOwnBuffers(func);
    ProgramOrder order(func);

    SmallVector<Buffer> buffers;
    WalkResult walk = func.walk([&](memref::AllocOp alloc) -> WalkResult {
      std::optional<int64_t> bytes = maxBytesOf(alloc);
      if (!bytes || *bytes > kMaxArenaBytes) {
        alloc.emitError() << "a buffer of type " << alloc.getType()
                          << (bytes ? " would take more than 2^48 bytes at its inputs' bounds"
                                    : " has a run-time size that cannot be bounded")
                          << ": it cannot be placed in the arena (give the dynamic dimensions "
                             "tighter bounds in --input-shape)";
        return WalkResult::interrupt();
      }
      Buffer b;
      b.alloc = alloc;
      b.bytes = (*bytes + kAlignment - 1) / kAlignment * kAlignment;
      b.start = order.of(alloc);
      b.end = b.start;
      // Every use through view-like ops keeps the buffer alive.
      SmallVector<Value> worklist = {alloc.getResult()};
      llvm::DenseSet<Value> seen;
      while (!worklist.empty()) {
        Value v = worklist.pop_back_val();
        if (!seen.insert(v).second)
          continue;
        for (Operation *user : v.getUsers()) {
          b.end = std::max(b.end, order.of(user));
          // Any buffer an op returns may be this one: views, casts, the
          // arith.select a two-buffer scf.if becomes, a loop's results (the
          // buffers it starts from, after no iteration).
          for (Value r : user->getResults())
            if (llvm::isa<BaseMemRefType>(r.getType()))
              worklist.push_back(r);
          if (user->hasTrait<OpTrait::IsTerminator>() && llvm::isa_and_present<scf::WhileOp>(user->getParentOp()))
            worklist.append(user->getParentOp()->result_begin(), user->getParentOp()->result_end());
          // A buffer yielded out of a region (scf.if, scf.for) lives on as
          // the parent's result.
          else if (user->hasTrait<OpTrait::IsTerminator>() && user->getParentOp() &&
                   !llvm::isa<func::FuncOp>(user->getParentOp()))
            for (OpOperand &operand : user->getOpOperands())
              if (operand.get() == v &&
                  operand.getOperandNumber() < user->getParentOp()->getNumResults())
                worklist.push_back(user->getParentOp()->getResult(operand.getOperandNumber()));
        }
      }
      buffers.push_back(b);
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();

    // Greedy by size: largest first, lowest offset free during its life.
    std::vector<::cuvil::LiveBuffer> live;
    for (const Buffer &b : buffers)
      live.push_back({b.bytes, b.start, b.end});
    ::cuvil::ArenaPlacement placement = ::cuvil::placeGreedyBySize(live);
    for (size_t i = 0; i < buffers.size(); ++i)
      buffers[i].offset = testOverlapBuffers ? 0 : placement.offsets[i];
    int64_t arena = placement.arenaBytes;
    if (arena > kMaxTotalArenaBytes) {
      func.emitError() << "the intermediate buffers need an arena of " << arena
                       << " bytes at the inputs' bounds, more than the limit of "
                       << kMaxTotalArenaBytes
                       << " bytes: give the dynamic dimensions tighter bounds in --input-shape";
      return failure();
    }

    // The arena argument, then each alloc as a view of it.
    MLIRContext *ctx = func.getContext();
    // A static size: the bare-pointer calling convention needs static shapes.
    auto arenaType = MemRefType::get({std::max<int64_t>(arena, kAlignment)}, IntegerType::get(ctx, 8));
    unsigned argIndex = func.getNumArguments();
    func.insertArgument(argIndex, arenaType, {}, func.getLoc());
    Value arenaArg = func.getArgument(argIndex);
    for (Buffer &b : buffers) {
      OpBuilder builder(b.alloc);
      Value offset = builder.create<arith::ConstantIndexOp>(b.alloc.getLoc(), b.offset);
      // Run-time sizes: the view takes them, its room is the bound's.
      Value view = builder.create<memref::ViewOp>(b.alloc.getLoc(), b.alloc.getType(), arenaArg,
                                                  offset, b.alloc.getDynamicSizes());
      b.alloc.getResult().replaceAllUsesWith(view);
      // Deallocations (if any pass added them) go with the alloc.
      for (Operation *user : llvm::make_early_inc_range(view.getUsers()))
        if (llvm::isa<memref::DeallocOp>(user))
          user->erase();
      b.alloc.erase();
    }
    func->setAttr("cuvil.arena_bytes", IntegerAttr::get(IntegerType::get(ctx, 64), arena));
    return success();
  }

  void runOnOperation() override {
    for (func::FuncOp func : getOperation().getOps<func::FuncOp>())
      if (failed(planFunction(func)))
        return signalPassFailure();
  }
};

} // namespace
