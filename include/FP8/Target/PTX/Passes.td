//===- Passes.td - PTX emission passes ---------------------*- tablegen -*-===//
//
// The passes that take the kernels produced by the fp8 lowerings (gpu.module
// of gpu.func with GPU/NVVM/SCF/arith/LLVM ops) to PTX. They are assembled,
// with upstream passes, into two pipelines declared in Passes.h:
//
// * `fp8-gpu-module-to-ptx{chip opt-level}`: already-lowered gpu.modules to
//   `gpu.binary` ops holding PTX text;
// * `fp8-to-ptx{chip opt-level}`: fp8-attach-target, the fp8 lowerings to
//   GPU kernels, then fp8-gpu-module-to-ptx.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_TARGET_PTX_PASSES_TD
#define FP8_TARGET_PTX_PASSES_TD

include "mlir/Pass/PassBase.td"

def FP8FinalizeKernelABI : Pass<"fp8-finalize-kernel-abi",
                                "::mlir::gpu::GPUModuleOp"> {
  let summary = "Pass the kernels' CUtensorMap parameters by value as grid constants";
  let description = [{
    TMA copies read their tensor map through a generic address that must
    point into the kernel parameter space (or global/constant memory). The
    fp8 kernels take each 128-byte `CUtensorMap` by value: the lowering
    declares the parameter as `!llvm.ptr` and lists its index in the
    function attribute `fp8.grid_constant_args`, because
    `convert-gpu-to-nvvm` drops the argument attributes of a `gpu.func`.

    This pass runs after `convert-gpu-to-nvvm`. For every `llvm.func` that is
    an `nvvm.kernel` and has `fp8.grid_constant_args`, it gives each listed
    argument the attributes

    ```mlir
    {llvm.byval = !llvm.array<128 x i8>, llvm.align = 64 : i64, nvvm.grid_constant}
    ```

    and removes `fp8.grid_constant_args`. The NVPTX backend then declares
    the parameter as `.param .align 64 .b8 NAME_param_I[128]` and takes its
    address with `cvta.param`, with no local copy.

    It reports an error (and changes nothing more) when a listed index is out
    of range or names an argument that is not an `!llvm.ptr` in the generic
    address space, when a non-kernel function carries the attribute, and
    when a `gpu.func` still carries it (the pass ran before
    `convert-gpu-to-nvvm`, which would drop the argument attributes).
  }];
}

def FP8AttachNVVMTarget : Pass<"fp8-attach-nvvm-target", "ModuleOp"> {
  let summary = "Attach the #nvvm.target of the module's fp8.target to its gpu.modules";
  let description = [{
    Adds to the `targets` of every `gpu.module` directly in the module the
    NVVM target of its `fp8.target`:

    ```mlir
    #nvvm.target<O = 3, chip = "sm_90a", features = "+ptx80">
    ```

    (chip and PTX features from `#fp8.target`, `O` from `opt-level`, the
    defaults of `nvvm-attach-target` otherwise), which
    `gpu-module-to-binary` compiles for. The chip is thus the one every
    lowering planned for; a module without an `fp8.target` is an error (run
    `fp8-attach-target` first). A target already in the list is not added
    twice.

    Example:
    `fp8-opt --fp8-attach-target=chip=sm_90a --fp8-attach-nvvm-target kernels.mlir`
  }];
  let options = [
    Option<"optLevel", "opt-level", "unsigned", /*default=*/"3",
           "LLVM optimization level of the NVPTX code generation (0 to 3)">,
  ];
  let dependentDialects = ["::mlir::NVVM::NVVMDialect"];
}

