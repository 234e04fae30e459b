//===- ProtectModelArguments.cpp - Read-only inputs, outputs of their own -===//
#include "targets/CPU/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_PROTECTMODELARGUMENTSPASS
#include "targets/CPU/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {

struct ProtectModelArgumentsPass final
    : mlir::cuvil::impl::ProtectModelArgumentsPassBase<ProtectModelArgumentsPass> {
  using Base::Base;

  void runOnOperation() override {
    for (func::FuncOp func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal() || !func.isPublic())
        continue;
      for (unsigned i = 0; i < func.getNumArguments(); ++i)
        if (llvm::isa<TensorType>(func.getArgument(i).getType()))
          func.setArgAttr(i, bufferization::BufferizationDialect::kWritableAttrName,
                          BoolAttr::get(&getContext(), false));
      func.walk([&](func::ReturnOp ret) {
        OpBuilder b(ret);
        llvm::SmallPtrSet<Value, 8> returned;
        for (OpOperand &operand : ret->getOpOperands()) {
          Value v = operand.get();
          auto type = llvm::dyn_cast<RankedTensorType>(v.getType());
          // An input, or a value already returned at another position
          // (`return y, y`): each output needs a buffer of its own.
          bool isInput = llvm::isa<BlockArgument>(v) &&
                         llvm::cast<BlockArgument>(v).getOwner() == &func.getBody().front();
          bool repeated = !returned.insert(v).second;
          if (!type || (!isInput && !repeated))
            continue;
          Value empty = b.create<tensor::EmptyOp>(ret.getLoc(), type, ValueRange{});
          operand.set(b.create<linalg::CopyOp>(ret.getLoc(), v, empty).getResult(0));
        }
      });
    }
  }
};

} // namespace
