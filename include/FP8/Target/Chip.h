//===- Chip.h - What each supported GPU can run -----------------*- C++ -*-===//
//
// The one table of per-chip capabilities and hardware limits. The
// `fp8-attach-target` pass validates a chip name against it (parseChip, the
// one wording of an unknown chip) and records the chip and its limits on the
// module as `#fp8.target`; every pass then reads them back from the module
// (getTarget in FP8/Dialect/FP8/IR/FP8Target.h) to reject unsupported
// chip/recipe/layout combinations before any code generation, to size the
// kernels and to pick the PTX features.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_TARGET_CHIP_H
#define FP8_TARGET_CHIP_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace mlir::fp8 {

enum class Architecture { Hopper, Blackwell };

/// Widest MMA tile N of every supported chip: wgmma.mma_async (sm_90a) and
/// tcgen05.mma (sm_100a) take N <= 256.
inline constexpr int64_t kMaxMmaN = 256;

/// Elements along K that share one MX scale (`mx 1x32`; kind::mxf8f6f4's
/// scale_vec::1X, one UE8M0 per 32 K elements).
inline constexpr int64_t kMXScaleBlock = 32;
/// The MX scale-factor atom the block-scaled MMA reads: 128 MN rows x 4 K
/// blocks (128 K elements) of UE8M0, 512 bytes, byte (mn % 32) * 16 +
/// (mn / 32) * 4 + kb % 4; atoms tiled K-fastest (CUTLASS's
/// Sm1xxBlockScaledBasicChunk, the cuBLAS/TE "swizzled" layout). The
/// quantization kernels write it, the GEMMs read it.
inline constexpr int64_t kMXAtomRows = 128;
inline constexpr int64_t kMXAtomK = 128;
inline constexpr int64_t kMXAtomBytes = 512;

struct ChipInfo {
  llvm::StringRef name;        ///< as in `nvvm-attach-target chip=`
  Architecture architecture;
  llvm::StringRef ptxFeatures; ///< minimum PTX ISA feature string
  /// SMs of the chip's reference part, the default of `#fp8.target`'s
  /// `sm_count` (the wave model of the sm_90a tile heuristic plans for it).
  int64_t numMultiprocessors;
  /// Dynamic shared memory one CTA may use (the opt-in maximum of CUDA's
  /// "Technical Specifications per Compute Capability"), the upper bound and
  /// default of `#fp8.target`'s `max_shared_memory_per_block`.
  int64_t maxSharedMemoryPerBlock;
  /// wgmma.mma_async (PTX ISA 9.7.15); FP8 operands must be K-major.
  bool hasWgmma;
  /// tcgen05.mma with TMEM accumulators (PTX ISA 9.7.16).
  bool hasTcgen05;
  /// FP8 MMA operands may be MN-major (transpose bits in the instruction
  /// descriptor); Hopper's wgmma has none for 8-bit types.
  bool supportsMNMajorFP8;
  /// kind::mxf8f6f4.block_scale: UE8M0 scales applied by the tensor core.
  bool supportsBlockScaledMma;
};

/// What a module is compiled for: the chip's capabilities and the limits
/// its `#fp8.target` attribute gives (by default the chip's own).
struct TargetInfo {
  const ChipInfo &chip;
  /// SMs the GPU has (the waves of a persistent grid).
  int64_t numMultiprocessors;
  /// Dynamic shared memory one CTA may use, in bytes.
  int64_t maxSharedMemoryPerBlock;
  /// PTX ISA features for the NVVM target, e.g. "+ptx80".
  llvm::StringRef ptxFeatures;

  /// The chip with its own limits and minimum PTX features.
  static TargetInfo getDefault(const ChipInfo &chip) {
    return {chip, chip.numMultiprocessors, chip.maxSharedMemoryPerBlock,
            chip.ptxFeatures};
  }
};

/// The chips this project generates code for.
llvm::ArrayRef<ChipInfo> getSupportedChips();

/// The entry for `name`, or null.
const ChipInfo *lookupChip(llvm::StringRef name);

/// The entry for `name`, or the error every tool, API and pass reports for
/// a chip name it does not know: "unknown chip 'NAME': expected one of
/// sm_90a, sm_100a".
llvm::Expected<const ChipInfo &> parseChip(llvm::StringRef name);

/// "sm_90a, sm_100a", for diagnostics.
std::string describeSupportedChips();

} // namespace mlir::fp8

#endif // FP8_TARGET_CHIP_H
