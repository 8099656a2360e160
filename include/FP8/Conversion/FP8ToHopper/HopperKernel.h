//===- HopperKernel.h - Layout of the sm_90a GEMM kernel --------*- C++ -*-===//
//
// What the parts of the sm_90a GEMM kernel (HopperTiling, HopperScheduler,
// HopperMainloop, HopperEpilogue, HopperGemm) share: the CTA's warpgroup
// roles, the shared-memory plan and the values the roles read.
//
// A persistent kernel: CTAs stride over output tiles (grouped raster order).
// Warpgroup 0 is the producer: one thread issues the TMA loads of A and B
// K-blocks into a ring of shared-memory stages; with blockwise scales, the
// same thread copies each K block's scales next to its stage. Warpgroups
// 1.. are consumers: each owns 64 rows of the tile and issues
// wgmma.mma_async m64nNk32 over the stage, then frees it. Promoted
// accumulation moves the partial sums of every 128-K block into an f32
// accumulator (scaled by the blockwise scales: per row of A, and per
// 128x128 tile or per column of B) with FMAs on the CUDA cores. The
// epilogue applies the remaining scales, bias and C, converts, and stores.
//
// Shared memory: the stage ring (A and B tiles), the output staging buffer
// (TMA-store epilogue), the stages' blockwise scale slots, the ring's
// barriers, the stream-K schedule, a K-split kernel's barriers and sum
// slots.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_CONVERSION_FP8TOHOPPER_HOPPERKERNEL_H
#define FP8_CONVERSION_FP8TOHOPPER_HOPPERKERNEL_H

#include "FP8/Conversion/KernelSkeleton/GemmKernel.h"
#include "FP8/Conversion/KernelSkeleton/KernelBuilder.h"

