//===- BlackwellMainloop.h - Mainloop of the sm_100a GEMM -------*- C++ -*-===//
//
// The two mainloop roles of the sm_100a GEMM (CUTLASS's collective
// mainloop): the producer thread fills the stage ring with TMA loads of the
// operand tiles (and, with MX scales, of their scale-factor atoms); the MMA
// thread copies the atoms to Tensor Memory, issues tcgen05.mma over each
// stage and commits the stage's and the accumulator's barriers.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_CONVERSION_FP8TOBLACKWELL_BLACKWELLMAINLOOP_H
#define FP8_CONVERSION_FP8TOBLACKWELL_BLACKWELLMAINLOOP_H

#include "FP8/Conversion/FP8ToBlackwell/BlackwellKernel.h"

namespace mlir::fp8::blackwell {

/// The producer warp: one thread issues every TMA load of the CTA's tiles.
void emitProducer(KernelBuilder &kb, const BlackwellGemm &g,
                  const GemmTiling &t, const KernelValues &v);

/// The MMA warp: one elected thread issues every tcgen05.mma into the
/// accumulators at `tmemBase` and the commits that free the stages and
/// hand each finished accumulator to the epilogue.
void emitMmaIssuer(KernelBuilder &kb, const BlackwellGemm &g,
                   const GemmTiling &t, const KernelValues &v, Value tmemBase);

} // namespace mlir::fp8::blackwell

#endif // FP8_CONVERSION_FP8TOBLACKWELL_BLACKWELLMAINLOOP_H
