//===- Collectives.h - What the host program's collectives take -*- C++ -*-===//
//
// Shared by fp8-lower-collectives and the compiler driver's checks before
// the pipeline: the diagnostic for an op of the upstream `shard` dialect
// that no collective step of module.json runs.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_CONVERSION_FP8TOGPU_COLLECTIVES_H
#define FP8_CONVERSION_FP8TOGPU_COLLECTIVES_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Operation.h"

namespace mlir::fp8 {

/// An error on `op` naming it (and its grid) and the collectives the
/// compiled host program runs; the caller appends what would work.
InFlightDiagnostic emitUnsupportedShardOpError(Operation *op);

} // namespace mlir::fp8

#endif // FP8_CONVERSION_FP8TOGPU_COLLECTIVES_H
