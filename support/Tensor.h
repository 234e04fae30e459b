//===- Tensor.h - A dense host tensor ---------------------------*- C++ -*-===//
//
// A contiguous, row-major tensor with value semantics: what .npy files hold,
// what the reference evaluator computes on, and what cuvil-run passes to a
// compiled library. Element access through double/int64 keeps the evaluator's
// loops simple and exact for every dtype (int64 values never pass through a
// double).
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_SUPPORT_TENSOR_H
#define CUVIL_SUPPORT_TENSOR_H

#include "support/DType.h"
#include "support/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace cuvil {

/// Largest tensor the host tools will allocate (bytes); guards against
/// shapes read from untrusted files.
constexpr uint64_t kMaxTensorBytes = uint64_t(1) << 36; // 64 GiB
/// Largest rank accepted anywhere.
constexpr int64_t kMaxRank = 16;

/// Number of elements of `shape`, or an error when a dimension is negative,
/// the rank is too large, or the product overflows / exceeds the byte cap.
Result<int64_t> checkedNumElements(const std::vector<int64_t> &shape,
                                   DType dtype);

/// Row-major strides (in elements) of `shape`.
std::vector<int64_t> contiguousStrides(const std::vector<int64_t> &shape);

/// "2x3xf32" (0-d: "f32").
std::string formatShape(const std::vector<int64_t> &shape, DType dtype);

/// IEEE half / bfloat16 conversions (round to nearest even).
float halfToFloat(uint16_t h);
uint16_t floatToHalf(float f);
float bf16ToFloat(uint16_t b);
uint16_t floatToBf16(float f);

class Tensor {
public:
  Tensor() = default;
  /// Zero-filled tensor. The shape must have been validated with
  /// checkedNumElements (asserted).
  Tensor(DType dtype, std::vector<int64_t> shape);

  /// Creates a zero-filled tensor after validating the shape.
  static Result<Tensor> create(DType dtype, std::vector<int64_t> shape);
  /// Tensors of the given values, converted to dtype.
  static Tensor fromDoubles(DType dtype, std::vector<int64_t> shape,
                            const std::vector<double> &values);
  static Tensor fromInts(DType dtype, std::vector<int64_t> shape,
                         const std::vector<int64_t> &values);

  DType dtype() const { return dtype_; }
  const std::vector<int64_t> &shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t dim(int64_t i) const { return shape_[i]; }
  int64_t numElements() const { return numel_; }
  size_t byteSize() const { return bytes_.size(); }
  uint8_t *data() { return bytes_.data(); }
  const uint8_t *data() const { return bytes_.data(); }

  /// Element `i` (flat, row-major) converted to double / int64. Bools read as
  /// 0/1; floats convert to int64 by truncation toward zero (C++ semantics,
  /// as PyTorch's casts).
  double getDouble(int64_t i) const;
  int64_t getInt(int64_t i) const;
  /// Stores `v` converted to this tensor's dtype: floats round to nearest,
  /// integers wrap modulo 2^bits (PyTorch's behaviour), bools are v != 0.
  void setDouble(int64_t i, double v);
  void setInt(int64_t i, int64_t v);

  std::vector<double> toDoubles() const;
  std::vector<int64_t> toInts() const;

  /// Same data, different shape (element counts must agree).
  Tensor reshaped(std::vector<int64_t> shape) const;
  /// Element-wise conversion to another dtype.
  Tensor cast(DType to) const;
  /// A complex tensor of shape S as its float pairs, shape S x 2 (the same
  /// bytes), and back. Fail on other dtypes / a last dimension other than 2.
  Result<Tensor> complexAsPairs() const;
  Result<Tensor> pairsAsComplex() const;

  std::string describe() const { return formatShape(shape_, dtype_); }
  /// "1x10xf32 [0.1, -2.5, ...]": the shape and the first `count` values.
  std::string preview(int count = 6) const;

private:
  DType dtype_ = DType::Float32;
  std::vector<int64_t> shape_;
  int64_t numel_ = 0;
  std::vector<uint8_t> bytes_;
};

} // namespace cuvil

#endif // CUVIL_SUPPORT_TENSOR_H
