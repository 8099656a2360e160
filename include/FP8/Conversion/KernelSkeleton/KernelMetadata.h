//===- KernelMetadata.h - The metadata of a kernel --------------*- C++ -*-===//
//
// Every kernel carries `fp8.kernel_metadata`, the dictionary fp8-compile
// writes as NAME.json for the host runtime: launch shape, operands,
// parameters, grid rule and a description for tools. Its format is defined
// once, in schema/kernel.schema.json; the kernel builders fill the generated
// structs (fp8schema::KernelMetadata, shared with the runtime) and
// getKernelMetadataAttr writes them as the attribute.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_CONVERSION_KERNELSKELETON_KERNELMETADATA_H
#define FP8_CONVERSION_KERNELSKELETON_KERNELMETADATA_H

#include "FP8/Target/Chip.h"

#include "mlir/IR/BuiltinAttributes.h"

#include "fp8schema/KernelMetadata.h"

#include <vector>

namespace mlir::fp8 {

namespace md = fp8schema;

/// The element type of an operand: e4m3, e5m2, ue8m0, bf16, f16 or f32.
md::DType getKernelDType(Type type);
/// Its name in the metadata ("e4m3", ...), which kernel names use too.
StringRef getKernelDTypeName(Type type);

/// A shape of constant extents.
std::vector<md::Expr> getConstantShape(ArrayRef<int64_t> extents);

/// The metadata of a kernel of `kind` (GEMM kernels leave the default,
/// gemm, unsaid) with one-dimensional CTAs of `threads` threads, no cluster
/// and no tensor maps; the builders add the operands, params and the
/// description.
md::KernelMetadata makeKernelMetadata(StringRef name, const ChipInfo &chip,
                                      std::optional<md::KernelKind> kind,
                                      int64_t threads,
                                      int64_t dynamicSharedMemoryBytes,
                                      md::Grid grid);

/// Appends operand `name` (`dtype`, `shape`, device pointer aligned to
/// `alignment` bytes) and the pointer parameter that passes it.
void addPointerOperand(md::KernelMetadata &metadata, StringRef name,
                       md::DType dtype, std::vector<md::Expr> shape,
                       md::OperandRole role, int64_t alignment);

/// Appends a by-value parameter of `kind` (i32 or i64) that the runtime sets
/// to the value of `symbol` (an extent bound by an operand), checked at
/// launch to be a multiple of `multipleOf` (said: `reason`).
void addValueParam(md::KernelMetadata &metadata, StringRef name,
                   md::ParamKind kind, StringRef symbol, int64_t multipleOf = 1,
                   StringRef reason = {});

/// One CTA per tile of the rank-2 operand `operand`.
md::Grid getTilesGrid(int64_t tileRows, int64_t tileCols, StringRef operand);
/// A grid of `dims` CTAs.
md::Grid getFixedGrid(ArrayRef<int64_t> dims);

/// The `fp8.kernel_metadata` attribute of `metadata`.
DictionaryAttr getKernelMetadataAttr(MLIRContext *ctx,
                                     const md::KernelMetadata &metadata);

} // namespace mlir::fp8

#endif // FP8_CONVERSION_KERNELSKELETON_KERNELMETADATA_H
