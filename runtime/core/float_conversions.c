/*===- float_conversions.c - The half-precision conversions LLVM calls ----===*
 *
 * LLVM lowers float -> bfloat16 truncation on every x86 CPU, and float16
 * conversions on CPUs without F16C, to calls of compiler-rt's helpers
 * (__truncsfbf2, __truncsfhf2, __extendhfsf2, ...). A library links no
 * compiler-rt, so the runtime defines them: round to nearest even, NaN kept
 * quiet with its sign, overflow to infinity, subnormals exact. The models'
 * own code calls them (hidden: no program sees them).
 *
 * They are written on the bits: on x86 a C cast to _Float16 would itself
 * become a call of the function being defined.
 *
 *===----------------------------------------------------------------------===*/
#include <stdint.h>
#include <string.h>

#define HIDDEN __attribute__((visibility("hidden")))

static uint32_t float_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

static float bits_float(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* float -> bfloat16 bits, round to nearest even. */
static uint16_t bf16_from_float(float f) {
  uint32_t u = float_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return (uint16_t)((u >> 16) | 0x0040u); /* NaN: quiet, sign and payload top kept */
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}

/* float -> float16 bits, round to nearest even. */
static uint16_t f16_from_float(float f) {
  uint32_t u = float_bits(f);
  uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
  uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) /* NaN */
    return (uint16_t)(sign | 0x7e00u | ((a >> 13) & 0x3ffu));
  if (a >= 0x477ff000u) /* rounds to 65520 or more: infinity */
    return (uint16_t)(sign | 0x7c00u);
  if (a < 0x38800000u) { /* below 2^-14: a float16 subnormal (or zero) */
    if (a < 0x33000000u) /* below half the smallest subnormal, 2^-25 */
      return sign;
    uint32_t mant = (a & 0x7fffffu) | 0x800000u;
    int shift = 126 - (int)(a >> 23); /* 14..24: bits dropped past the subnormal's 10 */
    uint32_t kept = mant >> shift;
    uint32_t rest = mant & ((1u << shift) - 1u), half = 1u << (shift - 1);
    if (rest > half || (rest == half && (kept & 1u)))
      ++kept;
    return (uint16_t)(sign | kept);
  }
  /* Normal: rebias the exponent (127 -> 15), round the 13 dropped bits. */
  uint32_t r = a - 0x38000000u;
  r += 0xfffu + ((r >> 13) & 1u);
  return (uint16_t)(sign | (r >> 13));
}

/* float16 bits -> float, exactly. */
static float float_from_f16(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  if (exp == 0x1fu)
    return bits_float(sign | 0x7f800000u | (mant << 13) | (mant ? 0x400000u : 0u));
  if (exp == 0) {
    if (mant == 0)
      return bits_float(sign);
    /* Subnormal: normalise. */
    int e = -1;
    do {
      mant <<= 1;
      ++e;
    } while (!(mant & 0x400u));
    mant &= 0x3ffu;
    return bits_float(sign | ((uint32_t)(127 - 15 - e) << 23) | (mant << 13));
  }
  return bits_float(sign | ((exp + 112u) << 23) | (mant << 13));
}

/* double -> float rounded to odd: the last bit records anything dropped,
 * so a second rounding (to bfloat16 or float16, which keep fewer bits)
 * rounds as one rounding from the double would. */
static float float_round_odd(double d) {
  float f = (float)d; /* nearest even */
  if (d != d || f == (double)d || f - f != 0.0f)
    return f; /* NaN, exact, or infinite */
  uint32_t u = float_bits(f);
  if ((double)f > d ? f > 0.0f : f < 0.0f)
    --u; /* rounded away from zero: one step back toward it */
  return bits_float(u | 1u);
}

#if defined(__x86_64__) || defined(__aarch64__)
/* bfloat16 truncation without the BF16 extension is a call on both
 * (x86-64 passes the type in an SSE register, as LLVM calls it). */
HIDDEN __bf16 __truncsfbf2(float f) {
  uint16_t b = bf16_from_float(f);
  __bf16 r;
  memcpy(&r, &b, sizeof r);
  return r;
}

HIDDEN __bf16 __truncdfbf2(double d) { return __truncsfbf2(float_round_odd(d)); }
#endif

#if defined(__x86_64__)
/* float16 without F16C (AArch64 converts it in hardware). */
HIDDEN _Float16 __truncsfhf2(float f) {
  uint16_t b = f16_from_float(f);
  _Float16 r;
  memcpy(&r, &b, sizeof r);
  return r;
}

HIDDEN _Float16 __truncdfhf2(double d) { return __truncsfhf2(float_round_odd(d)); }

HIDDEN float __extendhfsf2(_Float16 h) {
  uint16_t b;
  memcpy(&b, &h, sizeof b);
  return float_from_f16(b);
}

/* The older names (integer ABI) some LLVM paths still use. */
HIDDEN uint16_t __gnu_f2h_ieee(float f) { return f16_from_float(f); }
HIDDEN float __gnu_h2f_ieee(uint16_t h) { return float_from_f16(h); }
#endif
