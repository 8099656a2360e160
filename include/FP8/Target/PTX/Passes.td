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

#endif // FP8_TARGET_PTX_PASSES_TD
