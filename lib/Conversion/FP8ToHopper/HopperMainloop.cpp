//===- HopperMainloop.cpp - Consumer mainloop of the sm_90a GEMM ----------===//

#include "FP8/Conversion/FP8ToHopper/HopperMainloop.h"
#include "FP8/Conversion/FP8ToHopper/HopperConsumerMainloop.h"
#include "FP8/Conversion/FP8ToHopper/HopperEpilogue.h"
#include "FP8/Conversion/FP8ToHopper/HopperScheduler.h"
#include "FP8/Conversion/FP8ToHopper/HopperSwapAB.h"
#include "FP8/Conversion/FP8ToHopper/HopperTiling.h"
#include "FP8/Conversion/FP8ToHopper/WGMMA.h"
#include "FP8/Conversion/KernelSkeleton/GemmEpilogue.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <array>
#include <numeric>

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::hopper;

/// The B scales of this K block for a thread's fragment columns in tile
/// columns [firstColumn, firstColumn + columns) (1x128 B tiles), from the
/// stage's scale slot: element 2j + e is the scale of tile column
/// firstColumn + 8j + colInFragment + e (the columns of accumulator
/// elements 4j + e and 4j + 2 + e past the first column's); each
/// even-aligned pair is one 8-byte load.
SmallVector<Value> hopper::emitColumnScaleLoads(KernelBuilder &kb,
                                                Value columnScales,
                                                Value colInFragment,
                                                int64_t firstColumn,
                                                int64_t columns) {
  ImplicitLocOpBuilder &b = kb.builder();
  auto f32x2 = VectorType::get({2}, b.getF32Type());
  SmallVector<Value> scales;
  for (int64_t j = firstColumn / 8; j < (firstColumn + columns) / 8; ++j) {
    Value col = kb.add(kb.i32(8 * j), colInFragment);
    Value pair =
        kb.load(f32x2, kb.bytePtr(columnScales, kb.mul(col, kb.i32(4))));
    for (int e = 0; e < 2; ++e)
      scales.push_back(LLVM::ExtractElementOp::create(b, pair, kb.i32(e)));
  }
  return scales;
}

/// The blockwise scales of one K block for a thread's accumulator elements
/// (none for the other recipes): element 4j + 2h + e (row h, column 8j + e
/// of the fragment) is scaled by its row's A scale times its column's B
/// scale.
struct hopper::StageScales {
  std::array<Value, 2> rowScale;
  /// 1x128 B: the column scales' base in the slot, and the scales of the
  /// thread's columns (emitColumnScaleLoads), null until loaded.
  Value columnBase;
  SmallVector<Value> columnScales;
  /// 128x128 B: the row scales times each column class's scale.
  SmallVector<Value> products;
  /// Swap-AB: the scale of each of the thread's accumulator columns
  /// (emitSwapABStageScales); no row scales.
  SmallVector<Value> swapABColumnScales;
};

ConsumerMainloop::ConsumerMainloop(KernelBuilder &kb, const GemmProblem &p,
                                   const GemmTiling &t, const KernelValues &v,
                                   const EpilogueThread &thread,
                                   Value aDescriptorLow, Value bDescriptorLow)
    : kb(kb), b(kb.builder()), p(p), t(t), v(v), thread(thread),
      aDescriptorLow(aDescriptorLow), bDescriptorLow(bDescriptorLow),
      bClasses(t),
      accType(getAccumulatorType(b.getContext(), getAccumulatorColumns(t))),
      waves(getNumWaves(t)) {
  PromotionPlan plan = getPromotionPlan(p, t);
  partColumns = std::move(plan.parts);
  numPartials = plan.partials;
  blockPairs = plan.blockPairs;
}

std::pair<Value, Value> ConsumerMainloop::stageDescriptorLows(Value stage) {
  Value offset =
      kb.mul(stage, kb.i32(getDescriptorLowOffset(getStageBytes(t))));
  return std::make_pair(kb.add(aDescriptorLow, offset),
                        kb.add(bDescriptorLow, offset));
}

