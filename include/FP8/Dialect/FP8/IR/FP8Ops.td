//===- FP8Ops.td - FP8 dialect operations ------------------*- tablegen -*-===//

#ifndef FP8_DIALECT_FP8_IR_FP8OPS_TD
#define FP8_DIALECT_FP8_IR_FP8OPS_TD

include "FP8/Dialect/FP8/IR/FP8Attrs.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

// Checks what the generic verification would report in its own terms, or
// hide, before it runs: unranked operands, extents outside the contract,
// the K of a GEMM, operand segment sizes (verifyBeforeInvariants in
// FP8Ops.cpp). Structural traits are verified first, in list order.
def FP8_VerifiesContractFirst
    : NativeOpTrait<"VerifiesContractFirst">, StructuralOpTrait {
  let cppNamespace = "::mlir::fp8";
}

class FP8_Op<string mnemonic, list<Trait> traits = []>
    : Op<FP8_Dialect, mnemonic,
         !listconcat([FP8_VerifiesContractFirst], traits)>;

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def FP8_HighPrecisionFloat : AnyTypeOf<[BF16, F16, F32]>;
def FP8_Float8 : AnyTypeOf<[F8E4M3FN, F8E5M2], "FP8 (f8E4M3FN or f8E5M2)">;
def FP8_ScaleElement : AnyTypeOf<[F32, F8E8M0FNU], "f32 or f8E8M0FNU">;

// Ranked tensor constraints whose C++ type is TensorType: the custom
// assembly formats then parse an unranked tensor too, and the verifier
// reports it by the operand's name (a RankedTensorType would fail in the
// parser with "invalid kind of type specified").
class FP8_Ranked<Type type>
    : Type<type.predicate, type.summary, "::mlir::TensorType">;

def FP8_HighPrecisionTensor : FP8_Ranked<RankedTensorOf<[BF16, F16, F32]>>;
def FP8_Float8Tensor : FP8_Ranked<RankedTensorOf<[F8E4M3FN, F8E5M2]>>;
def FP8_ScaleTensor : FP8_Ranked<RankedTensorOf<[F32, F8E8M0FNU]>>;
def FP8_F32Tensor : FP8_Ranked<RankedTensorOf<[F32]>>;
def FP8_F32Scalar : FP8_Ranked<0DTensorOf<[F32]>>;
def FP8_AmaxHistory : FP8_Ranked<1DTensorOf<[F32]>>;

def FP8_RecipeAttr : Attr<
    CPred<"::llvm::isa<::mlir::fp8::RecipeAttrInterface>($_self)">,
    "FP8 recipe attribute"> {
  let storageType = "::mlir::fp8::RecipeAttrInterface";
  let returnType = "::mlir::fp8::RecipeAttrInterface";
  let convertFromStorage = "$_self";
}

//===----------------------------------------------------------------------===//
// fp8.amax
//===----------------------------------------------------------------------===//

