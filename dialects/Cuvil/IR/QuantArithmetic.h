//===- QuantArithmetic.h - PyTorch's quantization arithmetic ----*- C++ -*-===//
//
// The scalar formulas of cuvil.quant.*, shared by the reference evaluator
// and the code generator so that both compute what PyTorch (CPU, no FBGEMM,
// x86) computes, bit for bit:
//   quantize:   v = float(zero_point) + nearbyint(x * (1.0f / float(scale)))
//               NaN or beyond int64 -> qmin (x86's conversion of such a
//               float to int64), else clamp(v, qmin, qmax)
//   dequantize: float(scale) * float(q - zero_point) per tensor,
//               float(double(q - zero_point) * scale) per channel, the
//               difference in int32 (wrapping) per tensor, int64 per channel
// (checked against torch.quantize_per_tensor / _per_channel and dequantize
// on every 8-bit value and ties; test/reference).
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_DIALECT_CUVIL_IR_QUANTARITHMETIC_H
#define CUVIL_DIALECT_CUVIL_IR_QUANTARITHMETIC_H

#include <cmath>
#include <cstdint>

namespace mlir::cuvil::quant {

/// zero_point + nearbyint(x * multiplier), in float, saturated to
/// [qmin, qmax]: quantize (multiplier 1 / scale) and requantize share it.
inline int64_t roundToStorage(float x, float multiplier, int64_t zeroPoint, int64_t qmin,
                              int64_t qmax) {
  float v = static_cast<float>(zeroPoint) + std::nearbyint(x * multiplier);
  // 2^63 is exactly representable; anything at or past it (or NaN) is what
  // x86's cvttss2si turns into INT64_MIN.
  if (!(v > -9223372036854775808.0f && v < 9223372036854775808.0f))
    return qmin;
  int64_t q = static_cast<int64_t>(v);
  return q < qmin ? qmin : q > qmax ? qmax : q;
}

inline int64_t quantizeValue(float x, double scale, int64_t zeroPoint, int64_t qmin,
                             int64_t qmax) {
  return roundToStorage(x, 1.0f / static_cast<float>(scale), zeroPoint, qmin, qmax);
}

inline float dequantizeValue(int64_t q, double scale, int64_t zeroPoint, bool perChannel) {
  if (perChannel) // in int64 and double
    return static_cast<float>(static_cast<double>(q - zeroPoint) * scale);
  // In int32, wrapping as PyTorch's does (qint32 storage far from zero).
  int32_t centred = static_cast<int32_t>(static_cast<uint32_t>(q) - static_cast<uint32_t>(zeroPoint));
  return static_cast<float>(scale) * static_cast<float>(centred);
}

/// The float multiplier of a quantized product's epilogue, as QNNPACK
/// forms it: float(weight scale) * float(input scale) / float(output scale).
inline float requantizeMultiplier(double inputScale, double weightScale, double outputScale) {
  return static_cast<float>(weightScale) * static_cast<float>(inputScale) /
         static_cast<float>(outputScale);
}

/// An int32 accumulator to the output's storage: clamp(zero_point +
/// nearbyint(float(acc) * multiplier)).
inline int64_t requantizeAccumulator(int32_t acc, float multiplier, int64_t zeroPoint,
                                     int64_t qmin, int64_t qmax) {
  return roundToStorage(static_cast<float>(acc), multiplier, zeroPoint, qmin, qmax);
}

/// The scale an f32-result product's sums are dequantized with:
/// float(input scale) * float(weight scale).
inline float dequantizeScale(double inputScale, double weightScale) {
  return static_cast<float>(inputScale) * static_cast<float>(weightScale);
}

/// An int32 accumulator dequantized: float(acc) * scale, in float.
inline float dequantizeAccumulator(int32_t acc, float scale) {
  return static_cast<float>(acc) * scale;
}

/// One element of a quantized sum (PyTorch's qadd): both operands
/// dequantized per tensor, added in float, max(sum, 0) with relu, then
/// quantized with the output's scale and zero point.
inline int64_t addValues(int64_t a, double sa, int64_t za, int64_t b, double sb, int64_t zb,
                         bool relu, double sy, int64_t zy, int64_t qmin, int64_t qmax) {
  float sum = dequantizeValue(a, sa, za, false) + dequantizeValue(b, sb, zb, false);
  if (relu)
    sum = std::fmax(sum, 0.0f);
  return quantizeValue(sum, sy, zy, qmin, qmax);
}

} // namespace mlir::cuvil::quant

#endif // CUVIL_DIALECT_CUVIL_IR_QUANTARITHMETIC_H
