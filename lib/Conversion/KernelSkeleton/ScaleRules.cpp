//===- ScaleRules.cpp - The recipes' scale rules as kernel arithmetic -----===//
//
// The numerics library's scale rules (lib/Numerics) emitted as GPU f32
// arithmetic that gives the same bits: RN f32 divisions, no FMA
// contraction, no flush-to-zero. Shared by the quantize kernels
// (lib/Conversion/QuantizeKernels) and the GEMM epilogue that quantizes an
// FP8 result.
//
//===----------------------------------------------------------------------===//

#include "FP8/Conversion/KernelSkeleton/ScaleRules.h"
#include "FP8/Numerics/Formats.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <cassert>
#include <cfloat>

using namespace mlir;
using namespace mlir::fp8;

namespace num = ::fp8::numerics;

Value mlir::fp8::emitFiniteOrMax(KernelBuilder &kb, Value scale) {
  ImplicitLocOpBuilder &b = kb.builder();
  return arith::SelectOp::create(
      b,
      kb.eq(arith::BitcastOp::create(b, b.getI32Type(), scale),
            kb.i32(kF32Inf)),
      kb.f32(FLT_MAX), scale);
}

Value mlir::fp8::emitPowerOfTwoInverse(KernelBuilder &kb, Value code) {
  ImplicitLocOpBuilder &b = kb.builder();
  Value biased = kb.sub(kb.i32(254), code);
  return arith::SelectOp::create(b, kb.eq(biased, kb.i32(0)),
                                 kb.i32(kF32TwoPowMinus127),
                                 arith::ShLIOp::create(b, biased, kb.i32(23)));
}

Value mlir::fp8::emitFiniteOrFltMax(ImplicitLocOpBuilder &b, Value scale) {
  KernelBuilder kb(b);
  return arith::SelectOp::create(
      b, kb.eq(kb.absF32Bits(scale), kb.i32(kF32Inf)), kb.f32(FLT_MAX), scale);
}

std::pair<Value, Value>
mlir::fp8::emitCurrentScalingScale(ImplicitLocOpBuilder &b, Value amax,
                                   Type elementType, float epsilon, bool pow2,
                                   bool amaxMayBeNegative) {
  assert(epsilon >= 0.f && "the recipe's epsilon is verified non-negative");
  KernelBuilder kb(b);
  num::Format format =
      isa<Float8E5M2Type>(elementType) ? num::Format::E5M2 : num::Format::E4M3;
  auto bits = [&](Value f) {
    return arith::BitcastOp::create(b, b.getI32Type(), f);
  };
  auto fromBits = [&](Value i) {
    return arith::BitcastOp::create(b, b.getF32Type(), i);
  };
  if (epsilon != 0.f || amaxMayBeNegative) // amax < epsilon -> epsilon
    amax = arith::SelectOp::create(
        b,
        arith::CmpFOp::create(b, arith::CmpFPredicate::OLT, amax,
                              kb.f32(epsilon)),
        kb.f32(epsilon), amax);
  // Finite and nonzero. amax is now >= +0, -0 or NaN (a negative number is
  // below epsilon >= 0), so its bits are nonzero and below inf's exactly
  // then, and the scale maxFinite / amax is positive.
  Value aBits = bits(amax);
  Value usable = kb.andi(
      arith::CmpIOp::create(b, arith::CmpIPredicate::ne, aBits, kb.i32(0)),
      kb.ult(aBits, kb.i32(kF32Inf)));
  Value one = kb.f32(1.f);
  Value scale = arith::SelectOp::create(
      b, usable,
      emitFiniteOrMax(
          kb, arith::DivFOp::create(b, kb.f32(num::maxFinite(format)), amax)),
      one);
  if (!pow2)
    return {scale, arith::DivFOp::create(b, one, scale)};
  // maxFinite / amax >= maxFinite / FLT_MAX is normal, so the power of two
  // is 2^(e - 127) with 1 <= e <= 254, and its inverse is exact.
  Value exponentBits = kb.andi(bits(scale), kb.i32(kF32SignAndExponentMask));
  return {fromBits(exponentBits),
          fromBits(emitPowerOfTwoInverse(
              kb, arith::ShRUIOp::create(b, exponentBits, kb.i32(23))))};
}
