//===- HopperGemm.cpp - Warp-specialized FP8 GEMM for sm_90a --------------===//
//
// A persistent kernel: CTAs stride over output tiles (grouped raster order).
// Warpgroup 0 is the producer: one thread issues the TMA loads of A and B
// K-blocks into a ring of shared-memory stages. Warpgroups 1.. are
// consumers: each owns 64 rows of the tile and issues wgmma.mma_async
// m64nNk32 over the stage, then frees it. Promoted accumulation moves the
// partial sums of every 128-K block into an f32 accumulator (scaled by the
// blockwise scales: per row of A, and per 128x128 tile or per column of B)
// with FMAs on the CUDA cores. The epilogue applies the
// remaining scales, bias and C, converts, and stores.
//
//===----------------------------------------------------------------------===//

#include "FP8/Conversion/FP8ToHopper/HopperGemm.h"
#include "FP8/Conversion/FP8ToHopper/WGMMA.h"
#include "FP8/Conversion/KernelSkeleton/KernelBuilder.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::hopper;

/// setmaxnreg budgets (PTX ISA 9.7.19.5): the producer only issues TMA, the
/// consumers hold the accumulators. 40 * 128 + 232 * 256 <= 64K registers.
static constexpr int64_t kProducerRegisters = 40;
static constexpr int64_t kConsumerRegistersTwoWarpgroups = 232;
static constexpr int64_t kConsumerRegistersOneWarpgroup = 240;
static constexpr int64_t kMaxStages = 8;
/// 128x128 blockwise B scales cover 128 N rows; one scale per tile needs
/// tile N 128.
static constexpr int64_t kScaleBlock = kBlockwiseScaleBlock;
/// Candidate tile N for the heuristic, largest first. With a TMA-store
/// epilogue the tile is a whole number of 128-byte store boxes.
static constexpr int64_t kTileNCandidates[] = {256, 224, 192, 160, 128};
/// Named barrier among the consumer warpgroups (0 is __syncthreads).
static constexpr int64_t kConsumerBarrierId = 1;

int64_t hopper::getDynamicSharedMemoryBytes(const GemmTiling &t) {
  return t.stages * t.stageBytes() + t.epilogueBytes() +
         PipelineRing::barrierBytes(t.stages);
}

static int64_t pickTileN(int64_t n, int64_t storeBoxColumns) {
  int64_t best = 0;
  int64_t bestPadded = INT64_MAX;
  for (int64_t candidate : kTileNCandidates) {
    if (storeBoxColumns && candidate % storeBoxColumns != 0)
      continue;
    int64_t padded = (n + candidate - 1) / candidate * candidate;
    if (padded < bestPadded) {
      best = candidate;
      bestPadded = padded;
    }
  }
  return best;
}

FailureOr<GemmTiling> hopper::selectGemmTiling(ScaledMatmulOp op,
                                               const GemmProblem &p,
                                               GemmConfigAttr config) {
  bool promote = p.promoteInterval != 0;
  int64_t outputBytes = p.outElementType.getIntOrFloatBitWidth() / 8;
  // f32 outputs (wgrad) and accumulate-into-C keep the direct stores: their
  // staging buffer would halve the pipeline depth.
  bool canStageOutput = outputBytes == 2 && !p.accumulateIntoC;
  GemmTiling t;
  if (config) {
    t = getGemmTiling(config, outputBytes, canStageOutput);
  } else {
    t.outputBytes = outputBytes;
    t.tmaStoreEpilogue = canStageOutput;
    t.tileN = promote ? kScaleBlock
                      : pickTileN(p.n, canStageOutput ? t.storeBoxColumns() : 0);
    int64_t available = kMaxDynamicSharedMemoryBytes - t.epilogueBytes() -
                        PipelineRing::barrierBytes(kMaxStages);
    t.stages = std::min<int64_t>(kMaxStages, available / t.stageBytes());
  }

  if (t.tileM != 64 && t.tileM != 128)
    return op.emitOpError() << "the sm_90a kernels take tile M 64 or 128 (one "
                               "or two consumer warpgroups), got "
                            << t.tileM;
  if (p.isBlockwise() && !p.hasBlockwiseColumnScales() &&
      t.tileN != kScaleBlock)
    return op.emitOpError() << "the sm_90a blockwise kernels apply one B "
                               "scale per tile: expected tile N "
                            << kScaleBlock << ", got " << t.tileN;
  if (promote && t.tileN > kScaleBlock)
    return op.emitOpError()
           << "promoted accumulation keeps two f32 accumulators of tile N / 2 "
              "registers per thread: expected tile N <= "
           << kScaleBlock << ", got " << t.tileN;
  if (t.clusterN != 1 || (t.clusterM != 1 && t.clusterM != 2))
    return op.emitOpError() << "the sm_90a kernels take clusters of 1x1 or "
                               "2x1 (two M tiles sharing a multicast B tile), "
                               "got "
                            << t.clusterM << "x" << t.clusterN;
  if (t.clusterM == 2 && (t.tileN / 2) % 8 != 0)
    return op.emitOpError() << "a 2x1 cluster splits the B tile in halves of "
                               "whole 8-row core matrices: expected tile N a "
                               "multiple of 16, got "
                            << t.tileN;
  int64_t smem = getDynamicSharedMemoryBytes(t);
  if (smem > kMaxDynamicSharedMemoryBytes)
    return op.emitOpError() << "the kernel configuration needs " << smem
                            << " bytes of shared memory, more than the "
                            << kMaxDynamicSharedMemoryBytes
                            << " sm_90a offers: use fewer stages or a smaller "
                               "tile";
  return t;
}

