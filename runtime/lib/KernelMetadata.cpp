#include "KernelMetadata.h"

#include "CudaLimits.h"
#include "Json.h"
#include "SchemaReader.h"

#include <algorithm>
#include <iterator>
#include <set>

namespace fp8rt {

//===----------------------------------------------------------------------===//
// Small enums
//===----------------------------------------------------------------------===//

const char *dtypeName(DType dtype) { return fp8schema::stringify(dtype); }

int64_t dtypeSize(DType dtype) {
  switch (dtype) {
  case DType::E4M3:
  case DType::E5M2:
  case DType::UE8M0:
    return 1;
  case DType::BF16:
  case DType::F16:
    return 2;
  case DType::F32:
  case DType::I32:
    return 4;
  }
  return 1;
}

CUtensorMapDataType tensorMapDataType(DType dtype) {
  switch (dtype) {
  case DType::E4M3:
  case DType::E5M2:
  case DType::UE8M0:
    return CU_TENSOR_MAP_DATA_TYPE_UINT8;
  case DType::BF16:
    return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  case DType::F16:
    return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  case DType::F32:
    return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  case DType::I32:
    return CU_TENSOR_MAP_DATA_TYPE_INT32;
  }
  return CU_TENSOR_MAP_DATA_TYPE_UINT8;
}

static_assert(static_cast<int>(DType::E4M3) == FP8RT_E4M3 &&
                  static_cast<int>(DType::E5M2) == FP8RT_E5M2 &&
                  static_cast<int>(DType::UE8M0) == FP8RT_UE8M0 &&
                  static_cast<int>(DType::BF16) == FP8RT_BF16 &&
                  static_cast<int>(DType::F16) == FP8RT_F16 &&
                  static_cast<int>(DType::F32) == FP8RT_F32 &&
                  static_cast<int>(DType::I32) == FP8RT_I32,
              "DType must mirror fp8rt_dtype");

bool dtypeFromC(int value, DType &out) {
  if (value < FP8RT_E4M3 || value > FP8RT_I32)
    return false;
  out = static_cast<DType>(value);
  return true;
}

const char *paramKindName(ParamKind kind) { return fp8schema::stringify(kind); }

int KernelMetadata::findOperand(std::string_view operandName) const {
  return findByName(operands, operandName);
}

//===----------------------------------------------------------------------===//
// The generated reader: types, enums, bounds, required and unknown keys
//===----------------------------------------------------------------------===//

namespace {
using json::Value;
using namespace schema;

#include "KernelMetadataParser.inc"

bool isPtxIdentifier(std::string_view s) {
  auto isAlnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '_' || c == '$';
  };
  return !s.empty() && !(s[0] >= '0' && s[0] <= '9') &&
         std::all_of(s.begin(), s.end(), isAlnum);
}

int64_t swizzleSpanBytes(CUtensorMapSwizzle swizzle) {
  switch (swizzle) {
  case CU_TENSOR_MAP_SWIZZLE_32B:
    return 32;
  case CU_TENSOR_MAP_SWIZZLE_64B:
    return 64;
  case CU_TENSOR_MAP_SWIZZLE_128B:
    return 128;
  default:
    return 0;
  }
}

// The schema's TMA enums as the driver's (indexed by the schema enum).
const CUtensorMapSwizzle kSwizzles[] = {
    CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_SWIZZLE_32B,
    CU_TENSOR_MAP_SWIZZLE_64B, CU_TENSOR_MAP_SWIZZLE_128B};
const CUtensorMapL2promotion kL2Promotions[] = {
    CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_64B,
    CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B};
const CUtensorMapFloatOOBfill kOobFills[] = {
    CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
    CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA};
static_assert(
    std::size(kSwizzles) ==
            std::size(fp8schema::EnumTraits<fp8schema::Swizzle>::names) &&
        std::size(kL2Promotions) ==
            std::size(fp8schema::EnumTraits<fp8schema::L2Promotion>::names) &&
        std::size(kOobFills) ==
            std::size(fp8schema::EnumTraits<fp8schema::OobFill>::names),
    "one CUDA value per schema enumerator");
template <typename CudaEnum, size_t N, typename SchemaEnum>
CudaEnum toCuda(const CudaEnum (&table)[N], SchemaEnum value) {
  return table[static_cast<size_t>(value)];
}

//===----------------------------------------------------------------------===//
// What the schema cannot say: checks across fields, and the launch model
//===----------------------------------------------------------------------===//

class MetadataResolver {
public:
  MetadataResolver(SchemaReader &reader, const fp8schema::KernelMetadata &file,
                   KernelMetadata &out)
      : r_(reader), file_(file), meta_(out) {}

