//===- BlackwellEpilogue.cpp - Epilogue of the sm_100a GEMM ---------------===//

#include "FP8/Conversion/FP8ToBlackwell/BlackwellEpilogue.h"
#include "FP8/Conversion/FP8ToBlackwell/TCGen05.h"
#include "FP8/Conversion/KernelSkeleton/GemmEpilogue.h"
#include "FP8/Conversion/KernelSkeleton/GemmScheduler.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::blackwell;

namespace {
/// An epilogue thread's values and the emission of its tiles' epilogues.
class EpilogueEmitter {
public:
  EpilogueEmitter(KernelBuilder &kb, const BlackwellGemm &g,
                  const GemmTiling &t, const KernelValues &v, Value tmemBase)
      : kb(kb), b(kb.builder()), g(g), p(g.problem), t(t), v(v),
        tmemBase(tmemBase) {}

  /// The thread's place in the tile and the values every tile reads.
  void emitSetup();
  /// The epilogue of the CTA's tile `tile`, its `tileCount`-th, of `group`
  /// (null for a dense GEMM): returns the next count.
  Value emitTile(Value tile, Value tileCount, Value group);
  /// Waits for the last TMA stores before the CTA exits.
  void emitDrain();

private:
  /// Hands the accumulator `accStage` back to the MMA warp once every TMEM
  /// read of it is done.
  void releaseAccumulator(Value accStage);
  /// Scales, bias, activation and amax of the `acc` values of the piece
  /// whose first column is `firstColumn` (of D).
  void applyPiece(SmallVector<Value> &acc, Value firstColumn, Value rowScale,
                  Value rowInBounds, Value &runningAmax);
  /// Writes the piece into the staging buffer's 128-byte swizzled boxes.
  void stagePiece(ArrayRef<Value> acc, Value pieceColumn, int64_t width);
  /// Stores the piece to D (adding C first when accumulating).
  void storePiece(ArrayRef<Value> acc, Value row, Value firstColumn,
                  Value rowInBounds, int64_t width);
  /// Stores the staged tile with TMA.
  void storeStagedTile(Value mOffset, Value nOffset);

  KernelBuilder &kb;
  ImplicitLocOpBuilder &b;
  const BlackwellGemm &g;
  const GemmProblem &p;
  const GemmTiling &t;
  const KernelValues &v;
  Value tmemBase;

  Value lane, laneBase, rowInTile, halfColumn, isStoreThread, mLast;
  /// The scales of the tile being emitted: the product of the per-tensor
  /// ones, and B's (a grouped GEMM's: its group's).
  Value tensorScale, bScales;
  bool guardColumns = false;
  int64_t accStages = 0;
  /// Pieces (start, width) of the thread's columns: 32 at a time, then 16
  /// and 8.
  SmallVector<std::pair<int64_t, int64_t>> pieces;
  int64_t boxBytes = 0;
};
} // namespace

void EpilogueEmitter::emitSetup() {
  Value epilogueThread =
      kb.sub(v.tid, kb.i32(kFirstEpilogueWarpgroup * kWarpgroupThreads));
  Value half = kb.divu(epilogueThread, kb.i32(kWarpgroupThreads));
  Value warpInGroup = kb.remu(v.warp, kb.i32(4));
  lane = kb.remu(v.tid, kb.i32(kWarpThreads));
  laneBase = kb.mul(warpInGroup, kb.i32(tmem::kLanesPerWarp));
  rowInTile = kb.add(laneBase, lane);
  int64_t halfColumns = t.tileN / kEpilogueWarpgroups;
  halfColumn = kb.mul(half, kb.i32(halfColumns));
  isStoreThread = kb.eq(epilogueThread, kb.i32(0));
  guardColumns = p.n % t.tileN != 0;
  mLast = kb.sub(v.m, kb.i32(1));

  accStages = getAccumulatorStages(g, t);
  // A grouped GEMM's B scales are its tile's group's (emitTile).
  bScales = v.bScaleInv;
  if (!p.isGrouped())
    tensorScale = emitTensorScale(kb, p, v.aScaleInv, v.bScaleInv);
  for (int64_t start = 0; start < halfColumns;) {
    int64_t width = kMaxLoadColumns;
    while (start + width > halfColumns)
      width /= 2;
    pieces.push_back({start, width});
    start += width;
  }
  boxBytes = getCtaTileM(t) * kSwizzle128BRowBytes;
}

