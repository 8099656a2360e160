//===- QuantizeMetadata.cpp - Metadata of the quantization kernels --------===//
//
// The scale layouts the quantization kernels write (those the GEMMs and the
// dequantization kernels read) and each kernel's metadata
// (`"kind": "quantize"` / `"amax"`, the host runtime's schema).
//
//===----------------------------------------------------------------------===//

#include "QuantizeEmitter.h"

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::detail;

ScaleTensorLayout mlir::fp8::getScaleTensorLayout(GranularityKind granularity,
                                                  int64_t blockRows,
                                                  int64_t rows, int64_t cols) {
  switch (granularity) {
  case GranularityKind::Tensor:
    return {"tensor", {}, md::DType::F32, 4};
  case GranularityKind::Row:
    return {"row_major", {rows, 1}, md::DType::F32, 4};
  case GranularityKind::MX: {
    // The 128x4 UE8M0 atoms the sm_100a block-scaled MMA reads:
    // [ceil(rows/128), ceil(cols/128), 512] bytes.
    int64_t rowAtoms = llvm::divideCeil(rows, kMXAtomRows);
    int64_t colAtoms = llvm::divideCeil(cols, kMXAtomK);
    return {"mx_atom_128x4_ue8m0",
            {rowAtoms, colAtoms, kMXAtomBytes},
            md::DType::UE8M0,
            1};
  }
  case GranularityKind::Tile:
    break;
  }
  int64_t colBlocks = llvm::divideCeil(cols, kBlockwiseScaleBlock);
  if (blockRows == 1) {
    // 1x128: MN-major [ceil(cols/128), roundup(rows, 4)], what the GEMMs
    // read (kMNMajorScaleAlignment).
    int64_t paddedRows = llvm::alignTo(rows, kMNMajorScaleAlignment);
    return {"mn_major_tma_aligned", {colBlocks, paddedRows}, md::DType::F32, 4};
  }
  int64_t rowBlocks = llvm::divideCeil(rows, kBlockwiseScaleBlock);
  return {"row_major", {rowBlocks, colBlocks}, md::DType::F32, 4};
}

/// The granularity whose layout the scales are stored in.
static GranularityKind getScaleLayoutKind(const QuantizeProblem &p) {
  return p.mxScales ? GranularityKind::MX : p.granularity;
}

static ScaleTensorLayout getScaleLayout(const QuantizeProblem &p, int64_t rows,
                                        int64_t cols) {
  ScaleTensorLayout layout =
      getScaleTensorLayout(getScaleLayoutKind(p), p.blockRows, rows, cols);
  // A tile's code is stored four times at once, as one 32-bit word.
  if (p.mxScales)
    layout.alignment = 4;
  return layout;
}

std::vector<md::Expr>
mlir::fp8::getRunTimeRowsScaleShape(GranularityKind layout, int64_t blockRows,
                                    int64_t cols, bool columnwise) {
  md::Expr rows = md::Expr::symbol(kQuantizeRowsSymbol.str());
  auto num = [](int64_t v) { return md::Expr::constant(v); };
  md::Expr rowTiles = md::Expr::ceilDiv(rows, num(kQuantizeTileRows));
  md::Expr colTiles = num(llvm::divideCeil(cols, kQuantizeTileCols));
  switch (layout) {
  case GranularityKind::Tensor:
    return {};
  case GranularityKind::MX:
    // Atoms [ceil(rows/128), ceil(cols/128), 512] of x or of x^T.
    if (columnwise)
      return {colTiles, rowTiles, num(kMXAtomBytes)};
    return {rowTiles, colTiles, num(kMXAtomBytes)};
  case GranularityKind::Row:
    // [R, 1], or [C, 1] for the rows of x^T.
    return {columnwise ? num(cols) : rows, num(1)};
  case GranularityKind::Tile:
    break;
  }
  if (blockRows != 1)
    return columnwise ? std::vector<md::Expr>{colTiles, rowTiles}
                      : std::vector<md::Expr>{rowTiles, colTiles};
  // 1x128 blocks of x: [ceil(C/128), roundup(R, 4)]; of x^T (128x1 blocks
  // of x): [ceil(R/128), roundup(C, 4)].
  if (columnwise)
    return {rowTiles, num(llvm::alignTo(cols, kMNMajorScaleAlignment))};
  return {num(llvm::divideCeil(cols, kBlockwiseScaleBlock)),
          md::Expr::roundUp(rows, num(kMNMajorScaleAlignment))};
}

