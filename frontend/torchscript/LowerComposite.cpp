//===- LowerComposite.cpp - PyTorch's fused inference ops, decomposed -----===//
//
// PyTorch's inference fast paths call fused kernels (the transformer encoder
// layer, native multi-head attention). They are expressed here with plain
// cuvil ops following PyTorch's reference composition, so that the graph
// optimiser sees (and fuses) the same linear/softmax/layer_norm pieces.
//
//===----------------------------------------------------------------------===//
#include "frontend/torchscript/Interpreter.h"

#include "dialects/Cuvil/IR/CuvilOps.h"

#include "mlir/IR/BuiltinTypes.h"

#include <cmath>

namespace cir = mlir::cuvil;

namespace cuvil::torchscript {
namespace {

using mlir::RankedTensorType;
using mlir::Value;

RankedTensorType typeOf(Value v) { return llvm::cast<RankedTensorType>(v.getType()); }

Value tensorArg(Interpreter &in, const BoundArgs &b, const char *name) {
  const IValue &v = b.get(name);
  if (!v.isTensor())
    in.fail("CUVIL-E-IMPORT-TYPE", std::string("argument '") + name + "' must be a tensor");
  return v.tensor->value;
}
int64_t intArg(const BoundArgs &b, const char *name) { return b.get(name).i; }

/// Multi-head self/cross attention on [B, S, E] inputs with a packed
/// [3E, E] input projection: PyTorch's native_multi_head_attention math.
Value attention(Interpreter &in, Value q, Value k, Value v, int64_t embed, int64_t heads,
                Value qkvWeight, Value qkvBias, Value projWeight, Value projBias) {
  auto &b = in.builder();
  // One run-time size (the sequence, or the batch) is a reshape's -1.
  auto dynamicDims = [](Value x) { return typeOf(x).getNumDynamicDims(); };
  if (typeOf(q).getRank() != 3 || typeOf(q).isDynamicDim(2) || dynamicDims(q) > 1 ||
      dynamicDims(k) > 1 || typeOf(k).isDynamicDim(2))
    in.fail("CUVIL-E-IMPORT-SHAPE", "fused attention needs [batch, seq, embed] inputs with at "
                                    "most one run-time size (batch or seq)");
  if (heads <= 0 || embed % heads != 0)
    in.fail("CUVIL-E-IMPORT-RAISE", "embed_dim must be divisible by num_heads");
  int64_t headDim = embed / heads;
  auto slice = [&](Value w, int64_t part) {
    return in.build<cir::SliceOp>(w, b.getI64IntegerAttr(0), b.getI64IntegerAttr(part * embed),
                                  b.getI64IntegerAttr((part + 1) * embed), b.getI64IntegerAttr(1));
  };
  // [B, S, E] -> [B, H, S, D]
  auto heads4 = [&](Value x) {
    auto sizeOr = [](int64_t d) { return mlir::ShapedType::isDynamic(d) ? int64_t(-1) : d; };
    int64_t batch = sizeOr(typeOf(x).getDimSize(0)), seq = sizeOr(typeOf(x).getDimSize(1));
    Value r = in.build<cir::ReshapeOp>(x, b.getDenseI64ArrayAttr({batch, seq, heads, headDim}));
    return in.build<cir::PermuteOp>(r, b.getDenseI64ArrayAttr({0, 2, 1, 3}));
  };
  Value qp = in.build<cir::LinearOp>(q, slice(qkvWeight, 0), slice(qkvBias, 0));
  Value kp = in.build<cir::LinearOp>(k, slice(qkvWeight, 1), slice(qkvBias, 1));
  Value vp = in.build<cir::LinearOp>(v, slice(qkvWeight, 2), slice(qkvBias, 2));
  Value qh = heads4(qp), kh = heads4(kp), vh = heads4(vp);
  // PyTorch scales q by 1/sqrt(D) before the product.
  Value scale = in.scalarConstant(IValue::floating(1.0 / std::sqrt(double(headDim))),
                                  DType::Float32);
  if (!typeOf(qh).getElementType().isF32())
    scale = b.create<cir::CastOp>(in.location(), typeOf(scale).clone(typeOf(qh).getElementType()), scale);
  qh = in.build<cir::MulOp>(qh, scale);
  Value kt = in.build<cir::TransposeOp>(kh, b.getI64IntegerAttr(2), b.getI64IntegerAttr(3));
  Value scores = in.build<cir::MatmulOp>(qh, kt);
  Value probs = in.build<cir::SoftmaxOp>(scores, b.getI64IntegerAttr(3));
  Value ctx = in.build<cir::MatmulOp>(probs, vh);
  Value merged = in.build<cir::PermuteOp>(ctx, b.getDenseI64ArrayAttr({0, 2, 1, 3}));
  auto sizeOr = [](int64_t d) { return mlir::ShapedType::isDynamic(d) ? int64_t(-1) : d; };
  int64_t batch = sizeOr(typeOf(q).getDimSize(0)), seq = sizeOr(typeOf(q).getDimSize(1));
  Value flat = in.build<cir::ReshapeOp>(merged, b.getDenseI64ArrayAttr({batch, seq, embed}));
  return in.build<cir::LinearOp>(flat, projWeight, projBias);
}

IValue transformerEncoderLayer(Interpreter &in, const BoundArgs &b) {
  if (!b.get("mask").isNone())
    return in.unsupported("aten::_transformer_encoder_layer_fwd with an attention mask");
  auto &builder = in.builder();
  Value src = tensorArg(in, b, "src");
  int64_t embed = intArg(b, "embed_dim");
  bool normFirst = b.get("norm_first").b, gelu = b.get("use_gelu").b;
  double eps = b.get("eps").f;
  auto norm = [&](Value x, const char *w, const char *bias) {
    return in.build<cir::LayerNormOp>(x, tensorArg(in, b, w), tensorArg(in, b, bias),
                                      builder.getDenseI64ArrayAttr({embed}),
                                      builder.getF64FloatAttr(eps));
  };
  auto selfAttention = [&](Value x) {
    return attention(in, x, x, x, embed, intArg(b, "num_heads"), tensorArg(in, b, "qkv_weight"),
                     tensorArg(in, b, "qkv_bias"), tensorArg(in, b, "proj_weight"),
                     tensorArg(in, b, "proj_bias"));
  };
  auto feedForward = [&](Value x) {
    Value h = in.build<cir::LinearOp>(x, tensorArg(in, b, "ffn_weight_1"), tensorArg(in, b, "ffn_bias_1"));
    h = gelu ? in.build<cir::GeluOp>(h, cir::GeluApproximationAttr::get(in.context(), cir::GeluApproximation::None))
             : in.build<cir::ReluOp>(h);
    return in.build<cir::LinearOp>(h, tensorArg(in, b, "ffn_weight_2"), tensorArg(in, b, "ffn_bias_2"));
  };
  Value x = src;
  if (normFirst) {
    x = in.build<cir::AddOp>(x, selfAttention(norm(x, "norm_weight_1", "norm_bias_1")));
    x = in.build<cir::AddOp>(x, feedForward(norm(x, "norm_weight_2", "norm_bias_2")));
  } else {
    x = norm(in.build<cir::AddOp>(x, selfAttention(x)), "norm_weight_1", "norm_bias_1");
    x = norm(in.build<cir::AddOp>(x, feedForward(x)), "norm_weight_2", "norm_bias_2");
  }
  return IValue::ofTensor(x);
}

IValue nativeMultiHeadAttention(Interpreter &in, const BoundArgs &b) {
  if (!b.get("mask").isNone())
    return in.unsupported("aten::_native_multi_head_attention with an attention mask");
  if (b.get("need_weights").b)
    return in.unsupported("aten::_native_multi_head_attention returning attention weights");
  Value out = attention(in, tensorArg(in, b, "query"), tensorArg(in, b, "key"),
                        tensorArg(in, b, "value"), intArg(b, "embed_dim"), intArg(b, "num_head"),
                        tensorArg(in, b, "qkv_weight"), tensorArg(in, b, "qkv_bias"),
                        tensorArg(in, b, "proj_weight"), tensorArg(in, b, "proj_bias"));
  return IValue::makeTuple({IValue::ofTensor(out), IValue::none()});
}

} // namespace

void registerCompositeHandlers(std::map<std::string, OpHandler> &table) {
  table["aten::_transformer_encoder_layer_fwd"] = transformerEncoderLayer;
  table["aten::_native_multi_head_attention"] = nativeMultiHeadAttention;
}

} // namespace cuvil::torchscript
