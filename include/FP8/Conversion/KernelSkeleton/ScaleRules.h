//===- ScaleRules.h - The recipes' scale rules as kernel arithmetic -*- C++ -*-===//
//
// The numerics library's scale rules emitted as GPU f32 arithmetic with the
// same bits, and the f32 bit patterns that arithmetic compares against;
// shared by the quantize kernels and the GEMM epilogue.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_CONVERSION_KERNELSKELETON_SCALERULES_H
#define FP8_CONVERSION_KERNELSKELETON_SCALERULES_H

#include "FP8/Conversion/KernelSkeleton/KernelBuilder.h"

#include "mlir/IR/ImplicitLocOpBuilder.h"

#include <cstdint>
#include <utility>

namespace mlir::fp8 {

/// f32 bit patterns (IEEE 754 binary32).
inline constexpr int64_t kF32Inf = 0x7F800000;
inline constexpr int64_t kF32MantMask = 0x007FFFFF;
inline constexpr int64_t kF32SignAndExponentMask = 0xFF800000;
/// The quiet NaN the numerics library produces
/// (std::numeric_limits<float>::quiet_NaN()).
inline constexpr int64_t kF32QuietNaN = 0x7FC00000;
/// 2^-127, the f32 subnormal UE8M0 code 0 (and code 254's multiplier) is.
inline constexpr int64_t kF32TwoPowMinus127 = 0x00400000;

/// numerics' finiteOrMax of a scale that is not negative: +inf becomes
/// FLT_MAX (emitFiniteOrFltMax takes either sign, one `and` more).
Value emitFiniteOrMax(KernelBuilder &kb, Value scale);
/// numerics' finiteOrMax: +-inf becomes FLT_MAX.
Value emitFiniteOrFltMax(ImplicitLocOpBuilder &b, Value scale);
/// The bits of 2^(127 - code) for a biased exponent `code` (i32, 1..254):
/// the exact inverse of the power of two 2^(code - 127), without a division
/// (2^-127 is subnormal).
Value emitPowerOfTwoInverse(KernelBuilder &kb, Value code);

/// numerics::currentScalingScale(amax, <format of elementType>, epsilon,
/// pow2) and 1 / scale, emitted as f32 arithmetic that gives the same bits
/// for every amax (NaN, inf and subnormal values included, and negative
/// ones when `amaxMayBeNegative`: the `amax < epsilon` clamp then applies
/// for epsilon = 0 too; an amax of max |x| needs no such clamp).
std::pair<Value, Value> emitCurrentScalingScale(ImplicitLocOpBuilder &b,
                                                Value amax, Type elementType,
                                                float epsilon, bool pow2,
                                                bool amaxMayBeNegative = false);

} // namespace mlir::fp8

#endif // FP8_CONVERSION_KERNELSKELETON_SCALERULES_H