namespace mlir::fp8::hopper {

inline int64_t getByteWidth(Type t) { return t.getIntOrFloatBitWidth() / 8; }

/// Consumer warpgroups: one per 64 rows of a tile of 64 or 128 rows; two
/// for a 256-row tile; one for a swap-AB tile (its transposed tile's tileN
/// rows); two taking the tiles in turn with ping-pong.
inline int64_t getNumConsumers(const GemmTiling &t) {
  if (t.pingPong)
    return 2;
  return t.swapAB ? 1 : std::min<int64_t>(t.tileM / 64, 2);
}
/// Consumer warpgroups computing one tile together (each stage's readers):
/// all of them, or one with ping-pong.
inline int64_t getConsumersPerTile(const GemmTiling &t) {
  return t.pingPong ? 1 : getNumConsumers(t);
}
/// The 64-row waves of each consumer warpgroup: 1, or 2 for a 256-row tile
/// or a 128-row ping-pong tile (a swap-AB tile has one).
/// Wave w of consumer c holds tile rows 64 * (c + consumers * w) on, so the
/// consumers' waves w together are rows [128w, 128w + 128) (with
/// ping-pong, rows 64w on of the consumer's own tile).
inline int64_t getNumWaves(const GemmTiling &t) {
  return t.swapAB ? 1 : t.tileM / 64 / getConsumersPerTile(t);
}
/// The tile rows between a consumer's waves.
inline int64_t getWaveRows(const GemmTiling &t) {
  return 64 * getConsumersPerTile(t);
}
/// Columns of a consumer's wgmma accumulator (the MMA's N): the tile's N, or
/// its M with swap-AB.
inline int64_t getAccumulatorColumns(const GemmTiling &t) {
  return t.swapAB ? t.tileM : t.tileN;
}
/// CTAs of a cluster: 2x1 (two M tiles, B multicast) or 1x2 (two N tiles,
/// A multicast).
inline int64_t getClusterSize(const GemmTiling &t) {
  return t.clusterM * t.clusterN;
}
/// A producer warpgroup and the consumers.
inline int64_t getNumThreads(const GemmTiling &t) {
  return kWarpgroupThreads * (1 + getNumConsumers(t));
}
/// Units of work along N: tile columns, in pairs with a 1x2 cluster.
inline int64_t getNumNUnits(const GemmProblem &p, const GemmTiling &t) {
  return llvm::divideCeil(t.numNTiles(p.n), t.clusterN);
}
/// Whether the epilogue guards columns past N: a partial last tile, or the
/// tile past the last of an odd number of them (a 1x2 cluster's pair).
inline bool needsColumnGuard(const GemmProblem &p, const GemmTiling &t) {
  return p.n % (t.tileN * t.clusterN) != 0;
}
/// Shared memory of one pipeline stage's A and B tiles.
inline int64_t getStageBytes(const GemmTiling &t) {
  return (t.tileM + t.tileN) * t.tileK;
}
/// A consumer's staging buffer of the TMA-store epilogue (the consumers
/// share one, or with ping-pong each has its own).
inline int64_t getConsumerEpilogueBytes(const GemmTiling &t) {
  return t.tmaStoreEpilogue
             ? t.tileM * t.storeBoxBytes() * t.numStagingBoxes()
             : 0;
}
/// The TMA-store epilogue's staging buffers.
inline int64_t getEpilogueBytes(const GemmTiling &t) {
  return getConsumerEpilogueBytes(t) * (t.pingPong ? 2 : 1);
}

/// The Hopper kernels' name for the dialect's kBlockwiseScaleBlock:
/// 128x128 blockwise B scales cover 128 N rows.
inline constexpr int64_t kScaleBlock = kBlockwiseScaleBlock;
/// Named barrier among the consumer warpgroups (0 is __syncthreads).
inline constexpr int64_t kConsumerBarrierId = 1;
/// Ping-pong: consumer c's epilogue barrier (its warpgroup's threads) is
/// kPingPongEpilogueBarrierId + c, and the barrier on which it waits for
/// its turn to issue a tile's MMAs kPingPongTurnBarrierId + c.
inline constexpr int64_t kPingPongEpilogueBarrierId = 2;
inline constexpr int64_t kPingPongTurnBarrierId = 4;

/// Shared memory for the stream-K schedule (StreamKField), after the
/// barriers.
inline constexpr int64_t kStreamKScheduleBytes = 32;

inline int64_t getStreamKScheduleOffset(const GemmTiling &t) {
  return t.stages * (getStageBytes(t) + t.stageScaleBytes) +
         getEpilogueBytes(t) + PipelineRing::barrierBytes(t.stages);
}

/// A K-split kernel's shared memory (GemmTiling::splitK), after the
/// stream-K schedule: two barriers (the first CTA's "sums stored", the
/// others' "slot read"), then one slot per CTA past the first for its f32
/// sums (rank 0 reads them).
inline constexpr int64_t kSplitKBarrierBytes = 16;

inline int64_t getSplitKOffset(const GemmTiling &t) {
  return getStreamKScheduleOffset(t) + (t.streamK ? kStreamKScheduleBytes : 0);
}
/// One CTA's sums: the consumer warpgroup's 64 x tileM accumulator (64 B
/// rows, the MMA's M).
inline int64_t getSplitKSlotBytes(const GemmTiling &t) {
  return 4 * 64 * getAccumulatorColumns(t);
}
inline int64_t getSplitKBytes(const GemmTiling &t) {
  return t.splitK > 1
             ? kSplitKBarrierBytes + (t.splitK - 1) * getSplitKSlotBytes(t)
             : 0;
}

/// A stream-K CTA's workspace slot: its flag, in 128 bytes of its own,
/// then its tile of f32 partial sums (emitStreamKFixup).
inline constexpr int64_t kStreamKFlagBytes = 128;

/// Which 128x128 B scale the 8-column groups of a tile use. Tiles start at
/// multiples of g = gcd(tile N, 128) in their 128-row block of B and meet at
/// most two blocks (tile N <= 128 + g). Column group j is in the tile's
/// first block iff the tile's offset in it is below 128 - 8j, i.e. below
/// roundup(128 - 8j, g): groups below g are always in the first block,
/// groups from 128 on always in the second, and groups with the same bound
/// in between choose alike. Each such class of groups gets one slot in the
/// stage's scale slot, filled by the producer with the right block's scale, so
/// that the consumers index scales by compile-time class only.
struct BScaleClasses {
  /// Per class: 0 (always the first block), kScaleBlock (always the
  /// second), or the bound below which the tile's offset picks the first.
  SmallVector<int64_t> bounds;
  /// Per column group j: its class.
  SmallVector<int64_t> classOfGroup;

