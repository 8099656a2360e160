//===- FP8Base.td - FP8 dialect definition -----------------*- tablegen -*-===//
//
// The fp8 dialect: FP8 quantization recipes and scaled matrix multiplication.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_DIALECT_FP8_IR_FP8BASE_TD
#define FP8_DIALECT_FP8_IR_FP8BASE_TD

include "mlir/IR/OpBase.td"

def FP8_Dialect : Dialect {
  let name = "fp8";
  let cppNamespace = "::mlir::fp8";
  let summary = "FP8 quantization recipes and scaled matrix multiplication";
  let description = [{
    The `fp8` dialect models FP8 training and inference arithmetic at the
    level a framework thinks about it: how a tensor is quantized (the
    *recipe*: per-tensor delayed or current scaling, DeepSeek-style blockwise
    scaling, MXFP8), the scales this produces, and the scaled GEMM that
    consumes the quantized operands.

    Conventions used throughout:

    * The quantizer multiplies: `q = cvt_rn_satfinite(x * scale)`. Every op
      that consumes scales (`fp8.dequantize`, `fp8.scaled_matmul`) takes the
      inverse, `scale_inv`, so that `x ~= q * scale_inv`. Operand and result
      names say which of the two a value holds.
    * Scale tensors have *logical* shapes: rows of the quantized matrix by
      blocks along its columns (e.g. `[M, ceil(K/128)]` for 1x128 tiles).
      Physical scale layouts (MN-major, TMA padding, the Blackwell 128x4
      scale-factor atom) are chosen by the target lowering.
    * A GEMM operand is stored in its physical order: a K-major A is
      `[M, K]`, an MN-major A is `[K, M]`; a K-major B is `[N, K]`, an
      MN-major B is `[K, N]`.
    * The arithmetic of every recipe (rounding, saturation, scale rules) is
      defined once in the FP8Numerics library; the constant folders of this
      dialect call it.
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasConstantMaterializer = 1;
  // `fp8.target` on the top-level module (FP8Target.h).
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    void registerAttributes();
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
}

#endif // FP8_DIALECT_FP8_IR_FP8BASE_TD
