//===- PlanMemory.cpp - One arena per function, reused by liveness --------===//
#include "dialects/Cuvil/Analysis/Lifetimes.h"

#include "dialects/Cuvil/IR/CuvilOps.h"
#include "dialects/Cuvil/Transforms/Passes.h"
#include "support/ArenaPlacement.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_CUVILPLANMEMORYPASS
#define GEN_PASS_DEF_CUVILCHECKLIFETIMESPASS
#include "dialects/Cuvil/Transforms/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;
using namespace mlir::cuvil;

namespace {

constexpr int64_t kAlignment = 64;
constexpr llvm::StringLiteral kOffsetAttr = "cuvil.memory.offset";

int64_t alignUp(int64_t n) { return (n + kAlignment - 1) / kAlignment * kAlignment; }

/// A buffer of the arena: one or more storages chained by in-place updates.
struct Buffer {
  int64_t bytes = 0;
  int64_t start = 0, end = 0;
  int64_t offset = -1;
  SmallVector<Value> roots;
};

std::string humanBytes(int64_t bytes) {
  std::string s;
  llvm::raw_string_ostream os(s);
  if (bytes >= (int64_t(1) << 20))
    os << llvm::format("%.2f MiB", bytes / 1048576.0);
  else if (bytes >= 1024)
    os << llvm::format("%.1f KiB", bytes / 1024.0);
  else
    os << bytes << " B";
  return s;
}

struct CuvilPlanMemoryPass final
    : mlir::cuvil::impl::CuvilPlanMemoryPassBase<CuvilPlanMemoryPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (!func.getBody().hasOneBlock())
      return;
    FunctionLifetimes lifetimes(func);

    // In-place chains: a result shares its operand's buffer.
    llvm::EquivalenceClasses<void *> chains;
    llvm::DenseSet<void *> consumed; // a buffer can be taken over once
    int64_t inPlaceCount = 0;
    for (const Storage &s : lifetimes.storages())
      if (s.kind == StorageKind::Intermediate)
        chains.insert(s.root.getAsOpaquePointer());
    if (inPlace)
      for (Operation *op : lifetimes.ops())
        for (Value candidate : lifetimes.inPlaceCandidates(op)) {
          void *from = lifetimes.storageOf(candidate)->root.getAsOpaquePointer();
          if (consumed.contains(from))
            continue;
          consumed.insert(from);
          chains.unionSets(from, op->getResult(0).getAsOpaquePointer());
          ++inPlaceCount;
          break;
        }

    // One buffer per chain.
    llvm::DenseMap<void *, size_t> bufferOf;
    SmallVector<Buffer> buffers;
    int64_t total = 0;
    for (const Storage &s : lifetimes.storages()) {
      if (s.kind != StorageKind::Intermediate)
        continue;
      total += alignUp(s.bytes);
      void *leader = chains.getLeaderValue(s.root.getAsOpaquePointer());
      auto [it, fresh] = bufferOf.try_emplace(leader, buffers.size());
      if (fresh) {
        buffers.emplace_back();
        buffers.back().start = s.start;
        buffers.back().end = s.end;
      }
      Buffer &b = buffers[it->second];
      b.bytes = std::max(b.bytes, alignUp(s.bytes));
      b.start = std::min(b.start, s.start);
      b.end = std::max(b.end, s.end);
      b.roots.push_back(s.root);
    }

    if (testEndAtDefinition) // the planted bug: lives end at once
      for (Buffer &b : buffers)
        b.end = b.start;

    // Greedy by size: largest first, lowest offset free during its life.
    std::vector<::cuvil::LiveBuffer> live;
    for (const Buffer &b : buffers)
      live.push_back({b.bytes, b.start, b.end});
    ::cuvil::ArenaPlacement placement = ::cuvil::placeGreedyBySize(live);
    for (size_t i = 0; i < buffers.size(); ++i)
      buffers[i].offset = placement.offsets[i];
    int64_t arena = placement.arenaBytes;

    // The liveness lower bound: the most bytes live at one position.
    int64_t lowerBound = 0;
    for (size_t t = 0; t < lifetimes.ops().size(); ++t) {
      int64_t live = 0;
      for (const Buffer &b : buffers)
        if (b.start <= static_cast<int64_t>(t) && static_cast<int64_t>(t) <= b.end)
          live += b.bytes;
      lowerBound = std::max(lowerBound, live);
    }

