#include "LaunchArguments.h"

#include "CudaLimits.h"
#include "fp8schema/LaunchVariantModel.h"

#include <cmath>

#include <cstring>
#include <tuple>

namespace fp8rt {

namespace {

constexpr uint64_t kTwoPow32 = uint64_t(1) << 32;
constexpr uint64_t kTwoPow40 = uint64_t(1) << 40;

std::string shapeString(const std::vector<Expr> &shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    out += (i ? ", " : "") + shape[i].str();
  return out + "]";
}

int64_t ceilDiv(int64_t a, int64_t b) { return a / b + (a % b != 0); }

// Where a symbol got its value, for "M is 128 (bound by ...)" messages.
struct Binding {
  std::string symbol;
  int64_t value;
  std::string origin;
};

// The kernels read their inputs while they write their outputs, in no
// particular order: an output sharing a byte with any other operand (input
// or output) gives results that depend on the schedule, unless it is the
// very memory of the input the metadata says it may update in place.
bool overlap(const BoundOperand &a, const BoundOperand &b) {
  // sizeBytes is at least one element: every extent is >= 1.
  return a.address < b.address + static_cast<uint64_t>(b.sizeBytes) &&
         b.address < a.address + static_cast<uint64_t>(a.sizeBytes);
}

std::string byteRange(const BoundOperand &b) {
  return strCat("bytes [", hex(b.address), ", ",
                hex(b.address + static_cast<uint64_t>(b.sizeBytes)), ")");
}

Status checkOutputsDoNotOverlap(const KernelMetadata &meta,
                                const LaunchArguments &args) {
  for (size_t i = 0; i < meta.operands.size(); ++i) {
    const BoundOperand &out = args.operands[i];
    if (!out.present || meta.operands[i].role != OperandRole::Output)
      continue;
    for (size_t j = 0; j < meta.operands.size(); ++j) {
      const BoundOperand &other = args.operands[j];
      if (j == i || !other.present || !overlap(out, other))
        continue;
      // The input the output may update in place, passed whole.
      if (meta.operands[i].inPlaceOf == static_cast<int>(j) &&
          out.address == other.address && out.sizeBytes == other.sizeBytes)
        continue;
      const OperandSpec &otherSpec = meta.operands[j];
      return invalidArgument(
          "operand \"", meta.operands[i].name, "\" (an output, ",
          byteRange(out), ") overlaps operand \"", otherSpec.name, "\" (",
          otherSpec.role == OperandRole::Output ? "an output" : "an input",
          ", ", byteRange(other),
          "); each output needs memory no other operand uses");
    }
  }
  return Status();
}

class Binder {
public:
  Binder(const KernelMetadata &meta, LaunchArguments &out)
      : meta_(meta), out_(out) {}

  Status bind(const fp8rt_tensor *operands, int numOperands) {
    if (numOperands < 0)
      return invalidArgument("num_operands is ", numOperands,
                             "; it must be >= 0");
    if (numOperands > 0 && !operands)
      return invalidArgument("operands is NULL but num_operands is ",
                             numOperands);
    FP8RT_RETURN_IF_ERROR(matchNames(operands, numOperands));
    out_.operands.assign(meta_.operands.size(), BoundOperand());
    for (size_t i = 0; i < meta_.operands.size(); ++i)
      FP8RT_RETURN_IF_ERROR(bindOperand(static_cast<int>(i)));
    // Derived extents, once every symbol is bound.
    for (auto [index, d] : derived_)
      FP8RT_RETURN_IF_ERROR(checkDerivedExtent(index, d));
    for (const Binding &b : bindings_)
      out_.symbols.emplace_back(b.symbol, b.value);
    out_.tensorMaps.assign(meta_.tensorMaps.size(), ResolvedTensorMap());
    for (size_t i = 0; i < meta_.tensorMaps.size(); ++i)
      if (meta_.tensorMaps[i].usedByParam)
        FP8RT_RETURN_IF_ERROR(resolveTensorMap(i));
    FP8RT_RETURN_IF_ERROR(resolveScalarParams());
    if (meta_.grid.kind != GridKind::Fixed) {
      const BoundOperand &problem = out_.operands[meta_.grid.problemOperand];
      size_t rank = problem.shape.size();
      out_.problemM = problem.shape[rank - 2];
      out_.problemN = problem.shape[rank - 1];
      out_.problemBatch = rank == 3 ? problem.shape[0] : 1;
    }
    GridDims grid;
    FP8RT_RETURN_IF_ERROR(computeGrid(meta_, out_, 1, grid)); // the limits
    return checkOutputsDoNotOverlap(meta_, out_);
  }

private:
  const KernelMetadata &meta_;
  LaunchArguments &out_;
  std::vector<int> given_; // per metadata operand: index into the call's
                           // operands array, or -1
  const fp8rt_tensor *operands_ = nullptr;
  std::vector<Binding> bindings_;
  // (operand, dim) of the present operands' derived extents (neither a
  // constant nor a plain symbol, e.g. "roundup(M, 4)").
  std::vector<std::pair<int, int>> derived_;