  Status resolve() {
    FP8RT_RETURN_IF_ERROR(resolveHeader());
    FP8RT_RETURN_IF_ERROR(resolveLaunchShape());
    FP8RT_RETURN_IF_ERROR(resolveOperands());
    const std::vector<fp8schema::TensorMap> &maps = file_.tensorMapsOrDefault();
    for (size_t i = 0; i < maps.size(); ++i)
      FP8RT_RETURN_IF_ERROR(
          resolveTensorMap(maps[i], indexPath("tensor_maps", i)));
    for (size_t i = 0; i < file_.params.size(); ++i)
      FP8RT_RETURN_IF_ERROR(
          resolveParam(file_.params[i], indexPath("params", i)));
    FP8RT_RETURN_IF_ERROR(resolveGrid());
    FP8RT_RETURN_IF_ERROR(resolveVariants());
    return layoutParams();
  }

private:
  SchemaReader &r_;
  const fp8schema::KernelMetadata &file_;
  KernelMetadata &meta_;
  // Symbols some operand shape binds at launch; anything else that names a
  // symbol must name one of these.
  std::set<std::string> bindableSymbols_;

  Status resolveHeader() {
    meta_.name = file_.name;
    meta_.entry = file_.entry;
    if (!isPtxIdentifier(meta_.entry))
      return r_.errorAtPath("entry", "\"", meta_.entry,
                            "\" is not a PTX identifier");
    FP8RT_RETURN_IF_ERROR(resolveChip());
    meta_.ptxFile = file_.ptx.value_or("");
    meta_.cubinFile = file_.cubin.value_or("");
    if (meta_.ptxFile.empty() && meta_.cubinFile.empty())
      return r_.errorAtPath("", "missing required field \"ptx\" (or "
                                "\"cubin\")");
    meta_.kind = file_.kindOrDefault();
    return Status();
  }

  Status resolveChip() {
    meta_.chip = file_.chip;
    std::string_view chip = meta_.chip;
    bool ok = chip.substr(0, 3) == "sm_";
    std::string_view rest = ok ? chip.substr(3) : std::string_view();
    char suffix = 0;
    if (!rest.empty() && (rest.back() == 'a' || rest.back() == 'f')) {
      suffix = rest.back();
      rest.remove_suffix(1);
    }
    ok = ok && rest.size() >= 2 && rest.size() <= 4 &&
         std::all_of(rest.begin(), rest.end(),
                     [](char c) { return c >= '0' && c <= '9'; });
    if (!ok)
      return r_.errorAtPath("chip", "\"", meta_.chip,
                            "\" is not a chip name like \"sm_90a\"");
    int number = std::stoi(std::string(rest));
    meta_.chipMajor = number / 10;
    meta_.chipMinor = number % 10;
    meta_.chipSuffix = suffix;
    return Status();
  }

  Status resolveLaunchShape() {
    const std::vector<int64_t> &block = file_.block;
    if (block[2] > kMaxBlockDimZ ||
        block[0] * block[1] * block[2] > kMaxThreadsPerBlock)
      return r_.errorAtPath("block", "[", block[0], ", ", block[1], ", ",
                            block[2], "] exceeds CUDA's limits (z <= ",
                            kMaxBlockDimZ, ", at most ", kMaxThreadsPerBlock,
                            " threads)");
    std::vector<int64_t> cluster = file_.clusterOrDefault();
    if (cluster[0] * cluster[1] * cluster[2] > kMaxClusterBlocks)
      return r_.errorAtPath("cluster", "more than ", kMaxClusterBlocks,
                            " blocks per cluster");
    for (int i = 0; i < 3; ++i) {
      meta_.block[i] = static_cast<uint32_t>(block[i]);
      meta_.cluster[i] = static_cast<uint32_t>(cluster[i]);
    }
    meta_.dynamicSharedMemoryBytes =
        static_cast<uint32_t>(file_.dynamicSharedMemoryBytes);
    return Status();
  }

