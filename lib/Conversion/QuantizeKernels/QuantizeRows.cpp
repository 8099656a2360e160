//===- QuantizeRows.cpp - The row-granularity quantization kernels --------===//
//
// One scale per row of x (rowwise) or per column (columnwise, the rows of
// x^T): a row's threads reduce its maximum and then cast it (RowLayout); a
// column band's CTA reduces its columns' maxima over every row tile, then
// casts every row tile.
//
//===----------------------------------------------------------------------===//

#include "QuantizeEmitter.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::detail;

Value QuantizeKernelEmitter::rowChunk(const RowLayout &l, Value slab,
                                      int64_t k) {
  Value slabChunk = kb.mul(slab, kb.i32(l.chunksPerSlab()));
  Value firstChunk = kb.add(slabChunk, kb.remu(tid, kb.i32(l.threadsPerRow)));
  return kb.add(firstChunk, kb.i32(k * l.threadsPerRow));
}

Value QuantizeKernelEmitter::rowChunkIndex(Value row, Value chunk) {
  Value row64 = arith::ExtUIOp::create(b, b.getI64Type(), row);
  Value rowOffset = arith::MulIOp::create(b, row64, kb.i64(p.cols));
  Value chunkOffset = kb.mul(chunk, kb.i32(kVector));
  return arith::AddIOp::create(
      b, rowOffset, arith::ExtUIOp::create(b, b.getI64Type(), chunkOffset));
}

SmallVector<Value> QuantizeKernelEmitter::loadRowSlab(const RowLayout &l,
                                                      Value row, Value slab) {
  int64_t elementBytes = p.inputType.getIntOrFloatBitWidth() / 8;
  auto loadType = VectorType::get({4}, i32());
  SmallVector<Value> loads;
  for (int64_t k = 0; k < l.chunksPerThread; ++k) {
    Value chunk = rowChunk(l, slab, k);
    if (l.hasPartialSlab())
      chunk = arith::MinUIOp::create(b, chunk, kb.i32(l.chunksPerRow - 1));
    Value index = rowChunkIndex(row, chunk);
    for (int64_t part = 0; part < l.loadsPerChunk; ++part) {
      Value ptr = kb.globalElementPtr(
          x,
          arith::AddIOp::create(b, index,
                                kb.i64(part * kVector / l.loadsPerChunk)),
          elementBytes);
      loads.push_back(LLVM::LoadOp::create(b, loadType, ptr, /*alignment=*/16));
    }
  }
  return loads;
}

Value QuantizeKernelEmitter::rowSlabMax(ArrayRef<Value> loads) {
  // |x|'s bits in the input type: their unsigned order is the f32 order of
  // |x| (NaN above inf), and the conversion to f32 keeps it.
  unsigned bitWidth = p.inputType.getIntOrFloatBitWidth();
  Type intType = b.getIntegerType(bitWidth);
  auto intVector = VectorType::get({128 / bitWidth}, intType);
  APInt absBitsMask = APInt::getSignedMaxValue(bitWidth);
  Value absMask = arith::ConstantOp::create(
      b, DenseElementsAttr::get(intVector, llvm::ArrayRef(absBitsMask)));
  Value m;
  for (Value v : loads) {
    Value a = kb.andi(LLVM::BitcastOp::create(b, intVector, v), absMask);
    m = m ? umax(m, a) : a;
  }
  Value result;
  for (int64_t e = 0; e < intVector.getNumElements(); ++e) {
    Value v = LLVM::ExtractElementOp::create(b, m, kb.i32(e));
    result = result ? umax(result, v) : v;
  }
  if (p.inputType.isF32())
    return result;
  if (p.inputType.isBF16())
    return shl(arith::ExtUIOp::create(b, i32(), result), kb.i32(16));
  Value half = arith::BitcastOp::create(b, p.inputType, result);
  return bits(arith::ExtFOp::create(b, f32(), half));
}

void QuantizeKernelEmitter::castRowSlab(const RowLayout &l,
                                        ArrayRef<Value> loads, Value row,
                                        Value rowValid, Value slab,
                                        Value multiplier) {
  Value signMask = select(kb.ult(bits(multiplier), kb.i32(kF32Inf)),
                          kb.i32(0x80808080), kb.i32(0));
  for (int64_t k = 0; k < l.chunksPerThread; ++k) {
    SmallVector<Value> inputs;
    for (int64_t part = 0; part < l.loadsPerChunk; ++part) {
      Value v = loads[k * l.loadsPerChunk + part];
      int64_t perLoad = kVector / l.loadsPerChunk;
      v = LLVM::BitcastOp::create(b, VectorType::get({perLoad}, p.inputType),
                                  v);
      if (!p.inputType.isF32())
        v = arith::ExtFOp::create(b, VectorType::get({perLoad}, f32()), v);
      for (int64_t e = 0; e < perLoad; ++e)
        inputs.push_back(LLVM::ExtractElementOp::create(b, v, kb.i32(e)));
    }
    SmallVector<Value> scaled;
    for (Value v : inputs)
      scaled.push_back(arith::MulFOp::create(b, v, multiplier));
    Value packed = pack8(inputs, scaled, signMask);
    Value chunk = rowChunk(l, slab, k);
    Value index = rowChunkIndex(row, chunk);
    Value valid = rowValid;
    if (l.hasPartialSlab()) {
      Value chunkValid = kb.ult(chunk, kb.i32(l.chunksPerRow));
      valid = valid ? kb.andi(valid, chunkValid) : chunkValid;
    }
    auto store = [&] {
      LLVM::StoreOp::create(b, packed, kb.globalElementPtr(rowwise, index, 1),
                            /*alignment=*/8);
    };
    if (valid)
      kb.ifThen(valid, store);
    else
      store();
  }
}

