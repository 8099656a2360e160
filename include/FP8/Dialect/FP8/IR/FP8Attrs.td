//===- FP8Attrs.td - FP8 recipes and scaling attributes ----*- tablegen -*-===//

#ifndef FP8_DIALECT_FP8_IR_FP8ATTRS_TD
#define FP8_DIALECT_FP8_IR_FP8ATTRS_TD

include "FP8/Dialect/FP8/IR/FP8Base.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def FP8_RecipeFormat : I32EnumAttr<"RecipeFormat",
    "FP8 element formats a per-tensor recipe uses", [
      I32EnumAttrCase<"Hybrid", 0, "hybrid">,
      I32EnumAttrCase<"E4M3", 1, "e4m3">,
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::fp8";
}

def FP8_ElementFormat : I32EnumAttr<"ElementFormat",
    "FP8 element format of MXFP8 data", [
      I32EnumAttrCase<"E4M3", 0, "e4m3">,
      I32EnumAttrCase<"E5M2", 1, "e5m2">,
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::fp8";
}

def FP8_AmaxComputeAlgo : I32EnumAttr<"AmaxComputeAlgo",
    "how delayed scaling reduces the amax history", [
      I32EnumAttrCase<"Max", 0, "max">,
      I32EnumAttrCase<"MostRecent", 1, "most_recent">,
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::fp8";
}

def FP8_BlockScaleKind : I32EnumAttr<"BlockScaleKind",
    "value set of blockwise scales", [
      I32EnumAttrCase<"PowerOfTwo", 0, "pow2">,
      I32EnumAttrCase<"Float32", 1, "f32">,
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::fp8";
}

def FP8_UE8M0Rounding : I32EnumAttr<"UE8M0Rounding",
    "rule turning an MX block amax into a UE8M0 scale", [
      I32EnumAttrCase<"RoundUp", 0, "round_up">,
      I32EnumAttrCase<"OCP", 1, "ocp">,
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::fp8";
}

def FP8_GranularityKind : I32EnumAttr<"GranularityKind",
    "kind of scale block", [
      I32EnumAttrCase<"Tensor", 0, "tensor">,
      I32EnumAttrCase<"Row", 1, "row">,
      I32EnumAttrCase<"Tile", 2, "tile">,
      I32EnumAttrCase<"MX", 3, "mx">,
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::fp8";
}

def FP8_OperandMajor : I32EnumAttr<"OperandMajor",
    "which dimension of a GEMM operand is contiguous in memory", [
      I32EnumAttrCase<"K", 0, "k">,
      I32EnumAttrCase<"MN", 1, "mn">,
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::fp8";
}

def FP8_ColumnwiseLayout : I32EnumAttr<"ColumnwiseLayout",
    "storage of the columnwise output of fp8.quantize", [
      I32EnumAttrCase<"Transposed", 0, "transposed">,
      I32EnumAttrCase<"Untransposed", 1, "untransposed">,
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::fp8";
}

def FP8_GroupedLayout : I32EnumAttr<"GroupedLayout",
    "how the groups of fp8.grouped_scaled_matmul lie in its operands", [
      I32EnumAttrCase<"MContiguous", 0, "m_contiguous">,
      I32EnumAttrCase<"MMasked", 1, "m_masked">,
      I32EnumAttrCase<"KGrouped", 2, "k_grouped">,
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::fp8";
}

def FP8_Activation : I32EnumAttr<"Activation",
    "elementwise activation applied in a GEMM epilogue", [
      I32EnumAttrCase<"GELU", 0, "gelu">,
      I32EnumAttrCase<"GELUTanh", 1, "gelu_tanh">,
      I32EnumAttrCase<"SiLU", 2, "silu">,
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::fp8";
}

class FP8_EnumAttr<EnumAttrInfo info, string mnemonic>
    : EnumAttr<FP8_Dialect, info, mnemonic> {
  let assemblyFormat = "`<` $value `>`";
}

