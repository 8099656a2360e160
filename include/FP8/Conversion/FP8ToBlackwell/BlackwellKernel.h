//===- BlackwellKernel.h - Layout of the sm_100a GEMM kernel ----*- C++ -*-===//
//
// What the parts of the sm_100a GEMM kernel (BlackwellTiling,
// BlackwellMainloop, BlackwellEpilogue, BlackwellGemm) share: the CTA's
// warp roles, the shared-memory and Tensor Memory plan, the instruction
// descriptors and the values the roles read.
//
// A persistent kernel of 384 threads: CTAs stride over output tiles (grouped
// raster order, the skeleton's scheduler).
// - Warp 0, one thread: TMA loads of A and B K-blocks into a ring of stages
//   (the skeleton's PipelineRing: full barriers complete on the TMA bytes).
// - Warp 1: owns Tensor Memory (allocates two accumulators of tile N
//   columns, frees them at exit); one elected thread issues the four
//   `tcgen05.mma.kind::f8f6f4` (K = 32) of each 128-K stage and
//   `tcgen05.commit`s the stage's empty barrier (the MMAs' completion frees
//   the stage) and, after a tile's last block, the accumulator's "full"
//   barrier.
// - Warps 2, 3: idle (they keep the epilogue warpgroups aligned: a warp
//   reads TMEM lanes 32 * (warp % 4) onwards).
// - Warpgroups 1 and 2: the epilogue, each half of the tile's columns;
//   thread t of warp w owns tile row 32 (w % 4) + t (TMEM lane = row,
//   Layout D). Wait for the accumulator, `tcgen05.ld.32x32b` it in pieces
//   of at most 32 columns, release it ("empty" barrier) after the last
//   load, apply scales and bias, convert, and stage the tile for TMA stores
//   (bf16/f16) or store it directly (f32, accumulate-into-C).
//
// MXFP8 (`mx 1x32` on both operands): the scales arrive in the 128x4
// scale-factor atom layout; the producer loads each stage's atoms (A: one,
// B: tile N / 128) with a 3-D TMA load next to the tiles, into a scale area
// after the staging buffer. The MMA thread copies them into the stage's
// TMEM scale slot with `tcgen05.cp.32x128b.warpx4` and issues the four
// `tcgen05.mma.kind::mxf8f6f4.block_scale.block32` of the stage with scale
// factor IDs 0..3 (one UE8M0 byte of each TMEM cell per 32-K step). Each
// stage has its own slot: tcgen05.cp is ordered before later MMAs of the
// same thread (a pipelined pair), but not after earlier ones, so a slot is
// only rewritten after the stage's empty barrier (a tcgen05.commit of its
// MMAs) let the producer refill the stage. Tile N 256 leaves no TMEM for a
// second accumulator: those kernels run one accumulator (no epilogue
// overlap).
//
// Blockwise 1x128 / 128x128 power-of-two scales (f8E8M0FNU, or f32 under
// `#fp8.blockwise<scales = pow2>`) run this MX kernel unchanged: the host
// converts them to the atom layout (emulation::blockwiseScalesToMxAtoms:
// four equal bytes per 128-K group, 128x128 tiles broadcast to their rows),
// and the metadata says so (GemmProblem::blockwiseAsMX).
//
//===----------------------------------------------------------------------===//

#ifndef FP8_CONVERSION_FP8TOBLACKWELL_BLACKWELLKERNEL_H
#define FP8_CONVERSION_FP8TOBLACKWELL_BLACKWELLKERNEL_H

#include "FP8/Conversion/FP8ToBlackwell/BlackwellTiling.h"
#include "FP8/Conversion/FP8ToBlackwell/TCGen05Encodings.h"
#include "FP8/Conversion/KernelSkeleton/KernelBuilder.h"

#include <optional>
#include <string>

