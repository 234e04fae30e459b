//===- CuvilToLinalg.cpp - The convert-cuvil-to-linalg pass ---------------===//
#include "passes/Conversion/CuvilToLinalg/CuvilToLinalg.h"

#include "dialects/Cuvil/IR/CuvilOps.h"
#include "passes/Conversion/CuvilToLinalg/LoweringUtils.h"
#include "passes/Conversion/CuvilToLinalg/Patterns.h"
#include "passes/Conversion/CuvilToLinalg/RuntimeChecks.h"
#include "passes/Conversion/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_CONVERTCUVILTOLINALGPASS
#include "passes/Conversion/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;
using namespace mlir::cuvil;

namespace {

/// Fusion survives the conversion: each fusion group's body moves into an
/// scf.execute_region (the conversion lowers the ops inside it like any
/// other), its element-wise ops are fused into one linalg.generic there,
/// and the region is then inlined. A group whose result type the converter
/// changes (ui8) is inlined at once, unfused.
SmallVector<scf::ExecuteRegionOp> openFusionGroups(ModuleOp module, const TypeConverter &converter) {
  SmallVector<FusedGroupOp> groups;
  module.walk([&](FusedGroupOp g) { groups.push_back(g); });
  SmallVector<scf::ExecuteRegionOp> regions;
  for (FusedGroupOp g : groups) {
    Type type = g.getResult().getType();
    if (!converter.isLegal(type)) {
      g.inlineBody();
      continue;
    }
    OpBuilder b(g);
    auto region = b.create<scf::ExecuteRegionOp>(g.getLoc(), TypeRange{type});
    Block *block = b.createBlock(&region.getRegion());
    IRMapping map;
    for (auto [arg, input] : llvm::zip(g.getBody().front().getArguments(), g.getInputs()))
      map.map(arg, input);
    for (Operation &op : g.getBody().front().without_terminator())
      b.clone(op, map);
    b.create<scf::YieldOp>(g.getLoc(), map.lookup(g.getYielded()));
    g.getResult().replaceAllUsesWith(region.getResult(0));
    g.erase();
    regions.push_back(region);
  }
  return regions;
}

/// Fuses the element-wise linalg.generic ops of each group (producer and
/// consumer both inside it, the producer used once) and inlines the
/// regions.
LogicalResult fuseAndCloseGroups(MLIRContext *ctx, ArrayRef<scf::ExecuteRegionOp> regions) {
  RewritePatternSet patterns(ctx);
  linalg::populateElementwiseOpsFusionPatterns(patterns, [](OpOperand *use) {
    Operation *producer = use->get().getDefiningOp();
    return producer && producer->hasOneUse() &&
           producer->getParentRegion() == use->getOwner()->getParentRegion() &&
           llvm::isa<scf::ExecuteRegionOp>(producer->getParentOp());
  });
  FrozenRewritePatternSet frozen(std::move(patterns));
  IRRewriter rewriter(ctx);
  for (scf::ExecuteRegionOp region : regions) {
    (void)applyPatternsAndFoldGreedily(region.getRegion(), frozen);
    Block &block = region.getRegion().front();
    auto yield = llvm::cast<scf::YieldOp>(block.getTerminator());
    SmallVector<Value> results(yield.getOperands());
    rewriter.eraseOp(yield);
    rewriter.inlineBlockBefore(&block, region);
    rewriter.replaceOp(region, results);
  }
  return success();
}

} // namespace

TypeConverter mlir::cuvil::createCuvilToLinalgTypeConverter() { return lowering::makeTypeConverter(); }

void mlir::cuvil::populateCuvilToLinalgPatterns(TypeConverter &converter,
                                               RewritePatternSet &patterns) {
  lowering::populateElementwiseLowering(converter, patterns);
  lowering::populateGemmLowering(converter, patterns);
  lowering::populateConvPoolLowering(converter, patterns);
  lowering::populateReductionLowering(converter, patterns);
  lowering::populateShapeLowering(converter, patterns);
  lowering::populateIndexingLowering(converter, patterns);
  lowering::populateEffectLowering(converter, patterns);
  lowering::populateRuntimeCallLowering(converter, patterns);
  lowering::populateQuantLowering(converter, patterns);
  populateFunctionOpInterfaceTypeConversionPattern<func::FuncOp>(patterns, converter);
  populateReturnOpTypeConversionPattern(patterns, converter);
  populateCallOpTypeConversionPattern(patterns, converter);
}

void mlir::cuvil::configureCuvilToLinalgTarget(ConversionTarget &target,
                                              TypeConverter &converter,
                                              RewritePatternSet &patterns) {
  target.addLegalDialect<linalg::LinalgDialect, tensor::TensorDialect, arith::ArithDialect,
                         math::MathDialect, bufferization::BufferizationDialect>();
  target.addIllegalDialect<CuvilDialect>();
  target.addLegalOp<ModuleOp, UnrealizedConversionCastOp>();
  // Ops of other dialects a target put in before (e.g. calls of runtime
  // kernels on buffers) stay as they are.
  target.markUnknownOpDynamicallyLegal(
      [](Operation *op) { return !llvm::isa<CuvilDialect>(op->getDialect()); });
  target.addDynamicallyLegalOp<func::FuncOp>([&converter](func::FuncOp f) {
    return converter.isSignatureLegal(f.getFunctionType()) && converter.isLegal(&f.getBody());
  });
  target.addDynamicallyLegalOp<func::ReturnOp, func::CallOp>(
      [&converter](Operation *op) { return converter.isLegal(op); });
  scf::populateSCFStructuralTypeConversionsAndLegality(converter, patterns, target);
}

namespace {

struct ConvertCuvilToLinalgPass final
    : mlir::cuvil::impl::ConvertCuvilToLinalgPassBase<ConvertCuvilToLinalgPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    TypeConverter converter = createCuvilToLinalgTypeConverter();
    SmallVector<scf::ExecuteRegionOp> groups = openFusionGroups(module, converter);
    for (func::FuncOp f : module.getOps<func::FuncOp>())
      lowering::numberRuntimeChecks(f);

    RewritePatternSet patterns(ctx);
    populateCuvilToLinalgPatterns(converter, patterns);
    ConversionTarget target(*ctx);
    configureCuvilToLinalgTarget(target, converter, patterns);

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
    if (failed(fuseAndCloseGroups(ctx, groups)))
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
