//===- TileWalk.h - The elementwise kernels' walk of a tile -----*- C++ -*-===//
//
// What the dequantization and conversion kernels share: a 256-thread CTA
// per 128x128 tile of an [R, C] matrix (grid x: column tiles, y: row
// tiles), each thread 8 consecutive columns of 8 rows, every row and
// column guarded where R is a run-time value or the tiles do not divide
// the matrix; the kernel function around it and its metadata's frame.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_LIB_CONVERSION_QUANTIZEKERNELS_TILEWALK_H
#define FP8_LIB_CONVERSION_QUANTIZEKERNELS_TILEWALK_H

#include "FP8/Conversion/KernelSkeleton/KernelBuilder.h"
#include "FP8/Conversion/KernelSkeleton/KernelMetadata.h"
#include "QuantizeKernelsCommon.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace mlir::fp8::detail {

/// The thread's place in its tile, emitted once at the kernel's start.
struct TileWalk {
  Value chunk, rowInTile, colTile, rowTile, col, colValid;
  bool guarded;

  TileWalk(ImplicitLocOpBuilder &b, KernelBuilder &kb, int64_t rows,
           int64_t cols, bool dynamicRows) {
    Value tid = kb.threadIdX();
    chunk = kb.remu(tid, kb.i32(kChunksPerRow));
    rowInTile = kb.divu(tid, kb.i32(kChunksPerRow));
    colTile = kb.blockIdX();
    rowTile = arith::IndexCastUIOp::create(
        b, b.getI32Type(), gpu::BlockIdOp::create(b, gpu::Dimension::y));
    guarded = dynamicRows || rows % kQuantizeTileRows != 0 ||
              cols % kQuantizeTileCols != 0;
    col = kb.add(kb.mul(colTile, kb.i32(kQuantizeTileCols)),
                 kb.mul(chunk, kb.i32(kVector)));
    colValid = kb.ult(col, kb.i32(cols));
  }

  /// Runs `body(row, rowInOut, index)` for each of the thread's rows (R
  /// `numRows`, i32): `rowInOut` the row in the tile, `index` (i64) the
  /// element offset of its first column.
  void forEachRow(ImplicitLocOpBuilder &b, KernelBuilder &kb, Value numRows,
                  int64_t cols,
                  function_ref<void(Value, Value, Value)> body) const {
    for (int64_t i = 0; i < kRowsPerThread; ++i) {
      Value rowInOut = kb.add(rowInTile, kb.i32(kRowStep * i));
      Value row = kb.add(kb.mul(rowTile, kb.i32(kQuantizeTileRows)), rowInOut);
      auto atRow = [&] {
        Value index = arith::AddIOp::create(
            b,
            arith::MulIOp::create(
                b, arith::ExtUIOp::create(b, b.getI64Type(), row),
                kb.i64(cols)),
            arith::ExtUIOp::create(b, b.getI64Type(), col));
        body(row, rowInOut, index);
      };
      if (guarded)
        kb.ifThen(kb.andi(kb.ult(row, numRows), colValid), atRow);
      else
        atRow();
    }
  }
};

/// The metadata of a tile kernel of `kind`: its CTAs, tiles over `y`.
inline md::KernelMetadata makeTileKernelMetadata(StringRef name,
                                                 const ChipInfo &chip,
                                                 md::KernelKind kind) {
  return makeKernelMetadata(
      name, chip, kind, kQuantizeThreads, /*dynamicSharedMemoryBytes=*/0,
      getTilesGrid(kQuantizeTileRows, kQuantizeTileCols, "y"));
}

/// The metadata extents [R, C] of a tile kernel's matrices: R the symbol
/// kQuantizeRowsSymbol where it is a run-time value.
inline std::vector<md::Expr> getMatrixExtents(bool dynamicRows, int64_t rows,
                                              int64_t cols) {
  return {dynamicRows ? md::Expr::symbol(kQuantizeRowsSymbol.str())
                      : md::Expr::constant(rows),
          md::Expr::constant(cols)};
}

/// The i32 parameter `r` (R) of a kernel with a run-time R, after its
/// pointers.
inline void addRowsParam(md::KernelMetadata &metadata, bool dynamicRows) {
  if (dynamicRows)
    addValueParam(metadata, "r", md::ParamKind::I32, kQuantizeRowsSymbol);
}

/// A kernel `name` of `numPointers` pointer parameters (and the i32 `r`
/// with a run-time R) whose body `emit` writes from the entry block.
inline gpu::GPUFuncOp
buildTileKernel(OpBuilder &builder, Location loc, gpu::GPUModuleOp module,
                StringRef name, int64_t numPointers, bool dynamicRows,
                function_ref<void(ImplicitLocOpBuilder &, Block &)> emit) {
  SmallVector<Type> trailingArgs;
  if (dynamicRows)
    trailingArgs.push_back(builder.getI32Type());
  gpu::GPUFuncOp func = createPointerKernel(
      builder, loc, module, name, numPointers, kQuantizeThreads, trailingArgs);
  OpBuilder::InsertionGuard guard(builder);
  Block &entry = func.getBody().front();
  builder.setInsertionPointToStart(&entry);
  ImplicitLocOpBuilder b(loc, builder);
  emit(b, entry);
  return func;
}

} // namespace mlir::fp8::detail

#endif // FP8_LIB_CONVERSION_QUANTIZEKERNELS_TILEWALK_H
