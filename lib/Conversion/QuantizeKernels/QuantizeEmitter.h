//===- QuantizeEmitter.h - Emitter of the quantization kernels -*- C++ -*-===//
//
// The emitter of the fp8.amax and fp8.quantize kernels (QuantizeKernel.h),
// private to this folder. Its definitions are split by role:
//   QuantizeProblem.cpp   what a quantization asks for, the kernel's name
//                         and shared memory
//   QuantizeMetadata.cpp  the scale layouts and the kernel's metadata
//   QuantizeScales.cpp    amax reductions and the scale rules
//   QuantizeTile.cpp      the 128x128 tile kernel: the amax kernel and the
//                         casts with per-tensor, tile and MX scales
//   QuantizeRows.cpp      the row-granularity casts
//
//===----------------------------------------------------------------------===//

#ifndef FP8_LIB_CONVERSION_QUANTIZEKERNELS_QUANTIZEEMITTER_H
#define FP8_LIB_CONVERSION_QUANTIZEKERNELS_QUANTIZEEMITTER_H

#include "FP8/Conversion/KernelSkeleton/GemmKernel.h"
#include "FP8/Conversion/KernelSkeleton/KernelBuilder.h"
#include "FP8/Conversion/QuantizeKernels/QuantizeKernel.h"
#include "QuantizeKernelsCommon.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

#include <optional>

namespace mlir::fp8::detail {

/// A thread quantizes 8 segments of 8 consecutive elements per output.
inline constexpr int64_t kSegments = kRowsPerThread;
/// The f32 transpose tile: 128 floats a row, in 16-byte groups of 4.
inline constexpr int64_t kTransposeRowBytes = kQuantizeTileCols * 4;
inline constexpr int64_t kGroupBytes = 16;
inline constexpr int64_t kTransposeTileBytes =
    kQuantizeTileRows * kTransposeRowBytes;

inline constexpr int64_t kWarps = kQuantizeThreads / kWarpThreads;
/// Bytes of the CTA reduction scratch (one u32 per warp).
inline constexpr int64_t kReductionBytes = 4 * kWarps;
/// CTAs of a cast kernel that ptxas must fit on one SM: the 64 KiB transpose
/// tile allows 3, and registers should not allow fewer (65536 / (3 * 256)
/// caps them at 80 per thread).
inline constexpr int64_t kQuantizeMinBlocksPerSM = 3;
/// The same where 80 registers spill: on sm_100a, whose ptxas spills three
/// of the transposing casts at 80; 128 registers do not.
inline constexpr int64_t kWideMinBlocksPerSM = 2;
/// Row granularity: each thread keeps at most this many 16-byte loads of its
/// row in registers (32 registers), and the grid's x extent holds this many
/// consecutive row bands (CTAs), so that its y extent (at most 65535)
/// reaches R = 524280 even at one row a CTA.
inline constexpr int64_t kRowLoadsPerThread = 8;
inline constexpr int64_t kRowBandsPerGridRow = 8;
/// A transposed columnwise output's rows are R bytes: 16-byte aligned rows
/// (its 8-byte stores, and the TMA loads of the GEMMs reading it) need R a
/// multiple of 16, checked at launch for a run-time R.
inline constexpr int64_t kTransposedRowAlignment = 16;

/// How a row-granularity cast spreads its rows over a CTA: `threadsPerRow`
/// threads share a row, each loading `chunksPerThread` chunks of 8 elements
/// of it per slab, chunk k * threadsPerRow + t for thread t (coalesced). A
/// row of at most 2048 16-byte loads is one slab: it stays in registers
/// from its amax to its cast, so x is read once. A longer row takes several
/// slabs and is read twice (the second time from L2: a CTA's rows are
/// few). A CTA casts `rowsPerCta` rows, a band.
struct RowLayout {
  int64_t loadsPerChunk;   ///< 16-byte loads of 8 elements: 1, or 2 (f32)
  int64_t chunksPerRow;    ///< C / 8
  int64_t threadsPerRow;   ///< a power of two, at most the CTA
  int64_t chunksPerThread; ///< per slab
  int64_t slabs;
  int64_t rowsPerCta;

