//===- ParallelizeLoops.cpp - Outer parallel loops onto the thread pool ---===//
//
// After bufferization, the linalg ops that are not runtime kernels become
// loop nests whose outer loops are scf.parallel. Each outermost scf.parallel
// with enough work is outlined into a function
//
//   func.func private @__cuvil_parallel_N(memref<64xi64> closure, i64 begin, i64 end)
//
// that runs iterations [begin, end) of its first dimension with more than
// one iteration (dimensions of one iteration before it: a batch of 1), and
// replaced by
// a call of the runtime's cuvil_rt_parallel_for_current(n, body, closure),
// which splits [0, n) over the threads of the model call in progress.
//
// Values the loop uses from outside travel in the closure (an alloca of 64
// i64 in the caller, alive until the call returns): scalars as bits,
// memrefs as the aligned pointer of their LLVM descriptor. The body rebuilds each memref as an LLVM
// descriptor (static shape, strides and offset, from the type) cast back to
// the memref type; the LLVM lowering folds that cast away. Constants and
// globals are cloned into the body instead of captured. Loops with dynamic
// bounds, reductions, too little work or captures of other types stay as
// they are.
//
//===----------------------------------------------------------------------===//
#include "targets/CPU/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_PARALLELIZELOOPSPASS
#include "targets/CPU/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {

constexpr int64_t kMaxCaptures = 64;
constexpr StringLiteral kRuntimeEntry = "cuvil_rt_parallel_for_current";

/// Whether `v` can travel through the closure as 64 bits.
bool capturable(Value v) {
  Type t = v.getType();
  if (auto m = llvm::dyn_cast<MemRefType>(t)) {
    int64_t offset;
    SmallVector<int64_t> strides;
    if (!m.hasStaticShape() || failed(getStridesAndOffset(m, strides, offset)) ||
        ShapedType::isDynamic(offset) ||
        llvm::any_of(strides, [](int64_t s) { return ShapedType::isDynamic(s); }))
      return false;
    return m.getMemorySpace() == nullptr;
  }
  if (t.isIndex() || t.isF32() || t.isF64())
    return true;
  if (auto i = llvm::dyn_cast<IntegerType>(t))
    return i.getWidth() <= 64;
  return false;
}

/// Constants are cheaper to recreate in the body than to pass. Globals (the
/// weights) are passed: a body that named them would be another function
/// for every layer, and change whenever a layer is added before it.
bool cloneable(Value v) {
  Operation *def = v.getDefiningOp();
  return def && def->getNumOperands() == 0 && def->getNumRegions() == 0 &&
         def->hasTrait<OpTrait::ConstantLike>();
}

/// The LLVM descriptor type of a memref (what the memref lowering uses).
Type descriptorType(MemRefType m) {
  MLIRContext *ctx = m.getContext();
  auto ptrType = LLVM::LLVMPointerType::get(ctx);
  Type i64 = IntegerType::get(ctx, 64);
  SmallVector<Type> fields{ptrType, ptrType, i64};
  if (m.getRank() > 0) {
    fields.push_back(LLVM::LLVMArrayType::get(i64, m.getRank()));
    fields.push_back(LLVM::LLVMArrayType::get(i64, m.getRank()));
  }
  return LLVM::LLVMStructType::getLiteral(ctx, fields);
}

Value toBits(OpBuilder &b, Location loc, Value v) {
  Type i64 = b.getI64Type();
  Type t = v.getType();
  if (auto m = llvm::dyn_cast<MemRefType>(t)) {
    // The descriptor's aligned pointer (field 1), as the memref lowering
    // keeps it: not memref.extract_aligned_pointer_as_index, which folds
    // through memref.view to the unshifted base.
    Value d = b.create<UnrealizedConversionCastOp>(loc, descriptorType(m), v).getResult(0);
    Value p = b.create<LLVM::ExtractValueOp>(loc, d, ArrayRef<int64_t>{1});
    return b.create<LLVM::PtrToIntOp>(loc, i64, p);
  }
  if (t.isIndex())
    return b.create<arith::IndexCastOp>(loc, i64, v);
  if (t.isF64())
    return b.create<arith::BitcastOp>(loc, i64, v);
  if (t.isF32())
    return b.create<arith::ExtUIOp>(loc, i64, b.create<arith::BitcastOp>(loc, b.getI32Type(), v));
  if (t.getIntOrFloatBitWidth() == 64)
    return v;
  return b.create<arith::ExtUIOp>(loc, i64, v);
}

