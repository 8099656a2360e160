//===- QuantizeKernelsCommon.h - Shared by the quantize kernels -*- C++ -*-===//
//
// What the quantization, dequantization and scale kernels of this folder
// share: the f32 and UE8M0 bit patterns their integer arithmetic compares
// against, and the thread layout of a 128x128 tile (QuantizeKernel.h).
//
//===----------------------------------------------------------------------===//

#ifndef FP8_LIB_CONVERSION_QUANTIZEKERNELS_QUANTIZEKERNELSCOMMON_H
#define FP8_LIB_CONVERSION_QUANTIZEKERNELS_QUANTIZEKERNELSCOMMON_H

#include "FP8/Conversion/QuantizeKernels/QuantizeKernel.h"

#include <cstdint>

namespace mlir::fp8::detail {

/// The f32 bit patterns: FP8/Conversion/KernelSkeleton/ScaleRules.h.
/// UE8M0 codes (OCP MX v1.0): code e is 2^(e - 127); 0xFF is NaN, 0xFE the
/// largest finite.
inline constexpr int64_t kUe8m0NaN = 0xFF;
inline constexpr int64_t kUe8m0MaxFinite = 0xFE;

/// Thread layout of a 128x128 tile: thread t holds 8 consecutive columns
/// (chunk t % 16 of 16) of the 8 rows t / 16 + 16 i, i < 8.
inline constexpr int64_t kVector = 8;
inline constexpr int64_t kChunksPerRow = kQuantizeTileCols / kVector;
inline constexpr int64_t kRowsPerThread =
    kQuantizeTileRows * kChunksPerRow / kQuantizeThreads;
inline constexpr int64_t kRowStep = kQuantizeThreads / kChunksPerRow;
static_assert(kRowsPerThread == kVector, "a thread holds 8 x 8 values");

} // namespace mlir::fp8::detail

#endif // FP8_LIB_CONVERSION_QUANTIZEKERNELS_QUANTIZEKERNELSCOMMON_H
