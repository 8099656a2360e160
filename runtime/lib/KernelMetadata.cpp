#include "KernelMetadata.h"

#include "Json.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <set>

namespace fp8rt {

//===----------------------------------------------------------------------===//
// Small enums
//===----------------------------------------------------------------------===//

const char *dtypeName(DType dtype) {
  switch (dtype) {
  case DType::E4M3:
    return "e4m3";
  case DType::E5M2:
    return "e5m2";
  case DType::UE8M0:
    return "ue8m0";
  case DType::BF16:
    return "bf16";
  case DType::F16:
    return "f16";
  case DType::F32:
    return "f32";
  }
  return "?";
}

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
  }
  return CU_TENSOR_MAP_DATA_TYPE_UINT8;
}

static_assert(static_cast<int>(DType::E4M3) == FP8RT_E4M3 &&
                  static_cast<int>(DType::E5M2) == FP8RT_E5M2 &&
                  static_cast<int>(DType::UE8M0) == FP8RT_UE8M0 &&
                  static_cast<int>(DType::BF16) == FP8RT_BF16 &&
                  static_cast<int>(DType::F16) == FP8RT_F16 &&
                  static_cast<int>(DType::F32) == FP8RT_F32,
              "DType must mirror fp8rt_dtype");

bool dtypeFromC(int value, DType &out) {
  if (value < FP8RT_E4M3 || value > FP8RT_F32)
    return false;
  out = static_cast<DType>(value);
  return true;
}

const char *paramKindName(ParamKind kind) {
  switch (kind) {
  case ParamKind::TensorMap:
    return "tensor_map";
  case ParamKind::Pointer:
    return "pointer";
  case ParamKind::I32:
    return "i32";
  case ParamKind::I64:
    return "i64";
  case ParamKind::Workspace:
    return "workspace";
  }
  return "?";
}

int64_t Extent::valueFor(int64_t symbolValue) const {
  if (isCeilDiv())
    return (symbolValue + divisor - 1) / divisor;
  return (symbolValue + roundUpTo - 1) / roundUpTo * roundUpTo;
}

std::string Extent::str() const {
  if (isRoundedUp())
    return "roundup(" + symbol + ", " + std::to_string(roundUpTo) + ")";
  if (isCeilDiv())
    return "ceildiv(" + symbol + ", " + std::to_string(divisor) + ")";
  return isSymbol() ? symbol : std::to_string(constant);
}

std::string StrideExpr::str() const {
  if (symbol.empty())
    return std::to_string(factor);
  return factor == 1 ? symbol : symbol + "*" + std::to_string(factor);
}

int KernelMetadata::findOperand(std::string_view operandName) const {
  for (size_t i = 0; i < operands.size(); ++i)
    if (operands[i].name == operandName)
      return static_cast<int>(i);
  return -1;
}

//===----------------------------------------------------------------------===//
// Reading JSON values with field paths and locations in every error
//===----------------------------------------------------------------------===//

namespace {

using json::Kind;
using json::Value;

constexpr int64_t kTwoPow32 = int64_t(1) << 32;
constexpr int64_t kTwoPow40 = int64_t(1) << 40;
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

template <typename E> struct EnumName {
  const char *name;
  E value;
};

bool isIdentifier(std::string_view s) {
  if (s.empty())
    return false;
  auto isAlpha = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  };
  if (!isAlpha(s[0]))
    return false;
  return std::all_of(s.begin() + 1, s.end(), [&](char c) {
    return isAlpha(c) || (c >= '0' && c <= '9');
  });
}

bool parsePositiveDecimal(std::string_view s, int64_t &out) {
  if (s.empty() || s.size() > 18 || s[0] == '0')
    return false;
  out = 0;
  for (char c : s) {
    if (c < '0' || c > '9')
      return false;
    out = out * 10 + (c - '0');
  }
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ')
    s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ')
    s.remove_suffix(1);
  return s;
}

std::string indexPath(const std::string &path, size_t index) {
  return path + "[" + std::to_string(index) + "]";
}

std::string fieldPath(const std::string &path, const char *key) {
  return path.empty() ? std::string(key) : path + "." + key;
}

class Reader {
public:
  explicit Reader(std::string_view source) : source_(source) {}

  template <typename... Pieces>
  Status errorAt(const Value &where, const std::string &path,
                 const Pieces &...pieces) const {
    return invalidMetadata(
        source_, ":", where.location.line, ":", where.location.column, ": ",
        path.empty() ? std::string("(top level)") : path, ": ", pieces...);
  }

  Status expectKind(const Value &v, const std::string &path, Kind kind) const {
    if (v.kind != kind)
      return errorAt(v, path, "expected ", json::kindName(kind), ", got ",
                     json::kindName(v.kind));
    return Status();
  }

  // Checks `v` is an object whose keys are all in `allowed`.
  Status expectObject(const Value &v, const std::string &path,
                      std::initializer_list<const char *> allowed) const {
    FP8RT_RETURN_IF_ERROR(expectKind(v, path, Kind::Object));
    for (const auto &member : v.object) {
      bool known =
          std::any_of(allowed.begin(), allowed.end(),
                      [&](const char *k) { return member.first == k; });
      if (known)
        continue;
      std::string list;
      for (const char *k : allowed)
        list += (list.empty() ? "" : ", ") + std::string(k);
      return errorAt(member.second, path, "unknown key \"", member.first,
                     "\" (allowed: ", list, ")");
    }
    return Status();
  }