Value fromBits(OpBuilder &b, Location loc, Value bits, Type t) {
  if (auto m = llvm::dyn_cast<MemRefType>(t)) {
    int64_t offset;
    SmallVector<int64_t> strides;
    (void)getStridesAndOffset(m, strides, offset);
    auto ptrType = LLVM::LLVMPointerType::get(b.getContext());
    Type i64 = b.getI64Type();
    Type descType = descriptorType(m);
    Value ptr = b.create<LLVM::IntToPtrOp>(loc, ptrType, bits);
    Value d = b.create<LLVM::UndefOp>(loc, descType);
    d = b.create<LLVM::InsertValueOp>(loc, d, ptr, ArrayRef<int64_t>{0});
    d = b.create<LLVM::InsertValueOp>(loc, d, ptr, ArrayRef<int64_t>{1});
    auto constant = [&](int64_t x) {
      return b.create<LLVM::ConstantOp>(loc, i64, b.getI64IntegerAttr(x));
    };
    d = b.create<LLVM::InsertValueOp>(loc, d, constant(offset), ArrayRef<int64_t>{2});
    for (int64_t i = 0; i < m.getRank(); ++i) {
      d = b.create<LLVM::InsertValueOp>(loc, d, constant(m.getDimSize(i)),
                                        ArrayRef<int64_t>{3, i});
      d = b.create<LLVM::InsertValueOp>(loc, d, constant(strides[i]), ArrayRef<int64_t>{4, i});
    }
    return b.create<UnrealizedConversionCastOp>(loc, t, d).getResult(0);
  }
  if (t.isIndex())
    return b.create<arith::IndexCastOp>(loc, t, bits);
  if (t.isF64())
    return b.create<arith::BitcastOp>(loc, t, bits);
  if (t.isF32())
    return b.create<arith::BitcastOp>(
        loc, t, b.create<arith::TruncIOp>(loc, b.getI32Type(), bits));
  if (t.getIntOrFloatBitWidth() == 64)
    return bits;
  return b.create<arith::TruncIOp>(loc, t, bits);
}

