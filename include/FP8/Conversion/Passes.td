//===- Passes.td - FP8 lowering passes ---------------------*- tablegen -*-===//

#ifndef FP8_CONVERSION_PASSES_TD
#define FP8_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def FP8LowerScaledMatmul : Pass<"fp8-lower-scaled-matmul", "ModuleOp"> {
  let summary = "Lower fp8.scaled_matmul to GPU kernels for the module's target chip";
  let description = [{
    Replaces each `fp8.scaled_matmul` (and `fp8.grouped_scaled_matmul`,
    whose kernel also takes the `group_index` operand after the scales) by
    a kernel in a `gpu.module` (one
    kernel per N, K, recipe and tile configuration; M is a run-time value)
    and a launch of it through the host launcher declaration
    `@NAME_launch_into` (tagged `fp8.kernel`; its arguments are the kernel's
    operands `a, b, a_scale_inv, b_scale_inv[, bias][, c], d[, amax]` as
    memrefs, with `bufferization.access` saying which it writes). On tensors
    the op becomes an `fp8.launch` in destination-passing style (D a new
    tensor, the amax a zero-filled one), which one-shot bufferization turns
    into a call on buffers; the memref form becomes that call directly. The
    kernel is built from upstream GPU,
    NVVM, SCF, arith and LLVM ops by the shared GEMM skeleton (persistent
    tile scheduler, TMA + mbarrier producer/consumer pipeline, epilogue) and
    the MMA emitter of the module's `fp8.target` chip (`wgmma` on sm_90a,
    `tcgen05.mma` on sm_100a); the tile heuristic plans with the target's
    `sm_count` and `max_shared_memory_per_block`. Run `fp8-attach-target`
    first: without a target the pass reports an error.

    Each kernel `gpu.func` carries:
    * `fp8.kernel_metadata`: a dictionary describing the launch (block and
      cluster dims, grid rule, dynamic shared memory, operands, parameters
      and the TMA tensor maps the host encodes), written out as JSON by
      `fp8-compile`;
    * `fp8.grid_constant_args`: indices of the parameters that are 128-byte
      `CUtensorMap`s passed by value (`fp8-finalize-kernel-abi` marks them
      `byval` + `nvvm.grid_constant` after `convert-gpu-to-nvvm`, which drops
      argument attributes).

    The kernel configuration comes from `#fp8.gemm_config` on the op when
    present, otherwise from the documented heuristic. Unsupported
    combinations (run `fp8-verify-target` first) are reported as errors.

    Example:
    `fp8-opt --fp8-attach-target=chip=sm_90a --fp8-lower-scaled-matmul model.mlir`
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::gpu::GPUDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::NVVM::NVVMDialect",
    "::mlir::scf::SCFDialect"
  ];
}