  Status resolveOperands() {
    for (size_t i = 0; i < file_.operands.size(); ++i) {
      const fp8schema::Operand &operand = file_.operands[i];
      std::string path = indexPath("operands", i);
      FP8RT_RETURN_IF_ERROR(
          checkUnique(meta_.operands, operand.name, path, "operand"));
      OperandSpec op;
      op.name = operand.name;
      op.dtype = operand.dtype;
      op.shape = operand.shape;
      op.role = operand.role;
      op.optional = operand.optionalOrDefault();
      op.alignmentBytes = operand.alignment.value_or(dtypeSize(op.dtype));
      if ((op.alignmentBytes & (op.alignmentBytes - 1)) != 0)
        return r_.errorAtPath(path + ".alignment", op.alignmentBytes,
                              " is not a power of two");
      // Optional operands bind symbols too, but only when present; a symbol
      // that only absent operands name is reported at launch.
      for (const Expr &e : op.shape)
        if (e.isSymbol())
          bindableSymbols_.insert(e.name());
      meta_.operands.push_back(std::move(op));
    }
    for (size_t i = 0; i < file_.operands.size(); ++i)
      FP8RT_RETURN_IF_ERROR(resolveInPlaceOf(i));
    // A derived extent checks symbols some operand binds.
    for (size_t i = 0; i < meta_.operands.size(); ++i)
      for (size_t d = 0; d < meta_.operands[i].shape.size(); ++d)
        FP8RT_RETURN_IF_ERROR(
            checkBindable(meta_.operands[i].shape[d],
                          indexPath(indexPath("operands", i) + ".shape", d)));
    return Status();
  }

  // Operand i's `in_place_of`: an output naming an input of its dtype and
  // shape.
  Status resolveInPlaceOf(size_t i) {
    const std::optional<std::string> &name = file_.operands[i].inPlaceOf;
    if (!name)
      return Status();
    std::string path = indexPath("operands", i) + ".in_place_of";
    OperandSpec &op = meta_.operands[i];
    int other = meta_.findOperand(*name);
    if (other < 0)
      return r_.errorAtPath(path, "unknown operand \"", *name, "\"");
    const OperandSpec &input = meta_.operands[other];
    if (op.role != OperandRole::Output || input.role != OperandRole::Input)
      return r_.errorAtPath(path, "an output names the input it may update "
                                  "in place; \"", op.name, "\" is an ",
                            op.role == OperandRole::Output ? "output" : "input",
                            " and \"", *name, "\" an ",
                            input.role == OperandRole::Output ? "output"
                                                              : "input");
    if (op.dtype != input.dtype || op.shape != input.shape)
      return r_.errorAtPath(path, "\"", op.name, "\" and \"", *name,
                            "\" differ in dtype or shape");
    op.inPlaceOf = other;
    return Status();
  }

  // No other entry of `list` is named `name` (the entry at `path`).
  template <typename Spec>
  Status checkUnique(const std::vector<Spec> &list, const std::string &name,
                     const std::string &path, const char *what) const {
    for (const Spec &other : list)
      if (other.name == name)
        return r_.errorAtPath(path + ".name", "duplicate ", what, " name \"",
                              name, "\"");
    return Status();
  }

  Status checkBindable(const Expr &e, const std::string &path) const {
    for (const std::string &symbol : e.symbols())
      if (!bindableSymbols_.count(symbol))
        return r_.errorAtPath(path, "symbol \"", symbol,
                              "\" does not appear in any operand shape, so "
                              "no launch can bind it");
    return Status();
  }

  // `list` (at `path`) has `expected` entries, `what`.
  template <typename T>
  Status checkCount(const std::vector<T> &list, const std::string &path,
                    int expected, const char *what) const {
    if (list.size() == static_cast<size_t>(expected))
      return Status();
    return r_.errorAtPath(path, "expected ", expected, " entries (", what,
                          "), got ", list.size());
  }