  int64_t chunksPerSlab() const { return threadsPerRow * chunksPerThread; }
  /// Whether the last slab has chunks past C (clamped loads, no stores).
  bool hasPartialSlab() const { return chunksPerRow % chunksPerSlab() != 0; }
};

RowLayout getRowLayout(const QuantizeProblem &p);

/// The kernel-name spelling of the problem's rule ("mxfp8") and of its
/// granularity ("1x128").
StringRef getRuleName(QuantizeProblem::Rule rule);
std::string getGranularityName(const QuantizeProblem &p);

/// Whether the cast has an untransposed columnwise output with per-block
/// scales of its own (128x1 or MX 32x1 blocks of x: column blocks).
bool hasColumnBlocks(const QuantizeProblem &p);
/// Row blocks of a tile in an untransposed columnwise output with per-block
/// scales (128x1 blocks: 1, MX 32x1 blocks: 4).
int64_t getColumnBlocksPerTile(const QuantizeProblem &p);
/// Bytes of the copy of the loaded tile that a cast with column blocks keeps
/// in shared memory for its columnwise pass: each thread's 16-byte loads as
/// loaded (in the input type), 32 KiB for 16-bit inputs.
int64_t getStashBytes(const QuantizeProblem &p);

/// A block's scale: the quantizer's multiplier and what is stored (f32
/// scale_inv, or the UE8M0 code as i8).
struct BlockScale {
  Value multiplier;
  Value stored;
};

/// The outputs of a cast: rowwise (x's layout), columnwise stored
/// transposed (x^T, [C, R]) or untransposed (x's layout, [R, C]: the
/// rowwise geometry, with the scales of x^T's blocks, i.e. of columns).
enum class OutputKind { Rowwise, ColumnwiseTransposed, ColumnwiseUntransposed };

/// One output of a cast as one thread sees it: the stored matrix (rowwise
/// and untransposed columnwise: x, [R, C]; transposed columnwise: x^T,
/// [C, R]), the CTA's tile of it, and the rows of the thread's segments.
/// Segment s (< kSegments) is the 8 elements at columns 8 * chunk.. of tile
/// row `rowBase + rowOffset(s)`.
struct OutputTile {
  bool transposed;
  /// Extents of the stored matrix (`rows` is ShapedType::kDynamic for a
  /// run-time R; transposed outputs have static extents).
  int64_t rows, cols;
  /// `rows` as an i32: the constant or the run-time R.
  Value numRows;
  Value rowTile, colTile; ///< i32
  Value rowBase;          ///< i32
  Value data, scales;

  /// Rowwise: rows rowInTile + 16 s (the loaded rows). Transposed: the 4
  /// rows of each of the column groups rowInTile and rowInTile + 16 of the
  /// transpose tile, rows 4 * rowInTile + 64 (s / 4) + s % 4.
  int64_t rowOffset(int64_t s) const {
    return transposed ? 64 * (s / 4) + s % 4 : kRowStep * s;
  }
};

/// The multipliers of a thread's segments under per-block scales: segment
/// s's was computed by lane `blockFirstLane | owner[s]` as its
/// `slots[slot[s]]`, and is fetched where it is used (one live at a time).
struct SegmentMultipliers {
  SmallVector<Value> slots;
  Value blockFirstLane;
  SmallVector<int64_t> slot, owner;
};

/// Where the thread stores its segments of one output (see castSegments).
struct OutputStores {
  /// The output row of segment 0 (i32), and whether the thread's chunk is
  /// inside the output's columns.
  Value firstRow, colValid;
  /// The output's row length in bytes (i64) and whether it is the run-time
  /// R (a transposed output of a run-time R).
  Value rowBytes;
  bool dynamicCols = false;
  /// The address of segment 0, and of its copy in the untransposed
  /// columnwise output when the rowwise bytes are that output too.
  Value base, untransposedBase;
};

/// One output's cast by one thread: its tile, stores and scales.
struct OutputCast {
  OutputTile out;
  OutputStores stores;
  /// The tile may be partial: stores are guarded.
  bool guarded = false;
  /// The thread's 8 x 8 values, or `loadSegment` (see quantizeOutput).
  ArrayRef<Value> segments;
  function_ref<SmallVector<Value>(int64_t)> loadSegment;
  /// The tile's scale when it has one (null otherwise).
  const BlockScale *shared = nullptr;
  /// Untransposed columnwise blocks: each element has its column's
  /// multiplier, the same for the segments of one block of rows
  /// (`segmentsPerColumnBlock` of them).
  bool columnBlocks = false;
  int64_t segmentsPerColumnBlock = 0;
  /// Per-block scales of the thread's segments (blockMultipliers).
  SegmentMultipliers perBlock;
};

class QuantizeKernelEmitter {
public:
  QuantizeKernelEmitter(ImplicitLocOpBuilder &b, const QuantizeProblem &p)
      : b(b), kb(b), p(p) {}