def FP8_OperandMajorAttr : FP8_EnumAttr<FP8_OperandMajor, "major">;
def FP8_ActivationAttr : FP8_EnumAttr<FP8_Activation, "activation"> {
  let summary = "activation fused into a GEMM epilogue";
  let description = [{
    `gelu`: `0.5 x (1 + erf(x / sqrt(2)))` (PyTorch `gelu`); `gelu_tanh`:
    `0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))` (PyTorch
    `gelu(approximate='tanh')`, Megatron's bias-GeLU); `silu`:
    `x / (1 + exp(-x))`. Evaluated in f32 after the scales and the bias,
    before the output is rounded.
  }];
}
def FP8_GroupedLayoutAttr : FP8_EnumAttr<FP8_GroupedLayout, "grouped_layout"> {
  let summary = "layout of the groups of a grouped GEMM";
  let description = [{
    `m_contiguous`: the rows of all groups in one `[M, K]` A (and `[M, N]`
    D), sorted by group, each group's rows starting at a multiple of 128;
    a run-time `i32` tensor `[M]` gives the group of each row (-1 for
    padding rows, whose output is not written).

    `m_masked`: every group has its own `[M, K]` rows in a `[G, M, K]` A
    (and `[G, M, N]` D), of which a run-time `i32` tensor `[G]` gives the
    valid count (rows from the count on are neither computed nor written);
    the launch does not depend on the counts.

    `k_grouped` (the weight gradient of the experts, `dW_g = dY_g^T X_g`):
    A `[M, K]` and B `[N, K]` hold the K columns (tokens) of all groups one
    after the other, group `g` owning the `K_g` columns after those of the
    groups before it; a run-time `i32` tensor `[G]` gives each `K_g` (a
    multiple of 128, possibly 0); D is `[G, M, N]`, zeros for an empty
    group.
  }];
}
def FP8_ColumnwiseLayoutAttr
    : FP8_EnumAttr<FP8_ColumnwiseLayout, "columnwise_layout">;

//===----------------------------------------------------------------------===//
// Parameters with a readable syntax
//===----------------------------------------------------------------------===//

// `fast` or `promoted(N)`; see Accumulation in FP8Attrs.h.
class FP8_AccumulationParameter<string value>
    : AttrParameter<"::mlir::fp8::Accumulation", "accumulation mode"> {
  let parser = "::mlir::fp8::parseAccumulation($_parser)";
  let printer = "::mlir::fp8::printAccumulation($_printer, $_self)";
  let defaultValue = value;
}

// `RxC`, e.g. `1x128` or `128x128`.
class FP8_TileShapeParameter<string value>
    : AttrParameter<"::mlir::fp8::TileShape", "tile shape"> {
  let parser = "::mlir::fp8::parseTileShape($_parser)";
  let printer = "::mlir::fp8::printTileShape($_printer, $_self)";
  let defaultValue = value;
}

// `MxNxK`, e.g. `128x256x128`.
def FP8_TileShape3Parameter
    : AttrParameter<"::mlir::fp8::GemmTileShape", "GEMM tile shape"> {
  let parser = "::mlir::fp8::parseGemmTileShape($_parser)";
  let printer = "::mlir::fp8::printGemmTileShape($_printer, $_self)";
}

// An f32 written as a decimal literal.
class FP8_F32Parameter<string value> : APFloatParameter<"f32 value"> {
  let parser = "::mlir::fp8::parseF32($_parser)";
  let printer = "::mlir::fp8::printF32($_printer, $_self)";
  let defaultValue = "::llvm::APFloat(float(" # value # "))";
}

class FP8_EnumParameter<string enumType, string value>
    : DefaultValuedParameter<"::mlir::fp8::" # enumType,
                             "::mlir::fp8::" # enumType # "::" # value>;

//===----------------------------------------------------------------------===//
// Recipe interface
//===----------------------------------------------------------------------===//

def FP8_RecipeAttrInterface : AttrInterface<"RecipeAttrInterface"> {
  let cppNamespace = "::mlir::fp8";
  let description = [{
    An FP8 training/inference recipe: how tensors are quantized (element
    formats, scale granularity and scale rule) and how the GEMMs that consume
    them accumulate.
  }];
  let methods = [
    InterfaceMethod<"Default accumulation mode of the recipe's GEMMs.",
      "::mlir::fp8::Accumulation", "getAccumulate">,
    InterfaceMethod<[{
        Whether `type` may be the element type of data quantized with this
        recipe.}],
      "bool", "isAllowedElementType", (ins "::mlir::Type":$type)>,
    InterfaceMethod<[{
        Whether fp8.quantize may use `granularity` with this recipe.}],
      "bool", "isAllowedGranularity", (ins "::mlir::Attribute":$granularity)>,
    InterfaceMethod<"Human-readable list of the allowed element types.",
      "::llvm::StringRef", "getAllowedElementTypesDescription">,
  ];
}

class FP8_RecipeAttr<string name, string attrMnemonic>
    : AttrDef<FP8_Dialect, name,
              [DeclareAttrInterfaceMethods<FP8_RecipeAttrInterface>]> {
  let mnemonic = attrMnemonic;
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

//===----------------------------------------------------------------------===//
// Recipes
//===----------------------------------------------------------------------===//

def FP8_DelayedScalingAttr : FP8_RecipeAttr<"DelayedScaling", "delayed"> {
  let summary = "per-tensor delayed scaling (Transformer Engine DelayedScaling)";
  let description = [{
    One scale per tensor, computed from a history of the amax values of the
    previous steps, so that quantizing a tensor takes one pass over memory:
    the cast of step `t` uses the scale computed up to step `t-1` and records
    step `t`'s amax.

    * `history`: amax history length (default 1024, in [1, 65536]).
    * `algo`: `max` over the history (default) or `most_recent` (slot 0).
    * `margin`: `scale = (fp8_max * 2^-margin) / amax` (default 0, in
      [0, 64]).
    * `format`: `hybrid` (E4M3 forward tensors, E5M2 gradients; default) or
      `e4m3`.
    * `accumulate`: the GEMMs' accumulation, `promoted(N)` (default
      `promoted(128)`) or `fast`.

    Example: `#fp8.delayed<history = 16, algo = most_recent, margin = 1>`
  }];
  let parameters = (ins
    DefaultValuedParameter<"int64_t", "1024">:$history,
    FP8_EnumParameter<"AmaxComputeAlgo", "Max">:$algo,
    DefaultValuedParameter<"int64_t", "0">:$margin,
    FP8_EnumParameter<"RecipeFormat", "Hybrid">:$format,
    FP8_AccumulationParameter<"::mlir::fp8::Accumulation::promoted(128)">:$accumulate
  );
}

def FP8_CurrentScalingAttr : FP8_RecipeAttr<"CurrentScaling", "current"> {
  let summary = "per-tensor current scaling (Transformer Engine Float8CurrentScaling)";
  let description = [{
    One scale per tensor (or per row, with `#fp8.granularity<row>`) computed
    from the amax of the tensor being quantized: `scale = fp8_max /
    max(amax, epsilon)`, 1 when the amax is 0, inf or NaN, FLT_MAX when the
    division overflows.

    * `epsilon`: lower clamp of the amax (default 0.0, finite, >= 0).
    * `pow2`: keep only the sign and exponent of the scale (default false).
    * `format`: `hybrid` (default) or `e4m3`.
    * `accumulate`: `promoted(N)` (default `promoted(128)`) or `fast`.

    Example: `#fp8.current<epsilon = 1.0e-12, pow2 = true, format = e4m3>`
  }];
  let parameters = (ins
    FP8_F32Parameter<"0.0f">:$epsilon,
    DefaultValuedParameter<"bool", "false">:$pow2,
    FP8_EnumParameter<"RecipeFormat", "Hybrid">:$format,
    FP8_AccumulationParameter<"::mlir::fp8::Accumulation::promoted(128)">:$accumulate
  );
}

// The default tiles of #fp8.blockwise: the DeepSeek-V3 block
// (kBlockwiseScaleBlock, FP8Attrs.h).
defvar BlockwiseActTile =
    "::mlir::fp8::TileShape{1, ::mlir::fp8::kBlockwiseScaleBlock}";
defvar BlockwiseWeightTile = "::mlir::fp8::TileShape{"
    "::mlir::fp8::kBlockwiseScaleBlock, ::mlir::fp8::kBlockwiseScaleBlock}";

def FP8_BlockwiseScalingAttr : FP8_RecipeAttr<"BlockwiseScaling", "blockwise"> {
  let summary = "DeepSeek-V3 blockwise scaling (TE Float8BlockScaling, DeepGEMM)";
  let description = [{
    E4M3 data with one scale per tile: activations and gradients in 1xN tiles
    along the reduction dimension, weights in NxN tiles. A tail tile uses its
    valid elements.

    * `act`: activation/gradient tile, `1xN` (default `1x128`).
    * `weight`: weight tile, `RxN` (default `128x128`). Its column count must
      equal the activation tile's, so both operands of a GEMM change scale at
      the same K.
    * `scales`: `pow2` (default, TE's default; scale_inv =
      2^ceil(log2(amax/448)), i.e. representable as UE8M0) or `f32`
      (scale_inv = amax/448, DeepSeek-V3 inference).
    * `amax_clamp`: lower clamp of each tile's amax before dividing (default
      1.0e-4, as DeepGEMM; TE uses 0.0).
    * `accumulate`: must be `promoted(N)` with N dividing the tile's K extent
      (default `promoted(128)`): the scales change every N K-elements.

    Example: `#fp8.blockwise<act = 1x128, weight = 128x128, scales = f32>`
  }];
  let parameters = (ins
    FP8_TileShapeParameter<BlockwiseActTile>:$act,
    FP8_TileShapeParameter<BlockwiseWeightTile>:$weight,
    FP8_EnumParameter<"BlockScaleKind", "PowerOfTwo">:$scales,
    FP8_F32Parameter<"1.0e-4f">:$amax_clamp,
    FP8_AccumulationParameter<"::mlir::fp8::Accumulation::promoted(128)">:$accumulate
  );
}

