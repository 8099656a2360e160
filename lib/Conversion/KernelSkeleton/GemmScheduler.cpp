//===- GemmScheduler.cpp - Tile scheduling shared by the GEMMs ------------===//

#include "FP8/Conversion/KernelSkeleton/GemmScheduler.h"
#include "FP8/Dialect/FP8/IR/FP8Contract.h"

#include <algorithm>
#include <cstdint>

using namespace mlir;
using namespace mlir::fp8;

/// Candidate tile N, largest first.
static constexpr int64_t kTileNCandidates[] = {256, 224, 192, 160, 128};

int64_t mlir::fp8::fitPipelineStages(int64_t availableBytes,
                                     int64_t bytesPerStage) {
  return std::min<int64_t>(kMaxPipelineStages, availableBytes / bytesPerStage);
}

int64_t mlir::fp8::pickLeastPaddedTileN(int64_t n, int64_t multipleOf) {
  int64_t best = 0;
  int64_t bestPadded = INT64_MAX;
  for (int64_t candidate : kTileNCandidates) {
    if (candidate % multipleOf != 0)
      continue;
    int64_t padded = llvm::divideCeil(n, candidate) * candidate;
    if (padded < bestPadded) {
      best = candidate;
      bestPadded = padded;
    }
  }
  return best;
}

TileCoordinate mlir::fp8::emitGroupedTileCoordinate(KernelBuilder &kb,
                                                    Value linearTile,
                                                    Value numMTiles,
                                                    int64_t numNTiles,
                                                    int64_t rasterGroup) {
  // Tiles of a group: rasterGroup tile rows x all tile columns, walked down
  // the rows first so that consecutive CTAs share a B tile column and a
  // band of A rows.
  Value tilesPerGroup = kb.i32(rasterGroup * numNTiles);
  Value group = kb.divu(linearTile, tilesPerGroup);
  Value firstM = kb.mul(group, kb.i32(rasterGroup));
  Value groupRows = kb.minu(kb.sub(numMTiles, firstM), kb.i32(rasterGroup));
  Value inGroup = kb.remu(linearTile, tilesPerGroup);
  TileCoordinate coord;
  coord.mTile = kb.add(firstM, kb.remu(inGroup, groupRows));
  coord.nTile = kb.divu(inGroup, groupRows);
  return coord;
}

Value mlir::fp8::emitGroupOfTile(KernelBuilder &kb, Value groupIndex,
                                 Value mTile, int64_t tileM) {
  Value firstRow = kb.mul(mTile, kb.i32(tileM));
  // A tile shorter than a group's alignment reads the group at the first
  // row of its kGroupRowAlignment-row block, not its own: the rows of a
  // group's last block past its last row are padding (-1), yet computed
  // and written as the group's (tile M divides the alignment).
  if (tileM < kGroupRowAlignment)
    firstRow = kb.andi(firstRow, kb.i32(-kGroupRowAlignment));
  return kb.load(kb.builder().getI32Type(),
                 kb.globalElementPtr(groupIndex, firstRow, 4));
}

/// The valid rows of `group` (a constant): its count in `maskedM`, clamped
/// to [0, M] (signed: a negative count has no valid row).
static Value emitMaskedGroupRows(KernelBuilder &kb, Value maskedM, Value m,
                                 int64_t group) {
  ImplicitLocOpBuilder &b = kb.builder();
  Value count =
      kb.load(b.getI32Type(), kb.globalElementPtr(maskedM, kb.i32(group), 4));
  return arith::MaxSIOp::create(b, arith::MinSIOp::create(b, count, m),
                                kb.i32(0));
}

Value mlir::fp8::emitMaskedUnitCount(KernelBuilder &kb, Value maskedM,
                                     Value m, int64_t numGroups,
                                     int64_t unitRows, int64_t numNUnits) {
  Value total = kb.i32(0);
  for (int64_t g = 0; g < numGroups; ++g)
    total = kb.add(total, kb.ceilDiv(emitMaskedGroupRows(kb, maskedM, m, g),
                                     unitRows));
  return kb.mul(total, kb.i32(numNUnits));
}

