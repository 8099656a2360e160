//===- HopperEpilogue.cpp - Epilogue of the sm_90a GEMM -------------------===//

#include "FP8/Conversion/FP8ToHopper/HopperEpilogue.h"
#include "FP8/Conversion/FP8ToHopper/HopperScheduler.h"
#include "FP8/Conversion/FP8ToHopper/HopperSwapAB.h"
#include "FP8/Conversion/FP8ToHopper/WGMMA.h"
#include "FP8/Conversion/KernelSkeleton/GemmEpilogue.h"
#include "FP8/Conversion/KernelSkeleton/GemmOutputQuantization.h"

#include <array>

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::hopper;

/// The f32 pair converted to the output type, as the value to store (an
/// i32 for 2-byte types).
static Value packPair(KernelBuilder &kb, Value v0, Value v1, Type outType) {
  Value vec = packVector(kb, {v0, v1}, outType);
  if (!outType.isF32())
    vec = LLVM::BitcastOp::create(kb.builder(), kb.builder().getI32Type(), vec);
  return vec;
}

Value hopper::emitScaledOutput(KernelBuilder &kb, const GemmProblem &p,
                               Value x, ArrayRef<Value> scales, Value bias) {
  ImplicitLocOpBuilder &b = kb.builder();
  for (Value scale : scales)
    if (scale)
      x = arith::MulFOp::create(b, x, scale);
  if (bias)
    x = arith::AddFOp::create(b, x, bias);
  if (p.activation)
    x = emitActivation(kb, *p.activation, x);
  return x;
}

/// Converts the f32 pair to the output type and stores it at `ptr`.
static void storePair(KernelBuilder &kb, Value v0, Value v1, Type outType,
                      Value ptr) {
  kb.store(packPair(kb, v0, v1, outType), ptr);
}

/// The stored value of a thread's element pair (j, h) of wave `wave`:
/// elements 4j + 2h and 4j + 2h + 1 of that wave's fragment, converted to
/// the output type.
using PairPacker = function_ref<Value(int64_t wave, int64_t j, int h)>;

/// The scaled (+ bias) output values of a thread's fragment, in fragment
/// order, ready to be stored.
static SmallVector<Value>
emitEpilogueValues(KernelBuilder &kb, const GemmProblem &p, const GemmTiling &t,
                   const KernelValues &v, Value result, Value rows[2],
                   Value nOffset, Value colInFragment, Value tensorScale) {
  ImplicitLocOpBuilder &b = kb.builder();
  Value mLast = kb.sub(v.m, kb.i32(1));
  bool guardColumns = needsColumnGuard(p, t);
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
      if (p.biasElementType)
        biasValue[e] = emitBiasLoad(kb, p, v.bias, c);
    }
    for (int h = 0; h < 2; ++h) {
      for (int e = 0; e < 2; ++e) {
        int64_t i = 4 * j + 2 * h + e;
        values[i] = emitScaledOutput(
            kb, p, LLVM::ExtractValueOp::create(b, result, i),
            {tensorScale, rowScale[h], colScale[e]}, biasValue[e]);
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
  bool guardColumns = needsColumnGuard(p, t);
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
        Value index = emitRowMajorIndex(kb, rows[h], col, p.n);
        if (p.accumulateIntoC)
          emitAddC(kb, pair, v.c, index);
        storePair(kb, pair[0], pair[1], p.outElementType,
                  kb.globalElementPtr(v.d, index, outBytes));
      });
    }
  }
}

