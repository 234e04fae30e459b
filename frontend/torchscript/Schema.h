//===- Schema.h - TorchScript operator schemas ------------------*- C++ -*-===//
//
// The operator schemas (names, overloads, argument order, types, defaults)
// that calls in serialized code are matched against. The table is generated
// from PyTorch's operator registry by schemas/generate_schemas.py and
// compiled into the importer.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_FRONTEND_TORCHSCRIPT_SCHEMA_H
#define CUVIL_FRONTEND_TORCHSCRIPT_SCHEMA_H

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace cuvil::torchscript {

/// A schema argument type: base kind, optional, list.
struct SchemaType {
  enum class Base {
    Tensor, Int, Float, Bool, Str, Scalar, Generic, Any, Device, ScalarType,
    Layout, MemoryFormat, Generator, Complex, Dict, Tuple, Other,
  };
  Base base = Base::Other;
  bool optional = false;     ///< T? or T[]?
  bool list = false;         ///< T[]
  bool elemOptional = false; ///< T?[]
  int64_t fixedSize = 0;     ///< int[2]: a single int broadcasts to 2
  std::string text;          ///< as written in the table
};

/// A literal default value.
struct SchemaLiteral {
  enum class Kind { None, Bool, Int, Float, Str, List } kind = Kind::None;
  bool b = false;
  int64_t i = 0;
  double f = 0;
  std::string s;
  std::vector<SchemaLiteral> items;
};

struct SchemaArg {
  std::string name;
  SchemaType type;
  bool kwOnly = false;
  bool hasDefault = false;
  SchemaLiteral defaultValue;
};

struct Schema {
  std::string name;     ///< "aten::add"
  std::string overload; ///< "Tensor" (empty for the default overload)
  std::vector<SchemaArg> args;
  std::vector<SchemaType> returns;
  bool varargs = false;
  /// "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1)".
  std::string signature() const;
};

class SchemaTable {
public:
  /// The table compiled into the importer.
  static const SchemaTable &get();
  /// Every overload of `name` ("aten::conv2d"), in table order.
  std::vector<const Schema *> overloads(const std::string &name) const;
  size_t size() const { return schemas_.size(); }

private:
  std::vector<Schema> schemas_;
  std::map<std::string, std::vector<const Schema *>> byName_;
};

} // namespace cuvil::torchscript

#endif // CUVIL_FRONTEND_TORCHSCRIPT_SCHEMA_H