  // "; M is bound by ..., N by ..." for the symbols of `expr`: where the
  // user's value came from.
  std::string describeBindings(const Expr &expr) const {
    std::string text;
    for (const std::string &symbol : expr.symbols())
      if (const Binding *b = findBinding(symbol))
        text += strCat(text.empty() ? "; " : ", ", symbol,
                       text.empty() ? " is bound by " : " by ", b->origin);
    return text;
  }

  const Binding *findBinding(const std::string &symbol) const {
    for (const Binding &b : bindings_)
      if (b.symbol == symbol)
        return &b;
    return nullptr;
  }

  std::string operandNames() const {
    std::string names;
    for (const OperandSpec &op : meta_.operands)
      names += (names.empty() ? "" : ", ") + op.name;
    return names;
  }

  Status matchNames(const fp8rt_tensor *operands, int numOperands) {
    operands_ = operands;
    given_.assign(meta_.operands.size(), -1);
    for (int i = 0; i < numOperands; ++i) {
      const char *name = operands[i].name;
      if (!name)
        return invalidArgument("operands[", i, "].name is NULL");
      int index = meta_.findOperand(name);
      if (index < 0)
        return invalidArgument(
            "operands[", i, "]: unknown operand \"", name,
            "\" (the kernel's operands are: ", operandNames(), ")");
      if (given_[index] >= 0)
        return invalidArgument("operand \"", name, "\" is given twice (",
                               "operands[", given_[index], "] and operands[", i,
                               "])");
      given_[index] = i;
    }
    return Status();
  }

  Status bindOperand(int index) {
    const OperandSpec &spec = meta_.operands[index];
    BoundOperand &bound = out_.operands[index];
    std::string what = strCat("operand \"", spec.name, "\": ");
    if (given_[index] < 0) {
      if (spec.optional)
        return Status();
      return invalidArgument("missing operand \"", spec.name, "\" (",
                             dtypeName(spec.dtype), " ",
                             shapeString(spec.shape), ")");
    }
    const fp8rt_tensor &t = operands_[given_[index]];
    if (!t.data) {
      if (spec.optional)
        return Status();
      return invalidArgument(what, "data is NULL; only optional operands may "
                                   "be NULL");
    }
    DType dtype;
    if (!dtypeFromC(static_cast<int>(t.dtype), dtype))
      return invalidArgument(what, "dtype ", static_cast<int>(t.dtype),
                             " is not an fp8rt_dtype value");
    if (dtype != spec.dtype)
      return invalidArgument(what, "dtype is ", dtypeName(dtype), ", expected ",
                             dtypeName(spec.dtype));
    int rank = static_cast<int>(spec.shape.size());
    if (t.rank != rank)
      return invalidArgument(what, "rank is ", t.rank, ", expected ", rank,
                             " (shape ", shapeString(spec.shape), ")");
    for (int d = 0; d < rank; ++d)
      FP8RT_RETURN_IF_ERROR(bindExtent(spec, t, d));
    FP8RT_RETURN_IF_ERROR(checkStrides(spec, t));

    int64_t bytes = dtypeSize(dtype);
    for (int d = 0; d < rank; ++d)
      if (__builtin_mul_overflow(bytes, t.shape[d], &bytes))
        return invalidArgument(what, "shape ", list(t.shape, rank),
                               " is too large (its size in bytes overflows "
                               "int64)");
    CUdeviceptr address = reinterpret_cast<uintptr_t>(t.data);
    if (address % static_cast<uint64_t>(spec.alignmentBytes) != 0)
      return invalidArgument(what, "data ", hex(address), " is not ",
                             spec.alignmentBytes,
                             "-byte aligned (the kernel requires it)");
    bound.present = true;
    bound.address = address;
    bound.shape.assign(t.shape, t.shape + rank);
    bound.sizeBytes = bytes;
    return Status();
  }

