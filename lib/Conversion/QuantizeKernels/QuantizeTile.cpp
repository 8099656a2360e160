//===- QuantizeTile.cpp - The 128x128 tile quantization kernel ------------===//
//
// The kernel of fp8.amax and of the casts with per-tensor, 128x128, 1x128
// and MX scales: one CTA per 128x128 tile of x, loaded once, with the
// transposed columnwise output through a swizzled f32 tile in shared
// memory (see QuantizeKernel.h).
//
//===----------------------------------------------------------------------===//

#include "QuantizeEmitter.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::detail;

Value QuantizeKernelEmitter::stashOffset(int64_t index) {
  // Consecutive threads' 16-byte vectors side by side: conflict-free.
  return kb.mul(kb.add(tid, kb.i32(index * kQuantizeThreads)), kb.i32(16));
}

SmallVector<Value> QuantizeKernelEmitter::loadStashedSegment(int64_t s,
                                                             bool zeroOutside) {
  int64_t elementBytes = p.inputType.getIntOrFloatBitWidth() / 8;
  int64_t perLoad = 16 / elementBytes;
  auto loadType = VectorType::get({perLoad}, p.inputType);
  auto f32Vector = VectorType::get({perLoad}, f32());
  Value smem = kb.dynamicSharedMemory();
  // The stash holds what the thread loaded; where it loaded nothing (a
  // partial tile), zeros are selected.
  Value valid;
  if (zeroOutside && guardTile) {
    Value firstRow = kb.mul(rowTile, kb.i32(kQuantizeTileRows));
    Value row = kb.add(firstRow, kb.add(rowInTile, kb.i32(kRowStep * s)));
    Value firstCol = kb.mul(colTile, kb.i32(kQuantizeTileCols));
    Value col = kb.add(firstCol, kb.mul(chunk, kb.i32(kVector)));
    Value colValid = kb.ult(col, kb.i32(p.cols));
    valid = kb.andi(kb.ult(row, numRows()), colValid);
  }
  SmallVector<Value> values;
  for (int64_t index = s * kVector / perLoad;
       index < (s + 1) * kVector / perLoad; ++index) {
    Value v =
        LLVM::LoadOp::create(b, loadType, kb.bytePtr(smem, stashOffset(index)),
                             /*alignment=*/16);
    if (valid) {
      Value zero = arith::ConstantOp::create(
          b,
          DenseElementsAttr::get(loadType, b.getFloatAttr(p.inputType, 0.0)));
      v = select(valid, v, zero);
    }
    if (!p.inputType.isF32())
      v = arith::ExtFOp::create(b, f32Vector, v);
    for (int64_t e = 0; e < perLoad; ++e)
      values.push_back(LLVM::ExtractElementOp::create(b, v, kb.i32(e)));
  }
  return values;
}