/// The staged boxes [first, first + count), from staging slot `slot0` on,
/// stored by the consumer threads (GemmTiling::guardedStagedStores): 16
/// bytes a thread and step, the threads of a step along the rows of a box
/// (a warp: whole 32- to 128-byte row segments of D), each store only
/// where its row is below the M edge (a masked group's count) and its
/// columns inside N. Chunk c of box row r sits at chunk c ^ s of the row in
/// the slot, s = (r * R / 128) % (R / 16) for rows of R bytes (the swizzle
/// the staging wrote): a step's rows lie whole KiB further, so a thread's
/// swizzle, shared and global addresses are one base each plus constants.
static void emitGuardedStagedStores(KernelBuilder &kb, const GemmProblem &p,
                                    const GemmTiling &t, const KernelValues &v,
                                    int64_t first, int64_t count, int64_t slot0,
                                    Value mOffset, Value nOffset) {
  ImplicitLocOpBuilder &b = kb.builder();
  int64_t rowBytes = t.storeBoxBytes();
  int64_t boxChunks = rowBytes / 16;
  int64_t stepRows = getNumConsumers(t) * kWarpgroupThreads / boxChunks;
  Value thread = kb.sub(v.tid, kb.i32(kWarpgroupThreads));
  Value row = kb.divu(thread, kb.i32(boxChunks));
  Value chunk = kb.remu(thread, kb.i32(boxChunks));
  Value swizzle =
      kb.remu(kb.divu(row, kb.i32(kSwizzle128BRowBytes / rowBytes)),
              kb.i32(boxChunks));
  Value staged = kb.bytePtr(
      v.epilogueBuffer,
      kb.add(kb.mul(row, kb.i32(rowBytes)),
             kb.mul(arith::XOrIOp::create(b, chunk, swizzle), kb.i32(16))));
  // Rows of D this thread's first row leaves below the M edge (< 0: none).
  Value rowsLeft = kb.sub(kb.sub(v.m, mOffset), row);
  Value column = kb.add(
      kb.add(nOffset, kb.i32(first * t.storeBoxColumns())),
      kb.mul(chunk, kb.i32(16 / t.outputBytes)));
  Value out = kb.globalElementPtr(
      v.d, emitRowMajorIndex(kb, kb.add(mOffset, row), column, p.n),
      t.outputBytes);
  VectorType chunkType = VectorType::get({4}, b.getI32Type());
  for (int64_t box = 0; box < count; ++box) {
    Value inN;
    if (needsColumnGuard(p, t))
      inN = kb.ult(kb.add(column, kb.i32(box * t.storeBoxColumns())),
                   kb.i32(p.n));
    for (int64_t r = 0; r < t.tileM; r += stepRows) {
      Value inBounds = arith::CmpIOp::create(b, arith::CmpIPredicate::slt,
                                             kb.i32(r), rowsLeft);
      if (inN)
        inBounds = kb.andi(inBounds, inN);
      kb.ifThen(inBounds, [&] {
        Value bytes = kb.load(
            chunkType,
            kb.bytePtr(staged, (slot0 + box) * t.tileM * rowBytes +
                                   r * rowBytes));
        kb.store(bytes, kb.bytePtr(out, (r * p.n + box * t.storeBoxColumns()) *
                                            t.outputBytes));
      });
    }
  }
}