namespace {
/// The values the producer and consumer code share.
struct KernelValues : GemmKernelParams {
  Value tid;
  Value smem;
  /// The output staging buffer (TMA-store epilogue).
  Value epilogueBuffer;
  /// Work is scheduled in units of `clusterM` vertically adjacent tiles
  /// (one per CTA of the cluster, sharing the B tile).
  Value numMUnits;
  Value numUnits;
  Value clusterRank;  ///< 0 without a cluster
  Value firstUnit;    ///< this CTA's cluster index
  Value unitStride;   ///< number of clusters
  PipelineRing ring;
};

/// The tile of `unit` that this CTA computes.
static TileCoordinate emitTileOfUnit(KernelBuilder &kb, const GemmProblem &p,
                                     const GemmTiling &t, const KernelValues &v,
                                     Value unit) {
  TileCoordinate coord = emitGroupedTileCoordinate(
      kb, unit, v.numMUnits, t.numNTiles(p.n), t.rasterGroup);
  if (t.clusterM > 1)
    coord.mTile = kb.add(kb.mul(coord.mTile, kb.i32(t.clusterM)), v.clusterRank);
  return coord;
}
} // namespace

static void emitProducer(KernelBuilder &kb, const GemmProblem &p,
                         const GemmTiling &t, const KernelValues &v) {
  ImplicitLocOpBuilder &b = kb.builder();
  NVVM::SetMaxRegisterOp::create(b, kProducerRegisters,
                                 NVVM::SetMaxRegisterAction::decrease);
  // One thread issues every TMA load.
  kb.ifThen(kb.eq(v.tid, kb.i32(0)), [&] {
    int64_t kBlocks = p.numKBlocks(t.tileK);
    // With a cluster, each CTA loads 1/clusterM of the B tile and multicasts
    // it to the whole cluster.
    int64_t bRows = t.tileN / t.clusterM;
    Value multicastMask;
    Value bRowOffset = kb.i32(0);
    if (t.clusterM > 1) {
      multicastMask = arith::ConstantIntOp::create(
          kb.builder(), (1 << t.clusterM) - 1, 16);
      bRowOffset = kb.mul(v.clusterRank, kb.i32(bRows));
    }
    kb.forLoop(
        v.firstUnit, v.numUnits, v.unitStride, {kb.i32(0)},
        [&](Value unit, ValueRange state) {
          TileCoordinate coord = emitTileOfUnit(kb, p, t, v, unit);
          Value mOffset = kb.mul(coord.mTile, kb.i32(t.tileM));
          Value nOffset =
              kb.add(kb.mul(coord.nTile, kb.i32(t.tileN)), bRowOffset);
          ValueRange next = kb.forLoop(
              kb.i32(0), kb.i32(kBlocks), kb.i32(1), {state[0]},
              [&](Value kBlock, ValueRange inner) {
                Value iteration = inner[0];
                Value stage = v.ring.stage(kb, iteration);
                kb.mbarrierWait(v.ring.emptyBarrier(kb, stage),
                                v.ring.producerParity(kb, iteration));
                Value full = v.ring.fullBarrier(kb, stage);
                // Out-of-bounds box elements are zero-filled and counted:
                // every stage receives the full box bytes.
                kb.mbarrierArriveExpectTx(full, t.stageBytes());
                Value aTile =
                    kb.bytePtr(v.smem, kb.mul(stage, kb.i32(t.stageBytes())));
                Value bTile = kb.bytePtr(
                    aTile, kb.add(kb.i32(t.tileM * t.tileK),
                                  kb.mul(bRowOffset, kb.i32(t.tileK))));
                Value kOffset = kb.mul(kBlock, kb.i32(t.tileK));
                kb.tmaLoad2d(aTile, v.tmaA, kOffset, mOffset, full);
                kb.tmaLoad2d(bTile, v.tmaB, kOffset, nOffset, full,
                             multicastMask);
                return SmallVector<Value>{kb.add(iteration, kb.i32(1))};
              });
          return SmallVector<Value>{next[0]};
        });
  });
}