  // Sets `out` to the member or nullptr; errors if required and absent.
  Status member(const Value &obj, const std::string &path, const char *key,
                bool required, const Value *&out) const {
    out = obj.find(key);
    if (!out && required)
      return errorAt(obj, path, "missing required field \"", key, "\"");
    return Status();
  }

  Status readString(const Value &obj, const std::string &path, const char *key,
                    bool required, std::string &out) const {
    const Value *v;
    FP8RT_RETURN_IF_ERROR(member(obj, path, key, required, v));
    if (!v)
      return Status();
    FP8RT_RETURN_IF_ERROR(expectKind(*v, fieldPath(path, key), Kind::String));
    if (v->string.empty())
      return errorAt(*v, fieldPath(path, key), "must not be empty");
    out = v->string;
    return Status();
  }

  Status readIntValue(const Value &v, const std::string &path, int64_t min,
                      int64_t max, int64_t &out) const {
    if (v.kind == Kind::Number && !v.isInteger && std::fabs(v.number) >= 9.2e18)
      return errorAt(v, path, "integer does not fit in 64 bits");
    if (v.kind != Kind::Number || !v.isInteger)
      return errorAt(v, path, "expected an integer, got ",
                     v.kind == Kind::Number ? "a non-integer number"
                                            : json::kindName(v.kind));
    if (v.integer < min || v.integer > max)
      return errorAt(v, path, "value ", v.integer, " is out of range [", min,
                     ", ", max, "]");
    out = v.integer;
    return Status();
  }

  Status readInt(const Value &obj, const std::string &path, const char *key,
                 bool required, int64_t min, int64_t max, int64_t &out) const {
    const Value *v;
    FP8RT_RETURN_IF_ERROR(member(obj, path, key, required, v));
    if (!v)
      return Status();
    return readIntValue(*v, fieldPath(path, key), min, max, out);
  }

  Status readBool(const Value &obj, const std::string &path, const char *key,
                  bool &out) const {
    const Value *v;
    FP8RT_RETURN_IF_ERROR(member(obj, path, key, false, v));
    if (!v)
      return Status();
    FP8RT_RETURN_IF_ERROR(expectKind(*v, fieldPath(path, key), Kind::Bool));
    out = v->boolean;
    return Status();
  }

  template <typename E, size_t N>
  Status readEnum(const Value &obj, const std::string &path, const char *key,
                  bool required, const EnumName<E> (&table)[N], E &out) const {
    const Value *v;
    FP8RT_RETURN_IF_ERROR(member(obj, path, key, required, v));
    if (!v)
      return Status();
    std::string where = fieldPath(path, key);
    FP8RT_RETURN_IF_ERROR(expectKind(*v, where, Kind::String));
    std::string list;
    for (const auto &entry : table) {
      if (v->string == entry.name) {
        out = entry.value;
        return Status();
      }
      list += (list.empty() ? "" : ", ") + std::string(entry.name);
    }
    return errorAt(*v, where, "unknown value \"", v->string,
                   "\" (expected one of: ", list, ")");
  }

  // An array of exactly `length` integers in [min, max] (any length when
  // length < 0).
  Status readIntArray(const Value &obj, const std::string &path,
                      const char *key, bool required, int length, int64_t min,
                      int64_t max, std::vector<int64_t> &out) const {
    const Value *v;
    FP8RT_RETURN_IF_ERROR(member(obj, path, key, required, v));
    if (!v)
      return Status();
    std::string where = fieldPath(path, key);
    FP8RT_RETURN_IF_ERROR(expectKind(*v, where, Kind::Array));
    if (length >= 0 && v->array.size() != static_cast<size_t>(length))
      return errorAt(*v, where, "expected ", length, " entries, got ",
                     v->array.size());
    out.clear();
    for (size_t i = 0; i < v->array.size(); ++i) {
      int64_t value;
      FP8RT_RETURN_IF_ERROR(
          readIntValue(v->array[i], indexPath(where, i), min, max, value));
      out.push_back(value);
    }
    return Status();
  }

  // An integer extent in [1, maxConstant] or a symbol string.
  Status readExtent(const Value &v, const std::string &path,
                    int64_t maxConstant, Extent &out) const {
    if (v.kind == Kind::String) {
      if (!isIdentifier(v.string))
        return errorAt(v, path, "\"", v.string,
                       "\" is not a symbol (symbols are identifiers such as "
                       "\"M\")");
      out.symbol = v.string;
      return Status();
    }
    if (v.kind == Kind::Number && v.isInteger)
      return readIntValue(v, path, 1, maxConstant, out.constant);
    return errorAt(v, path, "expected an integer or a symbol string, got ",
                   json::kindName(v.kind));
  }

