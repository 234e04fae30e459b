//===- Values.h - Values of the TorchScript partial evaluator ---*- C++ -*-===//
//
// The importer runs the serialized TorchScript code itself. Everything that
// is not a tensor's data (ints, floats, strings, lists, tuples, dicts,
// Optional, module objects, shapes) is a concrete value computed at import
// time; tensors are SSA values of the cuvil IR being built. In-place tensor
// ops replace the value held by a TensorBox, which every Python name bound
// to that tensor shares.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_FRONTEND_TORCHSCRIPT_VALUES_H
#define CUVIL_FRONTEND_TORCHSCRIPT_VALUES_H

#include "frontend/torchscript/Ast.h"
#include "frontend/torchscript/Pickle.h"

#include "mlir/IR/Value.h"

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace cuvil::torchscript {

/// A tensor: the IR value that currently holds its contents.
struct TensorBox {
  mlir::Value value;
  /// Set when this tensor is a view of another: `value` is computed from
  /// the base's value by view ops only.
  std::shared_ptr<TensorBox> base;
  /// The views of this tensor that are still referenced: an in-place write
  /// to this tensor recomputes them from its new value.
  std::vector<std::weak_ptr<TensorBox>> views;
  /// A Python int known only at run time (a '?' dimension's size, int(t)):
  /// a 0-d i64 tensor that sizes (view/reshape) may use.
  bool symbolicInt = false;
  /// A Python float known only at run time (float(t), t.item()): a 0-d f64
  /// tensor. In a tensor op it acts as a wrapped number: it never widens a
  /// float tensor, and next to integer tensors it is the default float.
  bool symbolicFloat = false;
  /// A complex tensor: `value` is its (real, imaginary) pairs, a float
  /// tensor with one more dimension of 2 (LowerComplex.cpp).
  bool complex = false;
  /// A quantized tensor (quint8, qint8, qint32): `value` holds its real
  /// values (the dequantization of `qstorage`), `qstorage` its integers and
  /// `qparams` (a #cuvil.quant) their meaning. The quantized:: operators
  /// read the storage; aten ops compute on the real values and quantize
  /// their result again by the rule of LowerQuantized.cpp.
  mlir::Value qstorage;
  mlir::Attribute qparams;
  /// PyTorch holds it channels-last (what its quantized convolutions
  /// return): its average pooling then rounds differently.
  bool channelsLast = false;
  bool quantized() const { return static_cast<bool>(qstorage); }

  TensorBox() = default;
  TensorBox(const TensorBox &) = delete;
  TensorBox &operator=(const TensorBox &) = delete;
};

struct IValue;
struct ObjectInst;
using IValueList = std::vector<IValue>;
using IValueDict = std::vector<std::pair<IValue, IValue>>;

struct IValue {
  enum class Kind {
    None, Bool, Int, Float, Str, Device,
    Tensor,
    List,        ///< mutable, shared between aliases
    Tuple,
    Dict,
    Object,      ///< a module or TorchScript class instance
    Function,    ///< a function defined in code/ (func + file)
    Method,      ///< a bound method (object + func)
    Builtin,     ///< an operator ("aten::relu") or interpreter builtin ("range")
    Namespace,   ///< a dotted prefix such as "__torch__.torch.nn" or "torch"
    Type,        ///< a type expression (annotate, isinstance)
    Uninitialized,
    Poison,      ///< the result of an unsupported op; absorbs everything
  };
  Kind kind = Kind::None;
  bool b = false;
  int64_t i = 0;
  double f = 0;
  std::string s;
  std::shared_ptr<TensorBox> tensor;
  std::shared_ptr<IValueList> list;
  std::shared_ptr<IValueDict> dict;
  std::shared_ptr<ObjectInst> object;
  /// A NamedTuple's field names (a Tuple whose items are the fields).
  std::shared_ptr<const std::vector<std::string>> fields;
  const FuncDef *func = nullptr;
  const SourceFile *file = nullptr;
  const Expr *typeExpr = nullptr;

  static IValue none() { return IValue(); }
  static IValue boolean(bool v) { IValue x; x.kind = Kind::Bool; x.b = v; return x; }
  static IValue integer(int64_t v) { IValue x; x.kind = Kind::Int; x.i = v; return x; }
  static IValue floating(double v) { IValue x; x.kind = Kind::Float; x.f = v; return x; }
  static IValue string(std::string v) { IValue x; x.kind = Kind::Str; x.s = std::move(v); return x; }
  static IValue device(std::string v) { IValue x; x.kind = Kind::Device; x.s = std::move(v); return x; }
  static IValue ofTensor(std::shared_ptr<TensorBox> t) { IValue x; x.kind = Kind::Tensor; x.tensor = std::move(t); return x; }
  static IValue ofTensor(mlir::Value v) {
    auto box = std::make_shared<TensorBox>();
    box->value = v;
    return ofTensor(box);
  }
  static IValue makeList(IValueList items = {}) { IValue x; x.kind = Kind::List; x.list = std::make_shared<IValueList>(std::move(items)); return x; }
  static IValue makeTuple(IValueList items = {}) { IValue x; x.kind = Kind::Tuple; x.list = std::make_shared<IValueList>(std::move(items)); return x; }
  static IValue builtin(std::string name) { IValue x; x.kind = Kind::Builtin; x.s = std::move(name); return x; }
  static IValue ns(std::string path) { IValue x; x.kind = Kind::Namespace; x.s = std::move(path); return x; }
  static IValue poison() { IValue x; x.kind = Kind::Poison; return x; }

  bool is(Kind k) const { return kind == k; }
  bool isNone() const { return kind == Kind::None; }
  bool isTensor() const { return kind == Kind::Tensor; }
  bool isScalar() const { return kind == Kind::Int || kind == Kind::Float || kind == Kind::Bool; }
  bool isSequence() const { return kind == Kind::List || kind == Kind::Tuple; }
  /// "int", "Tensor", "List[int]"... for messages.
  std::string typeName() const;
  /// A short rendering for messages and str().
  std::string repr() const;
};

/// A module (or TorchScript class) instance.
struct ObjectInst {
  std::string className; ///< "__torch__.torch.nn.modules.conv.Conv2d"
  std::string path;      ///< attribute path from the root ("layer1.0"), "" for the root
  const ClassDef *cls = nullptr;
  const SourceFile *file = nullptr;
  const PValue *state = nullptr; ///< pickled attributes (a dict)
  std::map<std::string, IValue> attrs; ///< materialised attributes
  /// Made by the model's code during this import (Cls.__new__), not part of
  /// the module's state: its attributes may be written.
  bool local = false;
  /// A packed-parameter object of torch.classes.quantized (a quantized
  /// convolution's or linear layer's weights): no code, its fields in attrs.
  bool native = false;
};

} // namespace cuvil::torchscript

#endif // CUVIL_FRONTEND_TORCHSCRIPT_VALUES_H
