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
  return kb.load(kb.builder().getI32Type(),
                 kb.globalElementPtr(groupIndex, firstRow, 4));
}

void mlir::fp8::emitMaskedTile(KernelBuilder &kb, Value maskedM, Value m,
                               int64_t tileM, TileCoordinate &coord) {
  ImplicitLocOpBuilder &b = kb.builder();
  Value tilesPerGroup = kb.ceilDiv(m, tileM);
  Value group = kb.divu(coord.mTile, tilesPerGroup);
  coord.mTile = kb.remu(coord.mTile, tilesPerGroup);
  Value count =
      kb.load(b.getI32Type(), kb.globalElementPtr(maskedM, group, 4));
  // Signed: a negative count has no valid row.
  Value active = arith::CmpIOp::create(b, arith::CmpIPredicate::slt,
                                       kb.mul(coord.mTile, kb.i32(tileM)),
                                       count);
  coord.group = arith::SelectOp::create(b, active, group, kb.i32(-1));
  coord.groupRows = arith::MinSIOp::create(b, count, m);
}

Value mlir::fp8::emitIsGroupInRange(KernelBuilder &kb, Value group,
                                    int64_t numGroups) {
  return kb.ult(group, kb.i32(numGroups));
}

void mlir::fp8::emitTileGroup(KernelBuilder &kb, const GemmProblem &p,
                              Value groups, Value groupM, int64_t tileM,
                              TileCoordinate &coord) {
  switch (p.groupLayout) {
  case GroupedLayout::MContiguous:
    coord.group = emitGroupOfTile(kb, groups, coord.mTile, tileM);
    return;
  case GroupedLayout::MMasked:
    assert(groupM && "an m_masked kernel passes the rows of each group");
    emitMaskedTile(kb, groups, groupM, tileM, coord);
    return;
  }
  llvm_unreachable("unknown grouped layout");
}

Value mlir::fp8::emitGroupBRow(KernelBuilder &kb, const GemmProblem &p,
                               Value group, Value nOffset) {
  return kb.add(nOffset, kb.mul(group, kb.i32(p.n)));
}

Value mlir::fp8::emitGroupBScales(KernelBuilder &kb, const GemmProblem &p,
                                  Value bScaleInv, Value group) {
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
