//===- LowerRuntimeCalls.cpp - Ops the runtime library computes -----------===//
//
// Ops with no good loop-nest form become calls of a runtime kernel on
// buffers: the operands as read-only buffers, the results as fresh
// allocations the kernel fills, the parameters as an i64 constant laid out
// by runtime/include/cuvil/kernel_abi.h. Each buffer travels as a
// memref<1xT> view of its start (a bare pointer after lowering), so one
// declaration per kernel and element type serves every shape.
//
//   cuvil.tensor.sort -> cuvil_rt_sort_<elem>(params, input, values, indices, scratch)
//   cuvil.linalg.kernel "k" -> cuvil_rt_k_<f32|f64>(params, inputs..., results..., scratch)
//
//===----------------------------------------------------------------------===//
#include "passes/Conversion/CuvilToLinalg/Patterns.h"

#include "dialects/Cuvil/IR/CuvilOps.h"
#include "dialects/Cuvil/IR/LinalgKernels.h"
#include "passes/Conversion/CuvilToLinalg/LoweringUtils.h"
#include "runtime/include/cuvil/kernel_abi.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::cuvil::lowering {
namespace {

/// Builds one kernel call: buffers in, buffers out.
class RuntimeCall {
public:
  RuntimeCall(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  /// `t` (a converted tensor) as a read-only buffer argument.
  void input(Value t) {
    auto type = llvm::cast<RankedTensorType>(t.getType());
    args.push_back(view(b.create<bufferization::ToMemrefOp>(
        loc, MemRefType::get(type.getShape(), type.getElementType()), t, /*read_only=*/true)));
  }
  void params(ArrayRef<int64_t> values) {
    auto type = RankedTensorType::get({static_cast<int64_t>(values.size())}, b.getI64Type());
    input(b.create<arith::ConstantOp>(loc, DenseElementsAttr::get(type, values)));
  }
  /// A buffer the kernel writes; returns it.
  Value output(ArrayRef<int64_t> shape, Type element) {
    Value m = b.create<memref::AllocOp>(loc, MemRefType::get(shape, element),
                                        b.getI64IntegerAttr(64));
    args.push_back(view(m));
    return m;
  }
  /// Declares `callee` on first use and calls it.
  void call(ModuleOp module, StringRef callee) {
    if (!module.lookupSymbol(callee)) {
      OpBuilder top(module.getBodyRegion());
      auto decl = top.create<func::FuncOp>(
          loc, callee, top.getFunctionType(ValueRange(args).getTypes(), {}));
      decl.setPrivate();
    }
    b.create<func::CallOp>(loc, callee, TypeRange{}, args);
  }
  /// The tensor of an output buffer, after the call.
  Value result(Value m, RankedTensorType type) {
    return b.create<bufferization::ToTensorOp>(loc, type, m, /*restrict=*/true,
                                               /*writable=*/true);
  }

private:
  Value view(Value m) {
    auto type = llvm::cast<MemRefType>(m.getType());
    return b.create<memref::ReinterpretCastOp>(loc, MemRefType::get({1}, type.getElementType()),
                                               m, /*offset=*/0, ArrayRef<int64_t>{1},
                                               ArrayRef<int64_t>{1});
  }

  OpBuilder &b;
  Location loc;
  SmallVector<Value> args;
};

/// The symbol suffix of an element type (signless: one kernel serves i8
/// and ui8, told apart by the dtype parameter).
std::string elementSuffix(Type t) {
  if (t.isF32()) return "f32";
  if (t.isF64()) return "f64";
  if (t.isF16()) return "f16";
  if (t.isBF16()) return "bf16";
  return "i" + std::to_string(t.getIntOrFloatBitWidth());
}

struct SortLowering final : OpConversionPattern<SortOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(SortOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    auto in = llvm::cast<RankedTensorType>(adaptor.getInput().getType());
    std::optional<int32_t> dtype =
        runtimeDtype(llvm::cast<RankedTensorType>(op.getInput().getType()).getElementType());
    if (!in.hasStaticShape() || !dtype)
      return rewriter.notifyMatchFailure(op, "static shapes of a C API dtype only");
    int64_t rank = in.getRank(), dim = rank ? op.getDim() : 0;
    int64_t len = rank ? in.getDimSize(dim) : 1, outer = 1, inner = 1;
    for (int64_t d = 0; d < rank; ++d) {
      if (d < dim)
        outer *= in.getDimSize(d);
      else if (d > dim)
        inner *= in.getDimSize(d);
    }
    SmallVector<int64_t> params(CUVIL_SORT_PARAMS);
    params[CUVIL_SORT_DTYPE] = *dtype;
    params[CUVIL_SORT_OUTER] = outer;
    params[CUVIL_SORT_LEN] = len;
    params[CUVIL_SORT_INNER] = inner;
    params[CUVIL_SORT_DESCENDING] = op.getDescending();

    Location loc = op.getLoc();
    RuntimeCall c(rewriter, loc);
    c.params(params);
    c.input(adaptor.getInput());
    Value values = c.output(in.getShape(), in.getElementType());
    Value indices = c.output(in.getShape(), rewriter.getI64Type());
    c.output({std::max<int64_t>(2 * len, 1)}, rewriter.getI64Type()); // scratch
    c.call(op->getParentOfType<ModuleOp>(), "cuvil_rt_sort_" + elementSuffix(in.getElementType()));
    rewriter.replaceOp(op, {c.result(values, in),
                            c.result(indices, in.clone(rewriter.getI64Type()))});
    return success();
  }
};

struct LinalgKernelLowering final : OpConversionPattern<LinalgKernelOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(LinalgKernelOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    LinalgKernelCall call =
        describeLinalgKernelCall(op.getKernel(), op.getFlags(), op.getInputs().getTypes());
    RuntimeCall c(rewriter, op.getLoc());
    c.params(call.params);
    for (Value v : adaptor.getInputs())
      c.input(v);
    SmallVector<Value> buffers;
    for (Type t : op.getResultTypes()) {
      auto r = llvm::cast<RankedTensorType>(t);
      buffers.push_back(c.output(r.getShape(), r.getElementType()));
    }
    c.output({std::max<int64_t>(call.scratchDoubles, 1)}, rewriter.getF64Type());
    c.call(op->getParentOfType<ModuleOp>(), call.symbol);
    SmallVector<Value> results;
    for (auto [m, t] : llvm::zip(buffers, op.getResultTypes()))
      results.push_back(c.result(m, llvm::cast<RankedTensorType>(t)));
    rewriter.replaceOp(op, results);
    return success();
  }
};

} // namespace

void populateRuntimeCallLowering(const TypeConverter &tc, RewritePatternSet &patterns) {
  patterns.add<SortLowering, LinalgKernelLowering>(tc, patterns.getContext());
}

} // namespace mlir::cuvil::lowering
