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
#include "support/Tensor.h"

#include "dialects/Cuvil/IR/CuvilOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/IRMapping.h"

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
  if (e.isF16()) return DType::Float16;
  if (e.isBF16()) return DType::BFloat16;
  if (e.isF32()) return DType::Float32;
  if (e.isF64()) return DType::Float64;
  if (e.isInteger(1)) return DType::Bool;
  if (e.isUnsignedInteger(8)) return DType::UInt8;
  switch (e.getIntOrFloatBitWidth()) {
  case 8: return DType::Int8;
  case 16: return DType::Int16;
  case 32: return DType::Int32;
  default: return DType::Int64;
  }
}

inline DType dtypeOf(Value v) { return dtypeOfElement(typeOf(v).getElementType()); }

inline mlir::Type elementType(mlir::MLIRContext *ctx, DType d) {
  switch (d) {
  case DType::Bool: return mlir::IntegerType::get(ctx, 1);
  case DType::UInt8: return mlir::IntegerType::get(ctx, 8, mlir::IntegerType::Unsigned);
  case DType::Int8: return mlir::IntegerType::get(ctx, 8);
  case DType::Int16: return mlir::IntegerType::get(ctx, 16);
  case DType::Int32: return mlir::IntegerType::get(ctx, 32);
  case DType::Int64: return mlir::IntegerType::get(ctx, 64);
  case DType::Float16: return mlir::Float16Type::get(ctx);
  case DType::BFloat16: return mlir::BFloat16Type::get(ctx);
  case DType::Float32: return mlir::Float32Type::get(ctx);
  case DType::Float64: return mlir::Float64Type::get(ctx);
  }
  return {};
}

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

/// Applies an in-place op: the tensor's box takes the new value, which must
/// keep its shape and (castable) dtype; views of the tensor are recomputed.
///
/// On a view, the write must reach the viewed tensor. That is provably the
/// same in value semantics only when the view is a plain reshape of the
/// whole tensor (view, reshape, flatten, squeeze, unsqueeze, or an alias
/// such as detach): the tensor then takes the new value reshaped back. A
/// write into a strided view (slice, select, transpose, expand) is refused
/// with the reason.
inline IValue inplace(Interpreter &in, const IValue &self, Value v) {
  TensorBox &box = *self.tensor;
  if (box.base) {
    TensorBox &base = *box.base;
    for (Value cur = box.value; cur != base.value;) {
      mlir::Operation *def = cur.getDefiningOp();
      if (!def || !llvm::isa<cir::ReshapeOp, cir::FlattenOp, cir::SqueezeOp, cir::UnsqueezeOp>(def))
        return in.unsupported("in-place operation on a strided view (slice, select, transpose or "
                              "expand) of another tensor (write out of place instead, e.g. with "
                              "torch.cat or torch.where)");
      cur = def->getOperand(0);
    }
    if (!typeOf(base.value).hasStaticShape())
      return in.unsupported("in-place operation on a view of a tensor with dynamic dimensions");
  }
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
    // Write through the reshape view; every view of the tensor, this one
    // included, is then recomputed from the tensor's new value.
    RankedTensorType baseType = typeOf(box.base->value);
    Value back = typeOf(v).getShape() == baseType.getShape()
                     ? v
                     : in.build<cir::ReshapeOp>(v, in.builder().getDenseI64ArrayAttr(baseType.getShape()));
    ok = updateBase(in, *box.base, back, nullptr);
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
