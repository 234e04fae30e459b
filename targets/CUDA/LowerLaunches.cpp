//===- LowerLaunches.cpp - gpu.launch_func as calls of the runtime --------===//
//
// The library does not use MLIR's GPU runtime wrappers: its runtime loads
// the driver itself (runtime/cuda/), so that a library without a driver
// starts and says why, and every failure is a status. A launch is a call of
// cuvil_rt_cuda_launch with the kernel's number and its parameters as
// 8-byte slots (model_abi.h).
//
//===----------------------------------------------------------------------===//
#include "targets/CUDA/Passes.h"

#include "targets/CUDA/Buffers.h"

#include "dialects/Cuvil/IR/CuvilDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::cuvil::cuda {
#define GEN_PASS_DEF_CUDALOWERLAUNCHESPASS
#include "targets/CUDA/Passes.h.inc"
} // namespace mlir::cuvil::cuda

using namespace mlir;

namespace {

constexpr StringLiteral kLaunch = "cuvil_rt_cuda_launch";
constexpr StringLiteral kGlobal = "cuvil_rt_cuda_global";

void declare(ModuleOp module, StringRef name, FunctionType type) {
  if (module.lookupSymbol(name))
    return;
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  auto f = b.create<func::FuncOp>(module.getLoc(), name, type);
  f.setPrivate();
}

struct CudaLowerLaunchesPass final : cuvil::cuda::impl::CudaLowerLaunchesPassBase<CudaLowerLaunchesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    // Kernels numbered in module order.
    llvm::StringMap<int> numberOf; // "module::func"
    int next = 0;
    for (auto gpuModule : module.getOps<gpu::GPUModuleOp>())
      for (auto kernel : gpuModule.getOps<gpu::GPUFuncOp>())
        if (kernel.isKernel())
          numberOf[(gpuModule.getName() + "::" + kernel.getName()).str()] = next++;

    Type i64 = IntegerType::get(ctx, 64), i32 = IntegerType::get(ctx, 32), index = IndexType::get(ctx);
    // The slots go to the runtime as a bare pointer (a static shape).
    auto slots = MemRefType::get({1}, i64);
    bool any = false;
    WalkResult walked = module.walk([&](gpu::LaunchFuncOp launch) {
      any = true;
      std::string key = (launch.getKernelModuleName().getValue() + "::" + launch.getKernelName().getValue()).str();
      auto it = numberOf.find(key);
      if (it == numberOf.end()) {
        launch.emitError() << "launch of an unknown kernel " << key;
        return WalkResult::interrupt();
      }
      OpBuilder b(launch);
      Location loc = launch.getLoc();
      SmallVector<Value> params;
      for (Value arg : launch.getKernelOperands()) {
        Type t = arg.getType();
        if (auto buffer = dyn_cast<MemRefType>(t)) {
          auto meta = b.create<memref::ExtractStridedMetadataOp>(loc, arg);
          Value pointer = b.create<memref::ExtractAlignedPointerAsIndexOp>(loc, arg);
          if (memref::GetGlobalOp global = cuvil::cuda::constantRoot(arg)) {
            int64_t bytes = cuvil::cuda::bufferBytes(cast<MemRefType>(global.getType()));
            pointer = b.create<func::CallOp>(loc, kGlobal, TypeRange{index},
                                             ValueRange{pointer, b.create<arith::ConstantIntOp>(loc, bytes, 64)})
                          .getResult(0);
          }
          Value asInt = b.create<arith::IndexCastOp>(loc, i64, pointer);
          params.push_back(asInt); // allocated
          params.push_back(asInt); // aligned
          params.push_back(b.create<arith::IndexCastOp>(loc, i64, meta.getOffset()));
          for (Value s : meta.getSizes())
            params.push_back(b.create<arith::IndexCastOp>(loc, i64, s));
          for (Value s : meta.getStrides())
            params.push_back(b.create<arith::IndexCastOp>(loc, i64, s));
          (void)buffer;
        } else if (t.isIndex()) {
          params.push_back(b.create<arith::IndexCastOp>(loc, i64, arg));
        } else if (auto integer = dyn_cast<IntegerType>(t); integer && integer.getWidth() <= 64) {
          params.push_back(integer.getWidth() == 64 ? arg : b.create<arith::ExtUIOp>(loc, i64, arg).getResult());
        } else if (auto flt = dyn_cast<FloatType>(t); flt && flt.getWidth() <= 64) {
          Value bits = b.create<arith::BitcastOp>(loc, IntegerType::get(ctx, flt.getWidth()), arg);
          params.push_back(flt.getWidth() == 64 ? bits : b.create<arith::ExtUIOp>(loc, i64, bits).getResult());
        } else {
          launch.emitError() << "a kernel argument of type " << t << " (the CUDA target passes buffers and scalars)";
          return WalkResult::interrupt();
        }
      }
      // The kernel's parameter count as this launch lays it out: the
      // serialization checks it against the NVVM lowering's.
      auto kernelFunc = SymbolTable::lookupNearestSymbolFrom<gpu::GPUFuncOp>(launch, launch.getKernel());
      if (kernelFunc) {
        auto previous = kernelFunc->getAttrOfType<IntegerAttr>("cuvil.param_slots");
        if (previous && previous.getInt() != int64_t(params.size())) {
          launch.emitError() << "two launches of one kernel lay out " << previous.getInt() << " and "
                             << params.size() << " parameters";
          return WalkResult::interrupt();
        }
        kernelFunc->setAttr("cuvil.param_slots", b.getI64IntegerAttr(int64_t(params.size())));
      }
      int64_t count = std::max<int64_t>(1, params.size());
      Value array = b.create<memref::AllocaOp>(loc, MemRefType::get({count}, i64));
      for (auto [i, p] : llvm::enumerate(params))
        b.create<memref::StoreOp>(loc, p, array, ValueRange{b.create<arith::ConstantIndexOp>(loc, i)});
      array = b.create<memref::ReinterpretCastOp>(loc, slots, array, /*offset=*/0, ArrayRef<int64_t>{1},
                                                  ArrayRef<int64_t>{1});
      auto toI64 = [&](Value v) { return b.create<arith::IndexCastOp>(loc, i64, v).getResult(); };
      gpu::KernelDim3 grid = launch.getGridSizeOperandValues(), block = launch.getBlockSizeOperandValues();
      b.create<func::CallOp>(loc, kLaunch, TypeRange{},
                             ValueRange{b.create<arith::ConstantIntOp>(loc, it->second, 32), toI64(grid.x),
                                        toI64(grid.y), toI64(grid.z), toI64(block.x), toI64(block.y),
                                        toI64(block.z), array,
                                        b.create<arith::ConstantIntOp>(loc, int64_t(params.size()), 32)});
      launch.erase();
      return WalkResult::advance();
    });
    if (walked.wasInterrupted())
      return signalPassFailure();
    if (!any)
      return;
    declare(module, kLaunch, FunctionType::get(ctx, {i32, i64, i64, i64, i64, i64, i64, slots, i32}, {}));
    declare(module, kGlobal, FunctionType::get(ctx, {index, i64}, {index}));
    // The kernels by number, for the serialization and the runtime.
    for (auto gpuModule : module.getOps<gpu::GPUModuleOp>())
      for (auto kernel : gpuModule.getOps<gpu::GPUFuncOp>())
        if (kernel.isKernel()) {
          int n = numberOf[(gpuModule.getName() + "::" + kernel.getName()).str()];
          kernel.setName(("cuvil_cuda_k" + llvm::Twine(n)).str());
        }
  }
};

} // namespace
