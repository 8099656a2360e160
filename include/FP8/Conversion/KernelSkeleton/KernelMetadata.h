//===- KernelMetadata.h - The metadata dictionary of a kernel ---*- C++ -*-===//
//
// Every kernel carries `fp8.kernel_metadata`, a dictionary in the host
// runtime's schema (runtime/README.md) that fp8-compile writes as NAME.json:
// launch shape, operands, parameters, grid rule and a description for tools.
// KernelMetadataBuilder builds its nested attributes; the kernels decide
// what goes in.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_CONVERSION_KERNELSKELETON_KERNELMETADATA_H
#define FP8_CONVERSION_KERNELSKELETON_KERNELMETADATA_H

#include "FP8/Target/Chip.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

#include <utility>

namespace mlir::fp8 {

/// The runtime schema's dtype of an operand element type: "e4m3", "e5m2",
/// "ue8m0", "bf16", "f16" or "f32".
StringRef getKernelDTypeName(Type type);

/// Builds the attributes of a metadata dictionary. Kernels whose parameters
/// are one global pointer per operand add them with `addPointerOperand` and
/// close the dictionary with `finish`.
class KernelMetadataBuilder {
public:
  explicit KernelMetadataBuilder(MLIRContext *ctx) : b(ctx) {}

  Attribute str(StringRef s) { return b.getStringAttr(s); }
  Attribute num(int64_t v) { return b.getI64IntegerAttr(v); }
  Attribute flag(bool v) { return b.getBoolAttr(v); }
  Attribute f32(float v) { return b.getF32FloatAttr(v); }
  /// A shape entry: an extent or the symbol of a run-time extent.
  Attribute dim(int64_t v) { return num(v); }
  Attribute dim(StringRef symbol) { return str(symbol); }
  Attribute list(ArrayRef<Attribute> items) { return b.getArrayAttr(items); }
  /// A shape of constant extents.
  Attribute shape(ArrayRef<int64_t> extents);
  DictionaryAttr dict(ArrayRef<std::pair<StringRef, Attribute>> entries);

  /// Appends operand `name` (`dtype`, `shape`, role "input" or "output",
  /// device pointer aligned to `alignment` bytes) and the pointer parameter
  /// that passes it.
  void addPointerOperand(StringRef name, StringRef dtype, Attribute shape,
                         StringRef role, int64_t alignment);

  /// Appends a by-value parameter of `kind` ("i32" or "i64") that the
  /// runtime sets to the value of `symbol` (an extent bound by an operand),
  /// checked at launch to be a multiple of `multipleOf` (said: `reason`).
  void addValueParam(StringRef name, StringRef kind, StringRef symbol,
                     int64_t multipleOf = 1, StringRef reason = {});

  /// `{"kind": "tiles", ...}`: one CTA per tile of the rank-2 operand
  /// `operand`.
  Attribute tilesGrid(int64_t tileRows, int64_t tileCols, StringRef operand);
  /// `{"kind": "fixed", "dims": [1, 1, 1]}`: a single CTA.
  Attribute singleCtaGrid();
  /// `{"kind": "fixed", "dims": dims}`.
  Attribute fixedGrid(ArrayRef<int64_t> dims);

  /// The dictionary of a kernel of `kind` with one-dimensional CTAs of
  /// `threads` threads, the operands and parameters added so far, and
  /// `description` under the key `descriptionKey`.
  DictionaryAttr finish(StringRef name, const ChipInfo &chip, StringRef kind,
                        int64_t threads, int64_t dynamicSharedMemoryBytes,
                        Attribute grid, StringRef descriptionKey,
                        Attribute description);

private:
  Builder b;
  SmallVector<Attribute> operands, params;
};

} // namespace mlir::fp8

#endif // FP8_CONVERSION_KERNELSKELETON_KERNELMETADATA_H