/// A stage is free once every consumer warp of the cluster is done with
/// it: one lane of each warp arrives on the stage's empty barrier in every
/// CTA of the cluster (wgmma.wait_group is warpgroup-wide, so the whole warp
/// has finished reading its tiles); with a scale slot, every thread
/// (getConsumerArrivals).
void ConsumerMainloop::releaseStage(Value stage) {
  auto arrive = [&] {
    Value empty = v.ring.emptyBarrier(kb, stage);
    if (getClusterSize(t) == 1) {
      kb.mbarrierArrive(empty);
      return;
    }
    for (int64_t rank = 0; rank < getClusterSize(t); ++rank)
      kb.mbarrierArrive(kb.mapToClusterRank(empty, kb.i32(rank)));
  };
  // Every thread reads the stage's scale slot itself, so every thread
  // arrives (a warp barrier and one lane's arrival order the reads as
  // well, by the PTX memory model, but compute-sanitizer's racecheck
  // reports them; measured no faster, bench/NOTES.md v14).
  if (t.stageScaleBytes)
    arrive();
  else
    kb.ifThen(kb.electOneLane(), arrive);
}

/// The wgmmas of one K block into `acc` (the first one overwriting it when
/// `zeroFirst`), `n` columns of B from `bColumn` on, as one commit group.
Value ConsumerMainloop::issueMmas(Value acc, Value aLow, Value bLow,
                                  int64_t bColumn, int64_t n, bool zeroFirst) {
  for (int64_t s = 0; s < t.tileK / kWgmmaK; ++s) {
    // One byte per FP8 element along K; B's rows are 128 bytes.
    int64_t aStep = getDescriptorLowOffset(s * kWgmmaK);
    int64_t bStep =
        getDescriptorLowOffset(bColumn * kSwizzle128BRowBytes + s * kWgmmaK);
    acc = emitWgmma(kb, acc,
                    emitKMajorSwizzle128BDescriptor(
                        kb, aStep ? kb.add(aLow, kb.i32(aStep)) : aLow),
                    emitKMajorSwizzle128BDescriptor(
                        kb, bStep ? kb.add(bLow, kb.i32(bStep)) : bLow),
                    n, t.swapAB ? p.bElementType : p.aElementType,
                    t.swapAB ? p.aElementType : p.bElementType,
                    /*accumulate=*/!(zeroFirst && s == 0));
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b);
  return acc;
}

/// The scales of a thread's accumulator elements for the K block in
/// `stage` (blockwise), read from the stage's scale slot before the block's
/// MMAs are issued: shared-memory loads issued behind them return only once
/// the MMAs have read their operands. 1x128 B scales of the columns past
/// getEarlyScaleColumns are loaded later (emitPromotedBlock).
StageScales ConsumerMainloop::loadStageScales(Value stage, int64_t wave) {
  StageScales scales;
  if (!p.isBlockwise())
    return scales;
  Value slot = v.scaleSlot(kb, t, stage);
  if (t.swapAB) {
    scales.swapABColumnScales =
        emitSwapABStageScales(kb, t, slot, thread.colInFragment);
    return scales;
  }
  // Wave w's rows are getWaveRows(t) * w further down the tile.
  Value rowScales =
      wave ? kb.bytePtr(slot, 4 * wave * getWaveRows(t)) : slot;
  for (int h = 0; h < 2; ++h)
    scales.rowScale[h] =
        kb.load(b.getF32Type(),
                kb.bytePtr(rowScales, kb.mul(kb.add(thread.rowInTile, kb.i32(8 * h)),
                                        kb.i32(4))));
  Value bScales = kb.bytePtr(slot, 4 * t.tileM);
  if (p.hasBlockwiseColumnScales()) {
    // 1x128 B: one scale per column.
    scales.columnBase = bScales;
    scales.columnScales.resize(t.tileN / 4);
    llvm::copy(emitColumnScaleLoads(kb, bScales, thread.colInFragment, 0,
                                    getEarlyScaleColumns()),
               scales.columnScales.begin());
    return scales;
  }
  // 128x128 B: one scale per column class; the products made once. With
  // the tile's offset in its B block known, a class whose block an
  // earlier class reads shares that class's products.
  for (int64_t c = 0, e = bClasses.bounds.size(); c < e; ++c) {
    int64_t source = c;
    for (int64_t d = 0; bBlockOffset && d < c && source == c; ++d)
      if (bClasses.readsSecondBlock(d, *bBlockOffset) ==
          bClasses.readsSecondBlock(c, *bBlockOffset))
        source = d;
    if (source != c) {
      scales.products.push_back(scales.products[2 * source]);
      scales.products.push_back(scales.products[2 * source + 1]);
      continue;
    }
    Value classScale = kb.load(b.getF32Type(), kb.bytePtr(bScales, 4 * c));
    for (int h = 0; h < 2; ++h)
      scales.products.push_back(
          arith::MulFOp::create(b, scales.rowScale[h], classScale));
  }
  return scales;
}