SmallVector<Value> QuantizeKernelEmitter::loadTile(bool stash) {
  int64_t elementBytes = p.inputType.getIntOrFloatBitWidth() / 8;
  bool guarded = guardTile;
  Value col = kb.add(kb.mul(colTile, kb.i32(kQuantizeTileCols)),
                     kb.mul(chunk, kb.i32(kVector)));
  Value colValid = kb.ult(col, kb.i32(p.cols));
  // Loads of 16 bytes: 8 bf16/f16 or 4 f32.
  int64_t perLoad = 16 / elementBytes;
  auto loadType = VectorType::get({perLoad}, p.inputType);
  auto f32Vector = VectorType::get({perLoad}, f32());

  SmallVector<Value> values;
  for (int64_t i = 0; i < kRowsPerThread; ++i) {
    Value row = kb.add(kb.mul(rowTile, kb.i32(kQuantizeTileRows)),
                       kb.add(rowInTile, kb.i32(kRowStep * i)));
    Value index = arith::AddIOp::create(
        b,
        arith::MulIOp::create(b, arith::ExtUIOp::create(b, b.getI64Type(), row),
                              kb.i64(p.cols)),
        arith::ExtUIOp::create(b, b.getI64Type(), col));
    auto loadRow = [&]() -> SmallVector<Value> {
      SmallVector<Value> parts;
      for (int64_t part = 0; part < kVector / perLoad; ++part) {
        Value ptr = kb.globalElementPtr(
            x, arith::AddIOp::create(b, index, kb.i64(part * perLoad)),
            elementBytes);
        Value v = LLVM::LoadOp::create(b, loadType, ptr, /*alignment=*/16);
        if (stash) {
          Value smem = kb.dynamicSharedMemory();
          LLVM::StoreOp::create(
              b, v,
              kb.bytePtr(smem, stashOffset(i * (kVector / perLoad) + part)),
              /*alignment=*/16);
        }
        if (!p.inputType.isF32())
          v = arith::ExtFOp::create(b, f32Vector, v);
        parts.push_back(v);
      }
      return parts;
    };
    SmallVector<Value> parts;
    if (guarded) {
      Value valid = kb.andi(kb.ult(row, numRows()), colValid);
      SmallVector<Type> types(kVector / perLoad, f32Vector);
      auto ifOp = scf::IfOp::create(b, types, valid, /*withElse=*/true);
      {
        OpBuilder::InsertionGuard g(b);
        b.setInsertionPointToStart(ifOp.thenBlock());
        scf::YieldOp::create(b, loadRow());
        b.setInsertionPointToStart(ifOp.elseBlock());
        Value zero = arith::ConstantOp::create(
            b, DenseElementsAttr::get(f32Vector, b.getF32FloatAttr(0.f)));
        scf::YieldOp::create(b, SmallVector<Value>(types.size(), zero));
      }
      parts = SmallVector<Value>(ifOp.getResults().begin(),
                                 ifOp.getResults().end());
    } else {
      parts = loadRow();
    }
    for (Value part : parts)
      for (int64_t e = 0; e < perLoad; ++e)
        values.push_back(LLVM::ExtractElementOp::create(b, part, kb.i32(e)));
  }
  return values;
}

/// The f32 transpose tile holds row r of the input tile in 32 groups of 4
/// floats. Group g of row r is stored at group g ^ (g >> 3 & 1) ^ (r >> 3 &
/// 7): the column reads (a quarter warp reads one group of the rows 8c + j,
/// c < 8) and the row writes (a quarter warp writes the groups 2c + h of a
/// row) then both touch 8 distinct 16-byte bank quads, conflict-free.
Value QuantizeKernelEmitter::swizzledOffset(Value row, Value group) {
  Value physical = xori(xori(group, kb.andi(shr(group, kb.i32(3)), kb.i32(1))),
                        kb.andi(shr(row, kb.i32(3)), kb.i32(7)));
  return kb.add(kb.mul(row, kb.i32(kTransposeRowBytes)),
                kb.mul(physical, kb.i32(kGroupBytes)));
}

void QuantizeKernelEmitter::storeTileToShared(ArrayRef<Value> values) {
  Value smem = kb.dynamicSharedMemory();
  auto vec4 = VectorType::get({4}, f32());
  for (int64_t i = 0; i < kRowsPerThread; ++i) {
    Value row = kb.add(rowInTile, kb.i32(kRowStep * i));
    for (int64_t h = 0; h < kVector / 4; ++h) {
      Value group = kb.add(kb.mul(chunk, kb.i32(kVector / 4)), kb.i32(h));
      Value v = LLVM::PoisonOp::create(b, vec4);
      for (int64_t e = 0; e < 4; ++e)
        v = LLVM::InsertElementOp::create(b, v, values[i * kVector + 4 * h + e],
                                          kb.i32(e));
      LLVM::StoreOp::create(b, v, kb.bytePtr(smem, swizzledOffset(row, group)),
                            /*alignment=*/16);
    }
  }
}

