//===- KernelArtifacts.h - PTX and JSON metadata of kernels ----*- C++ -*-===//
//
// What `fp8-compile` writes for each kernel: NAME.ptx, the PTX text of the
// kernel's gpu.binary, and NAME.json, its `fp8.kernel_metadata` dictionary as
// JSON for the host runtime; and for the module, module.json, its
// `fp8.host_program` as JSON.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_TARGET_PTX_KERNELARTIFACTS_H
#define FP8_TARGET_PTX_KERNELARTIFACTS_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"
#include "llvm/Support/JSON.h"

#include "fp8schema/KernelMetadata.h"

#include <string>
#include <vector>

namespace mlir::fp8 {

/// A kernel of a lowered module.
struct KernelInfo {
  /// The kernel's symbol: its PTX entry name and the stem of its files.
  std::string name;
  /// The gpu.module holding it (several kernels may share one).
  std::string moduleName;
  /// Its `fp8.kernel_metadata`.
  DictionaryAttr metadata;
  /// The fields `metadata` gives (a hand-written kernel's may give only
  /// some): a field it lacks has its default value.
  fp8schema::KernelMetadata fields;
  Location loc;
};

/// Collects every `gpu.func ... kernel` of the gpu.modules directly in
/// `module`. Reports an error, at the kernel, when one has no
/// `fp8.kernel_metadata` dictionary, when its `entry` is not a string naming
/// the kernel, when a name could not serve as a file name, or when two
/// kernels share a name.
FailureOr<std::vector<KernelInfo>> collectKernels(ModuleOp module);

/// The PTX text of `gpu.binary @binaryName` in `module`: the assembly of its
/// #nvvm.target object. Reports an error when there is none.
FailureOr<StringRef> getBinaryPTX(ModuleOp module, StringRef binaryName);

/// Converts a metadata attribute to JSON: StringAttr to a string, BoolAttr
/// to a boolean, IntegerAttr to an integer (unsigned types as unsigned,
/// others signed; at most 64 bits), FloatAttr to a finite number, ArrayAttr
/// and DenseArrayAttr (bool, integer, float elements) to an array,
/// DictionaryAttr to an object. Anything else, non-UTF-8 strings and
/// infinite or NaN floats are errors reported at `loc` with the key path.
FailureOr<llvm::json::Value> convertMetadataToJSON(Attribute attr,
                                                   Location loc);

/// The kernel's JSON document: its converted metadata plus the `format` and
/// `version` of schema/kernel.schema.json (`"fp8-mlir-kernel"`, 1) and
/// `"ptx": ptxFileName` (keys the metadata must not hold).
FailureOr<llvm::json::Value> buildKernelJSON(const KernelInfo &kernel,
                                             StringRef ptxFileName);

/// The host program's JSON document (module.json): the module's
/// `fp8.host_program` (set by fp8-build-host-program) converted, plus the
/// `format` and `version` of schema/module.schema.json
/// (`"fp8-mlir-module"`, 1). An error at the module when it has none.
FailureOr<llvm::json::Value> buildModuleProgramJSON(ModuleOp module);

} // namespace mlir::fp8

#endif // FP8_TARGET_PTX_KERNELARTIFACTS_H