  // An operand extent: readExtent's forms, "roundup(SYM, INT)" or
  // "ceildiv(SYM, INT)" with INT in [2, 2^20].
  Status readShapeExtent(const Value &v, const std::string &path,
                         Extent &out) const {
    std::string_view text =
        v.kind == Kind::String ? trim(v.string) : std::string_view();
    constexpr std::string_view kRoundUp = "roundup(";
    constexpr std::string_view kCeilDiv = "ceildiv(";
    bool isRoundUp = text.substr(0, kRoundUp.size()) == kRoundUp;
    bool isCeilDiv = text.substr(0, kCeilDiv.size()) == kCeilDiv;
    if (!isRoundUp && !isCeilDiv)
      return readExtent(v, path, kInt64Max, out);
    std::string_view args = text.substr(kRoundUp.size());
    size_t comma = args.find(',');
    bool ok = !args.empty() && args.back() == ')' &&
              comma != std::string_view::npos;
    if (ok) {
      std::string_view symbol = trim(args.substr(0, comma));
      std::string_view operand =
          trim(args.substr(comma + 1, args.size() - comma - 2));
      int64_t &value = isRoundUp ? out.roundUpTo : out.divisor;
      ok = isIdentifier(symbol) && parsePositiveDecimal(operand, value) &&
           value >= 2 && value <= (int64_t(1) << 20);
      out.symbol = std::string(symbol);
    }
    if (!ok)
      return errorAt(v, path, "\"", v.string,
                     "\" is not an extent (expected an integer, a symbol, "
                     "\"roundup(SYM, INT)\" or \"ceildiv(SYM, INT)\" with "
                     "INT in [2, 2^20])");
    return Status();
  }

  Status readStride(const Value &v, const std::string &path,
                    StrideExpr &out) const {
    if (v.kind == Kind::Number) {
      FP8RT_RETURN_IF_ERROR(
          readIntValue(v, path, 16, kTwoPow40 - 1, out.factor));
      if (out.factor % 16 != 0)
        return errorAt(v, path, "stride ", out.factor,
                       " bytes is not a multiple of 16 (TMA requires it)");
      return Status();
    }
    if (v.kind != Kind::String)
      return errorAt(v, path,
                     "expected an integer or a string \"SYM\", \"SYM*INT\" "
                     "or \"INT*SYM\", got ",
                     json::kindName(v.kind));
    std::string_view text = v.string;
    size_t star = text.find('*');
    std::string_view left = trim(text.substr(0, star));
    std::string_view right = star == std::string_view::npos
                                 ? std::string_view()
                                 : trim(text.substr(star + 1));
    int64_t factor = 1;
    bool ok = false;
    if (star == std::string_view::npos) {
      ok = isIdentifier(left);
      out.symbol = std::string(left);
    } else if (isIdentifier(left) && parsePositiveDecimal(right, factor)) {
      ok = true;
      out.symbol = std::string(left);
    } else if (parsePositiveDecimal(left, factor) && isIdentifier(right)) {
      ok = true;
      out.symbol = std::string(right);
    }
    if (!ok || factor >= kTwoPow40)
      return errorAt(v, path, "\"", v.string,
                     "\" is not a stride expression (expected \"SYM\", "
                     "\"SYM*INT\" or \"INT*SYM\" with a positive INT below "
                     "2^40)");
    out.factor = factor;
    return Status();
  }

private:
  std::string_view source_;
};

const EnumName<DType> kDTypes[] = {
    {"e4m3", DType::E4M3}, {"e5m2", DType::E5M2}, {"ue8m0", DType::UE8M0},
    {"bf16", DType::BF16}, {"f16", DType::F16},   {"f32", DType::F32}};
const EnumName<OperandRole> kRoles[] = {{"input", OperandRole::Input},
                                        {"output", OperandRole::Output}};
const EnumName<CUtensorMapInterleave> kInterleaves[] = {
    {"none", CU_TENSOR_MAP_INTERLEAVE_NONE}};
const EnumName<CUtensorMapSwizzle> kSwizzles[] = {
    {"none", CU_TENSOR_MAP_SWIZZLE_NONE},
    {"32B", CU_TENSOR_MAP_SWIZZLE_32B},
    {"64B", CU_TENSOR_MAP_SWIZZLE_64B},
    {"128B", CU_TENSOR_MAP_SWIZZLE_128B}};
const EnumName<CUtensorMapL2promotion> kL2Promotions[] = {
    {"none", CU_TENSOR_MAP_L2_PROMOTION_NONE},
    {"64B", CU_TENSOR_MAP_L2_PROMOTION_L2_64B},
    {"128B", CU_TENSOR_MAP_L2_PROMOTION_L2_128B},
    {"256B", CU_TENSOR_MAP_L2_PROMOTION_L2_256B}};
const EnumName<CUtensorMapFloatOOBfill> kOobFills[] = {
    {"zero", CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE},
    {"nan", CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA}};
const EnumName<ParamKind> kParamKinds[] = {{"tensor_map", ParamKind::TensorMap},
                                           {"pointer", ParamKind::Pointer},
                                           {"i32", ParamKind::I32},
                                           {"i64", ParamKind::I64},
                                           {"workspace", ParamKind::Workspace}};
const EnumName<TensorMapPassing> kPassings[] = {
    {"grid_constant", TensorMapPassing::GridConstant},
    {"global", TensorMapPassing::Global}};
const EnumName<GridKind> kGridKinds[] = {{"persistent", GridKind::Persistent},
                                         {"tiles", GridKind::Tiles},
                                         {"fixed", GridKind::Fixed}};

const char *const kKernelKinds[] = {"gemm",          "quantize",
                                    "amax",          "compute_scale",
                                    "update_amax_history", "dequantize",
                                    "scales_to_mx"};

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

//===----------------------------------------------------------------------===//
// The metadata parser proper
//===----------------------------------------------------------------------===//

class MetadataParser {
public:
  MetadataParser(std::string_view source, KernelMetadata &out)
      : reader_(source), meta_(out) {}