/// The metadata shape of the rowwise (`columnwise` false) or columnwise
/// scale tensor: getScaleLayout's extents, or getRunTimeRowsScaleShape's.
static std::vector<md::Expr> getScaleShape(const QuantizeProblem &p,
                                           bool columnwise) {
  // A batch of matrices: each one's 128x128 scales, G outermost.
  if (p.isBatch()) {
    int64_t rows = p.rows / p.groups;
    SmallVector<int64_t> shape = {p.groups};
    llvm::append_range(shape, columnwise
                                  ? getScaleLayout(p, p.cols, rows).shape
                                  : getScaleLayout(p, rows, p.cols).shape);
    return getConstantShape(shape);
  }
  if (!p.dynamicRows)
    return getConstantShape(columnwise
                                ? getScaleLayout(p, p.cols, p.rows).shape
                                : getScaleLayout(p, p.rows, p.cols).shape);
  return getRunTimeRowsScaleShape(getScaleLayoutKind(p), p.blockRows, p.cols,
                                  columnwise);
}

static md::QuantizeRule getMetadataRule(QuantizeProblem::Rule rule) {
  md::QuantizeRule out = md::QuantizeRule::Tensor;
  bool known = md::parseEnum(getRuleName(rule), out);
  assert(known && "a rule the schema does not name");
  (void)known;
  return out;
}

/// The `quantize` description: what the kernel computes, for tools.
static md::QuantizeInfo getQuantizeDescription(const QuantizeProblem &p) {
  md::QuantizeInfo info;
  info.rows = p.dynamicRows ? md::Expr::symbol(kQuantizeRowsSymbol.str())
                            : md::Expr::constant(p.rows);
  info.cols = p.cols;
  info.inputDtype = getKernelDType(p.inputType);
  if (p.isAmaxOnly) {
    info.amax = "max |x| (NaN-propagating) is max-ed into amax[0] with "
                "atomics: pass it zeroed";
    return info;
  }
  info.dtype = getKernelDType(p.elementType);
  info.rule = getMetadataRule(p.rule);
  info.granularity = getGranularityName(p);
  // With a run-time R only the layouts' names are used.
  int64_t rows = p.dynamicRows ? kQuantizeTileRows : p.rows;
  if (p.rowwise)
    info.rowwiseScaleLayout = getScaleLayout(p, rows, p.cols).name.str();
  if (p.columnwise) {
    info.columnwiseScaleLayout = getScaleLayout(p, p.cols, rows).name.str();
    info.columnwiseLayout = p.columnwiseTransposed
                                ? md::ColumnwiseLayout::Transposed
                                : md::ColumnwiseLayout::Untransposed;
  }
  if (p.rule == QuantizeProblem::Rule::Current) {
    info.epsilon = p.epsilon;
    info.pow2 = p.pow2;
  }
  if (p.rule == QuantizeProblem::Rule::BlockwisePow2 ||
      p.rule == QuantizeProblem::Rule::BlockwiseF32)
    info.amaxClamp = p.amaxClamp;
  if (p.mxScales)
    info.scaleGranularity = "mx1x32";
  if (p.amaxScalar)
    info.amaxOut =
        "amax(x) is max-ed into amax_out[0] (NaN sticky): pass it zeroed";
  else if (p.historyLength > 0)
    info.amaxHistory =
        "slot 0 becomes max(slot 0, amax(x)), NaN sticky, in place";
  return info;
}

