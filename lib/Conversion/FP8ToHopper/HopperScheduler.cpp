//===- HopperScheduler.cpp - Work of the sm_90a GEMM's CTAs ---------------===//

#include "FP8/Conversion/FP8ToHopper/HopperScheduler.h"
#include "FP8/Conversion/FP8ToHopper/HopperSwapAB.h"

#include <cmath>

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::hopper;

TileCoordinate hopper::emitTileOfUnit(KernelBuilder &kb, const GemmProblem &p,
                                      const GemmTiling &t,
                                      const KernelValues &v, Value unit) {
  // m_masked: only the units with valid rows, group after group.
  TileCoordinate coord =
      p.isMasked()
          ? emitMaskedTileOfUnit(kb, v.groupIndex, v.groupM, p.numGroups,
                                 t.tileM * t.clusterM, getNumNUnits(p, t),
                                 unit)
          : emitGroupedTileCoordinate(kb, unit, v.numMUnits,
                                      getNumNUnits(p, t), t.rasterGroup);
  if (t.clusterM > 1)
    coord.mTile =
        kb.add(kb.mul(coord.mTile, kb.i32(t.clusterM)), v.clusterRank);
  // A 1x2 cluster's second CTA past the last N tile (an odd tile count)
  // computes a tile of zeros and stores nothing of it.
  if (t.clusterN > 1)
    coord.nTile =
        kb.add(kb.mul(coord.nTile, kb.i32(t.clusterN)), v.clusterRank);
  // k_grouped: the tile row's group and that group's K blocks.
  if (p.isKGrouped())
    emitKGroupedTile(kb, v.groupIndex, v.groupM, v.k, t.tileM, t.tileK, coord);
  else if (p.isGrouped() && !p.isMasked())
    emitTileGroup(kb, p, v.groupIndex, t.tileM, coord);
  return coord;
}

Value hopper::emitGroupKEnd(KernelBuilder &kb, const GemmProblem &p,
                            const TileCoordinate &coord,
                            const WorkSegment &segment) {
  if (!coord.group)
    return segment.kEnd;
  return arith::SelectOp::create(
      kb.builder(), emitIsGroupInRange(kb, coord.group, p.numGroups),
      segment.kEnd, segment.kBegin);
}

std::pair<Value, Value> hopper::emitGroupKRange(KernelBuilder &kb,
                                               const GemmProblem &p,
                                               const TileCoordinate &coord,
                                               const WorkSegment &segment) {
  if (p.isKGrouped())
    return {coord.kBlockBegin, coord.kBlockEnd};
  return {segment.kBegin, emitGroupKEnd(kb, p, coord, segment)};
}

/// k_grouped: the group's D [M, N] and per-tensor ([G]) or per-row ([G, M])
/// A scales, at 64-bit offsets (1x128 scales cover all groups' columns).
static KernelValues getKGroupedValues(KernelBuilder &kb, const GemmProblem &p,
                                      KernelValues values, Value group) {
  ImplicitLocOpBuilder &b = kb.builder();
  auto wide = [&](Value x) {
    return arith::ExtUIOp::create(b, b.getI64Type(), x).getResult();
  };
  Value group64 = wide(group);
  Value groupFirstRow =
      arith::MulIOp::create(b, group64, wide(values.groupM));
  values.d = kb.globalElementPtr(values.d, groupFirstRow,
                                 p.n * getByteWidth(p.outElementType));
  if (p.aScale == ScaleMode::Tensor)
    values.aScaleInv = kb.globalElementPtr(values.aScaleInv, group, 4);
  else if (p.aScale == ScaleMode::Row)
    values.aScaleInv = kb.globalElementPtr(values.aScaleInv, groupFirstRow, 4);
  return values;
}

