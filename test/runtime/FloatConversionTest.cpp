//===- FloatConversionTest.cpp - The half-precision helpers LLVM calls ----===//
//
// runtime/core/float_conversions.c against independent references: every
// float16 value back to float and through float to float16 again; float to
// bfloat16 and float16 on boundary, special and 4 million random bit
// patterns, against the nearest representable value chosen in double (ties
// to even) and, for float16, the CPU's own F16C conversion where it has one.
//
//===----------------------------------------------------------------------===//
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <immintrin.h>
#include <random>
#include <vector>

extern "C" {
__bf16 __truncsfbf2(float);
__bf16 __truncdfbf2(double);
_Float16 __truncsfhf2(float);
_Float16 __truncdfhf2(double);
float __extendhfsf2(_Float16);
}

namespace {

template <typename T> uint16_t bits16(T v) {
  uint16_t b;
  std::memcpy(&b, &v, 2);
  return b;
}

float fromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

double bf16Value(uint16_t b) { return fromBits(uint32_t(b) << 16); }

bool float_bits_equal(float a, float b) { return std::memcmp(&a, &b, 4) == 0; }

/// The nearest bfloat16 to x, ties to even, chosen in double.
uint16_t bf16Reference(double x) {
  if (std::isnan(x))
    return 0x7fc0;
  uint32_t u;
  float f = float(x); // only for the sign and a starting point
  std::memcpy(&u, &f, 4);
  uint16_t lo = uint16_t(u >> 16);
  // The two bfloat16 values around x.
  while (std::fabs(bf16Value(lo)) > std::fabs(x) && (lo & 0x7fff))
    --lo;
  while (std::fabs(bf16Value(uint16_t(lo + 1))) <= std::fabs(x) && (lo & 0x7f80) != 0x7f80)
    ++lo;
  uint16_t hi = uint16_t(lo + 1);
  if (bf16Value(lo) == x || (lo & 0x7fff) >= 0x7f80)
    return lo;
  double dlo = std::fabs(x - bf16Value(lo));
  double dhi = (hi & 0x7fff) >= 0x7f80 ? INFINITY : std::fabs(bf16Value(hi) - x);
  // The overflow threshold: above max + half an ulp, infinity.
  if ((hi & 0x7fff) == 0x7f80)
    dhi = std::fabs(x) - 3.3961775292304e38 /* 0x7f7f8000 + half ulp */ >= 0 ? 0 : INFINITY;
  if (dlo < dhi)
    return lo;
  if (dhi < dlo)
    return hi;
  return (lo & 1) ? hi : lo;
}

__attribute__((target("f16c"))) uint16_t f16Hardware(float f) {
  return uint16_t(_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT));
}

__attribute__((target("f16c"))) float f16HardwareBack(uint16_t h) { return _cvtsh_ss(h); }

std::vector<uint32_t> floatPatterns() {
  std::vector<uint32_t> out = {0, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0x7f800001u,
                               0xffc00001u, 0x00000001u, 0x007fffffu, 0x00800000u, 0x7f7fffffu,
                               0x477fe000u, 0x477ff000u, 0x477fefffu, 0x477ff001u, 0x38800000u,
                               0x387fffffu, 0x33000000u, 0x33000001u, 0x32ffffffu, 0x33800000u};
  // Every tie and near-tie of the bfloat16 grid over the exponent range.
  for (uint32_t e = 0; e < 256; ++e)
    for (uint32_t m : {0x8000u, 0x7fffu, 0x8001u, 0x18000u, 0x17fffu, 0x18001u, 0x7f8000u, 0x7fffffu})
      out.push_back((e << 23) | (m & 0x7fffffu));
  std::mt19937 rng(1234);
  for (int i = 0; i < 4000000; ++i)
    out.push_back(rng());
  return out;
}

} // namespace

TEST_CASE("float -> bfloat16: round to nearest even, NaN quiet, overflow to infinity", "[runtime][float]") {
  size_t checked = 0;
  for (uint32_t u : floatPatterns()) {
    float f = fromBits(u);
    uint16_t got = bits16(__truncsfbf2(f));
    if (std::isnan(f)) {
      CHECK(((got & 0x7f80) == 0x7f80 && (got & 0x7f) != 0)); // still NaN
      CHECK((got & 0x8000) == ((u >> 16) & 0x8000));
      continue;
    }
    uint16_t want = uint16_t(bf16Reference(std::fabs(double(f))) | ((u >> 16) & 0x8000));
    if (got != want)
      FAIL_CHECK("bits " << std::hex << u << ": got " << got << ", expected " << want);
    ++checked;
  }
  CHECK(checked > 3900000); // all but the NaN patterns
  // From double: one rounding, not two (a double just past a bfloat16 tie).
  double justAbove = double(fromBits(0x3f808000u)) + 1e-12; // 1 + 2^-8 + tiny
  CHECK(bits16(__truncdfbf2(justAbove)) == 0x3f81);
  CHECK(bits16(__truncdfbf2(double(fromBits(0x3f808000u)))) == 0x3f80); // the tie: even
}

TEST_CASE("float16 <-> float: every value, and the CPU's own rounding", "[runtime][float]") {
  for (uint32_t h = 0; h < 65536; ++h) {
    _Float16 v;
    uint16_t hb = uint16_t(h);
    std::memcpy(&v, &hb, 2);
    float f = __extendhfsf2(v);
    if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff)) {
      CHECK(std::isnan(f));
      continue;
    }
    CHECK(bits16(__truncsfhf2(f)) == hb); // exact round trip
    if (__builtin_cpu_supports("f16c"))
      CHECK(float_bits_equal(f, f16HardwareBack(hb)));
  }
  if (!__builtin_cpu_supports("f16c")) {
    WARN("SKIPPED: this CPU has no F16C: float16 rounding checked by round trips only");
    return;
  }
  for (uint32_t u : floatPatterns()) {
    float f = fromBits(u);
    uint16_t got = bits16(__truncsfhf2(f)), want = f16Hardware(f);
    if (std::isnan(f)) {
      CHECK(((got & 0x7c00) == 0x7c00 && (got & 0x3ff) != 0));
      continue;
    }
    if (got != want)
      FAIL_CHECK("bits " << std::hex << u << ": got " << got << ", F16C " << want);
  }
  CHECK(bits16(__truncdfhf2(65520.0)) == 0x7c00);        // the overflow tie: infinity
  CHECK(bits16(__truncdfhf2(65519.99999)) == 0x7bff);   // just below it: 65504
}