  void emit(gpu::GPUFuncOp func);
  /// The CTA's 128x128 tile of x: amax, casts and scales.
  void emitTile();

  /// Row granularity: the CTA's rows (RowLayout): each row's amax, its
  /// scale, then its cast.
  void emitRows();
  /// Row granularity, columnwise output (the rows of x^T: x's columns):
  /// the CTA's 128-column band, its columns' maxima over every row tile,
  /// their scales, then the cast of every row tile.
  void emitColumns();
  /// Runs `body` for each row tile of x (rowTile its index), carrying
  /// `inits` (i32) from one to the next; returns the last values.
  SmallVector<Value>
  forEachRowTile(ValueRange inits,
                 function_ref<SmallVector<Value>(ValueRange)> body);

private:
  ImplicitLocOpBuilder &b;
  KernelBuilder kb;
  const QuantizeProblem &p;

  /// Loads the tile and max-es |x|'s bits into `carried`, the thread's 8
  /// running maxima of its columns.
  SmallVector<Value> maxAbsBitsOfColumns(ValueRange carried);

  // Parameters.
  Value x, scaleOrAmax, rowwise, rowwiseScale, columnwise, columnwiseScale,
      amaxOut;
  /// R (i32) when it is a run-time value: the kernel's `r` parameter.
  Value dynamicRows;
  // Thread geometry (i32).
  Value tid, lane, chunk, rowInTile, colTile, rowTile;
  /// Untransposed columnwise blocks: their multipliers in shared memory
  /// (see storeColumnBlockScales).
  Value columnBlockMultipliers;
  /// Row granularity, transposed columnwise output: the multiplier of each
  /// of the thread's 8 output rows (x's columns).
  SmallVector<Value> rowMultipliers;

