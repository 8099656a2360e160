//===- WGMMA.h - wgmma.mma_async emission for sm_90a ------------*- C++ -*-===//
//
// The Hopper MMA: shared-memory matrix descriptors and warpgroup-level
// wgmma.mma_async with FP8 operands. All descriptor bitfields are built
// here, from the PTX ISA tables.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_CONVERSION_FP8TOHOPPER_WGMMA_H
#define FP8_CONVERSION_FP8TOHOPPER_WGMMA_H

#include "FP8/Conversion/KernelSkeleton/KernelBuilder.h"

#include <cstdint>

namespace mlir::fp8::hopper {

/// Shared-memory matrix descriptor of wgmma (PTX ISA 9.7.15.5.1, "Matrix
/// Descriptor Format"): 64 bits.
namespace wgmma_descriptor {
/// Bits [0, 14): matrix start address, (addr & 0x3FFFF) >> 4.
inline constexpr unsigned kStartAddressShift = 0;
inline constexpr uint64_t kStartAddressMask = 0x3FFF;
/// Bits [16, 30): leading dimension byte offset >> 4.
inline constexpr unsigned kLeadingByteOffsetShift = 16;
/// Bits [32, 46): stride dimension byte offset >> 4.
inline constexpr unsigned kStrideByteOffsetShift = 32;
/// Bits [49, 52): base offset (0 for 1024-byte aligned swizzle atoms).
inline constexpr unsigned kBaseOffsetShift = 49;
/// Bits [62, 64): swizzle mode.
inline constexpr unsigned kLayoutTypeShift = 62;
/// Byte offsets are encoded in units of 16 bytes.
inline constexpr unsigned kByteOffsetEncodingShift = 4;

enum class LayoutType : uint64_t {
  Interleave = 0,
  Swizzle128B = 1,
  Swizzle64B = 2,
  Swizzle32B = 3,
};
} // namespace wgmma_descriptor

/// K extent of one FP8 wgmma (m64nNk32).
inline constexpr int64_t kWgmmaK = 32;
/// Rows of one wgmma (one warpgroup).
inline constexpr int64_t kWgmmaM = 64;

/// Everything of the descriptor of a K-major, 128-byte swizzled tile but
/// its start address: core matrices of 8 rows x 128 bytes stacked 1024
/// bytes apart (SBO), the leading byte offset unused by swizzled K-major
/// layouts (1 by convention), base offset 0.
uint64_t getKMajorSwizzle128BDescriptorBits();

/// The low 32 bits of the descriptor of the K-major, 128-byte swizzled tile
/// at 32-bit shared address `sharedAddress`: its start address and leading
/// byte offset fields. A tile `bytes` further on (a multiple of 16; along K
/// inside the 128-byte swizzle span, where the hardware applies the swizzle
/// to the sum, or whole stages away) has the low word plus `bytes >> 4`:
/// shared addresses stay below 256 KiB, so the 14-bit start address field
/// never carries into the next one.
Value emitKMajorSwizzle128BDescriptorLow(KernelBuilder &kb,
                                         Value sharedAddress);

/// What a tile `bytes` further on adds to the descriptor low word.
inline constexpr int64_t getDescriptorLowOffset(int64_t bytes) {
  return bytes >> wgmma_descriptor::kByteOffsetEncodingShift;
}

/// The descriptor whose low word is `low` (the upper word is the constant
/// part of getKMajorSwizzle128BDescriptorBits).
Value emitKMajorSwizzle128BDescriptor(KernelBuilder &kb, Value low);

/// `!llvm.struct<(f32 x n/2)>`: a thread's share of an m64nN f32
/// accumulator.
Type getAccumulatorType(MLIRContext *ctx, int64_t n);

/// Issues wgmma.mma_async m64n`n`k32 with FP8 operands from shared memory
/// (both K-major) into `accumulator`. `accumulate` false ignores the
/// incoming accumulator (scale-d = 0).
Value emitWgmma(KernelBuilder &kb, Value accumulator, Value descriptorA,
                Value descriptorB, int64_t n, Type aElementType,
                Type bElementType, bool accumulate);

} // namespace mlir::fp8::hopper

#endif // FP8_CONVERSION_FP8TOHOPPER_WGMMA_H