TileCoordinate mlir::fp8::emitMaskedTileOfUnit(KernelBuilder &kb,
                                               Value maskedM, Value m,
                                               int64_t numGroups,
                                               int64_t unitRows,
                                               int64_t numNUnits, Value unit) {
  ImplicitLocOpBuilder &b = kb.builder();
  auto select = [&](Value cond, Value x, Value y) {
    return arith::SelectOp::create(b, cond, x, y).getResult();
  };
  // The unit's group: the last whose first unit is at or before it (an
  // empty group starts where the next one does, which then wins). The
  // counts' loads are independent of each other and of the unit: they
  // issue together and hit L1 after the first tile.
  Value group = kb.i32(0), groupFirst = kb.i32(0);
  Value rows = emitMaskedGroupRows(kb, maskedM, m, 0);
  Value mUnits = kb.ceilDiv(rows, unitRows);
  Value first = kb.mul(mUnits, kb.i32(numNUnits));
  for (int64_t g = 1; g < numGroups; ++g) {
    Value gRows = emitMaskedGroupRows(kb, maskedM, m, g);
    Value gMUnits = kb.ceilDiv(gRows, unitRows);
    Value starts = arith::CmpIOp::create(b, arith::CmpIPredicate::uge, unit,
                                         first);
    group = select(starts, kb.i32(g), group);
    groupFirst = select(starts, first, groupFirst);
    rows = select(starts, gRows, rows);
    mUnits = select(starts, gMUnits, mUnits);
    if (g + 1 < numGroups)
      first = kb.add(first, kb.mul(gMUnits, kb.i32(numNUnits)));
  }
  // Within the group, down its unit rows first: the CTAs running together
  // read one B tile column of the group's weight.
  Value inGroup = kb.sub(unit, groupFirst);
  // Never 0 for a unit below emitMaskedUnitCount's total.
  mUnits = select(kb.eq(mUnits, kb.i32(0)), kb.i32(1), mUnits);
  TileCoordinate coord;
  coord.mTile = kb.remu(inGroup, mUnits);
  coord.nTile = kb.divu(inGroup, mUnits);
  coord.group = group;
  coord.groupRows = rows;
  return coord;
}

void mlir::fp8::emitKGroupedTile(KernelBuilder &kb, Value kSizes, Value m,
                                 Value k, int64_t tileM, int64_t tileK,
                                 TileCoordinate &coord) {
  ImplicitLocOpBuilder &b = kb.builder();
  Value tilesPerGroup = kb.ceilDiv(m, tileM);
  Value group = kb.divu(coord.mTile, tilesPerGroup);
  coord.mTile = kb.remu(coord.mTile, tilesPerGroup);
  auto sizeOf = [&](Value g) {
    Value size = kb.load(b.getI32Type(), kb.globalElementPtr(kSizes, g, 4));
    return arith::MaxSIOp::create(b, size, kb.i32(0)).getResult();
  };
  // Both terms are below 2^31: their unsigned sum does not wrap.
  auto clampedEnd = [&](Value begin, Value size) {
    return kb.minu(kb.add(begin, size), k);
  };
  Value begin =
      kb.forLoop(kb.i32(0), group, kb.i32(1), {kb.i32(0)},
                 [&](Value g, ValueRange carried) {
                   return SmallVector<Value>{clampedEnd(carried[0], sizeOf(g))};
                 })[0];
  Value end = clampedEnd(begin, sizeOf(group));
  coord.group = group;
  coord.kBlockBegin = kb.divu(begin, kb.i32(tileK));
  coord.kBlockEnd = kb.divu(end, kb.i32(tileK));
}

Value mlir::fp8::emitIsGroupInRange(KernelBuilder &kb, Value group,
                                    int64_t numGroups) {
  return kb.ult(group, kb.i32(numGroups));
}

void mlir::fp8::emitTileGroup(KernelBuilder &kb, const GemmProblem &p,
                              Value groups, int64_t tileM,
                              TileCoordinate &coord) {
  switch (p.groupLayout) {
  case GroupedLayout::MContiguous:
    coord.group = emitGroupOfTile(kb, groups, coord.mTile, tileM);
    return;
  case GroupedLayout::MMasked:
    llvm_unreachable("m_masked kernels walk emitMaskedTileOfUnit's units");
  case GroupedLayout::KGrouped:
    llvm_unreachable("k_grouped kernels map their tiles with emitKGroupedTile");
  }
  llvm_unreachable("unknown grouped layout");
}

Value mlir::fp8::emitGroupBRow(KernelBuilder &kb, const GemmProblem &p,
                               Value group, Value nOffset) {
  // k_grouped: one B [N, K] for all groups, the group's columns.
  if (p.isKGrouped())
    return nOffset;
  return kb.add(nOffset, kb.mul(group, kb.i32(p.n)));
}

Value mlir::fp8::emitGroupBScales(KernelBuilder &kb, const GemmProblem &p,
                                  Value bScaleInv, Value group) {
  // k_grouped 1x128 scales cover the columns of all groups.
  if (p.getBScaleElementsPerGroup() == 0)
    return bScaleInv;
  return kb.globalElementPtr(
      bScaleInv, kb.mul(group, kb.i32(p.getBScaleElementsPerGroup())), 4);
}

Value mlir::fp8::emitGroupBScaleAtomRow(KernelBuilder &kb,
                                        const GemmProblem &p, Value group) {
  return kb.mul(group, kb.i32(llvm::divideCeil(p.n, kMXAtomRows)));
}

SmallVector<Value>
mlir::fp8::emitIfTileInGroup(KernelBuilder &kb, Value inGroup, ValueRange state,
                             function_ref<SmallVector<Value>()> body) {
  ImplicitLocOpBuilder &b = kb.builder();
  auto ifOp = scf::IfOp::create(b, state.getTypes(), inGroup,
                                /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    scf::YieldOp::create(b, body());
    b.setInsertionPointToStart(ifOp.elseBlock());
    scf::YieldOp::create(b, state);
  }
  return SmallVector<Value>(ifOp.getResults());
}
