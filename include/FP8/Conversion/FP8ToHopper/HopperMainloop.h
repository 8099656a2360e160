//===- HopperMainloop.h - Mainloop of the sm_90a GEMM -----------*- C++ -*-===//
//
// The two roles of the sm_90a GEMM's warpgroups (CUTLASS's collective
// mainloop): the producer fills the stage ring with TMA loads (and the
// blockwise scales' copies), the consumers run wgmma over each stage, free
// it, promote the partial sums where asked, and hand each tile's sums to
// the epilogue (HopperEpilogue) or to the stream-K fixup (HopperScheduler).
//
//===----------------------------------------------------------------------===//

#ifndef FP8_CONVERSION_FP8TOHOPPER_HOPPERMAINLOOP_H
#define FP8_CONVERSION_FP8TOHOPPER_HOPPERMAINLOOP_H

#include "FP8/Conversion/FP8ToHopper/HopperKernel.h"

namespace mlir::fp8::hopper {

/// The setmaxnreg budgets (producer, consumers) of `t`'s kernel.
std::pair<int64_t, int64_t> getRegisterBudgets(const GemmProblem &p,
                                               const GemmTiling &t);

/// The producer warpgroup (HopperProducer.cpp): gives its registers to the
/// consumers; one thread issues every TMA load, and every copy of blockwise
/// scales.
void emitProducer(KernelBuilder &kb, const GemmProblem &p, const GemmTiling &t,
                  const KernelValues &v);

/// The per-column f32 scales of a consumer thread's accumulator columns in
/// columns [firstColumn, firstColumn + columns) from the scales at
/// `columnScales` (shared memory, one per column): element 2j + e is the
/// scale of column firstColumn + 8j + colInFragment + e; each even-aligned
/// pair is one 8-byte load.
SmallVector<Value> emitColumnScaleLoads(KernelBuilder &kb, Value columnScales,
                                        Value colInFragment,
                                        int64_t firstColumn, int64_t columns);

/// A consumer warpgroup: takes the registers, then runs the mainloop and the
/// epilogue of each of this CTA's work segments.
void emitConsumer(KernelBuilder &kb, const GemmProblem &p, const GemmTiling &t,
                  const KernelValues &v);

} // namespace mlir::fp8::hopper

#endif // FP8_CONVERSION_FP8TOHOPPER_HOPPERMAINLOOP_H
