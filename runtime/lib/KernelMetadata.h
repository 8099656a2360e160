// The kernel metadata model the launch path uses, and its load-time
// validation. The format (NAME.json, "fp8-mlir-kernel" version 1) is defined
// once, in schema/kernel.schema.json: the generated reader checks types,
// enums, bounds and keys (SchemaReader.h); KernelMetadata.cpp adds the checks
// across fields and resolves names to indices, CUDA enums and parameter
// offsets.
//
// Everything here is checked once, when the kernel is loaded, so that a
// launch only has to check the caller's operands.
#ifndef FP8RT_LIB_KERNELMETADATA_H
#define FP8RT_LIB_KERNELMETADATA_H

#include "CudaTypes.h"
#include "Status.h"

#include "fp8schema/KernelMetadata.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace fp8rt {

// The schema's element types, in fp8rt_dtype's order so the two convert
// with a cast.
using DType = fp8schema::DType;
// Extents, strides and values: integers or expressions of symbols ("M",
// "roundup(M, 4)", "ceildiv(R, 128)", "M*16"), bound at launch from the
// operand shapes. A plain symbol in an operand shape binds it; any other
// expression there checks the symbols' values but never binds them.
using fp8schema::Expr;

const char *dtypeName(DType dtype);
int64_t dtypeSize(DType dtype); // bytes per element
// The TMA element type: the FP8 and UE8M0 formats are plain bytes to TMA.
CUtensorMapDataType tensorMapDataType(DType dtype);
// False when `value` is outside the fp8rt_dtype enum.
bool dtypeFromC(int value, DType &out);

using OperandRole = fp8schema::OperandRole;

// The index of the first item of `items` whose `name` is `name`, or -1.
template <typename T>
int findByName(const std::vector<T> &items, std::string_view name) {
  for (size_t i = 0; i < items.size(); ++i)
    if (items[i].name == name)
      return static_cast<int>(i);
  return -1;
}

struct OperandSpec {
  std::string name;
  DType dtype = DType::E4M3;
  std::vector<Expr> shape; // outermost first, rank 0..4
  OperandRole role = OperandRole::Input;
  bool optional = false;
  int64_t alignmentBytes = 1; // required alignment of the device pointer
  // An output the caller may pass the memory of this input operand for (an
  // in-place update); -1: none.
  int inPlaceOf = -1;
};

constexpr int kMaxTensorMapRank = 5; // cuTensorMapEncodeTiled's limit

struct TensorMapSpec {
  std::string name;
  int operand = -1; // index into KernelMetadata::operands
  DType dtype = DType::E4M3;
  int rank = 0;
  std::vector<Expr> dims;         // innermost first, `rank` entries
  std::vector<Expr> stridesBytes; // innermost first, rank-1 entries
  uint32_t box[kMaxTensorMapRank] = {};
  uint32_t elementStrides[kMaxTensorMapRank] = {};
  CUtensorMapInterleave interleave = CU_TENSOR_MAP_INTERLEAVE_NONE;
  CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;
  CUtensorMapL2promotion l2Promotion = CU_TENSOR_MAP_L2_PROMOTION_NONE;
  CUtensorMapFloatOOBfill oobFill = CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;
  bool usedByParam = false; // only maps a param passes are encoded
};

using fp8schema::ParamKind;
using fp8schema::TensorMapPassing;

const char *paramKindName(ParamKind kind);

struct ParamSpec {
  std::string name;
  ParamKind kind = ParamKind::Pointer;
  int tensorMap = -1;                                        // TensorMap
  TensorMapPassing passing = TensorMapPassing::GridConstant; // TensorMap
  int operand = -1;                                          // Pointer
  Expr value;                                                // I32, I64
  // I32, I64 of a symbol: the symbol's value must be a multiple of this
  // (> 1), for the reason `multipleOfReason`; checked at launch.
  int64_t multipleOf = 1;
  std::string multipleOfReason;
  // Workspace: bytes per CTA of the launch's grid.x (runtime/README.md,
  // "Workspace").
  int64_t workspaceBytesPerCta = 0;

