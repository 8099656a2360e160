//===- GemmOutputQuantization.h - FP8 outputs of the GEMMs -------*- C++ -*-===//
//
// The pieces of an epilogue that quantizes D to FP8 for its consumer
// (GemmProblem::outQuantization), shared by the targets' epilogues: the
// scale rule of a 1x128 block from its amax (bit-identical to the
// quantization kernels' #fp8.blockwise rule), the saturating RNE cast of an
// element pair, and the per-tensor scale_inv. Each target reduces the block
// amax over its own accumulator fragment.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_CONVERSION_KERNELSKELETON_GEMMOUTPUTQUANTIZATION_H
#define FP8_CONVERSION_KERNELSKELETON_GEMMOUTPUTQUANTIZATION_H

#include "FP8/Conversion/KernelSkeleton/GemmKernel.h"
#include "FP8/Conversion/KernelSkeleton/KernelBuilder.h"

namespace mlir::fp8 {

/// Whether an FP8 result of `recipe` at `g` (with a given scale when
/// `givenScale`) takes scales no single output tile can compute.
bool needsTwoPhases(RecipeAttrInterface recipe, GranularityAttr g,
                    bool givenScale);

/// Sets the epilogue's quantization of an FP8 D of `recipe` at `g` in `p`:
/// a given per-tensor scale, or 1x128 blocks along N.
void setEpilogueQuantization(GemmProblem &p, RecipeAttrInterface recipe,
                             GranularityAttr g);

/// A block's quantization multiplier and its f32 scale_inv.
struct OutputBlockScale {
  Value multiplier;
  Value scaleInv;
};

/// The #fp8.blockwise scale of a block of D whose amax has the sign-free
/// bits `amaxBits` (i32): numerics' blockwiseScale with the problem's
/// power-of-two choice and amax clamp.
OutputBlockScale emitOutputBlockScale(KernelBuilder &kb, const GemmProblem &p,
                                      Value amaxBits);

/// max over i of |xs[i]|, as the f32's bits, counting only elements inside
/// D (`inBounds[i]`; `inBounds` empty for all), in a balanced tree of
/// NaN-propagating maxima of magnitudes (the reduction's latency grows with
/// log2 of the element count): a block with a NaN gets a NaN amax, hence
/// the NaN scale rule.
Value emitAbsBitsMax(KernelBuilder &kb, ArrayRef<Value> xs,
                     ArrayRef<Value> inBounds);

/// `bits` max-reduced over the lanes `offsets` apart (shfl.sync.bfly).
Value emitLaneBitsMax(KernelBuilder &kb, Value bits, ArrayRef<int64_t> offsets);

/// satfinite(RNE(x0 * multiplier)), satfinite(RNE(x1 * multiplier)) in the
/// FP8 output type, as the i16 of the two bytes in memory order.
Value emitFP8Pair(KernelBuilder &kb, const GemmProblem &p, Value x0, Value x1,
                  Value multiplier);

/// Per-tensor FP8 output: the multiplier (the given result_scale).
Value emitResultScaleLoad(KernelBuilder &kb, const GemmKernelParams &params);

/// Per-tensor FP8 output: writes result_scale_inv = 1 / result_scale (the
/// quantization kernels' rule for a given scale); called by one thread.
void emitResultScaleInvStore(KernelBuilder &kb,
                             const GemmKernelParams &params);

} // namespace mlir::fp8

#endif // FP8_CONVERSION_KERNELSKELETON_GEMMOUTPUTQUANTIZATION_H
