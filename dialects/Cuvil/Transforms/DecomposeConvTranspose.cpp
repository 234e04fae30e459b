//===- DecomposeConvTranspose.cpp - Transposed convolutions as 1x1 GEMMs ---===//
//
// A transposed convolution whose kernel equals its stride (no padding,
// dilation or output padding: U-Net's and FPN's 2x2 / 2 upsampling) writes
// each input pixel's kh x kw output block from that pixel alone:
//
//   y[n, co, y*kh + a, x*kw + b] = bias[co] + sum_ci x[n, ci, y, x] w[ci, co, a, b]
//
// which is a 1x1 convolution with C_out * kh * kw output channels, row
// (co, a, b) of its weights w[:, co, a, b], followed by a depth-to-space
// reshuffle (reshape, permute, reshape). The 1x1 convolution runs on the
// CPU's GEMM kernels; the general lowering instead convolves an input
// dilated with zeros, kh * kw times the multiply-adds, in plain loops.
//
//===----------------------------------------------------------------------===//
#include "dialects/Cuvil/IR/CuvilOps.h"
#include "dialects/Cuvil/Reference/Evaluator.h"
#include "dialects/Cuvil/Transforms/ConstantValues.h"
#include "dialects/Cuvil/Transforms/Passes.h"
#include "dialects/Cuvil/Transforms/RewriteObserver.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_CUVILDECOMPOSECONVTRANSPOSEPASS
#include "dialects/Cuvil/Transforms/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;
using namespace mlir::cuvil;
using reference::Tensor;

namespace {

struct CuvilDecomposeConvTransposePass final
    : mlir::cuvil::impl::CuvilDecomposeConvTransposePassBase<CuvilDecomposeConvTransposePass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<ConvTranspose2DOp> ops;
    getOperation().walk([&](ConvTranspose2DOp op) { ops.push_back(op); });
    for (ConvTranspose2DOp op : ops)
      if (succeeded(decompose(op)))
        ++numDecomposed;
  }

  LogicalResult decompose(ConvTranspose2DOp op) {
    auto xt = llvm::dyn_cast<RankedTensorType>(op.getInput().getType());
    auto wt = llvm::dyn_cast<RankedTensorType>(op.getWeight().getType());
    auto yt = llvm::dyn_cast<RankedTensorType>(op.getType());
    if (!xt || !wt || !yt || !xt.hasStaticShape() || !wt.hasStaticShape() || !yt.hasStaticShape() ||
        !xt.getElementType().isF32() || !wt.getElementType().isF32() ||
        (op.getBias() && !llvm::cast<RankedTensorType>(op.getBias().getType()).getElementType().isF32()) ||
        op.getGroups() != 1)
      return failure();
    int64_t kh = wt.getDimSize(2), kw = wt.getDimSize(3);
    if (op.getStride() != ArrayRef<int64_t>{kh, kw} || llvm::any_of(op.getPadding(), [](int64_t p) { return p; }) ||
        llvm::any_of(op.getDilation(), [](int64_t d) { return d != 1; }) ||
        llvm::any_of(op.getOutputPadding(), [](int64_t p) { return p; }))
      return failure();
    std::optional<Tensor> w = constantValue(op.getWeight());
    std::optional<Tensor> bias = op.getBias() ? constantValue(op.getBias()) : std::nullopt;
    if (!w || (op.getBias() && !bias))
      return failure();
    const int64_t n = xt.getDimSize(0), cin = wt.getDimSize(0), cout = wt.getDimSize(1);
    const int64_t h = xt.getDimSize(2), width = xt.getDimSize(3), rows = cout * kh * kw;

    // Weights [C_out * kh * kw, C_in, 1, 1], row (co, a, b) = w[:, co, a, b];
    // the bias repeated over each channel's kh * kw rows.
    Tensor w1(w->dtype(), {rows, cin, 1, 1});
    Tensor b1(w->dtype(), {rows});
    for (int64_t ci = 0; ci < cin; ++ci)
      for (int64_t r = 0; r < rows; ++r)
        w1.setDouble(r * cin + ci, w->getDouble(ci * rows + r));
    for (int64_t r = 0; r < rows; ++r)
      b1.setDouble(r, bias ? bias->getDouble(r / (kh * kw)) : 0.0);

    IRRewriter b(op.getContext(), RewriteObserver::current());
    b.setInsertionPoint(op);
    Location loc = op.getLoc();
    Type f32 = xt.getElementType();
    auto w1Type = RankedTensorType::get({rows, cin, 1, 1}, f32);
    auto b1Type = RankedTensorType::get({rows}, f32);
    Value w1v = b.create<ConstantOp>(
        loc, w1Type, reference::elementsAttrFromTensor(w1, w1Type, derivedResourceName(op.getWeight(), "as_1x1", "conv_transpose")));
    Value b1v = b.create<ConstantOp>(
        loc, b1Type,
        reference::elementsAttrFromTensor(b1, b1Type,
                                          op.getBias() ? derivedResourceName(op.getBias(), "as_1x1", "conv_transpose")
                                                       : derivedResourceName(op.getWeight(), "bias_1x1", "conv_transpose")));
    auto convType = RankedTensorType::get({n, rows, h, width}, f32);
    Value conv = b.create<Conv2DOp>(loc, convType, op.getInput(), w1v, b1v,
                                    b.getDenseI64ArrayAttr({1, 1}), b.getDenseI64ArrayAttr({0, 0}),
                                    b.getDenseI64ArrayAttr({1, 1}), b.getI64IntegerAttr(1));
    // [N, C_out, kh, kw, H, W] -> [N, C_out, H, kh, W, kw] -> the output.
    auto splitType = RankedTensorType::get({n, cout, kh, kw, h, width}, f32);
    Value split = b.create<ReshapeOp>(loc, splitType, conv,
                                      b.getDenseI64ArrayAttr({n, cout, kh, kw, h, width}));
    auto movedType = RankedTensorType::get({n, cout, h, kh, width, kw}, f32);
    Value moved = b.create<PermuteOp>(loc, movedType, split, b.getDenseI64ArrayAttr({0, 1, 4, 2, 5, 3}));
    Value y = b.create<ReshapeOp>(loc, yt, moved, b.getDenseI64ArrayAttr(yt.getShape()));
    b.replaceOp(op, y);
    return success();
  }
};

} // namespace