KernelValues hopper::getGroupValues(KernelBuilder &kb, const GemmProblem &p,
                                    const KernelValues &v,
                                    const TileCoordinate &coord) {
  KernelValues values = v;
  Value group = coord.group;
  if (group)
    values.bScaleInv = emitGroupBScales(kb, p, v.bScaleInv, group);
  if (p.isKGrouped())
    return getKGroupedValues(kb, p, values, group);
  if (!p.isMasked())
    return values;
  // The group's [M, N] of D, its per-row ([M]) or 1x128 ([ceil(K/128),
  // roundup(M, 4)]) A scales and an FP8 D's 1x128 scales ([ceil(N/128),
  // roundup(M, 4)]), at 64-bit offsets; its rows end at its count.
  ImplicitLocOpBuilder &b = kb.builder();
  auto wide = [&](Value x) {
    return arith::ExtUIOp::create(b, b.getI64Type(), x).getResult();
  };
  Value group64 = wide(group);
  Value groupFirstRow = arith::MulIOp::create(b, group64, wide(v.groupM));
  // The group's part of an MN-major 1x128 scale tensor of `blocks` blocks:
  // [blocks, roundup(M, 4)] per group.
  auto mnMajorScales = [&](Value scales, int64_t blocks) {
    return kb.globalElementPtr(
        scales,
        arith::MulIOp::create(
            b, group64,
            wide(kb.mul(kb.i32(blocks),
                        kb.mul(kb.ceilDiv(v.groupM, kMNMajorScaleAlignment),
                               kb.i32(kMNMajorScaleAlignment))))),
        4);
  };
  if (values.d)
    values.d = kb.globalElementPtr(v.d, groupFirstRow,
                                   p.n * getByteWidth(p.outElementType));
  if (p.aScale == ScaleMode::Row)
    values.aScaleInv = kb.globalElementPtr(v.aScaleInv, groupFirstRow, 4);
  else if (p.aScale == ScaleMode::Blockwise)
    values.aScaleInv =
        mnMajorScales(v.aScaleInv, p.numKBlocks(kBlockwiseScaleBlock));
  if (p.outQuantization == OutputQuantization::Block1x128)
    values.resultScaleInv = mnMajorScales(
        v.resultScaleInv, llvm::divideCeil(p.n, kBlockwiseScaleBlock));
  values.m = coord.groupRows;
  return values;
}

/// The stream-K block of this CTA's pipeline iteration `iteration`.
static Value getStreamKBlock(KernelBuilder &kb, const KernelValues &v,
                             Value iteration) {
  return kb.add(
      v.scheduleField(kb, StreamKField::Begin),
      kb.sub(iteration, v.scheduleField(kb, StreamKField::FirstIteration)));
}

/// The stream-K segment at pipeline iteration `iteration`.
static WorkSegment getStreamKSegment(KernelBuilder &kb, const GemmProblem &p,
                                     const GemmTiling &t, const KernelValues &v,
                                     Value iteration) {
  Value kBlocks = kb.i32(p.numKBlocks(t.tileK));
  Value block = getStreamKBlock(kb, v, iteration);
  Value tile = kb.divu(block, kBlocks);
  Value tileFirstBlock = kb.mul(tile, kBlocks);
  WorkSegment segment;
  segment.streamK = true;
  segment.unit = kb.add(v.dpUnits(kb), tile);
  segment.kBegin = kb.sub(block, tileFirstBlock);
  segment.kEnd = kb.minu(
      kb.sub(v.scheduleField(kb, StreamKField::End), tileFirstBlock), kBlocks);
  return segment;
}

StreamKTile hopper::getStreamKTileAfter(KernelBuilder &kb, const GemmProblem &p,
                                        const GemmTiling &t,
                                        const KernelValues &v,
                                        Value iterationAfter) {
  Value kBlocks = kb.i32(p.numKBlocks(t.tileK));
  Value last = kb.sub(getStreamKBlock(kb, v, iterationAfter), kb.i32(1));
  Value tile = kb.divu(last, kBlocks);
  Value tileFirstBlock = kb.mul(tile, kBlocks);
  StreamKTile result;
  result.unit = kb.add(v.dpUnits(kb), tile);
  result.tileEndBlock = kb.add(tileFirstBlock, kBlocks);
  result.isLater = arith::CmpIOp::create(
      kb.builder(), arith::CmpIPredicate::ugt,
      v.scheduleField(kb, StreamKField::Begin), tileFirstBlock);
  return result;
}

ValueRange hopper::forEachWorkSegment(
    KernelBuilder &kb, const GemmProblem &p, const GemmTiling &t,
    const KernelValues &v, ValueRange init,
    function_ref<SmallVector<Value>(const WorkSegment &, ValueRange)> body) {
  ValueRange state = kb.forLoop(
      v.firstUnit, v.dpUnits(kb), v.unitStride, init,
      [&](Value unit, ValueRange carried) {
        WorkSegment whole{unit, kb.i32(0), kb.i32(p.numKBlocks(t.tileK))};
        // A K-split cluster: this CTA's share of the tile's K blocks.
        if (t.splitK > 1)
          std::tie(whole.kBegin, whole.kEnd) = emitSplitKRange(kb, p, t, v);
        return body(whole, carried);
      });
  if (!t.streamK)
    return state;
  // The pipeline iteration (carried[0]) tells the stream-K block.
  return kb.whileLoop(
      state,
      [&](ValueRange carried) {
        return kb.ult(getStreamKBlock(kb, v, carried[0]),
                      v.scheduleField(kb, StreamKField::End));
      },
      [&](ValueRange carried) {
        return body(getStreamKSegment(kb, p, t, v, carried[0]), carried);
      });
}