/// The B scales of this K block for a thread's fragment columns, 1x128 B
/// tiles stored MN-major [ceil(K/128), N] (N % 16 == 0, so that is
/// roundup(N, 4)): element 2j + e is the scale of
/// column nOffset + 8j + colInFragment + e (the columns of accumulator
/// elements 4j + e and 4j + 2 + e). Each even-aligned pair is one 8-byte
/// load; past N (a partial last tile) the loads are clamped to the last pair,
/// whose columns are never stored.
static SmallVector<Value> emitColumnScaleLoads(KernelBuilder &kb,
                                               const GemmProblem &p,
                                               const GemmTiling &t,
                                               const KernelValues &v,
                                               Value kBlock, Value nOffset,
                                               Value colInFragment) {
  ImplicitLocOpBuilder &b = kb.builder();
  auto f32x2 = VectorType::get({2}, b.getF32Type());
  bool guardColumns = p.n % t.tileN != 0;
  Value blockStart = kb.mul(kBlock, kb.i32(p.n));
  SmallVector<Value> scales;
  for (int64_t j = 0; j < t.tileN / 8; ++j) {
    Value col = kb.add(nOffset, kb.add(kb.i32(8 * j), colInFragment));
    if (guardColumns)
      col = kb.minu(col, kb.i32(p.n - 2));
    Value pair = kb.load(
        f32x2, kb.globalElementPtr(v.bScaleInv, kb.add(blockStart, col), 4));
    for (int e = 0; e < 2; ++e)
      scales.push_back(LLVM::ExtractElementOp::create(b, pair, kb.i32(e)));
  }
  return scales;
}

/// final += partial * scale, element-wise over a thread's accumulator; the
/// scale of element i depends on its row (i % 4 < 2: first row of the pair)
/// and, with `columnScales` (1x128 B tiles), on its column: element
/// 4j + 2h + e is scaled by rowScale_h * columnScales[2j + e].
static Value emitPromotion(KernelBuilder &kb, Value final, Value partial,
                           Value rowScale0, Value rowScale1,
                           ArrayRef<Value> columnScales, int64_t tileN) {
  ImplicitLocOpBuilder &b = kb.builder();
  for (int64_t i = 0; i < tileN / 2; ++i) {
    Value f = LLVM::ExtractValueOp::create(b, final, i);
    Value x = LLVM::ExtractValueOp::create(b, partial, i);
    Value updated;
    if (rowScale0) {
      Value scale = (i % 4) < 2 ? rowScale0 : rowScale1;
      if (!columnScales.empty())
        scale = arith::MulFOp::create(b, scale,
                                      columnScales[2 * (i / 4) + i % 2]);
      updated = LLVM::FMAOp::create(b, x, scale, f);
    } else {
      updated = arith::AddFOp::create(b, f, x);
    }
    final = LLVM::InsertValueOp::create(b, final, updated, i);
  }
  return final;
}

static int64_t getByteWidth(Type t) { return t.getIntOrFloatBitWidth() / 8; }

