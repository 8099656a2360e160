//===- GemmKernel.h - Target-neutral description of a GEMM kernel -*- C++ -*-===//
//
// What every GEMM lowering shares: the problem an fp8.scaled_matmul poses,
// the tiling chosen for it, the kernel's ABI (parameters, operands, TMA
// tensor maps) and the metadata dictionary the host runtime reads.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_CONVERSION_KERNELSKELETON_GEMMKERNEL_H
#define FP8_CONVERSION_KERNELSKELETON_GEMMKERNEL_H

#include "FP8/Conversion/KernelSkeleton/KernelMetadata.h"
#include "FP8/Dialect/FP8/IR/FP8Contract.h"
#include "FP8/Dialect/FP8/IR/FP8Ops.h"
#include "FP8/Target/Chip.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/Support/MathExtras.h"

#include <string>

namespace mlir::fp8 {

/// 1x128 scales are stored MN-major, f32 [ceil(K/128), roundup(MN, 4)]:
/// each K block's scales contiguous and 16-byte aligned (TMA; DeepGEMM's
/// layout). The quantization kernels write it and the GEMMs read it, for
/// every MN; the IR's scale tensors keep the logical [MN, ceil(K/128)].
inline constexpr int64_t kMNMajorScaleAlignment = 4;

/// How the scales of one operand enter the GEMM.
enum class ScaleMode {
  Tensor,   ///< one scalar, applied in the epilogue
  Row,      ///< one per output row (A) or column (B), in the epilogue
  /// per 1x128 (A) / 128x128 or 1x128 (B) block, promoted per K block
  /// (GemmProblem::bScaleBlockRows says which B tile)
  Blockwise,
  /// MXFP8: one UE8M0 per 1x32 block along K, applied inside the
  /// block-scaled MMA (sm_100a only). The kernel reads the scales in the
  /// 128x4 scale-factor atom layout (see buildGemmKernelMetadata).
  MX
};

// The MX scale block and scale-factor atom (kMXScaleBlock, kMXAtom*) are
// hardware layouts of the block-scaled MMA: FP8/Target/Chip.h.

/// How the epilogue quantizes an FP8 D (the op's result_recipe and
/// result_granularity).
enum class OutputQuantization {
  None,
  /// D * result_scale (a given per-tensor scale: delayed scaling);
  /// result_scale_inv = 1 / result_scale.
  Tensor,
  /// 1x128 blocks along N (DeepSeek-V3's activation quantization): each
  /// row's block amax, reduced in registers, gives the block's scale by the
  /// #fp8.blockwise rule; scale_inv stored MN-major
  /// [ceil(N/128), roundup(M, 4)], the layout the GEMMs read A's in.
  Block1x128,
};

/// The GEMM an fp8.scaled_matmul asks for, in the TN form the kernels take:
/// D[M, N] = sum_k A[M, K] B[N, K] * scales (+ bias[N]) (+ C[M, N]).
struct GemmProblem {
  int64_t n = 0;
  int64_t k = 0;
  /// Static M when the IR knows it (ShapedType::kDynamic otherwise): only a
  /// hint for the heuristic; kernels take M at run time.
  int64_t staticM = ShapedType::kDynamic;
  Type aElementType; ///< f8E4M3FN or f8E5M2
  Type bElementType;
  Type outElementType; ///< bf16, f16 or f32
  ScaleMode aScale = ScaleMode::Tensor;
  ScaleMode bScale = ScaleMode::Tensor;
  /// K elements between promotions of the partial sums (0: fast).
  int64_t promoteInterval = 0;
  Type biasElementType; ///< null when there is no bias
  bool accumulateIntoC = false;
  /// Applied in the epilogue after the scales and the bias.
  std::optional<Activation> activation;
  /// The epilogue also max-accumulates |D| (as stored) into an f32 scalar.
  bool outputAmax = false;
  /// Rows of B (output columns) that share a blockwise B scale: 128 for
  /// DeepSeek-V3's 128x128 weight tiles ("1D x 2D"), 1 for 1x128 tiles
  /// ("1D x 1D": the wgrad GEMM of two activation gradients).
  int64_t bScaleBlockRows = kBlockwiseScaleBlock;
  /// An FP8 D (outElementType f8E4M3FN / f8E5M2) and its scale rule.
  OutputQuantization outQuantization = OutputQuantization::None;
  bool outScalePow2 = false;  ///< Block1x128: power-of-two scales
  float outAmaxClamp = 0.f;   ///< Block1x128: the recipe's amax_clamp

