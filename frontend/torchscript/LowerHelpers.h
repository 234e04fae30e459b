//===- LowerHelpers.h - What the aten operator handlers share -*- C++ -*-===//
//
// The handlers of LowerOps.cpp, LowerMath.cpp and LowerTensorOps.cpp
// translate PyTorch's calling conventions with these: argument accessors
// (Args), dtype rules for Python scalars, negative dims, in-place updates
// and their views, and registration templates for element-wise families.
// Internal to the TorchScript importer.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_FRONTEND_TORCHSCRIPT_LOWERHELPERS_H
#define CUVIL_FRONTEND_TORCHSCRIPT_LOWERHELPERS_H

#include "frontend/torchscript/Interpreter.h"
#include "dialects/Cuvil/IR/ElementTypes.h"
#include "support/Tensor.h"

#include "dialects/Cuvil/IR/CuvilOps.h"
#include "dialects/Cuvil/IR/TypeRules.h"
#include "dialects/Cuvil/Reference/Evaluator.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/IRMapping.h"

#include <functional>
#include <numeric>
#include <map>
#include <string>
#include <vector>

namespace cuvil::torchscript::lower {

namespace cir = mlir::cuvil;

using mlir::RankedTensorType;
using mlir::Value;
using K = IValue::Kind;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

inline RankedTensorType typeOf(Value v) { return llvm::cast<RankedTensorType>(v.getType()); }
inline int64_t rankOf(Value v) { return typeOf(v).getRank(); }

/// The DType of an element type (signed integers unless ui8).
inline DType dtypeOfElement(mlir::Type e) {
  return mlir::cuvil::dtypeOfElementType(e).value_or(DType::Int64);
}

inline DType dtypeOf(Value v) { return dtypeOfElement(typeOf(v).getElementType()); }

inline mlir::Type elementType(mlir::MLIRContext *ctx, DType d) { return mlir::cuvil::elementTypeOf(ctx, d); }

/// Accessors for the bound arguments of one call.
struct Args {
  Interpreter &in;
  const BoundArgs &a;

