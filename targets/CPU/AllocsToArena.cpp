//===- AllocsToArena.cpp - Intermediate buffers as views of one arena ------===//
#include "targets/CPU/Passes.h"

#include "support/ArenaPlacement.h"
#include "targets/CPU/SizeBounds.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
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

/// Position of the top-level (function body) ancestor of `op`.
int64_t positionIn(Block &body, Operation *op, const llvm::DenseMap<Operation *, int64_t> &pos) {
  while (op && op->getBlock() != &body)
    op = op->getParentOp();
  auto it = pos.find(op);
  return it == pos.end() ? 0 : it->second;
}

struct AllocsToArenaPass final : mlir::cuvil::impl::AllocsToArenaPassBase<AllocsToArenaPass> {
  using Base::Base;

  LogicalResult planFunction(func::FuncOp func) {
    if (func.isExternal())
      return success();
    Block &body = func.getBody().front();
    llvm::DenseMap<Operation *, int64_t> pos;
    int64_t index = 0;
    for (Operation &op : body)
      pos[&op] = index++;

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
      b.start = positionIn(body, alloc, pos);
      b.end = b.start;
      // Every use through view-like ops keeps the buffer alive.
      SmallVector<Value> worklist = {alloc.getResult()};
      llvm::DenseSet<Value> seen;
      while (!worklist.empty()) {
        Value v = worklist.pop_back_val();
        if (!seen.insert(v).second)
          continue;
        for (Operation *user : v.getUsers()) {
          b.end = std::max(b.end, positionIn(body, user, pos));
          if (auto view = llvm::dyn_cast<ViewLikeOpInterface>(user))
            if (view.getViewSource() == v)
              worklist.append(user->result_begin(), user->result_end());
          // A buffer yielded out of a region (scf.if, scf.for) lives on as
          // the parent's result.
          if (user->hasTrait<OpTrait::IsTerminator>() && user->getParentOp() &&
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
      buffers[i].offset = placement.offsets[i];
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