def FP8_AmaxOp : FP8_Op<"amax", [Pure]> {
  let summary = "maximum absolute value of a tensor";
  let description = [{
    Returns `max(|x|)` over all elements, computed in f32. NaN propagates: a
    tensor holding a NaN has a NaN amax (so the scale rules fall back to 1
    instead of silently producing a finite scale). Folds on constants with
    the numerics library.

    ```mlir
    %amax = fp8.amax %x : tensor<4096x7168xbf16> -> tensor<f32>
    ```
  }];
  let arguments = (ins FP8_HighPrecisionTensor:$input);
  let results = (outs FP8_F32Scalar:$amax);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($amax)";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// fp8.compute_scale
//===----------------------------------------------------------------------===//

def FP8_ComputeScaleOp : FP8_Op<"compute_scale", [Pure]> {
  let summary = "per-tensor scale from an amax or an amax history";
  let description = [{
    Computes the quantization `scale` and its inverse `scale_inv` of a
    per-tensor recipe for data of element type `element_type`:

    * `#fp8.current`: from this step's `amax` (a `tensor<f32>`):
      `scale = fp8_max / max(amax, epsilon)`, 1 for an amax of 0, inf or NaN,
      FLT_MAX on overflow, optionally truncated to a power of two.
    * `#fp8.delayed`: from the amax history (`tensor<Lxf32>`, L = the
      recipe's history length, slot 0 holding this step's amax) and the
      previous scale, as Transformer Engine's amax-and-scale update: the
      reduced amax (`max`, or slot 0 for `most_recent`) gives
      `scale = fp8_max * 2^-margin / amax`, or keeps `previous_scale` when that
      amax is not finite and positive. The third result is the history for
      the next step: rolled left by one, slot 0 cleared.

    Blockwise and MXFP8 scales are per block and come out of `fp8.quantize`.

    ```mlir
    %s, %s_inv = fp8.compute_scale %amax {recipe = #fp8.current<>, element_type = f8E4M3FN}
        : tensor<f32> -> tensor<f32>, tensor<f32>
    %s, %s_inv, %next = fp8.compute_scale %history, %prev
        {recipe = #fp8.delayed<history = 16>, element_type = f8E5M2}
        : tensor<16xf32>, tensor<f32> -> tensor<f32>, tensor<f32>, tensor<16xf32>
    ```
  }];
  let arguments = (ins FP8_F32Tensor:$amax,
                       Optional<FP8_F32Scalar>:$previous_scale,
                       FP8_RecipeAttr:$recipe,
                       TypeAttrOf<FP8_Float8>:$element_type);
  let results = (outs FP8_F32Scalar:$scale, FP8_F32Scalar:$scale_inv,
                      Optional<FP8_AmaxHistory>:$next_history);
  let assemblyFormat = [{
    $amax (`,` $previous_scale^)? attr-dict `:` type($amax)
    (`,` type($previous_scale)^)? `->` type($scale) `,` type($scale_inv)
    (`,` type($next_history)^)?
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// fp8.update_amax_history
//===----------------------------------------------------------------------===//

def FP8_UpdateAmaxHistoryOp : FP8_Op<"update_amax_history",
    [Pure, AllTypesMatch<["history", "result"]>]> {
  let summary = "record this step's amax into slot 0 of a delayed-scaling history";
  let description = [{
    Returns `history` with slot 0 replaced by `max(history[0], amax)` (a
    NaN amax is recorded as NaN), i.e. what the casts of a step do to the
    history Transformer Engine keeps. Several casts of the same tensor in one
    step accumulate. `fp8.compute_scale` then consumes the history and
    returns the rolled one for the next step.

    ```mlir
    %h1 = fp8.update_amax_history %h0, %amax {recipe = #fp8.delayed<history = 16>}
        : tensor<16xf32>, tensor<f32>
    ```
  }];
  let arguments = (ins FP8_AmaxHistory:$history, FP8_F32Scalar:$amax,
                       FP8_RecipeAttr:$recipe);
  let results = (outs FP8_AmaxHistory:$result);
  let assemblyFormat = [{
    $history `,` $amax attr-dict `:` type($history) `,` type($amax)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// fp8.quantize
//===----------------------------------------------------------------------===//

def FP8_QuantizeOp : FP8_Op<"quantize", [Pure, AttrSizedResultSegments]> {
  let summary = "quantize a tensor to FP8 with a recipe and a scale granularity";
  let description = [{
    Quantizes `input` (bf16, f16 or f32) to FP8 with `recipe` at
    `granularity`, producing FP8 data and the matching `scale_inv` tensor
    (see `#fp8.granularity` for its shape). One op can produce, from one read
    of the input:

    * the `rowwise` output: blocks along the rows' direction (the last
      dimension), data in the input's layout;
    * the `columnwise` output: the quantization of the transposed input
      (blocks along the first dimension), stored transposed (`[C, R]`,
      `columnwise_layout = transposed`, the default: cast + transpose for
      Hopper, whose FP8 GEMMs need K-major operands) or in the input's
      layout (`untransposed`, for Blackwell). Its scale tensor has the shape
      of the transposed input's scales. For 1-D blocks (1x128, 1x32) this is
      different data from the rowwise output.

    Scales per granularity and recipe:

    * `tensor` with `#fp8.delayed`: `scale` operand required (from
      `fp8.compute_scale` of the previous step); the optional `amax` result
      is this tensor's amax, to record into the history.
    * `tensor` with `#fp8.current`: `scale` operand optional; without it
      the op computes the tensor's amax and scale itself (amax result
      available).
    * `row` with `#fp8.current`; tiles with `#fp8.blockwise`; `mx 1x32`
      with `#fp8.mxfp8`: each block's scale is computed from its amax.

    `scale_granularity = #fp8.granularity<mx 1x32>` (optional, power-of-two
    blockwise tiles whose K extent is a multiple of 32 only) gives both
    `scale_inv` results in the MX form that a block-scaled MMA reads: the
    data and the scale values are those of `granularity`, but each tile's
    scale is repeated over the 1x32 blocks it covers (a 1x128 tile over its
    four blocks, a 128x128 tile over its 128 rows and four blocks) as the
    UE8M0 code of the power-of-two f32 `scale_inv` (its biased exponent
    field), so the scale tensors are `f8E8M0FNU` of the `mx 1x32` shapes.
    `fp8-blockwise-to-mx` sets it when a blockwise GEMM runs as an MXFP8
    one, so that the quantization kernel writes the GEMM's scale layout
    itself.

    A 3-D input `[G, R, C]` with a tile granularity is a batch of G
    matrices (the expert weights `[G, N, K]` of a grouped linear layer),
    each quantized on its own: square tiles only, the data `[G, R, C]`
    (rowwise) and `[G, C, R]` (columnwise, transposed: each matrix's
    transpose, the per-expert K-major copies `W[g]^T` that the grouped
    dgrad reads), the scales of each matrix with G outermost.

    ```mlir
    %q, %s = fp8.quantize %x {recipe = #fp8.blockwise<>,
        granularity = #fp8.granularity<tile 1x128>}
        : tensor<256x512xbf16> -> rowwise(tensor<256x512xf8E4M3FN>, tensor<256x4xf32>)
    ```
  }];
  let arguments = (ins FP8_HighPrecisionTensor:$input,
                       Optional<FP8_F32Scalar>:$scale,
                       FP8_RecipeAttr:$recipe,
                       FP8_GranularityAttr:$granularity,
                       DefaultValuedAttr<FP8_ColumnwiseLayoutAttr,
                           "::mlir::fp8::ColumnwiseLayout::Transposed">:$columnwise_layout,
                       OptionalAttr<FP8_GranularityAttr>:$scale_granularity);
  let results = (outs Optional<FP8_Float8Tensor>:$rowwise,
                      Optional<FP8_ScaleTensor>:$rowwise_scale_inv,
                      Optional<FP8_Float8Tensor>:$columnwise,
                      Optional<FP8_ScaleTensor>:$columnwise_scale_inv,
                      Optional<FP8_F32Scalar>:$amax);
  let assemblyFormat = [{
    $input (`scale` $scale^)? attr-dict `:` type($input)
    (`,` type($scale)^)? `->`
    (`rowwise` `(` type($rowwise)^ `,` type($rowwise_scale_inv) `)`)?
    (`columnwise` `(` type($columnwise)^ `,` type($columnwise_scale_inv) `)`)?
    (`amax` `(` type($amax)^ `)`)?
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// fp8.dequantize
//===----------------------------------------------------------------------===//

def FP8_DequantizeOp : FP8_Op<"dequantize", [Pure]> {
  let summary = "FP8 data times its scale_inv, to a high-precision tensor";
  let description = [{
    `result = decode(input) * scale_inv[block]` in f32, then rounded (RNE) to
    the result element type. Lossless given its inputs; the pair
    `fp8.dequantize(fp8.quantize(x))` is lossy and is never folded to `x`.

    ```mlir
    %x = fp8.dequantize %q, %s {granularity = #fp8.granularity<mx 1x32>}
        : tensor<128x256xf8E4M3FN>, tensor<128x8xf8E8M0FNU> -> tensor<128x256xbf16>
    ```
  }];
  let arguments = (ins FP8_Float8Tensor:$input, FP8_ScaleTensor:$scale_inv,
                       FP8_GranularityAttr:$granularity);
  let results = (outs FP8_HighPrecisionTensor:$result);
  let assemblyFormat = [{
    $input `,` $scale_inv attr-dict `:` type($input) `,` type($scale_inv)
    `->` type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// fp8.scales_to_mx
//===----------------------------------------------------------------------===//

def FP8_ScalesToMXOp : FP8_Op<"scales_to_mx", [Pure]> {
  let summary = "power-of-two blockwise scales as the MX scales of the same data";
  let description = [{
    The `mx 1x32` scale_inv tensor (`f8E8M0FNU`, `[R, ceil(C/32)]`) of an
    `[R, C]` operand quantized in `granularity` tiles (`tile RxKb`, Kb a
    multiple of 32), given its blockwise `scale_inv` (`[ceil(R/R_tile),
    ceil(C/Kb)]`, f32 powers of two or `f8E8M0FNU`): each tile's UE8M0 code
    (the biased exponent field of a power-of-two f32) repeated over the 1x32
    blocks it covers, as `fp8.quantize` with `scale_granularity = mx 1x32`
    writes them itself. The FP8 data are unchanged: this is how a blockwise
    GEMM whose scales come from elsewhere (e.g. function arguments) runs on
    the block-scaled MMA (numerics.md, "Blockwise to MX on Blackwell");
    `fp8-blockwise-to-mx` creates it and `fp8-lower-quantize` lowers it to a
    kernel writing the MX scale layout. An f32 that is not a power of two
    has no UE8M0 code: its exponent field is taken as it is.

    R must be static unless the tiles have one row (R is then the scale
    tensor's first extent).

    ```mlir
    %mx = fp8.scales_to_mx %s {granularity = #fp8.granularity<tile 1x128>}
        : tensor<?x56xf32> -> tensor<?x224xf8E8M0FNU>
    ```
  }];
  let arguments = (ins 2DTensorOf<[F32, F8E8M0FNU]>:$input,
                       FP8_GranularityAttr:$granularity);
  let results = (outs 2DTensorOf<[F8E8M0FNU]>:$result);
  let assemblyFormat = [{
    $input attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// fp8.scaled_matmul
//===----------------------------------------------------------------------===//

// Operands of scaled_matmul: ranked tensors, or memrefs in its
// destination-passing (bufferized) form.
class FP8_TensorOrMemRefOf<list<Type> types, list<int> ranks>
    : AnyTypeOf<[TensorRankOf<types, ranks>, MemRefRankOf<types, ranks>]>;

def FP8_ScaledMatmulOp : FP8_Op<"scaled_matmul",
    [AttrSizedOperandSegments, AttrSizedResultSegments,
     DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "FP8 GEMM with scales: D = (A * sA)(B * sB)^T [+ bias] [+ C]";
  let description = [{
    Computes `D[m, n] = sum_k A[m, k] sA[m, k] B[n, k] sB[n, k]
    (+ bias[n]) (+ C[m, n])`, where `sA`/`sB` are the `scale_inv` values of
    the blocks holding each element (`a_granularity`, `b_granularity`), and
    rounds to the result element type (bf16, f16 or f32).

    * Operand storage: `a_major = k` stores A as `[M, K]`, `mn` as `[K, M]`;
      `b_major = k` stores B as `[N, K]` ("TN" when both are K-major), `mn`
      as `[K, N]`. Scales are in the logical orientation (`[M, ...]`,
      `[N, ...]`). Which majors a chip runs natively is a target question
      (see `fp8-verify-target`).
    * Scale pairs: per-tensor and/or per-row (`tensor`, `row`; applied in the
      epilogue), blockwise tiles (`tile 1xKb` or `tile RxKb` on either side,
      the same Kb), or MX (`mx 1x32` on both sides).
    * `accumulation`: `fast` or `promoted(N)`; blockwise scales need
      promotion at an interval dividing their K extent.
    * `bias`: optional `[N]` vector (bf16 or f32) added after scaling.
    * `c`: optional f32 `[M, N]` accumulated into (wgrad); requires an f32
      result.
    * `activation`: optional `#fp8.activation<gelu|gelu_tanh|silu>` applied
      in f32 after the scales and the bias (not with `c`).
    * `amax` (optional second result, `tensor<f32>`): `max |D|` over the
      output as stored (after rounding to its element type; NaN if any
      element is NaN), for current scaling of the next layer's input. On
      memrefs the kernel max-accumulates into an `amax_outs` buffer, which
      must hold 0 (or an earlier amax to fold in) before it runs. With an
      FP8 result it is `max |D|` before quantization (in f32), the amax a
      delayed-scaling history records.
    * FP8 result (`f8E4M3FN` or `f8E5M2`, on tensors): D quantized for its
      consumer with `result_recipe` at `result_granularity`, as
      `fp8.quantize` would quantize the f32 values of D (after the scales,
      bias and activation); the second result is its `scale_inv`, of the
      granularity's shape. `result_scale` is the given quantization scale
      (required with `#fp8.delayed`, optional with `#fp8.current` per
      tensor, not taken otherwise). The GEMM kernels quantize per tensor
      with a given scale and in 1x128 blocks along N (`#fp8.blockwise`) in
      the epilogue; per-tensor current scaling without a scale and `row`
      granularity need a reduction over more than one tile and are lowered
      in two phases (f32 D with its amax, then a quantization kernel).
    * `recipe`: optional; when present the operands must be consistent with it.
    * `config`: optional `#fp8.gemm_config` overriding the target lowering's
      choice of tile, pipeline depth, cluster and rasterization.

    On tensors the op returns D. On memrefs (what one-shot bufferization
    produces, through the op's BufferizableOpInterface model) it is in
    destination-passing style: it reads its operands and writes D into the
    `outs` buffer, with no result:

    ```mlir
    fp8.scaled_matmul %a, %b, %sa, %sb outs %d {...}
        : (memref<?x7168xf8E4M3FN>, memref<2048x7168xf8E4M3FN>, memref<f32>,
           memref<f32>, memref<?x2048xbf16>) -> ()
    ```

    ```mlir
    %d, %ds = fp8.scaled_matmul %a, %b, %sa, %sb
        {a_granularity = #fp8.granularity<tile 1x128>,
         b_granularity = #fp8.granularity<tile 128x128>,
         accumulation = #fp8.accumulation<promoted(128)>,
         result_recipe = #fp8.blockwise<>,
         result_granularity = #fp8.granularity<tile 1x128>}
        : (tensor<?x7168xf8E4M3FN>, tensor<2048x7168xf8E4M3FN>,
           tensor<?x56xf32>, tensor<16x56xf32>)
        -> (tensor<?x2048xf8E4M3FN>, tensor<?x16xf32>)
    ```

    ```mlir
    %d = fp8.scaled_matmul %a, %b, %sa, %sb
        {a_granularity = #fp8.granularity<tile 1x128>,
         b_granularity = #fp8.granularity<tile 128x128>,
         accumulation = #fp8.accumulation<promoted(128)>}
        : (tensor<4096x7168xf8E4M3FN>, tensor<2112x7168xf8E4M3FN>,
           tensor<4096x56xf32>, tensor<17x56xf32>) -> tensor<4096x2112xbf16>
    ```
  }];
  let arguments = (ins FP8_TensorOrMemRefOf<[F8E4M3FN, F8E5M2], [2]>:$a,
                       FP8_TensorOrMemRefOf<[F8E4M3FN, F8E5M2], [2]>:$b,
                       FP8_TensorOrMemRefOf<[F32, F8E8M0FNU], [0, 1, 2]>:$a_scale_inv,
                       FP8_TensorOrMemRefOf<[F32, F8E8M0FNU], [0, 1, 2]>:$b_scale_inv,
                       Optional<FP8_TensorOrMemRefOf<[BF16, F32], [1]>>:$bias,
                       Optional<FP8_TensorOrMemRefOf<[F32], [2]>>:$c,
                       Optional<FP8_F32Scalar>:$result_scale,
                       Optional<MemRefRankOf<[BF16, F16, F32], [2]>>:$out,
                       Optional<MemRefRankOf<[F32], [0]>>:$amax_out,
                       FP8_GranularityAttr:$a_granularity,
                       FP8_GranularityAttr:$b_granularity,
                       DefaultValuedAttr<FP8_OperandMajorAttr,
                           "::mlir::fp8::OperandMajor::K">:$a_major,
                       DefaultValuedAttr<FP8_OperandMajorAttr,
                           "::mlir::fp8::OperandMajor::K">:$b_major,
                       FP8_AccumulationAttr:$accumulation,
                       OptionalAttr<FP8_RecipeAttr>:$recipe,
                       OptionalAttr<FP8_GemmConfigAttr>:$config,
                       OptionalAttr<FP8_ActivationAttr>:$activation,
                       OptionalAttr<FP8_RecipeAttr>:$result_recipe,
                       OptionalAttr<FP8_GranularityAttr>:$result_granularity);
  let results = (outs Optional<2DTensorOf<[BF16, F16, F32, F8E4M3FN,
                                           F8E5M2]>>:$result,
                      Optional<FP8_ScaleTensor>:$result_scale_inv,
                      Optional<FP8_F32Scalar>:$amax);
  // The types print as a function type, `(operands) -> D`, `-> (D, amax)`,
  // `-> (D, scale_inv)` or `-> (D, scale_inv, amax)` (D FP8), or `-> ()`.
  let assemblyFormat = [{
    $a `,` $b `,` $a_scale_inv `,` $b_scale_inv
    (`bias` $bias^)? (`accumulate_into` $c^)?
    (`result_scale` $result_scale^)? (`outs` $out^)?
    (`amax_outs` $amax_out^)? attr-dict `:` `(` type(operands) `)` `->`
    custom<ScaledMatmulResults>(type($result), type($result_scale_inv),
                                type($amax))
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Logical GEMM extents from the operand shapes and majors
    /// (ShapedType::kDynamic when unknown).
    int64_t getM();
    int64_t getN();
    int64_t getK();
    /// The destination-passing form on memrefs (D written into `out`).
    bool hasBufferSemantics() { return static_cast<bool>(getOut()); }
    /// D is quantized to FP8 in the epilogue (result_recipe/granularity).
    bool hasFP8Result() {
      return getResult() && isa<FloatType>(getOutputType().getElementType()) &&
             cast<FloatType>(getOutputType().getElementType()).getWidth() == 8;
    }
    /// The type of D: the result's, or the `outs` buffer's.
    ShapedType getOutputType() {
      return getOut() ? ShapedType(getOut().getType())
                      : ShapedType(getResult().getType());
    }
  }];
}

def FP8_GroupedScaledMatmulOp : FP8_Op<"grouped_scaled_matmul", [Pure]> {
  let summary = "grouped FP8 GEMM with scales: D_g = (A_g * sA_g)(B_g * sB_g)^T";
  let description = [{
    One scaled GEMM per group (expert of a mixture-of-experts layer) with the
    group's own weight `B[g]` and scales, as `fp8.scaled_matmul` computes
    each, in one op. `layout` says where the groups' rows lie:

    * `m_contiguous`: `A` is `[M, K]`, the rows of all groups sorted by
      group, every group starting at a row that is a multiple of 128 (pad
      each group's rows to a multiple of 128, as DeepGEMM's contiguous
      layout does); `B` is `[G, N, K]`; `groups` (the group index) is an
      `i32` tensor `[M]`, at run time the group of each row (-1 for padding rows), read
      once per 128 rows (the group of a 128-row block is that of its first
      row); `D` is `[M, N]`, whose padding rows are not written.
    * `m_masked` (decode under CUDA graphs, DeepGEMM's masked layout): `A`
      is `[G, M, K]`, every group's rows at its own `[M, K]` (`M` the most
      rows of a group); `B` is `[G, N, K]`; `groups` is an `i32` tensor
      `[G]`, at run time the valid rows of each group (from 0 to `M`): the
      rows from a group's count on are neither computed nor written in
      `D`, `[G, M, N]`. The launch does not depend on the counts.
    * `k_grouped` (the experts' weight gradient `dW_g = dY_g^T X_g`,
      DeepGEMM's K-grouped contiguous layout): `A` is `[M, K]` and `B` is
      `[N, K]`, both K-major, the K columns (tokens) of all groups one after
      the other: group `g` owns columns `[off_g, off_g + K_g)`, `off_g` the
      sum of the sizes before it; `groups` is an `i32` tensor `[G]`, at run
      time the sizes `K_g`, each a multiple of 128 (0 allowed); `D` is
      `[G, M, N]`, `D[g] = A[:, off_g:off_g+K_g] B[:, off_g:off_g+K_g]^T`
      scaled, zeros for an empty group. `K` (all tokens) may be dynamic.

    Scales (`a_granularity`, `b_granularity`, as for `fp8.scaled_matmul`,
    per group on B's side): per-tensor `A: []`, `B: [G]`; per-row
    `A: [M, 1]`, `B: [G, N, 1]`; DeepSeek blockwise (`tile 1x128` and
    `tile 128x128`) `A: [M, ceil(K/128)]`, `B: [G, ceil(N/128),
    ceil(K/128)]`; MXFP8 (`mx 1x32` on both, f8E8M0FNU scales, sm_100a
    only) `A: [M, ceil(K/32)]`, `B: [G, N, ceil(K/32)]`. Blockwise scales
    are f32 (sm_90a) or f8E8M0FNU (powers of two: sm_100a, whose
    block-scaled MMA runs them). With `m_masked` A's per-row and 1x128
    scales have G outermost (`[G, M, 1]`, `[G, M, ceil(K/128)]`). With
    `k_grouped` (sm_90a only) both sides' per-tensor and per-row scales are
    one set per group (`A: [G]` or `[G, M, 1]`, `B: [G]` or `[G, N, 1]`),
    and the blockwise recipe is `tile 1x128` on both sides (the wgrad
    GEMM's), `A: [M, K/128]`, `B: [N, K/128]` over all groups' columns (a
    128-column block lies in one group). Operands are K-major (TN); the op
    works on tensors.

    FP8 result (`f8E4M3FN` or `f8E5M2`): as for `fp8.scaled_matmul`, D
    quantized with `result_recipe` at `result_granularity`, its `scale_inv`
    the second result and `result_scale` the given quantization scale, with
    the same rules. Per tensor the scale is one for the whole result (all
    groups: the next grouped GEMM's per-tensor A scale is one scalar);
    `tile 1x128` blocks along N give `scale_inv` `[M, ceil(N/128)]`
    (`m_masked`: `[G, M, ceil(N/128)]`), the next grouped GEMM's A scales.
    Rows the layout does not write get neither bytes nor scales. The
    kernels quantize per tensor with a given scale and in 1x128 blocks; the
    other recipes are rejected by the lowering (their scales reduce over
    rows the kernel does not write).

    ```mlir
    %d = fp8.grouped_scaled_matmul %a, %b, %sa, %sb, %groups
        {layout = #fp8.grouped_layout<m_contiguous>,
         a_granularity = #fp8.granularity<tile 1x128>,
         b_granularity = #fp8.granularity<tile 128x128>,
         accumulation = #fp8.accumulation<promoted(128)>}
        : (tensor<?x7168xf8E4M3FN>, tensor<8x4096x7168xf8E4M3FN>,
           tensor<?x56xf32>, tensor<8x32x56xf32>, tensor<?xi32>)
        -> tensor<?x4096xbf16>
    ```
  }];
  let arguments = (ins FP8_Float8Tensor:$a,
                       FP8_Float8Tensor:$b,
                       FP8_ScaleTensor:$a_scale_inv,
                       FP8_ScaleTensor:$b_scale_inv,
                       FP8_Ranked<1DTensorOf<[I32]>>:$groups,
                       Optional<FP8_F32Scalar>:$result_scale,
                       FP8_GroupedLayoutAttr:$layout,
                       FP8_GranularityAttr:$a_granularity,
                       FP8_GranularityAttr:$b_granularity,
                       FP8_AccumulationAttr:$accumulation,
                       OptionalAttr<FP8_GemmConfigAttr>:$config,
                       OptionalAttr<FP8_RecipeAttr>:$result_recipe,
                       OptionalAttr<FP8_GranularityAttr>:$result_granularity);
  let results = (outs FP8_Ranked<RankedTensorOf<[BF16, F16, F32, F8E4M3FN,
                                                 F8E5M2]>>:$result,
                      Optional<FP8_ScaleTensor>:$result_scale_inv);
  let assemblyFormat = [{
    $a `,` $b `,` $a_scale_inv `,` $b_scale_inv `,` $groups
    (`result_scale` $result_scale^)? attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Extents of the grouped GEMM (ShapedType::kDynamic when unknown): the
    /// rows of A (all groups; m_masked: of each group), the groups, and
    /// each group's N and K (k_grouped: the K of all groups).
    int64_t getM();
    int64_t getNumGroups();
    int64_t getN();
    int64_t getK();
    /// D is quantized to FP8 (result_recipe, result_granularity).
    bool hasFP8Result() {
      auto type = cast<FloatType>(getResult().getType().getElementType());
      return type.getWidth() == 8;
    }
  }];
}

//===----------------------------------------------------------------------===//
// fp8.linear and fp8.linear_backward
//===----------------------------------------------------------------------===//

def FP8_LinearOp : FP8_Op<"linear", [Pure, AttrSizedOperandSegments]> {
  let summary = "forward of an FP8 linear layer: Y = X W^T (+ bias)";
  let description = [{
    The forward GEMM ("fprop") of a linear layer whose inputs are quantized
    with `recipe`: `X` is `[M, K]` (tokens x input features), `W` is
    `[N, K]` (output x input features, as `torch.nn.Linear` stores it), the
    optional `bias` is `[N]` (bf16 or f32) and the result `[M, N]` is bf16,
    f16 or f32. The quantizations, their directions and layouts, and the GEMM
    are chosen for a chip by `fp8-expand-linear`, which also shares the
    quantizations of `X` and `W` with an `fp8.linear_backward` of the same
    operands.

    Under `#fp8.delayed` the previous steps' scales of `X` and `W` are
    operands (`scales(...)`) and the op returns this step's amaxes of both,
    to record into their histories with `fp8.update_amax_history`. Under
    `#fp8.current` the scales are optional: given, they are used as they are
    (`fp8-shard-linear` passes the whole tensors' scales of split tensors,
    computed from amaxes max-all-reduced over the devices). Other recipes
    compute their scales from the data.

    ```mlir
    %y = fp8.linear %x, %w bias %b {recipe = #fp8.blockwise<>}
        : (tensor<?x7168xbf16>, tensor<2112x7168xbf16>, tensor<2112xf32>)
        -> tensor<?x2112xbf16>
    %y, %ax, %aw = fp8.linear %x, %w scales(%sx, %sw)
        {recipe = #fp8.delayed<history = 16>}
        : (tensor<4096x1024xbf16>, tensor<512x1024xbf16>, tensor<f32>, tensor<f32>)
        -> (tensor<4096x512xbf16>, tensor<f32>, tensor<f32>)
    ```
  }];
  let arguments = (ins 2DTensorOf<[BF16, F16, F32]>:$input,
                       2DTensorOf<[BF16, F16, F32]>:$weight,
                       Optional<1DTensorOf<[BF16, F32]>>:$bias,
                       Optional<FP8_F32Scalar>:$input_scale,
                       Optional<FP8_F32Scalar>:$weight_scale,
                       FP8_RecipeAttr:$recipe);
  // None, or this step's amaxes of the input and of the weight.
  let results = (outs 2DTensorOf<[BF16, F16, F32]>:$result,
                      Variadic<FP8_F32Scalar>:$amaxes);
  let assemblyFormat = [{
    $input `,` $weight (`bias` $bias^)?
    (`scales` `(` $input_scale^ `,` $weight_scale `)`)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// This step's amax of the input / the weight (delayed scaling), or null.
    Value getInputAmax() { return getAmaxes().empty() ? Value() : getAmaxes()[0]; }
    Value getWeightAmax() { return getAmaxes().empty() ? Value() : getAmaxes()[1]; }
  }];
}

def FP8_LinearBackwardOp : FP8_Op<"linear_backward",
    [Pure, AttrSizedOperandSegments]> {
  let summary = "backward of an FP8 linear layer: dX = dY W, dW = dY^T X";
  let description = [{
    The two backward GEMMs of the linear layer `Y = X W^T` whose forward is
    `fp8.linear %input, %weight`: "dgrad" `dX[M, K] = dY[M, N] W[N, K]`
    (bf16, f16 or f32) and "wgrad" `dW[N, K] = dY^T X` (bf16, f16 or f32:
    usually the weight's type, as `torch.nn.Linear` returns it), or, in
    f32, accumulated into `accumulate_into` (the f32 main gradient of the
    weight, as Megatron's gradient accumulation fusion does). `grad_output`
    (`dY`) is quantized with the recipe's gradient format (E5M2 under a
    `hybrid` per-tensor recipe).

    The op names the high-precision `input` and `weight`, not FP8 copies:
    `fp8-expand-linear` reuses the quantizations that the matching
    `fp8.linear` makes (one read of each tensor gives every direction the
    three GEMMs need), so after expansion the backward reads only FP8 data
    and the high-precision `X` need not be kept for it.

    Under `#fp8.delayed` the scales of `X`, `W` and `dY` are operands, and
    the optional result is this step's amax of `dY`. Under `#fp8.current`
    the three scales are optional, as for `fp8.linear`.

    ```mlir
    %dx, %dw = fp8.linear_backward %x, %w, %dy accumulate_into %main_grad
        {recipe = #fp8.mxfp8<>}
        : (tensor<4096x1024xbf16>, tensor<512x1024xbf16>, tensor<4096x512xbf16>,
           tensor<512x1024xf32>) -> (tensor<4096x1024xbf16>, tensor<512x1024xf32>)
    ```
  }];
  let arguments = (ins 2DTensorOf<[BF16, F16, F32]>:$input,
                       2DTensorOf<[BF16, F16, F32]>:$weight,
                       2DTensorOf<[BF16, F16, F32]>:$grad_output,
                       Optional<2DTensorOf<[F32]>>:$accumulate_into,
                       Optional<FP8_F32Scalar>:$input_scale,
                       Optional<FP8_F32Scalar>:$weight_scale,
                       Optional<FP8_F32Scalar>:$grad_output_scale,
                       FP8_RecipeAttr:$recipe);
  let results = (outs 2DTensorOf<[BF16, F16, F32]>:$grad_input,
                      2DTensorOf<[BF16, F16, F32]>:$grad_weight,
                      Optional<FP8_F32Scalar>:$grad_output_amax);
  let assemblyFormat = [{
    $input `,` $weight `,` $grad_output (`accumulate_into` $accumulate_into^)?
    (`scales` `(` $input_scale^ `,` $weight_scale `,` $grad_output_scale `)`)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// fp8.grouped_linear and fp8.grouped_linear_backward
//===----------------------------------------------------------------------===//

def FP8_GroupedLinearOp : FP8_Op<"grouped_linear", [Pure]> {
  let summary = "forward of an FP8 expert (grouped) linear layer: Y_g = X_g W_g^T";
  let description = [{
    The forward GEMM of a mixture-of-experts linear layer: one weight per
    expert, `W` `[G, N, K]`, and the tokens `X` `[M, K]` sorted by expert
    in the m_contiguous layout of `fp8.grouped_scaled_matmul` (each
    expert's rows start at a multiple of 128; pad every expert's rows to a
    multiple of 128 with zero rows). `group_index` (`i32 [M]`) is the
    expert of each row, `-1` for padding rows. The result `[M, N]` is bf16,
    f16 or f32; rows of whole padding blocks are not written.

    `fp8-expand-linear` turns it into the quantizations of `recipe` and one
    `fp8.grouped_scaled_matmul`, sharing the quantizations of `X` and `W`
    with an `fp8.grouped_linear_backward` of the same operands (see
    docs/grouped-linear.md).

    ```mlir
    %y = fp8.grouped_linear %x, %w groups %group_index
        {recipe = #fp8.blockwise<>}
        : (tensor<8192x7168xbf16>, tensor<8x4096x7168xbf16>, tensor<8192xi32>)
        -> tensor<8192x4096xbf16>
    ```
  }];
  let arguments = (ins 2DTensorOf<[BF16, F16, F32]>:$input,
                       3DTensorOf<[BF16, F16, F32]>:$weight,
                       1DTensorOf<[I32]>:$group_index,
                       FP8_RecipeAttr:$recipe);
  let results = (outs 2DTensorOf<[BF16, F16, F32]>:$result);
  let assemblyFormat = [{
    $input `,` $weight `groups` $group_index attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def FP8_GroupedLinearBackwardOp : FP8_Op<"grouped_linear_backward", [Pure]> {
  let summary = "backward of an FP8 expert (grouped) linear layer";
  let description = [{
    The two backward GEMMs of the expert layer `fp8.grouped_linear %input,
    %weight groups %group_index`: "dgrad" `dX[rows of g] = dY[rows of g]
    W[g]` (`[M, K]`, bf16, f16 or f32; the rows of whole padding blocks are
    not written) and "wgrad" `dW[g] = dY[rows of g]^T X[rows of g]` (`[G,
    N, K]`, f32).

    The experts' rows are given twice, in the two forms the grouped GEMMs
    read: `group_index` (`i32 [M]`, the expert of each row, `-1` for
    padding, as for `fp8.grouped_linear`) for dgrad, and `group_sizes`
    (`i32 [G]`) for wgrad: the rows of each expert including its padding,
    each a multiple of 128, the experts back to back from row 0 (rows past
    their sum are padding). wgrad sums over the padding rows too, so
    padding rows of `X` must be zero.

    ```mlir
    %dx, %dw = fp8.grouped_linear_backward %x, %w, %dy
        groups(%group_index, %group_sizes) {recipe = #fp8.blockwise<>}
        : (tensor<8192x7168xbf16>, tensor<8x4096x7168xbf16>,
           tensor<8192x4096xbf16>, tensor<8192xi32>, tensor<8xi32>)
        -> (tensor<8192x7168xbf16>, tensor<8x4096x7168xf32>)
    ```
  }];
  let arguments = (ins 2DTensorOf<[BF16, F16, F32]>:$input,
                       3DTensorOf<[BF16, F16, F32]>:$weight,
                       2DTensorOf<[BF16, F16, F32]>:$grad_output,
                       1DTensorOf<[I32]>:$group_index,
                       1DTensorOf<[I32]>:$group_sizes,
                       FP8_RecipeAttr:$recipe);
  let results = (outs 2DTensorOf<[BF16, F16, F32]>:$grad_input,
                      3DTensorOf<[F32]>:$grad_weight);
  let assemblyFormat = [{
    $input `,` $weight `,` $grad_output
    `groups` `(` $group_index `,` $group_sizes `)` attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// fp8.launch
//===----------------------------------------------------------------------===//

def FP8_LaunchOp : FP8_Op<"launch",
    [Pure, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "a kernel launch on tensors, in destination-passing style";
  let description = [{
    Calls the host launcher `launcher` of a kernel on tensors. The launcher
    is a bodiless function with no results whose arguments are the kernel's
    operands in order, as identity-layout memrefs of the op's operand types
    (`@NAME_launch_into`, tagged `fp8.kernel`). `outputs` lists, in order,
    the operands the kernel writes (their launcher arguments carry
    `bufferization.access = "write"` or `"read-write"`, the others
    `"read"`): the op returns their new values, in that order. An output's
    operand is its initial value, which the kernel may read: `tensor.empty`
    for a pure output, a zero-filled tensor for an amax the kernel
    max-accumulates into, the previous history for an amax history updated
    in place.

    One-shot bufferization turns the op into a `func.call` of the launcher
    on the operands' buffers, each output written in place where the
    analysis allows it (so a result aliases its output operand's buffer).
    `fp8-lower-quantize` creates these ops for the quantization ops.

    ```mlir
    %zero = linalg.fill ins(%c0 : f32) outs(%e : tensor<f32>) -> tensor<f32>
    %amax = fp8.launch @fp8_amax_bf16_r4096_c4096_launch_into(%x, %zero)
        outputs [1] : (tensor<4096x4096xbf16>, tensor<f32>) -> tensor<f32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$launcher,
                       Variadic<AnyRankedTensor>:$args,
                       DenseI64ArrayAttr:$outputs);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = [{
    $launcher `(` $args `)` `outputs` $outputs attr-dict `:`
    functional-type($args, $results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The position in `outputs` of operand `index`, or -1 if the kernel
    /// only reads it.
    int64_t getOutputPosition(unsigned index);
  }];
}

#endif // FP8_DIALECT_FP8_IR_FP8OPS_TD
