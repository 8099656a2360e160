//===- Passes.td - FP8 dialect passes ----------------------*- tablegen -*-===//

#ifndef FP8_DIALECT_FP8_TRANSFORMS_PASSES_TD
#define FP8_DIALECT_FP8_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def FP8AttachTarget : Pass<"fp8-attach-target", "ModuleOp"> {
  let summary = "Record the GPU the module is compiled for as its fp8.target";
  let description = [{
    Validates `chip` against the chips of `FP8/Target/Chip.h` and sets the
    module's discardable attribute `fp8.target` to the chip with its
    hardware limits:

    ```mlir
    module attributes {fp8.target = #fp8.target<chip = "sm_90a", sm_count = 132, max_shared_memory_per_block = 232448, ptx_features = "+ptx80">}
    ```

    `sm-count` replaces the chip's SM count (132 on sm_90a, the H100/H200
    SXM parts; 114 for an H100 PCIe). Every pass that depends on the target
    (fp8-expand-linear, fp8-select-layouts, fp8-verify-target,
    fp8-blockwise-to-mx, fp8-lower-scaled-matmul, fp8-lower-quantize,
    fp8-verify-target-support, fp8-attach-nvvm-target) reads it from the
    module and reports its absence; `fp8-to-ptx` and
    `fp8-gpu-module-to-ptx` run this pass first.

    A module that already has an `fp8.target` keeps it: without `chip` the
    pass only checks that there is one, with the same `chip` it changes
    nothing. Errors: an unknown chip (the supported ones are listed), a
    `chip` or `sm-count` different from the module's target (a module is
    compiled for one GPU), no `chip` and no target on the module.

    Example: `fp8-opt --fp8-attach-target=chip=sm_100a model.mlir`
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"\"",
           "target GPU (sm_90a or sm_100a); empty: the module's fp8.target">,
    Option<"smCount", "sm-count", "int64_t", /*default=*/"0",
           "SMs of the GPU (default: the chip's, 132 on sm_90a, 148 on "
           "sm_100a)">,
  ];
  let dependentDialects = ["::mlir::fp8::FP8Dialect"];
}

def FP8VerifyTarget : Pass<"fp8-verify-target"> {
  let summary = "Reject fp8 ops that the module's target GPU cannot run";
  let description = [{
    Checks every fp8 op against the capabilities of the module's
    `fp8.target` chip (run `fp8-attach-target` first) and reports, as a
    diagnostic on the op, each combination the target lowering cannot
    handle, before any code generation (LLVM's backend errors abort the
    process, so they must never be reached):

    * MXFP8 (`mx 1x32`) scaled matmuls and linear layers on a chip without
      block-scaled MMA (sm_90a);
    * MN-major FP8 GEMM operands on a chip whose MMA reads FP8 K-major only
      (sm_90a's wgmma): quantize with a transposed columnwise output instead;
    * what the chip's kernels do not take (the kernel rows of
      docs/contract.md), checked with the lowerings' own checks without
      building IR: GEMM shapes, alignments, scale tiles, accumulation,
      32-bit index ranges and `#fp8.gemm_config` fit; quantization,
      dequantization and amax shapes, alignments and tiles; the shapes and
      recipe of a linear layer in its own terms (token count M, features N
      and K).

    The pass changes nothing; it fails when it reports an error (a module
    without a target included).

    Example:
    `fp8-opt --fp8-attach-target=chip=sm_90a --fp8-verify-target model.mlir`
  }];
}