/// Converts the f32 pair to the output type and stores it at `ptr`.
static void storePair(KernelBuilder &kb, Value v0, Value v1, Type outType,
                      Value ptr) {
  ImplicitLocOpBuilder &b = kb.builder();
  auto f32x2 = VectorType::get({2}, b.getF32Type());
  Value vec = LLVM::UndefOp::create(b, f32x2);
  vec = LLVM::InsertElementOp::create(b, vec, v0, kb.i32(0));
  vec = LLVM::InsertElementOp::create(b, vec, v1, kb.i32(1));
  if (outType.isF32()) {
    kb.store(vec, ptr);
    return;
  }
  Value narrow =
      arith::TruncFOp::create(b, VectorType::get({2}, outType), vec);
  kb.store(LLVM::BitcastOp::create(b, b.getI32Type(), narrow), ptr);
}

/// The scaled (+ bias) output values of a thread's fragment, in fragment
/// order, ready to be stored.
static SmallVector<Value> emitEpilogueValues(KernelBuilder &kb,
                                             const GemmProblem &p,
                                             const GemmTiling &t,
                                             const KernelValues &v,
                                             Value result, Value rows[2],
                                             Value nOffset, Value colInFragment,
                                             Value tensorScale) {
  ImplicitLocOpBuilder &b = kb.builder();
  Value mLast = kb.sub(v.m, kb.i32(1));
  bool guardColumns = p.n % t.tileN != 0;
  Value rowScale[2];
  if (p.aScale == ScaleMode::Row)
    for (int h = 0; h < 2; ++h)
      rowScale[h] = kb.loadF32(v.aScaleInv, kb.minu(rows[h], mLast));
  SmallVector<Value> values(t.tileN / 2);
  for (int64_t j = 0; j < t.tileN / 8; ++j) {
    Value col = kb.add(nOffset, kb.add(kb.i32(8 * j), colInFragment));
    // Columns past N (a partial last tile) read clamped, store nothing.
    Value colRead = guardColumns ? kb.minu(col, kb.i32(p.n - 2)) : col;
    Value colScale[2], biasValue[2];
    for (int e = 0; e < 2; ++e) {
      Value c = e ? kb.add(colRead, kb.i32(1)) : colRead;
      if (p.bScale == ScaleMode::Row)
        colScale[e] = kb.loadF32(v.bScaleInv, c);
      if (p.biasElementType) {
        Value x = kb.load(p.biasElementType,
                          kb.globalElementPtr(v.bias, c,
                                           getByteWidth(p.biasElementType)));
        biasValue[e] = p.biasElementType.isF32()
                           ? x
                           : arith::ExtFOp::create(b, b.getF32Type(), x);
      }
    }
    for (int h = 0; h < 2; ++h) {
      for (int e = 0; e < 2; ++e) {
        int64_t i = 4 * j + 2 * h + e;
        Value x = LLVM::ExtractValueOp::create(b, result, i);
        if (tensorScale)
          x = arith::MulFOp::create(b, x, tensorScale);
        if (rowScale[h])
          x = arith::MulFOp::create(b, x, rowScale[h]);
        if (colScale[e])
          x = arith::MulFOp::create(b, x, colScale[e]);
        if (biasValue[e])
          x = arith::AddFOp::create(b, x, biasValue[e]);
        if (p.activation)
          x = emitActivation(kb, *p.activation, x);
        values[i] = x;
      }
    }
  }
  return values;
}

