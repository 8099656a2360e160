//===- BlackwellMainloop.cpp - Mainloop of the sm_100a GEMM ---------------===//

#include "FP8/Conversion/FP8ToBlackwell/BlackwellMainloop.h"
#include "FP8/Conversion/FP8ToBlackwell/TCGen05.h"
#include "FP8/Conversion/KernelSkeleton/GemmScheduler.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::blackwell;

ValueRange blackwell::forEachTile(
    KernelBuilder &kb, const GemmProblem &p, const GemmTiling &t,
    const KernelValues &v, ValueRange init,
    function_ref<SmallVector<Value>(Value, Value, ValueRange)> body) {
  return kb.forLoop(
      firstTile(kb, v), v.numTiles, tileStride(kb, v), init,
      [&](Value tile, ValueRange state) {
        if (!p.isGrouped())
          return body(tile, Value(), state);
        // Every role reads the tile's group and skips a tile of none: the
        // roles' counts of stages and accumulators stay in step.
        TileCoordinate coord = emitGroupedTileCoordinate(
            kb, tile, v.numMTiles, t.numNTiles(p.n), t.rasterGroup);
        // m_contiguous only (GemmProblem::get rejects m_masked on sm_100a).
        emitTileGroup(kb, p, v.groupIndex, t.tileM, coord);
        Value group = coord.group;
        return emitIfTileInGroup(
            kb, emitIsGroupInRange(kb, group, p.numGroups), state,
            [&] { return body(tile, group, state); });
      });
}

namespace {
/// Where the producer loads a tile's operands from: the rows of A and B
/// (B's in the stacked [G * N, K] view for a grouped GEMM) and the
/// scale-factor atom rows.
struct TileSources {
  TileCoordinate coord;
  Value mOffset, nOffset, sfbAtomRow;
};
} // namespace

/// The TMA loads of K block `kBlock` of the tile at `src` into `stage`,
/// completing on `full`.
static void emitStageLoads(KernelBuilder &kb, const BlackwellGemm &g,
                           const GemmTiling &t, const KernelValues &v,
                           const TileSources &src, Value kBlock, Value stage,
                           Value full) {
  const GemmProblem &p = g.problem;
  Fp8OperandTile aTile = getATile(g, t), bTile = getBTile(g, t);
  bool pair = isCtaPair(t);
  Value aPtr = kb.bytePtr(v.smem, kb.mul(stage, kb.i32(getCtaStageBytes(t))));
  Value bPtr = kb.bytePtr(aPtr, getCtaTileM(t) * t.tileK);
  Value kOffset = kb.mul(kBlock, kb.i32(t.tileK));
  auto load2d = [&](Value dst, Value map, Value inner, Value outer) {
    if (pair)
      emitTmaLoad(kb, dst, map, {inner, outer}, full, CtaGroup::Two);
    else
      kb.tmaLoad2d(dst, map, inner, outer, full);
  };
  auto load = [&](const Fp8OperandTile &tile, Value dst, Value map,
                  Value mnOffset) {
    if (tile.major == blackwell::OperandMajor::K) {
      load2d(dst, map, kOffset, mnOffset);
      return;
    }
    // Stored [K, MN]: boxes of 128 MN x tile K, one per 128-byte chunk of
    // the tile (Fp8OperandTile's layout).
    for (int64_t j = 0; j < tile.mnExtent / kSwizzle128BRowBytes; ++j)
      load2d(kb.bytePtr(dst, j * kSwizzle128BRowBytes * tile.kExtent), map,
             kb.add(mnOffset, kb.i32(j * kSwizzle128BRowBytes)), kOffset);
  };
  load(aTile, aPtr, v.tmaA, src.mOffset);
  load(bTile, bPtr, v.tmaB, src.nOffset);
  if (!p.isBlockScaled())
    return;
  // The atoms of this 128-K block: 3-D boxes (128 bytes, 4 atom rows,
  // tile / 128 atoms) at K group kBlock.
  Value sfaPtr = kb.bytePtr(v.scaleBuffer,
                            kb.mul(stage, kb.i32(getScaleStageBytes(g, t))));
  Value sfbPtr = kb.bytePtr(sfaPtr, getScaleAtomsA(t) * kMXAtomBytes);
  Value atomRow = kb.mul(kBlock, kb.i32(4));
  emitTmaLoad(kb, sfaPtr, v.aScaleInv,
              {kb.i32(0), atomRow,
               kb.mul(src.coord.mTile, kb.i32(getScaleAtomsA(t)))},
              full);
  Value zero = kb.i32(0);
  Value sfbOuter = kb.mul(src.coord.nTile, kb.i32(getScaleAtomsB(t)));
  if (src.sfbAtomRow)
    sfbOuter = kb.add(sfbOuter, src.sfbAtomRow);
  emitTmaLoad(kb, sfbPtr, v.bScaleInv, {zero, atomRow, sfbOuter}, full);
}

