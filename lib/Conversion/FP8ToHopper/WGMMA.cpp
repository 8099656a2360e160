//===- WGMMA.cpp - wgmma.mma_async emission for sm_90a --------------------===//

#include "FP8/Conversion/FP8ToHopper/WGMMA.h"

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::hopper;

/// Stride between 8-row core matrices of a 128-byte swizzled tile.
static constexpr uint64_t kSwizzle128BCoreMatrixStrideBytes =
    8 * kSwizzle128BRowBytes;

uint64_t hopper::getKMajorSwizzle128BDescriptorBits() {
  using namespace wgmma_descriptor;
  uint64_t leading = 1; // unused for swizzled K-major layouts
  uint64_t stride = kSwizzle128BCoreMatrixStrideBytes >> kByteOffsetEncodingShift;
  return (leading << kLeadingByteOffsetShift) |
         (stride << kStrideByteOffsetShift) | (uint64_t(0) << kBaseOffsetShift) |
         (static_cast<uint64_t>(LayoutType::Swizzle128B) << kLayoutTypeShift);
}

Value hopper::emitKMajorSwizzle128BDescriptorLow(KernelBuilder &kb,
                                                 Value sharedAddress) {
  using namespace wgmma_descriptor;
  ImplicitLocOpBuilder &b = kb.builder();
  Value field = arith::AndIOp::create(
      b, arith::ShRUIOp::create(b, sharedAddress,
                                kb.i32(kByteOffsetEncodingShift)),
      kb.i32(kStartAddressMask));
  return arith::OrIOp::create(
      b, field,
      kb.i32(static_cast<int32_t>(getKMajorSwizzle128BDescriptorBits() &
                                  0xFFFFFFFFu)));
}

Value hopper::emitKMajorSwizzle128BDescriptor(KernelBuilder &kb, Value low) {
  ImplicitLocOpBuilder &b = kb.builder();
  Value high = kb.i64(static_cast<int64_t>(getKMajorSwizzle128BDescriptorBits() &
                                           ~uint64_t(0xFFFFFFFFu)));
  return arith::OrIOp::create(
      b, arith::ExtUIOp::create(b, b.getI64Type(), low), high);
}

Type hopper::getAccumulatorType(MLIRContext *ctx, int64_t n) {
  SmallVector<Type> fields(n / 2, Float32Type::get(ctx));
  return LLVM::LLVMStructType::getLiteral(ctx, fields);
}

static NVVM::WGMMATypes getWgmmaType(Type fp8Type) {
  return isa<Float8E5M2Type>(fp8Type) ? NVVM::WGMMATypes::e5m2
                                      : NVVM::WGMMATypes::e4m3;
}

Value hopper::emitWgmma(KernelBuilder &kb, Value accumulator, Value descriptorA,
                        Value descriptorB, int64_t n, Type aElementType,
                        Type bElementType, bool accumulate) {
  ImplicitLocOpBuilder &b = kb.builder();
  MLIRContext *ctx = b.getContext();
  auto shape = NVVM::MMAShapeAttr::get(ctx, kWgmmaM, n, kWgmmaK);
  auto type = [&](NVVM::WGMMATypes t) { return NVVM::WGMMATypesAttr::get(ctx, t); };
  // FP8 wgmma reads both operands K-major: A "row", B "col" (PTX ISA
  // 9.7.15.5.1: no transpose for 8-bit types).
  return NVVM::WgmmaMmaAsyncOp::create(
      b, accumulator.getType(), accumulator, descriptorA, descriptorB, shape,
      type(getWgmmaType(aElementType)), type(getWgmmaType(bElementType)),
      type(NVVM::WGMMATypes::f32),
      NVVM::WGMMAScaleOutAttr::get(ctx, accumulate ? NVVM::WGMMAScaleOut::one
                                                   : NVVM::WGMMAScaleOut::zero),
      NVVM::WGMMAScaleInAttr::get(ctx, NVVM::WGMMAScaleIn::one),
      NVVM::WGMMAScaleInAttr::get(ctx, NVVM::WGMMAScaleIn::one),
      NVVM::MMALayoutAttr::get(ctx, NVVM::MMALayout::row),
      NVVM::MMALayoutAttr::get(ctx, NVVM::MMALayout::col),
      /*satfinite=*/NVVM::MMAIntOverflowAttr());
}