void EpilogueEmitter::releaseAccumulator(Value accStage) {
  emitFenceBeforeThreadSync(kb);
  Value empty = barrierAt(kb, v.accEmptyBase, accStage);
  if (isCtaPair(t))
    // The leader's MMA warp waits for both CTAs' epilogues.
    NVVM::MBarrierArriveOp::create(
        b, /*res=*/Type(), kb.mapToClusterRank(empty, kb.i32(0)),
        /*count=*/Value(), NVVM::MemScopeKind::CLUSTER,
        /*relaxed=*/false);
  else
    kb.mbarrierArrive(empty);
}

void EpilogueEmitter::applyPiece(SmallVector<Value> &acc, Value firstColumn,
                                 Value rowScale, Value rowInBounds,
                                 Value &runningAmax) {
  for (int64_t j = 0, width = acc.size(); j < width; ++j) {
    Value x = acc[j];
    if (tensorScale)
      x = arith::MulFOp::create(b, x, tensorScale);
    if (rowScale)
      x = arith::MulFOp::create(b, x, rowScale);
    if (p.bScale == ScaleMode::Row || p.biasElementType) {
      Value col = kb.add(firstColumn, kb.i32(j));
      if (guardColumns)
        col = kb.minu(col, kb.i32(p.n - 1));
      if (p.bScale == ScaleMode::Row)
        x = arith::MulFOp::create(b, x, kb.loadF32(bScales, col));
      if (p.biasElementType)
        x = arith::AddFOp::create(b, x, emitBiasLoad(kb, p, v.bias, col));
    }
    if (p.activation)
      x = emitActivation(kb, *p.activation, x);
    if (runningAmax)
      runningAmax = emitAmaxUpdate(
          kb, runningAmax, x, p.outElementType,
          kb.andi(rowInBounds,
                  kb.ult(kb.add(firstColumn, kb.i32(j)), kb.i32(p.n))));
    acc[j] = x;
  }
}

void EpilogueEmitter::stagePiece(ArrayRef<Value> acc, Value pieceColumn,
                                 int64_t width) {
  // 16-byte chunks (8 columns) into the 128-byte swizzled boxes:
  // box = column / 64, chunk (column % 64) / 8 stored at chunk
  // ^ (row % 8). A warp's 32 rows spread each store over all banks.
  int64_t chunkColumns = 16 / t.outputBytes;
  int64_t boxColumns = t.storeBoxColumns();
  Value swizzle = kb.remu(rowInTile, kb.i32(8));
  for (int64_t j = 0; j < width; j += chunkColumns) {
    Value col = kb.add(pieceColumn, kb.i32(j));
    Value box = kb.divu(col, kb.i32(boxColumns));
    Value chunk =
        kb.divu(kb.remu(col, kb.i32(boxColumns)), kb.i32(chunkColumns));
    Value offset = kb.add(
        kb.add(kb.mul(box, kb.i32(boxBytes)), kb.mul(rowInTile, kb.i32(kSwizzle128BRowBytes))),
        kb.mul(arith::XOrIOp::create(b, chunk, swizzle), kb.i32(16)));
    Value packed = packVector(kb, acc.slice(j, chunkColumns), p.outElementType);
    kb.store(packed, kb.bytePtr(v.epilogueBuffer, offset));
  }
}

void EpilogueEmitter::storePiece(ArrayRef<Value> acc, Value row,
                                 Value firstColumn, Value rowInBounds,
                                 int64_t width) {
  // Direct stores of 4 columns (N % 16 == 0: a group is wholly
  // inside or outside the tensor).
  for (int64_t j = 0; j < width; j += 4) {
    Value col = kb.add(firstColumn, kb.i32(j));
    Value inBounds = rowInBounds;
    if (guardColumns)
      inBounds = kb.andi(inBounds, kb.ult(col, kb.i32(p.n)));
    kb.ifThen(inBounds, [&] {
      Value index = emitRowMajorIndex(kb, row, col, p.n);
      SmallVector<Value> group(acc.begin() + j, acc.begin() + j + 4);
      if (p.accumulateIntoC)
        emitAddC(kb, group, v.c, index);
      kb.store(packVector(kb, group, p.outElementType),
               kb.globalElementPtr(v.d, index, t.outputBytes));
    });
  }
}

