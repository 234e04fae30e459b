//===- MapLoops.cpp - The CUDA copy of the model, its loops as launches ---===//
//
// cuvil-cuda-clone-entry copies each model function for the GPU;
// cuvil-cuda-map-loops splits the copy, once its tensors are loops on
// buffers, into host code (addresses and sizes) and gpu.launch ops (the
// rest). The outlining of the launches into kernels is MLIR's own
// (gpu-kernel-outlining).
//
//===----------------------------------------------------------------------===//
#include "targets/CUDA/Passes.h"

#include "targets/CUDA/Buffers.h"

#include "dialects/Cuvil/IR/CuvilDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::cuvil::cuda {
#define GEN_PASS_DEF_CUDACLONEENTRYPASS
#define GEN_PASS_DEF_CUDAMAPLOOPSPASS
#define GEN_PASS_DEF_CUDAEMULATELAUNCHESPASS
#include "targets/CUDA/Passes.h.inc"
} // namespace mlir::cuvil::cuda

using namespace mlir;

namespace {

bool isDeviceFunction(func::FuncOp f) {
  auto device = f->getAttrOfType<StringAttr>(cuvil::kDeviceFunctionAttrName);
  return device && device.getValue() == "cuda" && !f.isExternal();
}

struct CudaCloneEntryPass final : cuvil::cuda::impl::CudaCloneEntryPassBase<CudaCloneEntryPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    for (func::FuncOp f : llvm::to_vector(module.getOps<func::FuncOp>())) {
      if (f.isExternal() || !f.isPublic() || f->hasAttr(cuvil::kDeviceFunctionAttrName))
        continue;
      if (inPlace) {
        f->setAttr(cuvil::kDeviceFunctionAttrName, StringAttr::get(&getContext(), "cuda"));
        f.walk([](Operation *op) { op->removeAttr(cuvil::kKernelConfigAttrName); });
        continue;
      }
      std::string name = (f.getSymName() + cuvil::cuda::kCudaFunctionSuffix).str();
      if (symbols.lookup(name))
        continue; // copied before (the pass ran twice)
      func::FuncOp copy = f.clone();
      copy.setSymName(name);
      if (!keepCpu && llvm::all_of(f.getResultTypes(), [](Type t) {
            auto tensor = dyn_cast<RankedTensorType>(t);
            return tensor && tensor.hasStaticShape();
          })) {
        // --target cuda: the runtime never runs the CPU function (no
        // device is an error), so it only fills its results with zeros.
        f.getBody().getBlocks().clear();
        Block *body = f.addEntryBlock();
        OpBuilder b = OpBuilder::atBlockEnd(body);
        SmallVector<Value> results;
        for (Type t : f.getResultTypes()) {
          auto tensor = cast<RankedTensorType>(t);
          Type element = tensor.getElementType();
          Attribute zero = isa<FloatType>(element) ? Attribute(b.getFloatAttr(element, 0.0))
                                                   : Attribute(b.getIntegerAttr(element, 0));
          results.push_back(b.create<arith::ConstantOp>(f.getLoc(), DenseElementsAttr::get(tensor, zero)));
        }
        b.create<func::ReturnOp>(f.getLoc(), results);
      }
      copy->setAttr(cuvil::kDeviceFunctionAttrName, StringAttr::get(&getContext(), "cuda"));
      // The CPU's kernels are runtime calls on host memory: the copy takes
      // the general lowering of every op.
      copy.walk([](Operation *op) { op->removeAttr(cuvil::kKernelConfigAttrName); });
      symbols.insert(copy, std::next(Block::iterator(f)));
    }
  }
};

/// Ops that may stay in host code: they compute addresses and sizes from
/// host values, and touch no tensor data.
bool isHostKind(Operation *op) {
  if (op->getNumRegions() != 0)
    return false;
  if (isa<memref::GetGlobalOp, memref::DimOp, memref::ExtractStridedMetadataOp,
          memref::ExtractAlignedPointerAsIndexOp, memref::AssumeAlignmentOp>(op))
    return true;
  if (isa<ViewLikeOpInterface>(op) && isa<memref::MemRefDialect>(op->getDialect()))
    return true;
  // Constants and index or integer arithmetic.
  if (isPure(op) && isa<arith::ArithDialect, index::IndexDialect>(op->getDialect()))
    return true;
  return false;
}