/// The scale of element i of a thread's accumulator (null without
/// blockwise scales).
Value ConsumerMainloop::getScale(const StageScales &scales, int64_t i) {
  if (!p.isBlockwise())
    return Value();
  int64_t j = i / 4, h = (i % 4) / 2, e = i % 2;
  if (t.swapAB)
    return scales.swapABColumnScales[2 * j + e];
  if (p.hasBlockwiseColumnScales())
    return arith::MulFOp::create(b, scales.rowScale[h],
                                 scales.columnScales[2 * j + e]);
  return scales.products[2 * bClasses.classOfGroup[j] + h];
}

/// A tile wider than 128 columns with 1x128 B scales would hold all its
/// column scales (tile N / 4 registers per thread) beside the promoted and
/// the partial sums through the MMAs: 128x192 spilled 276 bytes. It reads
/// only the first part's before the MMAs and the rest once the first part
/// is promoted, while the last part's MMAs still run: those loads return
/// when the MMAs have read their operands, which the part's wait needs
/// anyway.
int64_t ConsumerMainloop::getEarlyScaleColumns() const {
  if (p.hasBlockwiseColumnScales() && t.tileN > kScaleBlock && waves == 1)
    return partColumns.front();
  return t.tileN;
}

/// final[i] += partial[i - first] * scale(i) for the part's elements,
/// which are consecutive in fragment order: its column groups j have
/// elements 4j .. 4j + 3.
Value ConsumerMainloop::promotePart(Value final, Value partial,
                                    int64_t firstColumn, int64_t columns,
                                    const StageScales &scales) {
  int64_t first = firstColumn / 2;
  for (int64_t i = first; i < first + columns / 2; ++i) {
    Value f = LLVM::ExtractValueOp::create(b, final, i);
    Value x = LLVM::ExtractValueOp::create(b, partial, i - first);
    Value s = getScale(scales, i);
    Value updated = s ? LLVM::FMAOp::create(b, x, s, f).getResult()
                      : arith::AddFOp::create(b, f, x).getResult();
    final = LLVM::InsertValueOp::create(b, final, updated, i);
  }
  return final;
}

void ConsumerMainloop::emitFastBlock(Value kBlock, Value kBegin,
                                     Value iteration, ValueRange accs,
                                     Value aLow, Value bLow,
                                     SmallVector<Value> &next) {
  NVVM::WgmmaFenceAlignedOp::create(b);
  // One wave's A rows are getWaveRows(t) rows of 128 bytes further on;
  // each wave's MMAs are a commit group.
  int64_t waveStep =
      getDescriptorLowOffset(getWaveRows(t) * kSwizzle128BRowBytes);
  for (auto [w, acc] : llvm::enumerate(accs)) {
    Value waveLow = w ? kb.add(aLow, kb.i32(w * waveStep)) : aLow;
    next.push_back(issueMmas(acc, waveLow, bLow, 0, getAccumulatorColumns(t),
                             /*zeroFirst=*/false));
  }
  // Keep this block's MMAs (one group per wave) in flight; the previous
  // block's are done, so its stage is free.
  NVVM::WgmmaWaitGroupSyncOp::create(b, accs.size());
  kb.ifThen(
      arith::CmpIOp::create(b, arith::CmpIPredicate::ugt, kBlock, kBegin),
      [&] { releaseStage(v.ring.stage(kb, kb.sub(iteration, kb.i32(1)))); });
}