void blackwell::emitProducer(KernelBuilder &kb, const BlackwellGemm &g,
                             const GemmTiling &t, const KernelValues &v) {
  const GemmProblem &p = g.problem;
  bool pair = isCtaPair(t);
  // One elect.sync lane of the producer warp (not `tid == 0`): ptxas then
  // keeps the loop's TMA operands in uniform registers.
  kb.ifThen(kb.electOneLane(), [&] {
    int64_t kBlocks = p.numKBlocks(t.tileK);
    ValueRange last = forEachTile(
        kb, p, t, v, {kb.i32(0)},
        [&](Value tile, Value group, ValueRange state) {
          TileSources src;
          src.coord = emitGroupedTileCoordinate(
              kb, tile, v.numMTiles, t.numNTiles(p.n), t.rasterGroup);
          src.mOffset = kb.mul(src.coord.mTile, kb.i32(t.tileM));
          src.nOffset = kb.mul(src.coord.nTile, kb.i32(t.tileN));
          if (pair) {
            // This CTA's share: 128 rows of A, half of B's rows.
            src.mOffset = kb.add(
                src.mOffset, kb.mul(v.clusterRank, kb.i32(getCtaTileM(t))));
            src.nOffset = kb.add(
                src.nOffset, kb.mul(v.clusterRank, kb.i32(getCtaBRows(t))));
          }
          if (group) {
            // The group's weight and scale atoms.
            src.nOffset = emitGroupBRow(kb, p, group, src.nOffset);
            if (p.isBlockScaled())
              src.sfbAtomRow = emitGroupBScaleAtomRow(kb, p, group);
          }
          ValueRange next = kb.forLoop(
              kb.i32(0), kb.i32(kBlocks), kb.i32(1), {state[0]},
              [&](Value kBlock, ValueRange inner) {
                Value iteration = inner[0];
                Value stage = v.ring.stage(kb, iteration);
                kb.mbarrierWait(v.ring.emptyBarrier(kb, stage),
                                v.ring.producerParity(kb, iteration));
                Value full = v.ring.fullBarrier(kb, stage);
                if (pair) {
                  // Both CTAs' loads complete on the leader's full barrier,
                  // the one its MMA issuer waits on; the leader expects the
                  // pair's bytes (a peer's complete_tx may come first: the
                  // phase cannot complete before the leader's arrival).
                  Value leaderFull = emitPeerBarrier(kb, full, kb.i32(0));
                  kb.ifThen(kb.eq(v.clusterRank, kb.i32(0)), [&] {
                    kb.mbarrierArriveExpectTx(full,
                                              t.clusterM * getCtaStageBytes(t));
                  });
                  full = leaderFull;
                } else {
                  // Out-of-bounds box elements are zero-filled and counted.
                  kb.mbarrierArriveExpectTx(full, getCtaStageBytes(t) +
                                                      getScaleStageBytes(g, t));
                }
                emitStageLoads(kb, g, t, v, src, kBlock, stage, full);
                return SmallVector<Value>{kb.add(iteration, kb.i32(1))};
              });
          return SmallVector<Value>{next[0]};
        });
    if (pair) {
      // The leader's MMAs still read this CTA's stages and their commits
      // still arrive on its empty barriers: wait for every stage's last
      // release before the CTA may leave (the producer tail).
      for (int64_t s = 0; s < t.stages; ++s) {
        Value iteration = kb.add(last[0], kb.i32(s));
        kb.mbarrierWait(v.ring.emptyBarrier(kb, v.ring.stage(kb, iteration)),
                        v.ring.producerParity(kb, iteration));
      }
    }
  });
}