  Status bindExtent(const OperandSpec &spec, const fp8rt_tensor &t, int d) {
    const Expr &expected = spec.shape[d];
    int64_t actual = t.shape[d];
    std::string what = strCat("operand \"", spec.name, "\": shape[", d, "]");
    if (expected.isSymbol())
      what += strCat(" (", expected.name(), ")");
    if (actual < 1)
      return invalidArgument(what, " is ", actual, "; ",
                             expected.isSymbol() ? expected.name()
                                                 : std::string("it"),
                             " must be >= 1");
    if (expected.isConstant()) {
      if (actual != expected.value())
        return invalidArgument(what, " is ", actual, ", expected ",
                               expected.value(), " (shape ",
                               shapeString(spec.shape), ")");
      return Status();
    }
    if (!expected.isSymbol()) {
      derived_.emplace_back(static_cast<int>(&spec - meta_.operands.data()), d);
      return Status();
    }
    if (const Binding *b = findBinding(expected.name())) {
      if (b->value != actual)
        return invalidArgument(what, " is ", actual, ", but ", b->symbol,
                               " is ", b->value, " (bound by ", b->origin, ")");
      return Status();
    }
    bindings_.push_back(
        Binding{expected.name(), actual,
                strCat("operand \"", spec.name, "\" shape[", d, "]")});
    return Status();
  }

  // shape[d] of operand `index` is an expression of bound symbols, such as
  // roundup(SYM, INT) or ceildiv(SYM, INT).
  Status checkDerivedExtent(int index, int d) {
    const OperandSpec &spec = meta_.operands[index];
    const Expr &expected = spec.shape[d];
    int64_t actual = operands_[given_[index]].shape[d];
    std::string what = strCat("operand \"", spec.name, "\": shape[", d, "] (",
                              expected.str(), ")");
    std::string bound;
    for (const std::string &symbol : expected.symbols()) {
      const Binding *b = findBinding(symbol);
      if (!b)
        return invalidArgument(what, ": symbol \"", symbol,
                               "\" is only named by absent optional operands");
      bound += strCat(bound.empty() ? "" : "; ", b->symbol, " is ", b->value,
                      ", bound by ", b->origin);
    }
    int64_t value = 0;
    FP8RT_RETURN_IF_ERROR(evaluate(expected, what, value));
    if (actual != value)
      return invalidArgument(what, " is ", actual, ", expected ", value, " (",
                             bound, ")");
    return Status();
  }

  // Every symbol `e` names is bound (`user` names it in the error).
  Status checkBound(const Expr &e, const std::string &user) const {
    for (const std::string &symbol : e.symbols())
      if (!findBinding(symbol))
        return invalidArgument(user, " needs symbol ", symbol,
                               ", but no operand given to this launch binds "
                               "it (only absent optional operands name it)");
    return Status();
  }

  // The value of `e` for the bound symbols; false on overflow.
  bool tryEvaluate(const Expr &e, int64_t &value) const {
    std::string error;
    return e.evaluate(
        [&](const std::string &symbol, int64_t &out) {
          const Binding *b = findBinding(symbol);
          if (b)
            out = b->value;
          return b != nullptr;
        },
        value, error);
  }

  // The value of `e` for the bound symbols (`user` names it in errors).
  Status evaluate(const Expr &e, const std::string &user,
                  int64_t &value) const {
    FP8RT_RETURN_IF_ERROR(checkBound(e, user));
    if (!tryEvaluate(e, value))
      return invalidArgument(user, ": ", e.str(), " overflows int64");
    return Status();
  }

