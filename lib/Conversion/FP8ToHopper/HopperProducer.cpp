//===- HopperProducer.cpp - Producer warpgroup of the sm_90a GEMM ---------===//
//
// The producer role of the sm_90a GEMM (HopperMainloop.h): one thread walks
// the CTA's work, waits for each stage to be free and fills it with TMA
// loads of the A and B tiles and the copies of the blockwise scales; the
// warpgroup's registers go to the consumers (setmaxnreg).
//
//===----------------------------------------------------------------------===//

#include "FP8/Conversion/FP8ToHopper/HopperMainloop.h"
#include "FP8/Conversion/FP8ToHopper/HopperScheduler.h"
#include "FP8/Conversion/FP8ToHopper/HopperTiling.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::hopper;

/// setmaxnreg budgets (PTX ISA 9.7.19.5): the producer only issues TMA, the
/// consumers hold the accumulators. 40 * 128 + 232 * 256 <= 64K registers.
static constexpr int64_t kProducerRegisters = 40;
static constexpr int64_t kConsumerRegistersTwoWarpgroups = 232;
static constexpr int64_t kConsumerRegistersOneWarpgroup = 240;

/// Walks the producer side of the pipeline: for every K block of every work
/// segment of this CTA (forEachWorkSegment), waits until the block's stage
/// is free and calls `body` with the tile, the K block and the stage.
static void forEachFreeStage(
    KernelBuilder &kb, const GemmProblem &p, const GemmTiling &t,
    const KernelValues &v,
    function_ref<void(const TileCoordinate &, Value kBlock, Value stage)>
        body) {
  forEachWorkSegment(
      kb, p, t, v, {kb.i32(0)},
      [&](const WorkSegment &segment, ValueRange state) {
        TileCoordinate coord = emitTileOfUnit(kb, p, t, v, segment.unit);
        auto [kBegin, kEnd] = emitGroupKRange(kb, p, coord, segment);
        ValueRange next = kb.forLoop(
            kBegin, kEnd, kb.i32(1),
            {state[0]},
            [&](Value kBlock, ValueRange inner) {
              Value iteration = inner[0];
              Value stage = v.ring.stage(kb, iteration);
              kb.mbarrierWait(v.ring.emptyBarrier(kb, stage),
                              v.ring.producerParity(kb, iteration));
              body(coord, kBlock, stage);
              return SmallVector<Value>{kb.add(iteration, kb.i32(1))};
            });
        return SmallVector<Value>{next[0]};
      });
}

/// Blockwise scales travel with their stage, copied into the stage's scale
/// slot by the TMA thread. The tile's 1x128 scales of a K block (A's rows,
/// and B's columns for 1x128 B tiles) are contiguous in their MN-major
/// layouts, so each is one bulk copy (cp.async.bulk) counted in the
/// stage's transaction bytes: 16-byte aligned (the runtime checks the
/// tensors' alignment; rows are whole multiples of 4 floats) and stopping
/// at the end of the tensor's rows (roundup(M, 4) for A, N for B), so that
/// the slot keeps stale values only where rows past M and columns past N
/// read it (their results are never stored). 128x128 B scales, one per
/// column class (BScaleClasses), are 4-byte cp.async copies that count as
/// one more arrival on the full barrier once they land. (A warp of 4-byte
/// cp.async copies, one arrival per lane, measured 9% slower: bench/NOTES.md
/// v14.)
namespace {
/// The bulk copies' sizes, needed for the stage's transaction bytes before
/// the copies are issued.
struct ScaleCopySizes {
  Value aRows;  ///< roundup(M, 4): A's scale rows per K block
  Value aBytes; ///< the A copy's
  Value bBytes; ///< the B copy's (1x128 B tiles only)
  Value total;  ///< their sum
};
} // namespace

/// Whether a tile of `t` may lie past M: only the second CTA of a 2x1
/// cluster's last pair, with an odd number of tile rows. Its A-scale copy
/// then copies nothing.
static bool mayHaveTilePastM(const GemmTiling &t) { return t.clusterM > 1; }

static ScaleCopySizes getScaleCopySizes(KernelBuilder &kb, const GemmProblem &p,
                                        const GemmTiling &t,
                                        const KernelValues &v, Value mOffset,
                                        Value nOffset) {
  ScaleCopySizes sizes;
  // A: 1x128 tiles, MN-major [ceil(K/128), roundup(M, 4)]
  // (kMNMajorScaleAlignment: the layout the quantize kernels write).
  sizes.aRows = kb.mul(kb.ceilDiv(v.m, kMNMajorScaleAlignment),
                       kb.i32(kMNMajorScaleAlignment));
  // The rows left from the tile's first row (none past M).
  Value rowsLeft =
      mayHaveTilePastM(t)
          ? kb.sub(sizes.aRows, kb.minu(mOffset, sizes.aRows))
          : kb.sub(sizes.aRows, mOffset);
  sizes.aBytes = kb.mul(kb.minu(kb.i32(t.tileM), rowsLeft), kb.i32(4));
  sizes.total = sizes.aBytes;
  if (p.hasBlockwiseColumnScales()) {
    // B: 1x128 tiles, MN-major [ceil(K/128), N] (N % 16 == 0).
    sizes.bBytes = kb.mul(
        kb.minu(kb.i32(t.tileN), kb.sub(kb.i32(p.n), nOffset)), kb.i32(4));
    sizes.total = kb.add(sizes.total, sizes.bBytes);
  }
  return sizes;
}