  bool hasFP8Output() const {
    return outQuantization != OutputQuantization::None;
  }

  bool isBlockwise() const { return aScale == ScaleMode::Blockwise; }
  /// Blockwise with one B scale per output column and K block: the
  /// promotion scales each accumulator element by its row's A scale and its
  /// column's B scale.
  bool hasBlockwiseColumnScales() const {
    return isBlockwise() && bScaleBlockRows == 1;
  }
  int64_t numKBlocks(int64_t tileK) const {
    return llvm::divideCeil(k, tileK);
  }

  bool isMX() const { return aScale == ScaleMode::MX; }

  /// Blockwise (1x128 / 128x128) power-of-two scales run on the sm_100a
  /// block-scaled MMA as MX ("Blockwise to MX on Blackwell",
  /// docs/design.md): the host converts them to UE8M0 in the 128x4
  /// atom layout (blackwell::emulation::blockwiseScalesToMx, then
  /// layoutScaleFactors), a 1x128 tile's scale repeated over the four 32-K
  /// blocks of its 128-K group and a 128x128 tile's broadcast to its 128
  /// rows; the kernel is then the MXFP8 kernel. Set only by the sm_100a
  /// lowering (aScale/bScale stay Blockwise; the metadata says the layout).
  bool blockwiseAsMX = false;

  /// Scales applied inside the MMA (sm_100a kind::mxf8f6f4.block_scale).
  bool isBlockScaled() const { return isMX() || blockwiseAsMX; }

  /// A grouped GEMM (fp8.grouped_scaled_matmul, m_contiguous): B holds
  /// `numGroups` weights [N, K] one after the other and B's scales one set
  /// per group; the kernel reads each tile's group from the `group_index`
  /// operand at the tile's first row (the groups start at multiples of
  /// kGroupRowAlignment) and skips tiles of group -1. 0: a dense GEMM.
  int64_t numGroups = 0;
  bool isGrouped() const { return numGroups != 0; }
  /// Where a grouped GEMM's groups lie. m_masked: A is [G, M, K] (a 3-D
  /// tensor map), D [G, M, N], M the rows of each group (the `m`
  /// parameter), and the `masked_m` operand [G] the valid rows of each
  /// group; per-row and 1x128 A scales are one set per group (G
  /// outermost), and no row from a group's count on is computed or stored.
  /// The scheduler's switch over it: emitTileGroup.
  GroupedLayout groupLayout = GroupedLayout::MContiguous;
  bool isMasked() const {
    return isGrouped() && groupLayout == GroupedLayout::MMasked;
  }
  /// k_grouped: A [M, K] and B [N, K] hold the K columns of all groups (K a
  /// run-time value, the `k` parameter; `k` here is 0), the `ks` operand
  /// [G] the columns of each group; D is [G, M, N]. Per-tensor and per-row
  /// scales are one set per group on both sides; 1x128 scales (on both
  /// sides) cover the columns of all groups.
  bool isKGrouped() const {
    return isGrouped() && groupLayout == GroupedLayout::KGrouped;
  }
  /// D is [G, M, N] (m_masked, k_grouped): the tile rows are the G groups'
  /// ceil(M / tile M) each, and D is written with direct stores.
  bool hasGroupedOutput() const { return isMasked() || isKGrouped(); }
  /// Elements of one group's B scales: 1 per tensor, N per row, one per
  /// 128x128 tile.
  int64_t getBScaleElementsPerGroup() const {
    if (bScale == ScaleMode::Row)
      return n;
    // k_grouped 1x128 B scales cover the columns of all groups.
    if (bScale == ScaleMode::Blockwise && hasBlockwiseColumnScales())
      return 0;
    if (bScale == ScaleMode::Blockwise)
      return static_cast<int64_t>(llvm::divideCeil(n, kBlockwiseScaleBlock) *
                                  llvm::divideCeil(k, kBlockwiseScaleBlock));
    return 1;
  }

