//===- HopperSwapAB.cpp - Swap-AB pieces of the sm_90a GEMM ---------------===//

#include "FP8/Conversion/FP8ToHopper/HopperSwapAB.h"
#include "FP8/Conversion/FP8ToHopper/HopperMainloop.h"
#include "FP8/Conversion/FP8ToHopper/HopperScheduler.h"
#include "FP8/Conversion/KernelSkeleton/GemmEpilogue.h"

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::hopper;

SmallVector<Value> hopper::emitSwapABStageScales(KernelBuilder &kb,
                                                 const GemmTiling &t,
                                                 Value slot,
                                                 Value colInFragment) {
  ImplicitLocOpBuilder &b = kb.builder();
  Value bScale = kb.load(b.getF32Type(), kb.bytePtr(slot, 4 * t.tileM));
  // The tokens' scales, per accumulator column (element 2j + e).
  SmallVector<Value> products;
  for (Value tokenScale :
       emitColumnScaleLoads(kb, slot, colInFragment, 0, t.tileM))
    products.push_back(arith::MulFOp::create(b, bScale, tokenScale));
  return products;
}

void hopper::emitSwapABTileEpilogue(KernelBuilder &kb, const GemmProblem &p,
                                    const GemmTiling &t, const KernelValues &v,
                                    const EpilogueThread &thread, Value unit,
                                    Value result) {
  ImplicitLocOpBuilder &b = kb.builder();
  TileCoordinate coord = emitTileOfUnit(kb, p, t, v, unit);
  Value mOffset = kb.mul(coord.mTile, kb.i32(t.tileM));
  Value nOffset = kb.mul(coord.nTile, kb.i32(t.tileN));
  Value mLast = kb.sub(v.m, kb.i32(1));
  Value nLast = kb.i32(p.n - 1);
  int64_t outBytes = getByteWidth(p.outElementType);
  // Per B row (output column n): its row scale and bias, read clamped (a
  // partial last tile's rows past N store nothing).
  Value columns[2], columnScale[2], bias[2];
  for (int h = 0; h < 2; ++h) {
    columns[h] = kb.add(nOffset, kb.add(thread.rowInTile, kb.i32(8 * h)));
    Value read = kb.minu(columns[h], nLast);
    if (p.bScale == ScaleMode::Row)
      columnScale[h] = kb.loadF32(v.bScaleInv, read);
    if (p.biasElementType)
      bias[h] = emitBiasLoad(kb, p, v.bias, read);
  }
  Value columnInBounds[2] = {kb.ult(columns[0], kb.i32(p.n)),
                             kb.ult(columns[1], kb.i32(p.n))};
  for (int64_t j = 0; j < t.tileM / 8; ++j) {
    for (int e = 0; e < 2; ++e) {
      Value row = kb.add(mOffset, kb.add(kb.i32(8 * j + e),
                                         thread.colInFragment));
      Value rowScale;
      if (p.aScale == ScaleMode::Row)
        rowScale = kb.loadF32(v.aScaleInv, kb.minu(row, mLast));
      Value rowInBounds = kb.ult(row, v.m);
      for (int h = 0; h < 2; ++h) {
        Value x = emitScaledOutput(
            kb, p, LLVM::ExtractValueOp::create(b, result, 4 * j + 2 * h + e),
            {thread.tensorScale, rowScale, columnScale[h]}, bias[h]);
        if (!p.outElementType.isF32())
          x = arith::TruncFOp::create(b, p.outElementType, x);
        kb.ifThen(kb.andi(rowInBounds, columnInBounds[h]), [&] {
          Value index = emitRowMajorIndex(kb, row, columns[h], p.n);
          kb.store(x, kb.globalElementPtr(v.d, index, outBytes));
        });
      }
    }
  }
}