  const IValue &operator[](const char *name) const { return a.get(name); }
  bool none(const char *name) const { return a.get(name).isNone(); }
  Value t(const char *name) const {
    const IValue &v = a.get(name);
    if (!v.isTensor())
      in.fail("CUVIL-E-IMPORT-TYPE", std::string("argument '") + name + "' must be a tensor, got " + v.typeName());
    return v.tensor->value;
  }
  Value optT(const char *name) const {
    const IValue &v = a.get(name);
    return v.isTensor() ? v.tensor->value : Value();
  }
  int64_t i(const char *name) const {
    const IValue &v = a.get(name);
    if (v.is(K::Bool))
      return v.b;
    if (!v.is(K::Int))
      in.fail("CUVIL-E-IMPORT-TYPE", std::string("argument '") + name + "' must be an int, got " + v.typeName());
    return v.i;
  }
  double f(const char *name) const {
    const IValue &v = a.get(name);
    if (v.is(K::Float)) return v.f;
    if (v.is(K::Int)) return double(v.i);
    if (v.is(K::Bool)) return double(v.b);
    in.fail("CUVIL-E-IMPORT-TYPE", std::string("argument '") + name + "' must be a number, got " + v.typeName());
  }
  bool b(const char *name) const {
    const IValue &v = a.get(name);
    if (v.is(K::Bool)) return v.b;
    if (v.is(K::Int)) return v.i != 0;
    in.fail("CUVIL-E-IMPORT-TYPE", std::string("argument '") + name + "' must be a bool, got " + v.typeName());
  }
  std::string s(const char *name) const {
    const IValue &v = a.get(name);
    if (!v.is(K::Str))
      in.fail("CUVIL-E-IMPORT-TYPE", std::string("argument '") + name + "' must be a string");
    return v.s;
  }
  std::vector<int64_t> ints(const char *name) const {
    const IValue &v = a.get(name);
    std::vector<int64_t> out;
    if (v.is(K::Int)) {
      out.push_back(v.i);
      return out;
    }
    if (!v.isSequence())
      in.fail("CUVIL-E-IMPORT-TYPE", std::string("argument '") + name + "' must be a list of ints, got " + v.typeName());
    for (const IValue &x : *v.list) {
      if (!x.is(K::Int))
        in.fail("CUVIL-E-IMPORT-TYPE", std::string("argument '") + name + "' must be a list of ints");
      out.push_back(x.i);
    }
    return out;
  }
  std::vector<Value> tensors(const char *name) const {
    const IValue &v = a.get(name);
    if (!v.isSequence())
      in.fail("CUVIL-E-IMPORT-TYPE", std::string("argument '") + name + "' must be a list of tensors");
    std::vector<Value> out;
    for (const IValue &x : *v.list) {
      if (!x.isTensor())
        in.fail("CUVIL-E-IMPORT-TYPE", std::string("argument '") + name + "' must be a list of tensors");
      out.push_back(x.tensor->value);
    }
    return out;
  }
  std::optional<DType> dtype(const char *name) const {
    const IValue &v = a.get(name);
    if (v.isNone())
      return std::nullopt;
    std::optional<DType> d = dtypeFromScalarType(i(name));
    if (!d)
      in.fail("CUVIL-E-IMPORT-DTYPE", "dtype code " + std::to_string(i(name)) + " is not supported");
    return d;
  }
};

inline IValue ret(Value v) { return IValue::ofTensor(v); }

/// PyTorch's maybe_wrap_dim: negative dims count from the end; a 0-d
/// tensor accepts dims -1 and 0.
inline int64_t wrapDim(Interpreter &in, int64_t d, int64_t rank) {
  int64_t r = std::max<int64_t>(rank, 1);
  if (d < -r || d >= r)
    in.fail("CUVIL-E-IMPORT-RAISE", "dimension " + std::to_string(d) +
                                        " is out of range for a tensor of rank " + std::to_string(rank));
  return d < 0 ? d + r : d;
}

inline Value cast(Interpreter &in, Value v, DType to) {
  if (dtypeOf(v) == to)
    return v;
  RankedTensorType type = typeOf(v).clone(elementType(in.context(), to));
  return in.builder().create<cir::CastOp>(in.location(), type, v);
}

/// A Python scalar operand next to tensor `other`: a 0-d constant whose
/// dtype makes cuvil's promotion give PyTorch's result type (a wrapped
/// number never widens a tensor of its own category).
inline Value scalarOperand(Interpreter &in, const IValue &s, Value other) {
  DType od = dtypeOf(other), d;
  if (isFloat(od))
    d = od;
  else if (s.is(K::Float))
    d = DType::Float32;
  else if (s.is(K::Int))
    d = od == DType::Bool ? DType::Int64 : od;
  else
    d = od;
  return in.scalarConstant(s, d);
}

inline Value operand(Interpreter &in, const IValue &v, Value other) {
  if (v.isTensor())
    return v.tensor->value;
  if (!v.isScalar())
    in.fail("CUVIL-E-IMPORT-TYPE", "expected a tensor or a number, got " + v.typeName());
  return scalarOperand(in, v, other);
}

/// Unary float functions promote integer tensors to the default float.
inline Value floatOperand(Interpreter &in, Value v) {
  return isFloat(dtypeOf(v)) ? v : cast(in, v, DType::Float32);
}

inline IValue view(const IValue &base, Value v) { return viewOf(base, v); }

/// Recomputes a view after its base changed: the view ops between `v` and
/// `oldBase` are replayed on `newBase`. Null when `v` is not reached from
/// `oldBase` through view ops.
inline Value replayView(Interpreter &in, Value v, Value oldBase, Value newBase, int depth = 0) {
  if (v == oldBase)
    return newBase;
  mlir::Operation *def = v.getDefiningOp();
  if (!def || def->getNumOperands() != 1 || depth > 256)
    return Value();
  Value input = replayView(in, def->getOperand(0), oldBase, newBase, depth + 1);
  if (!input)
    return Value();
  mlir::IRMapping map;
  map.map(def->getOperand(0), input);
  return in.builder().clone(*def, map)->getResult(0);
}

/// Gives `base` a new value and recomputes its live views (except `skip`).
/// False when a view cannot be recomputed.
inline bool updateBase(Interpreter &in, TensorBox &base, Value newValue, const TensorBox *skip) {
  Value old = base.value;
  base.value = newValue;
  for (std::weak_ptr<TensorBox> &w : base.views) {
    std::shared_ptr<TensorBox> view = w.lock();
    if (!view || view.get() == skip)
      continue;
    Value refreshed = replayView(in, view->value, old, newValue);
    if (!refreshed)
      return false;
    view->value = refreshed;
  }
  llvm::erase_if(base.views, [](const std::weak_ptr<TensorBox> &w) { return w.expired(); });
  return true;
}

/// `parent` with the elements its view op `def` selects replaced by `v`
/// (`v` has the view's shape): the inverse of one view step. Null when the
/// step cannot be written through (an expand: several view elements would
/// share one element of the parent).
inline Value writeThrough(Interpreter &in, mlir::Operation *def, Value parent, Value v) {
  RankedTensorType pt = typeOf(parent);
  if (llvm::isa<cir::ReshapeOp, cir::FlattenOp, cir::SqueezeOp, cir::UnsqueezeOp>(def))
    return in.build<cir::ReshapeOp>(v, in.builder().getDenseI64ArrayAttr(pt.getShape()));
  if (auto p = llvm::dyn_cast<cir::PermuteOp>(def)) {
    llvm::ArrayRef<int64_t> order = p.getDims();
    std::vector<int64_t> inv(order.size());
    for (size_t i = 0; i < order.size(); ++i)
      inv[order[i]] = static_cast<int64_t>(i);
    return in.build<cir::PermuteOp>(v, in.builder().getDenseI64ArrayAttr(inv));
  }
  if (auto t = llvm::dyn_cast<cir::TransposeOp>(def))
    return in.build<cir::TransposeOp>(v, t.getDim0Attr(), t.getDim1Attr());
  if (!pt.hasStaticShape())
    return Value();
  int64_t dim, start, length, step = 1;
  Value part = v;
  if (auto s = llvm::dyn_cast<cir::SliceOp>(def)) {
    dim = s.getDim();
    step = s.getStep();
    length = mlir::cuvil::sliceLength(pt.getDimSize(dim), s.getStart(), s.getEnd(), step, &start);
  } else if (auto s = llvm::dyn_cast<cir::SelectOp>(def)) {
    dim = s.getDim();
    start = s.getIndex() < 0 ? s.getIndex() + pt.getDimSize(dim) : s.getIndex();
    length = 1;
    part = in.build<cir::UnsqueezeOp>(v, in.builder().getI64IntegerAttr(dim));
  } else {
    return Value();
  }
  int64_t size = pt.getDimSize(dim);
  auto sliceOf = [&](int64_t from, int64_t to) {
    return in.build<cir::SliceOp>(parent, in.builder().getI64IntegerAttr(dim), in.builder().getI64IntegerAttr(from),
                                  in.builder().getI64IntegerAttr(to), in.builder().getI64IntegerAttr(1));
  };
  if (step == 1 || length <= 1) { // before, the new part, after
    std::vector<Value> parts;
    if (start > 0)
      parts.push_back(sliceOf(0, start));
    parts.push_back(part);
    if (start + length < size)
      parts.push_back(sliceOf(start + length, size));
    return parts.size() == 1 ? parts[0] : in.build<cir::ConcatOp>(mlir::ValueRange(parts), in.builder().getI64IntegerAttr(dim));
  }
  // Every step-th element: a scatter along dim at the constant positions.
  std::vector<int64_t> shape(typeOf(part).getShape().begin(), typeOf(part).getShape().end());
  std::vector<int64_t> unit(shape.size(), 1), positions;
  unit[dim] = length;
  for (int64_t k = 0; k < length; ++k)
    positions.push_back(start + k * step);
  auto idxType = RankedTensorType::get(unit, in.builder().getI64Type());
  Value idx = in.builder().create<cir::ConstantOp>(
      in.location(), idxType, mlir::DenseElementsAttr::get(idxType, llvm::ArrayRef<int64_t>(positions)));
  idx = in.build<cir::ExpandOp>(idx, in.builder().getDenseI64ArrayAttr(shape));
  return in.build<cir::ScatterOp>(parent, idx, part, in.builder().getI64IntegerAttr(dim),
                                  cir::ScatterReduceAttr::get(in.context(), cir::ScatterReduce::None),
                                  in.builder().getBoolAttr(true));
}

/// Applies an in-place op: the tensor's box takes the new value, which must
/// keep its shape and (castable) dtype; views of the tensor are recomputed.
///
/// On a view, the write reaches the viewed tensor through the chain of view
/// ops between them, each inverted (writeThrough): reshapes reshape back,
/// permutes permute back, slices and selects put the new elements in place
/// of the old ones. Every view of the tensor, this one included, is then
/// recomputed from the tensor's new value.
inline IValue inplace(Interpreter &in, const IValue &self, Value v) {
  TensorBox &box = *self.tensor;
  RankedTensorType old = typeOf(box.value);
  if (typeOf(v).getShape() != old.getShape())
    in.fail("CUVIL-E-IMPORT-RAISE", "an in-place operation would change the tensor's shape");
  DType from = dtypeOf(v), to = dtypeOf(box.value);
  if (from != to) {
    if (isFloat(from) && !isFloat(to))
      in.fail("CUVIL-E-IMPORT-RAISE", "result type of an in-place operation can't be cast to the tensor's integer type");
    v = cast(in, v, to);
  }
  bool ok;
  if (box.base) {
    TensorBox &base = *box.base;
    std::optional<std::vector<mlir::Operation *>> chain = viewChain(box);
    if (!chain)
      return in.unsupported("in-place operation on a view that is not a reshape, permute, slice or select "
                            "of its tensor (write out of place instead, e.g. with torch.cat or torch.where)");
    Value written = v;
    for (mlir::Operation *def : *chain) {
      written = writeThrough(in, def, def->getOperand(0), written);
      if (!written)
        return in.unsupported("in-place operation on a view made by '" + def->getName().getStringRef().str() +
                              "' (an expanded view shares elements; write out of place instead)");
    }
    ok = updateBase(in, base, written, nullptr);
  } else {
    ok = updateBase(in, box, v, nullptr);
  }
  if (!ok)
    return in.unsupported("in-place operation on a tensor whose views cannot be recomputed");
  return self;
}

inline std::vector<int64_t> staticShape(Interpreter &in, Value v, const char *what) {
  RankedTensorType t = typeOf(v);
  if (!t.hasStaticShape()) {
    in.unsupported(std::string(what) + " of a tensor with dynamic dimensions");
    return {};
  }
  return std::vector<int64_t>(t.getShape().begin(), t.getShape().end());
}

// Tensors whose sizes are known only at run time (LowerRunTimeSizes.cpp).

/// A tensor of `like`'s shape, dynamic dimensions included, filled with
/// `fill` (a Python number, or a run-time one) as `d`.
Value filledLike(Interpreter &in, Value like, DType d, const IValue &fill);
/// x broadcast to `like`'s shape, dynamic dimensions included.
Value expandToShapeOf(Interpreter &in, Value x, Value like);
/// torch.triu (upper) / torch.tril of a matrix with dynamic dimensions.
IValue triangleOfRunTimeSize(Interpreter &in, const IValue &self, int64_t diagonal, bool upper);

inline mlir::DenseI64ArrayAttr i64s(Interpreter &in, llvm::ArrayRef<int64_t> v) {
  return in.builder().getDenseI64ArrayAttr(v);
}
inline mlir::FloatAttr f64(Interpreter &in, double v) { return in.builder().getF64FloatAttr(v); }
inline mlir::IntegerAttr i64(Interpreter &in, int64_t v) { return in.builder().getI64IntegerAttr(v); }

/// A constant tensor of `shape` filled with `value`.
inline Value splat(Interpreter &in, const std::vector<int64_t> &shape, DType d, const IValue &value) {
  Value scalar = in.scalarConstant(value, d);
  auto scalarOp = scalar.getDefiningOp<cir::ConstantOp>();
  auto dense = llvm::cast<mlir::DenseElementsAttr>(scalarOp.getValue());
  RankedTensorType type = RankedTensorType::get(shape, dense.getElementType());
  mlir::DenseElementsAttr attr = mlir::DenseElementsAttr::get(type, dense.getSplatValue<mlir::Attribute>());
  scalarOp->erase();
  return in.builder().create<cir::ConstantOp>(in.location(), type, attr);
}

inline int64_t numel(const std::vector<int64_t> &shape) {
  return std::accumulate(shape.begin(), shape.end(), int64_t(1), std::multiplies<int64_t>());
}

/// start, start + 1, ..., start + n - 1.
inline std::vector<int64_t> iota(int64_t n, int64_t start = 0) {
  std::vector<int64_t> v(n);
  std::iota(v.begin(), v.end(), start);
  return v;
}

inline Value slice(Interpreter &in, Value x, int64_t dim, int64_t start, int64_t end, int64_t step = 1) {
  return in.build<cir::SliceOp>(x, i64(in, dim), i64(in, start), i64(in, end), i64(in, step));
}

/// x permuted (itself for the identity order).
inline Value permute(Interpreter &in, Value x, const std::vector<int64_t> &order) {
  if (order == iota(static_cast<int64_t>(order.size())))
    return x;
  return in.build<cir::PermuteOp>(x, i64s(in, order));
}

inline std::vector<int64_t> shapeOf(Value v) {
  return std::vector<int64_t>(typeOf(v).getShape().begin(), typeOf(v).getShape().end());
}

/// `v` reshaped (nothing built when it has the shape already).
inline Value reshape(Interpreter &in, Value v, const std::vector<int64_t> &shape) {
  if (shapeOf(v) == shape)
    return v;
  return in.build<cir::ReshapeOp>(v, i64s(in, shape));
}

/// `v` broadcast to `shape` (nothing built when it has the shape already).
inline Value expandTo(Interpreter &in, Value v, const std::vector<int64_t> &shape) {
  if (shapeOf(v) == shape)
    return v;
  return in.build<cir::ExpandOp>(v, i64s(in, shape));
}

/// A constant i64 tensor of `shape` (1-D of the values when empty).
inline Value constantI64(Interpreter &in, const std::vector<int64_t> &values,
                         std::vector<int64_t> shape = {}) {
  if (shape.empty())
    shape = {static_cast<int64_t>(values.size())};
  auto type = RankedTensorType::get(shape, in.builder().getI64Type());
  auto attr = mlir::DenseElementsAttr::get(type, llvm::ArrayRef<int64_t>(values));
  return in.builder().create<cir::ConstantOp>(in.location(), type, attr);
}

/// A constant holding the host tensor `t` (dense: for small tables).
inline Value constantFrom(Interpreter &in, const Tensor &t) {
  RankedTensorType type = mlir::cuvil::reference::tensorTypeOf(in.context(), t);
  return in.builder().create<cir::ConstantOp>(in.location(), type,
                                              mlir::cuvil::reference::attrFromTensor(t, type));
}

/// PyTorch's unbatched inputs: an op on [N, C, spatial...] also takes
/// [C, spatial...], as a batch of one. `fn` builds the op (null when it
/// could not); a batch of one is added around it when `x` lacks it.
inline Value batchedOnce(Interpreter &in, Value x, int64_t batchedRank,
                         const std::function<Value(Value)> &fn) {
  if (rankOf(x) != batchedRank - 1)
    return fn(x);
  Value r = fn(in.build<cir::UnsqueezeOp>(x, i64(in, 0)));
  return r ? in.build<cir::SqueezeOp>(r, i64s(in, {0})) : r;
}

/// An int list argument of a spatial op fitted to `spatial` entries: a
/// single value is repeated (PyTorch's int[N] broadcasting, also for
/// one-element lists); an empty list gives `fallback`.
inline std::vector<int64_t> fitSpatial(Interpreter &in, std::vector<int64_t> v, int64_t spatial,
                                       const char *what, const std::vector<int64_t> &fallback = {}) {
  if (v.empty() && !fallback.empty())
    return fallback;
  if (v.size() == 1 && spatial > 1)
    v.assign(spatial, v[0]);
  if (static_cast<int64_t>(v.size()) != spatial)
    in.fail("CUVIL-E-IMPORT-RAISE", std::string("expected ") + what + " to have " +
                                        std::to_string(spatial) + " elements, got " +
                                        std::to_string(v.size()));
  return v;
}

using Table = std::map<std::string, OpHandler>;

//===----------------------------------------------------------------------===//
// Element-wise
//===----------------------------------------------------------------------===//

template <typename OpTy>
void unaryFloat(Table &t, const std::string &name, bool alsoInplace = true) {
  t[name] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    return ret(in.build<OpTy>(floatOperand(in, a.t("self"))));
  };
  if (alsoInplace)
    t[name + "_"] = [](Interpreter &in, const BoundArgs &b) {
      Args a{in, b};
      return inplace(in, a["self"], in.build<OpTy>(floatOperand(in, a.t("self"))));
    };
}