namespace mlir::fp8::blackwell {

inline constexpr int64_t kTileM = 128;
inline constexpr int64_t kTileK = 128;
/// Warp roles.
inline constexpr int64_t kProducerWarp = 0;
inline constexpr int64_t kMmaWarp = 1;
inline constexpr int64_t kFirstEpilogueWarpgroup = 1;
inline constexpr int64_t kEpilogueWarpgroups = 2;
inline constexpr int64_t kEpilogueThreads =
    kEpilogueWarpgroups * kWarpgroupThreads;
/// Named barrier among the epilogue warpgroups (0 is __syncthreads).
inline constexpr int64_t kEpilogueBarrierId = 1;
/// Widest TMEM load per piece (32x32b.x32: 32 registers per thread).
inline constexpr int64_t kMaxLoadColumns = 32;
/// Threads per CTA: producer warpgroup and two epilogue warpgroups.
inline constexpr int64_t kNumThreads = 3 * kWarpgroupThreads;
/// The cta_group::2 variant: a 2x1 cluster (a CTA pair) computes a 256-row
/// tile with one tcgen05.mma.cta_group::2 (M = 256) issued by the leader.
inline constexpr int64_t kPairTileM = 2 * kTileM;

/// The CTA pair variant (tile M 256, cluster 2x1, tcgen05 cta_group::2):
/// each CTA holds 128 rows of A and half of B's tile N rows in its shared
/// memory (PTX ISA 9.7.16, "CTA pair") and 128 rows of the accumulator in
/// its Tensor Memory.
inline bool isCtaPair(const GemmTiling &t) { return t.clusterM == 2; }
inline CtaGroup getCtaGroup(const GemmTiling &t) {
  return isCtaPair(t) ? CtaGroup::Two : CtaGroup::One;
}
/// Rows of A, rows of B (tile N columns) and output rows of one CTA.
inline int64_t getCtaTileM(const GemmTiling &t) { return t.tileM / t.clusterM; }
inline int64_t getCtaBRows(const GemmTiling &t) { return t.tileN / t.clusterM; }
/// Shared memory of one CTA's stage (A and B K-blocks).
inline int64_t getCtaStageBytes(const GemmTiling &t) {
  return (getCtaTileM(t) + getCtaBRows(t)) * t.tileK;
}
/// One CTA's staging buffer of output rows (TMA-store epilogue).
inline int64_t getCtaEpilogueBytes(const GemmTiling &t) {
  return t.tmaStoreEpilogue ? getCtaTileM(t) * t.tileN * t.outputBytes : 0;
}

/// The operand tiles of one stage as TMA writes them (one CTA's share).
inline Fp8OperandTile getATile(const BlackwellGemm &g, const GemmTiling &t) {
  return Fp8OperandTile{g.aMajor, SwizzleMode::Swizzle128B, getCtaTileM(t),
                        t.tileK};
}
inline Fp8OperandTile getBTile(const BlackwellGemm &g, const GemmTiling &t) {
  return Fp8OperandTile{g.bMajor, SwizzleMode::Swizzle128B, getCtaBRows(t),
                        t.tileK};
}

/// The instruction descriptors of the kernel's MMAs: kind::f8f6f4 and the
/// block-scaled kind::mxf8f6f4.
BlockScaledInstrDescriptor getBlockScaledInstrDescriptor(const BlackwellGemm &g,
                                                         const GemmTiling &t);
F8F6F4InstrDescriptor getInstrDescriptor(const BlackwellGemm &g,
                                         const GemmTiling &t);

/// Scale-factor atoms one stage loads per operand (MX only).
inline int64_t getScaleAtomsA(const GemmTiling &t) {
  return t.tileM / kMXAtomRows;
}
inline int64_t getScaleAtomsB(const GemmTiling &t) {
  return t.tileN / kMXAtomRows;
}

/// Shared memory of one stage's scale-factor atoms (0 without MX scales).
inline int64_t getScaleStageBytes(const BlackwellGemm &g, const GemmTiling &t) {
  if (!g.problem.isBlockScaled())
    return 0;
  return (getScaleAtomsA(t) + getScaleAtomsB(t)) * kMXAtomBytes;
}

/// The TMEM plan of an MX kernel with `accumulatorStages` accumulators and
/// one scale slot per pipeline stage.
std::optional<BlockScaledTmemPlan>
getBlockScaledTmemPlan(const GemmTiling &t, int64_t accumulatorStages,
                       std::string *error = nullptr);

/// TMEM accumulators: two (the epilogue of a tile overlaps the next tile's
/// MMAs) unless an MX kernel's scale slots leave no room for the second.
int64_t getAccumulatorStages(const BlackwellGemm &g, const GemmTiling &t);

/// Columns tcgen05.alloc must provide (0 when they do not fit).
int64_t getTmemColumns(const BlackwellGemm &g, const GemmTiling &t);

/// Shared memory after the stages and the staging buffer: the ring's
/// barriers, the accumulator full/empty barriers, the TMEM address slot.
inline int64_t getBarrierBytes(int64_t stages) {
  return PipelineRing::barrierBytes(stages) + 2 * 8 * kAccumulatorStages + 8;
}

/// The values the roles share.
struct KernelValues : GemmKernelParams {
  Value tid, warp;
  Value smem;
  Value epilogueBuffer;
  /// MX: the stages' scale-factor atoms (stage s at s * scale stage bytes:
  /// A's atom, then B's).
  Value scaleBuffer;
  PipelineRing ring;
  /// Accumulator barriers: full (MMA -> epilogue, one tcgen05.commit) and
  /// empty (epilogue -> MMA, every epilogue thread).
  Value accFullBase, accEmptyBase;
  /// Shared word tcgen05.alloc writes the TMEM address to.
  Value tmemSlot;
  Value numMTiles, numTiles;
  /// CTA pair (cta_group::2) only: this CTA's rank in the pair, the pair's
  /// cluster index and the number of clusters (work is scheduled in units
  /// of clusters); null otherwise.
  Value clusterRank, firstUnit, unitStride;
};

/// The first tile and the stride of a CTA's persistent loop: per CTA, or per
/// cluster for the CTA pair (both CTAs of a pair work on the same tile).
inline Value firstTile(KernelBuilder &kb, const KernelValues &v) {
  return v.firstUnit ? v.firstUnit : kb.blockIdX();
}
inline Value tileStride(KernelBuilder &kb, const KernelValues &v) {
  return v.unitStride ? v.unitStride : kb.gridDimX();
}

/// The CTA's persistent loop over its tiles, carrying `init`: `body` gets
/// the linear tile, its group (null for a dense GEMM) and the carried
/// values, and returns the next ones. A grouped GEMM's tiles of no group
/// are skipped (the skeleton's group scheduler), the same way in every
/// role.
ValueRange
forEachTile(KernelBuilder &kb, const GemmProblem &p, const GemmTiling &t,
            const KernelValues &v, ValueRange init,
            function_ref<SmallVector<Value>(Value, Value, ValueRange)> body);

/// Barrier `index` of the array of 8-byte mbarriers at `base`.
inline Value barrierAt(KernelBuilder &kb, Value base, Value index) {
  return kb.bytePtr(base, kb.mul(index, kb.i32(8)));
}

} // namespace mlir::fp8::blackwell

#endif // FP8_CONVERSION_FP8TOBLACKWELL_BLACKWELLKERNEL_H