void ConsumerMainloop::emitPromotedBlock(Value stage, ValueRange carried,
                                         Value aLow, Value bLow,
                                         SmallVector<Value> &next) {
  StageScales scales = loadStageScales(stage);
  int64_t earlyColumns = getEarlyScaleColumns();
  NVVM::WgmmaFenceAlignedOp::create(b);
  SmallVector<Value> partials;
  int64_t parts = partColumns.size();
  for (int64_t q = 0, column = 0; q < parts; column += partColumns[q++])
    partials.push_back(issueMmas(carried[2 + q], aLow, bLow, column,
                                 partColumns[q],
                                 /*zeroFirst=*/true));
  Value final = carried[1];
  for (int64_t q = 0, column = 0; q < parts; column += partColumns[q++]) {
    if (column >= earlyColumns)
      llvm::copy(emitColumnScaleLoads(kb, scales.columnBase,
                                      thread.colInFragment, column,
                                      partColumns[q]),
                 scales.columnScales.begin() + column / 4);
    NVVM::WgmmaWaitGroupSyncOp::create(b, parts - 1 - q);
    if (q == parts - 1)
      releaseStage(stage);
    final = promotePart(final, partials[q], column, partColumns[q], scales);
  }
  next.push_back(final);
  next.append(partials);
}

/// Both blocks' MMAs are issued before the first is promoted, so its
/// promotion overlaps the second block's MMAs and only the second's is
/// exposed, once a pair; both groups complete within the trip (C7514).
/// The 128-row blockwise tiles wait for both stages and read both blocks'
/// scales before the first block's MMAs: a shared-memory load issued
/// behind the warpgroup's own MMAs returns only once they have read their
/// operands, and the second block's MMAs wait for its scale products
/// (ptxas places them between the first two wgmmas). Read after the first
/// block's MMAs, the paired 128x128 blockwise tile ran 0.89-0.94x the
/// unpaired one on an H200; read first, 0.98-1.07x. The 64-row tiles (one
/// consumer, so the tensor cores idle while it waits for the second stage)
/// ran 0.91-1.01x with the scales read first and keep the block order
/// (bench/NOTES.md, "Scale loads behind a warpgroup's own MMAs").
void ConsumerMainloop::emitPromotedBlocks(
    ArrayRef<std::pair<Value, Value>> stages, ValueRange carried,
    SmallVector<Value> &next) {
  assert(waves == 1 && numPartials == 2 && "one wave, two partials");
  int64_t columns = partColumns.front();
  SmallVector<Value> partials(carried.begin() + 2, carried.begin() + 4);
  SmallVector<StageScales> scales;
  auto wait = [&](std::pair<Value, Value> stageParity) {
    kb.mbarrierWait(v.ring.fullBarrier(kb, stageParity.first),
                    stageParity.second);
  };
  bool scalesFirst = p.isBlockwise() && t.tileM == 128;
  if (scalesFirst) {
    for (auto stageParity : stages) {
      wait(stageParity);
      scales.push_back(loadStageScales(stageParity.first));
    }
  }
  for (auto [u, stageParity] : llvm::enumerate(stages)) {
    if (!scalesFirst)
      wait(stageParity);
    auto [aLow, bLow] = stageDescriptorLows(stageParity.first);
    if (!scalesFirst)
      scales.push_back(loadStageScales(stageParity.first));
    NVVM::WgmmaFenceAlignedOp::create(b);
    partials[u] = issueMmas(partials[u], aLow, bLow, 0, columns,
                            /*zeroFirst=*/true);
  }
  Value final = carried[1];
  for (auto [u, stageParity] : llvm::enumerate(stages)) {
    NVVM::WgmmaWaitGroupSyncOp::create(b, stages.size() - 1 - u);
    releaseStage(stageParity.first);
    final = promotePart(final, partials[u], 0, columns, scales[u]);
  }
  next.push_back(final);
  next.append(partials);
}

