//===- Tensor.cpp - A dense host tensor -----------------------------------===//
#include "support/Tensor.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <sstream>

namespace cuvil {

Result<int64_t> checkedNumElements(const std::vector<int64_t> &shape,
                                   DType dtype) {
  if (static_cast<int64_t>(shape.size()) > kMaxRank)
    return inputError("rank " + std::to_string(shape.size()) +
                      " exceeds the maximum supported rank " +
                      std::to_string(kMaxRank));
  int64_t n = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 0)
      return inputError("dimension " + std::to_string(i) + " is negative (" +
                        std::to_string(shape[i]) + ")");
    if (__builtin_mul_overflow(n, shape[i], &n))
      return inputError("element count of shape " +
                        formatShape(shape, dtype) + " overflows int64");
  }
  uint64_t bytes;
  if (__builtin_mul_overflow(static_cast<uint64_t>(n),
                             static_cast<uint64_t>(dtypeSize(dtype)), &bytes) ||
      bytes > kMaxTensorBytes)
    return inputError("tensor of shape " + formatShape(shape, dtype) +
                      " exceeds the " +
                      std::to_string(kMaxTensorBytes >> 30) + " GiB limit");
  return n;
}

std::vector<int64_t> contiguousStrides(const std::vector<int64_t> &shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

std::string formatShape(const std::vector<int64_t> &shape, DType dtype) {
  std::ostringstream os;
  for (int64_t d : shape) {
    if (d < 0)
      os << "?x";
    else
      os << d << "x";
  }
  os << dtypeName(dtype);
  return os.str();
}

//===----------------------------------------------------------------------===//
// Half and bfloat16
//===----------------------------------------------------------------------===//

float halfToFloat(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else { // subnormal: normalise
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while ((mant & 0x400u) == 0);
      mant &= 0x3ffu;
      bits = sign | (uint32_t(127 - 15 - e) << 23) | (mant << 13);
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t floatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) // inf or nan
    return static_cast<uint16_t>(sign | 0x7c00u |
                                 (absx > 0x7f800000u ? 0x200u : 0));
  if (absx >= 0x477ff000u) // rounds to >= 65520: overflow to inf
    return static_cast<uint16_t>(sign | 0x7c00u);
  if (absx < 0x38800000u) { // below the smallest normal half: subnormal or 0
    // Add 0.5 in the half's subnormal unit and let FP rounding do RNE.
    float a;
    std::memcpy(&a, &absx, 4);
    float scaled = a * 16777216.0f; // 2^24 = 1 / smallest subnormal
    uint32_t m = static_cast<uint32_t>(std::nearbyint(scaled));
    return static_cast<uint16_t>(sign | m);
  }
  uint32_t mantOdd = (absx >> 13) & 1u;
  absx += 0xc8000fffu + mantOdd; // rebias exponent (-112 << 23) and round
  return static_cast<uint16_t>(sign | (absx >> 13));
}

float bf16ToFloat(uint16_t b) {
  uint32_t bits = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t floatToBf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) // NaN stays a quiet NaN
    return static_cast<uint16_t>((x >> 16) | 0x40u);
  uint32_t lsb = (x >> 16) & 1u;
  x += 0x7fffu + lsb;
  return static_cast<uint16_t>(x >> 16);
}

//===----------------------------------------------------------------------===//
// Tensor
//===----------------------------------------------------------------------===//

Tensor::Tensor(DType dtype, std::vector<int64_t> shape)
    : dtype_(dtype), shape_(std::move(shape)) {
  Result<int64_t> n = checkedNumElements(shape_, dtype_);
  assert(n && "tensor shape must be validated before construction");
  numel_ = n ? *n : 0;
  bytes_.assign(static_cast<size_t>(numel_) * dtypeSize(dtype_), 0);
}

Result<Tensor> Tensor::create(DType dtype, std::vector<int64_t> shape) {
  Result<int64_t> n = checkedNumElements(shape, dtype);
  if (!n)
    return n.error();
  return Tensor(dtype, std::move(shape));
}