SmallVector<Value> QuantizeKernelEmitter::loadTransposedSegments() {
  // 16-byte reads: group rowInTile + 16 i2 (input columns 4g..4g+3) of the
  // input rows 8 * chunk + j give element j of 4 segments, the transposed
  // rows 4g + k (see OutputTile::rowOffset).
  Value smem = kb.dynamicSharedMemory();
  auto vec4 = VectorType::get({4}, f32());
  SmallVector<Value> segments(kSegments * kVector);
  for (int64_t i2 = 0; i2 < 2; ++i2) {
    Value group = kb.add(rowInTile, kb.i32(16 * i2));
    for (int64_t j = 0; j < kVector; ++j) {
      Value row = kb.add(kb.mul(chunk, kb.i32(kVector)), kb.i32(j));
      Value v = LLVM::LoadOp::create(
          b, vec4, kb.bytePtr(smem, swizzledOffset(row, group)),
          /*alignment=*/16);
      for (int64_t k = 0; k < 4; ++k)
        segments[(4 * i2 + k) * kVector + j] =
            LLVM::ExtractElementOp::create(b, v, kb.i32(k));
    }
  }
  return segments;
}

Value QuantizeKernelEmitter::pack8(ArrayRef<Value> inputs,
                                   ArrayRef<Value> scaled, Value signMask,
                                   Value highSignMask) {
  // cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32 d, a, b puts a in d[15:8] and b in
  // d[7:0]: element 2k + 1 goes in `a` so that bytes stay in memory order.
  //
  // The GPU's f32 multiply returns the canonical (positive) NaN, while the
  // reference's host product keeps the NaN operand's sign (encodeSatFinite:
  // sign | NaN code): x * scale is x for a NaN x and a finite scale, and the
  // (positive) NaN multiplier of a NaN MX block otherwise. So the bytes of
  // negative NaN inputs get their sign bit when the multiplier is a number.
  // With `signMask` (0x80808080 for a positive finite multiplier, 0 for a
  // NaN one), every byte gets its input's sign: cvt keeps the sign of every
  // other product, which is the input's, so only NaN bytes change. Without
  // it (a number that is not positive and finite), each input is compared.
  // Per-element multipliers (untransposed columnwise blocks) take the masks
  // byte by byte, `highSignMask` for the second word.
  auto pair = VectorType::get({2}, b.getI16Type());
  SmallVector<Value> words;
  for (int64_t w = 0; w < 2; ++w) {
    Value halves = LLVM::PoisonOp::create(b, pair);
    for (int64_t k = 0; k < 2; ++k) {
      int64_t e = 4 * w + 2 * k;
      Value codes = NVVM::ConvertF32x2ToF8x2Op::create(
          b, b.getI16Type(), scaled[e + 1], scaled[e], NVVM::FPRoundingMode::RN,
          NVVM::SaturationMode::SATFINITE,
          /*relu=*/false, p.elementType);
      halves = LLVM::InsertElementOp::create(b, halves, codes, kb.i32(k));
    }
    Value word = LLVM::BitcastOp::create(b, i32(), halves);
    ArrayRef<Value> four = inputs.slice(4 * w, 4);
    if (signMask) {
      // Byte 3 (the sign) of each input, in byte order: prmt selectors
      // pick bytes 0-3 of the first operand and 4-7 of the second.
      Value low = prmt(bits(four[0]), bits(four[1]), 0x0073);
      Value high = prmt(bits(four[2]), bits(four[3]), 0x7300);
      Value mask = w == 1 && highSignMask ? highSignMask : signMask;
      word = ori(word, kb.andi(prmt(low, high, 0x7610), mask));
    } else {
      for (int64_t e = 0; e < 4; ++e) {
        Value negativeNaN = cmpi(arith::CmpIPredicate::ugt, bits(four[e]),
                                 kb.i32(kF32SignAndExponentMask));
        word =
            ori(word, select(negativeNaN, kb.i32(0x80 << (8 * e)), kb.i32(0)));
      }
    }
    words.push_back(word);
  }
  Value packed = LLVM::PoisonOp::create(b, VectorType::get({2}, i32()));
  for (int64_t w = 0; w < 2; ++w)
    packed = LLVM::InsertElementOp::create(b, packed, words[w], kb.i32(w));
  return packed;
}