/// The partial sums of a stream-K tile cost about this many K blocks of
/// MMA time per CTA that adds them (a 128x192 f32 tile written by one CTA,
/// read by another, through L2).
static constexpr int64_t kStreamKFixupBlocks = 2;
/// A swap-AB tile's partial sums (64 x tileM f32, 4 KiB at tileM 16) cost
/// less than one K block's B tile (8 KiB from HBM).
static constexpr int64_t kSwapABFixupBlocks = 1;

/// The stream-K schedule (KernelValues::dpUnits and streamK*). When the
/// units do not fill the last wave (W = units mod CTAs > 0), the W tiles'
/// K blocks (W * kBlocks) can be split evenly over `ctas` CTAs of b blocks
/// each, ctas = min(CTAs, W * kBlocks / bMin): the last wave then takes
/// about b + F * ceil(kBlocks / b) blocks of time (F = kStreamKFixupBlocks
/// per partial sum its first CTA adds) instead of kBlocks. bMin =
/// max(4, sqrt(F * kBlocks)) minimizes that where the CTAs suffice. The
/// split is taken when it saves at least a fifth of the last wave;
/// otherwise the last wave runs whole tiles. A swap-AB kernel (memory
/// bound: its CTAs stream B) splits whenever that shortens the last wave.
void hopper::emitStreamKSchedule(KernelBuilder &kb, const GemmProblem &p,
                                 const GemmTiling &t, const KernelValues &v) {
  ImplicitLocOpBuilder &b = kb.builder();
  int64_t kBlocks = p.numKBlocks(t.tileK);
  int64_t fixupBlocks = t.swapAB ? kSwapABFixupBlocks : kStreamKFixupBlocks;
  int64_t minBlocksPerCta = std::max<int64_t>(
      4, static_cast<int64_t>(std::ceil(
             std::sqrt(static_cast<double>(fixupBlocks * kBlocks)))));
  Value tail = kb.remu(v.numUnits, v.unitStride);
  Value blocks = kb.mul(tail, kb.i32(kBlocks));
  Value ctas = kb.minu(v.unitStride, kb.divu(blocks, kb.i32(minBlocksPerCta)));
  auto select = [&](Value cond, Value x, Value y) {
    return arith::SelectOp::create(b, cond, x, y).getResult();
  };
  auto ne0 = [&](Value x) {
    return arith::CmpIOp::create(b, arith::CmpIPredicate::ne, x, kb.i32(0))
        .getResult();
  };
  Value hasCtas = ne0(ctas);
  Value perCta = kb.ceilDiv(blocks, select(hasCtas, ctas, kb.i32(1)));
  Value lastWave = kb.add(
      perCta, kb.mul(kb.i32(fixupBlocks),
                     kb.ceilDiv(kb.i32(kBlocks),
                                select(ne0(perCta), perCta, kb.i32(1)))));
  Value saves = t.swapAB ? kb.ult(lastWave, kb.i32(kBlocks))
                         : arith::CmpIOp::create(b, arith::CmpIPredicate::ule,
                                                 kb.mul(lastWave, kb.i32(5)),
                                                 kb.i32(4 * kBlocks))
                               .getResult();
  Value split = kb.andi(hasCtas, saves);
  Value splitCtas = select(split, ctas, kb.i32(1));
  auto start = [&](Value cta) {
    return kb.divu(kb.mul(cta, blocks), splitCtas);
  };
  Value takesPart = kb.andi(split, kb.ult(v.firstUnit, ctas));
  auto store = [&](StreamKField field, Value value) {
    kb.store(value,
             kb.bytePtr(v.streamKSchedule, 4 * static_cast<int64_t>(field)));
  };
  store(StreamKField::DpUnits,
        select(split, kb.sub(v.numUnits, tail), v.numUnits));
  store(StreamKField::Begin, select(takesPart, start(v.firstUnit), kb.i32(0)));
  store(StreamKField::End,
        select(takesPart, start(kb.add(v.firstUnit, kb.i32(1))), kb.i32(0)));
  store(StreamKField::Ctas, splitCtas);
  store(StreamKField::Blocks, blocks);
  Value dpUnits = select(split, kb.sub(v.numUnits, tail), v.numUnits);
  store(StreamKField::FirstIteration,
        kb.mul(v.ctaUnitsBelow(kb, dpUnits), kb.i32(p.numKBlocks(t.tileK))));
}

