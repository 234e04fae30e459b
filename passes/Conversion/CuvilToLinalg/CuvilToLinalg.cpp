//===- CuvilToLinalg.cpp - The convert-cuvil-to-linalg pass ---------------===//
#include "dialects/Cuvil/IR/CuvilOps.h"
#include "passes/Conversion/CuvilToLinalg/LoweringUtils.h"
#include "passes/Conversion/CuvilToLinalg/Patterns.h"
#include "passes/Conversion/CuvilToLinalg/RuntimeChecks.h"
#include "passes/Conversion/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_CONVERTCUVILTOLINALGPASS
#include "passes/Conversion/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;
using namespace mlir::cuvil;

namespace {

/// Replaces each fusion group by its body: the ops stay adjacent, in order,
/// which is what the later tiling and fusion work from.
void inlineFusionGroups(ModuleOp module) {
  SmallVector<FusedGroupOp> groups;
  module.walk([&](FusedGroupOp g) { groups.push_back(g); });
  for (FusedGroupOp g : groups)
    g.inlineBody();
}

struct ConvertCuvilToLinalgPass final
    : mlir::cuvil::impl::ConvertCuvilToLinalgPassBase<ConvertCuvilToLinalgPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    inlineFusionGroups(module);
    for (func::FuncOp f : module.getOps<func::FuncOp>())
      lowering::numberRuntimeChecks(f);

    TypeConverter converter = lowering::makeTypeConverter();
    RewritePatternSet patterns(ctx);
    lowering::populateElementwiseLowering(converter, patterns);
    lowering::populateGemmLowering(converter, patterns);
    lowering::populateConvPoolLowering(converter, patterns);
    lowering::populateReductionLowering(converter, patterns);
    lowering::populateShapeLowering(converter, patterns);
    lowering::populateIndexingLowering(converter, patterns);
    lowering::populateEffectLowering(converter, patterns);
    lowering::populateRuntimeCallLowering(converter, patterns);

    ConversionTarget target(*ctx);
    target.addLegalDialect<linalg::LinalgDialect, tensor::TensorDialect, arith::ArithDialect,
                           math::MathDialect, bufferization::BufferizationDialect>();
    target.addIllegalDialect<CuvilDialect>();
    target.addLegalOp<ModuleOp, UnrealizedConversionCastOp>();
    // Ops of other dialects a target put in before (e.g. calls of runtime
    // kernels on buffers) stay as they are.
    target.markUnknownOpDynamicallyLegal(
        [](Operation *op) { return !llvm::isa<CuvilDialect>(op->getDialect()); });
    populateFunctionOpInterfaceTypeConversionPattern<func::FuncOp>(patterns, converter);
    populateReturnOpTypeConversionPattern(patterns, converter);
    populateCallOpTypeConversionPattern(patterns, converter);
    target.addDynamicallyLegalOp<func::FuncOp>([&](func::FuncOp f) {
      return converter.isSignatureLegal(f.getFunctionType()) &&
             converter.isLegal(&f.getBody());
    });
    target.addDynamicallyLegalOp<func::ReturnOp, func::CallOp>(
        [&](Operation *op) { return converter.isLegal(op); });
    scf::populateSCFStructuralTypeConversionsAndLegality(converter, patterns, target);

    // Report every op the code generator does not handle, at its source
    // location, rather than the conversion's first failure.
    bool unsupported = false;
    module.walk([&](Operation *op) {
      if (!llvm::isa<CuvilDialect>(op->getDialect()))
        return;
      bool handled = false;
      for (const auto &p : patterns.getNativePatterns())
        if (p->getRootKind() == op->getName()) {
          handled = true;
          break;
        }
      if (!handled) {
        op->emitError() << "'" << op->getName()
                        << "' is not supported by the CPU code generator yet";
        unsupported = true;
      }
    });
    if (unsupported)
      return signalPassFailure();
    if (failed(applyFullConversion(module, target, std::move(patterns))))
      return signalPassFailure();
    for (func::FuncOp f : module.getOps<func::FuncOp>())
      if (failed(lowering::addStatusResult(f)))
        return signalPassFailure();
  }
};

} // namespace

void mlir::cuvil::registerConversionPasses() {
  registerConvertCuvilToLinalgPass();
}
