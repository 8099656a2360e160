//===- QuantizeKernel.h - Quantization kernels for every recipe -*- C++ -*-===//
//
// The GPU kernels of fp8.amax and fp8.quantize: what a quantization asks for
// (QuantizeProblem), the kernel's ABI and metadata (the host runtime's
// schema, `"kind": "quantize"` / `"amax"`), and the kernel builder shared by
// every target. The targets differ only in how a block's UE8M0 scale is
// computed (`QuantizeProblem::hardwareUe8m0`).
//
// One CTA of 256 threads owns a 128x128 tile of the [R, C] input. Thread t
// loads 8 consecutive columns (16 bytes of bf16) of 8 rows (t / 16 + 16 i),
// so a 1x128 block is 16 lanes of one warp and a 1x32 block 4 lanes. A
// thread quantizes 8 segments of 8 elements per output. With per-block
// scales, the lanes of a block trade partial maxima by shuffles until each
// holds whole maxima of 8 / (lanes per block) blocks, compute and store
// only those scales, and shuffle the multipliers back: one scale per lane
// (1x128) or two (1x32) instead of eight. Transposed columnwise outputs (the
// quantization of the transpose) come from the same registers through a
// swizzled f32 tile in shared memory, written before the rowwise work and
// read back with 16-byte loads as 8 segments of transposed rows; stored
// untransposed, each column block's scale comes from a column maximum over
// the CTA and applies to the registers the rowwise output uses.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_CONVERSION_QUANTIZEKERNELS_QUANTIZEKERNEL_H
#define FP8_CONVERSION_QUANTIZEKERNELS_QUANTIZEKERNEL_H

#include "FP8/Conversion/KernelSkeleton/KernelMetadata.h"
#include "FP8/Conversion/KernelSkeleton/ScaleRules.h"
#include "FP8/Dialect/FP8/IR/FP8Contract.h"
#include "FP8/Dialect/FP8/IR/FP8Ops.h"
#include "FP8/Target/Chip.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "llvm/Support/MathExtras.h"

#include <string>

namespace mlir::fp8 {

/// The CTA tile of the quantization kernels: the largest block (128x128
/// weight tiles) fits in one CTA, and so does the transpose of a 128-row
/// band for 1x128 columnwise blocks.
inline constexpr int64_t kQuantizeTileRows = 128;
inline constexpr int64_t kQuantizeTileCols = 128;
inline constexpr int64_t kQuantizeThreads = 256;

/// Where the per-tensor scale of a cast comes from.
enum class QuantizeScaleSource {
  /// A `scale` operand (delayed scaling, or current scaling whose scale was
  /// computed elsewhere); scale_inv = 1 / scale.
  Given,
  /// The tensor's amax (from the amax kernel): the kernel applies the
  /// current-scaling rule itself (`fp8.compute_scale` fused into the cast).
  FromAmax,
  /// Each block's scale from the block's amax (blockwise, MXFP8).
  PerBlock,
};

/// The metadata symbol of a run-time row count (the kernels' `r` parameter,
/// bound by the runtime from the shape of `x`).
inline constexpr llvm::StringLiteral kQuantizeRowsSymbol = "R";

/// One quantization kernel: an amax reduction (`isAmaxOnly`) or a cast.
struct QuantizeProblem {
  /// The input's extents; `rows` is ShapedType::kDynamic when `dynamicRows`.
  int64_t rows = 0, cols = 0;
  /// R is a run-time value: the kernel takes it as a trailing i32 parameter
  /// `r` (metadata symbol kQuantizeRowsSymbol) and guards every row with it.
  bool dynamicRows = false;
  Type inputType;   ///< bf16, f16 or f32
  Type elementType; ///< f8E4M3FN or f8E5M2
  GranularityKind granularity = GranularityKind::Tensor;
  int64_t blockRows = 0, blockCols = 0; ///< tile/mx: 1x128, 128x128, 1x32
  QuantizeScaleSource scaleSource = QuantizeScaleSource::Given;
  bool rowwise = false;
  bool columnwise = false;
  /// The columnwise output is stored transposed ([C, R], for K-major GEMM
  /// operands) or in the input's layout ([R, C], MN-major operands).
  bool columnwiseTransposed = true;
  /// Record the tensor's amax into slot 0 of an f32 history (in place,
  /// max with the slot's value; TE's delayed-scaling cast). Length 0: none.
  int64_t historyLength = 0;
  /// With historyLength 1: the slot is the op's amax result, a zeroed f32
  /// scalar (operand `amax_out`, name suffix `_amax`), not a history.
  bool amaxScalar = false;
  bool isAmaxOnly = false;

  // The scale rule (the recipe's parameters).
  enum class Rule {
    Tensor,
    Current,
    BlockwisePow2,
    BlockwiseF32,
    MXRoundUp,
    MXOcp
  };
  Rule rule = Rule::Tensor;
  float epsilon = 0.f;   ///< current scaling
  bool pow2 = false;     ///< current scaling
  float amaxClamp = 0.f; ///< blockwise

  /// Power-of-two blockwise scales written as the MX scales of a
  /// block-scaled GEMM (the op's `scale_granularity = mx 1x32`): each tile's
  /// UE8M0 code (the biased exponent of its f32 scale_inv) repeated over its
  /// 1x32 blocks, in the 128x4 atom layout of MX scales.
  bool mxScales = false;
  /// A batch of this many matrices [groups, R / groups, C] (a 3-D input:
  /// expert weights [G, N, K]), cast as the [R, C] matrix in 128x128 tiles
  /// (R / groups and C multiples of 128): the transposed columnwise output
  /// is each matrix's transpose, [groups, C, R / groups] (name suffix
  /// `_g<groups>`; the operands' metadata shapes are 3-D). 0: a matrix.
  int64_t groups = 0;
  /// sm_100a: cvt.rp.satfinite.ue8m0x2.f32 computes the MX round-up scale.
  bool hardwareUe8m0 = false;
  /// CTAs of a cast that ptxas must fit on one SM (its register cap): 3 (80
  /// registers) where the casts assemble without spills there (sm_90a), 2
  /// (128) otherwise.
  int64_t minBlocksPerSM = 3;

