//===- ScaleConversionKernel.cpp - Blockwise scales to MX atoms -----------===//

#include "FP8/Conversion/QuantizeKernels/ScaleConversionKernel.h"
#include "FP8/Conversion/KernelSkeleton/GemmKernel.h"
#include "FP8/Conversion/KernelSkeleton/KernelBuilder.h"
#include "FP8/Conversion/KernelSkeleton/KernelMetadata.h"
#include "FP8/Conversion/QuantizeKernels/QuantizeKernel.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::fp8;

/// The MX 128x4 scale-factor atom (GemmKernel.h): 128 rows of four 1x32
/// blocks, 512 bytes; row r's four bytes at (r % 32) * 16 + (r / 32) * 4.
static constexpr int64_t kAtomBlocks = kMXAtomK / kMXScaleBlock;
static constexpr int64_t kAtomLaneBytes = 16;
/// One thread per row of a 128-row band of atoms.
static constexpr int64_t kThreads = kMXAtomRows;
/// The symbol of a run-time R padded to a multiple of 4: what the shape of
/// an MN-major 1x128 grid holds (R itself cannot be bound from it).
static constexpr llvm::StringLiteral kPaddedRowsSymbol = "RP";

int64_t ScalesToMXProblem::gridCols() const {
  return llvm::divideCeil(mxBlocks, tileCols / kMXScaleBlock);
}

int64_t ScalesToMXProblem::kGroups() const {
  return llvm::divideCeil(mxBlocks, kAtomBlocks);
}

bool ScalesToMXProblem::mnMajorGrid() const {
  return inputType.isF32() && tileRows == 1;
}

FailureOr<ScalesToMXProblem> ScalesToMXProblem::get(ScalesToMXOp op) {
  // The verifier checked the tile and the shapes.
  TileShape tile = op.getGranularity().getTile();
  ScalesToMXProblem p;
  p.rows = op.getResult().getType().getDimSize(0);
  p.dynamicRows = ShapedType::isDynamic(p.rows);
  p.tileRows = tile.rows;
  p.tileCols = tile.cols;
  p.mxBlocks = op.getResult().getType().getDimSize(1);
  p.inputType = op.getInput().getType().getElementType();
  // f32 grids in the quantization kernels' layouts.
  bool f32 = p.inputType.isF32();
  if (f32 && !(p.tileCols == kBlockwiseScaleBlock &&
               (p.tileRows == 1 || p.tileRows == kBlockwiseScaleBlock)))
    return op.emitOpError()
           << "the scale conversion kernel reads f32 scales in the layouts "
              "of 1x128 and 128x128 tiles (as the quantization kernels write "
              "them), got "
           << op.getGranularity().describe();
  // One CTA covers 128 rows: a whole number of tiles.
  if (kMXAtomRows % p.tileRows != 0)
    return op.emitOpError() << "the scale conversion kernel takes tiles whose "
                               "row count divides 128, got "
                            << op.getGranularity().describe();
  // In-band offsets are i32 (band and grid row offsets i64).
  if (p.kGroups() >= (int64_t(1) << 31) / kMXAtomBytes)
    return op.emitOpError() << "the scale conversion kernel takes fewer than "
                               "2^31 bytes of MX atoms per 128 rows; "
                            << op.getResult().getType() << " needs more";
  return p;
}

std::string mlir::fp8::getScalesToMXKernelName(const ScalesToMXProblem &p) {
  std::string rows =
      p.dynamicRows ? std::string("rdyn") : llvm::formatv("r{0}", p.rows).str();
  return llvm::formatv("fp8_scales_to_mx_{0}_{1}x{2}_{3}_b{4}",
                       getKernelDTypeName(p.inputType), p.tileRows, p.tileCols,
                       rows, p.mxBlocks);
}