  // The kernels take no strides: operands must be dense row-major. Strides
  // are accepted so that callers holding strided views get an error rather
  // than wrong results.
  Status checkStrides(const OperandSpec &spec, const fp8rt_tensor &t) const {
    int rank = t.rank;
    bool allZero = true;
    for (int d = 0; d < rank; ++d)
      allZero = allZero && t.strides[d] == 0;
    if (allZero)
      return Status();
    int64_t expected = 1;
    for (int d = rank - 1; d >= 0; --d) {
      if (t.shape[d] != 1 && t.strides[d] != expected) {
        if (d == rank - 1)
          return invalidArgument("operand \"", spec.name, "\": strides[", d,
                                 "] is ", t.strides[d],
                                 "; the innermost stride must be 1 "
                                 "(row-major, contiguous)");
        return invalidArgument(
            "operand \"", spec.name, "\": strides ", list(t.strides, rank),
            " are not dense row-major for shape ", list(t.shape, rank),
            " (strides[", d, "] should be ", expected, ")");
      }
      // An overflowing shape is reported by the byte-size check afterwards.
      if (__builtin_mul_overflow(expected, t.shape[d], &expected))
        expected = INT64_MAX;
    }
    return Status();
  }

  Status resolveTensorMap(size_t mapIndex) {
    const TensorMapSpec &spec = meta_.tensorMaps[mapIndex];
    const BoundOperand &operand = out_.operands[spec.operand];
    const std::string &operandName = meta_.operands[spec.operand].name;
    std::string what = strCat("tensor map \"", spec.name, "\"");
    ResolvedTensorMap &map = out_.tensorMaps[mapIndex];
    map.dataType = tensorMapDataType(spec.dtype);
    map.rank = static_cast<cuuint32_t>(spec.rank);
    map.address = reinterpret_cast<void *>(operand.address);
    map.interleave = spec.interleave;
    map.swizzle = spec.swizzle;
    map.l2Promotion = spec.l2Promotion;
    map.oobFill = spec.oobFill;
    for (int d = 0; d < spec.rank; ++d) {
      map.box[d] = spec.box[d];
      map.elementStrides[d] = spec.elementStrides[d];
    }
    if (operand.address % 16 != 0)
      return invalidArgument(what, ": operand \"", operandName, "\" data ",
                             hex(operand.address),
                             " is not 16-byte aligned (TMA requires it)");
    for (int d = 0; d < spec.rank; ++d) {
      const Expr &dim = spec.dims[d];
      int64_t value = 0;
      FP8RT_RETURN_IF_ERROR(
          evaluate(dim, strCat(what, " dims[", d, "]"), value));
      if (static_cast<uint64_t>(value) > kTwoPow32)
        return invalidArgument(what, ": dims[", d, "] = ", dim.str(), " = ",
                               value, " exceeds TMA's limit of 2^32");
      map.dims[d] = static_cast<cuuint64_t>(value);
    }
    for (int d = 0; d + 1 < spec.rank; ++d) {
      const Expr &stride = spec.stridesBytes[d];
      int64_t value = stride.value();
      if (!stride.isConstant()) {
        FP8RT_RETURN_IF_ERROR(
            checkBound(stride, strCat(what, " strides_bytes[", d, "]")));
        std::string where =
            strCat(what, ": strides_bytes[", d, "] = ", stride.str());
        if (!tryEvaluate(stride, value) || value < 0 ||
            static_cast<uint64_t>(value) >= kTwoPow40)
          return invalidArgument(where, " is not below TMA's limit of 2^40");
        if (value % 16 != 0)
          return invalidArgument(where, " = ", value,
                                 " bytes is not a multiple of 16 (TMA "
                                 "requires it)");
      }
      map.stridesBytes[d] = static_cast<cuuint64_t>(value);
    }
    // The box the kernel reads must stay inside the operand: the last byte
    // TMA can touch is at sum((dims[i]-1) * stride[i]) + dims[0]*elemsize.
    // (Overflow means "beyond" as well.)
    uint64_t reach = 0;
    bool overflow = __builtin_mul_overflow(
        map.dims[0], static_cast<uint64_t>(dtypeSize(spec.dtype)), &reach);
    for (int d = 1; d < spec.rank; ++d) {
      uint64_t term = 0;
      overflow = overflow ||
                 __builtin_mul_overflow(map.dims[d] - 1,
                                        map.stridesBytes[d - 1], &term) ||
                 __builtin_add_overflow(reach, term, &reach);
    }
    if (overflow || reach > static_cast<uint64_t>(operand.sizeBytes))
      return invalidMetadata(
          what, " (dims ", list(map.dims, map.rank), ", strides_bytes ",
          list(map.stridesBytes, map.rank - 1), ") reaches beyond operand \"",
          operandName, "\", which has ", operand.sizeBytes,
          " bytes; the metadata is inconsistent");
    return Status();
  }