  Status parse(const Value &root) {
    FP8RT_RETURN_IF_ERROR(reader_.expectKind(root, "", Kind::Object));
    // Format and version first: a file of another format or version should
    // say so rather than fail on some field it does not have.
    std::string format;
    FP8RT_RETURN_IF_ERROR(reader_.readString(root, "", "format", true, format));
    if (format != "fp8-mlir-kernel")
      return reader_.errorAt(*root.find("format"), "format", "\"", format,
                             "\" is not \"fp8-mlir-kernel\"");
    int64_t version;
    FP8RT_RETURN_IF_ERROR(
        reader_.readInt(root, "", "version", true, 0, kInt64Max, version));
    if (version != 1)
      return reader_.errorAt(*root.find("version"), "version",
                             "unsupported version ", version,
                             " (this runtime reads version 1)");
    FP8RT_RETURN_IF_ERROR(reader_.expectObject(
        root, "",
        {"format", "version", "name", "entry", "chip", "ptx", "cubin", "block",
         "cluster", "dynamic_shared_memory_bytes", "grid", "operands",
         "tensor_maps", "params", "kind", "variants", "variant_of",
         // Describe the computation for tools (checks, benchmarks); the
         // launch does not depend on them.
         "gemm", "quantize", "compute_scale", "update_amax_history",
         "dequantize", "scales_to_mx"}));
    FP8RT_RETURN_IF_ERROR(parseKind(root));

    FP8RT_RETURN_IF_ERROR(
        reader_.readString(root, "", "name", true, meta_.name));
    FP8RT_RETURN_IF_ERROR(
        reader_.readString(root, "", "entry", true, meta_.entry));
    if (!isPtxIdentifier(meta_.entry))
      return reader_.errorAt(*root.find("entry"), "entry", "\"", meta_.entry,
                             "\" is not a PTX identifier");
    FP8RT_RETURN_IF_ERROR(parseChip(root));
    FP8RT_RETURN_IF_ERROR(
        reader_.readString(root, "", "ptx", false, meta_.ptxFile));
    FP8RT_RETURN_IF_ERROR(
        reader_.readString(root, "", "cubin", false, meta_.cubinFile));
    if (meta_.ptxFile.empty() && meta_.cubinFile.empty())
      return reader_.errorAt(root, "",
                             "missing required field \"ptx\" (or "
                             "\"cubin\")");
    FP8RT_RETURN_IF_ERROR(parseBlockAndCluster(root));
    int64_t smem = 0;
    FP8RT_RETURN_IF_ERROR(reader_.readInt(
        root, "", "dynamic_shared_memory_bytes", true, 0, INT32_MAX, smem));
    meta_.dynamicSharedMemoryBytes = static_cast<uint32_t>(smem);

    FP8RT_RETURN_IF_ERROR(parseOperands(root));
    FP8RT_RETURN_IF_ERROR(parseTensorMaps(root));
    FP8RT_RETURN_IF_ERROR(parseParams(root));
    FP8RT_RETURN_IF_ERROR(parseGrid(root));
    FP8RT_RETURN_IF_ERROR(parseVariants(root));
    return layoutParams(root);
  }

private:
  Reader reader_;
  KernelMetadata &meta_;
  // Symbols some operand shape binds at launch; anything else that names a
  // symbol must name one of these.
  std::set<std::string> bindableSymbols_;

  static bool isPtxIdentifier(std::string_view s) {
    if (s.empty())
      return false;
    auto isAlnum = [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
             (c >= '0' && c <= '9') || c == '_' || c == '$';
    };
    if ((s[0] >= '0' && s[0] <= '9'))
      return false;
    return std::all_of(s.begin(), s.end(), isAlnum);
  }

  // "kind": what the kernel computes, one of kKernelKinds (default
  // "gemm"); its description, if any, is under the key of that name.
  Status parseKind(const Value &root) {
    std::string kind = "gemm";
    FP8RT_RETURN_IF_ERROR(reader_.readString(root, "", "kind", false, kind));
    bool known = std::any_of(std::begin(kKernelKinds), std::end(kKernelKinds),
                             [&](const char *k) { return kind == k; });
    if (!known)
      return reader_.errorAt(*root.find("kind"), "kind", "\"", kind,
                             "\" is not a kernel kind (gemm, quantize, amax, "
                             "compute_scale, update_amax_history, "
                             "dequantize, scales_to_mx)");
    meta_.kind = kind;
    return Status();
  }

  Status parseChip(const Value &root) {
    FP8RT_RETURN_IF_ERROR(
        reader_.readString(root, "", "chip", true, meta_.chip));
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
      return reader_.errorAt(*root.find("chip"), "chip", "\"", meta_.chip,
                             "\" is not a chip name like \"sm_90a\"");
    int number = std::stoi(std::string(rest));
    meta_.chipMajor = number / 10;
    meta_.chipMinor = number % 10;
    meta_.chipSuffix = suffix;
    return Status();
  }