def FP8_MXScalingAttr : FP8_RecipeAttr<"MXScaling", "mxfp8"> {
  let summary = "MXFP8 block scaling (OCP MX v1.0, TE MXFP8BlockScaling)";
  let description = [{
    FP8 elements in 1x32 blocks along the reduction dimension, one UE8M0
    (`f8E8M0FNU`) scale per block. Tensors used on both sides of a training
    step are quantized twice (1x32 rowwise and 32x1 columnwise): the two are
    different data.

    * `block`: block size along the reduction dimension (32: the only size
      OCP MX and the tensor cores define).
    * `rounding`: `round_up` (default; TE, cuBLAS, DeepGEMM:
      `cvt.rp.satfinite.ue8m0x2.f32(amax / fp8_max)`) or `ocp` (OCP v1.0:
      `floor(log2(amax)) - emax_elem`).
    * `format`: element format, `e4m3` (default) or `e5m2`.
    * `accumulate`: `promoted(N)` (default `promoted(128)`) or `fast`.

    Example: `#fp8.mxfp8<rounding = ocp>`
  }];
  let parameters = (ins
    DefaultValuedParameter<"int64_t", "32">:$block,
    FP8_EnumParameter<"UE8M0Rounding", "RoundUp">:$rounding,
    FP8_EnumParameter<"ElementFormat", "E4M3">:$format,
    FP8_AccumulationParameter<"::mlir::fp8::Accumulation::promoted(128)">:$accumulate
  );
}