  /// Reads the problem off `op`, or reports why the kernels cannot take it.
  /// MX scales are rejected unless `allowMXScales` (only the sm_100a
  /// block-scaled kernels take them). An FP8 result is quantized in the
  /// epilogue where `epilogueQuantizes` and needsTwoPhaseFP8Result allow;
  /// otherwise the problem is the first phase's GEMM (f32 D).
  static FailureOr<GemmProblem> get(ScaledMatmulOp op,
                                    bool allowMXScales = false,
                                    bool epilogueQuantizes = true);
  /// The same for a grouped GEMM (MX scales only where `allowMXScales`).
  static FailureOr<GemmProblem> get(GroupedScaledMatmulOp op,
                                    bool allowMXScales = false);
};

/// The rows of a grouped GEMM's m_contiguous groups start at multiples of
/// this (DeepGEMM's contiguous-layout alignment): every CTA tile's rows
/// then belong to one group.
inline constexpr int64_t kGroupRowAlignment = 128;

/// Whether the FP8 result of `op` takes scales that need a reduction over
/// more than one output tile (per-tensor current scaling without a given
/// scale, row granularity, 128x128 tiles, MX blocks): no epilogue computes
/// them, and the lowering quantizes an f32 D after the GEMM.
bool needsTwoPhaseFP8Result(ScaledMatmulOp op);

/// The kernel configuration: CTA tile, pipeline depth, cluster, raster order.
struct GemmTiling {
  int64_t tileM = 128;
  int64_t tileN = 256;
  int64_t tileK = 128;
  int64_t stages = 4;
  int64_t clusterM = 1;
  int64_t clusterN = 1;
  int64_t rasterGroup = 8;
  /// The epilogue stages the output tile in shared memory and writes it with
  /// TMA stores (asynchronous, coalesced, clipped at the tensor's edge);
  /// otherwise each thread stores its fragment directly.
  bool tmaStoreEpilogue = false;
  /// With the staged epilogue: the consumer threads store the staged tile
  /// themselves, 16 bytes at a time along D's rows, each store guarded by
  /// the M and N edges, instead of TMA stores, whose clipping stops only at
  /// the tensor's edge (a masked grouped GEMM's group ends at its run-time
  /// count). The kernel then takes D's address, not a tensor map.
  bool guardedStagedStores = false;
  /// Store boxes the staging buffer holds, reused in turn as their stores
  /// read them (fewer than the tile's boxes frees shared memory for a
  /// pipeline stage); 0: the whole tile.
  int64_t stagingBoxes = 0;
  /// Bytes per output element (for the staging buffer).
  int64_t outputBytes = 2;
  /// The scales are read with TMA (MX scales on sm_100a): the scale
  /// parameters are the by-value tensor maps `tma_sfa`, `tma_sfb` instead of
  /// pointers.
  bool scaleTensorMaps = false;
  /// Shared-memory bytes per pipeline stage for the K block's scales, kept
  /// apart from the TMA stage (whose 1024-byte alignment the 128-byte
  /// swizzle needs); 0 when no scale changes along K (sm_90a blockwise).
  int64_t stageScaleBytes = 0;
  /// Bytes the kernel's reads of 1x128 (MN-major) scale tensors need them
  /// aligned to (sm_90a: one bulk copy per K block); 0 for none. Stated in
  /// the metadata, checked by the runtime at launch.
  int64_t blockwiseScaleAlignment = 0;
  /// The tiles of the last, partial wave are split along K over all CTAs
  /// (stream-K): the CTAs that compute a tile's later K blocks leave their
  /// partial sums in the `workspace` parameter for the one computing its
  /// first blocks, which adds them and runs the epilogue.
  bool streamK = false;
  /// Bytes of the `workspace` parameter each CTA owns (a stream-K kernel's,
  /// laid out by the target lowering, which sets it); 0: no workspace.
  int64_t workspaceBytesPerCta = 0;
  /// Column parts of promoted accumulation (`promotion_parts` of the
  /// configuration): 1 or 2; 0: the target's choice.
  int64_t promotionParts = 0;
  /// Swap-AB (sm_90a decode kernels): the MMA computes the transposed tile,
  /// D^T = B . A^T, so that tileN rows of B fill the MMA's 64-row side and
  /// the tileM rows of A (a few tokens) are its narrow N side. The tile is
  /// still tileM x tileN of D (A and B are loaded as in any tile). Only the
  /// sm_90a kernels implement it (HopperSwapAB.cpp), and only the sm_90a
  /// tiling sets it (no gemm_config field does); the sm_100a tiling asserts
  /// it is unset.
  bool swapAB = false;
  /// Swap-AB only: CTAs of a cluster (splitK x 1 x 1) that split each
  /// tile's K blocks evenly, rank r computing [r kB / S, (r + 1) kB / S);
  /// the ranks past 0 store their f32 sums into rank 0's shared memory,
  /// which adds them in rank order and runs the epilogue. 1: no split.
  int64_t splitK = 1;
  /// Ping-pong (sm_90a fast accumulation): each of the two consumer
  /// warpgroups computes whole tiles (tileM rows in 64-row waves), the
  /// CTA's tiles alternating between them, and they issue their tiles' MMAs
  /// in turn, so that one's epilogue overlaps the other's MMAs. Otherwise
  /// the consumers share each tile.
  bool pingPong = false;