/// Each thread stores its (row, column pair) fragments to global memory,
/// guarded against the M and N edges, adding C first when accumulating.
static void emitDirectStores(KernelBuilder &kb, const GemmProblem &p,
                             const GemmTiling &t, const KernelValues &v,
                             ArrayRef<Value> values, Value rows[2],
                             Value nOffset, Value colInFragment) {
  ImplicitLocOpBuilder &b = kb.builder();
  bool guardColumns = p.n % t.tileN != 0;
  Value n = kb.i32(p.n);
  Value rowInBounds[2] = {kb.ult(rows[0], v.m), kb.ult(rows[1], v.m)};
  int64_t outBytes = getByteWidth(p.outElementType);
  for (int64_t j = 0; j < t.tileN / 8; ++j) {
    Value col = kb.add(nOffset, kb.add(kb.i32(8 * j), colInFragment));
    for (int h = 0; h < 2; ++h) {
      Value pair[2] = {values[4 * j + 2 * h], values[4 * j + 2 * h + 1]};
      Value inBounds = rowInBounds[h];
      if (guardColumns)
        inBounds = kb.andi(inBounds, kb.ult(col, n));
      kb.ifThen(inBounds, [&] {
        Value row64 = arith::ExtUIOp::create(b, b.getI64Type(), rows[h]);
        Value col64 = arith::ExtUIOp::create(b, b.getI64Type(), col);
        Value index = arith::AddIOp::create(
            b, arith::MulIOp::create(b, row64, kb.i64(p.n)), col64);
        if (p.accumulateIntoC) {
          auto f32x2 = VectorType::get({2}, b.getF32Type());
          Value cPair = kb.load(f32x2, kb.globalElementPtr(v.c, index, 4));
          for (int e = 0; e < 2; ++e)
            pair[e] = arith::AddFOp::create(
                b, pair[e],
                LLVM::ExtractElementOp::create(b, cPair, kb.i32(e)));
        }
        storePair(kb, pair[0], pair[1], p.outElementType,
                  kb.globalElementPtr(v.d, index, outBytes));
      });
    }
  }
}

/// The consumers write the tile to the shared staging buffer in the layout
/// of the output tensor map's 128-byte swizzled boxes (box b holds columns
/// [64b, 64b + 64) of all tile rows; within a 128-byte row, 16-byte chunk c
/// lives at chunk c ^ (row % 8)), then one thread stores the boxes with TMA.
/// The swizzle makes the fragment writes bank-conflict free: the 8 rows a
/// warp writes per instruction land in 8 different chunks.
static void emitTmaStoreEpilogue(KernelBuilder &kb, const GemmProblem &p,
                                 const GemmTiling &t, const KernelValues &v,
                                 ArrayRef<Value> values, Value rowsInTile[2],
                                 Value lane, Value isStoreThread,
                                 Value mOffset, Value nOffset) {
  ImplicitLocOpBuilder &b = kb.builder();
  int64_t consumers = t.numConsumers() * kWarpgroupThreads;
  int64_t boxColumns = t.storeBoxColumns();
  int64_t boxBytes = t.tileM * kSwizzle128BRowBytes;
  // The previous tile's stores must have read the buffer before it is
  // overwritten.
  kb.ifThen(isStoreThread, [&] { kb.bulkWaitGroup(0, /*readOnly=*/true); });
  kb.namedBarrier(kConsumerBarrierId, consumers);
  Value swizzle = kb.divu(lane, kb.i32(4)); // == row % 8 for both rows
  Value inChunk = kb.mul(kb.remu(lane, kb.i32(4)), kb.i32(4));
  for (int h = 0; h < 2; ++h) {
    Value rowBase = kb.add(kb.mul(rowsInTile[h], kb.i32(kSwizzle128BRowBytes)),
                           inChunk);
    for (int64_t j = 0; j < t.tileN / 8; ++j) {
      int64_t box = (8 * j) / boxColumns;
      int64_t chunk = j % (kSwizzle128BRowBytes / 16);
      Value offset = kb.add(
          rowBase,
          kb.add(kb.i32(box * boxBytes),
                 kb.mul(arith::XOrIOp::create(b, kb.i32(chunk), swizzle),
                        kb.i32(16))));
      storePair(kb, values[4 * j + 2 * h], values[4 * j + 2 * h + 1],
                p.outElementType, kb.bytePtr(v.epilogueBuffer, offset));
    }
  }
  kb.fenceProxyAsyncShared();
  kb.namedBarrier(kConsumerBarrierId, consumers);
  kb.ifThen(isStoreThread, [&] {
    for (int64_t box = 0; box < t.tileN / boxColumns; ++box)
      kb.tmaStore2d(v.tmaD, kb.bytePtr(v.epilogueBuffer, box * boxBytes),
                    kb.add(nOffset, kb.i32(box * boxColumns)), mOffset);
    kb.bulkCommitGroup();
  });
}