//===----------------------------------------------------------------------===//
// Scale granularity and accumulation
//===----------------------------------------------------------------------===//

def FP8_GranularityAttr : AttrDef<FP8_Dialect, "Granularity"> {
  let mnemonic = "granularity";
  let summary = "which elements share one scale";
  let description = [{
    The block of a 2-D tensor `[R, C]` that shares one scale, and so the
    logical shape of the scale tensor:

    | syntax | block | scale shape | scale type |
    |---|---|---|---|
    | `#fp8.granularity<tensor>` | whole tensor | `[]` (rank 0) | f32 |
    | `#fp8.granularity<row>` | one row | `[R, 1]` | f32 |
    | `#fp8.granularity<tile 1x128>` | `1x128` tile | `[R, ceil(C/128)]` | f32 (or f8E8M0FNU for pow2 scales) |
    | `#fp8.granularity<tile 128x128>` | `128x128` tile | `[ceil(R/128), ceil(C/128)]` | f32 (or f8E8M0FNU) |
    | `#fp8.granularity<mx 1x32>` | MX `1x32` block | `[R, ceil(C/32)]` | f8E8M0FNU |

    Tail blocks of a dimension that is not a multiple of the block hold the
    remaining elements.
  }];
  let parameters = (ins "::mlir::fp8::GranularityKind":$kind,
                        "::mlir::fp8::TileShape":$tile);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    static GranularityAttr getTensor(::mlir::MLIRContext *ctx);
    static GranularityAttr getRow(::mlir::MLIRContext *ctx);
    static GranularityAttr getTile(::mlir::MLIRContext *ctx, int64_t rows,
                                   int64_t cols);
    static GranularityAttr getMX(::mlir::MLIRContext *ctx, int64_t block);

    bool isTensor() const { return getKind() == GranularityKind::Tensor; }
    bool isRow() const { return getKind() == GranularityKind::Row; }
    bool isTile() const { return getKind() == GranularityKind::Tile; }
    bool isMX() const { return getKind() == GranularityKind::MX; }
    /// Scales applied after the GEMM (tensor, row) rather than per K block.
    bool isEpilogueScaled() const { return isTensor() || isRow(); }

    /// The logical shape of the scale tensor of a `rows x cols` tensor
    /// (ShapedType::kDynamic propagates). Rank 0 for per-tensor scaling.
    ::llvm::SmallVector<int64_t> getScaleShape(int64_t rows,
                                               int64_t cols) const;
    /// `tensor`, `row`, `tile 1x128`, `mx 1x32`: the syntax inside <>.
    std::string describe() const;
  }];
}

