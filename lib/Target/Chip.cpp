//===- Chip.cpp - What each supported GPU can run -------------------------===//

#include "FP8/Target/Chip.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir::fp8;

/// Dynamic shared memory per block of compute capabilities 9.0 and 10.0:
/// 227 KiB opt-in (of the 228 KiB of an SM; CUDA C++ Programming Guide,
/// "Technical Specifications per Compute Capability").
static constexpr int64_t kSharedMemoryPerBlockCC90 = 227 * 1024;

static const ChipInfo kChips[] = {
    // H100/H200/H800. `a`: wgmma and setmaxnreg are arch-specific features;
    // they need PTX ISA 8.0. 132 SMs: the SXM parts (H100 and H200 SXM5,
    // H800); an H100 PCIe has 114 (`#fp8.target<sm_count = 114, ...>`).
    {"sm_90a", Architecture::Hopper, "+ptx80", /*numMultiprocessors=*/132,
     kSharedMemoryPerBlockCC90, /*hasWgmma=*/true,
     /*hasTcgen05=*/false, /*supportsMNMajorFP8=*/false,
     /*supportsBlockScaledMma=*/false},
    // B200/GB200. The block-scaled tcgen05 MMA with `.block32` needs PTX ISA
    // 8.8 (LLVM fails instruction selection below it). 148 SMs: a B200's two
    // dies with 74 enabled SMs each.
    {"sm_100a", Architecture::Blackwell, "+ptx88", /*numMultiprocessors=*/148,
     kSharedMemoryPerBlockCC90, /*hasWgmma=*/false,
     /*hasTcgen05=*/true, /*supportsMNMajorFP8=*/true,
     /*supportsBlockScaledMma=*/true},
};

llvm::ArrayRef<ChipInfo> mlir::fp8::getSupportedChips() { return kChips; }

const ChipInfo *mlir::fp8::lookupChip(llvm::StringRef name) {
  const auto *it = llvm::find_if(
      kChips, [&](const ChipInfo &chip) { return chip.name == name; });
  return it == std::end(kChips) ? nullptr : it;
}

llvm::Expected<const ChipInfo &> mlir::fp8::parseChip(llvm::StringRef name) {
  if (const ChipInfo *chip = lookupChip(name))
    return *chip;
  return llvm::createStringError("unknown chip '" + name +
                                 "': expected one of " +
                                 describeSupportedChips());
}

std::string mlir::fp8::describeSupportedChips() {
  std::string s;
  llvm::raw_string_ostream os(s);
  llvm::interleaveComma(kChips, os,
                        [&](const ChipInfo &chip) { os << chip.name; });
  return s;
}