Tensor Tensor::fromDoubles(DType dtype, std::vector<int64_t> shape,
                           const std::vector<double> &values) {
  Tensor t(dtype, std::move(shape));
  assert(static_cast<int64_t>(values.size()) == t.numElements());
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.setDouble(i, values[i]);
  return t;
}

Tensor Tensor::fromInts(DType dtype, std::vector<int64_t> shape,
                        const std::vector<int64_t> &values) {
  Tensor t(dtype, std::move(shape));
  assert(static_cast<int64_t>(values.size()) == t.numElements());
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.setInt(i, values[i]);
  return t;
}

namespace {
template <typename T> T load(const uint8_t *base, int64_t i) {
  T v;
  std::memcpy(&v, base + i * sizeof(T), sizeof(T));
  return v;
}
template <typename T> void store(uint8_t *base, int64_t i, T v) {
  std::memcpy(base + i * sizeof(T), &v, sizeof(T));
}

/// Float to int64 as x86 PyTorch does it: truncation; NaN and out-of-range
/// values give INT64_MIN (the 'integer indefinite' value) instead of UB.
int64_t floatToInt64(double v) {
  if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0))
    return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);
}
} // namespace

double Tensor::getDouble(int64_t i) const {
  const uint8_t *p = bytes_.data();
  switch (dtype_) {
  case DType::Bool: return load<uint8_t>(p, i) ? 1.0 : 0.0;
  case DType::UInt8: return load<uint8_t>(p, i);
  case DType::Int8: return load<int8_t>(p, i);
  case DType::Int16: return load<int16_t>(p, i);
  case DType::Int32: return load<int32_t>(p, i);
  case DType::Int64: return static_cast<double>(load<int64_t>(p, i));
  case DType::Float16: return halfToFloat(load<uint16_t>(p, i));
  case DType::BFloat16: return bf16ToFloat(load<uint16_t>(p, i));
  case DType::Float32: return load<float>(p, i);
  case DType::Float64: return load<double>(p, i);
  // A complex element as a number: its real part.
  case DType::Complex64: return load<float>(p, 2 * i);
  case DType::Complex128: return load<double>(p, 2 * i);
  }
  return 0;
}

int64_t Tensor::getInt(int64_t i) const {
  const uint8_t *p = bytes_.data();
  switch (dtype_) {
  case DType::Bool: return load<uint8_t>(p, i) ? 1 : 0;
  case DType::UInt8: return load<uint8_t>(p, i);
  case DType::Int8: return load<int8_t>(p, i);
  case DType::Int16: return load<int16_t>(p, i);
  case DType::Int32: return load<int32_t>(p, i);
  case DType::Int64: return load<int64_t>(p, i);
  default: return floatToInt64(getDouble(i));
  }
}

void Tensor::setDouble(int64_t i, double v) {
  uint8_t *p = bytes_.data();
  switch (dtype_) {
  case DType::Bool: store<uint8_t>(p, i, v != 0.0 ? 1 : 0); return;
  case DType::Float16: store<uint16_t>(p, i, floatToHalf(static_cast<float>(v))); return;
  case DType::BFloat16: store<uint16_t>(p, i, floatToBf16(static_cast<float>(v))); return;
  case DType::Float32: store<float>(p, i, static_cast<float>(v)); return;
  case DType::Float64: store<double>(p, i, v); return;
  case DType::Complex64: store<float>(p, 2 * i, static_cast<float>(v)); store<float>(p, 2 * i + 1, 0.0f); return;
  case DType::Complex128: store<double>(p, 2 * i, v); store<double>(p, 2 * i + 1, 0.0); return;
  default: setInt(i, floatToInt64(v)); return;
  }
}

void Tensor::setInt(int64_t i, int64_t v) {
  uint8_t *p = bytes_.data();
  switch (dtype_) {
  case DType::Bool: store<uint8_t>(p, i, v != 0 ? 1 : 0); return;
  // Narrowing wraps modulo 2^bits (two's complement), as PyTorch does.
  case DType::UInt8: store<uint8_t>(p, i, static_cast<uint8_t>(v)); return;
  case DType::Int8: store<int8_t>(p, i, static_cast<int8_t>(static_cast<uint8_t>(v))); return;
  case DType::Int16: store<int16_t>(p, i, static_cast<int16_t>(static_cast<uint16_t>(v))); return;
  case DType::Int32: store<int32_t>(p, i, static_cast<int32_t>(static_cast<uint32_t>(v))); return;
  case DType::Int64: store<int64_t>(p, i, v); return;
  default: setDouble(i, static_cast<double>(v)); return;
  }
}