struct CudaMapLoopsPass final : cuvil::cuda::impl::CudaMapLoopsPassBase<CudaMapLoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    for (func::FuncOp f : getOperation().getOps<func::FuncOp>())
      if (isDeviceFunction(f) && failed(mapFunction(f)))
        return signalPassFailure();
  }

  /// A launch to be: its ops in program order, the loads of values earlier
  /// launches left in device memory first. A parallel group is one
  /// scf.parallel (after its loads).
  struct Group {
    SmallVector<Operation *> ops;
    bool parallel = false;
  };

  /// Control flow the host runs: an scf.if, scf.for or scf.while that holds
  /// parallel loops (each a launch of its own inside it) or hands on
  /// buffers. The host reads the device scalars it needs (conditions,
  /// carried values) back.
  static bool isHostControl(Operation &op) {
    if (!isa<scf::IfOp, scf::ForOp, scf::WhileOp>(op))
      return false;
    if (llvm::any_of(op.getResultTypes(), [](Type t) { return isa<BaseMemRefType>(t); }))
      return true;
    bool parallel = false;
    op.walk([&](scf::ParallelOp) { parallel = true; });
    return parallel;
  }

  /// Splits `block` into host ops and groups (recursing into host control).
  void collect(Block &block, DenseMap<Operation *, int> &groupOf, SmallVector<Group> &groups) {
    bool open = false; // may the next sequential op join the last group?
    auto deviceDefined = [&](Value v) {
      Operation *def = v.getDefiningOp();
      return def && groupOf.count(def);
    };
    for (Operation &op : block.without_terminator()) {
      if (isHostControl(op)) {
        for (Region &r : op.getRegions())
          for (Block &b : r)
            collect(b, groupOf, groups);
        open = false;
        continue;
      }
      bool usesDevice = false;
      op.walk([&](Operation *inner) { usesDevice |= llvm::any_of(inner->getOperands(), deviceDefined); });
      // An op that picks a buffer (a select between two) runs on the host,
      // its device operands read back.
      bool picksBuffer = op.getNumRegions() == 0 && !isa<memref::AllocaOp, memref::AllocOp>(op) &&
                         llvm::any_of(op.getResultTypes(), [](Type t) { return isa<BaseMemRefType>(t); });
      // A kernel of the CPU runtime (FFT, sort) runs on the host, on copies
      // of its buffers (stageHostCalls).
      bool hostCall = isa<func::CallOp>(op);
      if ((isHostKind(&op) && !usesDevice) || picksBuffer || hostCall) {
        if (hostCall)
          open = false;
        continue;
      }
      bool parallel = isa<scf::ParallelOp>(op) && op.getNumResults() == 0;
      if (parallel || !open)
        groups.push_back(Group{{}, parallel});
      open = !parallel;
      groups.back().ops.push_back(&op);
      groupOf[&op] = int(groups.size()) - 1;
    }
  }

  LogicalResult mapFunction(func::FuncOp f) {
    if (!f.getBody().hasOneBlock())
      return f.emitError("the CUDA lowering expects the model function as one block");
    Block &body = f.getBody().front();
    // Ops that compute addresses and sizes from host values stay on the
    // host; each scf.parallel is a launch of its own; the other device ops
    // run in one-thread launches, consecutive ones together.
    DenseMap<Operation *, int> groupOf;
    SmallVector<Group> groups;
    collect(body, groupOf, groups);

    // A scalar one launch computes and a later one reads passes through
    // device memory of its own (a mutable global, which the runtime gives
    // each instance a device copy of); so does what the host reads back and
    // the model's status.
    OpBuilder atStart = OpBuilder::atBlockBegin(&body);
    ModuleOp module = f->getParentOfType<ModuleOp>();
    MLIRContext *ctx = module.getContext();
    SymbolTable symbols(module);
    DenseMap<Value, Value> spillOf; // value -> its global (host memref)
    auto spill = [&](Value v) -> FailureOr<Value> {
      if (auto it = spillOf.find(v); it != spillOf.end())
        return it->second;
      Operation *def = v.getDefiningOp();
      Type t = v.getType();
      if (!t.isIntOrIndexOrFloat())
        return def->emitError() << "'" << def->getName() << "' computes a " << t
                                << " on the device that another kernel or the host uses; the CUDA "
                                   "target passes scalars only";
      OpBuilder mb = OpBuilder::atBlockEnd(module.getBody());
      auto type = MemRefType::get({}, t);
      Attribute zero = t.isIndex() ? Attribute(mb.getIndexAttr(0))
                       : isa<FloatType>(t) ? Attribute(mb.getFloatAttr(t, 0.0))
                                           : Attribute(mb.getIntegerAttr(t, 0));
      auto global = mb.create<memref::GlobalOp>(
          def->getLoc(), (f.getSymName() + "_spill").str(), mb.getStringAttr("private"), type,
          DenseElementsAttr::get(RankedTensorType::get({}, t), zero), /*constant=*/false,
          /*alignment=*/nullptr);
      symbols.insert(global); // uniqued name
      Value handle = atStart.create<memref::GetGlobalOp>(def->getLoc(), type, global.getSymName());
      OpBuilder after(ctx);
      after.setInsertionPointAfter(def);
      auto store = after.create<memref::StoreOp>(def->getLoc(), v, handle);
      Group &g = groups[groupOf[def]];
      g.ops.insert(std::next(llvm::find(g.ops, def)), store);
      groupOf[store] = groupOf[def];
      spillOf[v] = handle;
      return handle;
    };
    auto devicePointer = [&](OpBuilder &b, Location loc, Value handle) {
      int64_t bytes = cuvil::cuda::bufferBytes(cast<MemRefType>(handle.getType()));
      Value pointer = b.create<memref::ExtractAlignedPointerAsIndexOp>(loc, handle);
      declare(module, "cuvil_rt_cuda_global",
              FunctionType::get(ctx, {b.getIndexType(), b.getI64Type()}, {b.getIndexType()}));
      Value device = b.create<func::CallOp>(loc, "cuvil_rt_cuda_global", TypeRange{b.getIndexType()},
                                            ValueRange{pointer, b.create<arith::ConstantIntOp>(loc, bytes, 64)})
                         .getResult(0);
      return std::make_pair(device, bytes);
    };
    // Device values read by a launch: loaded at its start.
    for (size_t position = 0; position < groups.size(); ++position) {
      int index = int(position);
      Group &group = groups[position];
      DenseMap<Value, Value> loaded;
      SmallVector<Operation *> loads;
      for (Operation *op : llvm::to_vector(group.ops)) {
        WalkResult walked = op->walk([&](Operation *inner) {
          for (OpOperand &use : inner->getOpOperands()) {
            Operation *def = use.get().getDefiningOp();
            if (!def || !groupOf.count(def) || groupOf[def] == index)
              continue;
            Value v = use.get();
            if (!loaded.count(v)) {
              FailureOr<Value> handle = spill(v);
              if (failed(handle))
                return WalkResult::interrupt();
              OpBuilder lb(group.ops.front());
              auto load = lb.create<memref::LoadOp>(def->getLoc(), *handle);
              loads.push_back(load);
              groupOf[load] = index;
              loaded[v] = load;
            }
            use.set(loaded[v]);
          }
          return WalkResult::advance();
        });
        if (walked.wasInterrupted())
          return failure();
      }
      group.ops.insert(group.ops.begin(), loads.begin(), loads.end());
    }
    // Device values the host reads: copied back (the run waits for them).
    SmallVector<OpOperand *> hostUses;
    f.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (groupOf.count(op))
        return WalkResult::skip();
      for (OpOperand &use : op->getOpOperands())
        if (Operation *def = use.get().getDefiningOp(); def && groupOf.count(def))
          hostUses.push_back(&use);
      return WalkResult::advance();
    });
    for (OpOperand *use : hostUses) {
      Operation *user = use->getOwner();
      Value v = use->get();
      FailureOr<Value> handle = spill(v);
      if (failed(handle))
        return failure();
      OpBuilder hb(user);
      Location loc = user->getLoc();
      if (emulate) { // one memory: the host reads the global itself
        use->set(hb.create<memref::LoadOp>(loc, *handle));
        continue;
      }
      auto [device, bytes] = devicePointer(hb, loc, *handle);
      if (isa<func::ReturnOp>(user)) {
        // The run-time checks' status: the runtime reads it after the run.
        if (!v.getType().isInteger(32))
          return v.getDefiningOp()->emitError("the model function returns a device value other than its status");
        declare(module, "cuvil_rt_cuda_status", FunctionType::get(ctx, {hb.getIndexType()}, {}));
        hb.create<func::CallOp>(loc, "cuvil_rt_cuda_status", TypeRange{}, ValueRange{device});
        use->set(hb.create<arith::ConstantIntOp>(loc, 0, 32));
        continue;
      }
      auto hostType = MemRefType::get({}, v.getType());
      Value host = atStart.create<memref::AllocaOp>(loc, hostType); // once, not per loop trip
      Value hostPointer = hb.create<memref::ExtractAlignedPointerAsIndexOp>(loc, host);
      declare(module, "cuvil_rt_cuda_read", FunctionType::get(ctx, {hb.getIndexType(), hb.getIndexType(), hb.getI64Type()}, {}));
      hb.create<func::CallOp>(loc, "cuvil_rt_cuda_read", TypeRange{},
                              ValueRange{device, hostPointer, hb.create<arith::ConstantIntOp>(loc, bytes, 64)});
      use->set(hb.create<memref::LoadOp>(loc, host));
    }
    for (Group &group : groups)
      if (failed(retargetDeviceCalls(group, module, emulate)) || failed(launch(group)))
        return failure();
    return emulate ? success() : stageHostCalls(f);
  }

  /// A CPU runtime kernel the model calls (the FFT, sort) runs on the host:
  /// its buffers are copied from the device before and back after (once
  /// the launches before it are done). The library's constants are read
  /// where they are.
  LogicalResult stageHostCalls(func::FuncOp f) {
    ModuleOp module = f->getParentOfType<ModuleOp>();
    MLIRContext *ctx = module.getContext();
    SmallVector<func::CallOp> calls;
    f.walk([&](func::CallOp call) {
      if (!call.getCallee().starts_with("cuvil_rt_cuda_") && !call->getParentOfType<gpu::LaunchOp>())
        calls.push_back(call);
    });
    for (func::CallOp call : calls) {
      OpBuilder b(call);
      Location loc = call.getLoc();
      Type index = b.getIndexType(), i64 = b.getI64Type();
      declare(module, "cuvil_rt_cuda_read", FunctionType::get(ctx, {index, index, i64}, {}));
      declare(module, "cuvil_rt_cuda_write", FunctionType::get(ctx, {index, index, i64}, {}));
      struct Staged {
        Value host, hostPointer, device, bytes;
      };
      SmallVector<Staged> staged;
      for (OpOperand &arg : call->getOpOperands()) {
        auto type = dyn_cast<MemRefType>(arg.get().getType());
        if (!type || cuvil::cuda::constantRoot(arg.get()))
          continue;
        if (!type.hasStaticShape() || !type.getLayout().isIdentity())
          return call.emitError() << "'" << call.getCallee() << "' (a kernel of the CPU runtime, run on the host "
                                  << "for the CUDA target) takes a " << type
                                  << ": only buffers of static shape and identity layout are copied to the host";
        int64_t bytes = cuvil::cuda::bufferBytes(type);
        Value host = b.create<memref::AllocOp>(loc, type);
        Value hostPointer = b.create<memref::ExtractAlignedPointerAsIndexOp>(loc, host);
        Value device = b.create<memref::ExtractAlignedPointerAsIndexOp>(loc, arg.get());
        Value size = b.create<arith::ConstantIntOp>(loc, bytes, 64);
        b.create<func::CallOp>(loc, "cuvil_rt_cuda_read", TypeRange{}, ValueRange{device, hostPointer, size});
        arg.set(host);
        staged.push_back({host, hostPointer, device, size});
      }
      b.setInsertionPointAfter(call);
      for (const Staged &s : staged) {
        b.create<func::CallOp>(loc, "cuvil_rt_cuda_write", TypeRange{}, ValueRange{s.hostPointer, s.device, s.bytes});
        b.create<memref::DeallocOp>(loc, s.host);
      }
    }
    return success();
  }

  /// Calls in device code: the C library's math functions become
  /// libdevice's (`hypotf` -> `__nv_hypotf`); nothing else can run there.
  static LogicalResult retargetDeviceCalls(const Group &group, ModuleOp module, bool emulate) {
    static const llvm::StringSet<> libm = {"erfc", "erfcf", "lgamma", "lgammaf", "hypot", "hypotf",
                                           "nextafter", "nextafterf"};
    for (Operation *op : group.ops) {
      WalkResult walked = op->walk([&](func::CallOp call) {
        if (libm.contains(call.getCallee())) {
          if (emulate) // the CPU runs them: the C library's
            return WalkResult::advance();
          std::string name = ("__nv_" + call.getCallee()).str();
          declare(module, name, call.getCalleeType());
          call.setCallee(name);
          return WalkResult::advance();
        }
        call.emitError() << "'" << call.getCallee()
                         << "' is a function of the CPU runtime; the CUDA target has no GPU version of "
                            "it yet (compile this model for x86_64)";
        return WalkResult::interrupt();
      });
      if (walked.wasInterrupted())
        return failure();
    }
    return success();
  }

  static void declare(ModuleOp module, StringRef name, FunctionType type) {
    if (module.lookupSymbol(name))
      return;
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    b.create<func::FuncOp>(module.getLoc(), name, type).setPrivate();
  }

  LogicalResult launch(Group &group) {
    ArrayRef<Operation *> ops = group.ops;
    Operation *last = ops.back();
    // Results used after the group (by host code) cannot leave the device.
    for (Operation *op : ops)
      for (Value r : op->getResults())
        for (Operation *user : r.getUsers())
          if (!llvm::any_of(ops, [&](Operation *g) { return g->isAncestor(user); }))
            return op->emitError() << "'" << op->getName()
                                   << "' computes a value on the device that host code uses ("
                                   << user->getName() << "); the CUDA target keeps shapes and "
                                                         "addresses on the host";
    if (group.parallel)
      return launchParallel(cast<scf::ParallelOp>(last), ops.drop_back());
    OpBuilder b(last);
    Location loc = last->getLoc();
    Value one = b.create<arith::ConstantIndexOp>(loc, 1);
    auto launchOp = b.create<gpu::LaunchOp>(loc, one, one, one, one, one, one);
    OpBuilder inside = OpBuilder::atBlockBegin(&launchOp.getBody().front());
    inside.create<gpu::TerminatorOp>(loc);
    Operation *end = &launchOp.getBody().front().back();
    for (Operation *op : ops)
      op->moveBefore(end);
    return success();
  }

  LogicalResult launchParallel(scf::ParallelOp loop, ArrayRef<Operation *> prologue) {
    OpBuilder b(loop);
    Location loc = loop.getLoc();
    // Trip counts on the host (folded where the bounds are constants).
    SmallVector<Value> counts;
    Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
    Value total = b.create<arith::ConstantIndexOp>(loc, 1);
    for (auto [lb, ub, step] : llvm::zip(loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
      Value span = b.createOrFold<arith::SubIOp>(loc, ub, lb);
      Value n = b.createOrFold<arith::CeilDivSIOp>(loc, span, step);
      n = b.createOrFold<arith::MaxSIOp>(loc, n, zero);
      counts.push_back(n);
      total = b.createOrFold<arith::MulIOp>(loc, total, n);
    }
    Value threads = b.create<arith::ConstantIndexOp>(loc, blockSize);
    Value blocks = b.createOrFold<arith::CeilDivSIOp>(loc, total, threads);
    Value one = b.create<arith::ConstantIndexOp>(loc, 1);
    std::optional<int64_t> staticTotal = getConstantIntValue(total);
    if (staticTotal && *staticTotal <= 0) {
      loop.erase(); // no iterations
      for (Operation *op : llvm::reverse(prologue))
        op->erase();
      return success();
    }
    if (!staticTotal) {
      // No iterations: no launch (a grid of 0 blocks is a launch error).
      Value any = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sgt, total, zero);
      auto guard = b.create<scf::IfOp>(loc, any, /*withElseRegion=*/false);
      b.setInsertionPointToStart(guard.thenBlock());
    }
    auto launchOp = b.create<gpu::LaunchOp>(loc, blocks, one, one, threads, one, one);
    Block &kernel = launchOp.getBody().front();
    OpBuilder k = OpBuilder::atBlockBegin(&kernel);
    Value linear = k.create<arith::AddIOp>(
        loc, k.create<arith::MulIOp>(loc, launchOp.getBlockIds().x, threads), launchOp.getThreadIds().x);
    Value inRange = k.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, linear, total);
    auto ifOp = k.create<scf::IfOp>(loc, inRange, /*withElseRegion=*/false);
    k.create<gpu::TerminatorOp>(loc);
    OpBuilder t = OpBuilder::atBlockBegin(ifOp.thenBlock());
    for (Operation *op : prologue)
      op->moveBefore(ifOp.thenBlock()->getTerminator());
    t.setInsertionPoint(ifOp.thenBlock()->getTerminator());
    IRMapping map;
    Value rest = linear;
    unsigned rank = loop.getNumLoops();
    SmallVector<Value> ivs(rank);
    for (int d = int(rank) - 1; d >= 0; --d) {
      Value index = d == 0 ? rest : t.create<arith::RemSIOp>(loc, rest, counts[d]);
      if (d > 0)
        rest = t.create<arith::DivSIOp>(loc, rest, counts[d]);
      ivs[d] = t.create<arith::AddIOp>(loc, loop.getLowerBound()[d],
                                      t.create<arith::MulIOp>(loc, index, loop.getStep()[d]));
    }
    for (unsigned d = 0; d < rank; ++d)
      map.map(loop.getInductionVars()[d], ivs[d]);
    for (Operation &op : loop.getBody()->without_terminator())
      t.clone(op, map);
    loop.erase();
    return success();
  }
};

