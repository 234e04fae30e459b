//===- EmptyBufferArguments.cpp - Zero-element arguments as memref<0xT> ---===//
#include "targets/CPU/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_EMPTYBUFFERARGUMENTSPASS
#include "targets/CPU/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {

struct EmptyBufferArgumentsPass final
    : mlir::cuvil::impl::EmptyBufferArgumentsPassBase<EmptyBufferArgumentsPass> {
  using Base::Base;

  void runOnOperation() override {
    for (func::FuncOp func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      Block &entry = func.getBody().front();
      SmallVector<Type> inputs(func.getArgumentTypes());
      bool changed = false;
      OpBuilder b(&entry, entry.begin());
      for (auto [i, arg] : llvm::enumerate(entry.getArguments())) {
        auto type = llvm::dyn_cast<MemRefType>(arg.getType());
        if (!type || !type.hasStaticShape() || type.getNumElements() != 0 || type.getRank() < 2)
          continue;
        // The body's view of the buffer: empty, of the type it expects.
        Value stand = b.create<memref::AllocaOp>(func.getLoc(), MemRefType::get(type.getShape(), type.getElementType()));
        arg.replaceAllUsesWith(stand);
        MemRefType flat = MemRefType::get({0}, type.getElementType());
        arg.setType(flat);
        inputs[i] = flat;
        changed = true;
      }
      if (changed)
        func.setFunctionType(FunctionType::get(&getContext(), inputs, func.getResultTypes()));
    }
  }
};

} // namespace