def FP8LowerQuantize : Pass<"fp8-lower-quantize", "ModuleOp"> {
  let summary = "Lower the quantization ops of the fp8 dialect to GPU kernels for the module's target chip";
  let description = [{
    Replaces each `fp8.amax`, `fp8.quantize`, `fp8.compute_scale`,
    `fp8.update_amax_history`, `fp8.dequantize` and `fp8.scales_to_mx` (on
    tensors) that a kernel takes by an `fp8.launch` of a host launcher
    declaration (`@NAME_launch_into`, tagged `fp8.kernel`, the kernel's
    operands in order as memrefs) of a kernel in `gpu.module @fp8_kernels`
    (one kernel per shape, dtypes, recipe and set of outputs; C is static, R
    static or a run-time value: the kernels of a `tensor<?xC>` take it as a
    trailing i32 `r` that the runtime binds from the input's shape). The
    launch is in destination-passing style: each output starts as a
    `tensor.empty` (its run-time extents R or ceil(R/block) of the input),
    an amax the kernel max-accumulates into as a zero-filled tensor
    (`linalg.fill`), an amax history updated in place as the history itself;
    one-shot bufferization turns it into a call of the launcher on buffers.

    * `fp8.amax`: grid-wide max |x| (NaN-propagating), one atomic max per
      CTA into a zeroed scalar;
    * per-tensor `fp8.quantize` with a scale: the cast (`cvt.rn.satfinite`),
      rowwise and/or columnwise from one read. When the scale is
      `fp8.compute_scale` of a `#fp8.current` amax, the kernel applies the
      rule to the amax itself (per-tensor current scaling = amax kernel +
      cast kernel). When the op's amax result feeds an
      `fp8.update_amax_history` (delayed scaling), the kernel records the
      amax into the history slot 0 in the same pass (otherwise into the
      zero-filled scalar of the amax result: name suffix `_amax`);
    * blockwise 1x128 / 128x128 and MXFP8 1x32 `fp8.quantize`: per-block
      amax, scale and cast in one kernel, with the scale layouts the GEMM
      kernels read (1x128: MN-major `[ceil(K/128), roundup(M, 4)]` f32;
      128x128: `[ceil(R/128), ceil(C/128)]` f32; MX: the 128x4 UE8M0 atom
      layout; on sm_100a the round-up UE8M0 scale comes from
      `cvt.rp.satfinite.ue8m0x2.f32`). Columnwise outputs are stored
      transposed (`[C, R]`: rows of R bytes, so R a multiple of 16, a
      diagnostic for a static R and a launch-time check of `r` by the
      runtime otherwise) or untransposed (`[R, C]`, MN-major GEMM
      operands), with the same scale layout. Power-of-two blockwise
      quantizations with `scale_granularity = mx 1x32` write their scales
      as UE8M0 codes in the MX atom layout instead;
    * the `fp8.compute_scale` and `fp8.update_amax_history` ops no cast
      absorbed: one-CTA kernels (current scale; delayed scale with the
      history's amax and the history rolled in place; slot 0 recorded in
      place);
    * `fp8.dequantize` (tensor, row, 1x128, 128x128 and MX 1x32 scales in
      the layouts above) to bf16, f16 or f32;
    * `fp8.scales_to_mx`: power-of-two blockwise scales (f32 or UE8M0, row
      major) written as MX scales in the 128x4 atom layout, one CTA per
      128 rows (`"kind": "scales_to_mx"`);
    * a 2-D tensor `arith.truncf` from f32 to bf16 or f16 (rounding to
      nearest even, C a multiple of 8): a conversion kernel
      (`"kind": "convert"`), what rounds f32 partial sums reduced across
      devices (fp8-shard-linear's `f32-partials`) to the layer's type.

    Each kernel carries `fp8.kernel_metadata` (`"kind"`: `quantize`, `amax`,
    `compute_scale`, `update_amax_history`, `dequantize`, `scales_to_mx` or
    `convert`) for fp8-compile. An op no kernel takes (a dynamic C, a columnwise
    row-granularity output or a per-tensor quantize without a scale before
    `fp8-decompose-quantize`, ...) is an error naming the op, the reason
    and what would work; `strict=false` leaves such ops as they are
    instead, for running the pass on its own. The kernels are built for the
    module's `fp8.target` chip (run `fp8-attach-target` first: without a
    target the pass reports an error).

    Example:
    `fp8-opt --fp8-attach-target=chip=sm_100a --fp8-lower-quantize model.mlir`
  }];
  let options = [
    Option<"strict", "strict", "bool", /*default=*/"true",
           "report quantization ops that no kernel takes as errors (false: "
           "leave them as they are)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::gpu::GPUDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::NVVM::NVVMDialect",
    "::mlir::scf::SCFDialect", "::mlir::func::FuncDialect",
    "::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect"
  ];
}

def FP8LowerCollectives : Pass<"fp8-lower-collectives", "ModuleOp"> {
  let summary = "Turn the collectives of the upstream shard dialect into host program steps";
  let description = [{
    Replaces each `shard.all_reduce`, `shard.all_gather`,
    `shard.reduce_scatter` and `shard.all_slice` on static tensors (what
    `fp8-shard-quantize` creates: the amax all-reduce, the FP8 all-gathers,
    the local slice of a replicated input) by an `fp8.launch` of a bodiless
    declaration `@fp8_<kind>_<grid>` tagged `fp8.collective` (`kind`,
    `grid`, `grid_axes`, `group_size`: the product of the grid's extents
    along the axes, `reduction`: `sum` or `max`), which takes the input and
    the output as memrefs. One-shot bufferization turns it into a call on
    buffers, which `fp8-build-host-program` writes as a collective step of
    module.json; the runtime runs it through the caller's collective
    backend (NCCL).

    NCCL's collectives take each device's piece as one contiguous run of
    the row-major whole. Along an inner dimension (some extent before the
    gathered, scattered or sliced dimension is not 1: the whole is
    `[rows, cols]` with rows the extents before it multiplied) the pieces
    are strided, and the collective gets strided copies, launches of
    declarations `@fp8_copy2d[_N]` of kind `copy2d` (`rows`,
    `row_elements`, `source_offset`, `source_pitch`, `target_offset`,
    `target_pitch` in elements; `slice_grid`, `slice_grid_axes`,
    `slice_group_size` for a slice, whose source offset advances by the
    device's rank times the row), written as `copy2d` steps:

    * `all_slice`: one strided copy of the device's column block;
    * `all_gather`: NCCL's all-gather into a contiguous
      `[size, rows, cols/size]` tensor, then one strided copy per piece
      into the whole;
    * `reduce_scatter`: one strided copy per piece into such a tensor,
      then NCCL's reduce-scatter.

    Errors name the op and the reason: dynamic shapes or grids, reductions
    other than sum and max or of FP8 values, an all-reduce that changes the
    element type, an empty tensor split along an inner dimension, and
    sharding annotations (`shard.shard`, `shard.sharding`) that
    `fp8-shard-quantize` left.

    Example:
    `fp8-opt --fp8-shard-quantize --fp8-lower-collectives model.mlir`
  }];
  let dependentDialects = [
    "::mlir::fp8::FP8Dialect", "::mlir::func::FuncDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

#endif // FP8_CONVERSION_PASSES_TD
