//===- Passes.td - FP8 dialect passes ----------------------*- tablegen -*-===//

#ifndef FP8_DIALECT_FP8_TRANSFORMS_PASSES_TD
#define FP8_DIALECT_FP8_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def FP8VerifyTarget : Pass<"fp8-verify-target"> {
  let summary = "Reject fp8 ops that the chosen GPU cannot run";
  let description = [{
    Checks every fp8 op against the capabilities of `chip` and reports, as a
    diagnostic on the op, each combination the target lowering cannot
    handle, before any code generation (LLVM's backend errors abort the
    process, so they must never be reached):

    * an unknown chip (the supported ones are listed);
    * MXFP8 (`mx 1x32`) scaled matmuls on a chip without block-scaled MMA
      (sm_90a);
    * MN-major FP8 GEMM operands on a chip whose MMA reads FP8 K-major only
      (sm_90a's wgmma): quantize with a transposed columnwise output instead.

    The pass changes nothing; it fails when it reports an error.

    Example: `fp8-opt --fp8-verify-target=chip=sm_90a model.mlir`
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90a\"",
           "target GPU (sm_90a or sm_100a)">,
  ];
}

def FP8DecomposeQuantize : Pass<"fp8-decompose-quantize"> {
  let summary = "Split fused current-scaling quantization into amax, scale and cast";
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
  }];
  let dependentDialects = ["::mlir::fp8::FP8Dialect"];
}

#endif // FP8_DIALECT_FP8_TRANSFORMS_PASSES_TD
