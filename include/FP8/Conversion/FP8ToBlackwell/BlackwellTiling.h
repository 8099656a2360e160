//===- BlackwellTiling.h - Tiling of the sm_100a GEMM -----------*- C++ -*-===//
//
// The sm_100a GEMM's problem (what the kernel takes of an fp8.scaled_matmul)
// and tiling: the heuristic, the checks of a configured tiling against
// tcgen05, TMA and Tensor Memory, and what the tiling makes of the kernel's
// name, shared memory and metadata.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_CONVERSION_FP8TOBLACKWELL_BLACKWELLTILING_H
#define FP8_CONVERSION_FP8TOBLACKWELL_BLACKWELLTILING_H

#include "FP8/Conversion/FP8ToBlackwell/TCGen05Encodings.h"
#include "FP8/Conversion/KernelSkeleton/GemmKernel.h"

namespace mlir::fp8::blackwell {

/// TMEM accumulators the MMA warp and the epilogue alternate between (the
/// epilogue of one tile overlaps the mainloop of the next).
inline constexpr int64_t kAccumulatorStages = 2;

/// The GEMM in the kernel's terms: the target-neutral problem plus the
/// operand majors (tcgen05 reads FP8 operands either way).
struct BlackwellGemm {
  GemmProblem problem;
  OperandMajor aMajor = OperandMajor::K;
  OperandMajor bMajor = OperandMajor::K;
};

/// Reads the GEMM off `op`, or reports what the sm_100a kernel does not take
/// (yet): non-power-of-two blockwise scales (f32 scales without a
/// `#fp8.blockwise<scales = pow2>` recipe), MX scales on one operand only,
/// promoted accumulation with per-tensor/row-wise scales. MXFP8 (`mx 1x32` on
/// both operands, UE8M0 scales in the 128x4 atom layout, see
/// buildGemmKernelMetadata) runs the block-scaled MMA; it takes fast or
/// promoted accumulation alike (the scales are applied inside the MMA).
/// Blockwise power-of-two scales run the same kernel
/// (GemmProblem::blockwiseAsMX): the host converts them to the atom layout
/// (emulation::blockwiseScalesToMxAtoms).
FailureOr<BlackwellGemm> getBlackwellGemm(ScaledMatmulOp op);
/// The same for a grouped GEMM (K-major operands; per-tensor, row-wise,
/// power-of-two blockwise on the block-scaled MMA, MXFP8).
FailureOr<BlackwellGemm> getBlackwellGemm(GroupedScaledMatmulOp op);

/// The heuristic, or `config` when the IR sets one (checked; failures are
/// reported on `op`):
/// - tile M 128 (cta_group::1 M = 128: TMEM lane = tile row), tile K 128;
/// - tile N: the N in {256, 224, 192, 160, 128} that pads N least (ties to
///   the larger); only whole 128-byte TMA store boxes with a staged
///   epilogue, only multiples of 128 for an MN-major B (whole swizzle
///   atoms along N), only multiples of 128 for MXFP8 (whole scale-factor
///   atoms: 128 or 256);
/// - as many stages as fit in the target's shared memory per block (227
///   KiB on sm_100a) after the staging buffer, at most 8;
/// - no cluster, raster groups of 8 tile rows.
FailureOr<GemmTiling> selectGemmTiling(Operation *op,
                                       const BlackwellGemm &gemm,
                                       GemmConfigAttr config,
                                       const TargetInfo &target);

/// Dynamic shared memory of the kernel for `tiling` (stages, with MX scale
/// atoms, staging buffer, barriers).
int64_t getDynamicSharedMemoryBytes(const BlackwellGemm &gemm,
                                    const GemmTiling &tiling);

/// The kernel name: getGemmKernelName plus `_amn`/`_bmn` for MN-major
/// operands.
std::string getKernelName(const BlackwellGemm &gemm, const GemmTiling &tiling);

/// The kernel's metadata: buildGemmKernelMetadata's with this kernel's CTA
/// (384 threads; a CTA pair's CTA takes half the tile's rows), shared
/// memory, and MN-major operands in their stored order.
md::KernelMetadata buildKernelMetadata(StringRef name, const ChipInfo &chip,
                                       const BlackwellGemm &gemm,
                                       const GemmTiling &tiling);

} // namespace mlir::fp8::blackwell

#endif // FP8_CONVERSION_FP8TOBLACKWELL_BLACKWELLTILING_H