static void emitScaleCopies(KernelBuilder &kb, const GemmProblem &p,
                            const GemmTiling &t, const KernelValues &v,
                            const ScaleCopySizes &sizes, Value kBlock,
                            Value slot, Value mOffset, Value nOffset,
                            Value full) {
  ImplicitLocOpBuilder &b = kb.builder();
  // The `.shared::cluster` form (the `.shared::cta` one needs PTX 8.6); a
  // CTA's own shared address is a valid shared::cluster one.
  auto bulkCopy = [&](Value dst, Value src, Value bytes) {
    NVVM::CpAsyncBulkGlobalToSharedClusterOp::create(
        b,
        LLVM::AddrSpaceCastOp::create(
            b, kb.ptrType(AddressSpace::SharedCluster), dst),
        src, full, bytes, /*multicastMask=*/Value(), /*l2CacheHint=*/Value());
  };
  auto copyAScales = [&] {
    bulkCopy(slot,
             kb.globalElementPtr(
                 v.aScaleInv, kb.add(kb.mul(kBlock, sizes.aRows), mOffset), 4),
             sizes.aBytes);
  };
  if (mayHaveTilePastM(t))
    kb.ifThen(kb.ult(kb.i32(0), sizes.aBytes), copyAScales);
  else
    copyAScales();
  if (sizes.bBytes) {
    bulkCopy(kb.bytePtr(slot, 4 * t.tileM),
             kb.globalElementPtr(
                 v.bScaleInv, kb.add(kb.mul(kBlock, kb.i32(p.n)), nOffset), 4),
             sizes.bBytes);
    return;
  }
  // B: 128x128 tiles [ceil(N/128), ceil(K/128)]: the scale of each column
  // class, clamped to the last block.
  Value firstBlock = kb.divu(nOffset, kb.i32(kScaleBlock));
  Value offsetInBlock = kb.remu(nOffset, kb.i32(kScaleBlock));
  for (auto [c, bound] : llvm::enumerate(BScaleClasses(t).bounds)) {
    Value block = firstBlock;
    if (bound == kScaleBlock)
      block = kb.add(block, kb.i32(1));
    else if (bound != 0)
      block = arith::SelectOp::create(b, kb.ult(offsetInBlock, kb.i32(bound)),
                                      block, kb.add(block, kb.i32(1)));
    block = kb.minu(block, kb.i32((p.n - 1) / kScaleBlock));
    kb.cpAsync(kb.bytePtr(slot, 4 * (t.tileM + static_cast<int64_t>(c))),
               kb.globalElementPtr(
                   v.bScaleInv,
                   kb.add(kb.mul(block, kb.i32(p.numKBlocks(t.tileK))), kBlock),
                   4),
               4);
  }
  kb.cpAsyncArriveOn(full);
}

