//===- DType.h - Element types shared by tools, evaluator and runtime -*- C++ -*-===//
//
// The element types Cuvil tensors can hold, with their MLIR spellings (used by
// --input-shape and in IR) and NumPy descriptors (used by .npy files). Plain
// C++: the aarch64 build of cuvil-run uses this without LLVM.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_SUPPORT_DTYPE_H
#define CUVIL_SUPPORT_DTYPE_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cuvil {

/// Element types, ordered as in PyTorch's promotion lattice categories.
enum class DType : uint8_t {
  Bool,
  UInt8,
  Int8,
  Int16,
  Int32,
  Int64,
  Float16,
  BFloat16,
  Float32,
  Float64,
  /// Pairs of f32 / f64 (real, imaginary), as NumPy's complex64 and
  /// complex128. Inside the compiler a complex tensor of shape S is a float
  /// tensor of shape S x 2, the same bytes (torch.view_as_real).
  Complex64,
  Complex128,
};

/// Size of one element in bytes.
size_t dtypeSize(DType t);
/// MLIR element type spelling: i1 ui8 i8 i16 i32 i64 f16 bf16 f32 f64, and
/// complex64 / complex128 (NumPy's names: MLIR's complex<f32> holds an 'x').
std::string_view dtypeName(DType t);
/// Parses an MLIR element type spelling; nullopt when unknown.
std::optional<DType> parseDType(std::string_view name);
/// NumPy descriptor (little-endian), e.g. "<f4"; empty for bf16 (no NumPy type).
std::string_view dtypeNumpyDescr(DType t);
/// Parses a NumPy descriptor such as "<f4", "|b1", "=i8"; nullopt when unsupported.
std::optional<DType> parseNumpyDescr(std::string_view descr);

inline bool isFloat(DType t) {
  return t == DType::Float16 || t == DType::BFloat16 || t == DType::Float32 ||
         t == DType::Float64;
}
inline bool isComplex(DType t) { return t == DType::Complex64 || t == DType::Complex128; }
inline bool isIntegral(DType t) { return !isFloat(t) && !isComplex(t) && t != DType::Bool; }
/// The float type of a complex type's parts (the type itself otherwise).
inline DType complexPart(DType t) {
  return t == DType::Complex64 ? DType::Float32 : t == DType::Complex128 ? DType::Float64 : t;
}

} // namespace cuvil

#endif // CUVIL_SUPPORT_DTYPE_H
