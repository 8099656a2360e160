//===- Formats.cpp - FP8/UE8M0/bf16/f16 element formats -------------------===//

#include "FP8/Numerics/Formats.h"

namespace fp8::numerics {
namespace {

constexpr uint32_t kF32SignMask = 0x80000000u;
constexpr uint32_t kF32AbsMask = 0x7FFFFFFFu;
constexpr uint32_t kF32ExpMask = 0x7F800000u; // also the bits of +inf
constexpr uint32_t kF32MantMask = 0x007FFFFFu;
constexpr int kF32MantBits = 23;
constexpr int kF32Bias = 127;
constexpr uint32_t kF32QuietNaN = 0x7FC00000u;

/// A narrow binary floating-point format with an IEEE-style layout.
struct NarrowLayout {
  int mantBits;
  int bias;
};

constexpr NarrowLayout kE4M3{3, 7};
constexpr NarrowLayout kE5M2{2, 15};
constexpr NarrowLayout kF16{10, 15};

constexpr uint8_t kE4M3MaxCode = 0x7E; // 1.75 * 2^8 = 448
constexpr uint8_t kE4M3NaNCode = 0x7F;
constexpr uint8_t kE5M2MaxCode = 0x7B; // 1.75 * 2^15 = 57344
constexpr uint8_t kE5M2InfCode = 0x7C;
constexpr uint8_t kE5M2NaNCode = 0x7F;
constexpr uint16_t kF16InfCode = 0x7C00;

NarrowLayout layoutOf(Format format) {
  return format == Format::E4M3 ? kE4M3 : kE5M2;
}

/// Rounds a finite, non-negative f32 (given as bits) to the narrow layout with
/// round-to-nearest-even, subnormals included. Returns the magnitude code
/// (biased exponent << mantBits | mantissa) WITHOUT range checks: a value past
/// the largest normal yields a code past it, so callers saturate or overflow
/// to inf as their format requires. Codes are monotonic in the value, and a
/// mantissa carry correctly bumps the exponent (also subnormal -> normal).
uint32_t roundMagnitudeRNE(uint32_t absBits, NarrowLayout layout) {
  const uint32_t f32Exp = absBits >> kF32MantBits;
  // f32 zero and subnormals (< 2^-126) lie far below half the smallest
  // subnormal of every narrow format handled here (2^-25 for f16).
  if (f32Exp == 0)
    return 0;
  const int exponent = static_cast<int>(f32Exp) - kF32Bias;
  const int minNormalExponent = 1 - layout.bias;

  uint32_t fixedPoint; // value in units of 2^-shift of the result's LSB
  int shift;
  if (exponent >= minNormalExponent) {
    // Re-bias the exponent in place: (biasedExp << 23 | mant) >> shift is the
    // truncated narrow code, and the rounding increment carries naturally.
    fixedPoint = (static_cast<uint32_t>(exponent + layout.bias) << kF32MantBits) |
                 (absBits & kF32MantMask);
    shift = kF32MantBits - layout.mantBits;
  } else {
    // Subnormal result: the LSB is worth 2^(minNormalExponent - mantBits).
    fixedPoint = (absBits & kF32MantMask) | (1u << kF32MantBits);
    shift = kF32MantBits - layout.mantBits + (minNormalExponent - exponent);
    // fixedPoint < 2^24 <= half an LSB: rounds to zero (also avoids a
    // shift by >= 32).
    if (shift >= 25)
      return 0;
  }
  uint32_t code = fixedPoint >> shift;
  const uint32_t remainder = fixedPoint & ((1u << shift) - 1);
  const uint32_t half = 1u << (shift - 1);
  if (remainder > half || (remainder == half && (code & 1)))
    ++code;
  return code;
}

/// Exact value of a narrow code's magnitude (no specials).
float decodeMagnitude(uint32_t magnitude, NarrowLayout layout) {
  const uint32_t exponentField = magnitude >> layout.mantBits;
  const uint32_t mantissa = magnitude & ((1u << layout.mantBits) - 1);
  if (exponentField == 0) {
    // Subnormal: mantissa * 2^(1 - bias - mantBits); both factors and the
    // product are exact in f32.
    const uint32_t lsbBiasedExp = kF32Bias + 1 - layout.bias - layout.mantBits;
    return static_cast<float>(mantissa) *
           floatFromBits(lsbBiasedExp << kF32MantBits);
  }
  const uint32_t f32Exp = exponentField - layout.bias + kF32Bias;
  return floatFromBits((f32Exp << kF32MantBits) |
                       (mantissa << (kF32MantBits - layout.mantBits)));
}

float withSign(float magnitude, bool negative) {
  return negative ? floatFromBits(floatBits(magnitude) | kF32SignMask)
                  : magnitude;
}

} // namespace

float maxFinite(Format format) {
  return format == Format::E4M3 ? 448.f : 57344.f;
}

int maxExponent(Format format) { return format == Format::E4M3 ? 8 : 15; }

const char *formatName(Format format) {
  return format == Format::E4M3 ? "e4m3" : "e5m2";
}

uint8_t encodeSatFinite(Format format, float x) {
  const uint32_t bits = floatBits(x);
  const uint8_t sign = static_cast<uint8_t>((bits >> 24) & 0x80);
  const uint32_t absBits = bits & kF32AbsMask;
  const uint8_t nanCode = format == Format::E4M3 ? kE4M3NaNCode : kE5M2NaNCode;
  const uint8_t maxCode = format == Format::E4M3 ? kE4M3MaxCode : kE5M2MaxCode;
  if (absBits > kF32ExpMask)
    return sign | nanCode;
  if (absBits == kF32ExpMask) // satfinite: +-inf -> +-max
    return sign | maxCode;
  uint32_t code = roundMagnitudeRNE(absBits, layoutOf(format));
  // Anything that rounds past max (E4M3 > 464, E5M2 >= 61440) saturates.
  if (code > maxCode)
    code = maxCode;
  return sign | static_cast<uint8_t>(code);
}

float decode(Format format, uint8_t code) {
  const bool negative = code & 0x80;
  const uint8_t magnitude = code & 0x7F;
  if (format == Format::E4M3) {
    if (magnitude == kE4M3NaNCode)
      return withSign(floatFromBits(kF32QuietNaN), negative);
  } else if (magnitude >= kE5M2InfCode) {
    return withSign(floatFromBits(magnitude == kE5M2InfCode ? kF32ExpMask
                                                            : kF32QuietNaN),
                    negative);
  }
  return withSign(decodeMagnitude(magnitude, layoutOf(format)), negative);
}

uint8_t encodeUe8m0RoundUp(float x) {
  constexpr uint8_t kNaN = 0xFF, kMaxFinite = 0xFE;
  const uint32_t absBits = floatBits(x) & kF32AbsMask; // negative: use |x|
  if (absBits > kF32ExpMask)
    return kNaN;
  if (absBits == kF32ExpMask)
    return kMaxFinite;
  const uint32_t exponent = absBits >> kF32MantBits;
  const uint32_t mantissa = absBits & kF32MantMask;
  if (exponent == 0) {
    // |x| = mantissa * 2^-149 < 2^-126. Rounding up to a power of two:
    // (0, 2^-127] (mantissa <= 2^22) -> 2^-127 = code 0, and 0 itself also
    // saturates to code 0; (2^-127, 2^-126) -> 2^-126 = code 1.
    return mantissa > 0x400000u ? 1 : 0;
  }
  // 2^(e-127) * 1.m rounds up to 2^(e-127+1) unless m == 0; 2^128 does not
  // exist (0xFF is NaN), so satfinite keeps 0xFE.
  if (mantissa != 0 && exponent < kMaxFinite)
    return static_cast<uint8_t>(exponent + 1);
  return static_cast<uint8_t>(exponent);
}

float decodeUe8m0(uint8_t e) {
  if (e == 0xFF)
    return floatFromBits(kF32QuietNaN);
  if (e == 0)
    return floatFromBits(0x00400000u); // 2^-127, an f32 subnormal
  return floatFromBits(static_cast<uint32_t>(e) << kF32MantBits);
}

float bf16ToFloat(uint16_t bits) {
  return floatFromBits(static_cast<uint32_t>(bits) << 16);
}

uint16_t floatToBf16(float x) {
  const uint32_t bits = floatBits(x);
  if ((bits & kF32AbsMask) > kF32ExpMask) // NaN: truncate, force quiet
    return static_cast<uint16_t>((bits >> 16) | 0x0040u);
  // RNE on the low 16 bits; a carry into the exponent (up to inf) is right.
  const uint32_t roundingBias = 0x7FFFu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + roundingBias) >> 16);
}

float f16ToFloat(uint16_t bits) {
  const bool negative = bits & 0x8000u;
  const uint32_t magnitude = bits & 0x7FFFu;
  if (magnitude >= kF16InfCode) {
    const uint32_t payload = (magnitude & 0x3FFu) << (kF32MantBits - 10);
    return withSign(floatFromBits(kF32ExpMask | payload), negative);
  }
  return withSign(decodeMagnitude(magnitude, kF16), negative);
}

uint16_t floatToF16(float x) {
  const uint32_t bits = floatBits(x);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t absBits = bits & kF32AbsMask;
  if (absBits > kF32ExpMask) // NaN: keep the top payload bits, force quiet
    return sign | kF16InfCode | 0x0200u |
           static_cast<uint16_t>((absBits & kF32MantMask) >> 13);
  if (absBits == kF32ExpMask)
    return sign | kF16InfCode;
  uint32_t code = roundMagnitudeRNE(absBits, kF16);
  if (code >= kF16InfCode) // IEEE overflow under RNE: inf
    code = kF16InfCode;
  return sign | static_cast<uint16_t>(code);
}

} // namespace fp8::numerics
