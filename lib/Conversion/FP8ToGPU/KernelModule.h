//===- KernelModule.h - Kernels and their host launchers --------*- C++ -*-===//
//
// What every fp8 lowering to GPU kernels shares: the `gpu.module
// @fp8_kernels` holding the kernels, the attributes fp8-compile and
// fp8-finalize-kernel-abi read off a kernel, and the private host launcher
// declarations (`@NAME_launch_into` on memrefs, or `@NAME_launch` on
// tensors, tagged `fp8.kernel`) whose calls replace the lowered ops. The
// launcher is what the host runtime provides.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_LIB_CONVERSION_FP8TOGPU_KERNELMODULE_H
#define FP8_LIB_CONVERSION_FP8TOGPU_KERNELMODULE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::fp8 {

/// Discardable attributes of a kernel gpu.func read by fp8-compile and
/// fp8-finalize-kernel-abi.
inline constexpr llvm::StringLiteral kKernelMetadataAttrName =
    "fp8.kernel_metadata";
inline constexpr llvm::StringLiteral kGridConstantArgsAttrName =
    "fp8.grid_constant_args";

/// The `gpu.module @fp8_kernels` of `module`, created (and the module marked
/// a container module) on first use.
gpu::GPUModuleOp getOrCreateKernelModule(ModuleOp module);

/// How a kernel uses a launcher argument (its `bufferization.access`):
/// reads it, overwrites it, or updates it (reads its initial value, e.g. an
/// amax it max-accumulates into or an amax history).
enum class LauncherAccess { Read, Write, ReadWrite };

/// The private launcher declaration `launcherName` of kernel `kernelName`
/// with `type`, created at the start of `module` on first use. Argument i is
/// only read unless `access[i]` says otherwise (one-shot bufferization then
/// makes no defensive copies). Returns null (after a diagnostic on `op`, the
/// op it replaces) when a declaration of that name exists with another type.
func::FuncOp getOrCreateLauncher(ModuleOp module, Operation *op,
                                 gpu::GPUModuleOp kernels,
                                 StringRef kernelName, StringRef launcherName,
                                 FunctionType type,
                                 ArrayRef<LauncherAccess> access = {});

/// An `fp8.launch` at `op` of kernel `kernelName` of `kernels` through its
/// launcher `@<kernelName>_launch_into` (created on first use, the memref
/// buffers of `operands`): `operands` are the kernel's, in order, used as
/// `access` says. With `inPlaceOf`, the last operand is an output the
/// kernel may be given that input's buffer for (its launcher argument
/// carries `fp8.in_place_of`, see fp8.launch). Returns the launch's results
/// (the new values of the operands it writes, in order), or failure after a
/// diagnostic on `op`.
FailureOr<ValueRange> createLaunch(Operation *op, gpu::GPUModuleOp kernels,
                                   StringRef kernelName, ValueRange operands,
                                   ArrayRef<LauncherAccess> access,
                                   std::optional<unsigned> inPlaceOf = {});

/// A zero-filled f32 tensor of static `type` at `op`'s position: what an
/// amax the kernel max-accumulates into starts from.
Value createZeroFilled(Operation *op, RankedTensorType type);

} // namespace mlir::fp8

#endif // FP8_LIB_CONVERSION_FP8TOGPU_KERNELMODULE_H