/// One thread issues every TMA load, and every copy of blockwise scales.
static void emitTmaProducer(KernelBuilder &kb, const GemmProblem &p,
                            const GemmTiling &t, const KernelValues &v) {
  // With a 2x1 cluster, each CTA loads 1/clusterM of the B tile and
  // multicasts it to the whole cluster; with a 1x2 cluster, 1/clusterN of
  // the A tile.
  int64_t bRows = t.tileN / t.clusterM;
  Value multicastMask;
  Value bRowOffset = kb.i32(0);
  if (getClusterSize(t) > 1)
    multicastMask = arith::ConstantIntOp::create(
        kb.builder(), (1 << getClusterSize(t)) - 1, 16);
  if (t.clusterM > 1)
    bRowOffset = kb.mul(v.clusterRank, kb.i32(bRows));
  Value aRowOffset;
  if (t.clusterN > 1)
    aRowOffset = kb.mul(v.clusterRank, kb.i32(t.tileM / t.clusterN));
  forEachFreeStage(
      kb, p, t, v, [&](const TileCoordinate &coord, Value kBlock, Value stage) {
        Value mOffset = kb.mul(coord.mTile, kb.i32(t.tileM));
        Value nOffset =
            kb.add(kb.mul(coord.nTile, kb.i32(t.tileN)), bRowOffset);
        // A grouped GEMM's B rows: the group's weight in the stacked
        // [G * N, K] view, and its scales (k_grouped: one B, the group's
        // columns).
        Value bRow = nOffset;
        if (coord.group)
          bRow = emitGroupBRow(kb, p, coord.group, nOffset);
        KernelValues groupValues = getGroupValues(kb, p, v, coord);
        Value full = v.ring.fullBarrier(kb, stage);
        // The scales' tile offset (B's without the cluster rank's share).
        Value scaleNOffset = kb.mul(coord.nTile, kb.i32(t.tileN));
        ScaleCopySizes scales;
        if (t.stageScaleBytes)
          scales = getScaleCopySizes(kb, p, t, v, mOffset, scaleNOffset);
        // Out-of-bounds box elements are zero-filled and counted: every stage
        // receives the full box bytes (and the scale copies theirs).
        Value txBytes = kb.i32(getStageBytes(t));
        kb.mbarrierArriveExpectTx(
            full, scales.total ? kb.add(txBytes, scales.total) : txBytes);
        Value aTile =
            kb.bytePtr(v.smem, kb.mul(stage, kb.i32(getStageBytes(t))));
        Value bTile =
            kb.bytePtr(aTile, kb.add(kb.i32(t.tileM * t.tileK),
                                     kb.mul(bRowOffset, kb.i32(t.tileK))));
        Value kOffset = kb.mul(kBlock, kb.i32(t.tileK));
        // The tile's A rows (with a 1x2 cluster this CTA's share of them,
        // multicast); m_masked: A [G, M, K], the rows of the tile's group.
        Value aDst = aTile, aRow = mOffset;
        if (aRowOffset) {
          aDst = kb.bytePtr(aTile, kb.mul(aRowOffset, kb.i32(t.tileK)));
          aRow = kb.add(mOffset, aRowOffset);
        }
        SmallVector<Value, 3> aCoords = {kOffset, aRow};
        if (p.isMasked())
          aCoords.push_back(coord.group);
        kb.tmaLoad(aDst, v.tmaA, aCoords, full,
                   aRowOffset ? multicastMask : Value());
        kb.tmaLoad2d(bTile, v.tmaB, kOffset, bRow, full,
                     t.clusterM > 1 ? multicastMask : Value());
        if (t.stageScaleBytes)
          emitScaleCopies(kb, p, t, groupValues, scales, kBlock,
                          v.scaleSlot(kb, t, stage), mOffset, scaleNOffset,
                          full);
      });
}

/// Beside the B scale copies of more than three column classes
/// (BScaleClasses: tile N 80, 112, 144, 160) the producer's 40 registers
/// spill (ptxas: 4-48 bytes; a masked grouped GEMM's producer also maps each
/// unit to its group, emitMaskedTileOfUnit). It gets 56 (the consumers of a
/// 128-row tile then 224: 56 * 128 + 224 * 256 is the 168 * 384 the CTA
/// holds), or 64 beside one consumer warpgroup (240).
static constexpr size_t kMaxProducerBScaleClasses = 3;

/// The promoted 128x256 tile in column waves (128 promoted and 64 partial
/// registers per consumer thread) spilled 12 bytes with an FP8 result at
/// 40 / 232 (epilogue values ptxas keeps across the K loop); its producer
/// fits in 24: 24 * 128 + 240 * 256 is the CTA's 168 * 384.
static constexpr int64_t kColumnWaveProducerRegisters = 24;
static constexpr int64_t kColumnWaveConsumerRegisters = 240;

/// The setmaxnreg budgets (producer, consumers) of `t`'s kernel.
std::pair<int64_t, int64_t>
hopper::getRegisterBudgets(const GemmProblem &p, const GemmTiling &t) {
  bool oneConsumer = getNumConsumers(t) == 1;
  int64_t consumers = oneConsumer ? kConsumerRegistersOneWarpgroup
                                  : kConsumerRegistersTwoWarpgroups;
  if (hasColumnWaves(p, t))
    return {kColumnWaveProducerRegisters, kColumnWaveConsumerRegisters};
  if (!p.isBlockwise() || p.hasBlockwiseColumnScales() ||
      BScaleClasses(t).bounds.size() <= kMaxProducerBScaleClasses)
    return {kProducerRegisters, consumers};
  return oneConsumer ? std::make_pair(int64_t(64), consumers)
                     : std::make_pair(int64_t(56), int64_t(224));
}

void hopper::emitProducer(KernelBuilder &kb, const GemmProblem &p,
                          const GemmTiling &t, const KernelValues &v) {
  NVVM::SetMaxRegisterOp::create(kb.builder(), getRegisterBudgets(p, t).first,
                                 NVVM::SetMaxRegisterAction::decrease);
  // One thread of the first warp, chosen by elect.sync: ptxas then knows a
  // single thread runs the loop and keeps its values in uniform registers
  // (with `tid == 0` each TMA copy sat in a loop over the active lanes).
  kb.ifThen(kb.ult(v.tid, kb.i32(kWarpThreads)), [&] {
    kb.ifThen(kb.electOneLane(), [&] { emitTmaProducer(kb, p, t, v); });
  });
}