  Status resolveTensorMap(const fp8schema::TensorMap &file,
                          const std::string &path) {
    FP8RT_RETURN_IF_ERROR(
        checkUnique(meta_.tensorMaps, file.name, path, "tensor map"));
    TensorMapSpec map;
    map.name = file.name;
    map.operand = meta_.findOperand(file.operand);
    if (map.operand < 0)
      return r_.errorAtPath(path + ".operand", "unknown operand \"",
                            file.operand, "\"");
    const OperandSpec &operand = meta_.operands[map.operand];
    if (operand.optional)
      return r_.errorAtPath(path + ".operand", "operand \"", file.operand,
                            "\" is optional; tensor maps need an operand "
                            "that is always present");
    map.dtype = file.dtype;
    if (map.dtype != operand.dtype)
      return r_.errorAtPath(path + ".dtype", "dtype ", dtypeName(map.dtype),
                            " differs from operand \"", file.operand,
                            "\"'s dtype ", dtypeName(operand.dtype));
    map.rank = static_cast<int>(file.rank);
    FP8RT_RETURN_IF_ERROR(resolveTensorMapShape(file, path, map));
    map.interleave = CU_TENSOR_MAP_INTERLEAVE_NONE;
    map.swizzle = toCuda(kSwizzles, file.swizzle);
    map.l2Promotion = toCuda(kL2Promotions, file.l2PromotionOrDefault());
    map.oobFill = toCuda(kOobFills, file.oobFillOrDefault());
    if (map.oobFill == CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA &&
        tensorMapDataType(map.dtype) == CU_TENSOR_MAP_DATA_TYPE_UINT8)
      return r_.errorAtPath(path + ".oob_fill",
                            "\"nan\" needs a floating-point TMA type (bf16, "
                            "f16, f32); ",
                            dtypeName(map.dtype), " is encoded as UINT8");
    // TMA's constraints on the box (cuTensorMapEncodeTiled): the inner box
    // row must be a multiple of 16 bytes and, when swizzled, fit in the
    // swizzle span.
    int64_t innerBytes = int64_t(map.box[0]) * dtypeSize(map.dtype);
    if (innerBytes % 16 != 0)
      return r_.errorAtPath(path + ".box", "inner box dimension ", map.box[0],
                            " x ", dtypeSize(map.dtype),
                            " bytes = ", innerBytes,
                            " bytes is not a multiple of 16");
    int64_t span = swizzleSpanBytes(map.swizzle);
    if (span && innerBytes > span)
      return r_.errorAtPath(path + ".box", "inner box dimension is ",
                            innerBytes, " bytes, more than the ", span,
                            "-byte span of swizzle \"",
                            fp8schema::stringify(file.swizzle), "\"");
    meta_.tensorMaps.push_back(std::move(map));
    return Status();
  }

  // dims, strides, box and element strides: `rank` entries each (rank - 1
  // strides), naming only bindable symbols.
  Status resolveTensorMapShape(const fp8schema::TensorMap &file,
                               const std::string &path, TensorMapSpec &map) {
    FP8RT_RETURN_IF_ERROR(
        checkCount(file.dims, path + ".dims", map.rank, "the rank"));
    for (size_t d = 0; d < file.dims.size(); ++d)
      FP8RT_RETURN_IF_ERROR(
          checkBindable(file.dims[d], indexPath(path + ".dims", d)));
    FP8RT_RETURN_IF_ERROR(checkCount(file.stridesBytes, path + ".strides_bytes",
                                     map.rank - 1, "rank - 1"));
    for (size_t d = 0; d < file.stridesBytes.size(); ++d)
      FP8RT_RETURN_IF_ERROR(checkBindable(
          file.stridesBytes[d], indexPath(path + ".strides_bytes", d)));
    FP8RT_RETURN_IF_ERROR(
        checkCount(file.box, path + ".box", map.rank, "the rank"));
    std::vector<int64_t> elementStrides =
        file.elementStrides.value_or(std::vector<int64_t>(map.rank, 1));
    FP8RT_RETURN_IF_ERROR(checkCount(elementStrides, path + ".element_strides",
                                     map.rank, "the rank"));
    map.dims = file.dims;
    map.stridesBytes = file.stridesBytes;
    for (int d = 0; d < map.rank; ++d) {
      map.box[d] = static_cast<uint32_t>(file.box[d]);
      map.elementStrides[d] = static_cast<uint32_t>(elementStrides[d]);
    }
    return Status();
  }