/// The consumers write the tile to the shared staging buffer in the layout
/// of the output tensor map's swizzled boxes, then one thread stores the
/// boxes with TMA (with guardedStagedStores the consumers store them,
/// emitGuardedStagedStores). Box b holds the R bytes of columns
/// [b * boxColumns, (b + 1) * boxColumns) of all tile rows, R =
/// storeBoxBytes(): 128 (64 columns of 2-byte elements, 128 of FP8), 64 or
/// 32 (tiles 160 or 144 columns wide). The swizzle (TMA's 128B, 64B or
/// 32B) XORs a 16-byte chunk's index within its row with bits 7.. of the
/// row's offset: row % 8
/// for 128-byte rows, (row / 2) % 4 for 64-byte ones, (row / 4) % 2 for
/// 32-byte ones; each is a function of the lane, the same for both rows of
/// a thread. A fragment group of 8 columns is one chunk (2-byte
/// elements) or half of one (FP8). The swizzle makes the fragment writes
/// bank-conflict free: the 8 rows a warp writes per instruction land in 8
/// different 16-byte bank groups. Each of a consumer's waves writes its
/// rows (`waveRows`: a thread's two rows in the tile) before the stores, so
/// a tile of several waves goes out with one round of TMA stores.
/// With `reduceAdd` the boxes are added into D (TMA reduce-add, f32)
/// instead of stored. A fragment group of 8 f32 columns spans two chunks:
/// lanes 2 and 3 of a quad write their pair into the second one.
static void emitTmaStoreEpilogue(KernelBuilder &kb, const GemmProblem &p,
                                 const GemmTiling &t, const KernelValues &v,
                                 PairPacker pack,
                                 ArrayRef<std::array<Value, 2>> waveRows,
                                 const EpilogueThread &thread, Value mOffset,
                                 Value nOffset, bool reduceAdd = false) {
  ImplicitLocOpBuilder &b = kb.builder();
  Value lane = thread.lane, isStoreThread = thread.isStoreThread;
  auto consumerBarrier = [&] {
    kb.namedBarrier(thread.barrierId, thread.barrierThreads);
  };
  int64_t boxColumns = t.storeBoxColumns();
  int64_t groupBytes = 8 * t.outputBytes;
  int64_t groupsPerChunk = std::max<int64_t>(16 / groupBytes, 1);
  int64_t chunksPerGroup = std::max<int64_t>(groupBytes / 16, 1);
  int64_t rowBytes = t.storeBoxBytes();
  int64_t boxBytes = t.tileM * rowBytes;
  // Rows sharing a swizzle pattern: 1 for 128-byte rows, 2 for 64-byte ones.
  int64_t rowsPerPattern = kSwizzle128BRowBytes / rowBytes;
  int64_t slots = t.numStagingBoxes();
  // The boxes [first, first + count) go to consecutive staging slots from
  // slot first % slots on, and out with one commit group. A buffer of the
  // whole tile takes them at once, after the previous tile's stores have
  // read it; a buffer of fewer slots takes them one at a time in turn: the
  // tile's box count is a multiple of the slots, so box i always lands in
  // slot i % slots, whose last store (slots groups ago, possibly the
  // previous tile's) must have read it.
  auto stageBoxes = [&](int64_t first, int64_t count) {
    int64_t pending = slots == t.numStoreBoxes() ? 0 : slots - 1;
    int64_t slot0 = first % slots;
    if (t.storesWithTma())
      kb.ifThen(isStoreThread,
                [&] { kb.bulkWaitGroup(pending, /*readOnly=*/true); });
    consumerBarrier();
    // row % 8 == lane / 4 for both rows.
    Value swizzle = kb.divu(lane, kb.i32(4 * rowsPerPattern));
    Value inChunk =
        kb.mul(kb.remu(lane, kb.i32(4)), kb.i32(2 * t.outputBytes));
    if (chunksPerGroup > 1) {
      // The lane's chunk is 2c + (lane % 4) / 2 for the group's first
      // chunk 2c; (2c + l) ^ s = 2c ^ (l ^ s) for l in {0, 1}.
      Value quadLane = kb.remu(lane, kb.i32(4));
      inChunk = kb.mul(kb.remu(lane, kb.i32(2)), kb.i32(2 * t.outputBytes));
      swizzle = arith::XOrIOp::create(b, swizzle, kb.divu(quadLane, kb.i32(2)));
    }
    int64_t groupsPerBox = boxColumns / 8;
    for (auto [wave, rowsInTile] : llvm::enumerate(waveRows)) {
      for (int h = 0; h < 2; ++h) {
        Value rowBase =
            kb.add(kb.mul(rowsInTile[h], kb.i32(rowBytes)), inChunk);
        for (int64_t j = first * groupsPerBox;
             j < (first + count) * groupsPerBox; ++j) {
          int64_t slot = slot0 + j / groupsPerBox - first;
          int64_t chunk = (j % groupsPerBox) * chunksPerGroup / groupsPerChunk;
          int64_t inChunkGroup = (j % groupsPerChunk) * groupBytes;
          Value offset = kb.add(
              rowBase,
              kb.add(kb.i32(slot * boxBytes + inChunkGroup),
                     kb.mul(arith::XOrIOp::create(b, kb.i32(chunk), swizzle),
                            kb.i32(16))));
          Value ptr = kb.bytePtr(thread.stagingBuffer, offset);
          kb.store(pack(wave, j, h), ptr);
        }
      }
    }
    if (t.guardedStagedStores) {
      consumerBarrier();
      return emitGuardedStagedStores(kb, p, t, v, first, count, slot0,
                                     mOffset, nOffset);
    }
    kb.fenceProxyAsyncShared();
    consumerBarrier();
    kb.ifThen(isStoreThread, [&] {
      for (int64_t box = first; box < first + count; ++box) {
        Value src =
            kb.bytePtr(thread.stagingBuffer, (slot0 + box - first) * boxBytes);
        Value column = kb.add(nOffset, kb.i32(box * boxColumns));
        if (reduceAdd)
          NVVM::CpAsyncBulkTensorReduceOp::create(
              b, v.tmaD, src, NVVM::TMAReduxKind::ADD,
              NVVM::TMAStoreMode::TILE, ValueRange{column, mOffset},
              /*l2CacheHint=*/Value());
        else
          kb.tmaStore2d(v.tmaD, src, column, mOffset);
      }
      kb.bulkCommitGroup();
    });
  };
  if (slots == t.numStoreBoxes()) {
    stageBoxes(0, slots);
    return;
  }
  for (int64_t box = 0; box < t.numStoreBoxes(); ++box)
    stageBoxes(box, 1);
}