/// Several waves per consumer (a 256-row tile), or more column parts than
/// partial accumulators (a 256-column tile): the K block's MMAs run as
/// groups (wave, part) in wave order, each promoted into its wave's sums
/// as it completes. Only one set of partial accumulators fits beside the
/// sums (2 x 64 + 64 of the 232 registers at 256x128, 128 + 64 at
/// 128x256), so group g + partials reuses group g's registers: it is
/// issued as soon as group g is promoted, while the groups between still
/// run, so that the tensor cores always have the next group queued (with a
/// single partial accumulator, the other consumer's). Every group completes
/// within the iteration (C7514: no accumulator in flight across the back
/// edge).
/// With `promotion_parts = 1` a wave is one group over the whole tile N
/// (m64n128k32 at tile N 128): each wgmma reads its A rows once per 128
/// columns instead of per 64, and a consumer's promotion of one wave
/// overlaps only the other consumer's MMAs (DeepGEMM's 256x128 schedule).
void ConsumerMainloop::emitWavePromotedBlock(Value stage, ValueRange carried,
                                             Value aLow, Value bLow,
                                             SmallVector<Value> &next) {
  SmallVector<StageScales> scales;
  for (int64_t w = 0; w < waves; ++w)
    scales.push_back(loadStageScales(stage, w));
  SmallVector<Value> finals(carried.begin() + 1, carried.begin() + 1 + waves);
  SmallVector<Value> partials(carried.begin() + 1 + waves, carried.end());
  int64_t parts = partColumns.size();
  int64_t groups = waves * parts;
  SmallVector<int64_t> firstColumn = {0};
  for (int64_t q = 1; q < parts; ++q)
    firstColumn.push_back(firstColumn.back() + partColumns[q - 1]);
  // One wave's A rows are getWaveRows(t) rows of 128 bytes further on.
  int64_t waveStep =
      getDescriptorLowOffset(getWaveRows(t) * kSwizzle128BRowBytes);
  // Group g takes partial accumulator g % ahead; `ahead` groups in flight.
  int64_t ahead = numPartials;
  auto issue = [&](int64_t g) {
    int64_t w = g / parts, q = g % parts;
    Value waveLow = w ? kb.add(aLow, kb.i32(w * waveStep)) : aLow;
    partials[g % ahead] =
        issueMmas(partials[g % ahead], waveLow, bLow, firstColumn[q],
                  partColumns[q], /*zeroFirst=*/true);
  };
  NVVM::WgmmaFenceAlignedOp::create(b);
  for (int64_t g = 0; g < std::min(ahead, groups); ++g)
    issue(g);
  for (int64_t g = 0; g < groups; ++g) {
    int64_t issued = std::min(g + ahead, groups);
    NVVM::WgmmaWaitGroupSyncOp::create(b, issued - g - 1);
    if (g == groups - 1)
      releaseStage(stage);
    int64_t w = g / parts, q = g % parts;
    finals[w] = promotePart(finals[w], partials[g % ahead], firstColumn[q],
                            partColumns[q], scales[w]);
    if (g + ahead < groups) {
      // The promotion read the registers the next MMAs overwrite.
      NVVM::WgmmaFenceAlignedOp::create(b);
      issue(g + ahead);
    }
  }
  next.append(finals);
  next.append(partials);
}

/// The widest one-wave 128-row promoted tile whose K loop runs two blocks a
/// trip (getBlocksPerTrip): 128x128 (the launch variant of the dense kernels
/// and the masked decode tile), the 144- and 160-column and wave-filling
/// ones; on an H200 the 128x128 tile ran 1.05-1.08x faster blockwise and
/// 1.03-1.07x promoted at M = 256-8192, 128x160 1.04-1.05x blockwise and
/// 1.00-1.03x promoted at M = 256-2048 (bench/NOTES.md, "Two K blocks a
/// trip for the 128-row tiles", "Two-row wave-filling tiles"). Not the
/// 128x192 tile (paired, it spilled 4 bytes and ran 0.98-1.00x) nor with
/// 1x128 B scales (16 bytes spilled beside a 2x1 cluster's).
static constexpr int64_t kMaxPairedTripTileN = 160;