Value hopper::packAccumulatorChunk(KernelBuilder &kb, Value sums, int64_t g) {
  ImplicitLocOpBuilder &b = kb.builder();
  Value chunk = LLVM::UndefOp::create(b, VectorType::get({4}, b.getF32Type()));
  for (int64_t e = 0; e < 4; ++e)
    chunk = LLVM::InsertElementOp::create(
        b, chunk, LLVM::ExtractValueOp::create(b, sums, 4 * g + e), kb.i32(e));
  return chunk;
}

Value hopper::addAccumulatorChunk(KernelBuilder &kb, Value acc, Value chunk,
                                  int64_t g) {
  ImplicitLocOpBuilder &b = kb.builder();
  for (int64_t e = 0; e < 4; ++e) {
    int64_t i = 4 * g + e;
    Value sum = arith::AddFOp::create(
        b, LLVM::ExtractValueOp::create(b, acc, i),
        LLVM::ExtractElementOp::create(b, chunk, kb.i32(e)));
    acc = LLVM::InsertValueOp::create(b, acc, sum, i);
  }
  return acc;
}

void hopper::emitStreamKFixup(KernelBuilder &kb, const GemmTiling &t,
                              const KernelValues &v, const StreamKTile &tile,
                              Value sums, Value isSignalThread,
                              function_ref<void(Value)> epilogue) {
  ImplicitLocOpBuilder &b = kb.builder();
  int64_t consumers = getNumConsumers(t) * kWarpgroupThreads;
  auto f32x4 = VectorType::get({4}, b.getF32Type());
  Value consumerThread = kb.sub(v.tid, kb.i32(kWarpgroupThreads));
  auto flag = [&](Value cta) {
    return kb.globalElementPtr(v.workspace, cta, t.workspaceBytesPerCta);
  };
  // Chunk `group` of this thread in `cta`'s slot, after the flag.
  auto chunkPtr = [&](Value cta, int64_t group) {
    Value chunk = kb.add(kb.i32(group * consumers), consumerThread);
    return kb.bytePtr(flag(cta), kb.add(kb.mul(chunk, kb.i32(16)),
                                        kb.i32(kStreamKFlagBytes)));
  };
  int64_t groups = getAccumulatorColumns(t) / 8;
  kb.ifThen(tile.isLater, [&] {
    for (int64_t g = 0; g < groups; ++g)
      kb.store(packAccumulatorChunk(kb, sums, g), chunkPtr(v.firstUnit, g));
    kb.namedBarrier(kConsumerBarrierId, consumers);
    kb.ifThen(isSignalThread, [&] {
      kb.fenceAcqRelGpu();
      kb.storeRelaxedGpu(kb.i32(1), flag(v.firstUnit));
    });
  });
  Value isFirst = arith::XOrIOp::create(b, tile.isLater,
                                        arith::ConstantIntOp::create(b, 1, 1));
  kb.ifThen(isFirst, [&] {
    Value tileEnd = tile.tileEndBlock;
    ValueRange total = kb.whileLoop(
        {kb.add(v.firstUnit, kb.i32(1)), sums},
        [&](ValueRange carried) {
          return kb.ult(v.streamKStart(kb, carried[0]), tileEnd);
        },
        [&](ValueRange carried) {
          Value cta = carried[0];
          kb.ifThen(isSignalThread, [&] {
            kb.whileLoop(
                {},
                [&](ValueRange) {
                  return kb.eq(kb.loadAcquireGpu(flag(cta)), kb.i32(0));
                },
                [](ValueRange) { return SmallVector<Value>{}; });
            kb.storeRelaxedGpu(kb.i32(0), flag(cta));
          });
          kb.namedBarrier(kConsumerBarrierId, consumers);
          Value acc = carried[1];
          for (int64_t g = 0; g < groups; ++g)
            acc = addAccumulatorChunk(kb, acc,
                                      kb.load(f32x4, chunkPtr(cta, g)), g);
          return SmallVector<Value>{kb.add(cta, kb.i32(1)), acc};
        });
    epilogue(total[1]);
  });
}