md::KernelMetadata
mlir::fp8::buildQuantizeKernelMetadata(StringRef name, const ChipInfo &chip,
                                       const QuantizeProblem &p) {
  // Row granularity: rowwise, bands of RowLayout rows, kRowBandsPerGridRow
  // of them along x (tile_n = C / 8 gives x = 8) and the rest along y;
  // columnwise, one CTA per 128-column band (for any R).
  // A batch's x is 3-D: the fixed grid of its [G * R, C] tiles.
  md::Grid grid =
      p.isBatch() ? getFixedGrid({p.colTiles(), p.rowTiles(), 1})
      : p.granularity != GranularityKind::Row
          ? getTilesGrid(kQuantizeTileRows, kQuantizeTileCols, "x")
      : p.columnwise
          ? getFixedGrid({p.colTiles(), 1, 1})
          : getTilesGrid(getRowLayout(p).rowsPerCta * kRowBandsPerGridRow,
                         p.cols / kRowBandsPerGridRow, "x");
  md::KernelMetadata metadata = makeKernelMetadata(
      name, chip,
      p.isAmaxOnly ? md::KernelKind::Amax : md::KernelKind::Quantize,
      kQuantizeThreads, getQuantizeSharedMemoryBytes(p), std::move(grid));
  using Role = md::OperandRole;
  auto operand = [&](StringRef opName, md::DType dtype,
                     std::vector<md::Expr> shape, Role role,
                     int64_t alignment) {
    addPointerOperand(metadata, opName, dtype, std::move(shape), role,
                      alignment);
  };
  // x's layout, [R, C] (R the symbol of a run-time R).
  md::Expr rowsDim = p.dynamicRows ? md::Expr::symbol(kQuantizeRowsSymbol.str())
                                   : md::Expr::constant(p.rows);
  md::Expr colsDim = md::Expr::constant(p.cols);
  // A batch of matrices: [G, R / G, C] (the rows of each).
  std::vector<md::Expr> batchDims;
  if (p.isBatch()) {
    batchDims.push_back(md::Expr::constant(p.groups));
    rowsDim = md::Expr::constant(p.rows / p.groups);
  }
  auto withBatch = [&](std::vector<md::Expr> shape) {
    shape.insert(shape.begin(), batchDims.begin(), batchDims.end());
    return shape;
  };
  // 16-byte vector loads of the input, 8-byte stores of the FP8 data.
  operand("x", getKernelDType(p.inputType), withBatch({rowsDim, colsDim}),
          Role::Input, 16);
  if (p.isAmaxOnly) {
    operand("amax", md::DType::F32, {}, Role::Output, 4);
  } else {
    if (p.scaleSource == QuantizeScaleSource::Given)
      operand("scale", md::DType::F32, {}, Role::Input, 4);
    if (p.scaleSource == QuantizeScaleSource::FromAmax)
      operand("amax", md::DType::F32, {}, Role::Input, 4);
    md::DType elem = getKernelDType(p.elementType);
    // With a run-time R only the layouts' dtypes and alignments are used.
    int64_t rows = p.dynamicRows ? kQuantizeTileRows : p.rows;
    if (p.rowwise) {
      ScaleTensorLayout s = getScaleLayout(p, rows, p.cols);
      operand("rowwise", elem, withBatch({rowsDim, colsDim}), Role::Output,
              8);
      operand("rowwise_scale_inv", s.dtype, getScaleShape(p, false),
              Role::Output, s.alignment);
    }
    if (p.columnwise) {
      ScaleTensorLayout s = getScaleLayout(p, p.cols, rows);
      std::vector<md::Expr> shape = {rowsDim, colsDim};
      if (p.columnwiseTransposed)
        shape = {colsDim, rowsDim};
      operand("columnwise", elem, withBatch(shape), Role::Output, 8);
      operand("columnwise_scale_inv", s.dtype, getScaleShape(p, true),
              Role::Output, s.alignment);
    }
    if (p.amaxScalar)
      operand("amax_out", md::DType::F32, {}, Role::Output, 4);
    else if (p.historyLength > 0)
      operand("amax_history", md::DType::F32,
              getConstantShape({p.historyLength}), Role::Output, 4);
  }
  if (p.dynamicRows && p.needsTranspose())
    // Checked at launch: R is only known then.
    addValueParam(metadata, "r", md::ParamKind::I32, kQuantizeRowsSymbol,
                  kTransposedRowAlignment,
                  "the transposed columnwise output's rows are R bytes, "
                  "16-byte aligned");
  else if (p.dynamicRows)
    addValueParam(metadata, "r", md::ParamKind::I32, kQuantizeRowsSymbol);
  metadata.quantize = getQuantizeDescription(p);
  return metadata;
}