  Type i32() { return b.getI32Type(); }
  Type f32() { return b.getF32Type(); }
  /// R as an i32: the constant, or the run-time value.
  Value numRows() { return p.dynamicRows ? dynamicRows : kb.i32(p.rows); }
  /// ceil(R / 128), the row tiles (the grid's y extent).
  Value numRowTiles() {
    return p.dynamicRows ? kb.ceilDiv(dynamicRows, kQuantizeTileRows)
                         : kb.i32(p.rowTiles());
  }
  /// Whether some tile is partial (always with a run-time R).
  bool hasPartialTiles() const {
    return p.dynamicRows || p.rows % kQuantizeTileRows != 0 ||
           p.cols % kQuantizeTileCols != 0;
  }
  /// Whether the tile being emitted may be partial, so that its loads and
  /// stores need guards (see emitTile).
  bool guardTile = false;
  Value bits(Value f) { return arith::BitcastOp::create(b, i32(), f); }
  /// Byte (row % 32) * 16 + row / 32 * 4 + block of MX atom `atom`, for a
  /// row (< 128) of the atom and its 1x32 block `block` (< 4; null: the
  /// row's first byte).
  Value atomByteOffset(Value atom, Value row, Value block) {
    Value quarter = kb.divu(row, kb.i32(32));
    Value inRow = kb.mul(quarter, kb.i32(4));
    if (block)
      inRow = kb.add(inRow, block);
    Value rowInQuarter = kb.remu(row, kb.i32(32));
    Value rowBytes = kb.mul(rowInQuarter, kb.i32(16));
    Value atomStart = kb.mul(atom, kb.i32(kMXAtomBytes));
    Value rowStart = kb.add(atomStart, rowBytes);
    return kb.add(rowStart, inRow);
  }
  /// The UE8M0 code `code` (i8) in each byte of an i32: a tile's code over
  /// the four 1x32 blocks of its 128 columns (mxScales).
  Value repeatedCode(Value code) {
    return kb.mul(arith::ExtUIOp::create(b, i32(), code), kb.i32(0x01010101));
  }
  Value fromBits(Value i) { return arith::BitcastOp::create(b, f32(), i); }
  Value absBits(Value f) { return kb.absF32Bits(f); }
  Value umax(Value x, Value y) { return arith::MaxUIOp::create(b, x, y); }
  /// max.NaN.f32: NaN if either is NaN.
  Value fmaxNaN(Value x, Value y) { return LLVM::MaximumOp::create(b, x, y); }
  Value select(Value c, Value t, Value f) {
    return arith::SelectOp::create(b, c, t, f);
  }
  Value cmpi(arith::CmpIPredicate pred, Value x, Value y) {
    return arith::CmpIOp::create(b, pred, x, y);
  }
  Value ori(Value x, Value y) { return arith::OrIOp::create(b, x, y); }
  Value xori(Value x, Value y) { return arith::XOrIOp::create(b, x, y); }
  Value shl(Value x, Value y) { return arith::ShLIOp::create(b, x, y); }
  Value shr(Value x, Value y) { return arith::ShRUIOp::create(b, x, y); }
  Value divf(Value x, Value y) { return arith::DivFOp::create(b, x, y); }
  Value prmt(Value lo, Value hi, int64_t selector) {
    return NVVM::PermuteOp::create(b, i32(), lo, hi, kb.i32(selector),
                                   NVVM::PermuteMode::DEFAULT);
  }
  Value shuffleXor(Value v, int64_t offset) {
    return gpu::ShuffleOp::create(b, v, static_cast<int32_t>(offset),
                                  /*width=*/32, gpu::ShuffleMode::XOR)
        .getShuffleResult();
  }
  Value shuffleIdx(Value v, Value srcLane) {
    return gpu::ShuffleOp::create(b, v, srcLane, kb.i32(32),
                                  gpu::ShuffleMode::IDX)
        .getShuffleResult();
  }

  /// Butterfly maximum over the lanes whose index differs in `offsets`.
  Value shuffleMax(Value v, ArrayRef<int64_t> offsets);
  /// Maximum of `v` over the CTA (every thread gets it).
  Value ctaMax(Value v);
  /// max |v| (NaN if any is NaN) as an f32: what a block scale depends on.
  Value blockAbsMax(ArrayRef<Value> values);