  Status resolveScalarParams() {
    out_.scalarValues.assign(meta_.params.size(), 0);
    for (size_t i = 0; i < meta_.params.size(); ++i) {
      const ParamSpec &param = meta_.params[i];
      if (param.kind != ParamKind::I32 && param.kind != ParamKind::I64)
        continue;
      int64_t value = param.value.value();
      if (!param.value.isConstant()) {
        std::string what = strCat("param \"", param.name, "\"");
        FP8RT_RETURN_IF_ERROR(evaluate(param.value, what, value));
        std::string expr = param.value.str();
        if (param.kind == ParamKind::I32 &&
            (value > INT32_MAX || value < INT32_MIN))
          return invalidArgument(what, ": ", expr, " = ", value,
                                 " does not fit in the kernel's i32 "
                                 "parameter (max ",
                                 INT32_MAX, describeBindings(param.value),
                                 ")");
        if (value % param.multipleOf != 0)
          return invalidArgument(what, ": ", expr, " = ", value,
                                 " is not a multiple of ", param.multipleOf,
                                 param.multipleOfReason.empty() ? "" : " (",
                                 param.multipleOfReason,
                                 param.multipleOfReason.empty() ? "" : ")");
      }
      out_.scalarValues[i] = value;
    }
    return Status();
  }
};

uint32_t roundUp(uint64_t value, uint32_t multiple) {
  return static_cast<uint32_t>((value + multiple - 1) / multiple * multiple);
}

} // namespace

bool ResolvedTensorMap::operator==(const ResolvedTensorMap &other) const {
  return dataType == other.dataType && rank == other.rank &&
         address == other.address &&
         std::memcmp(dims, other.dims, sizeof(dims)) == 0 &&
         std::memcmp(stridesBytes, other.stridesBytes, sizeof(stridesBytes)) ==
             0 &&
         std::memcmp(box, other.box, sizeof(box)) == 0 &&
         std::memcmp(elementStrides, other.elementStrides,
                     sizeof(elementStrides)) == 0 &&
         interleave == other.interleave && swizzle == other.swizzle &&
         l2Promotion == other.l2Promotion && oobFill == other.oobFill;
}

bool ResolvedTensorMap::sameExceptAddress(
    const ResolvedTensorMap &other) const {
  ResolvedTensorMap moved = other;
  moved.address = address;
  return *this == moved;
}

std::string ResolvedTensorMap::describe() const {
  return strCat(
      "address ", hex(reinterpret_cast<uintptr_t>(address)), ", dims ",
      list(dims, rank), ", strides_bytes ",
      list(stridesBytes, rank ? rank - 1 : 0), ", box ", list(box, rank),
      ", element_strides ", list(elementStrides, rank), ", type ",
      static_cast<int>(dataType), ", swizzle ", static_cast<int>(swizzle),
      ", l2_promotion ", static_cast<int>(l2Promotion), ", oob_fill ",
      static_cast<int>(oobFill));
}

const int64_t *LaunchArguments::findSymbol(const std::string &symbol) const {
  for (const auto &entry : symbols)
    if (entry.first == symbol)
      return &entry.second;
  return nullptr;
}

Status bindLaunchArguments(const KernelMetadata &meta,
                           const fp8rt_tensor *operands, int numOperands,
                           LaunchArguments &out) {
  out = LaunchArguments();
  return Binder(meta, out).bind(operands, numOperands);
}

Status checkOperandAddresses(const KernelMetadata &meta,
                             const LaunchArguments &args) {
  for (size_t i = 0; i < meta.operands.size(); ++i) {
    const OperandSpec &spec = meta.operands[i];
    const BoundOperand &bound = args.operands[i];
    if (!bound.present)
      continue;
    if (!bound.address)
      return invalidArgument("operand \"", spec.name,
                             "\": data is NULL; only optional operands may "
                             "be NULL");
    if (bound.address % static_cast<uint64_t>(spec.alignmentBytes) != 0)
      return invalidArgument("operand \"", spec.name, "\": data ",
                             hex(bound.address), " is not ",
                             spec.alignmentBytes,
                             "-byte aligned (the kernel requires it)");
  }
  for (const TensorMapSpec &map : meta.tensorMaps) {
    CUdeviceptr address = args.operands[map.operand].address;
    if (map.usedByParam && address % 16 != 0)
      return invalidArgument("tensor map \"", map.name, "\": operand \"",
                             meta.operands[map.operand].name, "\" data ",
                             hex(address),
                             " is not 16-byte aligned (TMA requires it)");
  }
  return checkOutputsDoNotOverlap(meta, args);
}

size_t
selectLaunchVariant(const std::vector<const KernelMetadata *> &candidates,
                    int64_t m, int64_t n, int numSMs,
                    const ResidentClusters &resident) {
  size_t best = 0;
  double bestCost = 0;
  bool found = false;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const KernelMetadata &meta = *candidates[i];
    fp8schema::LaunchShape shape;
    shape.tileM = meta.grid.tileM;
    shape.tileN = meta.grid.tileN;
    shape.throughput = meta.grid.throughput;
    shape.clusterWidth = meta.cluster[0];
    shape.kSplit = meta.grid.kSplit;
    shape.streamK = meta.workspaceParam >= 0;
    shape.swapAB = meta.swapAB;
    int64_t clusters = shape.kSplit <= ResidentClusters::kMaxSize
                           ? resident.counts[shape.kSplit]
                           : 0;
    double cost = fp8schema::launchCost(shape, m, n, numSMs, clusters);
    if (cost < 0)
      continue;
    if (!found || cost < bestCost) {
      best = i;
      bestCost = cost;
      found = true;
    }
  }
  return best;
}