OutputTile QuantizeKernelEmitter::getOutputTile(OutputKind kind) {
  bool transposed = kind == OutputKind::ColumnwiseTransposed;
  OutputTile out;
  out.transposed = transposed;
  out.rows = transposed ? p.cols : p.rows;
  out.cols = transposed ? p.rows : p.cols;
  out.rowTile = transposed ? colTile : rowTile;
  out.colTile = transposed ? rowTile : colTile;
  out.rowBase = transposed ? kb.mul(rowInTile, kb.i32(4)) : rowInTile;
  out.data = kind == OutputKind::Rowwise ? rowwise : columnwise;
  out.scales = kind == OutputKind::Rowwise ? rowwiseScale : columnwiseScale;
  out.numRows = transposed ? kb.i32(p.cols) : numRows();
  if (transposed && p.hasStackedTranspose()) {
    // Stacked matrices: this tile's matrix g's transpose [C, R / groups]
    // is rows g * C.. of the [groups * C, R / groups] output.
    auto [stackedRowTile, stackedColTile] = getStackedTransposedTile();
    out.rows = p.groups * p.cols;
    out.cols = p.rows / p.groups;
    out.rowTile = stackedRowTile;
    out.colTile = stackedColTile;
    out.numRows = kb.i32(out.rows);
  }
  return out;
}

std::pair<Value, Value> QuantizeKernelEmitter::getStackedTransposedTile() {
  // Whole tiles: R / groups and C are multiples of 128 (QuantizeProblem).
  int64_t tilesPerMatrix = p.rows / p.groups / kQuantizeTileRows;
  Value matrix = kb.divu(rowTile, kb.i32(tilesPerMatrix));
  Value tileInMatrix = kb.remu(rowTile, kb.i32(tilesPerMatrix));
  return {kb.add(kb.mul(matrix, kb.i32(p.colTiles())), colTile),
          tileInMatrix};
}

OutputStores QuantizeKernelEmitter::getOutputStores(const OutputTile &out,
                                                    bool alsoUntransposed) {
  OutputStores st;
  st.firstRow =
      kb.add(kb.mul(out.rowTile, kb.i32(kQuantizeTileRows)), out.rowBase);
  Value col = kb.add(kb.mul(out.colTile, kb.i32(kQuantizeTileCols)),
                     kb.mul(chunk, kb.i32(kVector)));
  // A transposed output of a run-time R has rows of R bytes.
  st.dynamicCols = ShapedType::isDynamic(out.cols);
  Value numCols = st.dynamicCols ? numRows() : kb.i32(out.cols);
  st.colValid = kb.ult(col, numCols);
  st.rowBytes =
      st.dynamicCols
          ? arith::ExtUIOp::create(b, b.getI64Type(), numCols).getResult()
          : kb.i64(out.cols);
  // Every segment's address is this one plus a constant (plus a multiple
  // of the run-time row length).
  Value firstOffset = arith::AddIOp::create(
      b,
      arith::MulIOp::create(
          b, arith::ExtUIOp::create(b, b.getI64Type(), st.firstRow),
          st.rowBytes),
      arith::ExtUIOp::create(b, b.getI64Type(), col));
  st.base = kb.bytePtr(out.data, firstOffset);
  // The untransposed columnwise output: the same bytes at the same offsets
  // (x's layout, the same scale).
  st.untransposedBase =
      alsoUntransposed ? kb.bytePtr(columnwise, firstOffset) : Value();
  return st;
}

void QuantizeKernelEmitter::loadColumnMultipliers(
    Value columnMultipliers, int64_t blk,
    SmallVectorImpl<Value> &elementMultipliers, Value (&signMasks)[2]) {
  Value offset = kb.mul(
      kb.add(kb.i32(blk * kQuantizeTileCols), kb.mul(chunk, kb.i32(kVector))),
      kb.i32(4));
  Value v = LLVM::LoadOp::create(b, VectorType::get({kVector}, f32()),
                                 kb.bytePtr(columnMultipliers, offset),
                                 /*alignment=*/16);
  elementMultipliers.clear();
  for (int64_t j = 0; j < kVector; ++j)
    elementMultipliers.push_back(
        LLVM::ExtractElementOp::create(b, v, kb.i32(j)));
  for (int64_t w = 0; w < 2; ++w) {
    // Blockwise multipliers are positive and finite; MX ones may be NaN.
    if (!p.isMX()) {
      signMasks[w] = kb.i32(0x80808080);
      continue;
    }
    Value mask;
    for (int64_t e = 0; e < 4; ++e) {
      Value byte =
          select(kb.ult(bits(elementMultipliers[4 * w + e]), kb.i32(kF32Inf)),
                 kb.i32(0x80 << (8 * e)), kb.i32(0));
      mask = mask ? ori(mask, byte) : byte;
    }
    signMasks[w] = mask;
  }
}

