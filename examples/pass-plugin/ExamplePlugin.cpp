//===- ExamplePlugin.cpp - A Cuvil pass plugin ----------------------------===//
//
// Two passes that join Cuvil's graph pipeline:
//  - reciprocal-division (graph-optimization, priority 85, when the model
//    divides): x / c with a constant scalar c becomes x * (1 / c), the
//    rewrite a target without a fast divider wants (not bit-exact: the
//    product rounds once more than the quotient);
//  - mark-dynamic-shapes (shape-propagation, priority 15, only where the
//    function has run-time sizes): tags the function `example.dynamic`.
//
//===----------------------------------------------------------------------===//
#include "cuvil/Plugin.h"

#include "dialects/Cuvil/IR/CuvilOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

namespace {

using namespace mlir;
namespace cir = mlir::cuvil; // the cuvil dialect (::cuvil is Cuvil's own namespace)

struct ReciprocalDivision : PassWrapper<ReciprocalDivision, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ReciprocalDivision)
  StringRef getArgument() const override { return "example-reciprocal-division"; }
  StringRef getDescription() const override { return "x / c -> x * (1 / c) for a constant scalar c"; }

  void runOnOperation() override {
    SmallVector<cir::DivOp> divisions;
    getOperation().walk([&](cir::DivOp div) { divisions.push_back(div); });
    for (cir::DivOp div : divisions) {
      auto constant = div.getRhs().getDefiningOp<cir::ConstantOp>();
      auto value = constant ? llvm::dyn_cast<DenseElementsAttr>(constant.getValue()) : DenseElementsAttr();
      auto type = llvm::dyn_cast<RankedTensorType>(div.getType());
      if (!value || !value.isSplat() || !type || div.getRoundingMode() != cir::RoundingMode::None ||
          !value.getElementType().isF32() || div.getLhs().getType() != div.getType())
        continue;
      float c = value.getSplatValue<float>();
      OpBuilder b(div);
      auto inverseType = RankedTensorType::get(value.getType().getShape(), b.getF32Type());
      Value inverse = b.create<cir::ConstantOp>(div.getLoc(), DenseElementsAttr::get(inverseType, 1.0f / c));
      Value product = b.create<cir::MulOp>(div.getLoc(), div.getLhs(), inverse);
      div.replaceAllUsesWith(product);
      div.erase();
    }
  }
};

struct MarkDynamicShapes : PassWrapper<MarkDynamicShapes, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(MarkDynamicShapes)
  StringRef getArgument() const override { return "example-mark-dynamic-shapes"; }
  StringRef getDescription() const override { return "tags a function with run-time sizes"; }
  void runOnOperation() override {
    getOperation()->setAttr("example.dynamic", UnitAttr::get(&getContext()));
  }
};

void registerExamplePasses() {
  using namespace ::cuvil::plugin;
  // Also as plain passes: cuvil-opt --example-reciprocal-division.
  mlir::PassRegistration<ReciprocalDivision>();
  mlir::PassRegistration<MarkDynamicShapes>();

  PipelinePass division;
  division.name = "reciprocal-division";
  division.phase = Phase::GraphOptimization;
  division.priority = 85;
  division.description = "x / c -> x * (1 / c) for a constant scalar c";
  division.constraint = hasOp("cuvil.math.div") && dtypesIn({"f32"});
  division.factory = [] { return std::make_unique<ReciprocalDivision>(); };
  registerPass(division);

  PipelinePass dynamic;
  dynamic.name = "mark-dynamic-shapes";
  dynamic.phase = Phase::ShapePropagation;
  dynamic.priority = 15;
  dynamic.description = "tag functions with run-time sizes";
  dynamic.constraint = hasDynamicShapes();
  dynamic.factory = [] { return std::make_unique<MarkDynamicShapes>(); };
  registerPass(dynamic);
}

} // namespace

CUVIL_PLUGIN("cuvil-example-plugin", "1.0", registerExamplePasses)