def FP8ExpandLinear : Pass<"fp8-expand-linear"> {
  let summary = "Expand FP8 linear layers into quantizations and GEMMs per chip";
  let description = [{
    Rewrites `fp8.linear` (fprop) and `fp8.linear_backward` (dgrad, wgrad)
    into `fp8.quantize` ops and `fp8.scaled_matmul`s whose operand
    directions, layouts and scale granularities are the ones the recipe
    prescribes on the module's `fp8.target` chip (seed 000's flows). With
    X `[M, K]`, W `[N, K]`, dY `[M, N]`:

    | GEMM | D | sm_90a (TN only) | sm_100a |
    |---|---|---|---|
    | fprop | `Y = X W^T` | A = X rowwise, B = W rowwise | the same (TN) |
    | dgrad | `dX = dY W` | A = dY rowwise, B = W columnwise transposed `[K, N]` | B = W stored `[N, K]`, MN-major (NN) |
    | wgrad | `dW = dY^T X` | A = dY columnwise transposed `[N, M]`, B = X columnwise transposed `[K, M]` | A = dY, B = X stored as they are, MN-major (NT) |

    A tensor's rowwise and columnwise outputs come from one `fp8.quantize`
    (one read: cast + cast_transpose on sm_90a). On sm_100a an MN-major
    operand reuses the rowwise quantization where the scales do not depend
    on the direction (per-tensor scaling, square 2-D tiles such as the
    128x128 weight tiles: one FP8 copy, the tile scales transposed); with
    1-D blocks (1x128, MXFP8 1x32) the columnwise quantization is different
    data, so the tensor is quantized in both directions, untransposed.

    Recipes: per-tensor (`#fp8.delayed`, `#fp8.current`; E5M2 gradients
    under the `hybrid` format), blockwise (`act` tiles for X and dY,
    `weight` tiles for W), MXFP8 (sm_100a only: sm_90a has no block-scaled
    MMA, an error). A tensor used by several GEMMs (W in fprop and dgrad, X
    in fprop and wgrad, dY in dgrad and wgrad) is quantized once per scale
    (the same SSA input, recipe and, for delayed scaling, scale operand),
    when its users are in one block. The backward then reads only FP8 data:
    for X it keeps the columnwise copy (sm_90a) or the quantization wgrad
    reads (sm_100a), one byte per element instead of the two of bf16.

    The GEMMs accumulate as the recipe says; wgrad writes f32 and
    accumulates into `accumulate_into` when given; the fprop bias is the
    scaled_matmul's bias.

    In a function marked `fp8.split_backward` (a training step that
    `fp8-split-training-step` outlines into forward and backward), the pass
    also marks each output gradient of an `fp8.linear_backward`, which must
    be a function argument (an error otherwise), with `fp8.grad_output`, and
    names each quantization after the layer tensor it quantizes
    (`fp8.name = "x"`, `"w"` or `"dy"`).

    The expert layers `fp8.grouped_linear` / `fp8.grouped_linear_backward`
    (W `[G, N, K]`, the tokens sorted by expert in the m_contiguous layout)
    expand the same way into `fp8.grouped_scaled_matmul`s, for the
    blockwise recipe on sm_90a (other recipes and chips are errors naming
    them): fprop and dgrad m_contiguous by `group_index` (B = W rowwise, and
    each expert's transpose `[G, K, N]`: the transposed columnwise output of
    W's quantization as a batch of matrices), wgrad k_grouped by
    `group_sizes` (A = dY^T, B = X^T, 1x128 blocks along the tokens). N and
    K must be multiples of 128 (the experts' 128x128 weight tiles); see
    docs/grouped-linear.md.

    Example:
    `fp8-opt --fp8-attach-target=chip=sm_90a --fp8-expand-linear layer.mlir`
  }];
  let dependentDialects = ["::mlir::fp8::FP8Dialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def FP8SplitTrainingStep : Pass<"fp8-split-training-step", "ModuleOp"> {
  let summary = "Outline a training step into a forward and a backward function";
  let description = [{
    PyTorch's autograd runs a layer's forward and backward at different
    times. A function marked `fp8.split_backward` (a training step:
    `fp8.linear` and `fp8.linear_backward` of the same tensors, after
    `fp8-expand-linear` and the passes that choose the quantizations'
    outputs and scale forms for both phases together) is replaced by two
    public functions:

    * `@NAME_forward`: every op that does not depend on an output gradient.
      It returns the original results it computes, then every value the
      backward reads from it: the FP8 tensors and scales the backward GEMMs
      take (X's columnwise quantization for wgrad, W's for dgrad on sm_90a;
      the copies sm_100a's NN/NT GEMMs read), quantized once, one byte per
      element.
    * `@NAME_backward`: every op that depends on an output gradient (an
      argument marked `fp8.grad_output`, as `fp8-expand-linear` marks those
      of `fp8.linear_backward`; other arguments may be marked by hand),
      taking the arguments it reads and the saved values, and returning the
      original results it computes.

    Ops with no operands and no effects (constants) are recreated in each
    function that uses them. Delayed scaling splits the same way: the
    forward takes X's and W's scales and returns (or records) their amaxes,
    the backward dY's. The kernels and launches of the two functions are
    those of the fused one, in the same order.

    Every argument and result gets an `fp8.name` (kept if it has one): the
    original ones `argI` / `resultI` by their position in the fused
    function, the saved ones after what they hold,
    `<tensor>_<output>` with tensor `x`, `w` or `dy` (`x_1`, ... for more
    layers) and output `rowwise`, `rowwise_scale_inv`, `columnwise`,
    `columnwise_scale_inv` or `amax` (`savedI` for other values). The
    runtime and Python bind them by these names.

    A marked function with no op that depends on an output gradient, with
    unexpanded linear layers, or whose split names are taken, is an error.
    `fp8-to-ptx` runs the pass after `fp8-blockwise-to-mx`.

    Example: `fp8-opt --fp8-expand-linear=chip=sm_90a
    --fp8-split-training-step step.mlir`
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def FP8BlockwiseToMX : Pass<"fp8-blockwise-to-mx"> {
  let summary = "Run power-of-two blockwise GEMMs as MXFP8 block-scaled GEMMs";
  let description = [{
    Rewrites each `fp8.scaled_matmul` on tensors whose A and B scales are
    blockwise tiles (`tile 1xKb`, `tile RxKb`, Kb a multiple of 32) holding
    powers of two (`f8E8M0FNU` scales, or f32 under
    `#fp8.blockwise<scales = pow2>`) into the MXFP8 form: `mx 1x32`
    granularities with `f8E8M0FNU` scales `[rows, ceil(K/32)]`. The FP8 data
    are unchanged; each tile's scale is repeated over the 32-element blocks
    of its K extent and, for an R-row tile, over its R rows. A power-of-two
    f32's UE8M0 code is its exponent field.

    Where the scales come from an `fp8.quantize` of the same function whose
    scales only such GEMMs read, the quantization produces them in that
    form itself (`scale_granularity = #fp8.granularity<mx 1x32>`), so its
    kernel writes the GEMM's UE8M0 atoms and nothing is left to convert. A
    GEMM that reads a square tile's scales through the `linalg.transpose`
    of `fp8-expand-linear` (the weight in dgrad on sm_100a, MN-major from
    its rowwise data) reads the quantization's untransposed columnwise
    output instead, added for it: the same bytes, with the scales of the
    transposed tiles. Other scales (e.g. function arguments) are converted
    by an `fp8.scales_to_mx`, which `fp8-lower-quantize` makes a kernel
    writing the MX atoms (for multi-row tiles the operand's rows must then
    be static). The recipe's scales
    are normal f32 (>= 2^-126) unless `amax_clamp = 0` meets a tile amax
    below 2^-117, which UE8M0 cannot hold exactly.

    This is how Transformer Engine runs the blockwise recipe on Blackwell
    (seed 000, 3.2): on a module whose `fp8.target` chip has a block-scaled
    MMA (sm_100a) the GEMM becomes the MXFP8 kernel; on any other chip
    (sm_90a) the pass changes nothing. GEMMs with f32 blockwise scales that
    may not be powers of two are left alone (the sm_100a lowering reports
    them).

    Example:
    `fp8-opt --fp8-attach-target=chip=sm_100a --fp8-blockwise-to-mx model.mlir`
  }];
  let dependentDialects = ["::mlir::fp8::FP8Dialect"];
}

def FP8SelectLayouts : Pass<"fp8-select-layouts"> {
  let summary = "Make every scaled_matmul's operand majors legal for the chip";
  let description = [{
    Rewrites the producers of `fp8.scaled_matmul` operands so that each
    operand is stored in a major the MMA of the module's `fp8.target` chip
    reads, at the cheapest
    cost: the direction of the producing `fp8.quantize`'s output is flipped;
    no separate FP8 transpose is ever added (it would be an extra pass over
    memory that the quantize's one read avoids).

    On sm_90a (wgmma reads FP8 K-major only) an MN-major operand becomes
    K-major when it is

    * the `columnwise` output of an `fp8.quantize` with
      `columnwise_layout = untransposed`: the layout becomes `transposed`
      (the same values, stored `[C, R]`), for every user of that output;
    * the `rowwise` output of a per-tensor `fp8.quantize`: the op produces a
      transposed `columnwise` output instead (per-tensor scales do not
      depend on the direction, so the data and scale are bit-identical); the
      `rowwise` output is kept only if something else uses it.

    Any other MN-major operand on sm_90a, and MXFP8 GEMMs on a chip without
    block-scaled MMA, are reported as errors (the pass does not fall back to
    dequantize + a bf16 GEMM: a silent loss of the FP8 speed-up is not what
    a user asking for FP8 wants). sm_100a reads K- and MN-major operands
    (TN, NN, NT), so nothing changes there.

    Example:
    `fp8-opt --fp8-attach-target=chip=sm_90a --fp8-select-layouts model.mlir`
  }];
  let dependentDialects = ["::mlir::fp8::FP8Dialect"];
}

def FP8SetGemmDefaults : Pass<"fp8-set-gemm-defaults"> {
  let summary = "Give every fp8.scaled_matmul a recipe and kernel configuration";
  let description = [{
    Sets `recipe` and `config` on each `fp8.scaled_matmul` that has none,
    from the pass options: a compiler's way of choosing a default recipe
    and of overriding the tile heuristic for a whole module (what
    `fp8-to-ptx{default-recipe=... gemm-config=...}` and the C++, C and
    Python compile APIs do). An attribute already on the op wins. Each
    option is the text of an attribute: `recipe` an fp8 recipe
    (`#fp8.blockwise<>`, `#fp8.current<format = e4m3>`, ...), `config` a
    `#fp8.gemm_config`. Text that does not parse as such an attribute is
    an error; a recipe inconsistent with an op's operands fails the op's
    verifier. Empty options change nothing.

    Example:
    `fp8-opt --fp8-set-gemm-defaults='config=#fp8.gemm_config<tile=128x128x128>'`
  }];
  let options = [
    Option<"recipe", "recipe", "std::string", /*default=*/"\"\"",
           "recipe attribute for scaled matmuls without one">,
    Option<"config", "config", "std::string", /*default=*/"\"\"",
           "#fp8.gemm_config for scaled matmuls without one">,
  ];
  let dependentDialects = ["::mlir::fp8::FP8Dialect"];
}

def FP8FuseScales : Pass<"fp8-fuse-scales"> {
  let summary = "Fold scale application into fp8.scaled_matmul";
  let description = [{
    Rewrites graphs that apply FP8 scales around a matmul into one
    `fp8.scaled_matmul`, whose kernels apply the scales in the MMA loop or
    the epilogue.

    Patterns:

    * Q/DQ form (as TensorRT and ONNX export it): `linalg.matmul` of two
      `fp8.dequantize` results becomes `fp8.scaled_matmul` of the FP8 data
      and scales: into a zero-filled tensor plainly, into any other f32
      tensor as `accumulate_into` (the wgrad form). The operand majors
      follow the matmul's indexing maps (`B` as `[K, N]`, the default, is
      MN-major; `[N, K]` is K-major); a dequantize scale that is not
      per-tensor must run along the stored rows of a K-major operand (its
      blocks then lie along K). Tile scales get `promoted(Kb)`
      accumulation; per-tensor/row scales get `promoted(128)`, or `fast`
      with `fast-accumulation` (the Q/DQ graph's matmul is exact in
      principle, so the precise mode is the default). The result is
      rounded once from f32 instead of after each bf16 dequantize, the
      usual meaning of a fused Q/DQ pair.

    * Bias: `arith.addf` of an f32 `fp8.scaled_matmul` result (with no
      bias or C yet) and a `linalg.broadcast` of an f32 `[N]` vector along
      M becomes the op's `bias` (the kernel adds it in f32 after the
      scales, as the graph does).
    * Output cast: `arith.truncf` (round to nearest even) of the single use
      of an f32 result to bf16/f16 becomes the op's result type (the
      kernel rounds its f32 value once, the same way).

    * Activation: a `linalg.generic` applying SiLU, GELU or tanh-GELU to
      each element of an f32 result (with no C), in one of the forms
      `x / (1 + exp(-x))`, `x * (1 / (1 + exp(-x)))`,
      `0.5 * x * (1 + erf(x * 0.70710678))` (or `x / 1.41421356`),
      `0.5 * x * (1 + tanh(0.79788456 * (x + 0.044715 * x*x*x)))`, with
      products in any order and association and an optional RNE `truncf`
      to bf16/f16 at the end, becomes the op's `activation` (and result
      type). That is what `convert-elementwise-to-linalg` and
      `linalg-fuse-elementwise-ops` make of elementwise tensor ops. The
      kernels evaluate the function in f32 after the scales and bias.

    * Output amax: `fp8.amax` of a scaled_matmul result (the amax current
      scaling of the next layer needs) becomes the op's second result,
      which the epilogue reduces as it stores D, so D is not read again.
      It is the amax of D as stored: bias, activation and cast fold in
      first, and once the amax is fused they no longer do.

    * Output quantization: `fp8.quantize` (rowwise output only) of the
      single use of an f32 result becomes the op's FP8 result and its
      `scale_inv` (with the quantize's `scale` as `result_scale`, its
      recipe and granularity as `result_recipe` / `result_granularity`, and
      its amax as the op's amax). The kernels quantize the same f32 values
      (per tensor with a given scale and in 1x128 blocks in the epilogue;
      other granularities in two phases). A bf16/f16 result is not folded:
      its quantization reads the rounded values, which the fused op skips.
      Nor is a quantization after a gated activation (SiLU(gate) * up of two
      column ranges of one GEMM): an epilogue would need each tile to hold
      both halves of its columns (gate and up weight rows interleaved per
      tile), which the layout of B does not say.

    * Scales after the matmul: `arith.mulf` of an f32 result (before any
      bias, activation or amax is fused) by a `linalg.broadcast` of a
      scalar, of a per-row `[M]` vector (along N) or of a per-column `[N]`
      vector (along M) folds into A's (scalar, rows) or B's (columns)
      tensor/row scales, computed before the op by a `linalg.generic`
      (tensor granularity becomes row for a vector).

    Graphs that do not match exactly (a non-zero bf16/f16 init, scales the kernels
    cannot apply, MXFP8 with an MN-major operand) are left alone.

    Example: `fp8-opt --fp8-fuse-scales model.mlir`
  }];
  let options = [
    Option<"fastAccumulation", "fast-accumulation", "bool",
           /*default=*/"false",
           "use fast accumulation for per-tensor/row scaled GEMMs">,
  ];
  let dependentDialects = ["::mlir::fp8::FP8Dialect"];
}

def FP8DecomposeQuantize : Pass<"fp8-decompose-quantize"> {
  let summary = "Split fused current-scaling quantization into amax, scale and cast, and row-granularity quantizations per output";
  let description = [{
    Rewrites a per-tensor current-scaling `fp8.quantize` that computes its own
    scale (no `scale` operand) into the two-pass form

    ```mlir
    %amax = fp8.amax %x
    %scale, %scale_inv = fp8.compute_scale %amax {recipe = ..., element_type = ...}
    %q, %s = fp8.quantize %x scale %scale {...}
    ```

    which targets without a grid-wide reduction lower as two kernels. The
    result is bit-identical: the fused op is defined as exactly this
    sequence.

    A row-granularity `fp8.quantize` (`#fp8.granularity<row>`) with both a
    rowwise and a columnwise output becomes two, one per output: each
    needs its own maxima over the whole tensor (of x's rows, of its
    columns), so each is its own kernel.
  }];
  let dependentDialects = ["::mlir::fp8::FP8Dialect"];
}

def FP8ShardQuantize : Pass<"fp8-shard-quantize", "ModuleOp"> {
  let summary = "Quantize sharded tensors shard by shard and all-gather the FP8 data";
  let description = [{
    Rewrites each `fp8.quantize` whose input is annotated as split over a
    device grid (`shard.shard %x to %sharding annotate_for_users`, with a
    `shard.sharding` splitting one dimension into equal static shards) into
    the quantization of each device's shard followed by FP8 all-gathers,
    such that the gathered FP8 data and scales equal those of quantizing
    the whole tensor on one device, bit for bit (using FP8 communication or
    not gives the same FP8 tensors; docs/distributed.md):

    ```mlir
    %x_r = shard.all_slice %x on @tp grid_axes = [0] slice_axis = 0
    %a_r = fp8.amax %x_r                        // per-tensor current scaling:
    %a = shard.all_reduce %a_r on @tp grid_axes = [0] reduction = max
    %s, %s_inv = fp8.compute_scale %a {...}     // the whole tensor's scale
    %q_r, %qs = fp8.quantize %x_r scale %s {...}
    %q = shard.all_gather %q_r on @tp grid_axes = [0] gather_axis = 0
    ```

    * Per-tensor current scaling without a `scale` operand: the amax of the
      shard is max-all-reduced over the grid axes before the scale is
      computed (the decomposed form of `fp8-decompose-quantize`).
    * A `scale` operand (delayed scaling, a given current scale): each shard
      is quantized with it; the `amax` result, for the history, is the
      max-all-reduced amax.
    * Row, tile and MX granularities: each block's scale comes from its own
      amax, so a shard whose boundaries lie on block boundaries quantizes
      alone: the data and the block scales are all-gathered. A block cut by
      a shard boundary (a `128x128` weight tile when the shards are not a
      multiple of 128 rows, the columnwise `1x128` blocks of a sequence
      shard of 64 tokens, a row block of a tensor split along its columns)
      is an error: its amax would need a max all-reduce before its scale,
      which `fp8.quantize` does not take. The runtime's sharded quantization
      (fp8mlir.distributed) reduces the whole block-amax grid instead and
      keeps every split exact.

    The gathers use the grid axes of the sharding; the columnwise output
    stored transposed is gathered along its other dimension. Tensor
    parallelism with sequence parallelism annotates a layer's input `X`
    along its tokens (dimension 0): the FP8 all-gather before fprop, with
    the columnwise shard gathered for wgrad. FP8 primary weights (a ZeRO
    shard of a weight along its rows) annotate `W`. Where the grid is given
    and the shards are equal, upstream `shard` ops carry the collectives;
    uneven shards, explicit `sharded_dims_offsets`, halos and dynamic
    extents are errors (the upstream all-gather concatenates equal slices).

    Example: `fp8-opt --fp8-shard-quantize --fp8-expand-linear=chip=sm_90a
    step.mlir`, or after `fp8-expand-linear`.
  }];
  let dependentDialects = ["::mlir::fp8::FP8Dialect",
                           "::mlir::shard::ShardDialect"];
}

def FP8ShardLinear : Pass<"fp8-shard-linear", "ModuleOp"> {
  let summary = "Rewrite FP8 linear layers into their tensor- or data-parallel form";
  let description = [{
    Rewrites the `fp8.linear` / `fp8.linear_backward` ops of a
    single-device training step into the program one device of a group
    runs, with the collectives as upstream `shard` ops on the grid axis
    `grid-axis` of `shard.grid @grid` (created with `world-size` devices
    when the module has none). Every FP8 tensor a GEMM reads is the one the
    single-device step quantizes, bit for bit (the rule of seed 000, 4.1
    and 5; docs/distributed.md). With X `[M, K]`, W `[N, K]`, dY `[M, N]`
    and T devices:

    | `mode` | X | W | dY | Y | dX | dW |
    |---|---|---|---|---|---|---|
    | `column` | tokens split, FP8 all-gather | rows (N) | columns (N) | `[M, N/T]` | f32 partial, reduce-scatter over tokens | `[N/T, K]` |
    | `row` | columns (K) | columns (K) | tokens split, FP8 all-gather | f32 partial, reduce-scatter over tokens | `[M, K/T]` | `[N, K/T]` |
    | `dp` | whole | ZeRO-1 shard, FP8 all-gather | whole | whole | whole | reduce-scatter (sum) `[N/T, K]` |

    A tensor that is all-gathered is annotated
    (`shard.shard ... annotate_for_users`) for `fp8-shard-quantize`, which
    after `fp8-expand-linear` quantizes the device's shard and all-gathers
    the FP8 data and block scales (the columnwise copy right before the
    GEMM that reads it, at the start of the backward). A tensor used where
    it lies is the device's `shard.all_slice`. Per-tensor scales are the
    whole tensor's: under current scaling the pass computes each scale from
    the local amax max-all-reduced over the grid axis (`fp8.amax`,
    `shard.all_reduce`, `fp8.compute_scale`) and passes it to the layer;
    under delayed scaling the given scales are used and the amaxes recorded
    into the histories are max-all-reduced. Blockwise and MXFP8 shards are
    quantized alone, which is exact when no block crosses a shard boundary.

    Partial sums (row-parallel Y, column-parallel dX) are reduced in f32
    and rounded once to the layer's type (`f32-partials`, the default;
    otherwise in the layer's type, half the bytes and one rounding per
    partial), over the tokens with `shard.reduce_scatter` under sequence
    parallelism (`sequence-parallel`, the default) or with
    `shard.all_reduce` without it (X, or dY, then whole on every device).
    A row-parallel bias is added once, after the reduction.

    Function arguments keep their shapes: a device reads only the part of
    an argument its `shard.all_slice` (or the sharded quantization) names.
    Results become the device's part, and the function type follows.

    Errors, in the layer's terms: a split dimension that is dynamic or not
    a multiple of the devices; a blockwise or MXFP8 block cut by a shard
    boundary (a `128x128` weight tile when N/T or K/T is not a multiple of
    128, the `1x128` columnwise blocks of X or dY when the token shard is
    not, `1x32` blocks for MXFP8), naming the block, the shard size and the
    padding that keeps the rule; a ZeRO-1 shard that would cut W's rows; a
    layer result that another op than `func.return` reads (its shape
    changes); a grid that does not match the options.

    Example: `fp8-opt --fp8-shard-linear="mode=column world-size=2"
    --fp8-attach-target=chip=sm_90a --fp8-expand-linear --fp8-shard-quantize
    step.mlir`
  }];
  let options = [
    Option<"mode", "mode", "std::string", /*default=*/"\"column\"",
           "column (W split along N), row (W split along K) or dp (ZeRO-1 "
           "FP8 primary weights)">,
    Option<"grid", "grid", "std::string", /*default=*/"\"\"",
           "name of the shard.grid (default: tp, or dp for mode=dp)">,
    Option<"gridAxis", "grid-axis", "int64_t", /*default=*/"0",
           "axis of the grid that the layer is split over">,
    Option<"worldSize", "world-size", "int64_t", /*default=*/"0",
           "devices along the axis (0: the existing grid's)">,
    Option<"sequenceParallel", "sequence-parallel", "bool", /*default=*/"true",
           "split the tokens of X (column) or dY (row) and reduce-scatter "
           "partial sums over them">,
    Option<"f32Partials", "f32-partials", "bool", /*default=*/"true",
           "reduce partial sums in f32 and round once">,
  ];
  let dependentDialects = ["::mlir::fp8::FP8Dialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::shard::ShardDialect",
                           "::mlir::tensor::TensorDialect"];
}

#endif // FP8_DIALECT_FP8_TRANSFORMS_PASSES_TD
