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
#include <cstring>

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

/// The float multiplier of a quantized product's epilogue, as PyTorch
/// forms it for QNNPACK: (float(weight scale) * float(input scale)) *
/// (1.0f / float(output scale)). Dividing instead differs in the last bit
/// for some scales, enough to move a sum that lands near x.5.
inline float requantizeMultiplier(double inputScale, double weightScale, double outputScale) {
  float inverseOutputScale = 1.0f / static_cast<float>(outputScale);
  return (static_cast<float>(weightScale) * static_cast<float>(inputScale)) * inverseOutputScale;
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

/// An 8-bit operand of a quantized sum to float as PyTorch's vectorized
/// x86 kernels dequantize it: fma(scale, q, scale * -zero_point), one
/// rounding (its scalar formula rounds twice and differs in rare cases).
inline float dequantizeFused(int64_t q, double scale, int64_t zeroPoint) {
  float s = static_cast<float>(scale);
  float premultiplied = s * static_cast<float>(-zeroPoint);
  return std::fma(s, static_cast<float>(q), premultiplied);
}

/// One element of a quantized sum (PyTorch's qadd on x86, its vectorized
/// kernel): both operands dequantized per tensor (dequantizeFused), added
/// in float, max(sum, 0) with relu, then quantized with the output's scale
/// and zero point.
inline int64_t addValues(int64_t a, double sa, int64_t za, int64_t b, double sb, int64_t zb,
                         bool relu, double sy, int64_t zy, int64_t qmin, int64_t qmax) {
  float sum = dequantizeFused(a, sa, za) + dequantizeFused(b, sb, zb);
  if (relu)
    sum = std::fmax(sum, 0.0f);
  return quantizeValue(sum, sy, zy, qmin, qmax);
}

/// The arithmetic a quantized product or sum reproduces (its `arithmetic`
/// attribute): QNNPACK's (the default of quant.conv2d / quant.linear) or
/// oneDNN's as PyTorch's onednn engine runs it (the default of quant.add,
/// whose float formula above is that engine's).
enum class Arithmetic { Default, Qnnpack, Onednn };

/// oneDNN's product epilogue as PyTorch's onednn engine sets it up (ideep
/// takes reciprocal scales, 1 / s in double rounded to float): with
/// r = float(1 / sx) * float(1 / sw), the bias scaled into the sums'
/// domain, `bias * r`, added to float(acc), the sum multiplied by
/// `float(1 / sy) / r`, the zero point added, each step rounded to float,
/// then rounded to the nearest integer (ties to even). Separate
/// statements: no contraction into fused multiply-adds, which round once.
struct OnednnEpilogue {
  float bias = 0;       ///< bias * r
  float multiplier = 0; ///< float(1 / sy) / r (1 / r for an f32 result)
};

inline OnednnEpilogue onednnEpilogue(double inputScale, double weightScale, float bias,
                                     double outputScale, bool floatResult) {
  float r = static_cast<float>(1.0 / inputScale) * static_cast<float>(1.0 / weightScale);
  OnednnEpilogue e;
  e.bias = bias * r;
  e.multiplier = (floatResult ? 1.0f : static_cast<float>(1.0 / outputScale)) / r;
  return e;
}

inline int64_t onednnRequantize(int32_t acc, OnednnEpilogue e, float zeroPoint, int64_t qmin,
                                int64_t qmax) {
  float sum = static_cast<float>(acc) + e.bias;
  float t = sum * e.multiplier;
  t = t + zeroPoint;
  float v = std::nearbyint(t);
  if (!(v > -9223372036854775808.0f && v < 9223372036854775808.0f))
    return qmin;
  int64_t q = static_cast<int64_t>(v);
  return q < qmin ? qmin : q > qmax ? qmax : q;
}

/// The multiplier of a quantized average over `divisor` taps:
/// float(float(sx) / float(sy)) / float(divisor).
inline float averageMultiplier(double inputScale, double outputScale, int64_t divisor) {
  float ratio = static_cast<float>(inputScale) / static_cast<float>(outputScale);
  return ratio / static_cast<float>(divisor);
}

/// QNNPACK's multiplier of an average over a window of `windowSize` taps
/// (padding included): float(sx) / (float(sy) * float(windowSize)).
inline float qnnpackAverageMultiplier(double inputScale, double outputScale, int64_t windowSize) {
  return static_cast<float>(inputScale) /
         (static_cast<float>(outputScale) * static_cast<float>(windowSize));
}

/// A window's centred int32 sum to the output: nearbyint(float(acc) * m +
/// float(zy)) (PyTorch's x86 pooling of NCHW tensors), or nearbyint(
/// float(acc) * m) + zy (`roundFirst`: of channels-last ones, and QNNPACK's
/// pooling), saturated.
inline int64_t averageValue(int32_t acc, float multiplier, int64_t zeroPoint, bool roundFirst,
                            int64_t qmin, int64_t qmax) {
  float t = static_cast<float>(acc) * multiplier;
  float v = roundFirst ? std::nearbyint(t) + static_cast<float>(zeroPoint)
                    : std::nearbyint(t + static_cast<float>(zeroPoint));
  return v < qmin ? qmin : v > qmax ? qmax : static_cast<int64_t>(v);
}

/// The multiplier of a quantized product of two tensors (qmul):
/// (float(sa) * float(sb)) * (1.0f / float(sy)).
inline float mulMultiplier(double sa, double sb, double sy) {
  float inverse = 1.0f / static_cast<float>(sy);
  return (static_cast<float>(sa) * static_cast<float>(sb)) * inverse;
}

/// One element of qmul: the centred operands' int32 product requantized,
/// zy + nearbyint(float(c) * m), saturated to [lo, hi] (lo = zy for relu).
inline int64_t mulValues(int64_t a, int64_t za, int64_t b, int64_t zb, float m, int64_t zy, int64_t lo,
                         int64_t hi) {
  int32_t c = static_cast<int32_t>((a - za) * (b - zb));
  float v = std::nearbyint(static_cast<float>(c) * m);
  v = std::fmin(std::fmax(v, -65536.0f), 65536.0f); // saturation makes the rest moot
  int64_t y = static_cast<int64_t>(v) + zy;
  return y < lo ? lo : y > hi ? hi : y;
}

/// The parameters a dynamically quantized layer gives its input on each
/// call: PyTorch's ChooseQuantizationParams (quant_utils.h) on the input's
/// range, u8 [0, 255] ([0, 127] with `reduceRange`). `finite` is false
/// when the range holds a NaN or an infinity (PyTorch refuses the input;
/// Cuvil's outputs are then NaN).
struct DynamicParams {
  double scale = 1.0;
  int64_t zeroPoint = 0;
  bool finite = true;
};

inline DynamicParams chooseDynamicParams(float min, float max, bool reduceRange) {
  DynamicParams p;
  if (!std::isfinite(min) || !std::isfinite(max)) {
    p.finite = false;
    return p;
  }
  int32_t qmin = 0, qmax = 255;
  if (reduceRange) {
    qmin /= 2;
    qmax /= 2;
  }
  // The range contains 0, so that 0 is exactly representable.
  min = std::fmin(min, 0.0f);
  max = std::fmax(max, 0.0f);
  double scale = (static_cast<double>(max) - min) / (qmax - qmin);
  if (static_cast<float>(scale) == 0.0f || std::isinf(1.0f / static_cast<float>(scale)))
    scale = 0.1;
  // Scales below this are raised to it, the range scaled along.
  constexpr float kSmallScale = 6.1e-5f;
  if (scale < kSmallScale) {
    float original = static_cast<float>(scale);
    scale = kSmallScale;
    if (min == 0.0f) {
      max = kSmallScale * static_cast<float>(qmax - qmin);
    } else if (max == 0.0f) {
      min = -kSmallScale * static_cast<float>(qmax - qmin);
    } else {
      float amplifier = kSmallScale / original;
      min *= amplifier;
      max *= amplifier;
    }
  }
  // The zero point from the end whose term is smaller, nudged to an integer.
  double fromMin = qmin - min / scale, fromMax = qmax - max / scale;
  double errorMin = std::abs(qmin) - std::abs(min / scale), errorMax = std::abs(qmax) - std::abs(max / scale);
  double initial = errorMin < errorMax ? fromMin : fromMax;
  p.scale = scale;
  p.zeroPoint = initial < qmin ? qmin : initial > qmax ? qmax : static_cast<int64_t>(std::nearbyint(initial));
  return p;
}

/// A finite float to u8 as oneDNN's reorder quantizes a dynamically
/// quantized layer's input: nearbyint(x * inverseScale + zeroPoint), each
/// step rounded to float (no fused multiply-add), saturated.
inline int64_t onednnQuantizeU8(float x, float inverseScale, float zeroPoint) {
  float t = x * inverseScale;
  t = t + zeroPoint;
  float v = std::nearbyint(t);
  return v < 0.0f ? 0 : v > 255.0f ? 255 : static_cast<int64_t>(v);
}

/// QNNPACK's quantized addition (quint8): both operands scaled to the
/// output by fixed-point multipliers of 2^-shift, the zero points folded
/// into one constant, rounded half away from zero by the remainder.
struct QnnpackAddParams {
  bool valid = false; ///< the scales within QNNPACK's range (else it refuses)
  uint32_t aMultiplier = 0, bMultiplier = 0, shift = 0;
  int32_t zeroPointProduct = 0, remainderMask = 0, remainderThreshold = 0;
};

inline QnnpackAddParams qnnpackAddParams(double sa, int64_t za, double sb, int64_t zb, double sy) {
  QnnpackAddParams p;
  float aScale = static_cast<float>(sa) / static_cast<float>(sy);
  float bScale = static_cast<float>(sb) / static_cast<float>(sy);
  float maxScale = aScale > bScale ? aScale : bScale;
  if (!(maxScale >= 0x1.0p-14f && maxScale < 0x1.0p+8f))
    return p;
  uint32_t bits;
  std::memcpy(&bits, &maxScale, sizeof bits);
  int32_t exponent = static_cast<int32_t>(bits >> 23) - 127;
  p.shift = static_cast<uint32_t>(21 - exponent);
  uint32_t multiplierBits = static_cast<uint32_t>(21 - exponent + 127) << 23;
  float multiplier;
  std::memcpy(&multiplier, &multiplierBits, sizeof multiplier);
  p.aMultiplier = static_cast<uint32_t>(static_cast<int32_t>(std::lrintf(aScale * multiplier)));
  p.bMultiplier = static_cast<uint32_t>(static_cast<int32_t>(std::lrintf(bScale * multiplier)));
  p.zeroPointProduct = static_cast<int32_t>(
      0u - (p.aMultiplier * static_cast<uint32_t>(za) + p.bMultiplier * static_cast<uint32_t>(zb)));
  uint32_t mask = (1u << p.shift) - 1u;
  p.remainderMask = static_cast<int32_t>(mask);
  p.remainderThreshold = static_cast<int32_t>(mask >> 1);
  p.valid = true;
  return p;
}

/// One element of QNNPACK's sum; `lo` is the zero point with relu.
inline int64_t qnnpackAdd(int64_t a, int64_t b, const QnnpackAddParams &p, int64_t zy, int64_t lo,
                          int64_t hi) {
  int32_t acc = static_cast<int32_t>(static_cast<uint32_t>(p.zeroPointProduct) +
                                     static_cast<uint32_t>(a) * p.aMultiplier +
                                     static_cast<uint32_t>(b) * p.bMultiplier);
  int32_t rem = (acc & p.remainderMask) - static_cast<int32_t>(acc < 0);
  int64_t y = static_cast<int64_t>((acc >> p.shift) + static_cast<int32_t>(rem > p.remainderThreshold)) + zy;
  return y < lo ? lo : y > hi ? hi : y;
}

} // namespace mlir::cuvil::quant

#endif // CUVIL_DIALECT_CUVIL_IR_QUANTARITHMETIC_H
