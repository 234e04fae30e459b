//===- RunTimeShapeArguments.cpp - Dynamic buffers as bare pointers + sizes ===//
//
// MLIR's bare-pointer calling convention takes static shapes only, and the
// entry the runtime calls passes each run's sizes apart from the data
// (model_abi.h). This pass gives a bufferized model function with dynamic
// arguments that form: each dynamic argument becomes a memref<1xT> (its
// data pointer) and one trailing memref<Nxi64> holds the run's sizes, the
// inputs' dynamic dimensions then the outputs', in argument order.
//
// An input is rebuilt inside as a memref.reinterpret_cast with its sizes
// from the array. An output slot holds the caller's capacity on entry; the
// copy of the result into the output writes the result's sizes there and
// runs only when they fit, else the function returns a failure status (a
// message of its own) and the output is left as it was. Outputs are only
// ever written by such copies (BufferResultsToOutParams makes them for
// results of dynamic shape); anything else is an error.
//
//===----------------------------------------------------------------------===//
#include "targets/CPU/Passes.h"

#include "dialects/Cuvil/IR/CuvilDialect.h"
#include "passes/Conversion/CuvilToLinalg/RuntimeChecks.h"
#include "targets/CPU/SizeBounds.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_RUNTIMESHAPEARGUMENTSPASS
#include "targets/CPU/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {

/// The message of the status an output too small for its result returns.
constexpr llvm::StringLiteral kCapacityMessage =
    "an output's buffer is too small for this run: its capacity along a dynamic dimension (the "
    "shape entry given) is below the size the run produces; cuvil_model_output_bounds gives a "
    "capacity that always suffices";