struct CudaEmulateLaunchesPass final
    : cuvil::cuda::impl::CudaEmulateLaunchesPassBase<CudaEmulateLaunchesPass> {
  void runOnOperation() override {
    SmallVector<gpu::LaunchOp> launches;
    getOperation().walk([&](gpu::LaunchOp l) { launches.push_back(l); });
    for (gpu::LaunchOp launch : launches) {
      OpBuilder b(launch);
      Location loc = launch.getLoc();
      Value zero = b.create<arith::ConstantIndexOp>(loc, 0), one = b.create<arith::ConstantIndexOp>(loc, 1);
      gpu::KernelDim3 grid = launch.getGridSizeOperandValues(), block = launch.getBlockSizeOperandValues();
      gpu::KernelDim3 bids = launch.getBlockIds(), tids = launch.getThreadIds();
      gpu::KernelDim3 gsz = launch.getGridSize(), bsz = launch.getBlockSize();
      IRMapping map;
      // Blocks z, y, x, then threads z, y, x: nested loops, innermost x.
      Value bounds[6] = {grid.z, grid.y, grid.x, block.z, block.y, block.x};
      Value ids[6] = {bids.z, bids.y, bids.x, tids.z, tids.y, tids.x};
      Value sizes[6] = {gsz.z, gsz.y, gsz.x, bsz.z, bsz.y, bsz.x};
      for (int i = 0; i < 6; ++i)
        map.map(sizes[i], bounds[i]);
      OpBuilder inner = b;
      for (int i = 0; i < 6; ++i) {
        auto loop = inner.create<scf::ForOp>(loc, zero, bounds[i], one);
        map.map(ids[i], loop.getInductionVar());
        inner.setInsertionPoint(loop.getBody()->getTerminator());
      }
      for (Operation &op : launch.getBody().front().without_terminator())
        inner.clone(op, map);
      launch.erase();
    }
  }
};

} // namespace
