//===- Chip.cpp - What each supported GPU can run -------------------------===//

#include "FP8/Target/Chip.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir::fp8;

static const ChipInfo kChips[] = {
    // H100/H200/H800. `a`: wgmma and setmaxnreg are arch-specific features;
    // they need PTX ISA 8.0.
    {"sm_90a", Architecture::Hopper, "+ptx80", /*hasWgmma=*/true,
     /*hasTcgen05=*/false, /*supportsMNMajorFP8=*/false,
     /*supportsBlockScaledMma=*/false},
    // B200/GB200. The block-scaled tcgen05 MMA with `.block32` needs PTX ISA
    // 8.8 (LLVM fails instruction selection below it).
    {"sm_100a", Architecture::Blackwell, "+ptx88", /*hasWgmma=*/false,
     /*hasTcgen05=*/true, /*supportsMNMajorFP8=*/true,
     /*supportsBlockScaledMma=*/true},
};

llvm::ArrayRef<ChipInfo> mlir::fp8::getSupportedChips() { return kChips; }

const ChipInfo *mlir::fp8::lookupChip(llvm::StringRef name) {
  const auto *it = llvm::find_if(
      kChips, [&](const ChipInfo &chip) { return chip.name == name; });
  return it == std::end(kChips) ? nullptr : it;
}

std::string mlir::fp8::describeSupportedChips() {
  std::string s;
  llvm::raw_string_ostream os(s);
  llvm::interleaveComma(kChips, os,
                        [&](const ChipInfo &chip) { os << chip.name; });
  return s;
}
