//===- LowerRunTimeSizes.cpp - Tensors whose sizes are known at run time -===//
//
// In a hybrid model `t = x.size(1)` of a '?' dimension is a run-time int: a
// 0-d i64 tensor computed from cuvil.shape.dim. The factories and
// expansions that take such sizes (torch.zeros(t, 4), torch.arange(t),
// x.expand(b, -1, -1), torch.ones_like(x), torch.triu of a t x t matrix)
// become cuvil.shape.expand_dynamic and cuvil.tensor.iota, whose sizes the
// code generator rebuilds from the dimensions they come from, so that the
// buffers keep the inputs' bounds. A size read from tensor data has no
// bound: refused, naming the operator and the source line.
//
//===----------------------------------------------------------------------===//
#include "frontend/torchscript/LowerHelpers.h"

#include "dialects/Cuvil/IR/RunTimeSizes.h"

namespace cuvil::torchscript {
namespace lower {

bool isRunTimeInt(const IValue &v) { return v.isTensor() && v.tensor->symbolicInt; }
bool isRunTimeFloat(const IValue &v) { return v.isTensor() && v.tensor->symbolicFloat; }

/// One size as a 0-d i64 value: a Python int as a constant, a run-time int
/// as itself; null (after reporting it) for a size read from tensor data.
Value sizeOperand(Interpreter &in, const IValue &v, const std::string &op) {
  if (v.is(K::Int) || v.is(K::Bool)) {
    if (v.is(K::Int) && v.i < 0)
      in.fail("CUVIL-E-IMPORT-RAISE", "negative dimension " + std::to_string(v.i) + " in " + op);
    return in.scalarConstant(v, DType::Int64);
  }
  if (isRunTimeInt(v)) {
    Value s = cast(in, v.tensor->value, DType::Int64);
    if (!mlir::cuvil::isComputedFromShapes(s)) {
      in.unsupported(op + " with a size computed from tensor data (a library's buffers are sized by "
                          "the bounds of its inputs' dimensions; a size read from data has none)");
      return Value();
    }
    return s;
  }
  in.fail("CUVIL-E-IMPORT-TYPE", op + " takes ints as sizes, got " + v.typeName());
}

/// The sizes of a list argument; empty with `ok` false when one is refused.
std::vector<Value> sizeOperands(Interpreter &in, const IValue &list, const std::string &op, bool &ok) {
  std::vector<Value> sizes;
  ok = true;
  if (!list.isSequence())
    in.fail("CUVIL-E-IMPORT-TYPE", op + " takes a list of sizes, got " + list.typeName());
  for (const IValue &v : *list.list) {
    Value s = sizeOperand(in, v, op);
    if (!s) {
      ok = false;
      return {};
    }
    sizes.push_back(s);
  }
  return sizes;
}

/// x's sizes: constants where static, cuvil.shape.dim where not.
std::vector<Value> sizesOf(Interpreter &in, Value x) {
  std::vector<Value> sizes;
  RankedTensorType t = typeOf(x);
  for (int64_t d = 0; d < t.getRank(); ++d)
    sizes.push_back(t.isDynamicDim(d) ? in.build<cir::DimOp>(x, i64(in, d))
                                      : in.scalarConstant(IValue::integer(t.getDimSize(d)), DType::Int64));
  return sizes;
}

/// `fill` (a Python number, or a run-time one) broadcast to `sizes`.
Value filledTo(Interpreter &in, const std::vector<Value> &sizes, DType d, const IValue &fill) {
  Value scalar = fill.isTensor() ? cast(in, fill.tensor->value, d) : in.scalarConstant(fill, d);
  return in.build<cir::ExpandDynamicOp>(scalar, mlir::ValueRange(sizes));
}

Value filledLike(Interpreter &in, Value like, DType d, const IValue &fill) {
  return filledTo(in, sizesOf(in, like), d, fill);
}

Value expandToShapeOf(Interpreter &in, Value x, Value like) {
  return in.build<cir::ExpandDynamicOp>(x, mlir::ValueRange(sizesOf(in, like)));
}

/// 0, 1, ..., n - 1 (i64) for a size value.
Value iotaOf(Interpreter &in, Value n) { return in.build<cir::IotaOp>(n); }

IValue triangleOfRunTimeSize(Interpreter &in, const IValue &self, int64_t diagonal, bool upper) {
  Value x = self.tensor->value;
  int64_t r = rankOf(x);
  std::vector<Value> sizes = sizesOf(in, x);
  // keep[i][j] = j - i >= k (triu) or <= k (tril), from the two index ranges.
  IValue rows = in.callOperator("aten::unsqueeze", {ret(iotaOf(in, sizes[r - 2])), IValue::integer(-1)}, {});
  IValue cols = ret(iotaOf(in, sizes[r - 1]));
  IValue diff = in.callOperator("aten::sub", {cols, rows}, {});
  IValue keep = in.callOperator(upper ? "aten::ge" : "aten::le", {diff, IValue::integer(diagonal)}, {});
  IValue zero = dtypeOf(x) == DType::Bool ? IValue::boolean(false)
                : isFloat(dtypeOf(x))     ? IValue::floating(0.0)
                                          : IValue::integer(0);
  return in.callOperator("aten::where", {keep, self, zero}, {});
}

namespace {

using Table = std::map<std::string, OpHandler>;

/// The dtype torch.full gives a fill value when no dtype is named.
DType fillDType(const IValue &fill) {
  if (fill.is(K::Float) || isRunTimeFloat(fill))
    return DType::Float32;
  if (fill.is(K::Bool))
    return DType::Bool;
  return DType::Int64;
}

/// torch.zeros / ones / full / empty(sizes), and x.new_*(sizes).
OpHandler factory(int kind /* 0 zeros, 1 ones, 2 full, 3 empty (zeros) */, bool fromSelf) {
  return [kind, fromSelf](Interpreter &in, const BoundArgs &b) -> IValue {
    Args a{in, b};
    IValue fill = kind == 1 ? IValue::integer(1) : kind == 2 ? a["fill_value"] : IValue::integer(0);
    DType d = fromSelf ? dtypeOf(a.t("self")) : kind == 2 ? fillDType(fill) : DType::Float32;
    d = a.dtype("dtype").value_or(d);
    bool ok;
    std::vector<Value> sizes = sizeOperands(in, a["size"], b.schema->name, ok);
    if (!ok)
      return IValue::poison();
    return ret(filledTo(in, sizes, d, fill));
  };
}

IValue expand(Interpreter &in, const BoundArgs &b) {
  Args a{in, b};
  Value x = a.t("self");
  const IValue &list = a["size"];
  if (!list.isSequence())
    in.fail("CUVIL-E-IMPORT-TYPE", "aten::expand takes a list of sizes");
  int64_t rank = static_cast<int64_t>(list.list->size()), offset = rank - rankOf(x);
  if (offset < 0)
    in.fail("CUVIL-E-IMPORT-RAISE", "expand: the number of sizes provided (" + std::to_string(rank) +
                                        ") must be greater or equal to the number of dimensions in the tensor (" +
                                        std::to_string(rankOf(x)) + ")");
  std::vector<Value> sizes;
  std::vector<Value> own = sizesOf(in, x);
  for (int64_t i = 0; i < rank; ++i) {
    const IValue &v = (*list.list)[i];
    if (v.is(K::Int) && v.i == -1) {
      if (i < offset)
        in.fail("CUVIL-E-IMPORT-RAISE", "expand: -1 is not allowed in a leading, non-existing dimension");
      sizes.push_back(own[i - offset]);
      continue;
    }
    Value s = sizeOperand(in, v, "aten::expand");
    if (!s)
      return IValue::poison();
    sizes.push_back(s);
  }
  return view(a["self"], in.build<cir::ExpandDynamicOp>(x, mlir::ValueRange(sizes)));
}

/// torch.arange(end), (start, end), (start, end, step) with a run-time
/// bound: iota of the element count, times step, plus start.
IValue arange(Interpreter &in, const BoundArgs &b) {
  Args a{in, b};
  IValue start = b.has("start") ? a["start"] : IValue::integer(0);
  IValue end = a["end"];
  IValue step = b.has("step") ? a["step"] : IValue::integer(1);
  for (const IValue *v : {&start, &end, &step})
    if (v->is(K::Float) || isRunTimeFloat(*v))
      return in.unsupported("aten::arange with a float bound or step and a bound known only at run time");
  if (!step.is(K::Int))
    return in.unsupported("aten::arange with a step known only at run time");
  if (step.i == 0)
    in.fail("CUVIL-E-IMPORT-RAISE", "arange: step must be nonzero");
  for (const IValue *v : {&start, &end})
    if (isRunTimeInt(*v) && !mlir::cuvil::isComputedFromShapes(v->tensor->value))
      return in.unsupported("aten::arange with a bound computed from tensor data (a library's buffers are "
                            "sized by the bounds of its inputs' dimensions; a size read from data has none)");
  // count = ceil((end - start) / step), as a floor division of ints.
  bool fromZero = start.is(K::Int) && start.i == 0;
  IValue span = step.i > 0 ? (fromZero ? end : in.callOperator("aten::sub", {end, start}, {}))
                           : in.callOperator("aten::sub", {start, end}, {});
  int64_t magnitude = step.i > 0 ? step.i : -step.i;
  IValue count = span;
  if (magnitude != 1)
    count = in.callOperator("aten::floor_divide",
                            {in.callOperator("aten::add", {span, IValue::integer(magnitude - 1)}, {}),
                             IValue::integer(magnitude)},
                            {});
  if (!count.isTensor())
    in.fail("CUVIL-E-IMPORT-TYPE", "arange: the element count is not a run-time int");
  IValue values = ret(iotaOf(in, cast(in, count.tensor->value, DType::Int64)));
  if (step.i != 1)
    values = in.callOperator("aten::mul", {values, step}, {});
  if (!fromZero)
    values = in.callOperator("aten::add", {values, start}, {});
  return ret(cast(in, values.tensor->value, a.dtype("dtype").value_or(DType::Int64)));
}

/// torch.eye(n[, m]): the rows' index equal to the columns'.
IValue eye(Interpreter &in, const BoundArgs &b) {
  Args a{in, b};
  Value n = sizeOperand(in, a["n"], "aten::eye");
  Value m = b.has("m") && !a.none("m") ? sizeOperand(in, a["m"], "aten::eye") : n;
  if (!n || !m)
    return IValue::poison();
  IValue rows = in.callOperator("aten::unsqueeze", {ret(iotaOf(in, n)), IValue::integer(-1)}, {});
  IValue same = in.callOperator("aten::eq", {rows, ret(iotaOf(in, m))}, {});
  return ret(cast(in, same.tensor->value, a.dtype("dtype").value_or(DType::Float32)));
}

/// Picks `indices` (an i64 tensor) along `dim`: cuvil.tensor.index_select,
/// whose indices are checked at run time.
Value pick(Interpreter &in, Value x, Value indices, int64_t dim) {
  return in.build<cir::IndexSelectOp>(x, cast(in, indices, DType::Int64), i64(in, dim));
}

/// x.select(dim, t) / x[:, t] with a run-time index (a loop over a
/// run-time length): the index picked, the dimension dropped. A view:
/// writing through it is refused.
IValue selectAt(Interpreter &in, const BoundArgs &b) {
  Args a{in, b};
  Value x = a.t("self");
  int64_t dim = wrapDim(in, a.i("dim"), rankOf(x));
  const IValue &index = a["index"];
  if (!isRunTimeInt(index))
    in.fail("CUVIL-E-IMPORT-TYPE", "select takes an int index, got " + index.typeName());
  Value one = in.build<cir::ReshapeOp>(cast(in, index.tensor->value, DType::Int64), i64s(in, {1}));
  Value r = in.build<cir::SqueezeOp>(pick(in, x, one, dim), i64s(in, {dim}));
  return view(a["self"], r);
}

/// start, start + 1, ..., start + length - 1 for a run-time start.
Value indexRange(Interpreter &in, const IValue &start, int64_t length) {
  IValue offsets = ret(constantI64(in, iota(length), {length}));
  return in.callOperator("aten::add", {offsets, start}, {}).tensor->value;
}

/// x[:, t:t + c] with a run-time start t and a static length c (the end
/// is t plus a constant): the c indices from t. Past the end PyTorch
/// would return fewer elements; here that is a run-time error (an index
/// out of range), never a wrong size.
IValue sliceFrom(Interpreter &in, const BoundArgs &b) {
  Args a{in, b};
  Value x = a.t("self");
  int64_t dim = wrapDim(in, a.i("dim"), rankOf(x));
  const IValue &start = a["start"], &end = a["end"];
  if (!(a["step"].is(K::Int) && a.i("step") == 1) || !isRunTimeInt(start))
    return in.unsupported("aten::slice with a start known only at run time and a step other than 1, "
                          "or an end known only at run time and a start other than 0");
  std::optional<int64_t> length;
  if (isRunTimeInt(end))
    if (auto add = end.tensor->value.getDefiningOp<cir::AddOp>())
      if (mlir::cuvil::lookThroughSize(add.getLhs()) == mlir::cuvil::lookThroughSize(start.tensor->value))
        length = mlir::cuvil::constantSize(add.getRhs());
  if (!length || *length < 0)
    return in.unsupported("aten::slice with a start known only at run time whose length is not a constant "
                          "(x[:, t:t + c] is supported)");
  return view(a["self"], pick(in, x, indexRange(in, start, *length), dim));
}

} // namespace
} // namespace lower

void registerRunTimeSizeHandlers(std::map<std::string, OpHandler> &t) {
  using namespace lower;
  t["aten::zeros"] = factory(0, false);
  t["aten::ones"] = factory(1, false);
  t["aten::full"] = factory(2, false);
  t["aten::empty"] = factory(3, false); // uninitialised in PyTorch; zeros here
  t["aten::new_zeros"] = factory(0, true);
  t["aten::new_ones"] = factory(1, true);
  t["aten::new_full"] = factory(2, true);
  t["aten::new_empty"] = factory(3, true);
  t["aten::expand"] = expand;
  t["aten::arange"] = arange;
  t["aten::eye"] = eye;
  t["aten::select"] = selectAt;
  t["aten::slice"] = sliceFrom;
}

} // namespace cuvil::torchscript
