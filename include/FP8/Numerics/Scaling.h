//===- Scaling.h - Scale rules of the FP8 recipes ---------------*- C++ -*-===//
//
// How each recipe turns an amax into a scale (docs/design.md, "Numerics").
// Direction convention, everywhere in the project: the quantizer MULTIPLIES,
// q = cvt(x_f32 * scale), and the GEMM consumes scale_inv = 1 / scale, so that
// x ~= q * scale_inv.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_NUMERICS_SCALING_H
#define FP8_NUMERICS_SCALING_H

#include "FP8/Numerics/Formats.h"

#include <cstddef>
#include <cstdint>

namespace fp8::numerics {

/// max |x[i]| in f32. NaN-PROPAGATING: any NaN element gives NaN, so a NaN in
/// the data can never silently yield a finite, plausible-looking scale; the
/// scale rules below then map a NaN amax to scale 1 (current scaling) or keep
/// the previous scale (delayed scaling). n == 0 gives 0.
float amax(const float *x, size_t n);

//===----------------------------------------------------------------------===//
// Per-tensor (or per-row, per-tile) current scaling, TE Float8CurrentScaling.
//===----------------------------------------------------------------------===//

/// amax < epsilon -> epsilon; then amax inf/NaN/0 -> 1, else
/// maxFinite(format) / amax in f32 RN with an inf result replaced by FLT_MAX.
/// powerOfTwo keeps only sign and exponent bits (bits & 0xFF800000), i.e.
/// rounds the scale down to a power of two so no value can overflow.
/// amax is expected to be >= 0 (or NaN).
float currentScalingScale(float amax, Format format, float epsilon = 0.f,
                          bool powerOfTwo = false);

/// 1.0f / scale, f32 RN (what the GEMM consumes).
float scaleInverse(float scale);

//===----------------------------------------------------------------------===//
// Per-tensor delayed scaling, TE DelayedScaling.
//
// One training step, in this order: the cast of step t uses the scale derived
// from steps < t and records its amax into history[0] (recordAmax); after the
// step, amax = historyAmax(...), scale = delayedScalingScale(...), and then
// rollAmaxHistory(...) opens a fresh slot 0.
//===----------------------------------------------------------------------===//

enum class AmaxComputeAlgo : uint8_t { Max, MostRecent };

struct DelayedScalingParams {
  int64_t historyLength = 1024;
  AmaxComputeAlgo algo = AmaxComputeAlgo::Max;
  int margin = 0;
};

/// Max: fmaxf over history[0..len) (NaN slots are ignored; all-NaN -> NaN;
/// len == 0 -> 0). MostRecent: history[0] (0 when len == 0).
float historyAmax(const float *history, size_t len, AmaxComputeAlgo algo);

/// scaled_max = maxFinite(format) * 2^-margin (exact); scale = scaled_max /
/// amax (f32 RN) when amax is finite and > 0, otherwise previousScale; an inf
/// result becomes FLT_MAX.
float delayedScalingScale(float amax, float previousScale, Format format,
                          int margin);

/// Records a cast's amax into slot 0: history[0] = max(history[0], amax).
/// NaN is STICKY (unlike fmaxf): once a step saw a NaN its slot holds NaN, so
/// MostRecent keeps the previous scale for that step and Max skips it.
void recordAmax(float *history, float amax);

/// TE's roll: new[i] = old[i+1], new[len-1] = old[0], then new[0] = 0.
void rollAmaxHistory(float *history, size_t len);

//===----------------------------------------------------------------------===//
// Blockwise scaling, DeepSeek-V3 style (E4M3 only, 1x128 / 128x128 tiles).
//===----------------------------------------------------------------------===//

enum class BlockScaleKind : uint8_t {
  PowerOfTwo, ///< default (TE): scale_inv = 2^ceil(log2(amax/448)).
  Float32,    ///< DeepSeek inference / DeepGEMM option: scale_inv = amax/448.
};

struct BlockScale {
  float scale;    ///< multiplier used by the quantizer
  float scaleInv; ///< what the GEMM consumes
};

/// amax' = max(tileAmax, amaxClamp) (NaN stays NaN). TE uses clamp 0
/// (epsilon), DeepGEMM 1e-4.
/// PowerOfTwo: currentScalingScale(amax', E4M3, 0, /*powerOfTwo=*/true),
///   scaleInv = 1/scale (exact, scale is a power of two).
/// Float32: scaleInv = amax' / 448 (f32 RN), scale = 1.0f / scaleInv (RN;
///   inf -> FLT_MAX). amax' of 0, inf or NaN, or so small that amax'/448
///   underflows to 0, gives {1, 1}, the same choice as current scaling.
BlockScale blockwiseScale(float tileAmax, BlockScaleKind kind = BlockScaleKind::PowerOfTwo,
                          float amaxClamp = 0.f);

//===----------------------------------------------------------------------===//
// MXFP8: 1x32 blocks with a UE8M0 scale_inv.
//===----------------------------------------------------------------------===//

/// f32 RN of 1/448: the constant TE and DeepGEMM multiply amax by.
constexpr uint32_t kRcpE4M3MaxBits = 0x3B124925u;
/// f32 RN of 1/57344 = (1/7) * 2^-13 = 1.001001...b * 2^-16: same mantissa as
/// 1/448 (both are 1/7 times a power of two), biased exponent 111.
constexpr uint32_t kRcpE5M2MaxBits = 0x37924925u;

/// Biased UE8M0 code of the block's scale_inv.
/// RoundUp: encodeUe8m0RoundUp(f32(|amax| * rcp(maxFinite(elem)))).
/// Ocp: floor(log2|amax|) - maxExponent(elem) clamped to [-127, 127], + 127;
///   0 -> 0 (clamped to -127), inf -> 0xFE (treated as the largest finite
///   exponent, matching the RoundUp saturation), NaN -> 0xFF.
/// Example: amax 449, E4M3 -> 128 (RoundUp), 127 (Ocp).
uint8_t mxScaleExponent(float blockAmax, Format elem,
                        Ue8m0Rule rule = Ue8m0Rule::RoundUp);

/// The quantizer's multiplier for UE8M0 code e: 2^-(e-127), exact in f32
/// (2^127 for e = 0 down to the subnormal 2^-127 for e = 254); 0xFF -> NaN.
float mxQuantizeMultiplier(uint8_t e);

} // namespace fp8::numerics

#endif // FP8_NUMERICS_SCALING_H