SmallVector<Value> QuantizeKernelEmitter::forEachRowTile(
    ValueRange inits, function_ref<SmallVector<Value>(ValueRange)> body) {
  auto loop = scf::ForOp::create(b, kb.i32(0), numRowTiles(), kb.i32(1), inits);
  {
    OpBuilder::InsertionGuard guard(b);
    // Without carried values the loop comes with its terminator.
    if (inits.empty())
      b.setInsertionPoint(loop.getBody()->getTerminator());
    else
      b.setInsertionPointToStart(loop.getBody());
    rowTile = loop.getInductionVar();
    SmallVector<Value> next = body(loop.getRegionIterArgs());
    if (!inits.empty())
      scf::YieldOp::create(b, next);
  }
  rowTile = Value();
  return SmallVector<Value>(loop.getResults().begin(), loop.getResults().end());
}

SmallVector<Value>
QuantizeKernelEmitter::maxAbsBitsOfColumns(ValueRange carried) {
  SmallVector<Value> values = loadTile();
  SmallVector<Value> next;
  for (int64_t k = 0; k < kVector; ++k) {
    Value m = carried[k];
    for (int64_t l = 0; l < kVector; ++l)
      m = umax(m, absBits(values[l * kVector + k]));
    next.push_back(m);
  }
  return next;
}

void QuantizeKernelEmitter::emitRows() {
  RowLayout l = getRowLayout(p);
  Value band = kb.add(kb.mul(rowTile, kb.i32(kRowBandsPerGridRow)), colTile);
  Value rowInBand = kb.divu(tid, kb.i32(l.threadsPerRow));
  Value row = kb.add(kb.mul(band, kb.i32(l.rowsPerCta)), rowInBand);
  // Rows past R (in the last band, or in the grid's last row of bands) load
  // row R - 1 (every thread takes part in the reduction's barrier) and
  // store nothing.
  Value rowValid, loadRow = row;
  if (p.dynamicRows || p.rows % (l.rowsPerCta * kRowBandsPerGridRow) != 0) {
    rowValid = kb.ult(row, numRows());
    Value lastRow = kb.sub(numRows(), kb.i32(1));
    loadRow = arith::MinUIOp::create(b, row, lastRow);
  }

  // The row's maximum of |x|'s bits: the thread's, then the row's lanes',
  // then (rows wider than a warp) the row's warps' through shared memory.
  SmallVector<Value> loads;
  Value m;
  if (l.slabs == 1) {
    loads = loadRowSlab(l, loadRow, kb.i32(0));
    m = rowSlabMax(loads);
  } else {
    auto loop = scf::ForOp::create(b, kb.i32(0), kb.i32(l.slabs), kb.i32(1),
                                   ValueRange{kb.i32(0)});
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value slabMax = rowSlabMax(loadRowSlab(l, loadRow, loop.getInductionVar()));
    scf::YieldOp::create(b, umax(loop.getRegionIterArgs()[0], slabMax));
    b.setInsertionPointAfter(loop);
    m = loop.getResult(0);
  }
  SmallVector<int64_t> offsets;
  for (int64_t offset = std::min<int64_t>(l.threadsPerRow, kWarpThreads) / 2;
       offset >= 1; offset /= 2)
    offsets.push_back(offset);
  m = shuffleMax(m, offsets);
  if (l.threadsPerRow > kWarpThreads) {
    Value scratch = kb.dynamicSharedMemory();
    Value warp = kb.divu(tid, kb.i32(kWarpThreads));
    kb.ifThen(kb.eq(lane, kb.i32(0)), [&] {
      kb.store(m, kb.bytePtr(scratch, kb.mul(warp, kb.i32(4))));
    });
    gpu::BarrierOp::create(b);
    int64_t warpsPerRow = l.threadsPerRow / kWarpThreads;
    Value firstWarp = kb.mul(rowInBand, kb.i32(warpsPerRow));
    m = Value();
    for (int64_t w = 0; w < warpsPerRow; ++w) {
      Value offset = kb.mul(kb.add(firstWarp, kb.i32(w)), kb.i32(4));
      Value v = kb.load(i32(), kb.bytePtr(scratch, offset));
      m = m ? umax(m, v) : v;
    }
  }

  // The row's scale ([R, 1], stored by the row's first thread), then its
  // cast.
  BlockScale scale = computeScale(m);
  Value isFirst = kb.eq(kb.remu(tid, kb.i32(l.threadsPerRow)), kb.i32(0));
  kb.ifThen(rowValid ? kb.andi(isFirst, rowValid) : isFirst, [&] {
    kb.store(scale.stored, kb.globalElementPtr(rowwiseScale, row, 4));
  });
  if (l.slabs == 1) {
    castRowSlab(l, loads, row, rowValid, kb.i32(0), scale.multiplier);
    return;
  }
  auto loop = scf::ForOp::create(b, kb.i32(0), kb.i32(l.slabs), kb.i32(1));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(loop.getBody()->getTerminator());
  Value slab = loop.getInductionVar();
  castRowSlab(l, loadRowSlab(l, loadRow, slab), row, rowValid, slab,
              scale.multiplier);
}

