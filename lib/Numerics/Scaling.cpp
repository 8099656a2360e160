//===- Scaling.cpp - Scale rules of the FP8 recipes -----------------------===//

#include "FP8/Numerics/Scaling.h"

#include <cfloat>
#include <cmath>
#include <limits>

namespace fp8::numerics {
namespace {

constexpr uint32_t kSignAndExponentMask = 0xFF800000u;

float quietNaN() { return std::numeric_limits<float>::quiet_NaN(); }

/// FLT_MAX instead of inf: an inf scale would turn every zero into NaN.
float finiteOrMax(float scale) { return std::isinf(scale) ? FLT_MAX : scale; }

/// floor(log2(x)) for finite x > 0, exact (f32 subnormals included).
int floorLog2(float x) {
  const uint32_t bits = floatBits(x);
  const int exponentField = static_cast<int>(bits >> 23);
  if (exponentField != 0)
    return exponentField - 127;
  uint32_t mantissa = bits & 0x007FFFFFu; // x = mantissa * 2^-149
  int msb = -1;
  while (mantissa) {
    ++msb;
    mantissa >>= 1;
  }
  return msb - 149;
}

} // namespace

float amax(const float *x, size_t n) {
  float result = 0.f;
  for (size_t i = 0; i < n; ++i) {
    const float magnitude = std::fabs(x[i]);
    if (std::isnan(magnitude))
      return quietNaN();
    if (magnitude > result)
      result = magnitude;
  }
  return result;
}

float currentScalingScale(float amax, Format format, float epsilon,
                          bool powerOfTwo) {
  if (amax < epsilon) // NaN compares false and stays NaN
    amax = epsilon;
  float scale = 1.f;
  if (std::isfinite(amax) && amax != 0.f)
    scale = finiteOrMax(maxFinite(format) / amax);
  if (powerOfTwo)
    scale = floatFromBits(floatBits(scale) & kSignAndExponentMask);
  return scale;
}

float scaleInverse(float scale) { return 1.f / scale; }

float historyAmax(const float *history, size_t len, AmaxComputeAlgo algo) {
  if (len == 0)
    return 0.f;
  if (algo == AmaxComputeAlgo::MostRecent)
    return history[0];
  float result = history[0];
  for (size_t i = 1; i < len; ++i)
    result = std::fmax(result, history[i]);
  return result;
}

float delayedScalingScale(float amax, float previousScale, Format format,
                          int margin) {
  // A power-of-two factor: exact unless it leaves the f32 range.
  const float scaledMax = std::ldexp(maxFinite(format), -margin);
  const float scale =
      (std::isfinite(amax) && amax > 0.f) ? scaledMax / amax : previousScale;
  return finiteOrMax(scale);
}

void recordAmax(float *history, float amax) {
  if (std::isnan(history[0]) || std::isnan(amax))
    history[0] = quietNaN();
  else if (amax > history[0])
    history[0] = amax;
}

void rollAmaxHistory(float *history, size_t len) {
  if (len == 0)
    return;
  const float oldest = history[0];
  for (size_t i = 0; i + 1 < len; ++i)
    history[i] = history[i + 1];
  history[len - 1] = oldest;
  history[0] = 0.f;
}

BlockScale blockwiseScale(float tileAmax, BlockScaleKind kind,
                          float amaxClamp) {
  const float clamped = tileAmax < amaxClamp ? amaxClamp : tileAmax;
  if (kind == BlockScaleKind::PowerOfTwo) {
    const float scale =
        currentScalingScale(clamped, Format::E4M3, 0.f, /*powerOfTwo=*/true);
    return {scale, scaleInverse(scale)};
  }
  if (!std::isfinite(clamped) || clamped == 0.f)
    return {1.f, 1.f};
  const float scaleInv = clamped / maxFinite(Format::E4M3);
  if (scaleInv == 0.f) // amax below ~2^-141: no usable scale_inv
    return {1.f, 1.f};
  return {finiteOrMax(1.f / scaleInv), scaleInv};
}

uint8_t mxScaleExponent(float blockAmax, Format elem, Ue8m0Rule rule) {
  const float magnitude = std::fabs(blockAmax);
  if (rule == Ue8m0Rule::RoundUp) {
    const float rcpMax = floatFromBits(elem == Format::E4M3 ? kRcpE4M3MaxBits
                                                            : kRcpE5M2MaxBits);
    return encodeUe8m0RoundUp(magnitude * rcpMax);
  }
  if (std::isnan(magnitude))
    return 0xFF;
  if (std::isinf(magnitude))
    return 0xFE;
  if (magnitude == 0.f)
    return 0;
  int exponent = floorLog2(magnitude) - maxExponent(elem);
  if (exponent < -127)
    exponent = -127;
  if (exponent > 127)
    exponent = 127;
  return static_cast<uint8_t>(exponent + 127);
}

float mxQuantizeMultiplier(uint8_t e) {
  if (e == 0xFF)
    return quietNaN();
  // 2^(127 - e): biased f32 exponent 254 - e; e = 254 is the subnormal 2^-127.
  const uint32_t biased = 254u - e;
  return biased == 0 ? floatFromBits(0x00400000u)
                     : floatFromBits(biased << 23);
}

} // namespace fp8::numerics
