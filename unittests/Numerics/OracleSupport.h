//===- OracleSupport.h - Independent formulations for the tests -*- C++ -*-===//
//
// Test oracles written from the format definitions (field values, ldexp,
// exhaustive search), deliberately NOT from the library's bit manipulation,
// so that a bug in one is not repeated in the other.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_UNITTESTS_NUMERICS_ORACLESUPPORT_H
#define FP8_UNITTESTS_NUMERICS_ORACLESUPPORT_H

#include "FP8/Numerics/Formats.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <random>

namespace fp8::numerics::oracle {

struct FormatFields {
  int exponentBits;
  int mantissaBits;
  int bias;
};

inline FormatFields fieldsOf(Format format) {
  return format == Format::E4M3 ? FormatFields{4, 3, 7} : FormatFields{5, 2, 15};
}

/// Largest finite code, from the OCP 8-bit floating point (OFP8) tables.
inline uint8_t maxFiniteCode(Format format) {
  return format == Format::E4M3 ? 0x7E : 0x7B;
}

/// Exact value of an fp8 code as a double, from sign/exponent/mantissa with
/// ldexp; NaN/inf per the OFP8 tables.
inline double decodeExact(Format format, uint8_t code) {
  const FormatFields f = fieldsOf(format);
  const bool negative = code & 0x80;
  const int exponent = (code >> f.mantissaBits) & ((1 << f.exponentBits) - 1);
  const int mantissa = code & ((1 << f.mantissaBits) - 1);
  const int allOnes = (1 << f.exponentBits) - 1;
  double magnitude;
  if (format == Format::E4M3 && exponent == allOnes && mantissa == 7)
    magnitude = std::numeric_limits<double>::quiet_NaN();
  else if (format == Format::E5M2 && exponent == allOnes)
    magnitude = mantissa == 0 ? std::numeric_limits<double>::infinity()
                              : std::numeric_limits<double>::quiet_NaN();
  else if (exponent == 0)
    magnitude = std::ldexp(double(mantissa), 1 - f.bias - f.mantissaBits);
  else
    magnitude = std::ldexp(1.0 + std::ldexp(double(mantissa), -f.mantissaBits),
                           exponent - f.bias);
  return negative ? -magnitude : magnitude;
}

/// f32/f64 -> fp8 by the project's rules: NaN -> 0x7F | sign (our
/// documented E5M2 choice too); saturation region (E4M3 |x| > 464, E5M2
/// |x| >= 61440, inf) -> +-max; otherwise the nearest finite code by
/// exhaustive search, a tie going to the code with LSB 0.
inline uint8_t encodeBySearch(Format format, double x) {
  const uint8_t sign = std::signbit(x) ? 0x80 : 0x00;
  if (std::isnan(x))
    return sign | 0x7F;
  const double magnitude = std::fabs(x);
  const bool saturates = format == Format::E4M3 ? magnitude > 464.0
                                                : magnitude >= 61440.0;
  if (saturates)
    return sign | maxFiniteCode(format);
  int best = -1;
  double bestDistance = std::numeric_limits<double>::infinity();
  for (int code = 0; code <= maxFiniteCode(format); ++code) {
    const double distance = std::fabs(decodeExact(format, uint8_t(code)) - magnitude);
    if (distance < bestDistance || (distance == bestDistance && code % 2 == 0)) {
      best = code;
      bestDistance = distance;
    }
  }
  return sign | uint8_t(best);
}

/// f16 value from its fields with ldexp.
inline double f16Exact(uint16_t bits) {
  const bool negative = bits & 0x8000;
  const int exponent = (bits >> 10) & 0x1F;
  const int mantissa = bits & 0x3FF;
  double magnitude;
  if (exponent == 31)
    magnitude = mantissa ? std::numeric_limits<double>::quiet_NaN()
                         : std::numeric_limits<double>::infinity();
  else if (exponent == 0)
    magnitude = std::ldexp(double(mantissa), -24);
  else
    magnitude = std::ldexp(1024.0 + mantissa, exponent - 25);
  return negative ? -magnitude : magnitude;
}

/// A fresh seed per run (std::random_device), or FP8_TEST_SEED to replay one.
inline uint64_t freshSeed() {
  if (const char *fixed = std::getenv("FP8_TEST_SEED"))
    return std::strtoull(fixed, nullptr, 0);
  std::random_device device;
  return (uint64_t(device()) << 32) ^ device();
}

} // namespace fp8::numerics::oracle

#endif // FP8_UNITTESTS_NUMERICS_ORACLESUPPORT_H