/// The staged epilogue of a kernel accumulating into C
/// (accumulatesThroughStaging). Where the caller passes C's memory as D (in
/// place: the main-grad form D += A B) the tile's values go into D with TMA
/// reduce-adds, one f32 add per element of D, the add D + value that the
/// direct stores compute, and C is not read. Otherwise each pair adds C
/// (one vector load at indices clamped into D: what lies past M or N is
/// clipped by the TMA store) before it is staged, and D is TMA-stored. The
/// branch is uniform (kernel parameters).
static void emitAccumulatingTmaEpilogue(
    KernelBuilder &kb, const GemmProblem &p, const GemmTiling &t,
    const KernelValues &v, const EpilogueThread &thread,
    ArrayRef<SmallVector<Value>> waveValues,
    ArrayRef<std::array<Value, 2>> waveRows, Value mOffset, Value nOffset) {
  ImplicitLocOpBuilder &b = kb.builder();
  auto pairOf = [&](int64_t wave, int64_t j, int h)
      -> std::array<Value, 2> {
    return {waveValues[wave][4 * j + 2 * h], waveValues[wave][4 * j + 2 * h + 1]};
  };
  Value inPlace = LLVM::ICmpOp::create(b, LLVM::ICmpPredicate::eq, v.c, v.d);
  kb.ifThen(inPlace, [&] {
    auto pack = [&](int64_t wave, int64_t j, int h) {
      auto [x0, x1] = pairOf(wave, j, h);
      return packPair(kb, x0, x1, p.outElementType);
    };
    emitTmaStoreEpilogue(kb, p, t, v, pack, waveRows, thread, mOffset, nOffset,
                         /*reduceAdd=*/true);
  });
  Value distinct = LLVM::ICmpOp::create(b, LLVM::ICmpPredicate::ne, v.c, v.d);
  kb.ifThen(distinct, [&] {
    Value mLast = kb.sub(v.m, kb.i32(1));
    bool guardColumns = needsColumnGuard(p, t);
    auto pack = [&](int64_t wave, int64_t j, int h) {
      auto [x0, x1] = pairOf(wave, j, h);
      Value pair[2] = {x0, x1};
      Value row = kb.minu(kb.add(mOffset, waveRows[wave][h]), mLast);
      Value col =
          kb.add(nOffset, kb.add(kb.i32(8 * j), thread.colInFragment));
      if (guardColumns)
        col = kb.minu(col, kb.i32(p.n - 2));
      emitAddC(kb, pair, v.c, emitRowMajorIndex(kb, row, col, p.n));
      return packPair(kb, pair[0], pair[1], p.outElementType);
    };
    emitTmaStoreEpilogue(kb, p, t, v, pack, waveRows, thread, mOffset, nOffset);
  });
}

/// This tile's max |D| (elements inside D only), one atomic per warp.
static void emitTileAmax(KernelBuilder &kb, const GemmProblem &p,
                         const GemmTiling &t, const KernelValues &v,
                         const EpilogueThread &thread, ArrayRef<Value> values,
                         Value rows[2], Value nOffset) {
  Value running = kb.f32(0.0f);
  Value rowInBounds[2] = {kb.ult(rows[0], v.m), kb.ult(rows[1], v.m)};
  // An FP8 D's amax is taken before quantization (what a delayed-scaling
  // history records).
  Type amaxType = p.hasFP8Output() ? kb.builder().getF32Type()
                                   : p.outElementType;
  for (int64_t j = 0; j < t.tileN / 8; ++j)
    for (int e = 0; e < 2; ++e) {
      Value col =
          kb.add(nOffset, kb.add(kb.i32(8 * j + e), thread.colInFragment));
      Value colInBounds = kb.ult(col, kb.i32(p.n));
      for (int h = 0; h < 2; ++h)
        running = emitAmaxUpdate(kb, running, values[4 * j + 2 * h + e],
                                 amaxType, kb.andi(rowInBounds[h], colInBounds));
    }
  emitAmaxFlush(kb, running, v.amax, thread.lane);
}