static void emitConsumer(KernelBuilder &kb, const GemmProblem &p,
                         const GemmTiling &t, const KernelValues &v) {
  ImplicitLocOpBuilder &b = kb.builder();
  NVVM::SetMaxRegisterOp::create(b,
                                 t.numConsumers() == 2
                                     ? kConsumerRegistersTwoWarpgroups
                                     : kConsumerRegistersOneWarpgroup,
                                 NVVM::SetMaxRegisterAction::increase);
  bool promote = p.promoteInterval != 0;
  int64_t kBlocks = p.numKBlocks(t.tileK);
  Value consumer =
      kb.sub(kb.divu(v.tid, kb.i32(kWarpgroupThreads)), kb.i32(1));
  Value threadInWarpgroup = kb.remu(v.tid, kb.i32(kWarpgroupThreads));
  Value warp = kb.divu(threadInWarpgroup, kb.i32(kWarpThreads));
  Value lane = kb.remu(v.tid, kb.i32(kWarpThreads));
  // wgmma accumulator fragment (PTX ISA 9.7.15.5.2, m64nNk32 D): element
  // 4j + 2h + e of a thread is row warp*16 + lane/4 + 8h, column
  // 8j + 2*(lane%4) + e of its warpgroup's 64 x N block.
  Value rowInTile = kb.add(
      kb.add(kb.mul(consumer, kb.i32(kWgmmaM)), kb.mul(warp, kb.i32(16))),
      kb.divu(lane, kb.i32(4)));
  Value colInFragment = kb.mul(kb.remu(lane, kb.i32(4)), kb.i32(2));
  Type accType = getAccumulatorType(b.getContext(), t.tileN);
  // The first consumer thread issues the epilogue's TMA stores.
  Value isStoreThread = kb.eq(v.tid, kb.i32(kWarpgroupThreads));

  Value tensorScale;
  if (p.aScale == ScaleMode::Tensor)
    tensorScale = kb.loadF32(v.aScaleInv, kb.i32(0));
  if (p.bScale == ScaleMode::Tensor) {
    Value s = kb.loadF32(v.bScaleInv, kb.i32(0));
    tensorScale = tensorScale ? arith::MulFOp::create(b, tensorScale, s) : s;
  }
  Value smemAddress = kb.sharedAddress(v.smem);
  Value mLast = kb.sub(v.m, kb.i32(1));

  // A stage is free once every consumer warp of the cluster is done with
  // it: lane 0 of each warp arrives on the stage's empty barrier in every
  // CTA of the cluster (wgmma.wait_group is warpgroup-wide, so the whole warp
  // has finished reading).
  Value isWarpLeader = kb.eq(lane, kb.i32(0));
  auto releaseStage = [&](Value stage) {
    kb.ifThen(isWarpLeader, [&] {
      Value empty = v.ring.emptyBarrier(kb, stage);
      if (t.clusterM == 1) {
        kb.mbarrierArrive(empty);
        return;
      }
      for (int64_t rank = 0; rank < t.clusterM; ++rank)
        kb.mbarrierArrive(kb.mapToClusterRank(empty, kb.i32(rank)));
    });
  };
  kb.forLoop(
      v.firstUnit, v.numUnits, v.unitStride, {kb.i32(0)},
      [&](Value unit, ValueRange state) {
        TileCoordinate coord = emitTileOfUnit(kb, p, t, v, unit);
        Value mOffset = kb.mul(coord.mTile, kb.i32(t.tileM));
        Value nOffset = kb.mul(coord.nTile, kb.i32(t.tileN));
        Value rows[2] = {kb.add(mOffset, rowInTile),
                         kb.add(kb.add(mOffset, rowInTile), kb.i32(8))};
        Value zero = LLVM::ZeroOp::create(b, accType);
        SmallVector<Value> init = {state[0], zero};
        if (promote)
          init.push_back(zero);

        ValueRange loop = kb.forLoop(
            kb.i32(0), kb.i32(kBlocks), kb.i32(1), init,
            [&](Value kBlock, ValueRange carried) {
              Value iteration = carried[0];
              Value stage = v.ring.stage(kb, iteration);
              kb.mbarrierWait(v.ring.fullBarrier(kb, stage),
                              v.ring.consumerParity(kb, iteration));
              // This K block's scales, loaded before the MMAs so their
              // latency hides behind them. A: [K/128, roundup(M, 4)]
              // (MN-major, kMNMajorScaleAlignment).
              Value rowScale0, rowScale1;
              SmallVector<Value> columnScales;
              Value aScaleStride =
                  kb.mul(kb.ceilDiv(v.m, kMNMajorScaleAlignment),
                         kb.i32(kMNMajorScaleAlignment));
              auto aScaleAt = [&](Value row) {
                return kb.loadF32(v.aScaleInv,
                                  kb.add(kb.mul(kBlock, aScaleStride),
                                         kb.minu(row, mLast)));
              };
              if (p.hasBlockwiseColumnScales()) {
                // 1x128 B: each element's scale pairs its row's A scale
                // with its column's B scale (emitPromotion).
                rowScale0 = aScaleAt(rows[0]);
                rowScale1 = aScaleAt(rows[1]);
                columnScales = emitColumnScaleLoads(kb, p, t, v, kBlock,
                                                    nOffset, colInFragment);
              } else if (p.isBlockwise()) {
                // 128x128 B: one scale for the whole tile.
                Value bScale = kb.loadF32(v.bScaleInv,
                    kb.add(kb.mul(kb.divu(nOffset, kb.i32(kScaleBlock)),
                                  kb.i32(kBlocks)),
                           kBlock));
                rowScale0 = arith::MulFOp::create(b, aScaleAt(rows[0]), bScale);
                rowScale1 = arith::MulFOp::create(b, aScaleAt(rows[1]), bScale);
              }
              Value stageAddress =
                  kb.add(smemAddress, kb.mul(stage, kb.i32(t.stageBytes())));
              Value aAddress = kb.add(
                  stageAddress,
                  kb.mul(consumer, kb.i32(kWgmmaM * kSwizzle128BRowBytes)));
              Value bAddress =
                  kb.add(stageAddress, kb.i32(t.tileM * kSwizzle128BRowBytes));
              NVVM::WgmmaFenceAlignedOp::create(b);
              Value acc = carried[1];
              for (int64_t s = 0; s < t.tileK / kWgmmaK; ++s) {
                int64_t kBytes = s * kWgmmaK; // one byte per FP8 element
                acc = emitWgmma(
                    kb, acc,
                    emitKMajorSwizzle128BDescriptor(kb, aAddress, kBytes),
                    emitKMajorSwizzle128BDescriptor(kb, bAddress, kBytes),
                    t.tileN, p.aElementType, p.bElementType,
                    /*accumulate=*/!(promote && s == 0));
              }
              NVVM::WgmmaGroupSyncAlignedOp::create(b);
              if (promote) {
                // The partial sums are needed now.
                NVVM::WgmmaWaitGroupSyncOp::create(b, 0);
                releaseStage(stage);
              } else {
                // Keep this block's MMAs in flight; the previous block's are
                // done, so its stage is free.
                NVVM::WgmmaWaitGroupSyncOp::create(b, 1);
                kb.ifThen(arith::CmpIOp::create(b, arith::CmpIPredicate::ugt,
                                                kBlock, kb.i32(0)),
                          [&] {
                            releaseStage(v.ring.stage(
                                kb, kb.sub(iteration, kb.i32(1))));
                          });
              }
              SmallVector<Value> next = {kb.add(iteration, kb.i32(1)), acc};
              if (promote)
                next.push_back(emitPromotion(kb, carried[2], acc, rowScale0,
                                             rowScale1, columnScales,
                                             t.tileN));
              return next;
            });
        if (!promote) {
          // Drain the last block and free its stage.
          NVVM::WgmmaWaitGroupSyncOp::create(b, 0);
          releaseStage(v.ring.stage(kb, kb.sub(loop[0], kb.i32(1))));
        }
        Value result = promote ? loop[2] : loop[1];
        SmallVector<Value> values =
            emitEpilogueValues(kb, p, t, v, result, rows, nOffset,
                               colInFragment, tensorScale);
        if (p.outputAmax) {
          // This tile's max |D| (elements inside D only), one atomic per
          // warp.
          Value running = kb.f32(0.0f);
          Value rowInBounds[2] = {kb.ult(rows[0], v.m), kb.ult(rows[1], v.m)};
          for (int64_t j = 0; j < t.tileN / 8; ++j)
            for (int e = 0; e < 2; ++e) {
              Value col = kb.add(
                  nOffset, kb.add(kb.i32(8 * j + e), colInFragment));
              Value colInBounds = kb.ult(col, kb.i32(p.n));
              for (int h = 0; h < 2; ++h)
                running = emitAmaxUpdate(
                    kb, running, values[4 * j + 2 * h + e], p.outElementType,
                    kb.andi(rowInBounds[h], colInBounds));
            }
          emitAmaxFlush(kb, running, v.amax, lane);
        }
        if (t.tmaStoreEpilogue) {
          Value rowsInTile[2] = {rowInTile, kb.add(rowInTile, kb.i32(8))};
          emitTmaStoreEpilogue(kb, p, t, v, values, rowsInTile, lane,
                               isStoreThread, mOffset, nOffset);
        } else {
          emitDirectStores(kb, p, t, v, values, rows, nOffset, colInFragment);
        }
        return SmallVector<Value>{loop[0]};
      });
  // Outstanding stores must finish before the CTA (and its shared memory)
  // goes away.
  if (t.tmaStoreEpilogue)
    kb.ifThen(isStoreThread, [&] { kb.bulkWaitGroup(0, /*readOnly=*/false); });
}

