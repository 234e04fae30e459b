//===- CpuPipeline.cpp - cuvil IR to the LLVM dialect for CPUs ------------===//
#include "targets/CPU/CpuPipeline.h"

#include "dialects/Cuvil/Transforms/Passes.h"
#include "passes/Conversion/Passes.h"
#include "targets/CPU/Passes.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToFuncs/MathToFuncs.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotAnalysis.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

namespace mlir::cuvil {

void registerCpuLoweringDialects(DialectRegistry &registry) {
  registry.insert<affine::AffineDialect, arith::ArithDialect, bufferization::BufferizationDialect,
                  cf::ControlFlowDialect, func::FuncDialect, linalg::LinalgDialect,
                  LLVM::LLVMDialect, math::MathDialect, memref::MemRefDialect, scf::SCFDialect,
                  tensor::TensorDialect>();
  arith::registerBufferizableOpInterfaceExternalModels(registry);
  linalg::registerBufferizableOpInterfaceExternalModels(registry);
  scf::registerBufferizableOpInterfaceExternalModels(registry);
  tensor::registerBufferizableOpInterfaceExternalModels(registry);
  bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
}

void buildCpuKernelChoicePipeline(OpPassManager &pm, const std::string &tuningDb, const std::string &device,
                                  uint64_t cacheBytes, bool remarks) {
  ChooseCpuKernelsPassOptions options;
  options.remarks = remarks;
  options.tuningDb = tuningDb;
  options.device = device;
  // A middle tensor past half the core's L2 would leave it between the two
  // convolutions (the default, 1 MiB, is half of the 2 MiB it was measured on).
  if (cacheBytes > 0)
    options.fuseDepthwiseMinBytes = int64_t(cacheBytes / 2);
  pm.addPass(createChooseCpuKernelsPass(options));
}

void buildCpuLoweringPipeline(OpPassManager &pm, bool instrument, bool testOverlapBuffers,
                              const std::function<void(OpPassManager &)> &deviceCode) {
  pm.addPass(createCountBranchesPass());
  pm.addPass(createSelectCpuKernelsPass());
  pm.addPass(createConvertCuvilToLinalgPass());
  // Element-wise loop nests over contiguous dimensions as one loop (long
  // enough for the vectorizer).
  pm.addNestedPass<func::FuncOp>(createCollapseParallelDimsPass());
  // Canonicalization that checks what it does to the model's branches.
  pm.addPass(createCuvilCanonicalizePass());
  pm.addPass(createProtectModelArgumentsPass());

  // Tensors to buffers: function boundaries too, identity layouts so that
  // the bare-pointer calling convention applies, copies as linalg.copy
  // (memref.copy of strided buffers would need MLIR's C runner library).
  bufferization::OneShotBufferizationOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  // A data-dependent loop hands each iteration's new buffers on; the arena
  // pass gives them places of their own (AllocsToArena.cpp).
  bufferize.allowReturnAllocsFromLoops = true;
  bufferize.setFunctionBoundaryTypeConversion(bufferization::LayoutMapOption::IdentityLayoutMap);
  bufferize.unknownTypeConverterFn = [](Value value, Attribute memorySpace,
                                        const bufferization::BufferizationOptions &) {
    return bufferization::getMemRefTypeWithStaticIdentityLayout(
        llvm::cast<TensorType>(value.getType()), memorySpace);
  };
  bufferize.memCpyFn = [](OpBuilder &b, Location loc, Value from, Value to) {
    b.create<linalg::CopyOp>(loc, from, to);
    return success();
  };
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  pm.addPass(bufferization::createDropEquivalentBufferResultsPass());
  bufferization::BufferResultsToOutParamsOpts outParams;
  outParams.hoistStaticAllocs = true;
  outParams.memCpyFn = [](OpBuilder &b, Location loc, Value from, Value to) {
    b.create<linalg::CopyOp>(loc, from, to);
    return success();
  };
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  pm.addPass(createCuvilCanonicalizePass());
  AllocsToArenaPassOptions arena;
  arena.testOverlapBuffers = testOverlapBuffers;
  pm.addPass(createAllocsToArenaPass(arena));
  // The placement checked again, by a derivation of its own.
  pm.addPass(createVerifyLifetimesPass());
  pm.addPass(createEmptyBufferArgumentsPass());
  pm.addPass(createRunTimeShapeArgumentsPass());

  // Loops (the outer parallel ones on the thread pool), then the LLVM
  // dialect.
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  // Index arithmetic out of the loops first: accumulators are found by
  // indices defined outside them.
  pm.addPass(createLoopInvariantCodeMotionPass());
  pm.addPass(createPromoteAccumulatorsPass());
  pm.addNestedPass<func::FuncOp>(createHoistRowLoadsPass());
  if (deviceCode)
    deviceCode(pm);
  pm.addPass(createParallelizeLoopsPass());
  if (instrument)
    pm.addPass(createInstrumentKernelsPass());
  pm.addPass(createOutlineKernelsPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createConvertSCFToCFPass());
  // exp as arithmetic the vectorizer widens (not a libm call per element).
  pm.addNestedPass<func::FuncOp>(createExpandExpPass());
  pm.addPass(createConvertMathToFuncs()); // integer powers
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass()); // erf, tanh, log1p, ...: libm
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  // floordivsi, ceildivsi have no LLVM counterpart: expand them (float
  // min/max stay, for LLVM's intrinsics, which vectorize).
  pm.addPass(createExpandArithPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  ConvertFuncToLLVMPassOptions funcOptions;
  funcOptions.useBarePtrCallConv = true;
  pm.addPass(createConvertFuncToLLVMPass(funcOptions));
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
}

namespace {
struct LowerToLlvmOptions : public PassPipelineOptions<LowerToLlvmOptions> {
  Option<bool> testOverlapBuffers{*this, "test-overlap-buffers",
                                  llvm::cl::desc("plant a placement bug (every buffer at offset 0) that "
                                                 "cuvil-verify-lifetimes must catch"),
                                  llvm::cl::init(false)};
};
} // namespace

void registerCpuLoweringPipeline() {
  registerCPUPasses();
  PassPipelineRegistration<LowerToLlvmOptions>(
      "cuvil-lower-to-llvm",
      "Lowers cuvil IR (after the graph pipeline) to the LLVM dialect for CPUs: kernel "
      "choice (ops with a #cuvil.kernel keep it), linalg, bufferization, one arena for "
      "intermediates (its placement checked by cuvil-verify-lifetimes), loops, bare-pointer functions",
      [](OpPassManager &pm, const LowerToLlvmOptions &options) {
        buildCpuKernelChoicePipeline(pm);
        buildCpuLoweringPipeline(pm, /*instrument=*/false, options.testOverlapBuffers);
      });
}

} // namespace mlir::cuvil