/// K blocks per trip of a consumer's K loop: 2 for the promoted 256-row
/// tiles (two 64-row waves per consumer), 256-column tiles (two 128-column
/// waves) and one-wave 128-row tiles up to kMaxPairedTripTileN columns
/// without an f32 output, with the stage and its barrier parity carried
/// from block to block (no division by the stage count), so that ptxas
/// issues the second block's full-barrier try-wait under the first
/// block's promotion, as in DeepGEMM's unrolled loop: 2-4% where the
/// runtime takes the 256-row tiles on an H100 (bench/NOTES.md,
/// "Mainloop"), 1-4% for the 128x256 tile ("The 128x256 tile in column
/// waves"). 4 a trip measured the same and spilled beside the tensorwise
/// and rowwise epilogues, 2 spilled 8-20 bytes with an f32 output. The
/// 64-row promoted tiles run their blocks in pairs
/// (PromotionPlan::blockPairs); every other kernel runs one block a trip.
static int64_t getBlocksPerTrip(const GemmProblem &p, const GemmTiling &t) {
  bool f32Output = p.outElementType.isF32();
  // The column waves only over an even number of K blocks: with a last
  // block to run alone, the grouped FP8-result kernels spilled 16 bytes.
  bool evenColumnWaves = hasColumnWaves(p, t) && !p.isKGrouped() &&
                         p.numKBlocks(t.tileK) % 2 == 0;
  // (Swap-AB tiles have at most 32 rows.)
  bool narrow = t.tileM == 128 && getNumWaves(t) == 1 &&
                t.tileN <= kMaxPairedTripTileN && !p.hasBlockwiseColumnScales();
  bool paired = getNumWaves(t) > 1 || evenColumnWaves || narrow;
  return p.promoteInterval != 0 && paired && !f32Output ? 2 : 1;
}

/// The 128-row blockwise tiles narrower than a B block whose classes take
/// more than two scales (tile N 48, 80, 96, 112: 8 or 4 cases): on an H200
/// the 128x80 and 128x112 tiles ran 1.02-1.05x, but the 64-row ones
/// 0.99-1.01x and the wider ones (144-192 columns, two blocks a tile) no
/// faster (0.94-1.03x, code 4-8 times the K loop's), bench/NOTES.md "One
/// K loop per B block offset".
bool ConsumerMainloop::hasBBlockCases() const {
  return p.isBlockwise() && p.promoteInterval != 0 && !t.swapAB &&
         !p.hasBlockwiseColumnScales() && t.tileM == 128 &&
         t.tileN < kScaleBlock && bClasses.bounds.size() > 2;
}

std::pair<SmallVector<Value>, Value>
ConsumerMainloop::emit(Value firstIteration, Value kBegin, Value kEnd,
                       Value nTile, function_ref<void()> afterIssue) {
  bool promote = p.promoteInterval != 0;
  Value zero = LLVM::ZeroOp::create(b, accType);
  SmallVector<Value> init = {firstIteration};
  init.append(waves, zero);
  // The partial accumulators: of the first parts, or both of the whole
  // width with blocks in pairs.
  if (promote)
    for (int64_t q = 0; q < numPartials; ++q)
      init.push_back(LLVM::ZeroOp::create(
          b, getAccumulatorType(b.getContext(),
                                partColumns[q % partColumns.size()])));
  // Unrolled, the loop also carries the stage and its parity (last).
  int64_t blocksPerTrip = blockPairs ? 2 : getBlocksPerTrip(p, t);
  if (blocksPerTrip > 1) {
    init.push_back(v.ring.stage(kb, firstIteration));
    init.push_back(v.ring.consumerParity(kb, firstIteration));
  }
  SmallVector<Value> loop;
  if (hasBBlockCases()) {
    // Case i: the tile starts i * g columns into its B block (DeepGEMM
    // unrolls its K loop per count of the tile's columns in the first
    // block alike); the default: 0.
    int64_t g = std::gcd(t.tileN, kScaleBlock);
    Value offset = kb.remu(kb.mul(nTile, kb.i32(t.tileN)), kb.i32(kScaleBlock));
    Value index = arith::IndexCastUIOp::create(b, b.getIndexType(),
                                               kb.divu(offset, kb.i32(g)));
    auto cases = llvm::to_vector(llvm::seq<int64_t>(1, kScaleBlock / g));
    auto switchOp = scf::IndexSwitchOp::create(b, TypeRange(ValueRange(init)),
                                               index, cases, cases.size());
    for (int64_t i = 0; i <= static_cast<int64_t>(cases.size()); ++i) {
      Region &region =
          i ? switchOp.getCaseRegions()[i - 1] : switchOp.getDefaultRegion();
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&region.emplaceBlock());
      bBlockOffset = i * g;
      scf::YieldOp::create(b, emitLoop(kBegin, kEnd, init, blocksPerTrip));
    }
    bBlockOffset.reset();
    loop = SmallVector<Value>(switchOp.getResults());
  } else {
    loop = emitLoop(kBegin, kEnd, init, blocksPerTrip);
  }
  if (!promote) {
    if (afterIssue)
      afterIssue();
    // Drain the last block and free its stage (a grouped GEMM's skipped
    // tiles have none).
    NVVM::WgmmaWaitGroupSyncOp::create(b, 0);
    auto release = [&] {
      releaseStage(v.ring.stage(kb, kb.sub(loop[0], kb.i32(1))));
    };
    if (p.isGrouped())
      kb.ifThen(kb.ult(kBegin, kEnd), release);
    else
      release();
  }
  return {SmallVector<Value>(loop.begin() + 1, loop.begin() + 1 + waves),
          loop[0]};
}

