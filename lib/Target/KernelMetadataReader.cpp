//===- KernelMetadataReader.cpp - fp8.kernel_metadata as a struct ---------===//

#include "FP8/Target/KernelMetadataReader.h"

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::schema;

#include "KernelMetadataReader.inc"

FailureOr<fp8schema::KernelMetadata>
mlir::fp8::readKernelMetadata(DictionaryAttr metadata, ReadMode mode,
                              function_ref<InFlightDiagnostic()> emitError,
                              StringRef what) {
  AttrReader reader(what, emitError, mode);
  fp8schema::KernelMetadata result;
  if (failed(::readKernelMetadata(reader, metadata, /*path=*/"", result)))
    return failure();
  return result;
}