void QuantizeKernelEmitter::castSegments(const OutputCast &cast,
                                         bool compareEachInput) {
  const OutputTile &out = cast.out;
  const OutputStores &st = cast.stores;
  SmallVector<Value> elementMultipliers;
  Value columnSignMasks[2];
  for (int64_t s = 0; s < kSegments; ++s) {
    SmallVector<Value> loaded;
    ArrayRef<Value> inputs;
    if (cast.loadSegment) {
      loaded = cast.loadSegment(s);
      inputs = loaded;
    } else {
      inputs = cast.segments.slice(s * kVector, kVector);
    }
    SmallVector<Value> scaled;
    Value signMask, highSignMask;
    if (cast.columnBlocks) {
      if (s % cast.segmentsPerColumnBlock == 0)
        loadColumnMultipliers(columnBlockMultipliers,
                              s / cast.segmentsPerColumnBlock,
                              elementMultipliers, columnSignMasks);
      for (auto [v, m] : llvm::zip_equal(inputs, elementMultipliers))
        scaled.push_back(arith::MulFOp::create(b, v, m));
      signMask = columnSignMasks[0];
      highSignMask = columnSignMasks[1];
    } else {
      const SegmentMultipliers &perBlock = cast.perBlock;
      Value multiplier = cast.shared ? cast.shared->multiplier
                         : !rowMultipliers.empty()
                             ? rowMultipliers[s]
                             : shuffleIdx(perBlock.slots[perBlock.slot[s]],
                                          ori(perBlock.blockFirstLane,
                                              kb.i32(perBlock.owner[s])));
      for (Value v : inputs)
        scaled.push_back(arith::MulFOp::create(b, v, multiplier));
      if (!compareEachInput)
        signMask = select(kb.ult(bits(multiplier), kb.i32(kF32Inf)),
                          kb.i32(0x80808080), kb.i32(0));
    }
    Value packed = pack8(inputs, scaled, signMask, highSignMask);
    int64_t rowOffset = out.rowOffset(s);
    auto store = [&] {
      Value ptr =
          st.dynamicCols
              ? kb.bytePtr(st.base, arith::MulIOp::create(b, st.rowBytes,
                                                          kb.i64(rowOffset)))
              : kb.bytePtr(st.base, rowOffset * out.cols);
      LLVM::StoreOp::create(b, packed, ptr, /*alignment=*/8);
      if (st.untransposedBase)
        LLVM::StoreOp::create(
            b, packed, kb.bytePtr(st.untransposedBase, rowOffset * out.cols),
            /*alignment=*/8);
    };
    if (cast.guarded)
      kb.ifThen(
          kb.andi(kb.ult(kb.add(st.firstRow, kb.i32(rowOffset)), out.numRows),
                  st.colValid),
          store);
    else
      store();
  }
}

