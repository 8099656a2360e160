//===- KernelMetadataReader.h - fp8.kernel_metadata as a struct -*- C++ -*-===//
//
// The reader of a kernel's `fp8.kernel_metadata` dictionary, generated from
// schema/kernel.schema.json like the writer that made it
// (getKernelMetadataAttr): the compiler reads the metadata by its fields,
// never by key strings.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_TARGET_KERNELMETADATAREADER_H
#define FP8_TARGET_KERNELMETADATAREADER_H

#include "FP8/Target/SchemaReader.h"

#include "fp8schema/KernelMetadata.h"

namespace mlir::fp8 {

/// Reads `metadata` into its struct. Errors start with `emitError()`, go on
/// with `what` and the key path ("kernel metadata 'operands[1].dtype' holds
/// f32: expected a string") and make it fail. In ReadMode::Present, the
/// fields `metadata` lacks keep their default values.
FailureOr<fp8schema::KernelMetadata>
readKernelMetadata(DictionaryAttr metadata, schema::ReadMode mode,
                   function_ref<InFlightDiagnostic()> emitError,
                   StringRef what = "kernel metadata");

} // namespace mlir::fp8

#endif // FP8_TARGET_KERNELMETADATAREADER_H