size_t selectExpectedMVariant(
    const std::vector<const KernelMetadata *> &candidates, int64_t expectedM,
    int64_t n, int64_t groups, int numSMs) {
  // Per candidate: (waves, -tiles in the last wave, tile elements, -tile N),
  // the least wins.
  using Key = std::tuple<int64_t, int64_t, int64_t, int64_t>;
  size_t best = 0;
  Key bestKey;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const KernelMetadata &meta = *candidates[i];
    const GridSpec &grid = meta.grid;
    // Saturated: no launch has 2^62 tiles (the kernels count in 32 bits).
    int64_t tiles = ceilDiv(expectedM, grid.tileM);
    for (int64_t factor : {ceilDiv(n, grid.tileN), groups})
      if (__builtin_mul_overflow(tiles, factor, &tiles))
        tiles = INT64_MAX / 2;
    int64_t ctas = fp8schema::persistentCtas(meta.cluster[0], numSMs);
    int64_t waves = ceilDiv(tiles, ctas);
    int64_t lastWave = tiles - (waves - 1) * ctas;
    Key key{waves, -lastWave, grid.tileM * grid.tileN, -grid.tileN};
    if (i == 0 || key < bestKey) {
      best = i;
      bestKey = key;
    }
  }
  return best;
}

Status computeGrid(const KernelMetadata &meta, const LaunchArguments &args,
                   int numSMs, GridDims &out) {
  const GridSpec &grid = meta.grid;
  const uint32_t *cluster = meta.cluster;
  uint64_t x = 1, y = 1, z = 1;
  switch (grid.kind) {
  case GridKind::Fixed:
    x = grid.fixed[0];
    y = grid.fixed[1];
    z = grid.fixed[2];
    break;
  case GridKind::Tiles:
    x = static_cast<uint64_t>(ceilDiv(args.problemN, grid.tileN));
    y = static_cast<uint64_t>(ceilDiv(args.problemM, grid.tileM));
    break;
  case GridKind::Persistent: {
    // One block per SM, but never more blocks than tiles. The cap is kept a
    // multiple of the cluster width so rounding up never exceeds the SMs.
    uint64_t tiles = 0;
    if (__builtin_mul_overflow(
            static_cast<uint64_t>(ceilDiv(args.problemM, grid.tileM)),
            static_cast<uint64_t>(ceilDiv(args.problemN, grid.tileN)), &tiles) ||
        __builtin_mul_overflow(tiles, static_cast<uint64_t>(args.problemBatch),
                               &tiles))
      tiles = UINT64_MAX;
    // The kernels number tiles with 32-bit integers.
    if (tiles > INT32_MAX)
      return invalidArgument("M = ", args.problemM, " and N = ", args.problemN,
                             " make ", tiles, " output tiles of ", grid.tileM,
                             "x", grid.tileN,
                             "; the kernel numbers its tiles in 32 bits (at "
                             "most 2^31 - 1): split the problem along M");
    auto cap =
        static_cast<uint64_t>(fp8schema::persistentCtas(cluster[0], numSMs));
    // A stream-K kernel (the one with a workspace) splits the K blocks of
    // the tiles that do not fill a wave over all its CTAs: with fewer
    // tiles than SMs (a small M) that is every tile, so it takes every SM.
    // A K-split kernel runs a cluster of k_split CTAs per tile.
    uint64_t ctas = tiles;
    if (__builtin_mul_overflow(tiles, static_cast<uint64_t>(grid.kSplit),
                               &ctas))
      ctas = UINT64_MAX;
    x = ctas < cap && meta.workspaceParam < 0 ? ctas : cap;
    break;
  }
  }
  x = roundUp(x, cluster[0]);
  y = roundUp(y, cluster[1]);
  z = roundUp(z, cluster[2]);
  if (x > kMaxGridDimX || y > kMaxGridDimYZ || z > kMaxGridDimYZ)
    return invalidArgument(
        "the grid [", x, ", ", y, ", ", z, "] for M = ", args.problemM,
        ", N = ", args.problemN,
        " exceeds CUDA's limits (x < 2^31, y and z <= ", kMaxGridDimYZ, ")");
  out.x = static_cast<uint32_t>(x);
  out.y = static_cast<uint32_t>(y);
  out.z = static_cast<uint32_t>(z);
  return Status();
}