void EpilogueEmitter::storeStagedTile(Value mOffset, Value nOffset) {
  kb.fenceProxyAsyncShared();
  kb.namedBarrier(kEpilogueBarrierId, kEpilogueThreads);
  kb.ifThen(isStoreThread, [&] {
    int64_t boxColumns = t.storeBoxColumns();
    for (int64_t box = 0; box < t.tileN / boxColumns; ++box)
      kb.tmaStore2d(v.tmaD, kb.bytePtr(v.epilogueBuffer, box * boxBytes),
                    kb.add(nOffset, kb.i32(box * boxColumns)), mOffset);
    kb.bulkCommitGroup();
  });
}

Value EpilogueEmitter::emitTile(Value tile, Value tileCount, Value group) {
  if (group) {
    bScales = emitGroupBScales(kb, p, v.bScaleInv, group);
    tensorScale = emitTensorScale(kb, p, v.aScaleInv, bScales);
  }
  Value accStage = kb.remu(tileCount, kb.i32(accStages));
  Value accRound = kb.divu(tileCount, kb.i32(accStages));
  TileCoordinate coord = emitGroupedTileCoordinate(
      kb, tile, v.numMTiles, t.numNTiles(p.n), t.rasterGroup);
  Value mOffset = kb.mul(coord.mTile, kb.i32(t.tileM));
  if (isCtaPair(t))
    // This CTA's 128 rows: its own TMEM lanes hold them.
    mOffset = kb.add(mOffset, kb.mul(v.clusterRank, kb.i32(getCtaTileM(t))));
  Value nOffset = kb.mul(coord.nTile, kb.i32(t.tileN));
  Value row = kb.add(mOffset, rowInTile);
  Value rowScale;
  if (p.aScale == ScaleMode::Row)
    rowScale = kb.loadF32(v.aScaleInv, kb.minu(row, mLast));
  if (t.tmaStoreEpilogue) {
    // The previous tile's stores must have read the staging buffer.
    kb.ifThen(isStoreThread, [&] { kb.bulkWaitGroup(0, /*readOnly=*/true); });
    kb.namedBarrier(kEpilogueBarrierId, kEpilogueThreads);
  }
  kb.mbarrierWait(barrierAt(kb, v.accFullBase, accStage),
                  kb.andi(accRound, kb.i32(1)));
  emitFenceAfterThreadSync(kb);
  Value accColumn = kb.add(kb.mul(accStage, kb.i32(t.tileN)), halfColumn);
  Value rowInBounds = kb.ult(row, v.m);
  // This tile's max |D| (elements inside D only), flushed below.
  Value runningAmax = p.outputAmax ? kb.f32(0.0f) : Value();
  for (auto [pieceIndex, piece] : llvm::enumerate(pieces)) {
    auto [start, width] = piece;
    SmallVector<Value> acc =
        emitTmemLoad32x32b(kb,
                           emitTmemAddress(kb, tmemBase, laneBase,
                                           kb.add(accColumn, kb.i32(start))),
                           width);
    emitTmemWaitLoad(kb);
    // After the last piece's load, every TMEM read of this tile is done.
    if (pieceIndex + 1 == pieces.size())
      releaseAccumulator(accStage);
    // Tile-relative first column of the piece.
    Value pieceColumn = kb.add(halfColumn, kb.i32(start));
    Value firstColumn = kb.add(nOffset, pieceColumn);
    applyPiece(acc, firstColumn, rowScale, rowInBounds, runningAmax);
    if (t.tmaStoreEpilogue)
      stagePiece(acc, pieceColumn, width);
    else
      storePiece(acc, row, firstColumn, rowInBounds, width);
  }
  if (runningAmax)
    emitAmaxFlush(kb, runningAmax, v.amax, lane);
  if (t.tmaStoreEpilogue)
    storeStagedTile(mOffset, nOffset);
  return kb.add(tileCount, kb.i32(1));
}

void EpilogueEmitter::emitDrain() {
  if (t.tmaStoreEpilogue)
    kb.ifThen(isStoreThread, [&] { kb.bulkWaitGroup(0, /*readOnly=*/false); });
}

void blackwell::emitEpilogue(KernelBuilder &kb, const BlackwellGemm &g,
                             const GemmTiling &t, const KernelValues &v,
                             Value tmemBase) {
  EpilogueEmitter epilogue(kb, g, t, v, tmemBase);
  epilogue.emitSetup();
  forEachTile(kb, g.problem, t, v, {kb.i32(0)},
              [&](Value tile, Value group, ValueRange state) {
                return SmallVector<Value>{
                    epilogue.emitTile(tile, state[0], group)};
              });
  epilogue.emitDrain();
}