void QuantizeKernelEmitter::quantizeOutput(
    ArrayRef<Value> segments, OutputKind kind,
    const std::optional<BlockScale> &shared,
    function_ref<SmallVector<Value>(int64_t)> loadSegment) {
  bool alsoUntransposed =
      kind == OutputKind::Rowwise && shared && p.hasUntransposedColumnwise();
  OutputCast cast;
  cast.out = getOutputTile(kind);
  cast.guarded = guardTile;
  cast.stores = getOutputStores(cast.out, alsoUntransposed);
  cast.segments = segments;
  cast.loadSegment = loadSegment;
  cast.shared = shared ? &*shared : nullptr;
  // Untransposed columnwise blocks: each element has its column's
  // multiplier, the same for the segments of one block of rows
  // (segmentsPerColumnBlock of them), read from shared memory where a block
  // starts, with the byte sign masks of pack8 (one per word).
  cast.columnBlocks = kind == OutputKind::ColumnwiseUntransposed && !shared;
  if (cast.columnBlocks) {
    assert(columnBlockMultipliers && "storeColumnBlockScales comes first");
    cast.segmentsPerColumnBlock = kSegments / getColumnBlocksPerTile(p);
  } else if (!shared && rowMultipliers.empty()) {
    cast.perBlock = blockMultipliers(segments, cast.out);
  }
  if (p.scaleSource != QuantizeScaleSource::Given) {
    castSegments(cast, /*compareEachInput=*/false);
    return;
  }
  // A given scale may be anything: the sign-mask form needs it positive and
  // finite, or NaN (one uniform branch).
  Value scaleBits = bits(shared->multiplier);
  Value positiveFinite =
      kb.ult(kb.sub(scaleBits, kb.i32(1)), kb.i32(kF32Inf - 1));
  Value isNaN = cmpi(arith::CmpIPredicate::ugt, absBits(shared->multiplier),
                     kb.i32(kF32Inf));
  auto ifOp = scf::IfOp::create(b, TypeRange(), ori(positiveFinite, isNaN),
                                /*withElse=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  castSegments(cast, /*compareEachInput=*/false);
  b.setInsertionPointToStart(ifOp.elseBlock());
  castSegments(cast, /*compareEachInput=*/true);
}