md::KernelMetadata
mlir::fp8::buildScalesToMXKernelMetadata(StringRef name, const ChipInfo &chip,
                                         const ScalesToMXProblem &p) {
  auto num = [](int64_t v) { return md::Expr::constant(v); };
  // A run-time row count: R, or for an MN-major grid RP = roundup(R, 4).
  StringRef rowsSymbol =
      p.mnMajorGrid() ? kPaddedRowsSymbol : kQuantizeRowsSymbol;
  md::Expr runTimeRows = md::Expr::symbol(rowsSymbol.str());
  md::Expr gridRows = p.dynamicRows
                          ? runTimeRows
                          : num(llvm::divideCeil(p.rows, p.tileRows));
  // MN-major 1x128 grids: [ceil(C/128), roundup(R, 4)].
  md::Expr paddedRows =
      p.dynamicRows ? runTimeRows
                    : num(llvm::alignTo(p.rows, kMNMajorScaleAlignment));
  md::Expr bands = p.dynamicRows
                       ? md::Expr::ceilDiv(runTimeRows, num(kMXAtomRows))
                       : num(llvm::divideCeil(p.rows, kMXAtomRows));
  // One CTA per 128 rows, the tiles of the grid: [ceil(R/128), 1, 1] over
  // an MN-major [G, roundup(R, 4)] grid, [1, ceil(R/128), 1] over a
  // row-major one (128 / Rt grid rows per CTA).
  md::Grid grid =
      p.mnMajorGrid()
          ? getTilesGrid(p.gridCols(), kMXAtomRows, "scale_inv")
          : getTilesGrid(kMXAtomRows / p.tileRows, p.gridCols(), "scale_inv");
  md::KernelMetadata metadata =
      makeKernelMetadata(name, chip, md::KernelKind::ScalesToMx, kThreads,
                         /*dynamicSharedMemoryBytes=*/0, grid);
  bool f32 = p.inputType.isF32();
  addPointerOperand(metadata, "scale_inv", getKernelDType(p.inputType),
                    p.mnMajorGrid()
                        ? std::vector<md::Expr>{num(p.gridCols()), paddedRows}
                        : std::vector<md::Expr>{gridRows, num(p.gridCols())},
                    md::OperandRole::Input, f32 ? 4 : 1);
  // Each thread stores its row's four bytes as one word.
  addPointerOperand(metadata, "mx_scale_inv", md::DType::UE8M0,
                    {bands, num(p.kGroups()), num(kMXAtomBytes)},
                    md::OperandRole::Output, 4);
  if (p.dynamicRows && p.mnMajorGrid())
    addValueParam(metadata, "rp", md::ParamKind::I32, rowsSymbol,
                  kMNMajorScaleAlignment,
                  "the MN-major 1x128 scales pad R to a multiple of 4");
  else if (p.dynamicRows)
    addValueParam(metadata, "r", md::ParamKind::I32, rowsSymbol);
  md::ScalesToMXInfo info;
  info.rows = p.dynamicRows ? runTimeRows : num(p.rows);
  info.mxBlocks = p.mxBlocks;
  info.tile = {p.tileRows, p.tileCols};
  info.inputDtype = getKernelDType(p.inputType);
  info.inputLayout = p.mnMajorGrid() ? "mn_major_tma_aligned" : "row_major";
  info.scaleLayout = "mx_atom_128x4_ue8m0";
  info.paddingRows = p.dynamicRows && p.mnMajorGrid()
                         ? "rows R..RP-1 carry the codes of the grid's "
                           "padding entries (no GEMM reads them), the rest 0"
                         : "0";
  info.code = f32 ? "the f32 exponent field (bits 23..30) of each "
                    "power-of-two scale_inv"
                  : "the UE8M0 byte";
  metadata.scalesToMx = info;
  return metadata;
}

namespace {
/// Emits the kernel body: thread t of the CTA of band b writes row
/// 128 b + t of every atom of the band.
class ScalesToMXEmitter {
public:
  ScalesToMXEmitter(ImplicitLocOpBuilder &b, const ScalesToMXProblem &p)
      : b(b), kb(b), p(p) {}

  void emit(Block &entry);

private:
  ImplicitLocOpBuilder &b;
  KernelBuilder kb;
  const ScalesToMXProblem &p;

  /// The UE8M0 code (i32, 0..255) of grid element `index`.
  Value loadCode(Value grid, Value index);
};
} // namespace

Value ScalesToMXEmitter::loadCode(Value grid, Value index) {
  if (!p.inputType.isF32()) {
    Value byte = kb.load(b.getI8Type(), kb.globalElementPtr(grid, index, 1));
    return arith::ExtUIOp::create(b, b.getI32Type(), byte);
  }
  Value bits =
      kb.load(b.getI32Type(), kb.globalElementPtr(grid, index, /*bytes=*/4));
  return kb.andi(arith::ShRUIOp::create(b, bits, kb.i32(23)), kb.i32(0xFF));
}

