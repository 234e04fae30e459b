//===- Serialize.cpp - Kernels to PTX and cubins --------------------------===//
//
// The kernels of all gpu.modules become one NVVM module, linked with
// libdevice, compiled by LLVM's NVPTX back end for each architecture and,
// where the CUDA toolkit's ptxas is found, assembled into cubins (which is
// also the check that the PTX is valid). MLIR's own gpu-module-to-binary
// would work too, but it hides ptxas' messages and the runtime here loads
// images of its own format (model_abi.h).
//
//===----------------------------------------------------------------------===//
#include "targets/CUDA/Passes.h"
#include "targets/CUDA/Ptx.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

namespace mlir::cuvil::cuda {
#define GEN_PASS_DEF_CUDASERIALIZEKERNELSPASS
#include "targets/CUDA/Passes.h.inc"
} // namespace mlir::cuvil::cuda

using namespace mlir;

namespace {

struct CudaSerializeKernelsPass final
    : mlir::cuvil::cuda::impl::CudaSerializeKernelsPassBase<CudaSerializeKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    SmallVector<gpu::GPUModuleOp> gpuModules = llvm::to_vector(module.getOps<gpu::GPUModuleOp>());
    module->removeAttr(gpu::GPUDialect::getContainerModuleAttrName());
    if (gpuModules.empty()) {
      // A model without device work (all views): still a CUDA library.
      OpBuilder b(ctx);
      module->setAttr(mlir::cuvil::cuda::kCudaModuleAttrName,
                      b.getDictionaryAttr({b.getNamedAttr("cpu_fallback", b.getBoolAttr(cpuFallback)),
                                           b.getNamedAttr("kernels", b.getArrayAttr({})),
                                           b.getNamedAttr("images", b.getArrayAttr({}))}));
      return;
    }
    FailureOr<std::vector<std::string>> archList = mlir::cuvil::cuda::parseArchs(archs);
    if (failed(archList)) {
      module.emitError() << "archs: '" << archs << "' is not a list of sm_80, sm_86, sm_89, sm_90";
      return signalPassFailure();
    }

    // One gpu.module with every kernel (their names are unique: cuvil_cuda_kN)
    // and one copy of each helper function.
    gpu::GPUModuleOp merged = gpuModules.front();
    for (gpu::GPUModuleOp other : llvm::drop_begin(gpuModules)) {
      SymbolTable table(merged);
      for (Operation &op : llvm::make_early_inc_range(other.getBody()->without_terminator())) {
        auto symbol = dyn_cast<SymbolOpInterface>(&op);
        if (symbol && table.lookup(symbol.getName()))
          continue; // the same declaration or helper
        op.moveBefore(merged.getBody()->getTerminator());
      }
      other.erase();
    }
    std::vector<std::string> kernels;
    for (auto f : merged.getOps<gpu::GPUFuncOp>())
      if (f.isKernel())
        kernels.push_back(f.getName().str());
    std::sort(kernels.begin(), kernels.end(), [](const std::string &a, const std::string &b) {
      return std::stoi(a.substr(12)) < std::stoi(b.substr(12)); // cuvil_cuda_kN
    });

    // What each launch passes, to check against the lowered kernels.
    llvm::StringMap<int64_t> slots;
    for (auto f : merged.getOps<gpu::GPUFuncOp>())
      if (auto n = f->getAttrOfType<IntegerAttr>("cuvil.param_slots"))
        slots[f.getName()] = n.getInt();

    // NVVM.
    OpPassManager pm(ModuleOp::getOperationName());
    OpPassManager &kernelsPm = pm.nest<gpu::GPUModuleOp>();
    kernelsPm.addPass(memref::createExpandStridedMetadataPass());
    kernelsPm.addPass(createLowerAffinePass());
    kernelsPm.addPass(createConvertSCFToCFPass());
    kernelsPm.addPass(arith::createArithExpandOpsPass());
    ConvertGpuOpsToNVVMOpsOptions nvvm;
    nvvm.indexBitwidth = 64;
    kernelsPm.addPass(createConvertGpuOpsToNVVMOps(nvvm));
    // Math the NVVM lowering leaves (roundeven, ...): LLVM intrinsics, which
    // the NVPTX back end has.
    kernelsPm.addPass(createConvertMathToLLVMPass());
    kernelsPm.addPass(createReconcileUnrealizedCastsPass());
    kernelsPm.addPass(createCanonicalizerPass());
    if (failed(runPipeline(pm, module)))
      return signalPassFailure();

