//===- ScaleKernels.h - Per-tensor scale bookkeeping kernels ----*- C++ -*-===//
//
// The kernels of `fp8.compute_scale` and `fp8.update_amax_history` when no
// cast kernel absorbs them (fp8-lower-quantize fuses a current-scaling
// compute_scale into the cast that uses it, and an update_amax_history into
// the delayed-scaling cast whose amax it records). Each is a single CTA in
// the runtime's schema (`"kind": "compute_scale"` / `"update_amax_history"`),
// applying the numerics library's rule bit for bit:
//
// * current compute_scale: one thread, scale and scale_inv of an amax;
// * delayed compute_scale: the history's amax (max or most recent), the
//   scale (previous scale kept when that amax is not finite and positive),
//   and the history rolled in place for the next step (TransformerEngine's
//   amax-and-scale update);
// * update_amax_history: slot 0 = max(slot 0, amax), NaN sticky, in place.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_CONVERSION_QUANTIZEKERNELS_SCALEKERNELS_H
#define FP8_CONVERSION_QUANTIZEKERNELS_SCALEKERNELS_H

#include "FP8/Conversion/KernelSkeleton/KernelMetadata.h"
#include "FP8/Dialect/FP8/IR/FP8Ops.h"
#include "FP8/Target/Chip.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinAttributes.h"

#include <string>

namespace mlir::fp8 {

/// Threads of the delayed-scaling kernel, which strides over the history.
inline constexpr int64_t kDelayedScaleThreads = 256;

/// One scale bookkeeping kernel.
struct ScaleKernelProblem {
  enum class Kind {
    CurrentScale, ///< compute_scale #fp8.current
    DelayedScale, ///< compute_scale #fp8.delayed
    RecordAmax,   ///< update_amax_history
  };
  Kind kind = Kind::CurrentScale;
  Type elementType;          ///< compute_scale: f8E4M3FN or f8E5M2
  int64_t historyLength = 0; ///< DelayedScale, RecordAmax
  float epsilon = 0.f;       ///< CurrentScale
  bool pow2 = false;         ///< CurrentScale
  bool mostRecent = false;   ///< DelayedScale: amax = history[0]
  int64_t margin = 0;        ///< DelayedScale

  static ScaleKernelProblem get(ComputeScaleOp op);
  static ScaleKernelProblem get(UpdateAmaxHistoryOp op);

  int64_t numThreads() const {
    return kind == Kind::DelayedScale ? kDelayedScaleThreads : 1;
  }
};

/// `fp8_compute_scale_current_<elem>[_eps<bits>][_pow2]`,
/// `fp8_compute_scale_delayed_<elem>_h<L>_<max|most_recent>_m<margin>` or
/// `fp8_update_amax_history_h<L>`.
std::string getScaleKernelName(const ScaleKernelProblem &problem);

/// Dynamic shared memory of the kernel (the delayed kernel's reduction).
int64_t getScaleKernelSharedMemoryBytes(const ScaleKernelProblem &problem);

/// The metadata. Operands, in the kernel's parameter order:
/// current: `amax`, `scale`, `scale_inv`; delayed: `amax_history` (in/out),
/// `previous_scale`, `scale`, `scale_inv`; update_amax_history:
/// `amax_history` (in/out), `amax`. All f32, grid one CTA.
md::KernelMetadata buildScaleKernelMetadata(StringRef name,
                                            const ChipInfo &chip,
                                            const ScaleKernelProblem &problem);

/// Builds the kernel `name` into `module`.
gpu::GPUFuncOp buildScaleKernel(OpBuilder &builder, Location loc,
                                gpu::GPUModuleOp module, StringRef name,
                                const ScaleKernelProblem &problem);

} // namespace mlir::fp8

#endif // FP8_CONVERSION_QUANTIZEKERNELS_SCALEKERNELS_H
