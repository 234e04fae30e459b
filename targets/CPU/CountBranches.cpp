//===- CountBranches.cpp - Count the runs of the model's branches ----------===//
//
// cuvil-verify compares which branches the samples take in the library and
// in the reference; the library counts them itself, in every build: a call
// as each arm starts is nothing beside the tensor work a branch guards.
//
//===----------------------------------------------------------------------===//
#include "dialects/Cuvil/IR/SourcePosition.h"
#include "dialects/Cuvil/IR/CuvilDialect.h"
#include "targets/CPU/Passes.h"
#include "targets/CPU/SiteTables.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_COUNTBRANCHESPASS
#include "targets/CPU/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {

struct CountBranchesPass final : mlir::cuvil::impl::CountBranchesPassBase<CountBranchesPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    OpBuilder b(&getContext());
    Type i64 = b.getI64Type();
    for (func::FuncOp f : llvm::to_vector(module.getOps<func::FuncOp>())) {
      if (f.isExternal() || f.isPrivate() || f->hasAttr(mlir::cuvil::kDeviceFunctionAttrName))
        continue;
      // Each arm's first op: the block it counts and its name.
      SmallVector<std::pair<Block *, std::string>> arms;
      f.walk([&](Operation *op) {
        if (auto ifOp = llvm::dyn_cast<scf::IfOp>(op)) {
          std::string then = mlir::cuvil::branchArmName(op, "if then");
          if (then.empty())
            return;
          if (ifOp.getElseRegion().empty()) { // an else that does nothing still counts
            OpBuilder eb(ifOp.getContext());
            Block *block = eb.createBlock(&ifOp.getElseRegion());
            eb.setInsertionPointToEnd(block);
            eb.create<scf::YieldOp>(ifOp.getLoc());
          }
          arms.emplace_back(ifOp.thenBlock(), then);
          arms.emplace_back(ifOp.elseBlock(), mlir::cuvil::branchArmName(op, "if else"));
        } else if (auto loop = llvm::dyn_cast<scf::WhileOp>(op)) {
          std::string body = mlir::cuvil::branchArmName(op, "loop body");
          if (!body.empty())
            arms.emplace_back(loop.getAfterBody(), body);
        }
      });
      if (arms.empty())
        continue;
      std::vector<std::string> names;
      for (auto [site, arm] : llvm::enumerate(arms)) {
        names.push_back(arm.second);
        b.setInsertionPointToStart(arm.first);
        Location loc = arm.first->getParentOp()->getLoc();
        Value id = b.create<arith::ConstantOp>(loc, b.getI64IntegerAttr(int64_t(site)));
        b.create<func::CallOp>(loc, "cuvil_rt_branch", TypeRange{}, ValueRange{id});
      }
      mlir::cuvil::cpu::registerSiteTable(module, f, "__cuvil_branch_arms_" + f.getSymName().str(),
                                          "cuvil_rt_branch_sites", names);
      mlir::cuvil::cpu::declareRuntimeFunction(module, "cuvil_rt_branch", {i64});
    }
  }
};

} // namespace