  Status parseBlockAndCluster(const Value &root) {
    std::vector<int64_t> block;
    FP8RT_RETURN_IF_ERROR(
        reader_.readIntArray(root, "", "block", true, 3, 1, 1024, block));
    if (block[2] > 64 || block[0] * block[1] * block[2] > 1024)
      return reader_.errorAt(*root.find("block"), "block", "[", block[0], ", ",
                             block[1], ", ", block[2],
                             "] exceeds CUDA's limits (z <= 64, at most 1024 "
                             "threads)");
    std::vector<int64_t> cluster = {1, 1, 1};
    FP8RT_RETURN_IF_ERROR(
        reader_.readIntArray(root, "", "cluster", false, 3, 1, 16, cluster));
    if (cluster[0] * cluster[1] * cluster[2] > 16)
      return reader_.errorAt(*root.find("cluster"), "cluster",
                             "more than 16 blocks per cluster");
    for (int i = 0; i < 3; ++i) {
      meta_.block[i] = static_cast<uint32_t>(block[i]);
      meta_.cluster[i] = static_cast<uint32_t>(cluster[i]);
    }
    return Status();
  }

  Status parseOperands(const Value &root) {
    const Value *list;
    FP8RT_RETURN_IF_ERROR(reader_.member(root, "", "operands", true, list));
    FP8RT_RETURN_IF_ERROR(reader_.expectKind(*list, "operands", Kind::Array));
    if (list->array.empty())
      return reader_.errorAt(*list, "operands", "must not be empty");
    for (size_t i = 0; i < list->array.size(); ++i) {
      const Value &v = list->array[i];
      std::string path = indexPath("operands", i);
      FP8RT_RETURN_IF_ERROR(reader_.expectObject(
          v, path,
          {"name", "dtype", "shape", "role", "optional", "alignment"}));
      OperandSpec op;
      FP8RT_RETURN_IF_ERROR(reader_.readString(v, path, "name", true, op.name));
      if (meta_.findOperand(op.name) >= 0)
        return reader_.errorAt(*v.find("name"), path + ".name",
                               "duplicate operand name \"", op.name, "\"");
      FP8RT_RETURN_IF_ERROR(
          reader_.readEnum(v, path, "dtype", true, kDTypes, op.dtype));
      const Value *shape;
      FP8RT_RETURN_IF_ERROR(reader_.member(v, path, "shape", true, shape));
      FP8RT_RETURN_IF_ERROR(
          reader_.expectKind(*shape, path + ".shape", Kind::Array));
      if (shape->array.size() > FP8RT_MAX_RANK)
        return reader_.errorAt(*shape, path + ".shape", "rank ",
                               shape->array.size(), " exceeds the maximum of ",
                               FP8RT_MAX_RANK);
      for (size_t d = 0; d < shape->array.size(); ++d) {
        Extent extent;
        FP8RT_RETURN_IF_ERROR(reader_.readShapeExtent(
            shape->array[d], indexPath(path + ".shape", d), extent));
        op.shape.push_back(extent);
      }
      FP8RT_RETURN_IF_ERROR(
          reader_.readEnum(v, path, "role", true, kRoles, op.role));
      FP8RT_RETURN_IF_ERROR(reader_.readBool(v, path, "optional", op.optional));
      op.alignmentBytes = dtypeSize(op.dtype);
      FP8RT_RETURN_IF_ERROR(reader_.readInt(v, path, "alignment", false, 1,
                                            4096, op.alignmentBytes));
      if ((op.alignmentBytes & (op.alignmentBytes - 1)) != 0)
        return reader_.errorAt(*v.find("alignment"), path + ".alignment",
                               op.alignmentBytes, " is not a power of two");
      // Optional operands bind symbols too, but only when present; a symbol
      // that only absent operands name is reported at launch.
      for (const Extent &e : op.shape)
        if (e.isSymbol() && !e.isDerived())
          bindableSymbols_.insert(e.symbol);
      meta_.operands.push_back(std::move(op));
    }
    // A derived extent checks a symbol some operand binds.
    for (size_t i = 0; i < meta_.operands.size(); ++i)
      for (size_t d = 0; d < meta_.operands[i].shape.size(); ++d)
        if (meta_.operands[i].shape[d].isDerived()) {
          const Value &entry = list->array[i].find("shape")->array[d];
          FP8RT_RETURN_IF_ERROR(checkBindable(
              entry, indexPath(indexPath("operands", i) + ".shape", d),
              meta_.operands[i].shape[d].symbol));
        }
    return Status();
  }

  Status checkBindable(const Value &where, const std::string &path,
                       const std::string &symbol) const {
    if (bindableSymbols_.count(symbol))
      return Status();
    return reader_.errorAt(where, path, "symbol \"", symbol,
                           "\" does not appear in any operand shape, so no "
                           "launch can bind it");
  }

