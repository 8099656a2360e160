//===- GemmOutputQuantization.cpp - FP8 outputs of the GEMMs --------------===//

#include "FP8/Conversion/KernelSkeleton/GemmOutputQuantization.h"
#include "FP8/Conversion/KernelSkeleton/ScaleRules.h"
#include "FP8/Numerics/Formats.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;
using namespace mlir::fp8;

namespace num = ::fp8::numerics;

/// Whether an FP8 result of `recipe` at `g` (with a given scale when
/// `givenScale`) takes scales no single output tile can compute.
bool mlir::fp8::needsTwoPhases(RecipeAttrInterface recipe, GranularityAttr g,
                               bool givenScale) {
  if (g.isTensor() && givenScale)
    return false;
  bool blockwise = isa<BlockwiseScalingAttr>(recipe);
  return !(blockwise && g.isTile() &&
           g.getTile() == TileShape{1, kBlockwiseScaleBlock});
}

bool mlir::fp8::needsTwoPhaseFP8Result(ScaledMatmulOp op) {
  return needsTwoPhases(op.getResultRecipeAttr(), op.getResultGranularityAttr(),
                        static_cast<bool>(op.getResultScale()));
}

/// The epilogue's quantization of an FP8 D of `recipe` at `g`: a given
/// per-tensor scale, or 1x128 blocks along N.
void mlir::fp8::setEpilogueQuantization(GemmProblem &p,
                                         RecipeAttrInterface recipe,
                                         GranularityAttr g) {
  if (g.isTensor()) {
    p.outQuantization = OutputQuantization::Tensor;
    return;
  }
  auto blockwise = cast<BlockwiseScalingAttr>(recipe);
  p.outQuantization = OutputQuantization::Block1x128;
  p.outScalePow2 = blockwise.getScales() == BlockScaleKind::PowerOfTwo;
  p.outAmaxClamp = blockwise.getAmaxClamp().convertToFloat();
}

OutputBlockScale mlir::fp8::emitOutputBlockScale(KernelBuilder &kb,
                                                 const GemmProblem &p,
                                                 Value amaxBits) {
  ImplicitLocOpBuilder &b = kb.builder();
  Value amax = arith::BitcastOp::create(b, b.getF32Type(), amaxBits);
  if (p.outAmaxClamp != 0.f)
    amax = arith::SelectOp::create(
        b,
        arith::CmpFOp::create(b, arith::CmpFPredicate::OLT, amax,
                              kb.f32(p.outAmaxClamp)),
        kb.f32(p.outAmaxClamp), amax);
  if (p.outScalePow2) {
    auto [scale, scaleInv] =
        emitCurrentScalingScale(b, amax, p.outElementType, /*epsilon=*/0.f,
                                /*pow2=*/true);
    return {scale, scaleInv};
  }
  // DeepGEMM's f32 rule: scale_inv = amax / 448 (E4M3's max whatever the
  // element type), scale = 1 / scale_inv; 1 and 1 where amax is 0, not
  // finite, or scale_inv underflows.
  Value one = kb.f32(1.f);
  auto bitsOf = [&](Value f) {
    return arith::BitcastOp::create(b, b.getI32Type(), f).getResult();
  };
  Value scaleInv = arith::DivFOp::create(
      b, amax, kb.f32(num::maxFinite(num::Format::E4M3)));
  Value amaxClampedBits = bitsOf(amax);
  auto nonzero = [&](Value bits) {
    return arith::CmpIOp::create(b, arith::CmpIPredicate::ne, bits, kb.i32(0))
        .getResult();
  };
  Value usable = kb.andi(
      kb.andi(nonzero(amaxClampedBits),
              kb.ult(amaxClampedBits, kb.i32(0x7f800000))),
      nonzero(bitsOf(scaleInv)));
  Value scale = emitFiniteOrFltMax(b, arith::DivFOp::create(b, one, scaleInv));
  return {arith::SelectOp::create(b, usable, scale, one),
          arith::SelectOp::create(b, usable, scaleInv, one)};
}

Value mlir::fp8::emitAbsBitsMax(KernelBuilder &kb, ArrayRef<Value> xs,
                                ArrayRef<Value> inBounds) {
  assert(!xs.empty() && (inBounds.empty() || inBounds.size() == xs.size()));
  ImplicitLocOpBuilder &b = kb.builder();
  // PTX max.NaN.xorsign.abs.f32: max(|u|, |v|), the sign the XOR of theirs
  // (dropped at the end), NaN if either is; one instruction a pair where
  // the bits' maximum takes two (the mask and the integer max). Through
  // its NVVM intrinsic: the NVVM dialect has no op for it. For numbers the
  // magnitudes order as their bits, and any NaN gives a NaN amax, which
  // takes the NaN scale rule whatever its payload.
  auto absMax = [&](Value u, Value v) {
    return LLVM::CallIntrinsicOp::create(
               b, b.getF32Type(),
               b.getStringAttr("llvm.nvvm.fmax.nan.xorsign.abs.f"),
               ValueRange{u, v})
        .getResult(0);
  };
  SmallVector<Value> level;
  for (auto [i, x] : llvm::enumerate(xs))
    level.push_back(inBounds.empty() ? x
                                     : arith::SelectOp::create(
                                           b, inBounds[i], x, kb.f32(0.f)));
  while (level.size() > 1) {
    SmallVector<Value> next;
    for (size_t i = 0; i + 1 < level.size(); i += 2)
      next.push_back(absMax(level[i], level[i + 1]));
    if (level.size() % 2)
      next.push_back(level.back());
    level = std::move(next);
  }
  return kb.absF32Bits(level.front());
}

Value mlir::fp8::emitLaneBitsMax(KernelBuilder &kb, Value bits,
                                 ArrayRef<int64_t> offsets) {
  ImplicitLocOpBuilder &b = kb.builder();
  for (int64_t offset : offsets) {
    Value other = NVVM::ShflOp::create(
        b, b.getI32Type(), kb.i32(-1), bits, kb.i32(offset), kb.i32(31),
        NVVM::ShflKind::bfly, /*return_value_and_is_valid=*/nullptr);
    bits = arith::MaxUIOp::create(b, bits, other);
  }
  return bits;
}

Value mlir::fp8::emitFP8Pair(KernelBuilder &kb, const GemmProblem &p, Value x0,
                             Value x1, Value multiplier) {
  ImplicitLocOpBuilder &b = kb.builder();
  // cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32 d, a, b puts a in d[15:8]: x1
  // goes in `a` so that the bytes are in memory order.
  return NVVM::ConvertF32x2ToF8x2Op::create(
      b, b.getI16Type(), arith::MulFOp::create(b, x1, multiplier),
      arith::MulFOp::create(b, x0, multiplier), NVVM::FPRoundingMode::RN,
      NVVM::SaturationMode::SATFINITE, /*relu=*/false, p.outElementType);
}

Value mlir::fp8::emitResultScaleLoad(KernelBuilder &kb,
                                     const GemmKernelParams &params) {
  return kb.loadF32(params.resultScale, kb.i32(0));
}

void mlir::fp8::emitResultScaleInvStore(KernelBuilder &kb,
                                        const GemmKernelParams &params) {
  ImplicitLocOpBuilder &b = kb.builder();
  Value scaleInv = arith::DivFOp::create(b, kb.f32(1.f),
                                         emitResultScaleLoad(kb, params));
  kb.store(scaleInv, kb.globalElementPtr(params.resultScaleInv, kb.i32(0), 4));
}