    // libdevice's functions by their own names (the lowering declares
    // external functions with the C-interface prefix; for scalar
    // signatures the two are the same function).
    for (auto f : llvm::to_vector(merged.getOps<LLVM::LLVMFuncOp>())) {
      StringRef name = f.getName();
      if (!f.isExternal() || !name.consume_front("_mlir_ciface_") || !name.starts_with("__nv_"))
        continue;
      std::string plain = name.str();
      if (failed(SymbolTable::replaceAllSymbolUses(f.getNameAttr(), StringAttr::get(ctx, plain), merged))) {
        f.emitError("renaming a libdevice function failed");
        return signalPassFailure();
      }
      if (SymbolTable::lookupSymbolIn(merged, plain))
        f.erase();
      else
        f.setName(plain);
    }

    // Every kernel takes exactly the 8-byte slots its launches fill.
    for (auto f : merged.getOps<LLVM::LLVMFuncOp>()) {
      auto it = slots.find(f.getName());
      if (it == slots.end())
        continue;
      bool narrow = llvm::all_of(f.getArgumentTypes(), [](Type t) {
        return isa<LLVM::LLVMPointerType>(t) || (t.isIntOrFloat() && t.getIntOrFloatBitWidth() <= 64);
      });
      if (int64_t(f.getNumArguments()) != it->second || !narrow) {
        f.emitError() << "kernel " << f.getName() << " takes " << f.getNumArguments()
                      << " parameters after the NVVM lowering, its launches pass " << it->second
                      << " 8-byte slots (a bug in cuvil-cuda-lower-launches)";
        return signalPassFailure();
      }
    }

    // LLVM IR: the module's functions in a module of their own.
    OpBuilder b(ctx);
    OwningOpRef<ModuleOp> device = ModuleOp::create(merged.getLoc());
    b.setInsertionPointToEnd(device->getBody());
    for (Operation &op : merged.getBody()->without_terminator())
      b.clone(op);
    merged.erase();
    llvm::LLVMContext llvmContext;
    std::unique_ptr<llvm::Module> llvmModule = translateModuleToLLVMIR(*device, llvmContext, "cuvil_cuda");
    if (!llvmModule) {
      module.emitError("translating the CUDA kernels to LLVM IR failed");
      return signalPassFailure();
    }

    if (ptxas != "none" && mlir::cuvil::cuda::findPtxas(ptxas).empty())
      module.emitWarning() << "no ptxas found (PATH, $CUDA_PATH/bin, /usr/local/cuda/bin): the library "
                              "carries PTX only, unchecked, for the driver to compile";
    mlir::cuvil::cuda::PtxOptions options;
    options.ptxas = ptxas;
    options.requirePtxas = requirePtxas;
    ::cuvil::Result<std::vector<mlir::cuvil::cuda::KernelImage>> images =
        mlir::cuvil::cuda::compileKernels(*llvmModule, kernels, *archList, options);
    if (!images) {
      module.emitError() << images.error().message;
      return signalPassFailure();
    }
    SmallVector<Attribute> imageAttrs;
    for (const mlir::cuvil::cuda::KernelImage &image : *images) {
      // The PTX of the newest architecture (for newer devices), and any
      // whose cubin is missing (no ptxas).
      bool newest = image.sm == images->back().sm;
      bool assembled = llvm::any_of(*images, [&](const mlir::cuvil::cuda::KernelImage &other) {
        return other.kind == mlir::cuvil::cuda::KernelImage::Cubin && other.sm == image.sm;
      });
      if (image.kind == mlir::cuvil::cuda::KernelImage::Ptx && !newest && assembled && !keepPtx)
        continue;
      imageAttrs.push_back(b.getDictionaryAttr(
          {b.getNamedAttr("kind", b.getStringAttr(image.kind == mlir::cuvil::cuda::KernelImage::Ptx ? "ptx" : "cubin")),
           b.getNamedAttr("sm", b.getI32IntegerAttr(image.sm)),
           b.getNamedAttr("data", b.getStringAttr(image.bytes))}));
    }
    SmallVector<Attribute> names;
    for (const std::string &k : kernels)
      names.push_back(b.getStringAttr(k));
    module->setAttr(mlir::cuvil::cuda::kCudaModuleAttrName,
                    b.getDictionaryAttr({b.getNamedAttr("cpu_fallback", b.getBoolAttr(cpuFallback)),
                                         b.getNamedAttr("kernels", b.getArrayAttr(names)),
                                         b.getNamedAttr("images", b.getArrayAttr(imageAttrs))}));
  }
};

} // namespace