void packParams(const KernelMetadata &meta, const LaunchArguments &args,
                const CUtensorMap *encodedMaps,
                const CUdeviceptr *deviceAddresses, unsigned char *buffer) {
  std::memset(buffer, 0, meta.paramBufferSize);
  for (size_t i = 0; i < meta.params.size(); ++i) {
    const ParamSpec &param = meta.params[i];
    unsigned char *slot = buffer + param.offset;
    switch (param.kind) {
    case ParamKind::TensorMap:
      if (param.passing == TensorMapPassing::GridConstant)
        std::memcpy(slot, &encodedMaps[param.tensorMap], sizeof(CUtensorMap));
      else
        std::memcpy(slot, &deviceAddresses[i], sizeof(CUdeviceptr));
      break;
    case ParamKind::Workspace:
      std::memcpy(slot, &deviceAddresses[i], sizeof(CUdeviceptr));
      break;
    case ParamKind::Pointer: {
      CUdeviceptr address = args.operands[param.operand].address;
      std::memcpy(slot, &address, sizeof(address));
      break;
    }
    case ParamKind::I32: {
      int32_t value = static_cast<int32_t>(args.scalarValues[i]);
      std::memcpy(slot, &value, sizeof(value));
      break;
    }
    case ParamKind::I64: {
      int64_t value = args.scalarValues[i];
      std::memcpy(slot, &value, sizeof(value));
      break;
    }
    }
  }
}

} // namespace fp8rt