  /// The thread's 8 x 8 inputs of the tile (rows rowInTile + 16 i, columns
  /// 8 * chunk..) as f32, zero outside x. With `stash`, the loaded vectors
  /// are also kept in shared memory for loadStashedTile.
  SmallVector<Value> loadTile(bool stash = false);
  /// Segment `s` (8 values) of what loadTile(/*stash=*/true) loaded, from
  /// shared memory (each thread reads back its own stores: no barrier).
  /// Elements outside x are zero with `zeroOutside`, else undefined.
  SmallVector<Value> loadStashedSegment(int64_t s, bool zeroOutside = false);
  /// The byte offset in shared memory of the thread's stashed load `index`.
  Value stashOffset(int64_t index);
  /// Where the column maxima and multipliers of storeColumnMaxima and
  /// storeColumnBlockScales start: after the stash.
  Value columnScratch() {
    return kb.bytePtr(kb.dynamicSharedMemory(), getStashBytes(p));
  }
  Value swizzledOffset(Value row, Value group);
  void storeTileToShared(ArrayRef<Value> values);
  SmallVector<Value> loadTransposedSegments();
  BlockScale computeScale(Value amaxBits);
  BlockScale tensorScale();
  Value ue8m0RoundUp(Value y);
  Value ue8m0Ocp(Value amax);
  /// Computes and stores the scales of the blocks of the thread's segments.
  SegmentMultipliers blockMultipliers(ArrayRef<Value> segments,
                                      const OutputTile &out);
  void storeBlockScale(const OutputTile &out, Value segment, Value stored,
                       Value isStoringLane);
  /// Per-block scales of an untransposed columnwise output (blocks of 128
  /// or 32 rows of one column): each warp's column maxima of `values` (the
  /// thread layout) to shared memory, u32 [blocks][warps][128]...
  void storeColumnMaxima(ArrayRef<Value> values);
  /// ... then, after a barrier, each block's scale from them (scale_inv to
  /// global memory), and its multiplier to shared memory, f32
  /// [blocks][128], returned (valid after the closing barrier).
  Value storeColumnBlockScales();
  /// Row granularity: the thread's 16-byte loads (vector<4xi32>, as
  /// loaded) of slab `slab` of x's row `row` (both i32, clamped into x: the
  /// loads past x repeat elements of the row, and are not stored).
  SmallVector<Value> loadRowSlab(const RowLayout &l, Value row, Value slab);
  /// The thread's chunk `k` of slab `slab` of a row (i32), and the index of
  /// its first element in x (i64).
  Value rowChunk(const RowLayout &l, Value slab, int64_t k);
  Value rowChunkIndex(Value row, Value chunk);
  /// The maximum of |x|'s bits over `loads`, as f32 bits (NaN sticky).
  Value rowSlabMax(ArrayRef<Value> loads);
  /// Casts `loads` of slab `slab` of row `row` with `multiplier` and stores
  /// them where `rowValid` (null: every row is) and the chunk is in x.
  void castRowSlab(const RowLayout &l, ArrayRef<Value> loads, Value row,
                   Value rowValid, Value slab, Value multiplier);
  /// Quantizes and stores one output from the thread's segments (8 x 8
  /// values); `shared` is the tile's scale when it has one. A rowwise output
  /// with a shared scale is also the untransposed columnwise one, if any.
  /// `loadSegment`, when given, supplies segment s where it is quantized
  /// instead (`segments` is empty): so that the values are not all live at
  /// once.
  void quantizeOutput(
      ArrayRef<Value> segments, OutputKind kind,
      const std::optional<BlockScale> &shared,
      function_ref<SmallVector<Value>(int64_t)> loadSegment = nullptr);
  /// The stored matrix, tile and segment rows of output `kind`.
  OutputTile getOutputTile(OutputKind kind);
  /// Stacked matrices (QuantizeProblem::groups): the CTA's tile (row,
  /// column) in the stacked transposed output [groups * C, R / groups].
  std::pair<Value, Value> getStackedTransposedTile();
  /// The addresses and guards of the thread's stores into `out` (and into
  /// the untransposed columnwise output with `alsoUntransposed`).
  OutputStores getOutputStores(const OutputTile &out, bool alsoUntransposed);
  /// Multiplies, packs and stores the thread's 8 segments of one output.
  /// `compareEachInput`: the multiplier may be neither positive and finite
  /// nor NaN, so the sign of each NaN input is found by a comparison (see
  /// pack8).
  void castSegments(const OutputCast &cast, bool compareEachInput);
  /// Untransposed columnwise blocks: the multipliers of the thread's 8
  /// columns in row block `blk` (from storeColumnBlockScales'
  /// `columnMultipliers`), and the byte sign masks of pack8 (one per word).
  void loadColumnMultipliers(Value columnMultipliers, int64_t blk,
                             SmallVectorImpl<Value> &elementMultipliers,
                             Value (&signMasks)[2]);
  /// Stores the scale shared by the tile (per tensor: by CTA (0, 0)'s
  /// first thread; 128x128: by each CTA, as MX atoms with mxScales).
  void storeSharedScale(const BlockScale &shared, Value isFirstThread);
  /// The 8 FP8 codes of `scaled` (= `inputs` * multiplier) in memory order
  /// as two i32. `signMask`: see the definition; `highSignMask`, when given,
  /// is the second word's.
  Value pack8(ArrayRef<Value> inputs, ArrayRef<Value> scaled, Value signMask,
              Value highSignMask = Value());
};

} // namespace mlir::fp8::detail

#endif // FP8_LIB_CONVERSION_QUANTIZEKERNELS_QUANTIZEEMITTER_H