  Status resolveParam(const fp8schema::Param &file, const std::string &path) {
    FP8RT_RETURN_IF_ERROR(checkUnique(meta_.params, file.name, path, "param"));
    ParamSpec param;
    param.name = file.name;
    param.kind = file.kind;
    switch (file.kind) {
    case ParamKind::TensorMap:
      for (size_t m = 0; m < meta_.tensorMaps.size(); ++m)
        if (meta_.tensorMaps[m].name == file.tensorMap)
          param.tensorMap = static_cast<int>(m);
      if (param.tensorMap < 0)
        return r_.errorAtPath(path + ".tensor_map", "unknown tensor map \"",
                              file.tensorMap, "\"");
      meta_.tensorMaps[param.tensorMap].usedByParam = true;
      param.passing = file.passing;
      meta_.hasGlobalTensorMaps |= param.passing == TensorMapPassing::Global;
      break;
    case ParamKind::Workspace:
      if (meta_.workspaceParam >= 0)
        return r_.errorAtPath(path, "a kernel has at most one workspace param");
      param.workspaceBytesPerCta = file.bytesPerCta;
      meta_.workspaceParam = static_cast<int>(meta_.params.size());
      break;
    case ParamKind::Pointer:
      param.operand = meta_.findOperand(file.operand);
      if (param.operand < 0)
        return r_.errorAtPath(path + ".operand", "unknown operand \"",
                              file.operand, "\"");
      break;
    case ParamKind::I32:
    case ParamKind::I64:
      param.value = file.value;
      FP8RT_RETURN_IF_ERROR(checkBindable(param.value, path + ".value"));
      if (file.multipleOf && param.value.isConstant())
        return r_.errorAtPath(path + ".multiple_of",
                              "only a param whose value is a symbol has a "
                              "multiple_of");
      param.multipleOf = file.multipleOf.value_or(1);
      param.multipleOfReason = file.reason.value_or("");
      break;
    }
    meta_.params.push_back(std::move(param));
    return Status();
  }

  Status resolveGrid() {
    GridSpec &spec = meta_.grid;
    const fp8schema::Grid &grid = file_.grid;
    spec.kind = grid.kind;
    if (spec.kind == GridKind::Fixed) {
      if (grid.dims[1] > kMaxGridDimYZ || grid.dims[2] > kMaxGridDimYZ)
        return r_.errorAtPath("grid.dims", "y and z must be <= ",
                              kMaxGridDimYZ);
      for (int i = 0; i < 3; ++i)
        spec.fixed[i] = static_cast<uint32_t>(grid.dims[i]);
      return Status();
    }
    spec.throughput = grid.throughputOrDefault();
    meta_.swapAB = file_.gemm && file_.gemm->swapAb.value_or(false);
    meta_.programmaticLaunch = file_.programmaticLaunchOrDefault();
    spec.kSplit = grid.kSplitOrDefault();
    if (spec.kSplit > 1 && (spec.kind != GridKind::Persistent ||
                            meta_.cluster[0] != spec.kSplit ||
                            meta_.cluster[1] != 1 || meta_.cluster[2] != 1))
      return r_.errorAtPath("grid.k_split", "a k_split of ", spec.kSplit,
                            " needs a persistent grid whose cluster is [",
                            spec.kSplit, ", 1, 1] (the CTAs splitting a tile), "
                            "not [", meta_.cluster[0], ", ", meta_.cluster[1],
                            ", ", meta_.cluster[2], "]");
    spec.tileM = grid.tileM;
    spec.tileN = grid.tileN;
    std::string operandName = grid.operand.value_or("");
    if (operandName.empty()) {
      for (size_t i = 0; i < meta_.operands.size() && operandName.empty(); ++i)
        if (meta_.operands[i].role == OperandRole::Output)
          operandName = meta_.operands[i].name;
      if (operandName.empty())
        return r_.errorAtPath("grid", "no operand has role \"output\"; name "
                                      "the [M, N] operand with \"operand\"");
    }
    spec.problemOperand = meta_.findOperand(operandName);
    if (spec.problemOperand < 0)
      return r_.errorAtPath("grid.operand", "unknown operand \"", operandName,
                            "\"");
    const OperandSpec &op = meta_.operands[spec.problemOperand];
    bool batched = op.shape.size() == 3 && spec.kind == GridKind::Persistent;
    if ((op.shape.size() != 2 && !batched) || op.optional)
      return r_.errorAtPath("grid.operand", "operand \"", operandName,
                            "\" must be a non-optional rank-2 [M, N] operand "
                            "(or [G, M, N] for a persistent grid) to define "
                            "the grid");
    return Status();
  }

