//===- InstrumentKernels.cpp - Time every runtime kernel call -------------===//
#include "dialects/Cuvil/IR/CuvilDialect.h"
#include "targets/CPU/Passes.h"
#include "targets/CPU/SiteTables.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/Support/Path.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_INSTRUMENTKERNELSPASS
#include "targets/CPU/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {

/// "layer1.0.conv1 (qconv2d_u8s8)", "model.py:17 (elementwise loop)".
std::string siteName(func::CallOp call) {
  StringRef kernel = call.getCallee().drop_front(strlen("cuvil_rt_"));
  std::string what = kernel == "parallel_for_current" ? "elementwise loop" : kernel.str();
  // A layer's name first, else the first source line (the innermost of a
  // call-site chain: the model's own line).
  std::string name, line;
  call.getLoc()->walk([&](Location l) {
    if (auto n = llvm::dyn_cast<NameLoc>(l); n && name.empty())
      name = n.getName().str();
    if (auto f = llvm::dyn_cast<FileLineColLoc>(l); f && line.empty())
      line = llvm::sys::path::filename(f.getFilename().getValue()).str() + ":" + std::to_string(f.getLine());
    return WalkResult::advance();
  });
  std::string where = !name.empty() ? name : !line.empty() ? line : "?";
  return where + " (" + what + ")";
}

struct InstrumentKernelsPass final
    : mlir::cuvil::impl::InstrumentKernelsPassBase<InstrumentKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (func::FuncOp f : module.getOps<func::FuncOp>()) {
      if (f.isExternal() || f.isPrivate() || f->hasAttr(mlir::cuvil::kDeviceFunctionAttrName))
        continue;
      SmallVector<func::CallOp> calls;
      f.walk([&](func::CallOp c) {
        if (c.getCallee().starts_with("cuvil_rt_") && !c.getCallee().starts_with("cuvil_rt_profile_") &&
            !c.getCallee().starts_with("cuvil_rt_branch"))
          calls.push_back(c);
      });
      if (calls.empty())
        continue;
      std::vector<std::string> names;
      OpBuilder b(&getContext());
      Type i64 = b.getI64Type();
      for (auto [site, call] : llvm::enumerate(calls)) {
        names.push_back(siteName(call));
        b.setInsertionPoint(call);
        Value id = b.create<arith::ConstantOp>(call.getLoc(), b.getI64IntegerAttr(int64_t(site)));
        b.create<func::CallOp>(call.getLoc(), "cuvil_rt_profile_begin", TypeRange{}, ValueRange{id});
        b.setInsertionPointAfter(call);
        b.create<func::CallOp>(call.getLoc(), "cuvil_rt_profile_end", TypeRange{}, ValueRange{id});
      }
      mlir::cuvil::cpu::registerSiteTable(module, f, "__cuvil_profile_sites_" + f.getSymName().str(),
                                          "cuvil_rt_profile_sites", names);
      mlir::cuvil::cpu::declareRuntimeFunction(module, "cuvil_rt_profile_begin", {i64});
      mlir::cuvil::cpu::declareRuntimeFunction(module, "cuvil_rt_profile_end", {i64});
    }
  }
};

} // namespace