def FP8VerifyTargetSupport : Pass<"fp8-verify-target-support",
                                 "::mlir::gpu::GPUModuleOp"> {
  let summary = "Reject a GPU module its NVVM target cannot compile, before LLVM code generation";
  let description = [{
    The NVPTX backend reports an unsupported chip, PTX ISA version or
    instruction with `report_fatal_error`, which aborts the process. This
    pass checks everything the fp8 pipelines depend on first and turns each
    problem into a diagnostic:

    * the chip must be one of the chips of `FP8/Target/Chip.h` (the error
      lists them), and an `#nvvm.target`'s chip the one of the module's
      `fp8.target` (the chip the kernels were lowered for);
    * the features must name PTX ISA features the NVPTX backend knows, with
      exactly one `+ptxNN` at least the chip's minimum (`+ptx80` for
      sm_90a, `+ptx88` for sm_100a);
    * the optimization level must be 0 to 3;
    * every NVVM op must be available on the chip: the ops' `RequiresSM`
      traits (`nvvm.tcgen05.*` need sm_100a, `nvvm.wgmma.fence.aligned`
      sm_90a, ...), plus a table for the ops that carry no trait
      (`nvvm.wgmma.mma_async` is sm_90a only, `nvvm.setmaxregister` needs
      an arch-specific Hopper or Blackwell chip). Each unsupported op gets an
      error at its location.

    The targets checked are the `fp8.target` of the enclosing module (its
    chip and `ptx_features`) and the `#nvvm.target` attributes of the
    gpu.module, so that the pass can run before `fp8-attach-nvvm-target` —
    while the PTX-builder ops (`wgmma.mma_async`, `mbarrier.try_wait.parity`)
    are still NVVM ops rather than inline assembly, and before the NVVM
    target verifier's shorter message. A gpu.module with neither is an
    error.

    The pass changes nothing; it fails when it reports an error.

    Example:
    `fp8-opt --fp8-attach-target=chip=sm_90a --fp8-verify-target-support kernels.mlir`
  }];
}

def FP8BuildHostProgram : Pass<"fp8-build-host-program", "ModuleOp"> {
  let summary = "Describe each public host function as a program of kernel launches for the runtime";
  let description = [{
    Reads the host side of the lowered module (after the fp8 lowerings to
    GPU kernels, before the kernels become `gpu.binary`) and attaches to the
    module the `fp8.host_program` dictionary: the host program of every
    public function, in the format of `schema/module.schema.json`, which
    `fp8-compile` writes as `DIR/module.json` and the host runtime runs
    (`fp8rt_function_call`).

    Every op of a public function becomes part of its program:

    * a function argument is a tensor the caller passes: a memref with the
      identity layout, of rank 0 to 4, of `f8E4M3FN`, `f8E5M2`,
      `f8E8M0FNU`, `bf16`, `f16` or `f32`; each dynamic extent is a
      run-time symbol named after the argument and the dimension (`x_0`);
    * `memref.alloc` is a result when the function returns it, else an
      intermediate buffer in the caller's workspace; its dynamic sizes are
      expressions of the symbols, from `memref.dim` of a known tensor,
      `arith.constant`, `arith.addi`, `arith.muli` and `arith.ceildivui`
      (or `ceildivsi`) on `index` values;
    * a `func.call` of a kernel launcher (a declaration tagged
      `fp8.kernel = @module::@kernel`, whose arguments are the kernel's
      operands in order) is a launch: each kernel operand is bound to the
      argument, result or buffer passed, and each symbol of the kernel
      (`M`, `R`) to the extent of the operand that binds it, as an
      expression of the function's symbols;
    * `linalg.fill` of a constant whose bytes are all equal (e.g. `0.0`) is
      a fill of its target, `memref.copy` a copy;
    * `memref.dealloc` ends a buffer (the workspace needs no freeing);
    * `func.return` names the results: allocations, or arguments updated in
      place (a result that is an argument aliases it).

    Any other op, a call of anything but a launcher, a fill of another
    value, or a kernel operand whose type or size disagrees with the kernel's
    metadata is an error naming the op; nothing is dropped.

    Arguments and results are named by their `fp8.name` attribute (a
    string, an identifier), else `argI` / `resultI`. An argument a kernel,
    a fill or a copy writes is marked `written`. A tensor's alignment is the
    most any kernel operand bound to it needs (16 bytes for one a TMA tensor
    map reads). Its shape is its type's, unless its kernels read or write it
    in a larger layout (scales padded for TMA or the MMA's atoms), which the
    caller then passes: the kernels' shape. An argument in another layout
    than its type's (1x128 scales MN-major, MX scales as atoms) takes the
    kernel's layout as its shape, its extents expressions of the symbols
    other arguments bind (the runtime checks them at a call) or symbols of
    its own.
    A buffer takes the most bytes any kernel operand bound to it needs. Buffers are placed in order of their first use, each
    at a multiple of 256 bytes; a buffer takes the place of one that is no
    longer live when their sizes allow it (equal expressions, or constants
    no larger), so the workspace holds what is live at once rather than
    every intermediate.

    Private functions (the launchers) and functions without a body are not
    programs. The module's `kernels` lists every `gpu.func` kernel of its
    `gpu.module`s; the chip is its `fp8.target`'s.

    Example:
    `fp8-opt --fp8-build-host-program lowered.mlir`
  }];
}

#endif // FP8_TARGET_PTX_PASSES_TD