struct ParallelizeLoopsPass final
    : mlir::cuvil::impl::ParallelizeLoopsPassBase<ParallelizeLoopsPass> {
  using Base::Base;

  /// Iterations of each dimension, when every bound is a constant.
  static std::optional<SmallVector<int64_t>> tripCounts(scf::ParallelOp p) {
    SmallVector<int64_t> trips;
    for (auto [lb, ub, step] : llvm::zip(p.getLowerBound(), p.getUpperBound(), p.getStep())) {
      std::optional<int64_t> l = getConstantIntValue(lb), u = getConstantIntValue(ub),
                             s = getConstantIntValue(step);
      if (!l || !u || !s || *s <= 0)
        return std::nullopt;
      trips.push_back(*u > *l ? (*u - *l + *s - 1) / *s : 0);
    }
    return trips;
  }

  /// The dimension split over the threads: the first with more than one
  /// iteration, when every dimension before it has exactly one.
  static std::optional<unsigned> splitDim(scf::ParallelOp p) {
    std::optional<SmallVector<int64_t>> trips = tripCounts(p);
    if (!trips)
      return std::nullopt;
    for (auto [i, t] : llvm::enumerate(*trips)) {
      if (t > 1)
        return static_cast<unsigned>(i);
      if (t < 1)
        return std::nullopt;
    }
    return std::nullopt;
  }

  bool worthIt(scf::ParallelOp p) {
    if (!p.getInitVals().empty() || !splitDim(p))
      return false;
    std::optional<SmallVector<int64_t>> trips = tripCounts(p);
    int64_t iterations = 1;
    for (int64_t t : *trips)
      iterations *= t;
    int64_t ops = 0;
    p.getRegion().walk([&](Operation *) { ++ops; });
    // The innermost loops' trip counts multiply the work too, but a rough
    // bound is enough: below this, waking threads costs more than it saves.
    return iterations * ops >= minWork;
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<scf::ParallelOp> loops;
    module.walk([&](scf::ParallelOp p) {
      if (!p->getParentOfType<scf::ParallelOp>() && p->getParentOfType<func::FuncOp>() &&
          !p->getParentOfType<func::FuncOp>().getSymName().starts_with("__cuvil_parallel_") &&
          worthIt(p))
        loops.push_back(p);
    });
    for (scf::ParallelOp p : loops)
      outline(module, p);
  }

  void outline(ModuleOp module, scf::ParallelOp p) {
    SetVector<Value> used;
    getUsedValuesDefinedAbove(p.getRegion(), used);
    SmallVector<Value> captured, cloned;
    for (Value v : used) {
      if (cloneable(v))
        cloned.push_back(v);
      else if (capturable(v))
        captured.push_back(v);
      else
        return; // a value that cannot travel: stays serial
    }
    if (static_cast<int64_t>(captured.size()) > kMaxCaptures)
      return;

    MLIRContext *ctx = module.getContext();
    Location loc = p.getLoc();
    Type i64 = IntegerType::get(ctx, 64);
    auto closureType = MemRefType::get({kMaxCaptures}, i64);
    auto bodyType = FunctionType::get(ctx, {closureType, i64, i64}, {});

    // The body function.
    OpBuilder mb(ctx);
    mb.setInsertionPointToEnd(module.getBody());
    std::string name = "__cuvil_parallel_" + std::to_string(counter++);
    auto body = mb.create<func::FuncOp>(loc, name, bodyType);
    body.setPrivate();
    Block *entry = body.addEntryBlock();
    OpBuilder b = OpBuilder::atBlockBegin(entry);
    IRMapping map;
    for (Value v : cloned)
      map.map(v, b.clone(*v.getDefiningOp())->getResult(0));
    for (auto [i, v] : llvm::enumerate(captured)) {
      Value index = b.create<arith::ConstantIndexOp>(loc, static_cast<int64_t>(i));
      Value bits = b.create<memref::LoadOp>(loc, entry->getArgument(0), ValueRange{index});
      map.map(v, fromBits(b, loc, bits, v.getType()));
    }
    // Iterations [begin, end) of the split dimension.
    auto local = [&](Value v) {
      if (!map.contains(v))
        map.map(v, b.clone(*v.getDefiningOp())->getResult(0));
      return map.lookup(v);
    };
    unsigned dim = *splitDim(p);
    Value lb0 = local(p.getLowerBound()[dim]);
    Value ub0 = local(p.getUpperBound()[dim]);
    Value step0 = local(p.getStep()[dim]);
    Value begin = b.create<arith::IndexCastOp>(loc, b.getIndexType(), entry->getArgument(1));
    Value end = b.create<arith::IndexCastOp>(loc, b.getIndexType(), entry->getArgument(2));
    Value newLb = b.create<arith::AddIOp>(loc, lb0, b.create<arith::MulIOp>(loc, begin, step0));
    Value newUb = b.create<arith::MinSIOp>(
        loc, ub0, b.create<arith::AddIOp>(loc, lb0, b.create<arith::MulIOp>(loc, end, step0)));
    // (Not llvm::concat: operand ranges yield values, not references.)
    for (OperandRange bounds : {p.getLowerBound(), p.getUpperBound(), p.getStep()})
      for (Value v : bounds)
        local(v);
    auto clone = llvm::cast<scf::ParallelOp>(b.clone(*p, map));
    clone.getLowerBoundMutable()[dim].assign(newLb);
    clone.getUpperBoundMutable()[dim].assign(newUb);
    b.create<func::ReturnOp>(loc);

    // The call in place of the loop: the closure is filled where the loop
    // was, its buffer is allocated once at the function's entry.
    auto func = p->getParentOfType<func::FuncOp>();
    OpBuilder fb = OpBuilder::atBlockBegin(&func.getBody().front());
    Value closure = fb.create<memref::AllocaOp>(loc, closureType);
    OpBuilder cb(p);
    for (auto [i, v] : llvm::enumerate(captured)) {
      Value index = cb.create<arith::ConstantIndexOp>(loc, static_cast<int64_t>(i));
      cb.create<memref::StoreOp>(loc, toBits(cb, loc, v), closure, ValueRange{index});
    }
    Value fn = cb.create<func::ConstantOp>(loc, bodyType, SymbolRefAttr::get(ctx, name));
    int64_t trips0 = (*tripCounts(p))[dim];
    Value n = cb.create<arith::ConstantOp>(loc, i64, cb.getI64IntegerAttr(trips0));
    declareRuntime(module, bodyType, closureType);
    cb.create<func::CallOp>(loc, kRuntimeEntry, TypeRange{}, ValueRange{n, fn, closure});
    p.erase();
  }

  void declareRuntime(ModuleOp module, FunctionType bodyType, MemRefType closureType) {
    if (module.lookupSymbol(kRuntimeEntry))
      return;
    OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
    auto type = b.getFunctionType({b.getI64Type(), bodyType, closureType}, {});
    b.create<func::FuncOp>(module.getLoc(), kRuntimeEntry, type).setPrivate();
  }

  int64_t counter = 0;
};

} // namespace
