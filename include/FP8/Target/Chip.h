//===- Chip.h - What each supported GPU can run -----------------*- C++ -*-===//
//
// The one table of per-chip capabilities that target-neutral passes query
// (to reject unsupported chip/recipe/layout combinations with a diagnostic
// before any code generation) and that the target lowerings use to pick PTX
// features.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_TARGET_CHIP_H
#define FP8_TARGET_CHIP_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace mlir::fp8 {

enum class Architecture { Hopper, Blackwell };

struct ChipInfo {
  llvm::StringRef name;        ///< as in `nvvm-attach-target chip=`
  Architecture architecture;
  llvm::StringRef ptxFeatures; ///< minimum PTX ISA feature string
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

/// The chips this project generates code for.
llvm::ArrayRef<ChipInfo> getSupportedChips();

/// The entry for `name`, or null.
const ChipInfo *lookupChip(llvm::StringRef name);

/// "sm_90a, sm_100a", for diagnostics.
std::string describeSupportedChips();

} // namespace mlir::fp8

#endif // FP8_TARGET_CHIP_H