void QuantizeKernelEmitter::emit(gpu::GPUFuncOp func) {
  Block &entry = func.getBody().front();
  unsigned arg = 0;
  x = entry.getArgument(arg++);
  if (p.isAmaxOnly) {
    amaxOut = entry.getArgument(arg++);
  } else {
    if (p.scaleSource != QuantizeScaleSource::PerBlock)
      scaleOrAmax = entry.getArgument(arg++);
    if (p.rowwise) {
      rowwise = entry.getArgument(arg++);
      rowwiseScale = entry.getArgument(arg++);
    }
    if (p.columnwise) {
      columnwise = entry.getArgument(arg++);
      columnwiseScale = entry.getArgument(arg++);
    }
    if (p.historyLength > 0)
      amaxOut = entry.getArgument(arg++);
  }
  if (p.dynamicRows)
    dynamicRows = entry.getArgument(arg++);

  tid = kb.threadIdX();
  lane = kb.remu(tid, kb.i32(kWarpThreads));
  chunk = kb.remu(tid, kb.i32(kChunksPerRow));
  rowInTile = kb.divu(tid, kb.i32(kChunksPerRow));
  colTile = kb.blockIdX();
  rowTile = arith::IndexCastUIOp::create(
      b, i32(), gpu::BlockIdOp::create(b, gpu::Dimension::y));

  if (p.granularity == GranularityKind::Row) {
    if (p.columnwise) {
      // Its row tiles' loads and casts are guarded at the edges of x.
      guardTile = hasPartialTiles();
      emitColumns();
    } else {
      emitRows();
    }
  } else if (hasColumnBlocks(p) && hasPartialTiles()) {
    // The guards of a partial tile cost a cast with column blocks about a
    // sixth of its bandwidth (MX, run-time R): whole tiles take a copy of
    // the code without them (a CTA-uniform branch).
    Value lastRow = kb.add(kb.mul(rowTile, kb.i32(kQuantizeTileRows)),
                           kb.i32(kQuantizeTileRows));
    Value lastCol = kb.add(kb.mul(colTile, kb.i32(kQuantizeTileCols)),
                           kb.i32(kQuantizeTileCols));
    Value rowsInside = cmpi(arith::CmpIPredicate::ule, lastRow, numRows());
    Value colsInside = cmpi(arith::CmpIPredicate::ule, lastCol, kb.i32(p.cols));
    Value whole = kb.andi(rowsInside, colsInside);
    auto ifOp = scf::IfOp::create(b, TypeRange(), whole, /*withElse=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    emitTile();
    b.setInsertionPointToStart(ifOp.elseBlock());
    guardTile = true;
    emitTile();
  } else {
    guardTile = hasPartialTiles();
    emitTile();
  }
  gpu::ReturnOp::create(b);
}

void QuantizeKernelEmitter::storeSharedScale(const BlockScale &shared,
                                             Value isFirstThread) {
  Value first = kb.andi(isFirstThread, kb.andi(kb.eq(colTile, kb.i32(0)),
                                               kb.eq(rowTile, kb.i32(0))));
  auto storeScale = [&](Value scales, int64_t index) {
    kb.store(shared.stored, kb.globalElementPtr(scales, kb.i32(index), 4));
  };
  if (p.granularity == GranularityKind::Tensor) {
    kb.ifThen(first, [&] {
      if (p.rowwise)
        storeScale(rowwiseScale, 0);
      if (p.columnwise)
        storeScale(columnwiseScale, 0);
    });
  } else if (p.mxScales) {
    // 128x128 as MX scales: the tile is one whole atom of x (rowwise) and
    // of x^T (columnwise), every byte its code; a word per thread.
    Value word = repeatedCode(shared.stored);
    Value offset = kb.mul(tid, kb.i32(4));
    auto fillAtom = [&](Value scales, Value atom) {
      kb.store(word,
               kb.bytePtr(scales,
                          kb.add(kb.mul(atom, kb.i32(kMXAtomBytes)), offset)));
    };
    kb.ifThen(kb.ult(tid, kb.i32(kMXAtomBytes / 4)), [&] {
      if (p.rowwise)
        fillAtom(rowwiseScale,
                 kb.add(kb.mul(rowTile, kb.i32(p.colTiles())), colTile));
      if (p.columnwise)
        fillAtom(columnwiseScale,
                 kb.add(kb.mul(colTile, numRowTiles()), rowTile));
    });
  } else {
    // 128x128: [ceil(R/128), ceil(C/128)] and its transpose.
    kb.ifThen(isFirstThread, [&] {
      if (p.rowwise)
        kb.store(shared.stored,
                 kb.globalElementPtr(
                     rowwiseScale,
                     kb.add(kb.mul(rowTile, kb.i32(p.colTiles())), colTile),
                     4));
      if (p.columnwise && p.hasStackedTranspose()) {
        // Each matrix's transposed scales, stacked.
        auto [stackedRowTile, stackedColTile] = getStackedTransposedTile();
        int64_t tilesPerMatrix = p.rows / p.groups / kQuantizeTileRows;
        kb.store(shared.stored,
                 kb.globalElementPtr(
                     columnwiseScale,
                     kb.add(kb.mul(stackedRowTile, kb.i32(tilesPerMatrix)),
                            stackedColTile),
                     4));
      } else if (p.columnwise) {
        kb.store(shared.stored,
                 kb.globalElementPtr(
                     columnwiseScale,
                     kb.add(kb.mul(colTile, numRowTiles()), rowTile), 4));
      }
    });
  }
}

void QuantizeKernelEmitter::emitTile() {
  SmallVector<Value> values = loadTile(/*stash=*/hasColumnBlocks(p));
  Value isFirstThread = kb.eq(tid, kb.i32(0));

  // The tensor's amax: into amax[0] (amax kernel) or history slot 0
  // (delayed-scaling cast), one atomic max per CTA. |x| bits compare as
  // unsigned integers in float order, NaN above inf (sticky).
  std::optional<Value> tileMax;
  auto getTileMax = [&]() {
    if (!tileMax) {
      Value m = absBits(values[0]);
      for (Value v : ArrayRef<Value>(values).drop_front())
        m = umax(m, absBits(v));
      tileMax = ctaMax(m);
    }
    return *tileMax;
  };
  if (amaxOut) {
    Value m = getTileMax();
    kb.ifThen(isFirstThread, [&] {
      LLVM::AtomicRMWOp::create(b, LLVM::AtomicBinOp::umax, amaxOut, m,
                                LLVM::AtomicOrdering::monotonic);
    });
  }
  if (p.isAmaxOnly)
    return;

  // Per-tensor and 128x128 scales are shared by every element of the tile.
  std::optional<BlockScale> shared;
  if (p.scaleSource != QuantizeScaleSource::PerBlock)
    shared = tensorScale();
  else if (p.blockRows == kQuantizeTileRows)
    shared = computeScale(getTileMax());
  if (shared)
    storeSharedScale(*shared, isFirstThread);

  // The transpose tile is written first so that the rowwise work hides the
  // stores; the transposed columnwise output reads it back after one
  // barrier. An untransposed one with a shared scale is the rowwise bytes.
  // With per-block scales, the passes after the rowwise output read the
  // stash: the column maxima, and after the column scales the columnwise
  // cast; x is read once.
  if (p.needsTranspose())
    storeTileToShared(values);
  if (hasColumnBlocks(p)) {
    // The warp barrier, which LLVM treats as touching memory, keeps it from
    // forwarding the stash stores into the loads (which would keep the
    // values live again).
    NVVM::SyncWarpOp::create(b, kb.i32(-1));
    // The rowwise cast reads the stash too (the values are live only until
    // its block maxima) where registers are short: 1x128 blocks (58-64
    // registers instead of 80) and partial tiles (whose guards spill at
    // 80). Whole MX tiles keep them: at 64 registers, 4 CTAs of 50 KiB of
    // shared memory an SM leave 28 KiB of L1 for the loads in flight, and
    // ran 13% slower on an H200 than 3 CTAs at 80.
    bool reload = guardTile || !p.isMX();
    if (p.rowwise && reload)
      quantizeOutput(values, OutputKind::Rowwise, shared,
                     [&](int64_t s) { return loadStashedSegment(s); });
    else if (p.rowwise)
      quantizeOutput(values, OutputKind::Rowwise, shared);
  } else if (p.rowwise) {
    quantizeOutput(values, OutputKind::Rowwise, shared);
  }
  if (p.needsTranspose()) {
    gpu::BarrierOp::create(b);
    quantizeOutput(loadTransposedSegments(), OutputKind::ColumnwiseTransposed,
                   shared);
  }
  if (p.hasUntransposedColumnwise()) {
    if (hasColumnBlocks(p)) {
      // The inputs come back from the stash rather than staying in
      // registers over the scale computation (they spill under the
      // 80-register cap) or being read again from global memory.
      SmallVector<Value> stashed;
      for (int64_t s = 0; s < kSegments; ++s)
        llvm::append_range(stashed,
                           loadStashedSegment(s, /*zeroOutside=*/true));
      storeColumnMaxima(stashed);
      columnBlockMultipliers = storeColumnBlockScales();
      quantizeOutput({}, OutputKind::ColumnwiseUntransposed, shared,
                     [&](int64_t s) { return loadStashedSegment(s); });
    } else if (!p.rowwise) {
      quantizeOutput(values, OutputKind::ColumnwiseUntransposed, shared);
    }
  }
}

gpu::GPUFuncOp mlir::fp8::buildQuantizeKernel(OpBuilder &builder, Location loc,
                                              gpu::GPUModuleOp module,
                                              StringRef name,
                                              const QuantizeProblem &p) {
  int64_t numPointers = 2; // x and amax
  if (!p.isAmaxOnly)
    numPointers = 1 + (p.scaleSource != QuantizeScaleSource::PerBlock) +
                  2 * p.rowwise + 2 * p.columnwise + (p.historyLength > 0);
  SmallVector<Type> trailingArgs;
  if (p.dynamicRows)
    trailingArgs.push_back(builder.getI32Type());
  gpu::GPUFuncOp func = createPointerKernel(
      builder, loc, module, name, numPointers, kQuantizeThreads, trailingArgs);
  if (!p.isAmaxOnly)
    func->setAttr(
        NVVM::NVVMDialect::getMinctasmAttrName(),
        // The columnwise row-granularity kernel (its columns' maxima, then
        // a cast of every row tile) spills under the 80-register cap.
        builder.getI32IntegerAttr(
            p.granularity == GranularityKind::Row && p.columnwise
                ? std::min(p.minBlocksPerSM, kWideMinBlocksPerSM)
                : p.minBlocksPerSM));
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(&func.getBody().front());
  ImplicitLocOpBuilder b(loc, builder);
  QuantizeKernelEmitter(b, p).emit(func);
  return func;
}
