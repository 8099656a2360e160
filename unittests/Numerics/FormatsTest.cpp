//===- FormatsTest.cpp - fp8 / UE8M0 / bf16 / f16 conversions -------------===//

#include "FP8/Numerics/Formats.h"
#include "OracleSupport.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <vector>

using namespace fp8::numerics;
namespace oracle = fp8::numerics::oracle;

namespace {

constexpr Format kFormats[] = {Format::E4M3, Format::E5M2};

float nan32() { return std::numeric_limits<float>::quiet_NaN(); }
float inf32() { return std::numeric_limits<float>::infinity(); }
float up(float x) { return std::nextafter(x, inf32()); }
float down(float x) { return std::nextafter(x, -inf32()); }

void expectEncodesLikeOracle(Format format, float x) {
  EXPECT_EQ(encodeSatFinite(format, x), oracle::encodeBySearch(format, x))
      << formatName(format) << " x=" << x << " bits=0x" << std::hex
      << floatBits(x);
}

//===----------------------------------------------------------------------===//
// f32 -> fp8
//===----------------------------------------------------------------------===//

TEST(EncodeSatFinite, AllBf16PatternsMatchNearestCodeSearch) {
  for (Format format : kFormats)
    for (uint32_t pattern = 0; pattern <= 0xFFFF; ++pattern)
      expectEncodesLikeOracle(format, floatFromBits(pattern << 16));
}

TEST(EncodeSatFinite, AllF16PatternsMatchNearestCodeSearch) {
  // f16 has 10 mantissa bits: it probes the subnormal region far more finely
  // than bf16.
  for (Format format : kFormats)
    for (uint32_t pattern = 0; pattern <= 0xFFFF; ++pattern) {
      const double value = oracle::f16Exact(uint16_t(pattern));
      expectEncodesLikeOracle(format, float(value));
    }
}

TEST(EncodeSatFinite, MidpointsAndTheirNeighboursMatchSearch) {
  // Every tie of RNE and one f32 ulp either side (bf16 cannot express the
  // neighbours). Includes the midpoint above max (464 / 61440).
  for (Format format : kFormats) {
    const int maxCode = oracle::maxFiniteCode(format);
    for (int code = 0; code <= maxCode; ++code) {
      const double lo = oracle::decodeExact(format, uint8_t(code));
      const double hi = code < maxCode
                            ? oracle::decodeExact(format, uint8_t(code + 1))
                            : 2 * lo - oracle::decodeExact(format, uint8_t(code - 1));
      const float mid = float((lo + hi) / 2); // exact: a few significant bits
      ASSERT_EQ(double(mid), (lo + hi) / 2);
      for (float x : {mid, up(mid), down(mid), float(lo), up(float(lo))}) {
        expectEncodesLikeOracle(format, x);
        expectEncodesLikeOracle(format, -x);
      }
    }
  }
}

TEST(EncodeSatFinite, RandomF32MatchesSearch) {
  const uint64_t seed = oracle::freshSeed();
  SCOPED_TRACE(testing::Message() << "seed=" << seed << " (FP8_TEST_SEED)");
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<uint32_t> anyBits;
  // Exponents in [2^-20, 2^17): the range where fp8 rounding is interesting.
  std::uniform_int_distribution<uint32_t> exponent(127 - 20, 127 + 17);
  for (int i = 0; i < 100000; ++i) {
    const uint32_t bits = anyBits(rng);
    const float inRange = floatFromBits((bits & 0x807FFFFFu) | (exponent(rng) << 23));
    for (Format format : kFormats) {
      expectEncodesLikeOracle(format, floatFromBits(bits));
      expectEncodesLikeOracle(format, inRange);
    }
  }
}

TEST(EncodeSatFinite, E4M3Boundaries) {
  const Format f = Format::E4M3;
  EXPECT_EQ(encodeSatFinite(f, 448.f), 0x7E);
  EXPECT_EQ(encodeSatFinite(f, 464.f), 0x7E) << "tie 448|480 -> even 448";
  EXPECT_EQ(encodeSatFinite(f, up(464.f)), 0x7E) << "saturates";
  EXPECT_EQ(encodeSatFinite(f, 480.f), 0x7E);
  EXPECT_EQ(encodeSatFinite(f, 1e30f), 0x7E);
  EXPECT_EQ(encodeSatFinite(f, FLT_MAX), 0x7E);
  EXPECT_EQ(encodeSatFinite(f, -464.f), 0xFE);
  EXPECT_EQ(encodeSatFinite(f, -1e30f), 0xFE);
  EXPECT_EQ(encodeSatFinite(f, 432.f), 0x7E) << "tie 416|448 -> even 448";
  EXPECT_EQ(encodeSatFinite(f, down(432.f)), 0x7D);
  EXPECT_EQ(encodeSatFinite(f, inf32()), 0x7E);
  EXPECT_EQ(encodeSatFinite(f, -inf32()), 0xFE);
  EXPECT_EQ(encodeSatFinite(f, nan32()), 0x7F);
  EXPECT_EQ(encodeSatFinite(f, -nan32()), 0xFF);
  EXPECT_EQ(encodeSatFinite(f, 0.f), 0x00);
  EXPECT_EQ(encodeSatFinite(f, -0.f), 0x80);
  EXPECT_EQ(encodeSatFinite(f, 0x1p-10f), 0x00) << "half the smallest subnormal";
  EXPECT_EQ(encodeSatFinite(f, -0x1p-10f), 0x80) << "signed zero";
  EXPECT_EQ(encodeSatFinite(f, up(0x1p-10f)), 0x01);
  EXPECT_EQ(encodeSatFinite(f, 0x1p-9f), 0x01);
  EXPECT_EQ(encodeSatFinite(f, 0x1.8p-9f), 0x02) << "tie 1|2 -> even";
  EXPECT_EQ(encodeSatFinite(f, 0x1.6p-7f), 0x06) << "5.5 * 2^-9: tie 5|6 -> even";
  EXPECT_EQ(encodeSatFinite(f, 0x1.ap-7f), 0x06) << "6.5 * 2^-9: tie 6|7 -> even";
  EXPECT_EQ(encodeSatFinite(f, 0x1.cp-7f), 0x07);
  EXPECT_EQ(encodeSatFinite(f, 0x1.ep-7f), 0x08) << "tie 7|8: up to min normal";
  EXPECT_EQ(encodeSatFinite(f, 0x1p-6f), 0x08);
  EXPECT_EQ(encodeSatFinite(f, 1e-30f), 0x00);
  EXPECT_EQ(encodeSatFinite(f, 1e-45f), 0x00) << "f32 subnormal";
  EXPECT_EQ(encodeSatFinite(f, 1.f), 0x38);
}

TEST(EncodeSatFinite, E5M2Boundaries) {
  const Format f = Format::E5M2;
  EXPECT_EQ(encodeSatFinite(f, 57344.f), 0x7B);
  EXPECT_EQ(encodeSatFinite(f, 61439.99f), 0x7B);
  EXPECT_EQ(encodeSatFinite(f, down(61440.f)), 0x7B);
  EXPECT_EQ(encodeSatFinite(f, 61440.f), 0x7B);
  EXPECT_EQ(encodeSatFinite(f, 65536.f), 0x7B);
  EXPECT_EQ(encodeSatFinite(f, -61440.f), 0xFB);
  EXPECT_EQ(encodeSatFinite(f, inf32()), 0x7B);
  EXPECT_EQ(encodeSatFinite(f, -inf32()), 0xFB);
  EXPECT_EQ(encodeSatFinite(f, nan32()), 0x7F);
  EXPECT_EQ(encodeSatFinite(f, -nan32()), 0xFF);
  EXPECT_EQ(encodeSatFinite(f, -0.f), 0x80);
  EXPECT_EQ(encodeSatFinite(f, 53248.f), 0x7A) << "tie 49152|57344 -> even";
  EXPECT_EQ(encodeSatFinite(f, 0x1p-17f), 0x00) << "half the smallest subnormal";
  EXPECT_EQ(encodeSatFinite(f, up(0x1p-17f)), 0x01);
  EXPECT_EQ(encodeSatFinite(f, 0x1p-16f), 0x01);
  EXPECT_EQ(encodeSatFinite(f, 1.f), 0x3C);
}

//===----------------------------------------------------------------------===//
// fp8 -> f32
//===----------------------------------------------------------------------===//

TEST(Decode, All256CodesMatchFieldFormula) {
  for (Format format : kFormats)
    for (int code = 0; code < 256; ++code) {
      const double expected = oracle::decodeExact(format, uint8_t(code));
      const float actual = decode(format, uint8_t(code));
      if (std::isnan(expected)) {
        EXPECT_TRUE(std::isnan(actual)) << formatName(format) << " code " << code;
        EXPECT_EQ(std::signbit(actual), code >= 0x80);
      } else {
        EXPECT_EQ(double(actual), expected) << formatName(format) << " code " << code;
        EXPECT_EQ(std::signbit(actual), code >= 0x80);
      }
    }
}

TEST(Decode, NamedPoints) {
  EXPECT_EQ(decode(Format::E4M3, 0x7E), 448.f);
  EXPECT_EQ(decode(Format::E4M3, 0xFE), -448.f);
  EXPECT_TRUE(std::isnan(decode(Format::E4M3, 0x7F)));
  EXPECT_TRUE(std::isnan(decode(Format::E4M3, 0xFF)));
  EXPECT_EQ(decode(Format::E4M3, 0x01), 0x1p-9f);
  EXPECT_EQ(decode(Format::E4M3, 0x08), 0x1p-6f);
  EXPECT_EQ(decode(Format::E4M3, 0x78), 256.f) << "E4M3FN has no inf at exponent 15";
  EXPECT_EQ(decode(Format::E5M2, 0x7B), 57344.f);
  EXPECT_EQ(decode(Format::E5M2, 0x7C), inf32());
  EXPECT_EQ(decode(Format::E5M2, 0xFC), -inf32());
  for (uint8_t code : {0x7D, 0x7E, 0x7F, 0xFD, 0xFE, 0xFF})
    EXPECT_TRUE(std::isnan(decode(Format::E5M2, code)));
  EXPECT_EQ(decode(Format::E5M2, 0x01), 0x1p-16f);
  EXPECT_EQ(decode(Format::E5M2, 0x04), 0x1p-14f);
  EXPECT_EQ(maxFinite(Format::E4M3), 448.f);
  EXPECT_EQ(maxFinite(Format::E5M2), 57344.f);
}

TEST(Decode, EncodeOfDecodeIsIdentityOnFiniteCodes) {
  for (Format format : kFormats)
    for (int code = 0; code < 256; ++code) {
      const float value = decode(format, uint8_t(code));
      if (std::isfinite(value)) {
        EXPECT_EQ(encodeSatFinite(format, value), code) << formatName(format);
      }
    }
}

//===----------------------------------------------------------------------===//
// UE8M0
//===----------------------------------------------------------------------===//

/// Smallest e in [0, 254] with 2^(e-127) >= x (by search), 254 if none.
uint8_t roundUpBySearch(double x) {
  for (int e = 0; e <= 254; ++e)
    if (std::ldexp(1.0, e - 127) >= x)
      return uint8_t(e);
  return 254;
}

/// ceil(log2 x) via frexp, saturated to the code range.
uint8_t roundUpByFrexp(double x) {
  int exponent;
  const double fraction = std::frexp(x, &exponent); // x = fraction * 2^exponent
  const int ceilLog2 = fraction == 0.5 ? exponent - 1 : exponent;
  return uint8_t(std::clamp(ceilLog2 + 127, 0, 254));
}

TEST(Ue8m0, RoundUpOnEveryPositiveNormalBf16) {
  for (uint32_t pattern = 0x0080; pattern < 0x7F80; ++pattern) {
    const float x = floatFromBits(pattern << 16);
    ASSERT_EQ(encodeUe8m0RoundUp(x), roundUpBySearch(x)) << x;
  }
}

TEST(Ue8m0, RoundUpOnStridedF32IncludingSubnormals) {
  for (uint64_t bits = 1; bits < 0x7F800000u; bits += 4099) {
    const float x = floatFromBits(uint32_t(bits));
    ASSERT_EQ(encodeUe8m0RoundUp(x), roundUpByFrexp(x)) << std::hex << bits;
    ASSERT_EQ(encodeUe8m0RoundUp(-x), roundUpByFrexp(x)) << "negative uses |x|";
  }
}

TEST(Ue8m0, RoundUpSpecialsAndSubnormals) {
  EXPECT_EQ(encodeUe8m0RoundUp(nan32()), 0xFF);
  EXPECT_EQ(encodeUe8m0RoundUp(inf32()), 0xFE);
  EXPECT_EQ(encodeUe8m0RoundUp(0.f), 0x00);
  EXPECT_EQ(encodeUe8m0RoundUp(-0.f), 0x00);
  EXPECT_EQ(encodeUe8m0RoundUp(1.f), 127);
  EXPECT_EQ(encodeUe8m0RoundUp(up(1.f)), 128);
  EXPECT_EQ(encodeUe8m0RoundUp(0x1p127f), 254);
  EXPECT_EQ(encodeUe8m0RoundUp(up(0x1p127f)), 254) << "saturates";
  EXPECT_EQ(encodeUe8m0RoundUp(FLT_MAX), 254);
  EXPECT_EQ(encodeUe8m0RoundUp(0x1p-126f), 1);
  EXPECT_EQ(encodeUe8m0RoundUp(up(0x1p-126f)), 2);
  // f32 subnormals: (0, 2^-127] -> code 0, (2^-127, 2^-126) -> code 1.
  EXPECT_EQ(encodeUe8m0RoundUp(floatFromBits(0x00000001u)), 0);
  EXPECT_EQ(encodeUe8m0RoundUp(floatFromBits(0x00400000u)), 0);
  EXPECT_EQ(encodeUe8m0RoundUp(floatFromBits(0x00400001u)), 1);
  EXPECT_EQ(encodeUe8m0RoundUp(floatFromBits(0x007FFFFFu)), 1);
}

TEST(Ue8m0, DecodeAll256Codes) {
  for (int e = 0; e < 255; ++e) {
    EXPECT_EQ(double(decodeUe8m0(uint8_t(e))), std::ldexp(1.0, e - 127)) << e;
    EXPECT_EQ(encodeUe8m0RoundUp(decodeUe8m0(uint8_t(e))), e) << e;
  }
  EXPECT_TRUE(std::isnan(decodeUe8m0(0xFF)));
  EXPECT_EQ(floatBits(decodeUe8m0(0)), 0x00400000u) << "2^-127 is an f32 subnormal";
}

//===----------------------------------------------------------------------===//
// bf16 / f16
//===----------------------------------------------------------------------===//

TEST(Bf16, AllPatternsRoundTrip) {
  for (uint32_t pattern = 0; pattern <= 0xFFFF; ++pattern) {
    const float x = bf16ToFloat(uint16_t(pattern));
    ASSERT_EQ(floatBits(x), pattern << 16);
    if (std::isnan(x))
      EXPECT_TRUE(std::isnan(bf16ToFloat(floatToBf16(x))));
    else
      ASSERT_EQ(floatToBf16(x), pattern);
  }
}

TEST(Bf16, RandomF32RoundsToNearestEven) {
  const uint64_t seed = oracle::freshSeed();
  SCOPED_TRACE(testing::Message() << "seed=" << seed << " (FP8_TEST_SEED)");
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<uint32_t> anyBits;
  for (int i = 0; i < 300000; ++i) {
    uint32_t bits = anyBits(rng);
    if (i % 3 == 0)
      bits = (bits & 0xFFFF0000u) | 0x8000u; // exact ties
    const float x = floatFromBits(bits);
    const uint16_t result = floatToBf16(x);
    if (std::isnan(x)) {
      EXPECT_TRUE(std::isnan(bf16ToFloat(result)));
      EXPECT_EQ(result >> 15, bits >> 31);
      continue;
    }
    if (std::isinf(x)) {
      ASSERT_EQ(result, uint16_t(bits >> 16));
      continue;
    }
    // Candidates: truncation toward zero and the next code away from zero.
    const uint16_t truncated = uint16_t(bits >> 16);
    const uint16_t away = uint16_t(truncated + 1);
    const double value = x;
    const double below = std::fabs(double(floatFromBits(uint32_t(truncated) << 16)) - value);
    const double aboveValue = (away & 0x7FFF) == 0x7F80
                                  ? std::copysign(0x1p128, value) // inf's "position"
                                  : double(floatFromBits(uint32_t(away) << 16));
    const double above = std::fabs(aboveValue - value);
    const uint16_t expected =
        below < above ? truncated : above < below ? away : (truncated & 1 ? away : truncated);
    ASSERT_EQ(result, expected) << std::hex << bits;
  }
  EXPECT_EQ(floatToBf16(FLT_MAX), 0x7F80) << "beyond max + half ulp: inf";
  EXPECT_EQ(floatToBf16(floatFromBits(0x7F7F8000u)), 0x7F80) << "tie with odd max";
  EXPECT_EQ(floatToBf16(floatFromBits(0x7F7F7FFFu)), 0x7F7F);
  EXPECT_EQ(floatToBf16(floatFromBits(0x7F800001u)), 0x7FC0) << "sNaN stays NaN";
  EXPECT_EQ(floatToBf16(floatFromBits(0xFFC00000u)), 0xFFC0);
}

TEST(F16, AllPatternsDecodeAndRoundTrip) {
  for (uint32_t pattern = 0; pattern <= 0xFFFF; ++pattern) {
    const double expected = oracle::f16Exact(uint16_t(pattern));
    const float x = f16ToFloat(uint16_t(pattern));
    if (std::isnan(expected)) {
      EXPECT_TRUE(std::isnan(x));
      EXPECT_TRUE(std::isnan(f16ToFloat(floatToF16(x))));
      continue;
    }
    ASSERT_EQ(double(x), expected) << std::hex << pattern;
    ASSERT_EQ(std::signbit(x), pattern >= 0x8000);
    ASSERT_EQ(floatToF16(x), pattern) << std::hex << pattern;
  }
}

/// IEEE binary16 rounding by search in the sorted table of finite values.
uint16_t f16BySearch(const std::vector<double> &positiveValues, float x) {
  const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  const double magnitude = std::fabs(double(x));
  if (magnitude >= 65520.0) // max 65504 + half ulp 16: tie with odd max -> inf
    return sign | 0x7C00;
  const auto it = std::lower_bound(positiveValues.begin(), positiveValues.end(), magnitude);
  size_t hi = size_t(it - positiveValues.begin());
  if (hi == 0)
    return sign;
  if (hi == positiveValues.size()) // (65504, 65520): below the overflow tie
    return sign | uint16_t(hi - 1);
  const size_t lo = hi - 1;
  const double dLo = magnitude - positiveValues[lo];
  const double dHi = positiveValues[hi] - magnitude;
  const size_t pick = dLo < dHi ? lo : dHi < dLo ? hi : (lo % 2 == 0 ? lo : hi);
  return sign | uint16_t(pick);
}

TEST(F16, F32RoundsToNearestEvenAgainstTableSearch) {
  std::vector<double> positiveValues; // index == code
  for (uint32_t code = 0; code < 0x7C00; ++code)
    positiveValues.push_back(oracle::f16Exact(uint16_t(code)));
  // Every tie and its neighbours.
  for (uint32_t code = 0; code + 1 < 0x7C00; ++code) {
    const float mid = float((positiveValues[code] + positiveValues[code + 1]) / 2);
    for (float x : {mid, up(mid), down(mid)}) {
      ASSERT_EQ(floatToF16(x), f16BySearch(positiveValues, x)) << x;
      ASSERT_EQ(floatToF16(-x), f16BySearch(positiveValues, -x)) << x;
    }
  }
  const uint64_t seed = oracle::freshSeed();
  SCOPED_TRACE(testing::Message() << "seed=" << seed << " (FP8_TEST_SEED)");
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<uint32_t> anyBits;
  std::uniform_int_distribution<uint32_t> exponent(127 - 26, 127 + 16);
  for (int i = 0; i < 200000; ++i) {
    const float x = floatFromBits((anyBits(rng) & 0x807FFFFFu) | (exponent(rng) << 23));
    ASSERT_EQ(floatToF16(x), f16BySearch(positiveValues, x)) << x;
  }
  EXPECT_EQ(floatToF16(65504.f), 0x7BFF);
  EXPECT_EQ(floatToF16(down(65520.f)), 0x7BFF);
  EXPECT_EQ(floatToF16(65520.f), 0x7C00);
  EXPECT_EQ(floatToF16(-inf32()), 0xFC00);
  EXPECT_EQ(floatToF16(0x1p-25f), 0x0000) << "half the smallest subnormal";
  EXPECT_EQ(floatToF16(up(0x1p-25f)), 0x0001);
  EXPECT_EQ(floatToF16(-1e-40f), 0x8000);
  EXPECT_TRUE(std::isnan(f16ToFloat(floatToF16(nan32()))));
}

} // namespace