void QuantizeKernelEmitter::emitColumns() {
  // Pass 1: each thread's maxima of |x| bits in its 8 columns (chunk) over
  // its 8 rows of every row tile (NaN above inf, sticky).
  SmallVector<Value> zeros(kVector, kb.i32(0));
  SmallVector<Value> maxima = forEachRowTile(
      zeros, [&](ValueRange carried) { return maxAbsBitsOfColumns(carried); });
  // Lanes l and l ^ 16 hold the same columns; the 8 warps' maxima meet in
  // shared memory (u32 [warps][128], after the transpose tile if any).
  Value scratch = kb.bytePtr(kb.dynamicSharedMemory(),
                             p.needsTranspose() ? kTransposeTileBytes : 0);
  Value warp = kb.divu(tid, kb.i32(kWarpThreads));
  auto i32x8 = VectorType::get({kVector}, i32());
  Value partial = LLVM::PoisonOp::create(b, i32x8);
  for (int64_t j = 0; j < kVector; ++j)
    partial = LLVM::InsertElementOp::create(
        b, partial, shuffleMax(maxima[j], {16}), kb.i32(j));
  Value chunkBytes = kb.mul(chunk, kb.i32(kVector * 4));
  Value warpRow = kb.mul(warp, kb.i32(kQuantizeTileCols * 4));
  kb.ifThen(kb.ult(lane, kb.i32(kChunksPerRow)), [&] {
    LLVM::StoreOp::create(b, partial,
                          kb.bytePtr(scratch, kb.add(warpRow, chunkBytes)),
                          /*alignment=*/16);
  });
  gpu::BarrierOp::create(b);

  // Each thread's 8 column scales (the 16 threads of a chunk alike); those
  // of row 0 store scale_inv ([C, 1]) and the multipliers, f32 [128] after
  // the maxima, where the cast of each row tile reads them.
  Value multipliers = kb.bytePtr(scratch, kWarps * kQuantizeTileCols * 4);
  Value isRow0 = kb.ult(tid, kb.i32(kChunksPerRow));
  for (int64_t j = 0; j < kVector; ++j) {
    Value m;
    for (int64_t w = 0; w < kWarps; ++w) {
      Value offset =
          kb.add(chunkBytes, kb.i32(w * kQuantizeTileCols * 4 + 4 * j));
      Value v = kb.load(i32(), kb.bytePtr(scratch, offset));
      m = m ? umax(m, v) : v;
    }
    BlockScale scale = computeScale(m);
    Value colInTile = kb.add(kb.mul(chunk, kb.i32(kVector)), kb.i32(j));
    Value col = kb.add(kb.mul(colTile, kb.i32(kQuantizeTileCols)), colInTile);
    kb.ifThen(isRow0, [&] {
      kb.store(scale.multiplier,
               kb.bytePtr(multipliers, kb.mul(colInTile, kb.i32(4))));
    });
    kb.ifThen(kb.andi(isRow0, kb.ult(col, kb.i32(p.cols))), [&] {
      kb.store(scale.stored, kb.globalElementPtr(columnwiseScale, col, 4));
    });
  }
  gpu::BarrierOp::create(b);

  // Pass 2: the cast of every row tile (read again), untransposed with the
  // per-column multipliers, or transposed: each transposed row is a column.
  forEachRowTile({}, [&](ValueRange) {
    SmallVector<Value> values = loadTile();
    if (!p.needsTranspose()) {
      columnBlockMultipliers = multipliers;
      quantizeOutput(values, OutputKind::ColumnwiseUntransposed, std::nullopt);
      return SmallVector<Value>();
    }
    // The previous tile's transposed reads are done before it is rewritten.
    gpu::BarrierOp::create(b);
    storeTileToShared(values);
    gpu::BarrierOp::create(b);
    OutputTile shape;
    shape.transposed = true;
    rowMultipliers.clear();
    for (int64_t s = 0; s < kSegments; ++s) {
      Value column =
          kb.add(kb.mul(rowInTile, kb.i32(4)), kb.i32(shape.rowOffset(s)));
      rowMultipliers.push_back(
          kb.load(f32(), kb.bytePtr(multipliers, kb.mul(column, kb.i32(4)))));
    }
    quantizeOutput(loadTransposedSegments(), OutputKind::ColumnwiseTransposed,
                   std::nullopt);
    return SmallVector<Value>();
  });
}