  Status parseTensorMaps(const Value &root) {
    const Value *list;
    FP8RT_RETURN_IF_ERROR(reader_.member(root, "", "tensor_maps", false, list));
    if (!list)
      return Status();
    FP8RT_RETURN_IF_ERROR(
        reader_.expectKind(*list, "tensor_maps", Kind::Array));
    for (size_t i = 0; i < list->array.size(); ++i) {
      const Value &v = list->array[i];
      std::string path = indexPath("tensor_maps", i);
      FP8RT_RETURN_IF_ERROR(reader_.expectObject(
          v, path,
          {"name", "operand", "dtype", "rank", "dims", "strides_bytes", "box",
           "element_strides", "interleave", "swizzle", "l2_promotion",
           "oob_fill"}));
      TensorMapSpec map;
      FP8RT_RETURN_IF_ERROR(
          reader_.readString(v, path, "name", true, map.name));
      for (const TensorMapSpec &other : meta_.tensorMaps)
        if (other.name == map.name)
          return reader_.errorAt(*v.find("name"), path + ".name",
                                 "duplicate tensor map name \"", map.name,
                                 "\"");
      std::string operandName;
      FP8RT_RETURN_IF_ERROR(
          reader_.readString(v, path, "operand", true, operandName));
      map.operand = meta_.findOperand(operandName);
      if (map.operand < 0)
        return reader_.errorAt(*v.find("operand"), path + ".operand",
                               "unknown operand \"", operandName, "\"");
      const OperandSpec &operand = meta_.operands[map.operand];
      if (operand.optional)
        return reader_.errorAt(*v.find("operand"), path + ".operand",
                               "operand \"", operandName,
                               "\" is optional; tensor maps need an operand "
                               "that is always present");
      FP8RT_RETURN_IF_ERROR(
          reader_.readEnum(v, path, "dtype", true, kDTypes, map.dtype));
      if (map.dtype != operand.dtype)
        return reader_.errorAt(*v.find("dtype"), path + ".dtype", "dtype ",
                               dtypeName(map.dtype), " differs from operand \"",
                               operandName, "\"'s dtype ",
                               dtypeName(operand.dtype));
      int64_t rank;
      FP8RT_RETURN_IF_ERROR(
          reader_.readInt(v, path, "rank", true, 1, kMaxTensorMapRank, rank));
      map.rank = static_cast<int>(rank);
      FP8RT_RETURN_IF_ERROR(parseTensorMapDims(v, path, map));
      FP8RT_RETURN_IF_ERROR(parseTensorMapBox(v, path, map));
      FP8RT_RETURN_IF_ERROR(reader_.readEnum(v, path, "interleave", false,
                                             kInterleaves, map.interleave));
      FP8RT_RETURN_IF_ERROR(
          reader_.readEnum(v, path, "swizzle", true, kSwizzles, map.swizzle));
      FP8RT_RETURN_IF_ERROR(reader_.readEnum(v, path, "l2_promotion", false,
                                             kL2Promotions, map.l2Promotion));
      FP8RT_RETURN_IF_ERROR(
          reader_.readEnum(v, path, "oob_fill", false, kOobFills, map.oobFill));
      if (map.oobFill == CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA &&
          tensorMapDataType(map.dtype) == CU_TENSOR_MAP_DATA_TYPE_UINT8)
        return reader_.errorAt(*v.find("oob_fill"), path + ".oob_fill",
                               "\"nan\" needs a floating-point TMA type (bf16, "
                               "f16, f32); ",
                               dtypeName(map.dtype), " is encoded as UINT8");
      // TMA's constraints on the box (cuTensorMapEncodeTiled): the inner
      // box row must be a multiple of 16 bytes and, when swizzled, fit in
      // the swizzle span.
      int64_t innerBytes = int64_t(map.box[0]) * dtypeSize(map.dtype);
      if (innerBytes % 16 != 0)
        return reader_.errorAt(*v.find("box"), path + ".box",
                               "inner box dimension ", map.box[0], " x ",
                               dtypeSize(map.dtype), " bytes = ", innerBytes,
                               " bytes is not a multiple of 16");
      int64_t span = swizzleSpanBytes(map.swizzle);
      if (span && innerBytes > span)
        return reader_.errorAt(
            *v.find("box"), path + ".box", "inner box dimension is ",
            innerBytes, " bytes, more than the ", span,
            "-byte span of swizzle \"", v.find("swizzle")->string, "\"");
      meta_.tensorMaps.push_back(std::move(map));
    }
    return Status();
  }

  Status parseTensorMapDims(const Value &v, const std::string &path,
                            TensorMapSpec &map) {
    const Value *dims;
    FP8RT_RETURN_IF_ERROR(reader_.member(v, path, "dims", true, dims));
    FP8RT_RETURN_IF_ERROR(
        reader_.expectKind(*dims, path + ".dims", Kind::Array));
    if (dims->array.size() != static_cast<size_t>(map.rank))
      return reader_.errorAt(*dims, path + ".dims", "expected ", map.rank,
                             " entries (the rank), got ", dims->array.size());
    for (size_t d = 0; d < dims->array.size(); ++d) {
      Extent extent;
      std::string dimPath = indexPath(path + ".dims", d);
      FP8RT_RETURN_IF_ERROR(
          reader_.readExtent(dims->array[d], dimPath, kTwoPow32, extent));
      if (extent.isSymbol())
        FP8RT_RETURN_IF_ERROR(
            checkBindable(dims->array[d], dimPath, extent.symbol));
      map.dims.push_back(extent);
    }
    const Value *strides;
    FP8RT_RETURN_IF_ERROR(
        reader_.member(v, path, "strides_bytes", true, strides));
    FP8RT_RETURN_IF_ERROR(
        reader_.expectKind(*strides, path + ".strides_bytes", Kind::Array));
    if (strides->array.size() != static_cast<size_t>(map.rank - 1))
      return reader_.errorAt(*strides, path + ".strides_bytes", "expected ",
                             map.rank - 1, " entries (rank - 1), got ",
                             strides->array.size());
    for (size_t d = 0; d < strides->array.size(); ++d) {
      StrideExpr stride;
      std::string stridePath = indexPath(path + ".strides_bytes", d);
      FP8RT_RETURN_IF_ERROR(
          reader_.readStride(strides->array[d], stridePath, stride));
      if (!stride.symbol.empty())
        FP8RT_RETURN_IF_ERROR(
            checkBindable(strides->array[d], stridePath, stride.symbol));
      map.stridesBytes.push_back(stride);
    }
    return Status();
  }