    Builder builder(&getContext());
    for (const Buffer &b : buffers)
      for (Value root : b.roots)
        root.getDefiningOp()->setAttr(kOffsetAttr, builder.getI64IntegerAttr(b.offset));
    func->setAttr("cuvil.memory.arena_bytes", builder.getI64IntegerAttr(arena));
    func->setAttr("cuvil.memory.lower_bound_bytes", builder.getI64IntegerAttr(lowerBound));
    func->setAttr("cuvil.memory.total_bytes", builder.getI64IntegerAttr(total));
    numBuffers += buffers.size();
    numInPlace += inPlaceCount;

    if (report) {
      int64_t unplanned = 0;
      for (const Storage &s : lifetimes.storages())
        unplanned += s.kind == StorageKind::Unplanned;
      llvm::errs() << "cuvil-plan-memory: @" << func.getSymName() << ": " << buffers.size()
                   << " buffers (" << inPlaceCount << " results in place), arena "
                   << humanBytes(arena) << ", liveness lower bound " << humanBytes(lowerBound)
                   << llvm::format(" (arena/bound %.3fx)", lowerBound ? double(arena) / lowerBound : 1.0)
                   << ", all intermediates " << humanBytes(total)
                   << llvm::format(" (%.2fx the arena)", arena ? double(total) / arena : 1.0);
      if (unplanned)
        llvm::errs() << ", " << unplanned << " values left to their producers (dynamic shapes, control-flow results)";
      llvm::errs() << "\n";
    }
  }
};

struct CuvilCheckLifetimesPass final
    : mlir::cuvil::impl::CuvilCheckLifetimesPassBase<CuvilCheckLifetimesPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (!func.getBody().hasOneBlock())
      return;
    FunctionLifetimes lifetimes(func);
    struct Planned {
      const Storage *storage;
      int64_t offset;
    };
    SmallVector<Planned> planned;
    for (const Storage &s : lifetimes.storages()) {
      Operation *def = s.root.getDefiningOp();
      if (!def)
        continue;
      if (auto off = def->getAttrOfType<IntegerAttr>(kOffsetAttr)) {
        if (s.kind != StorageKind::Intermediate) {
          def->emitError() << "has a memory offset but its result is not an intermediate buffer";
          signalPassFailure();
          continue;
        }
        planned.push_back({&s, off.getInt()});
      }
    }
    for (size_t i = 0; i < planned.size(); ++i)
      for (size_t j = i + 1; j < planned.size(); ++j) {
        const Planned &a = planned[i], &b = planned[j]; // a starts no later than b
        bool bytesOverlap = a.offset < b.offset + b.storage->bytes &&
                            b.offset < a.offset + a.storage->bytes;
        if (!bytesOverlap || a.storage->end < b.storage->start)
          continue;
        // b's writer may overwrite a in place at a's last use.
        Operation *writer = b.storage->root.getDefiningOp();
        if (a.storage->end == b.storage->start && a.offset == b.offset &&
            llvm::any_of(lifetimes.inPlaceCandidates(writer), [&](Value v) {
              return lifetimes.storageOf(v) == a.storage;
            }))
          continue;
        // Find the first use of a after b's write, for the message.
        Operation *lateUse = nullptr;
        for (Operation *op : lifetimes.ops()) {
          int64_t at = lifetimes.position(op);
          if (at < b.storage->start || (at == b.storage->start && op == writer))
            continue;
          bool uses = false;
          op->walk([&](Operation *inner) {
            for (Value v : inner->getOperands())
              uses |= lifetimes.storageOf(v) == a.storage;
          });
          if (uses) {
            lateUse = op;
            break;
          }
        }
        InFlightDiagnostic d = writer->emitError()
                               << "overwrites bytes [" << a.offset << ", "
                               << a.offset + a.storage->bytes << ") of a tensor that is still used";
        d.attachNote(a.storage->root.getLoc()) << "the tensor is defined here";
        if (lateUse)
          d.attachNote(lateUse->getLoc())
              << "and used here, after its storage was reused ('" << lateUse->getName() << "')";
        signalPassFailure();
      }
  }
};

} // namespace
