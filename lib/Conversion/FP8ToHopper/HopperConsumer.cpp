//===- HopperConsumer.cpp - Consumer warpgroups of the sm_90a GEMM --------===//

#include "FP8/Conversion/FP8ToHopper/HopperConsumerMainloop.h"
#include "FP8/Conversion/FP8ToHopper/HopperEpilogue.h"
#include "FP8/Conversion/FP8ToHopper/HopperMainloop.h"
#include "FP8/Conversion/FP8ToHopper/HopperScheduler.h"
#include "FP8/Conversion/FP8ToHopper/HopperSwapAB.h"
#include "FP8/Conversion/FP8ToHopper/WGMMA.h"
#include "FP8/Conversion/KernelSkeleton/GemmEpilogue.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::hopper;

/// One tile of a grouped GEMM (no stream-K): the K loop, empty for a tile
/// outside every group, and the epilogue with the group's B scales, only
/// for a tile of a group. k_grouped: the K loop over the group's blocks and
/// the epilogue for every tile (zeros for an empty group).
static SmallVector<Value>
emitGroupedTile(KernelBuilder &kb, const GemmProblem &p, const GemmTiling &t,
                const KernelValues &v, const EpilogueThread &thread,
                ConsumerMainloop &mainloop, const WorkSegment &segment,
                Value iteration) {
  TileCoordinate coord = emitTileOfUnit(kb, p, t, v, segment.unit);
  Value inGroup = emitIsGroupInRange(kb, coord.group, p.numGroups);
  auto [kBegin, kEnd] = emitGroupKRange(kb, p, coord, segment);
  auto [results, iterationAfter] =
      mainloop.emit(iteration, kBegin, kEnd, coord.nTile);
  Value result = results[0];
  auto epilogue = [&] {
    // The group again (not kept live across the K loop).
    KernelValues groupValues =
        getGroupValues(kb, p, v, emitTileOfUnit(kb, p, t, v, segment.unit));
    EpilogueThread groupThread = thread;
    if (thread.tensorScale)
      groupThread.tensorScale = emitTensorScale(
          kb, p, p.isKGrouped() ? groupValues.aScaleInv : v.aScaleInv,
          groupValues.bScaleInv);
    emitTileEpilogue(kb, p, t, groupValues, groupThread, segment.unit, result);
  };
  if (p.isKGrouped())
    epilogue();
  else
    kb.ifThen(inGroup, epilogue);
  return {iterationAfter};
}

/// Ping-pong (GemmTiling::pingPong): consumer `consumer` computes the
/// CTA's tiles of its parity (the CTA's j-th tile is consumer j % 2's),
/// whose K blocks are the pipeline iterations [j kBlocks, (j + 1) kBlocks).
/// The consumers issue their tiles' MMAs in turn: each waits for its turn
/// (its turn barrier, kPingPongTurnBarrierId + consumer) before its tile's
/// K loop and gives the turn to the other once the loop's last MMAs are
/// issued (before they are waited for), then runs the epilogue while the
/// other's MMAs run. The turns also keep the consumers' waits on the
/// stages' full barriers in pipeline order: a consumer waiting a whole
/// round of stages ahead of the other would read a barrier's parity of
/// the wrong phase. Consumer 1 gives consumer 0 the
/// first turn; the consumer whose turn would come after the CTA's last
/// tile takes it at the end, so that every arrival meets its wait.
static void emitPingPongTiles(KernelBuilder &kb, const GemmProblem &p,
                              const GemmTiling &t, const KernelValues &v,
                              const EpilogueThread &thread,
                              ConsumerMainloop &mainloop, Value consumer) {
  int64_t kBlocks = p.numKBlocks(t.tileK);
  int64_t turnThreads = 2 * kWarpgroupThreads;
  Value turn = kb.add(kb.i32(kPingPongTurnBarrierId), consumer);
  Value otherTurn =
      kb.add(kb.i32(kPingPongTurnBarrierId), kb.sub(kb.i32(1), consumer));
  kb.ifThen(kb.eq(consumer, kb.i32(1)), [&] {
    kb.namedBarrierArrive(kb.i32(kPingPongTurnBarrierId), turnThreads);
  });
  kb.forLoop(
      kb.add(v.firstUnit, kb.mul(consumer, v.unitStride)), v.numUnits,
      kb.mul(v.unitStride, kb.i32(2)), {kb.mul(consumer, kb.i32(kBlocks))},
      [&](Value unit, ValueRange carried) {
        kb.namedBarrier(turn, turnThreads);
        // (Ping-pong takes fast accumulation: no B block cases, no nTile.)
        auto [results, iterationAfter] = mainloop.emit(
            carried[0], kb.i32(0), kb.i32(kBlocks), /*nTile=*/Value(),
            [&] { kb.namedBarrierArrive(otherTurn, turnThreads); });
        emitTileEpilogue(kb, p, t, v, thread, unit, results);
        // Past the other consumer's tile.
        return SmallVector<Value>{kb.add(iterationAfter, kb.i32(kBlocks))};
      });
  Value tiles = v.ctaUnitsBelow(kb, v.numUnits);
  kb.ifThen(kb.eq(kb.remu(tiles, kb.i32(2)), consumer),
            [&] { kb.namedBarrier(turn, turnThreads); });
}