template <typename OpTy>
void unaryKeep(Table &t, const std::string &name) {
  t[name] = [](Interpreter &in, const BoundArgs &b) {
    return ret(in.build<OpTy>(Args{in, b}.t("self")));
  };
  t[name + "_"] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    return inplace(in, a["self"], in.build<OpTy>(a.t("self")));
  };
}

/// self op (alpha * other) for add/sub, and rsub's other - alpha * self
/// (alpha scales the operand that is subtracted); alpha != 1 multiplies
/// first.
inline Value addSub(Interpreter &in, const Args &a, bool sub, bool reversed) {
  Value self = a.t("self");
  Value other = operand(in, a["other"], self);
  if (reversed)
    std::swap(self, other);
  const IValue &alpha = a["alpha"];
  if (!alpha.isNone() && !(alpha.is(K::Int) && alpha.i == 1) &&
      !(alpha.is(K::Float) && alpha.f == 1.0))
    other = in.build<cir::MulOp>(other, scalarOperand(in, alpha, other));
  return sub ? in.build<cir::SubOp>(self, other) : in.build<cir::AddOp>(self, other);
}

template <typename OpTy>
void binary(Table &t, const std::string &name, const char *otherName = "other") {
  std::string other = otherName;
  auto fn = [other](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value self = a.t("self");
    return in.build<OpTy>(self, operand(in, a[other.c_str()], self));
  };
  t[name] = [fn](Interpreter &in, const BoundArgs &b) { return ret(fn(in, b)); };
  t[name + "_"] = [fn](Interpreter &in, const BoundArgs &b) {
    return inplace(in, b.get("self"), fn(in, b));
  };
}

inline Value divide(Interpreter &in, const Args &a) {
  Value self = a.t("self");
  Value other = operand(in, a["other"], self);
  cir::RoundingMode mode = cir::RoundingMode::None;
  if (a.a.has("rounding_mode") && !a.none("rounding_mode")) {
    std::string m = a.s("rounding_mode");
    if (m == "trunc")
      mode = cir::RoundingMode::Trunc;
    else if (m == "floor")
      mode = cir::RoundingMode::Floor;
    else
      in.fail("CUVIL-E-IMPORT-RAISE", "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '" + m + "'");
  }
  return in.build<cir::DivOp>(self, other, cir::RoundingModeAttr::get(in.context(), mode));
}

template <typename OpTy>
void compare(Table &t, const std::string &name) {
  t[name] = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value self = a.t("self");
    return ret(in.build<OpTy>(self, operand(in, a["other"], self)));
  };
}

} // namespace cuvil::torchscript::lower

#endif // CUVIL_FRONTEND_TORCHSCRIPT_LOWERHELPERS_H