def FP8_AccumulationAttr : AttrDef<FP8_Dialect, "Accumulation"> {
  let mnemonic = "accumulation";
  let summary = "how a scaled GEMM accumulates along K";
  let description = [{
    `#fp8.accumulation<fast>`: the tensor-core accumulator is used as is
    (on Hopper, wgmma keeps about 14 bits of the partial sums).

    `#fp8.accumulation<promoted(N)>`: every N K-elements (a multiple of 32)
    the partial tile is scaled and added into an IEEE f32 accumulator on
    the CUDA cores, as DeepSeek-V3 and Transformer Engine do.
  }];
  let parameters = (ins FP8_AccumulationParameter<"">:$mode);
  let assemblyFormat = "`<` $mode `>`";
  let genVerifyDecl = 1;
}

//===----------------------------------------------------------------------===//
// Kernel configuration override
//===----------------------------------------------------------------------===//

def FP8_GemmConfigAttr : AttrDef<FP8_Dialect, "GemmConfig"> {
  let mnemonic = "gemm_config";
  let summary = "kernel configuration of a scaled GEMM, overriding the heuristic";
  let description = [{
    Set on `fp8.scaled_matmul` (`config = #fp8.gemm_config<...>`) to replace
    the lowering's choice of:

    * `tile`: the CTA output tile and K step, `MxNxK` (M a multiple of 64,
      N a multiple of 8 in [8, 256], K = 128: the swizzle span of 128 FP8
      elements and the blockwise scale block);
    * `stages`: depth of the shared-memory pipeline (1 to 16);
    * `cluster`: thread-block cluster shape `MxN` along the output tiles
      (1x1 or 2x1, 1x2 for TMA multicast of the shared operand);
    * `raster_group`: how many tile rows the persistent scheduler walks
      together for L2 reuse (>= 1);
    * `stream_k` (optional): whether the tiles of a partial last wave are
      split along K over all CTAs (stream-K; 1x1 clusters only); left out,
      the lowering decides;
    * `promotion_parts` (optional, sm_90a promoted accumulation): the
      column parts a K block's MMAs are issued and promoted in, 1 or 2: one
      part reads each A row once per K block (its promotion waits for all
      the block's MMAs), two overlap the first part's promotion with the
      second part's MMAs. Left out (0), the lowering decides. A promoted
      tile 256 wide takes one: its two 128-column halves are issued in
      turn through one partial accumulator.
    * `ping_pong` (optional, sm_90a fast accumulation): each consumer
      warpgroup computes a whole tile (64 or 128 rows, in 64-row waves)
      and the two consumers take the CTA's tiles in turn, issuing their
      MMAs one after the other, so that one's epilogue runs under the
      other's MMAs (the schedule CUTLASS calls ping-pong); left out, the
      two consumers share each tile.

    Whether a configuration fits a chip (shared memory, registers, MMA
    shapes) is checked by the target lowering, which reports what does not.

    Example: `#fp8.gemm_config<tile = 128x256x128, stages = 4>`
  }];
  let parameters = (ins
    FP8_TileShape3Parameter:$tile,
    DefaultValuedParameter<"int64_t", "4">:$stages,
    FP8_TileShapeParameter<"::mlir::fp8::TileShape{1, 1}">:$cluster,
    DefaultValuedParameter<"int64_t", "8">:$raster_group,
    OptionalParameter<"::mlir::BoolAttr">:$stream_k,
    DefaultValuedParameter<"int64_t", "0">:$promotion_parts,
    OptionalParameter<"::mlir::BoolAttr">:$ping_pong
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

//===----------------------------------------------------------------------===//
// Target
//===----------------------------------------------------------------------===//

def FP8_TargetAttr : AttrDef<FP8_Dialect, "Target"> {
  let mnemonic = "target";
  let summary = "the GPU a module is compiled for";
  let description = [{
    The discardable attribute `fp8.target` of the top-level `builtin.module`
    names the chip the module is compiled for and the hardware limits the
    lowerings plan with. `fp8-attach-target` sets it (the `fp8-to-ptx`
    pipeline runs it first); every pass that depends on the target reads it
    from there, and a pass that needs it reports its absence.

    * `chip`: one of the chips of the capability table
      (`FP8/Target/Chip.h`): `sm_90a` (H100/H200) or `sm_100a` (B200). What
      the chip's MMA can run (wgmma or tcgen05, MN-major FP8 operands, the
      block-scaled MMA of MXFP8) follows from it;
    * `sm_count`: the SMs of the GPU, the wave count of a persistent grid
      that the sm_90a tile heuristic minimizes (132 for sm_90a, H100/H200
      SXM; 148 for sm_100a, B200);
    * `max_shared_memory_per_block`: the dynamic shared memory a kernel may
      use, in bytes (at most the chip's, 232448 = 227 KiB on both chips):
      the pipeline depth of the GEMM kernels is what fits in it;
    * `ptx_features`: the PTX ISA features of the NVVM target (`+ptx80`,
      the minimum for sm_90a; `+ptx88` for sm_100a), which
      `fp8-verify-target-support` checks.

    Example:
    `#fp8.target<chip = "sm_90a", sm_count = 132, max_shared_memory_per_block = 232448, ptx_features = "+ptx80">`
  }];
  let parameters = (ins
    StringRefParameter<"chip name">:$chip,
    "int64_t":$sm_count,
    "int64_t":$max_shared_memory_per_block,
    StringRefParameter<"PTX ISA features">:$ptx_features
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

#endif // FP8_DIALECT_FP8_IR_FP8ATTRS_TD