  /// CTAs of the kernel's cluster: those sharing tiles (clusterM x clusterN)
  /// times those splitting a tile's K blocks.
  int64_t clusterCtas() const { return clusterM * clusterN * splitK; }

  /// Whether the target's staged epilogue also writes boxes of 64- and
  /// 32-byte rows for 2- and 4-byte outputs (sm_90a): tile widths that are
  /// no whole 128-byte boxes (128x144: nine boxes of 16 bf16 columns).
  bool narrowStoreBoxes = false;

  /// Bytes of a row of one TMA store box, its swizzle span: 128, or 64 for
  /// a 1-byte (FP8) output whose tile N is not whole 128-column boxes; with
  /// narrowStoreBoxes, the widest of 128, 64 and 32 that divides the tile's
  /// row.
  int64_t storeBoxBytes() const {
    if (outputBytes == 1)
      return tileN % 128 != 0 ? 64 : 128;
    if (!narrowStoreBoxes)
      return 128;
    for (int64_t rowBytes : {128, 64})
      if ((tileN * outputBytes) % rowBytes == 0)
        return rowBytes;
    return 32;
  }
  /// Columns of one TMA store box.
  int64_t storeBoxColumns() const { return storeBoxBytes() / outputBytes; }
  int64_t numStoreBoxes() const { return tileN / storeBoxColumns(); }
  int64_t numStagingBoxes() const {
    return stagingBoxes ? stagingBoxes : numStoreBoxes();
  }
  int64_t numNTiles(int64_t n) const { return llvm::divideCeil(n, tileN); }
  /// Whether the staged tile goes out with TMA stores (the kernel's `tma_d`
  /// parameter).
  bool storesWithTma() const {
    return tmaStoreEpilogue && !guardedStagedStores;
  }
};

/// Whether the kernel accumulates into C through its staged output tile
/// (the sm_90a 1D x 1D GEMM): it then also takes D's address, and adds the
/// tile into D with a TMA reduce-add where the caller passes C as D (in
/// place), C in registers before a TMA store otherwise.
inline bool accumulatesThroughStaging(const GemmProblem &p,
                                      const GemmTiling &t) {
  return p.accumulateIntoC && t.tmaStoreEpilogue;
}

/// The tiling a `#fp8.gemm_config` asks for: tile, pipeline depth, cluster
/// and raster group, with a TMA-store epilogue when `canStageOutput` and the
/// tile's N is whole store boxes (GemmTiling::narrowStoreBoxes where the
/// target's epilogue stages narrow boxes). The target's lowering checks that
/// its kernels take it.
GemmTiling getGemmTiling(GemmConfigAttr config, int64_t outputBytes,
                         bool canStageOutput, bool narrowBoxes = false);

/// A short name for the kernel: recipe, dtypes, N, K and tile, e.g.
/// `fp8_gemm_tensorwise_e4m3_e4m3_bf16_n7168_k2048_t128x256x128_s4`.
std::string getGemmKernelName(const GemmProblem &problem,
                              const GemmTiling &tiling);

/// What a target's GEMM kernel decides that its metadata says; each target
/// lowering fills one (hopper::buildKernelMetadata,
/// blackwell::buildKernelMetadata).
struct GemmTargetLayout {
  int64_t threadsPerCta = 0;
  /// Output rows one CTA loads (A) and stores (D): the persistent grid's
  /// tile_m and the M box of tma_a and tma_d (half the tile for a CTA pair).
  int64_t ctaTileM = 0;
  int64_t dynamicSharedMemoryBytes = 0;
  /// A (B) is stored MN-major, [K, M] ([K, N]), rather than in the TN form.
  bool aMNMajor = false;
  bool bMNMajor = false;
};

/// The metadata (`fp8.kernel_metadata`) of a GEMM kernel: operands,
/// parameters, tensor maps, launch shape and the `gemm` description. Every
/// GEMM kernel runs KernelBuilder::gridDependencySync after its prologue,
/// so its metadata asks for programmatic stream serialization.
fp8schema::KernelMetadata
buildGemmKernelMetadata(StringRef name, const ChipInfo &chip,
                        const GemmProblem &problem, const GemmTiling &tiling,
                        const GemmTargetLayout &layout);

/// Indices of the by-value tensor-map parameters (tma_a, tma_b, with a
/// TMA-store epilogue tma_d, and with scale tensor maps tma_sfa, tma_sfb).
SmallVector<int32_t> getGridConstantParams(const GemmTiling &tiling);

/// The parameters of a GEMM kernel, in the order of the metadata's "params"
/// list. `d` or `tmaD` is set (TMA-store epilogue); `bias` and `c` are null
/// when the problem has none.
struct GemmKernelParams {
  Value tmaA, tmaB, tmaD, d, aScaleInv, bScaleInv, bias, c, amax, m;
  /// Grouped GEMMs only: the i32 group of each row of A (m_contiguous), the
  /// i32 valid rows of each group (m_masked), the i32 columns of each group
  /// (k_grouped).
  Value groupIndex;
  /// k_grouped only: K, the columns of all groups.
  Value k;
  /// An FP8 D: its given scale (OutputQuantization::Tensor) and the
  /// scale_inv the kernel writes; null otherwise.
  Value resultScale, resultScaleInv;
  /// Kernels with a workspace only (GemmTiling::workspaceBytesPerCta).
  Value workspace;
};

/// Creates the `gpu.func` of a GEMM kernel at `b`'s insertion point with the
/// ABI buildGemmKernelMetadata describes, `numThreads` threads per CTA (also
/// the register-allocation cap), one CTA per SM and, when `clusterM` > 1, a
/// `clusterM`x1x1 cluster. Leaves `b` at the start of the body and returns
/// the parameters in `params`.
gpu::GPUFuncOp createGemmKernelFunc(OpBuilder &b, Location loc, StringRef name,
                                    const GemmProblem &problem,
                                    const GemmTiling &tiling,
                                    int64_t numThreads,
                                    GemmKernelParams &params);

} // namespace mlir::fp8

#endif // FP8_CONVERSION_KERNELSKELETON_GEMMKERNEL_H