/// An FP8 D's quantization multiplier of each row h of a thread's fragment
/// and each 128-column block of the tile, [h][block]: the given per-tensor
/// scale or, for 1x128 blocks along N, the block's scale: the row's 128
/// columns of a block are held by the four lanes of a quad (32 values each),
/// so the block amax is the thread's maximum reduced over the quad by two
/// shuffles. One lane per quad stores the block's scale_inv, MN-major
/// [ceil(N/128), roundup(M, 4)] (m_masked: the group's, M its rows, not its
/// count).
static SmallVector<SmallVector<Value>>
emitFP8Multipliers(KernelBuilder &kb, const GemmProblem &p, const GemmTiling &t,
                   const KernelValues &v, const EpilogueThread &thread,
                   ArrayRef<Value> values, Value rows[2], Value nOffset) {
  bool guardColumns = needsColumnGuard(p, t);
  Value n = kb.i32(p.n);
  SmallVector<SmallVector<Value>> multiplier(2);
  if (p.outQuantization == OutputQuantization::Tensor) {
    Value scale = emitResultScaleLoad(kb, v);
    for (int h = 0; h < 2; ++h)
      multiplier[h].assign(t.tileN / kScaleBlock + 1, scale);
    return multiplier;
  }
  Value mPadded = kb.mul(kb.ceilDiv(p.isMasked() ? v.groupM : v.m,
                                    kMNMajorScaleAlignment),
                         kb.i32(kMNMajorScaleAlignment));
  Value isQuadLeader = kb.eq(kb.remu(thread.lane, kb.i32(4)), kb.i32(0));
  int64_t groupsPerBlock = kScaleBlock / 8;
  // Every block's scale first, then the stores: the two rows' reductions
  // interleave instead of waiting on each other's store branch.
  SmallVector<std::array<Value, 2>> scaleInv;
  for (int64_t block = 0; block < t.tileN / kScaleBlock; ++block) {
    scaleInv.emplace_back();
    for (int h = 0; h < 2; ++h) {
      SmallVector<Value> blockValues, inBounds;
      for (int64_t j = block * groupsPerBlock; j < (block + 1) * groupsPerBlock;
           ++j)
        for (int e = 0; e < 2; ++e) {
          blockValues.push_back(values[4 * j + 2 * h + e]);
          if (guardColumns)
            inBounds.push_back(kb.ult(
                kb.add(nOffset,
                       kb.add(kb.i32(8 * j + e), thread.colInFragment)),
                n));
        }
      Value bits = emitLaneBitsMax(
          kb, emitAbsBitsMax(kb, blockValues, inBounds), {1, 2});
      OutputBlockScale scale = emitOutputBlockScale(kb, p, bits);
      multiplier[h].push_back(scale.multiplier);
      scaleInv.back()[h] = scale.scaleInv;
    }
  }
  for (auto [block, blockScaleInv] : llvm::enumerate(scaleInv)) {
    Value blockColumn =
        kb.add(nOffset, kb.i32(static_cast<int64_t>(block) * kScaleBlock));
    Value nBlock = kb.divu(blockColumn, kb.i32(kScaleBlock));
    for (int h = 0; h < 2; ++h) {
      Value stores = kb.andi(isQuadLeader, kb.ult(rows[h], v.m));
      if (guardColumns)
        stores = kb.andi(stores, kb.ult(blockColumn, n));
      kb.ifThen(stores, [&] {
        Value index = kb.add(kb.mul(nBlock, mPadded), rows[h]);
        kb.store(blockScaleInv[h],
                 kb.globalElementPtr(v.resultScaleInv, index, 4));
      });
    }
  }
  return multiplier;
}

/// An FP8 D without a staging buffer (a tile N of part of a store box):
/// each thread stores its quantized pairs directly, guarded against the M
/// and N edges.
static void emitFP8DirectStores(KernelBuilder &kb, const GemmProblem &p,
                                const GemmTiling &t, const KernelValues &v,
                                const EpilogueThread &thread,
                                function_ref<Value(int64_t j, int h)> pack,
                                Value rows[2], Value nOffset) {
  bool guardColumns = needsColumnGuard(p, t);
  Value n = kb.i32(p.n);
  Value rowInBounds[2] = {kb.ult(rows[0], v.m), kb.ult(rows[1], v.m)};
  for (int64_t j = 0; j < t.tileN / 8; ++j) {
    Value col = kb.add(nOffset, kb.add(kb.i32(8 * j), thread.colInFragment));
    for (int h = 0; h < 2; ++h) {
      Value inBounds = rowInBounds[h];
      if (guardColumns)
        inBounds = kb.andi(inBounds, kb.ult(col, n));
      Value pair = pack(j, h);
      kb.ifThen(inBounds, [&] {
        Value index = emitRowMajorIndex(kb, rows[h], col, p.n);
        kb.store(pair, kb.globalElementPtr(v.d, index, 1));
      });
    }
  }
}

