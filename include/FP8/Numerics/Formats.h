//===- Formats.h - FP8/UE8M0/bf16/f16 element formats -----------*- C++ -*-===//
//
// The single definition of how an f32 becomes an fp8 code and back, as the
// recipe kernels do it on the GPU (docs/design.md, "Numerics"). Every
// conversion is integer bit manipulation so it is exact, portable and
// independent of the host's floating-point environment.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_NUMERICS_FORMATS_H
#define FP8_NUMERICS_FORMATS_H

#include <cstdint>
#include <cstring>

namespace fp8::numerics {

/// The fp8 element formats. E4M3 is OCP/MLIR `f8E4M3FN` (no inf, NaN =
/// S.1111.111); E5M2 is `f8E5M2` (IEEE-like: inf and NaN).
enum class Format : uint8_t { E4M3, E5M2 };

/// Largest finite magnitude: 448 (E4M3, code 0x7E), 57344 (E5M2, code 0x7B).
float maxFinite(Format format);

/// Unbiased exponent of maxFinite (8 for E4M3, 15 for E5M2): the `emax_elem`
/// of the OCP MX spec.
int maxExponent(Format format);

/// Printable name ("e4m3" / "e5m2").
const char *formatName(Format format);

/// f32 -> fp8 exactly as PTX `cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32`:
/// round to nearest, ties to even, with subnormals; finite overflow and +-inf
/// saturate to +-maxFinite; |x| <= half the smallest subnormal gives +-0;
/// NaN gives the NaN code 0x7F with the input's sign (for E5M2 0x7F is one of
/// the NaN codes 0x7D..0x7F; we always produce 0x7F/0xFF, the canonical
/// all-ones pattern, so the result is deterministic).
uint8_t encodeSatFinite(Format format, float x);

/// fp8 code -> f32 (exact: every fp8 value is an f32). E4M3 0x7F/0xFF -> NaN;
/// E5M2 0x7C/0xFC -> +-inf, 0x7D..0x7F (and negatives) -> NaN.
float decode(Format format, uint8_t code);

//===----------------------------------------------------------------------===//
// UE8M0 (`f8E8M0FNU`): an unsigned power of two 2^(e-127), 0xFF = NaN.
//===----------------------------------------------------------------------===//

/// How an MX block's UE8M0 scale exponent is derived from the block amax.
enum class Ue8m0Rule : uint8_t {
  RoundUp, ///< default (TE, cuBLAS, DeepGEMM): ceil(log2(amax / elem_max)).
  Ocp,     ///< OCP MX v1.0: floor(log2(amax)) - emax_elem (may saturate).
};

/// Software form of PTX `cvt.rp.satfinite.ue8m0x2.f32`: round |x| toward +inf
/// to a power of two 2^(e-127), e in [0, 254]. NaN -> 0xFF, +-inf -> 0xFE,
/// 0 -> 0x00 (2^-127 is the smallest representable value and 0 rounds up to
/// it). The f32 subnormals (0, 2^-127] give 0 and (2^-127, 2^-126) give 1.
/// Negative finite inputs use |x|: scales come from amax >= 0, and what the
/// hardware does with a negative input is not relied on anywhere.
uint8_t encodeUe8m0RoundUp(float x);

/// 2^(e-127) as f32 (exact; e = 0 is the f32 subnormal 2^-127); 0xFF -> NaN.
float decodeUe8m0(uint8_t e);

//===----------------------------------------------------------------------===//
// 16-bit float helpers (GEMM inputs/outputs).
//===----------------------------------------------------------------------===//

float bf16ToFloat(uint16_t bits);
/// Round to nearest even. NaN stays NaN (quiet bit forced, sign and the top
/// payload bits kept); overflow rounds to +-inf as IEEE RNE does.
uint16_t floatToBf16(float x);

float f16ToFloat(uint16_t bits);
/// IEEE binary16, round to nearest even, with subnormals; |x| >= 65520 -> inf.
/// NaN stays NaN (quiet bit forced, sign and top payload bits kept).
uint16_t floatToF16(float x);

//===----------------------------------------------------------------------===//
// Bit casts (C++17 has no std::bit_cast).
//===----------------------------------------------------------------------===//

inline uint32_t floatBits(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return bits;
}

inline float floatFromBits(uint32_t bits) {
  float x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}

} // namespace fp8::numerics

#endif // FP8_NUMERICS_FORMATS_H
