//===- BlackwellEpilogue.h - Epilogue of the sm_100a GEMM -------*- C++ -*-===//
//
// The epilogue warpgroups of the sm_100a GEMM: for each of the CTA's tiles,
// wait for its Tensor Memory accumulator, load it in pieces, hand it back to
// the MMA warp, apply the scales, bias, activation and amax, convert, and
// stage the tile for TMA stores or store it directly.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_CONVERSION_FP8TOBLACKWELL_BLACKWELLEPILOGUE_H
#define FP8_CONVERSION_FP8TOBLACKWELL_BLACKWELLEPILOGUE_H

#include "FP8/Conversion/FP8ToBlackwell/BlackwellKernel.h"

namespace mlir::fp8::blackwell {

/// The epilogue warpgroups' role: thread t of warp w owns tile row
/// 32 (w % 4) + t (TMEM lane = row, Layout D) and half of the tile's
/// columns (one half per warpgroup).
void emitEpilogue(KernelBuilder &kb, const BlackwellGemm &g,
                  const GemmTiling &t, const KernelValues &v, Value tmemBase);

} // namespace mlir::fp8::blackwell

#endif // FP8_CONVERSION_FP8TOBLACKWELL_BLACKWELLEPILOGUE_H