  // "variants": metadata files (relative to this one's directory) of the
  // same GEMM with other tiles, among which the launch picks by M;
  // "variant_of": the kernel a variant belongs to (for tools).
  Status resolveVariants() {
    meta_.variantOf = file_.variantOf.value_or("");
    if (!file_.variants) {
      if (file_.variantChoice)
        return r_.errorAtPath("variant_choice",
                              "a kernel without \"variants\" has nothing to "
                              "choose");
      return Status();
    }
    if (meta_.grid.kind != GridKind::Persistent)
      return r_.errorAtPath("variants", "only a kernel with a \"persistent\" "
                                        "grid has launch variants");
    if (!meta_.variantOf.empty())
      return r_.errorAtPath("variants",
                            "a variant (\"variant_of\") has no variants");
    meta_.variantFiles = *file_.variants;
    meta_.variantChoice = file_.variantChoiceOrDefault();
    if (meta_.variantChoice == fp8schema::VariantChoice::ExpectedM) {
      // The hint counts G groups of ceil(expected_m / tile M) x
      // ceil(N / tile N) tiles: G and N are the grid operand's.
      const std::vector<Expr> &shape =
          meta_.operands[meta_.grid.problemOperand].shape;
      if (shape.size() != 3 || !shape[0].isConstant() ||
          !shape[2].isConstant())
        return r_.errorAtPath(
            "variant_choice",
            "\"expected_m\" counts the tiles of groups: the grid operand "
            "must be [G, M, N] with a constant G and N");
      meta_.hintGroups = shape[0].value();
      meta_.hintColumns = shape[2].value();
    }
    return Status();
  }

  // Places each param at the next multiple of its alignment, as the CUDA
  // ABI lays out kernel parameters.
  Status layoutParams() {
    size_t offset = 0;
    for (ParamSpec &param : meta_.params) {
      if (param.kind == ParamKind::TensorMap &&
          param.passing == TensorMapPassing::GridConstant) {
        // The CUtensorMap itself: 128 bytes, 64-byte aligned in param space
        // (TMA needs the descriptor's address 64-byte aligned).
        param.size = sizeof(CUtensorMap);
        param.alignment = 64;
      } else if (param.kind == ParamKind::I32) {
        param.size = param.alignment = 4;
      } else {
        param.size = param.alignment = 8; // pointers, i64
      }
      offset =
          (offset + param.alignment - 1) / param.alignment * param.alignment;
      param.offset = offset;
      offset += param.size;
    }
    meta_.paramBufferSize = offset;
    if (offset > kMaxParamBufferBytes)
      return r_.errorAtPath("params", "the parameters take ", offset,
                            " bytes, more than CUDA's limit of ",
                            kMaxParamBufferBytes);
    return Status();
  }
};

} // namespace

Status readKernelMetadataFile(std::string_view jsonText,
                              std::string_view sourceName,
                              fp8schema::KernelMetadata &out) {
  SchemaReader reader(sourceName);
  return readDocument(jsonText, sourceName, reader, out,
                      parseKernelMetadataDocument);
}

Status parseKernelMetadata(std::string_view jsonText,
                           std::string_view sourceName, KernelMetadata &out) {
  SchemaReader reader(sourceName);
  fp8schema::KernelMetadata file;
  FP8RT_RETURN_IF_ERROR(readDocument(jsonText, sourceName, reader, file,
                                     parseKernelMetadataDocument));
  out = KernelMetadata();
  return MetadataResolver(reader, file, out).resolve();
}

} // namespace fp8rt