  Status parseTensorMapBox(const Value &v, const std::string &path,
                           TensorMapSpec &map) {
    std::vector<int64_t> box;
    FP8RT_RETURN_IF_ERROR(
        reader_.readIntArray(v, path, "box", true, map.rank, 1, 256, box));
    std::vector<int64_t> elementStrides(map.rank, 1);
    FP8RT_RETURN_IF_ERROR(reader_.readIntArray(
        v, path, "element_strides", false, map.rank, 1, 8, elementStrides));
    for (int d = 0; d < map.rank; ++d) {
      map.box[d] = static_cast<uint32_t>(box[d]);
      map.elementStrides[d] = static_cast<uint32_t>(elementStrides[d]);
    }
    return Status();
  }

  Status parseParams(const Value &root) {
    const Value *list;
    FP8RT_RETURN_IF_ERROR(reader_.member(root, "", "params", true, list));
    FP8RT_RETURN_IF_ERROR(reader_.expectKind(*list, "params", Kind::Array));
    for (size_t i = 0; i < list->array.size(); ++i) {
      const Value &v = list->array[i];
      std::string path = indexPath("params", i);
      FP8RT_RETURN_IF_ERROR(reader_.expectKind(v, path, Kind::Object));
      ParamSpec param;
      FP8RT_RETURN_IF_ERROR(
          reader_.readEnum(v, path, "kind", true, kParamKinds, param.kind));
      switch (param.kind) {
      case ParamKind::TensorMap:
        FP8RT_RETURN_IF_ERROR(reader_.expectObject(
            v, path, {"name", "kind", "tensor_map", "passing"}));
        break;
      case ParamKind::Pointer:
        FP8RT_RETURN_IF_ERROR(
            reader_.expectObject(v, path, {"name", "kind", "operand"}));
        break;
      case ParamKind::I32:
      case ParamKind::I64:
        FP8RT_RETURN_IF_ERROR(reader_.expectObject(
            v, path, {"name", "kind", "value", "multiple_of", "reason"}));
        break;
      case ParamKind::Workspace:
        FP8RT_RETURN_IF_ERROR(
            reader_.expectObject(v, path, {"name", "kind", "bytes_per_cta"}));
        break;
      }
      FP8RT_RETURN_IF_ERROR(
          reader_.readString(v, path, "name", true, param.name));
      for (const ParamSpec &other : meta_.params)
        if (other.name == param.name)
          return reader_.errorAt(*v.find("name"), path + ".name",
                                 "duplicate param name \"", param.name, "\"");
      if (param.kind == ParamKind::TensorMap) {
        std::string mapName;
        FP8RT_RETURN_IF_ERROR(
            reader_.readString(v, path, "tensor_map", true, mapName));
        for (size_t m = 0; m < meta_.tensorMaps.size(); ++m)
          if (meta_.tensorMaps[m].name == mapName)
            param.tensorMap = static_cast<int>(m);
        if (param.tensorMap < 0)
          return reader_.errorAt(*v.find("tensor_map"), path + ".tensor_map",
                                 "unknown tensor map \"", mapName, "\"");
        meta_.tensorMaps[param.tensorMap].usedByParam = true;
        FP8RT_RETURN_IF_ERROR(reader_.readEnum(v, path, "passing", true,
                                               kPassings, param.passing));
        if (param.passing == TensorMapPassing::Global)
          meta_.hasGlobalTensorMaps = true;
      } else if (param.kind == ParamKind::Workspace) {
        if (meta_.workspaceParam >= 0)
          return reader_.errorAt(v, path,
                                 "a kernel has at most one workspace param");
        FP8RT_RETURN_IF_ERROR(reader_.readInt(v, path, "bytes_per_cta", true,
                                              1, kMaxWorkspaceBytesPerCta,
                                              param.workspaceBytesPerCta));
        meta_.workspaceParam = static_cast<int>(meta_.params.size());
      } else if (param.kind == ParamKind::Pointer) {
        std::string operandName;
        FP8RT_RETURN_IF_ERROR(
            reader_.readString(v, path, "operand", true, operandName));
        param.operand = meta_.findOperand(operandName);
        if (param.operand < 0)
          return reader_.errorAt(*v.find("operand"), path + ".operand",
                                 "unknown operand \"", operandName, "\"");
      } else {
        const Value *value;
        FP8RT_RETURN_IF_ERROR(reader_.member(v, path, "value", true, value));
        std::string valuePath = path + ".value";
        if (value->kind == Kind::String) {
          FP8RT_RETURN_IF_ERROR(
              reader_.readExtent(*value, valuePath, 0, param.value));
          FP8RT_RETURN_IF_ERROR(
              checkBindable(*value, valuePath, param.value.symbol));
          FP8RT_RETURN_IF_ERROR(reader_.readInt(v, path, "multiple_of", false,
                                                2, int64_t(1) << 20,
                                                param.multipleOf));
          FP8RT_RETURN_IF_ERROR(reader_.readString(
              v, path, "reason", false, param.multipleOfReason));
        } else {
          bool is32 = param.kind == ParamKind::I32;
          FP8RT_RETURN_IF_ERROR(reader_.readIntValue(
              *value, valuePath, is32 ? INT32_MIN : INT64_MIN,
              is32 ? INT32_MAX : INT64_MAX, param.value.constant));
        }
      }
      meta_.params.push_back(std::move(param));
    }
    return Status();
  }