  // Placement in the kernel's parameter buffer (CUDA's layout: each param
  // at the next multiple of its alignment).
  size_t offset = 0;
  size_t size = 0;
  size_t alignment = 0;
};

using fp8schema::GridKind;

struct GridSpec {
  GridKind kind = GridKind::Fixed;
  int64_t tileM = 0, tileN = 0;  // Persistent, Tiles
  int problemOperand = -1;       // Persistent, Tiles: rank-2 operand [M, N]
  // Persistent: output elements per SM and second, in percent of the
  // fastest tile, for the choice among launch variants (selectLaunchVariant).
  int64_t throughput = 100;
  // Persistent: CTAs per tile (a cluster of them splits its K blocks).
  int64_t kSplit = 1;
  uint32_t fixed[3] = {1, 1, 1}; // Fixed
};

struct KernelMetadata {
  std::string name;
  std::string entry;
  fp8schema::KernelKind kind = fp8schema::KernelKind::Gemm;
  std::string chip; // "sm_90a"
  int chipMajor = 0, chipMinor = 0;
  char chipSuffix = 0; // 0, 'a' (arch-specific) or 'f' (family)
  std::string ptxFile;
  std::string cubinFile; // empty when absent
  uint32_t block[3] = {1, 1, 1};
  uint32_t cluster[3] = {1, 1, 1};
  uint32_t dynamicSharedMemoryBytes = 0;
  GridSpec grid;
  std::vector<OperandSpec> operands;
  std::vector<TensorMapSpec> tensorMaps;
  std::vector<ParamSpec> params;
  size_t paramBufferSize = 0;
  bool hasGlobalTensorMaps = false;
  // The param of kind "workspace" (at most one), or -1.
  int workspaceParam = -1;
  // A GEMM kernel whose MMAs take B's rows as their M (gemm.swap_ab): a
  // stream-K one splits any number of tiles (selectLaunchVariant).
  bool swapAB = false;
  // Launched with programmatic stream serialization (programmatic_launch).
  bool programmaticLaunch = false;
  // Launch variants: their metadata files (relative to this file's
  // directory); a variant names its kernel in variantOf.
  std::vector<std::string> variantFiles;
  std::string variantOf;
  // How a launch picks among the variants: by its M, or (ExpectedM) by the
  // caller's hint of the rows per group (fp8rt_kernel_for_expected_m), for
  // the G groups of N columns of the [G, M, N] grid operand.
  fp8schema::VariantChoice variantChoice = fp8schema::VariantChoice::M;
  int64_t hintGroups = 0, hintColumns = 0; // ExpectedM

  int findOperand(std::string_view name) const; // -1 if absent
  uint32_t clusterSize() const { return cluster[0] * cluster[1] * cluster[2]; }
};

// Largest workspace a kernel may ask per CTA (16 MiB).
constexpr int64_t kMaxWorkspaceBytesPerCta = int64_t(1) << 24;

// Largest kernel parameter buffer the driver accepts (CUDA 12.1+, sm_70+).
constexpr size_t kMaxParamBufferBytes = 32764;

// Parses and validates the metadata text. Errors are
// FP8RT_ERROR_INVALID_METADATA with "SOURCE:LINE:COL: FIELD: problem".
Status parseKernelMetadata(std::string_view jsonText,
                           std::string_view sourceName, KernelMetadata &out);

// Reads the metadata text into the structs of its definition, checking
// only what the definition says (types, enums, bounds, required and unknown
// keys), not the checks across fields parseKernelMetadata adds.
Status readKernelMetadataFile(std::string_view jsonText,
                              std::string_view sourceName,
                              fp8schema::KernelMetadata &out);

} // namespace fp8rt

#endif // FP8RT_LIB_KERNELMETADATA_H