  explicit BScaleClasses(const GemmTiling &t);

  /// Whether class `c` reads the tile's second block when the tile starts
  /// `offset` columns into its first (the producer's choice, made at run
  /// time by the tile's offset).
  bool readsSecondBlock(int64_t c, int64_t offset) const {
    return bounds[c] == kScaleBlock || (bounds[c] != 0 && offset >= bounds[c]);
  }
};

/// The stream-K schedule: the K blocks of the tiles from DpUnits on,
/// numbered tile by tile (Blocks of them), are split evenly over Ctas
/// CTAs; this CTA's are [Begin, End) (empty when it takes none).
enum class StreamKField {
  DpUnits,
  Begin,
  End,
  Ctas,
  Blocks,
  /// This CTA's pipeline iteration at block Begin: kBlocks per whole unit.
  FirstIteration,
  Count
};

/// The values the producer and consumer code share.
struct KernelValues : GemmKernelParams {
  Value tid;
  Value smem;
  /// The output staging buffer (TMA-store epilogue).
  Value epilogueBuffer;
  /// Work is scheduled in units of `clusterM` vertically adjacent tiles
  /// (one per CTA of the cluster, sharing the B tile) or `clusterN`
  /// horizontally adjacent ones (sharing the A tile). m_masked: numUnits
  /// counts only the units with valid rows, and numMUnits is null
  /// (emitMaskedUnitCount).
  Value numMUnits;
  Value numUnits;
  /// m_masked: the rows of each group (the `m` parameter; `m` itself is
  /// the group's valid rows in the epilogue, getGroupValues).
  Value groupM;
  Value clusterRank; ///< 0 without a cluster
  Value firstUnit;   ///< this CTA's cluster index
  Value unitStride;  ///< number of clusters
  /// Stream-K kernels: the schedule (emitStreamKSchedule) in shared
  /// memory, read where it is used, so that none of it holds a register
  /// across the mainloop (held in registers, it made ptxas spill).
  Value streamKSchedule;
  PipelineRing ring;
  /// K-split kernels: the barriers and sum slots (getSplitKOffset).
  Value splitK;
  /// The stages' scale slots (blockwise), `stageScaleBytes` apart.
  Value scaleSlots;

  Value scaleSlot(KernelBuilder &kb, const GemmTiling &t, Value stage) const {
    return kb.bytePtr(scaleSlots, kb.mul(stage, kb.i32(t.stageScaleBytes)));
  }
  Value scheduleField(KernelBuilder &kb, StreamKField field) const {
    return kb.load(
        kb.builder().getI32Type(),
        kb.bytePtr(streamKSchedule, 4 * static_cast<int64_t>(field)));
  }
  /// Units computed whole: from firstUnit on, unitStride apart, below this
  /// (all of them without stream-K).
  Value dpUnits(KernelBuilder &kb) const {
    return streamKSchedule ? scheduleField(kb, StreamKField::DpUnits)
                           : numUnits;
  }
  /// This CTA's units of those below `units` (from firstUnit on,
  /// unitStride apart).
  Value ctaUnitsBelow(KernelBuilder &kb, Value units) const {
    return arith::SelectOp::create(
        kb.builder(), kb.ult(firstUnit, units),
        kb.ceilDiv(kb.sub(units, firstUnit), unitStride), kb.i32(0));
  }
  /// The first stream-K K block of CTA `cta` (< StreamKField::Ctas).
  Value streamKStart(KernelBuilder &kb, Value cta) const {
    return kb.divu(kb.mul(cta, scheduleField(kb, StreamKField::Blocks)),
                   scheduleField(kb, StreamKField::Ctas));
  }
};

} // namespace mlir::fp8::hopper

#endif // FP8_CONVERSION_FP8TOHOPPER_HOPPERKERNEL_H