void hopper::emitConsumer(KernelBuilder &kb, const GemmProblem &p,
                          const GemmTiling &t, const KernelValues &v) {
  ImplicitLocOpBuilder &b = kb.builder();
  NVVM::SetMaxRegisterOp::create(b, getRegisterBudgets(p, t).second,
                                 NVVM::SetMaxRegisterAction::increase);
  Value consumer = kb.sub(kb.divu(v.tid, kb.i32(kWarpgroupThreads)), kb.i32(1));
  // The same read from lane 0, so that ptxas knows it is one value in
  // every lane: the wgmma descriptors built from it then live in uniform
  // registers, where wgmma takes them, instead of being moved there before
  // every MMA. (Only the descriptors use it: with every use of the
  // warpgroup index uniform, ptxas hoists the epilogue's addresses out of
  // the tile loop and spills them.)
  Value uniformConsumer =
      NVVM::ShflOp::create(b, b.getI32Type(), kb.i32(-1), consumer, kb.i32(0),
                           kb.i32(31), NVVM::ShflKind::idx,
                           /*return_value_and_is_valid=*/nullptr);
  Value threadInWarpgroup = kb.remu(v.tid, kb.i32(kWarpgroupThreads));
  Value warp = kb.divu(threadInWarpgroup, kb.i32(kWarpThreads));
  Value lane = kb.remu(v.tid, kb.i32(kWarpThreads));
  // wgmma accumulator fragment (PTX ISA 9.7.15.5.2, m64nNk32 D): element
  // 4j + 2h + e of a thread is row warp*16 + lane/4 + 8h, column
  // 8j + 2*(lane%4) + e of its warpgroup's 64 x N block (the consumer's
  // 64 rows of the tile; with ping-pong its tile's first 64).
  Value laneRow = kb.divu(lane, kb.i32(4));
  Value warpRow = kb.mul(warp, kb.i32(16));
  if (!t.pingPong)
    warpRow = kb.add(kb.mul(consumer, kb.i32(kWgmmaM)), warpRow);
  Value rowInTile = kb.add(warpRow, laneRow);
  Value colInFragment = kb.mul(kb.remu(lane, kb.i32(4)), kb.i32(2));
  // The first thread of the tile's consumers issues the epilogue's TMA
  // stores.
  Value isStoreThread = t.pingPong ? kb.eq(threadInWarpgroup, kb.i32(0))
                                   : kb.eq(v.tid, kb.i32(kWarpgroupThreads));

  EpilogueThread thread;
  thread.rowInTile = rowInTile;
  thread.colInFragment = colInFragment;
  thread.lane = lane;
  thread.isStoreThread = isStoreThread;
  thread.tensorScale = emitTensorScale(kb, p, v.aScaleInv, v.bScaleInv);
  if (t.pingPong) {
    thread.barrierId = kb.add(kb.i32(kPingPongEpilogueBarrierId), consumer);
    thread.barrierThreads = kWarpgroupThreads;
    thread.stagingBuffer =
        kb.bytePtr(v.epilogueBuffer,
                   kb.mul(consumer, kb.i32(getConsumerEpilogueBytes(t))));
  } else {
    thread.barrierId = kb.i32(kConsumerBarrierId);
    thread.barrierThreads = getNumConsumers(t) * kWarpgroupThreads;
    thread.stagingBuffer = v.epilogueBuffer;
  }
  Value smemAddress = kb.sharedAddress(v.smem);
  // Descriptor low words of stage 0's A rows of this warpgroup and of its
  // B tile; a stage's are these plus the stage's offset
  // (emitKMajorSwizzle128BDescriptorLow). Swap-AB: the MMA's A operand is
  // the stage's B tile (its 64 rows) and its B operand the A tile.
  // Ping-pong: the warpgroup's tile is the stage's whole A tile.
  Value aTileAddress =
      t.pingPong
          ? smemAddress
          : kb.add(smemAddress, kb.mul(uniformConsumer,
                                       kb.i32(kWgmmaM * kSwizzle128BRowBytes)));
  Value bTileAddress =
      kb.add(smemAddress, kb.i32(t.tileM * kSwizzle128BRowBytes));
  if (t.swapAB)
    std::swap(aTileAddress, bTileAddress);
  Value aDescriptorLow = emitKMajorSwizzle128BDescriptorLow(kb, aTileAddress);
  Value bDescriptorLow = emitKMajorSwizzle128BDescriptorLow(kb, bTileAddress);
  ConsumerMainloop mainloop(kb, p, t, v, thread, aDescriptorLow,
                            bDescriptorLow);

  // Outstanding stores must finish before the CTA (and its shared memory)
  // goes away.
  auto drainStores = [&] {
    if (t.storesWithTma())
      kb.ifThen(isStoreThread,
                [&] { kb.bulkWaitGroup(0, /*readOnly=*/false); });
  };
  if (t.pingPong) {
    emitPingPongTiles(kb, p, t, v, thread, mainloop, consumer);
    drainStores();
    return;
  }
  forEachWorkSegment(
      kb, p, t, v, {kb.i32(0)},
      [&](const WorkSegment &segment, ValueRange state) {
        if (p.isGrouped())
          return emitGroupedTile(kb, p, t, v, thread, mainloop, segment,
                                 state[0]);
        Value nTile;
        if (mainloop.hasBBlockCases())
          nTile = emitTileOfUnit(kb, p, t, v, segment.unit).nTile;
        auto [results, iterationAfter] =
            mainloop.emit(state[0], segment.kBegin, segment.kEnd, nTile);
        if (t.splitK > 1) {
          emitSplitKReduction(
              kb, t, v, segment.unit, results[0], [&](Value sums) {
                emitTileEpilogue(kb, p, t, v, thread, segment.unit, sums);
              });
          return SmallVector<Value>{iterationAfter};
        }
        if (!segment.streamK) {
          emitTileEpilogue(kb, p, t, v, thread, segment.unit, results);
          return SmallVector<Value>{iterationAfter};
        }
        StreamKTile tile = getStreamKTileAfter(kb, p, t, v, iterationAfter);
        emitStreamKFixup(
            kb, t, v, tile, results[0], isStoreThread, [&](Value sums) {
              emitTileEpilogue(kb, p, t, v, thread, tile.unit, sums);
            });
        return SmallVector<Value>{iterationAfter};
      });
  drainStores();
}
