//===- ScalingTest.cpp - Scale rules of every recipe ----------------------===//

#include "FP8/Numerics/Scaling.h"
#include "OracleSupport.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <vector>

using namespace fp8::numerics;

namespace {

float nan32() { return std::numeric_limits<float>::quiet_NaN(); }
float inf32() { return std::numeric_limits<float>::infinity(); }

/// True when `result` is the f32 nearest to `numerator / denominator`, checked
/// exactly: result * denominator is exact in double (24 x 24 bits), so
/// comparing distances to the neighbours needs no division.
bool isRoundedQuotient(float result, double numerator, double denominator) {
  const double error = std::fabs(double(result) * denominator - numerator);
  for (float neighbour : {std::nextafter(result, 0.f), std::nextafter(result, inf32())})
    if (std::fabs(double(neighbour) * denominator - numerator) < error)
      return false;
  return true;
}

bool isPowerOfTwo(float x) {
  int exponent;
  return std::frexp(x, &exponent) == 0.5f;
}

/// Positive finite bf16 values (as f32), subnormals included.
std::vector<float> allPositiveFiniteBf16() {
  std::vector<float> values;
  for (uint32_t pattern = 0x0001; pattern < 0x7F80; ++pattern)
    values.push_back(floatFromBits(pattern << 16));
  return values;
}

//===----------------------------------------------------------------------===//
// amax
//===----------------------------------------------------------------------===//

TEST(Amax, MaxAbsAndNaNPropagation) {
  const float values[] = {1.f, -3.f, 2.f, -0.f};
  EXPECT_EQ(amax(values, 4), 3.f);
  EXPECT_EQ(amax(values, 0), 0.f);
  const float withNaN[] = {1.f, nan32(), 5.f};
  EXPECT_TRUE(std::isnan(amax(withNaN, 3))) << "a NaN must not vanish";
  const float withInf[] = {1.f, -inf32()};
  EXPECT_EQ(amax(withInf, 2), inf32());
  const float negativeZero[] = {-0.f};
  EXPECT_EQ(floatBits(amax(negativeZero, 1)), 0u);
}

//===----------------------------------------------------------------------===//
// Current scaling
//===----------------------------------------------------------------------===//

TEST(CurrentScaling, ScaleIsRoundedQuotientForEveryNormalBf16Amax) {
  for (Format format : {Format::E4M3, Format::E5M2})
    for (float a : allPositiveFiniteBf16()) {
      const float scale = currentScalingScale(a, format);
      // f32 division overflows when the quotient is >= FLT_MAX + half an ulp.
      if (double(maxFinite(format)) / a >= 0x1p128 * (1 - 0x1p-25)) {
        ASSERT_EQ(scale, FLT_MAX) << a;
        continue;
      }
      ASSERT_TRUE(isRoundedQuotient(scale, maxFinite(format), a)) << a;
      const float pow2 = currentScalingScale(a, format, 0.f, true);
      ASSERT_TRUE(isPowerOfTwo(pow2)) << a;
      ASSERT_LE(pow2, scale);
      ASSERT_GT(2 * double(pow2), double(scale));
    }
}

TEST(CurrentScaling, DegenerateAmaxGivesScaleOne) {
  for (Format format : {Format::E4M3, Format::E5M2}) {
    EXPECT_EQ(currentScalingScale(0.f, format), 1.f);
    EXPECT_EQ(currentScalingScale(inf32(), format), 1.f);
    EXPECT_EQ(currentScalingScale(nan32(), format), 1.f);
    EXPECT_EQ(currentScalingScale(nan32(), format, 1e-3f), 1.f) << "eps does not hide NaN";
    EXPECT_EQ(currentScalingScale(0.f, format, 0.f, true), 1.f);
  }
}

TEST(CurrentScaling, InfiniteQuotientBecomesFltMax) {
  const float tiny = floatFromBits(1); // 2^-149
  EXPECT_EQ(currentScalingScale(tiny, Format::E4M3), FLT_MAX);
  EXPECT_EQ(currentScalingScale(1e-38f, Format::E5M2), FLT_MAX);
  EXPECT_EQ(currentScalingScale(tiny, Format::E4M3, 0.f, true), 0x1p127f)
      << "FLT_MAX & 0xFF800000";
  EXPECT_GT(scaleInverse(FLT_MAX), 0.f) << "subnormal, not flushed";
  EXPECT_EQ(scaleInverse(0x1p127f), 0x1p-127f);
}

TEST(CurrentScaling, EpsilonClampsSmallAmax) {
  EXPECT_EQ(currentScalingScale(0.f, Format::E4M3, 1e-3f), float(448.0 / double(1e-3f)));
  EXPECT_EQ(currentScalingScale(5e-4f, Format::E4M3, 1e-3f),
            currentScalingScale(1e-3f, Format::E4M3));
  EXPECT_EQ(currentScalingScale(2.f, Format::E4M3, 1e-3f), 224.f);
}

TEST(CurrentScaling, PowerOfTwoMasksMantissa) {
  EXPECT_EQ(currentScalingScale(3.f, Format::E4M3, 0.f, true), 128.f); // 149.33
  EXPECT_EQ(currentScalingScale(448.f, Format::E4M3, 0.f, true), 1.f);
  EXPECT_EQ(currentScalingScale(449.f, Format::E4M3, 0.f, true), 0.5f);
  EXPECT_EQ(currentScalingScale(1.f, Format::E4M3, 0.f, true), 256.f);
  EXPECT_EQ(currentScalingScale(1.f, Format::E5M2, 0.f, true), 32768.f);
  EXPECT_EQ(currentScalingScale(3.f, Format::E4M3), float(448.0 / 3.0));
  EXPECT_EQ(scaleInverse(4.f), 0.25f);
  EXPECT_EQ(scaleInverse(3.f), float(1.0 / 3.0));
}

//===----------------------------------------------------------------------===//
// Delayed scaling
//===----------------------------------------------------------------------===//

TEST(DelayedScaling, RollMatchesTeSemantics) {
  // TE's roll: new[i] = old[i+1], new[L-1] = old[0], then new[0] = 0.
  std::vector<float> h = {10, 20, 30, 40};
  rollAmaxHistory(h.data(), h.size());
  EXPECT_EQ(h, (std::vector<float>{0, 30, 40, 10}));
  std::vector<float> one = {7};
  rollAmaxHistory(one.data(), 1);
  EXPECT_EQ(one, std::vector<float>{0});
  rollAmaxHistory(nullptr, 0); // no-op
}

TEST(DelayedScaling, MultiStepHistoryWindow) {
  // Each step: the cast records its amax, then amax -> scale, then roll.
  // Expected histories written out by hand from the roll rule.
  std::vector<float> h(4, 0.f);
  const float observed[] = {1, 2, 3, 0.5f, 0.25f, 0.125f, 0.125f};
  const std::vector<std::vector<float>> afterRoll = {
      {0, 0, 0, 1},         {0, 0, 1, 2},         {0, 1, 2, 3},
      {0, 2, 3, 0.5f},      {0, 3, 0.5f, 0.25f},  {0, 0.5f, 0.25f, 0.125f},
      {0, 0.25f, 0.125f, 0.125f}};
  const float expectedMax[] = {1, 2, 3, 3, 3, 3, 0.5f};
  float scaleMax = 1.f, scaleRecent = 1.f;
  for (int step = 0; step < 7; ++step) {
    recordAmax(h.data(), observed[step]);
    const float amaxMax = historyAmax(h.data(), h.size(), AmaxComputeAlgo::Max);
    const float amaxRecent = historyAmax(h.data(), h.size(), AmaxComputeAlgo::MostRecent);
    EXPECT_EQ(amaxMax, expectedMax[step]) << "step " << step;
    EXPECT_EQ(amaxRecent, observed[step]) << "step " << step;
    scaleMax = delayedScalingScale(amaxMax, scaleMax, Format::E4M3, 0);
    scaleRecent = delayedScalingScale(amaxRecent, scaleRecent, Format::E4M3, 0);
    EXPECT_EQ(scaleMax, 448.f / expectedMax[step]);
    EXPECT_EQ(scaleRecent, 448.f / observed[step]);
    rollAmaxHistory(h.data(), h.size());
    EXPECT_EQ(h, afterRoll[step]) << "step " << step;
  }
}

TEST(DelayedScaling, MarginAndDegenerateAmax) {
  EXPECT_EQ(delayedScalingScale(1.f, 5.f, Format::E4M3, 0), 448.f);
  EXPECT_EQ(delayedScalingScale(1.f, 5.f, Format::E4M3, 1), 224.f);
  EXPECT_EQ(delayedScalingScale(2.f, 5.f, Format::E5M2, 3), 3584.f);
  EXPECT_EQ(delayedScalingScale(3.f, 5.f, Format::E4M3, 2), float(112.0 / 3.0));
  EXPECT_EQ(delayedScalingScale(0.f, 5.f, Format::E4M3, 0), 5.f) << "keep previous";
  EXPECT_EQ(delayedScalingScale(inf32(), 5.f, Format::E4M3, 0), 5.f);
  EXPECT_EQ(delayedScalingScale(nan32(), 5.f, Format::E4M3, 0), 5.f);
  EXPECT_EQ(delayedScalingScale(-1.f, 5.f, Format::E4M3, 0), 5.f);
  EXPECT_EQ(delayedScalingScale(floatFromBits(1), 5.f, Format::E4M3, 0), FLT_MAX);
  const DelayedScalingParams defaults;
  EXPECT_EQ(defaults.historyLength, 1024);
  EXPECT_EQ(defaults.algo, AmaxComputeAlgo::Max);
  EXPECT_EQ(defaults.margin, 0);
}

TEST(DelayedScaling, NaNAmaxIsStickyAndSkippedByMax) {
  std::vector<float> h = {0, 4, 2};
  recordAmax(h.data(), 1.f);
  EXPECT_EQ(h[0], 1.f);
  recordAmax(h.data(), 0.5f);
  EXPECT_EQ(h[0], 1.f);
  recordAmax(h.data(), nan32());
  EXPECT_TRUE(std::isnan(h[0]));
  recordAmax(h.data(), 100.f);
  EXPECT_TRUE(std::isnan(h[0])) << "sticky within the step";
  EXPECT_EQ(historyAmax(h.data(), 3, AmaxComputeAlgo::Max), 4.f);
  const float recent = historyAmax(h.data(), 3, AmaxComputeAlgo::MostRecent);
  EXPECT_TRUE(std::isnan(recent));
  EXPECT_EQ(delayedScalingScale(recent, 7.f, Format::E4M3, 0), 7.f);
  const float allNaN[] = {nan32(), nan32()};
  EXPECT_TRUE(std::isnan(historyAmax(allNaN, 2, AmaxComputeAlgo::Max)));
  EXPECT_EQ(historyAmax(nullptr, 0, AmaxComputeAlgo::Max), 0.f);
}

//===----------------------------------------------------------------------===//
// Blockwise (DeepSeek-V3)
//===----------------------------------------------------------------------===//

/// Exact 2^ceil(log2(amax / 448)) as a double, by comparing amax with the
/// exact products 448 * 2^k (no division, no f32).
double exactPow2ScaleInv(float amax) {
  int exponent;
  std::frexp(amax, &exponent);
  int k = exponent - 9;
  while (std::ldexp(448.0, k) < amax)
    ++k;
  while (std::ldexp(448.0, k - 1) >= amax)
    --k;
  return std::ldexp(1.0, k);
}

TEST(BlockwiseScale, PowerOfTwoEqualsExactCeilLog2ExceptBelowF32Range) {
  // Every positive finite bf16 amax. The f32 rule computes 448/amax in f32
  // and keeps its exponent; that can only differ from the exact ceil(log2)
  // when the f32 quotient rounds up across a power of two, which never
  // happens for bf16 inputs (their 8-bit significands stay far from
  // 448 * 2^k except at it exactly), or when 448/amax overflows f32: for
  // amax <= 448 * 2^-128 = 1.75 * 2^-120 (quotient >= 2^128 -> inf -> FLT_MAX
  // -> 2^127) the rule's scale_inv is 2^-127 while the exact one is smaller
  // (not even representable below 2^-149). Those are the ONLY disagreements:
  // the first ones are the smallest bf16 subnormals 2^-133, 2^-132, 1.5 *
  // 2^-132, ... all mapping to 2^-127.
  int disagreements = 0;
  for (float a : allPositiveFiniteBf16()) {
    const BlockScale s = blockwiseScale(a, BlockScaleKind::PowerOfTwo, 0.f);
    const double exact = exactPow2ScaleInv(a);
    ASSERT_TRUE(isPowerOfTwo(s.scale)) << a;
    ASSERT_EQ(double(s.scale) * double(s.scaleInv), 1.0) << a;
    if (double(s.scaleInv) != exact) {
      ++disagreements;
      ASSERT_LE(double(a), 0x1.cp-120) << a;
      ASSERT_EQ(s.scaleInv, 0x1p-127f) << a;
      ASSERT_LT(exact, 0x1p-127) << a;
    }
  }
  // bf16 codes 0x0001 .. 0x03E0 (0x03E0 = 1.75 * 2^-120 itself): 992.
  EXPECT_EQ(disagreements, 0x3E0);
}

TEST(BlockwiseScale, Float32ScaleInvIsRoundedAmaxOver448) {
  for (float a : allPositiveFiniteBf16()) {
    const BlockScale s = blockwiseScale(a, BlockScaleKind::Float32, 0.f);
    if (a < 0x1p-100f)
      continue; // amax/448 leaves the f32 normal range: checked below
    ASSERT_TRUE(isRoundedQuotient(s.scaleInv, a, 448.0)) << a;
    ASSERT_TRUE(isRoundedQuotient(s.scale, 1.0, s.scaleInv)) << a;
  }
}

TEST(BlockwiseScale, PowerOfTwoAndFloat32GiveDifferentBits) {
  const BlockScale pow2 = blockwiseScale(3.f, BlockScaleKind::PowerOfTwo, 0.f);
  const BlockScale f32 = blockwiseScale(3.f, BlockScaleKind::Float32, 0.f);
  EXPECT_EQ(pow2.scaleInv, 0x1p-7f) << "2^ceil(log2(3/448))";
  EXPECT_EQ(pow2.scale, 128.f);
  EXPECT_EQ(f32.scaleInv, float(3.0 / 448.0));
  EXPECT_NE(floatBits(pow2.scaleInv), floatBits(f32.scaleInv));
  EXPECT_NE(floatBits(pow2.scale), floatBits(f32.scale));
  // They agree exactly when amax is 448 * 2^k.
  EXPECT_EQ(blockwiseScale(56.f, BlockScaleKind::PowerOfTwo, 0.f).scaleInv, 0.125f);
  EXPECT_EQ(blockwiseScale(56.f, BlockScaleKind::Float32, 0.f).scaleInv, 0.125f);
}

TEST(BlockwiseScale, ClampAndDegenerateAmax) {
  // DeepGEMM clamps amax to >= 1e-4.
  const BlockScale pow2 = blockwiseScale(0.f, BlockScaleKind::PowerOfTwo, 1e-4f);
  EXPECT_EQ(pow2.scale, 0x1p22f) << "448 / 1e-4 = 4.48e6 -> 2^22";
  EXPECT_EQ(pow2.scaleInv, 0x1p-22f);
  const BlockScale f32 = blockwiseScale(0.f, BlockScaleKind::Float32, 1e-4f);
  EXPECT_EQ(f32.scaleInv, 1e-4f / 448.f);
  EXPECT_EQ(f32.scale, 1.f / (1e-4f / 448.f));
  EXPECT_EQ(blockwiseScale(5e-5f, BlockScaleKind::Float32, 1e-4f).scaleInv, 1e-4f / 448.f);
  for (BlockScaleKind kind : {BlockScaleKind::PowerOfTwo, BlockScaleKind::Float32})
    for (float a : {0.f, inf32(), nan32()}) {
      const BlockScale s = blockwiseScale(a, kind, 0.f);
      EXPECT_EQ(s.scale, 1.f) << a;
      EXPECT_EQ(s.scaleInv, 1.f) << a;
    }
  EXPECT_EQ(blockwiseScale(nan32(), BlockScaleKind::Float32, 1e-4f).scale, 1.f);
  const BlockScale underflow = blockwiseScale(floatFromBits(1), BlockScaleKind::Float32, 0.f);
  EXPECT_EQ(underflow.scaleInv, 1.f) << "amax/448 underflows to 0";
  const BlockScale huge = blockwiseScale(0x1p-140f, BlockScaleKind::Float32, 0.f);
  EXPECT_GT(huge.scaleInv, 0.f);
  EXPECT_EQ(huge.scale, FLT_MAX) << "1/scaleInv overflows";
}

//===----------------------------------------------------------------------===//
// MXFP8
//===----------------------------------------------------------------------===//

TEST(MxScale, ReciprocalConstants) {
  EXPECT_EQ(kRcpE4M3MaxBits, floatBits(float(1.0 / 448.0)));
  EXPECT_EQ(kRcpE5M2MaxBits, floatBits(float(1.0 / 57344.0)));
  EXPECT_GT(double(floatFromBits(kRcpE4M3MaxBits)), 1.0 / 448.0) << "rounded up";
}

TEST(MxScale, WorkedExample449) {
  EXPECT_EQ(mxScaleExponent(449.f, Format::E4M3, Ue8m0Rule::RoundUp), 128);
  EXPECT_EQ(mxScaleExponent(449.f, Format::E4M3, Ue8m0Rule::Ocp), 127);
}

/// smallest e with 2^(e-127) >= x, by search, saturating at 254.
uint8_t ue8m0RoundUpBySearch(double x) {
  for (int e = 0; e <= 254; ++e)
    if (std::ldexp(1.0, e - 127) >= x)
      return uint8_t(e);
  return 254;
}

uint8_t ocpByFrexp(float amax, Format elem) {
  int exponent;
  std::frexp(double(amax), &exponent);
  const int floorLog2 = exponent - 1;
  return uint8_t(std::clamp(floorLog2 - maxExponent(elem), -127, 127) + 127);
}

TEST(MxScale, EveryPositiveNormalBf16AgainstExactMath) {
  for (Format elem : {Format::E4M3, Format::E5M2}) {
    const float rcp = floatFromBits(elem == Format::E4M3 ? kRcpE4M3MaxBits : kRcpE5M2MaxBits);
    for (uint32_t pattern = 0x0080; pattern < 0x7F80; ++pattern) {
      const float a = floatFromBits(pattern << 16);
      const float product = a * rcp; // the f32 the hardware cvt sees
      ASSERT_EQ(mxScaleExponent(a, elem, Ue8m0Rule::RoundUp), ue8m0RoundUpBySearch(product))
          << formatName(elem) << " amax " << a;
      ASSERT_EQ(mxScaleExponent(a, elem, Ue8m0Rule::Ocp), ocpByFrexp(a, elem))
          << formatName(elem) << " amax " << a;
    }
  }
}

TEST(MxScale, OcpDiffersFromRoundUpExactlyAboveMantissa1p75) {
  // amax = m * 2^E: RoundUp gives E - emax + (m > 1.75), Ocp E - emax; in the
  // unclamped range they differ (by one) iff the bf16 mantissa field > 0x60,
  // i.e. for 31 of every 128 values: "about a quarter".
  for (Format elem : {Format::E4M3, Format::E5M2}) {
    int differing = 0, total = 0;
    for (uint32_t pattern = 20u << 7; pattern < 0x7F80; ++pattern, ++total) {
      const float a = floatFromBits(pattern << 16);
      const int up = mxScaleExponent(a, elem, Ue8m0Rule::RoundUp);
      const int ocp = mxScaleExponent(a, elem, Ue8m0Rule::Ocp);
      const bool above = (pattern & 0x7F) > 0x60;
      ASSERT_EQ(up - ocp, above ? 1 : 0) << formatName(elem) << " amax " << a;
      differing += above;
    }
    EXPECT_EQ(differing * 128, total * 31);
  }
}

TEST(MxScale, Boundaries) {
  for (int k = -20; k <= 20; ++k) {
    const float a = std::ldexp(448.f, k);
    EXPECT_EQ(mxScaleExponent(a, Format::E4M3, Ue8m0Rule::RoundUp), 127 + k) << k;
    EXPECT_EQ(mxScaleExponent(a, Format::E4M3, Ue8m0Rule::Ocp), 127 + k) << k;
    EXPECT_EQ(mxScaleExponent(std::nextafter(a, inf32()), Format::E4M3, Ue8m0Rule::RoundUp),
              128 + k) << k;
    const float b = std::ldexp(57344.f, k);
    EXPECT_EQ(mxScaleExponent(b, Format::E5M2, Ue8m0Rule::RoundUp), 127 + k) << k;
    EXPECT_EQ(mxScaleExponent(b, Format::E5M2, Ue8m0Rule::Ocp), 127 + k) << k;
  }
  EXPECT_EQ(mxScaleExponent(464.f, Format::E4M3, Ue8m0Rule::RoundUp), 128);
  EXPECT_EQ(mxScaleExponent(464.f, Format::E4M3, Ue8m0Rule::Ocp), 127);
  EXPECT_EQ(mxScaleExponent(61440.f, Format::E5M2, Ue8m0Rule::RoundUp), 128);
  EXPECT_EQ(mxScaleExponent(61440.f, Format::E5M2, Ue8m0Rule::Ocp), 127);
  EXPECT_EQ(mxScaleExponent(61440.f, Format::E4M3, Ue8m0Rule::RoundUp), 135);
  EXPECT_EQ(mxScaleExponent(61440.f, Format::E4M3, Ue8m0Rule::Ocp), 134);
  for (Ue8m0Rule rule : {Ue8m0Rule::RoundUp, Ue8m0Rule::Ocp})
    for (Format elem : {Format::E4M3, Format::E5M2}) {
      EXPECT_EQ(mxScaleExponent(0.f, elem, rule), 0);
      EXPECT_EQ(mxScaleExponent(inf32(), elem, rule), 0xFE);
      EXPECT_EQ(mxScaleExponent(nan32(), elem, rule), 0xFF);
      EXPECT_EQ(mxScaleExponent(floatFromBits(1), elem, rule), 0) << "f32 subnormal";
      EXPECT_EQ(mxScaleExponent(0x1p-126f, elem, rule), 0) << "clamped at 2^-127";
      EXPECT_EQ(mxScaleExponent(FLT_MAX, elem, rule),
                rule == Ue8m0Rule::Ocp ? 127 + 127 - maxExponent(elem) : 127 + 128 - maxExponent(elem));
      EXPECT_EQ(mxScaleExponent(-449.f, elem, rule), mxScaleExponent(449.f, elem, rule));
    }
}

TEST(MxScale, QuantizeMultiplierIsExactInverseOfEveryCode) {
  for (int e = 0; e < 255; ++e) {
    EXPECT_EQ(double(mxQuantizeMultiplier(uint8_t(e))), std::ldexp(1.0, 127 - e)) << e;
    EXPECT_EQ(double(mxQuantizeMultiplier(uint8_t(e))) * double(decodeUe8m0(uint8_t(e))), 1.0);
  }
  EXPECT_EQ(floatBits(mxQuantizeMultiplier(254)), 0x00400000u) << "subnormal 2^-127";
  EXPECT_TRUE(std::isnan(mxQuantizeMultiplier(0xFF)));
}

} // namespace