  Status parseGrid(const Value &root) {
    const Value *grid;
    FP8RT_RETURN_IF_ERROR(reader_.member(root, "", "grid", true, grid));
    FP8RT_RETURN_IF_ERROR(reader_.expectKind(*grid, "grid", Kind::Object));
    GridSpec &spec = meta_.grid;
    FP8RT_RETURN_IF_ERROR(
        reader_.readEnum(*grid, "grid", "kind", true, kGridKinds, spec.kind));
    if (spec.kind == GridKind::Fixed) {
      FP8RT_RETURN_IF_ERROR(
          reader_.expectObject(*grid, "grid", {"kind", "dims"}));
      std::vector<int64_t> dims;
      FP8RT_RETURN_IF_ERROR(reader_.readIntArray(*grid, "grid", "dims", true, 3,
                                                 1, INT32_MAX, dims));
      if (dims[1] > 65535 || dims[2] > 65535)
        return reader_.errorAt(*grid->find("dims"), "grid.dims",
                               "y and z must be <= 65535");
      for (int i = 0; i < 3; ++i)
        spec.fixed[i] = static_cast<uint32_t>(dims[i]);
      return Status();
    }
    FP8RT_RETURN_IF_ERROR(reader_.expectObject(
        *grid, "grid", {"kind", "tile_m", "tile_n", "operand", "throughput"}));
    if (const Value *throughput = grid->find("throughput")) {
      if (spec.kind != GridKind::Persistent)
        return reader_.errorAt(*throughput, "grid.throughput",
                               "only a \"persistent\" grid has a throughput");
      FP8RT_RETURN_IF_ERROR(reader_.readInt(*grid, "grid", "throughput", true,
                                            1, 1000, spec.throughput));
    }
    FP8RT_RETURN_IF_ERROR(reader_.readInt(*grid, "grid", "tile_m", true, 1,
                                          INT32_MAX, spec.tileM));
    FP8RT_RETURN_IF_ERROR(reader_.readInt(*grid, "grid", "tile_n", true, 1,
                                          INT32_MAX, spec.tileN));
    std::string operandName;
    FP8RT_RETURN_IF_ERROR(
        reader_.readString(*grid, "grid", "operand", false, operandName));
    const Value *where = grid->find("operand") ? grid->find("operand") : grid;
    if (operandName.empty()) {
      for (size_t i = 0; i < meta_.operands.size() && operandName.empty(); ++i)
        if (meta_.operands[i].role == OperandRole::Output)
          operandName = meta_.operands[i].name;
      if (operandName.empty())
        return reader_.errorAt(*grid, "grid",
                               "no operand has role \"output\"; name the "
                               "[M, N] operand with \"operand\"");
    }
    spec.problemOperand = meta_.findOperand(operandName);
    if (spec.problemOperand < 0)
      return reader_.errorAt(*where, "grid.operand", "unknown operand \"",
                             operandName, "\"");
    const OperandSpec &op = meta_.operands[spec.problemOperand];
    if (op.shape.size() != 2 || op.optional)
      return reader_.errorAt(*where, "grid.operand", "operand \"", operandName,
                             "\" must be a non-optional rank-2 [M, N] operand "
                             "to define the grid");
    return Status();
  }

  // "variants": metadata files (relative to this one's directory) of the
  // same GEMM with other tiles, among which the launch picks by M;
  // "variant_of": the kernel a variant belongs to (for tools).
  Status parseVariants(const Value &root) {
    FP8RT_RETURN_IF_ERROR(
        reader_.readString(root, "", "variant_of", false, meta_.variantOf));
    const Value *variants;
    FP8RT_RETURN_IF_ERROR(reader_.member(root, "", "variants", false, variants));
    if (!variants)
      return Status();
    FP8RT_RETURN_IF_ERROR(
        reader_.expectKind(*variants, "variants", Kind::Array));
    if (meta_.grid.kind != GridKind::Persistent)
      return reader_.errorAt(*variants, "variants",
                             "only a kernel with a \"persistent\" grid has "
                             "launch variants");
    if (!meta_.variantOf.empty())
      return reader_.errorAt(*variants, "variants",
                             "a variant (\"variant_of\") has no variants");
    for (const Value &file : variants->array) {
      FP8RT_RETURN_IF_ERROR(reader_.expectKind(file, "variants[]", Kind::String));
      if (file.string.empty())
        return reader_.errorAt(file, "variants[]", "must not be empty");
      meta_.variantFiles.push_back(file.string);
    }
    return Status();
  }

  // Places each param at the next multiple of its alignment, as the CUDA
  // ABI lays out kernel parameters.
  Status layoutParams(const Value &root) {
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
      return reader_.errorAt(*root.find("params"), "params",
                             "the parameters "
                             "take ",
                             offset,
                             " bytes, more than CUDA's limit "
                             "of ",
                             kMaxParamBufferBytes);
    return Status();
  }
};

} // namespace

Status parseKernelMetadata(std::string_view jsonText,
                           std::string_view sourceName, KernelMetadata &out) {
  json::Value root;
  json::ParseError error;
  if (!json::parse(jsonText, root, error))
    return invalidMetadata(sourceName, ":", error.location.line, ":",
                           error.location.column,
                           ": invalid JSON: ", error.message);
  out = KernelMetadata();
  return MetadataParser(sourceName, out).parse(root);
}

} // namespace fp8rt