void blackwell::emitMmaIssuer(KernelBuilder &kb, const BlackwellGemm &g,
                              const GemmTiling &t, const KernelValues &v,
                              Value tmemBase) {
  ImplicitLocOpBuilder &b = kb.builder();
  const GemmProblem &p = g.problem;
  Fp8OperandTile aTile = getATile(g, t), bTile = getBTile(g, t);
  bool mx = p.isBlockScaled();
  uint32_t instrDescriptor = static_cast<uint32_t>(expectEncoded(
      mx ? encodeInstrDescriptor(getBlockScaledInstrDescriptor(g, t))
         : encodeInstrDescriptor(getInstrDescriptor(g, t)),
      "instruction descriptor"));
  int64_t accStages = getAccumulatorStages(g, t);
  std::optional<BlockScaledTmemPlan> plan;
  if (mx)
    plan = getBlockScaledTmemPlan(t, accStages);
  Value scaleAddress = mx ? kb.sharedAddress(v.scaleBuffer) : Value();
  int64_t kBlocks = p.numKBlocks(t.tileK);
  Value smemAddress = kb.sharedAddress(v.smem);
  // One thread of the warp issues every MMA and commit (tcgen05.commit
  // tracks the MMAs of the issuing thread); the whole warp waits.
  Value isIssuer = emitElectOne(kb);
  Value trueValue = arith::ConstantIntOp::create(b, 1, 1);
  CtaGroup group = getCtaGroup(t);
  // The pair's commits arrive on the barrier at the same offset in both
  // CTAs.
  auto commit = [&](Value barrier) {
    if (isCtaPair(t))
      emitCommitMulticast(kb, barrier, /*ctaMask=*/0b11);
    else
      emitCommit(kb, barrier);
  };
  forEachTile(
      kb, p, t, v, {kb.i32(0), kb.i32(0)},
      [&](Value, Value, ValueRange state) {
        Value iterationIn = state[0];
        Value tileCount = state[1];
        Value accStage = kb.remu(tileCount, kb.i32(accStages));
        Value accRound = kb.divu(tileCount, kb.i32(accStages));
        // Wait until the epilogue has read this accumulator (the first
        // round passes at once).
        kb.mbarrierWait(barrierAt(kb, v.accEmptyBase, accStage),
                        kb.andi(kb.add(accRound, kb.i32(1)), kb.i32(1)));
        emitFenceAfterThreadSync(kb);
        Value d = emitTmemAddress(kb, tmemBase, {},
                                  kb.mul(accStage, kb.i32(t.tileN)));
        ValueRange loop = kb.forLoop(
            kb.i32(0), kb.i32(kBlocks), kb.i32(1), {iterationIn},
            [&](Value kBlock, ValueRange carried) {
              Value iteration = carried[0];
              Value stage = v.ring.stage(kb, iteration);
              kb.mbarrierWait(v.ring.fullBarrier(kb, stage),
                              v.ring.consumerParity(kb, iteration));
              emitFenceAfterThreadSync(kb);
              Value stageAddress = kb.add(
                  smemAddress, kb.mul(stage, kb.i32(getCtaStageBytes(t))));
              Value aAddress = stageAddress;
              Value bAddress =
                  kb.add(stageAddress, kb.i32(getCtaTileM(t) * t.tileK));
              Value firstBlock = kb.eq(kBlock, kb.i32(0));
              Value accumulate =
                  arith::XOrIOp::create(b, firstBlock, trueValue);
              kb.ifThen(isIssuer, [&] {
                if (mx) {
                  // The stage's atoms into its TMEM scale slot (lane 0;
                  // warpx4 fills all four lane quarters). tcgen05.cp ->
                  // tcgen05.mma of this thread is a pipelined pair: no
                  // fence between them.
                  Value atoms =
                      kb.add(scaleAddress,
                             kb.mul(stage, kb.i32(getScaleStageBytes(g, t))));
                  Value sfaColumn =
                      kb.add(kb.i32(plan->scaleAColumn),
                             kb.mul(stage, kb.i32(plan->scaleAColumnsPerSlot)));
                  Value sfbColumn =
                      kb.add(kb.i32(plan->scaleBColumn),
                             kb.mul(stage, kb.i32(plan->scaleBColumnsPerSlot)));
                  for (int64_t j = 0; j < getScaleAtomsA(t); ++j)
                    emitScaleFactorCopy(
                        kb,
                        emitTmemAddress(
                            kb, tmemBase, {},
                            kb.add(sfaColumn,
                                   kb.i32(j * sf_atom::kTmemColumnsPerAtom))),
                        kb.add(atoms, kb.i32(j * kMXAtomBytes)));
                  Value sfbAtoms =
                      kb.add(atoms, kb.i32(getScaleAtomsA(t) * kMXAtomBytes));
                  for (int64_t j = 0; j < getScaleAtomsB(t); ++j)
                    emitScaleFactorCopy(
                        kb,
                        emitTmemAddress(
                            kb, tmemBase, {},
                            kb.add(sfbColumn,
                                   kb.i32(j * sf_atom::kTmemColumnsPerAtom))),
                        kb.add(sfbAtoms, kb.i32(j * kMXAtomBytes)));
                  Value scaleA = emitTmemAddress(kb, tmemBase, {}, sfaColumn);
                  Value scaleB = emitTmemAddress(kb, tmemBase, {}, sfbColumn);
                  for (int64_t s = 0; s < t.tileK / kMmaK; ++s) {
                    // K step s of the stage's K group reads byte s of each
                    // scale cell.
                    unsigned id = selectScaleFactor(s).scaleFactorId;
                    uint32_t idesc = static_cast<uint32_t>(expectEncoded(
                        withScaleFactorIds(instrDescriptor, id, id),
                        "scale factor IDs"));
                    emitMmaBlockScaled(
                        kb, d, emitOperandDescriptor(kb, aAddress, aTile, s),
                        emitOperandDescriptor(kb, bAddress, bTile, s), idesc,
                        s == 0 ? accumulate : trueValue, scaleA, scaleB);
                  }
                } else {
                  for (int64_t s = 0; s < t.tileK / kMmaK; ++s)
                    emitMmaF8F6F4(kb, d,
                                  emitOperandDescriptor(kb, aAddress, aTile, s),
                                  emitOperandDescriptor(kb, bAddress, bTile, s),
                                  instrDescriptor,
                                  s == 0 ? accumulate : trueValue, group);
                }
                // The stage is free once these MMAs have read it.
                commit(v.ring.emptyBarrier(kb, stage));
              });
              return SmallVector<Value>{kb.add(iteration, kb.i32(1))};
            });
        // The accumulator is complete once every MMA of the tile is.
        kb.ifThen(isIssuer,
                  [&] { commit(barrierAt(kb, v.accFullBase, accStage)); });
        return SmallVector<Value>{loop[0], kb.add(tileCount, kb.i32(1))};
      });
}