  bool isMX() const { return granularity == GranularityKind::MX; }
  /// Whether the scales are stored in the MX atom layout (MX blocks, or
  /// blockwise tiles with mxScales).
  bool hasMXScaleLayout() const { return isMX() || mxScales; }
  bool needsTranspose() const { return columnwise && columnwiseTransposed; }
  bool hasUntransposedColumnwise() const {
    return columnwise && !columnwiseTransposed;
  }
  /// Row tiles of a static R (the grid's y extent).
  int64_t rowTiles() const {
    assert(!dynamicRows && "R is a run-time value");
    return llvm::divideCeil(rows, kQuantizeTileRows);
  }
  int64_t colTiles() const { return llvm::divideCeil(cols, kQuantizeTileCols); }
  bool isBatch() const { return groups > 0; }
  /// Whether the transposed columnwise output is per-matrix transposes.
  bool hasStackedTranspose() const { return isBatch() && needsTranspose(); }

  /// The problem of `op`, or a diagnostic saying why no kernel takes it.
  /// `scaleFromAmax`: the scale operand is compute_scale(current) of an
  /// amax the cast reads instead. `historyLength`: the amax result is
  /// recorded into a history of that length (0: no amax recorded).
  static FailureOr<QuantizeProblem> get(QuantizeOp op, const ChipInfo &chip,
                                        bool scaleFromAmax,
                                        int64_t historyLength);
  /// The problem of an fp8.amax op.
  static FailureOr<QuantizeProblem> get(AmaxOp op);
};

/// `fp8_quantize_<recipe>_<granularity>_<in>_<elem>_r<R>_c<C>[_row]`
/// `[_col|_col_untransposed][_hist<L>|_amax][_mxscales][_g<G>]` or
/// `fp8_amax_<in>_r<R>_c<C>`, with
/// `rdyn` in place of `r<R>` for a run-time R.
std::string getQuantizeKernelName(const QuantizeProblem &problem);

/// Dynamic shared memory of the kernel: the transposed tile (f32) and the
/// CTA reduction scratch.
int64_t getQuantizeSharedMemoryBytes(const QuantizeProblem &problem);

/// The metadata (`fp8.kernel_metadata`). Operands, in the kernel's
/// parameter order: `x`, then `scale` (Given) or `amax` (FromAmax; in the
/// amax kernel its output), `rowwise`, `rowwise_scale_inv`, `columnwise`,
/// `columnwise_scale_inv`, `amax_history` (or the scalar `amax_out` with
/// amaxScalar), then `r` (i32, the value of symbol "R") for a run-time R. Scale
/// layouts are the ones the GEMMs read (see docs/design.md, "Quantization
/// kernels"); with a run-time R their extents are symbolic ("R", "roundup(R,
/// 4)", "ceildiv(R, 128)").
md::KernelMetadata buildQuantizeKernelMetadata(StringRef name,
                                               const ChipInfo &chip,
                                               const QuantizeProblem &problem);

/// Whether `type` is what the elementwise kernels (quantization,
/// dequantization) take: a 2-D tensor with a static C, and for a static R
/// fewer than 2^31 elements (32-bit offsets). Otherwise a diagnostic on
/// `op` naming `kernels` ("the quantization kernels").
LogicalResult checkKernelMatrix(Operation *op, ShapedType type,
                                StringRef kernels);

/// The quantization kernels' limits on `op` that no later pass changes
/// (docs/contract.md): what fp8-verify-target checks. QuantizeProblem::get
/// checks these and what depends on the op's neighbours.
LogicalResult verifyQuantizeKernelContract(QuantizeOp op);

/// How the quantization kernels store the scale_inv of a `rows` x `cols`
/// quantized matrix whose blocks run along `cols` (rowwise: x; columnwise:
/// x^T, whichever way its data is stored), i.e. what the GEMMs and the
/// dequantization kernels read.
struct ScaleTensorLayout {
  StringRef name;             ///< the metadata's `*_scale_layout`
  SmallVector<int64_t> shape; ///< physical extents, outermost first
  md::DType dtype;            ///< f32 or ue8m0
  int64_t alignment;          ///< bytes
};
ScaleTensorLayout getScaleTensorLayout(GranularityKind granularity,
                                       int64_t blockRows, int64_t rows,
                                       int64_t cols);

/// The metadata shape, in terms of the run-time row count R (symbol
/// kQuantizeRowsSymbol), of the scale tensor in `layout` of an R x `cols`
/// matrix whose blocks have `blockRows` rows (`columnwise`: of its
/// transpose): "roundup(R, 4)" for padded MN-major 1x128 scales,
/// "ceildiv(R, 128)" for 128-row tiles and MX atoms, "R" for rows.
std::vector<md::Expr> getRunTimeRowsScaleShape(GranularityKind layout,
                                               int64_t blockRows, int64_t cols,
                                               bool columnwise);

/// Builds the kernel `name` into `module`.
gpu::GPUFuncOp buildQuantizeKernel(OpBuilder &builder, Location loc,
                                   gpu::GPUModuleOp module, StringRef name,
                                   const QuantizeProblem &problem);

} // namespace mlir::fp8

#endif // FP8_CONVERSION_QUANTIZEKERNELS_QUANTIZEKERNEL_H
