//===- DType.cpp - Element type names and sizes ---------------------------===//
#include "support/DType.h"

namespace cuvil {

size_t dtypeSize(DType t) {
  switch (t) {
  case DType::Bool:
  case DType::UInt8:
  case DType::Int8:
    return 1;
  case DType::Int16:
  case DType::Float16:
  case DType::BFloat16:
    return 2;
  case DType::Int32:
  case DType::Float32:
    return 4;
  case DType::Int64:
  case DType::Float64:
  case DType::Complex64:
    return 8;
  case DType::Complex128:
    return 16;
  }
  return 0;
}

std::string_view dtypeName(DType t) {
  switch (t) {
  case DType::Bool: return "i1";
  case DType::UInt8: return "ui8";
  case DType::Int8: return "i8";
  case DType::Int16: return "i16";
  case DType::Int32: return "i32";
  case DType::Int64: return "i64";
  case DType::Float16: return "f16";
  case DType::BFloat16: return "bf16";
  case DType::Float32: return "f32";
  case DType::Float64: return "f64";
  case DType::Complex64: return "complex64";
  case DType::Complex128: return "complex128";
  }
  return "?";
}

std::optional<DType> parseDType(std::string_view name) {
  for (DType t : {DType::Bool, DType::UInt8, DType::Int8, DType::Int16,
                  DType::Int32, DType::Int64, DType::Float16, DType::BFloat16,
                  DType::Float32, DType::Float64, DType::Complex64, DType::Complex128})
    if (dtypeName(t) == name)
      return t;
  return std::nullopt;
}

std::string_view dtypeNumpyDescr(DType t) {
  switch (t) {
  case DType::Bool: return "|b1";
  case DType::UInt8: return "|u1";
  case DType::Int8: return "|i1";
  case DType::Int16: return "<i2";
  case DType::Int32: return "<i4";
  case DType::Int64: return "<i8";
  case DType::Float16: return "<f2";
  case DType::BFloat16: return "";
  case DType::Float32: return "<f4";
  case DType::Float64: return "<f8";
  case DType::Complex64: return "<c8";
  case DType::Complex128: return "<c16";
  }
  return "";
}

std::optional<DType> parseNumpyDescr(std::string_view d) {
  if (d.size() < 2)
    return std::nullopt;
  char order = d[0];
  std::string_view kind = d.substr(1);
  // One-byte types carry '|'; wider ones must be little-endian ('<' or, on
  // this little-endian host, '=').
  bool oneByte = kind == "b1" || kind == "u1" || kind == "i1";
  if (oneByte ? (order != '|' && order != '<' && order != '=')
              : (order != '<' && order != '='))
    return std::nullopt;
  if (kind == "b1") return DType::Bool;
  if (kind == "u1") return DType::UInt8;
  if (kind == "i1") return DType::Int8;
  if (kind == "i2") return DType::Int16;
  if (kind == "i4") return DType::Int32;
  if (kind == "i8") return DType::Int64;
  if (kind == "f2") return DType::Float16;
  if (kind == "f4") return DType::Float32;
  if (kind == "f8") return DType::Float64;
  if (kind == "c8") return DType::Complex64;
  if (kind == "c16") return DType::Complex128;
  return std::nullopt;
}

} // namespace cuvil