void ScalesToMXEmitter::emit(Block &entry) {
  Value grid = entry.getArgument(0);
  Value atoms = entry.getArgument(1);
  Value rows = p.dynamicRows ? entry.getArgument(2) : kb.i32(p.rows);
  // The tiles grid of an MN-major grid runs the bands along x.
  Value band = arith::IndexCastUIOp::create(
      b, b.getI32Type(),
      gpu::BlockIdOp::create(b, p.mnMajorGrid() ? gpu::Dimension::x
                                                : gpu::Dimension::y));
  Value tid = kb.threadIdX();
  Value row = kb.add(kb.mul(band, kb.i32(kMXAtomRows)), tid);
  Value rowValid = kb.ult(row, rows);
  // Rows past R read the last tile row (any valid one) and store 0.
  Value gridRows = kb.ceilDiv(rows, p.tileRows);
  Value gridRow = kb.minu(kb.divu(row, kb.i32(p.tileRows)),
                          kb.sub(gridRows, kb.i32(1)));
  // Grid element (gridRow, col): gridRow * G + col row-major, col *
  // roundup(R, 4) + gridRow MN-major.
  Value gridRowStart = arith::ExtUIOp::create(b, b.getI64Type(), gridRow);
  Value colStride;
  if (p.mnMajorGrid())
    colStride = arith::ExtUIOp::create(
        b, b.getI64Type(),
        kb.mul(kb.ceilDiv(rows, kMNMajorScaleAlignment),
               kb.i32(kMNMajorScaleAlignment)));
  else
    gridRowStart = kb.mul(gridRowStart, kb.i64(p.gridCols()));
  // Row t's word in each atom: (t % 32) * 16 + (t / 32) * 4.
  Value wordInAtom =
      kb.add(kb.mul(kb.remu(tid, kb.i32(kWarpThreads)), kb.i32(kAtomLaneBytes)),
             kb.mul(kb.divu(tid, kb.i32(kWarpThreads)), kb.i32(kAtomBlocks)));
  Value bandStart = kb.mul(arith::ExtUIOp::create(b, b.getI64Type(), band),
                           kb.i64(p.kGroups() * kMXAtomBytes));
  int64_t blocksPerTile = p.tileCols / kMXScaleBlock;
  kb.forLoop(
      kb.i32(0), kb.i32(p.kGroups()), kb.i32(1), {},
      [&](Value group, ValueRange) -> SmallVector<Value> {
        Value word = kb.i32(0);
        for (int64_t j = 0; j < kAtomBlocks; ++j) {
          // MX block kb = 4 g + j covers tile column kb / (Kb / 32).
          Value block = kb.add(kb.mul(group, kb.i32(kAtomBlocks)), kb.i32(j));
          Value valid = kb.andi(rowValid, kb.ult(block, kb.i32(p.mxBlocks)));
          Value col = kb.minu(kb.divu(block, kb.i32(blocksPerTile)),
                              kb.i32(p.gridCols() - 1));
          Value colOffset = arith::ExtUIOp::create(b, b.getI64Type(), col);
          if (colStride)
            colOffset = kb.mul(colOffset, colStride);
          Value code = loadCode(grid, kb.add(gridRowStart, colOffset));
          code = arith::SelectOp::create(b, valid, code, kb.i32(0));
          word = arith::OrIOp::create(
              b, word, arith::ShLIOp::create(b, code, kb.i32(8 * j)));
        }
        Value inBand = kb.add(kb.mul(group, kb.i32(kMXAtomBytes)), wordInAtom);
        Value offset = kb.add(
            bandStart, arith::ExtUIOp::create(b, b.getI64Type(), inBand));
        kb.store(word, kb.bytePtr(atoms, offset));
        return {};
      });
  gpu::ReturnOp::create(b);
}

gpu::GPUFuncOp mlir::fp8::buildScalesToMXKernel(OpBuilder &builder,
                                                Location loc,
                                                gpu::GPUModuleOp module,
                                                StringRef name,
                                                const ScalesToMXProblem &p) {
  SmallVector<Type> trailingArgs;
  if (p.dynamicRows)
    trailingArgs.push_back(builder.getI32Type());
  gpu::GPUFuncOp func = createPointerKernel(builder, loc, module, name,
                                            /*numPointers=*/2, kThreads,
                                            trailingArgs);
  OpBuilder::InsertionGuard guard(builder);
  Block &entry = func.getBody().front();
  builder.setInsertionPointToStart(&entry);
  ImplicitLocOpBuilder b(loc, builder);
  ScalesToMXEmitter(b, p).emit(entry);
  return func;
}