SmallVector<Value> ConsumerMainloop::emitLoop(Value kBegin, Value kEnd,
                                              ValueRange init,
                                              int64_t blocksPerTrip) {
  bool promote = p.promoteInterval != 0;
  bool carryStage = blocksPerTrip > 1;
  // Blocks in pairs: `count` blocks (two a trip, or an odd last block
  // alone) from the carried stage on.
  auto promotedBlocks = [&](ValueRange loopValues, int64_t count) {
    ValueRange carried = loopValues.drop_back(2);
    SmallVector<std::pair<Value, Value>> stages = {
        {loopValues[loopValues.size() - 2], loopValues.back()}};
    auto advance = [&] {
      return v.ring.advance(kb, stages.back().first, stages.back().second);
    };
    while (static_cast<int64_t>(stages.size()) < count)
      stages.push_back(advance());
    SmallVector<Value> next = {kb.add(carried[0], kb.i32(count))};
    emitPromotedBlocks(stages, carried, next);
    auto [nextStage, nextParity] = advance();
    next.push_back(nextStage);
    next.push_back(nextParity);
    return next;
  };
  auto block = [&](Value kBlock, ValueRange loopValues) {
    if (blockPairs)
      return promotedBlocks(loopValues, 1);
    ValueRange carried = loopValues.drop_back(carryStage ? 2 : 0);
    Value iteration = carried[0];
    Value stage = carryStage ? loopValues[loopValues.size() - 2]
                             : v.ring.stage(kb, iteration);
    Value parity = carryStage ? loopValues.back()
                              : v.ring.consumerParity(kb, iteration);
    auto [aLow, bLow] = stageDescriptorLows(stage);
    kb.mbarrierWait(v.ring.fullBarrier(kb, stage), parity);
    SmallVector<Value> next = {kb.add(iteration, kb.i32(1))};
    if (promote && isChained())
      emitWavePromotedBlock(stage, carried, aLow, bLow, next);
    else if (promote)
      emitPromotedBlock(stage, carried, aLow, bLow, next);
    else
      emitFastBlock(kBlock, kBegin, iteration, carried.slice(1, waves), aLow,
                    bLow, next);
    if (carryStage) {
      auto [nextStage, nextParity] = v.ring.advance(kb, stage, parity);
      next.push_back(nextStage);
      next.push_back(nextParity);
    }
    return next;
  };
  ValueRange loop;
  if (blocksPerTrip == 1) {
    loop = kb.forLoop(kBegin, kEnd, kb.i32(1), init, block);
  } else {
    // Whole trips, then the remaining blocks one by one.
    Value trips = kb.divu(kb.sub(kEnd, kBegin), kb.i32(blocksPerTrip));
    Value tripsEnd = kb.add(kBegin, kb.mul(trips, kb.i32(blocksPerTrip)));
    ValueRange afterTrips = kb.forLoop(
        kBegin, tripsEnd, kb.i32(blocksPerTrip), init,
        [&](Value kBlock, ValueRange loopValues) {
          if (blockPairs)
            return promotedBlocks(loopValues, blocksPerTrip);
          SmallVector<Value> values(loopValues);
          for (int64_t u = 0; u < blocksPerTrip; ++u)
            values = block(u ? kb.add(kBlock, kb.i32(u)) : kBlock, values);
          return values;
        });
    loop = kb.forLoop(tripsEnd, kEnd, kb.i32(1), afterTrips, block);
  }
  return llvm::to_vector(loop);
}
