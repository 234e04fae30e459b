//===- CountBranches.cpp - Count the runs of the model's branches ----------===//
//
// cuvil-verify compares which branches the samples take in the library and
// in the reference; the library counts them itself, in every build: a call
// as each arm starts is nothing beside the tensor work a branch guards.
//
//===----------------------------------------------------------------------===//
#include "dialects/Cuvil/IR/SourcePosition.h"
#include "targets/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_COUNTBRANCHESPASS
#include "targets/CPU/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {

void declare(ModuleOp module, StringRef name, TypeRange args) {
  if (module.lookupSymbol(name))
    return;
  OpBuilder b(module.getBodyRegion());
  auto f = b.create<func::FuncOp>(module.getLoc(), name, b.getFunctionType(args, {}));
  f.setPrivate();
}

struct CountBranchesPass final : mlir::cuvil::impl::CountBranchesPassBase<CountBranchesPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    OpBuilder b(&getContext());
    Type i64 = b.getI64Type();
    for (func::FuncOp f : llvm::to_vector(module.getOps<func::FuncOp>())) {
      if (f.isExternal() || f.isPrivate())
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
      std::string table;
      for (auto [site, arm] : llvm::enumerate(arms)) {
        table += arm.second;
        table.push_back('\0');
        b.setInsertionPointToStart(arm.first);
        Location loc = arm.first->getParentOp()->getLoc();
        Value id = b.create<arith::ConstantOp>(loc, b.getI64IntegerAttr(int64_t(site)));
        b.create<func::CallOp>(loc, "cuvil_rt_branch", TypeRange{}, ValueRange{id});
      }
      // The names, NUL-separated, as a constant the runtime keeps pointers into.
      auto tableType = MemRefType::get({int64_t(table.size())}, b.getIntegerType(8));
      SmallVector<int8_t> bytes(table.begin(), table.end());
      auto data = DenseElementsAttr::get(RankedTensorType::get(tableType.getShape(), b.getIntegerType(8)),
                                         ArrayRef<int8_t>(bytes));
      std::string global = "__cuvil_branch_arms_" + f.getSymName().str();
      {
        OpBuilder mb(module.getBodyRegion());
        mb.create<memref::GlobalOp>(module.getLoc(), global, mb.getStringAttr("private"), tableType, data,
                                    /*constant=*/true, /*alignment=*/nullptr);
      }
      b.setInsertionPointToStart(&f.getBody().front());
      Value t = b.create<memref::GetGlobalOp>(f.getLoc(), tableType, global);
      Value n = b.create<arith::ConstantOp>(f.getLoc(), b.getI64IntegerAttr(int64_t(arms.size())));
      b.create<func::CallOp>(f.getLoc(), "cuvil_rt_branch_sites", TypeRange{}, ValueRange{t, n});
      declare(module, "cuvil_rt_branch_sites", {tableType, i64});
      declare(module, "cuvil_rt_branch", {i64});
    }
  }
};

} // namespace