std::vector<double> Tensor::toDoubles() const {
  std::vector<double> out(static_cast<size_t>(numel_));
  if (dtype_ == DType::Float32) {
    const uint8_t *p = bytes_.data();
    for (int64_t i = 0; i < numel_; ++i)
      out[i] = load<float>(p, i);
    return out;
  }
  for (int64_t i = 0; i < numel_; ++i)
    out[i] = getDouble(i);
  return out;
}

std::vector<int64_t> Tensor::toInts() const {
  std::vector<int64_t> out(static_cast<size_t>(numel_));
  for (int64_t i = 0; i < numel_; ++i)
    out[i] = getInt(i);
  return out;
}

Tensor Tensor::reshaped(std::vector<int64_t> shape) const {
  Tensor t = *this;
  Result<int64_t> n = checkedNumElements(shape, dtype_);
  assert(n && *n == numel_ && "reshape must preserve the element count");
  (void)n;
  t.shape_ = std::move(shape);
  return t;
}

Tensor Tensor::cast(DType to) const {
  if (to == dtype_)
    return *this;
  Tensor t(to, shape_);
  if (isComplex(dtype_) && isComplex(to)) {
    for (int64_t i = 0; i < 2 * numel_; ++i) {
      double v = dtype_ == DType::Complex64 ? load<float>(bytes_.data(), i) : load<double>(bytes_.data(), i);
      if (to == DType::Complex64)
        store<float>(t.data(), i, static_cast<float>(v));
      else
        store<double>(t.data(), i, v);
    }
    return t;
  }
  bool intPath = !isFloat(dtype_) && !isFloat(to) && !isComplex(dtype_) && !isComplex(to);
  for (int64_t i = 0; i < numel_; ++i) {
    if (intPath)
      t.setInt(i, getInt(i));
    else if (!isFloat(to))
      t.setInt(i, to == DType::Bool ? (getDouble(i) != 0.0) : getInt(i));
    else
      t.setDouble(i, getDouble(i));
  }
  return t;
}

Result<Tensor> Tensor::complexAsPairs() const {
  if (!isComplex(dtype_))
    return inputError("expected a complex tensor, got " + describe());
  Tensor t = *this;
  t.dtype_ = complexPart(dtype_);
  t.shape_.push_back(2);
  t.numel_ = numel_ * 2;
  return t;
}

Result<Tensor> Tensor::pairsAsComplex() const {
  if ((dtype_ != DType::Float32 && dtype_ != DType::Float64) || shape_.empty() || shape_.back() != 2)
    return inputError("expected f32 or f64 (real, imaginary) pairs (last dimension 2), got " +
                      describe());
  Tensor t = *this;
  t.dtype_ = dtype_ == DType::Float32 ? DType::Complex64 : DType::Complex128;
  t.shape_.pop_back();
  t.numel_ = numel_ / 2;
  return t;
}

std::string Tensor::preview(int count) const {
  std::string s = describe() + " [";
  int64_t n = std::min<int64_t>(numElements(), count);
  for (int64_t i = 0; i < n; ++i) {
    char buf[32];
    if (isComplex(dtype_)) {
      double im = dtype_ == DType::Complex64 ? load<float>(bytes_.data(), 2 * i + 1)
                                             : load<double>(bytes_.data(), 2 * i + 1);
      std::snprintf(buf, sizeof(buf), "%.6g%+.6gj", getDouble(i), im);
    } else if (isFloat(dtype_))
      std::snprintf(buf, sizeof(buf), "%.6g", getDouble(i));
    else
      std::snprintf(buf, sizeof(buf), "%lld", static_cast<long long>(getInt(i)));
    s += (i ? ", " : "") + std::string(buf);
  }
  if (numElements() > n)
    s += ", ...";
  return s + "]";
}

} // namespace cuvil
