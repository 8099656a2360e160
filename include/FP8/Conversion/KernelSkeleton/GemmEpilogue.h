//===- GemmEpilogue.h - Epilogue pieces shared by the GEMMs -----*- C++ -*-===//
//
// What the targets' GEMM epilogues share once a thread holds f32 output
// values: the per-tensor scale, the bias, the activation, the output amax
// and the conversion to the output type.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_CONVERSION_KERNELSKELETON_GEMMEPILOGUE_H
#define FP8_CONVERSION_KERNELSKELETON_GEMMEPILOGUE_H

#include "FP8/Conversion/KernelSkeleton/GemmKernel.h"
#include "FP8/Conversion/KernelSkeleton/KernelBuilder.h"

namespace mlir::fp8 {

/// The product of the per-tensor scales (A's, B's or both, read from
/// element 0 of `aScaleInv` / `bScaleInv`), or null when neither operand
/// is scaled per tensor.
Value emitTensorScale(KernelBuilder &kb, const GemmProblem &problem,
                      Value aScaleInv, Value bScaleInv);

/// The bias of output column `column` (i32), as f32.
Value emitBiasLoad(KernelBuilder &kb, const GemmProblem &problem, Value bias,
                   Value column);

/// The element index row * n + col (i64) of D or C, from i32 `row`, `col`.
Value emitRowMajorIndex(KernelBuilder &kb, Value row, Value col, int64_t n);

/// Adds to `values` (f32, consecutive columns) the f32 elements of C at
/// element `index` on: one vector load.
void emitAddC(KernelBuilder &kb, MutableArrayRef<Value> values, Value c,
              Value index);

/// `values` (f32) as a vector of `type` elements (truncated unless f32).
Value packVector(KernelBuilder &kb, ArrayRef<Value> values, Type type);

/// Folds `x` (the f32 value of an output element about to be stored as
/// `outType`) into a thread's running amax: max(runningAmax, |round(x)|),
/// NaN-propagating; `inBounds` (i1, may be null) masks elements outside D.
Value emitAmaxUpdate(KernelBuilder &kb, Value runningAmax, Value x,
                     Type outType, Value inBounds);

/// Max-accumulates each thread's `runningAmax` into the f32 at `amaxPtr`
/// (global): a warp-wide max by shuffles, then one `atom.global.max.u32` of
/// the f32 bits per warp from lane 0 (non-negative floats order as their bit
/// patterns, and NaN's above inf). `lane` is the thread's lane index.
void emitAmaxFlush(KernelBuilder &kb, Value runningAmax, Value amaxPtr,
                   Value lane);

/// `activation(x)` of an f32 `x`, for an epilogue (see #fp8.activation):
/// SiLU as x / (1 + 2^(-x log2 e)); GELU(tanh) as x / (1 + e^(-2u)), which
/// equals 0.5 x (1 + tanh(u)); GELU(erf) with erfc(|x|/sqrt 2) from
/// Abramowitz-Stegun 7.1.26 (absolute error <= 1.5e-7), kept as erfc for
/// x < 0 so that no cancellation happens there. exp2 is PTX ex2.approx (its
/// NVVM intrinsic: convert-gpu-to-nvvm turns math ops into libdevice calls).
Value emitActivation(KernelBuilder &kb, Activation activation, Value x);

} // namespace mlir::fp8

#endif // FP8_CONVERSION_KERNELSKELETON_GEMMEPILOGUE_H