gpu::GPUFuncOp hopper::buildGemmKernel(OpBuilder &builder, Location loc,
                                       gpu::GPUModuleOp module, StringRef name,
                                       const GemmProblem &p,
                                       const GemmTiling &t) {
  ensureDynamicSharedMemory(builder, loc, module);
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(module.getBody());
  ImplicitLocOpBuilder b(loc, builder);
  KernelBuilder kb(b);
  MLIRContext *ctx = builder.getContext();

  KernelValues v{};
  auto func = createGemmKernelFunc(b, loc, name, p, t, t.numThreads(), v);

  v.tid = kb.threadIdX();
  v.smem = kb.dynamicSharedMemory();
  // Shared memory: the stage ring, the output staging buffer, the barriers.
  v.epilogueBuffer = kb.bytePtr(v.smem, t.stages * t.stageBytes());
  v.ring = PipelineRing(
      kb.bytePtr(v.smem, t.stages * t.stageBytes() + t.epilogueBytes()),
      t.stages);
  kb.ifThen(kb.eq(v.tid, kb.i32(0)), [&] {
    v.ring.init(kb, /*producerArrivals=*/1,
                /*consumerArrivals=*/t.numConsumers() *
                    (kWarpgroupThreads / kWarpThreads) * t.clusterM);
    kb.prefetchTensorMap(v.tmaA);
    kb.prefetchTensorMap(v.tmaB);
    if (v.tmaD)
      kb.prefetchTensorMap(v.tmaD);
  });
  if (t.clusterM > 1) {
    // The peer CTA multicasts into this CTA's stages and arrives on its
    // barriers: they must be initialized cluster-wide first.
    kb.ifThen(kb.eq(v.tid, kb.i32(0)), [&] { kb.fenceMBarrierInitCluster(); });
    kb.clusterSync();
    v.clusterRank = kb.clusterCtaRank();
    v.firstUnit = kb.divu(kb.blockIdX(), kb.i32(t.clusterM));
    v.unitStride = kb.divu(kb.gridDimX(), kb.i32(t.clusterM));
  } else {
    gpu::BarrierOp::create(b);
    v.clusterRank = kb.i32(0);
    v.firstUnit = kb.blockIdX();
    v.unitStride = kb.gridDimX();
  }
  Value numMTiles = kb.ceilDiv(v.m, t.tileM);
  v.numMUnits = t.clusterM > 1 ? kb.ceilDiv(numMTiles, t.clusterM) : numMTiles;
  v.numUnits = kb.mul(v.numMUnits, kb.i32(t.numNTiles(p.n)));

  Value isProducer =
      kb.eq(kb.divu(v.tid, kb.i32(kWarpgroupThreads)), kb.i32(0));
  auto roles = scf::IfOp::create(b, isProducer, /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard roleGuard(b);
    b.setInsertionPoint(roles.thenBlock()->getTerminator());
    emitProducer(kb, p, t, v);
    b.setInsertionPoint(roles.elseBlock()->getTerminator());
    emitConsumer(kb, p, t, v);
  }
  // Neither CTA of a cluster may exit while the other can still multicast
  // into its shared memory or arrive on its barriers.
  if (t.clusterM > 1)
    kb.clusterSync();
  gpu::ReturnOp::create(b);
  (void)ctx;
  return func;
}