struct RunTimeShapeArgumentsPass final
    : mlir::cuvil::impl::RunTimeShapeArgumentsPassBase<RunTimeShapeArgumentsPass> {
  using Base::Base;

  static bool isDynamicBuffer(Type t) {
    auto m = llvm::dyn_cast<MemRefType>(t);
    return m && !m.hasStaticShape();
  }

  /// `type`'s identity-layout strides for `sizes`: static where the type
  /// has them, products of the sizes else.
  static SmallVector<OpFoldResult> stridesOf(OpBuilder &b, Location loc, MemRefType type,
                                             ArrayRef<OpFoldResult> sizes) {
    SmallVector<OpFoldResult> strides(type.getRank());
    Value running;
    int64_t staticRunning = 1;
    for (int64_t d = type.getRank() - 1; d >= 0; --d) {
      if (!running)
        strides[d] = b.getIndexAttr(staticRunning);
      else
        strides[d] = running;
      if (auto a = llvm::dyn_cast<Attribute>(sizes[d])) {
        int64_t size = llvm::cast<IntegerAttr>(a).getInt();
        if (running)
          running = b.create<arith::MulIOp>(loc, running, b.create<arith::ConstantIndexOp>(loc, size));
        else
          staticRunning *= size;
      } else {
        Value size = llvm::cast<Value>(sizes[d]);
        Value prior = running ? running : b.create<arith::ConstantIndexOp>(loc, staticRunning).getResult();
        running = b.create<arith::MulIOp>(loc, prior, size);
      }
    }
    return strides;
  }

  LogicalResult rewrite(func::FuncOp func) {
    Block &entry = func.getBody().front();
    SmallVector<unsigned> inputs, outputs;
    for (BlockArgument arg : entry.getArguments())
      if (isDynamicBuffer(arg.getType()))
        (func.getArgAttr(arg.getArgNumber(), mlir::cuvil::kDimBoundsAttrName) ? inputs : outputs)
            .push_back(arg.getArgNumber());
    if (inputs.empty() && outputs.empty())
      return success();
    // Its results, after bufferization: none, or the status of its checks.
    bool hadStatus = func.getNumResults() == 1 && func.getResultTypes()[0].isInteger(32);
    if (func.getNumResults() != 0 && !hadStatus)
      return func.emitError() << "a model function with results other than its status";

    MLIRContext *ctx = func.getContext();
    Location loc = func.getLoc();
    // The outputs' largest sizes, while the sizes still read the inputs'
    // dimensions (whose bounds the arguments carry).
    SmallVector<Attribute> maxShapes;
    for (unsigned i : outputs) {
      auto type = llvm::cast<MemRefType>(entry.getArgument(i).getType());
      SmallVector<int64_t> maxShape(type.getShape());
      for (int64_t &m : maxShape)
        if (ShapedType::isDynamic(m))
          m = 0;
      for (Operation *user : entry.getArgument(i).getUsers())
        if (auto copy = llvm::dyn_cast<linalg::CopyOp>(user))
          for (int64_t d = 0; d < type.getRank(); ++d)
            if (type.isDynamicDim(d)) {
              std::optional<int64_t> bound = mlir::cuvil::cpu::dimUpperBound(copy.getInputs()[0], d);
              maxShape[d] = !bound || maxShape[d] < 0 ? -1 : std::max(maxShape[d], *bound);
            }
      maxShapes.push_back(DenseI64ArrayAttr::get(ctx, maxShape));
    }
    int64_t slots = 0;
    for (unsigned i : llvm::concat<unsigned>(inputs, outputs))
      slots += llvm::cast<MemRefType>(entry.getArgument(i).getType()).getNumDynamicDims();
    unsigned sizesIndex = func.getNumArguments();
    func.insertArgument(sizesIndex, MemRefType::get({slots}, IntegerType::get(ctx, 64)), {}, loc);
    Value sizesArg = func.getArgument(sizesIndex);
    OpBuilder b(&entry, entry.begin());
    int64_t slot = 0;
    // Slot k's value on entry, as an index.
    auto load = [&](int64_t k) -> Value {
      Value at = b.create<arith::ConstantIndexOp>(loc, k);
      Value v = b.create<memref::LoadOp>(loc, sizesArg, ValueRange{at});
      return b.create<arith::IndexCastOp>(loc, b.getIndexType(), v);
    };
    auto pointerType = [](MemRefType t) { return MemRefType::get({1}, t.getElementType()); };

    for (unsigned i : inputs) {
      BlockArgument arg = entry.getArgument(i);
      auto type = llvm::cast<MemRefType>(arg.getType());
      SmallVector<OpFoldResult> sizes;
      for (int64_t d = 0; d < type.getRank(); ++d)
        sizes.push_back(type.isDynamicDim(d) ? OpFoldResult(load(slot++))
                                             : OpFoldResult(b.getIndexAttr(type.getDimSize(d))));
      arg.setType(pointerType(type));
      auto view = b.create<memref::ReinterpretCastOp>(loc, type, arg, b.getIndexAttr(0), sizes,
                                                      stridesOf(b, loc, type, sizes));
      arg.replaceAllUsesExcept(view, view);
      // Sizes read back from the view are the slots'.
      for (OpOperand &use : llvm::make_early_inc_range(view.getResult().getUses()))
        if (auto dim = llvm::dyn_cast<memref::DimOp>(use.getOwner())) {
          APInt d;
          if (matchPattern(dim.getIndex(), m_ConstantInt(&d)) && d.getSExtValue() < type.getRank())
            if (auto v = llvm::dyn_cast<Value>(sizes[d.getSExtValue()])) {
              dim.getResult().replaceAllUsesWith(v);
              dim.erase();
            }
        }
    }

    // Outputs: capacities on entry, a status cell for the copies.
    Value status;
    int32_t code = 0;
    if (!outputs.empty()) {
      auto messages = func->getAttrOfType<ArrayAttr>(mlir::cuvil::lowering::kFailureMessagesAttr);
      SmallVector<Attribute> list(messages ? messages.getValue() : ArrayRef<Attribute>());
      list.push_back(StringAttr::get(ctx, kCapacityMessage));
      code = static_cast<int32_t>(list.size());
      func->setAttr(mlir::cuvil::lowering::kFailureMessagesAttr, ArrayAttr::get(ctx, list));
      status = b.create<memref::AllocaOp>(loc, MemRefType::get({}, b.getI32Type()));
      b.create<memref::StoreOp>(loc, b.create<arith::ConstantIntOp>(loc, 0, 32), status);
    }
    for (unsigned i : outputs) {
      BlockArgument arg = entry.getArgument(i);
      auto type = llvm::cast<MemRefType>(arg.getType());
      SmallVector<std::pair<int64_t, Value>> capacity; // (slot, capacity) per dynamic dim
      for (int64_t d = 0; d < type.getRank(); ++d)
        if (type.isDynamicDim(d)) {
          capacity.push_back({slot, load(slot)});
          ++slot;
        }
      SmallVector<Operation *> writers;
      for (Operation *user : arg.getUsers()) {
        auto copy = llvm::dyn_cast<linalg::CopyOp>(user);
        if (!copy || copy.getOutputs()[0] != arg || copy.getInputs()[0] == arg)
          return user->emitError() << "output " << i << " of dynamic shape is written by '"
                                   << user->getName()
                                   << "'; the code generator expects a copy of the result";
        writers.push_back(user);
      }
      arg.setType(pointerType(type));
      for (Operation *op : writers) {
        auto copy = llvm::cast<linalg::CopyOp>(op);
        Value source = copy.getInputs()[0];
        OpBuilder c(copy);
        SmallVector<OpFoldResult> sizes;
        Value fits = c.create<arith::ConstantIntOp>(copy.getLoc(), 1, 1);
        size_t k = 0;
        for (int64_t d = 0; d < type.getRank(); ++d) {
          if (!type.isDynamicDim(d)) {
            sizes.push_back(c.getIndexAttr(type.getDimSize(d)));
            continue;
          }
          Value size = c.create<memref::DimOp>(copy.getLoc(), source, d);
          sizes.push_back(size);
          auto [at, cap] = capacity[k++];
          c.create<memref::StoreOp>(copy.getLoc(),
                                    c.create<arith::IndexCastOp>(copy.getLoc(), c.getI64Type(), size),
                                    sizesArg,
                                    ValueRange{c.create<arith::ConstantIndexOp>(copy.getLoc(), at)});
          fits = c.create<arith::AndIOp>(
              copy.getLoc(), fits,
              c.create<arith::CmpIOp>(copy.getLoc(), arith::CmpIPredicate::ule, size, cap));
        }
        auto ifOp = c.create<scf::IfOp>(copy.getLoc(), fits, /*withElseRegion=*/true);
        {
          OpBuilder t = ifOp.getThenBodyBuilder();
          auto view = t.create<memref::ReinterpretCastOp>(copy.getLoc(), type, arg, t.getIndexAttr(0),
                                                          sizes, stridesOf(t, copy.getLoc(), type, sizes));
          copy->moveBefore(ifOp.thenBlock()->getTerminator());
          copy.getOutputsMutable()[0].set(view);
        }
        OpBuilder e = ifOp.getElseBodyBuilder();
        e.create<memref::StoreOp>(copy.getLoc(), e.create<arith::ConstantIntOp>(copy.getLoc(), code, 32),
                                  status);
      }
    }

    // The status: the model's own checks first, then the outputs' room.
    SmallVector<Type> results(func.getResultTypes());
    if (status) {
      SmallVector<func::ReturnOp> returns;
      func.walk([&](func::ReturnOp ret) { returns.push_back(ret); });
      for (func::ReturnOp ret : returns) {
        OpBuilder r(ret);
        Value result = r.create<memref::LoadOp>(ret.getLoc(), status);
        if (hadStatus) {
          Value theirs = ret.getOperand(0);
          Value zero = r.create<arith::ConstantIntOp>(ret.getLoc(), 0, 32);
          Value failed = r.create<arith::CmpIOp>(ret.getLoc(), arith::CmpIPredicate::ne, theirs, zero);
          result = r.create<arith::SelectOp>(ret.getLoc(), failed, theirs, result);
        }
        r.create<func::ReturnOp>(ret.getLoc(), result);
        ret.erase();
      }
      results.assign({b.getI32Type()});
      func->setAttr("cuvil.output_max_shapes", ArrayAttr::get(ctx, maxShapes));
    }
    func.setFunctionType(FunctionType::get(ctx, entry.getArgumentTypes(), results));
    return success();
  }

  void runOnOperation() override {
    for (func::FuncOp func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal() && failed(rewrite(func)))
        return signalPassFailure();
  }
};

} // namespace