/// An FP8 D's quantized pairs of a thread's fragment, [2j + h], computed
/// before any store: as i16 they take half the registers of their f32
/// values across the staging barriers.
static SmallVector<Value>
emitFP8Pairs(KernelBuilder &kb, const GemmProblem &p, const GemmTiling &t,
             const KernelValues &v, const EpilogueThread &thread,
             ArrayRef<Value> values, Value rows[2], Value nOffset) {
  SmallVector<SmallVector<Value>> multiplier =
      emitFP8Multipliers(kb, p, t, v, thread, values, rows, nOffset);
  SmallVector<Value> pairs(t.tileN / 4);
  for (int64_t j = 0; j < t.tileN / 8; ++j)
    for (int h = 0; h < 2; ++h)
      pairs[2 * j + h] =
          emitFP8Pair(kb, p, values[4 * j + 2 * h], values[4 * j + 2 * h + 1],
                      multiplier[h][j / (kScaleBlock / 8)]);
  return pairs;
}

void hopper::emitTileEpilogue(KernelBuilder &kb, const GemmProblem &p,
                              const GemmTiling &t, const KernelValues &v,
                              const EpilogueThread &thread, Value unit,
                              ArrayRef<Value> results) {
  if (t.swapAB)
    return emitSwapABTileEpilogue(kb, p, t, v, thread, unit, results.front());
  // The tile's place, computed only now: the mainloop reads nothing of
  // it (its scales come through the stages), so nothing of it stays
  // live across the loop, where the accumulators take the registers.
  TileCoordinate coord = emitTileOfUnit(kb, p, t, v, unit);
  Value mOffset = kb.mul(coord.mTile, kb.i32(t.tileM));
  Value nOffset = kb.mul(coord.nTile, kb.i32(t.tileN));
  // Wave w's rows are getWaveRows(t) * w below the first wave's.
  auto waveRowInTile = [&](int64_t wave) {
    return wave ? kb.add(thread.rowInTile, kb.i32(wave * getWaveRows(t)))
                : thread.rowInTile;
  };
  // Each wave's values to stage: its f32 values (a 2-byte D, converted as
  // they are staged) or its quantized pairs (an FP8 D).
  SmallVector<SmallVector<Value>> waveValues;
  for (auto [wave, result] : llvm::enumerate(results)) {
    Value rowInTile = waveRowInTile(wave);
    Value rows[2] = {kb.add(mOffset, rowInTile),
                     kb.add(kb.add(mOffset, rowInTile), kb.i32(8))};
    SmallVector<Value> values =
        emitEpilogueValues(kb, p, t, v, result, rows, nOffset,
                           thread.colInFragment, thread.tensorScale);
    if (p.outputAmax)
      emitTileAmax(kb, p, t, v, thread, values, rows, nOffset);
    if (p.hasFP8Output()) {
      SmallVector<Value> pairs =
          emitFP8Pairs(kb, p, t, v, thread, values, rows, nOffset);
      if (!t.tmaStoreEpilogue)
        emitFP8DirectStores(
            kb, p, t, v, thread,
            [&](int64_t j, int h) { return pairs[2 * j + h]; }, rows,
            nOffset);
      values = std::move(pairs);
    } else if (!t.tmaStoreEpilogue) {
      emitDirectStores(kb, p, t, v, values, rows, nOffset,
                       thread.colInFragment);
    }
    waveValues.push_back(std::move(values));
  }
  if (!t.tmaStoreEpilogue)
    return;
  // The staged tile goes out with one round of TMA stores.
  SmallVector<std::array<Value, 2>> waveRows;
  for (int64_t wave = 0, e = results.size(); wave < e; ++wave) {
    Value rowInTile = waveRowInTile(wave);
    waveRows.push_back({rowInTile, kb.add(rowInTile, kb.i32(8))});
  }
  if (accumulatesThroughStaging(p, t))
    return emitAccumulatingTmaEpilogue(kb, p, t, v, thread, waveValues,
                                       waveRows, mOffset, nOffset);
  auto pack = [&](int64_t wave, int64_t j, int h) {
    ArrayRef<Value> values = waveValues[wave];
    if (p.hasFP8Output())
      return values[2 * j + h];
    return packPair(kb, values[4 * j + 2 * h], values[4 * j + 2 * h + 1],
                    p.outElementType);
  };
  emitTmaStoreEpilogue(kb, p, t, v, pack, waveRows, thread, mOffset, nOffset);
}
