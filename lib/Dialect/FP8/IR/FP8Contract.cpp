//===- FP8Contract.cpp - Limits every fp8 op is checked against -----------===//

#include "FP8/Dialect/FP8/IR/FP8Contract.h"
#include "FP8/Dialect/FP8/IR/FP8Ops.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/CheckedArithmetic.h"

using namespace mlir;
using namespace mlir::fp8;

std::optional<int64_t> contract::roundUp(int64_t a, int64_t b) {
  return llvm::checkedMul<int64_t>(llvm::divideCeil(a, b), b);
}

std::optional<int64_t> contract::getNumElements(ArrayRef<int64_t> shape) {
  int64_t count = 1;
  for (int64_t extent : shape) {
    if (ShapedType::isDynamic(extent))
      return std::nullopt;
    std::optional<int64_t> next = llvm::checkedMul(count, extent);
    if (!next)
      return std::nullopt;
    count = *next;
  }
  return count;
}

std::string contract::formatShape(ArrayRef<int64_t> shape) {
  std::string text = "[";
  llvm::raw_string_ostream os(text);
  llvm::interleaveComma(shape, os, [&](int64_t d) {
    if (ShapedType::isDynamic(d))
      os << "?";
    else
      os << d;
  });
  os << "]";
  return text;
}

std::string contract::getDimensionName(const NamedValue &v, unsigned dim) {
  if (dim < v.dims.size())
    return v.dims[dim];
  return "dimension " + std::to_string(dim) + " of " + v.name;
}

/// `M (dimension 0 of A, tensor<0x64xf8E4M3FN>)`.
static std::string describeExtent(const contract::NamedValue &v, unsigned dim) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << contract::getDimensionName(v, dim);
  if (dim < v.dims.size())
    os << " (dimension " << dim << " of " << v.name << ", " << v.value.getType()
       << ")";
  else
    os << " (" << v.value.getType() << ")";
  return text;
}

LogicalResult contract::verifyExtents(Operation *op, const NamedValue &v) {
  auto type = dyn_cast<ShapedType>(v.value.getType());
  if (!type || !type.hasRank())
    return success();
  bool anyDynamic = false;
  for (auto [dim, extent] : llvm::enumerate(type.getShape())) {
    if (ShapedType::isDynamic(extent)) {
      anyDynamic = true;
      continue;
    }
    if (extent < 1)
      return op->emitOpError()
             << describeExtent(v, dim) << " is " << extent
             << ": every extent must be at least 1 (fp8 ops take no empty "
                "tensors)";
    if (extent > kMaxExtent)
      return op->emitOpError()
             << describeExtent(v, dim) << " is " << extent
             << ", above the largest extent the kernels take, "
             << kMaxExtentText
             << " (extents and row indices are 32-bit integers, TMA global "
                "dimensions stop at 2^32)";
  }
  if (!anyDynamic && !getNumElements(type.getShape()))
    return op->emitOpError() << v.name << " " << type
                             << " has more elements than a 64-bit count holds";
  return success();
}

LogicalResult contract::verifyRanked(Operation *op, const NamedValue &v) {
  Type type = v.value.getType();
  if (auto tensor = dyn_cast<RankedTensorType>(type); tensor && tensor.getEncoding())
    return op->emitOpError()
           << v.name << " is " << type << ", with the encoding "
           << tensor.getEncoding()
           << ": fp8 ops take dense tensors (no encoding)";
  if (!isa<UnrankedTensorType, UnrankedMemRefType>(type))
    return success();
  return op->emitOpError()
         << v.name << " must be a ranked "
         << (isa<UnrankedTensorType>(type) ? "tensor" : "memref") << ", got "
         << type
         << ": fp8 ops take ranked shapes (write the extents, with ? for "
            "one known only at run time)";
}

//===----------------------------------------------------------------------===//
// Checks before the generic verification (FP8_VerifiesContractFirst)
//===----------------------------------------------------------------------===//

namespace {
using contract::NamedValue;

/// Names of an ODS operand or result group and of its dimensions.
struct GroupName {
  StringRef name;
  SmallVector<StringRef, 2> dims = {};
};

/// Collects the operands and results of an op by their names. Works on the
/// untyped values of the ODS groups: this runs before the operand types are
/// checked, so the typed accessors cannot be used yet.
class NamedValues {
public:
  template <typename OpTy>
  void addGroups(OpTy op, ArrayRef<GroupName> operands,
                 ArrayRef<GroupName> results) {
    for (auto [i, group] : llvm::enumerate(operands))
      for (Value v : op.getODSOperands(i))
        add(v, group);
    for (auto [i, group] : llvm::enumerate(results))
      for (Value v : op.getODSResults(i))
        add(v, group);
  }
  void addPositional(Operation *op) {
    for (auto [i, operand] : llvm::enumerate(op->getOperands()))
      add(operand, {"operand #" + std::to_string(i)});
    for (auto [i, result] : llvm::enumerate(op->getResults()))
      add(result, {"result #" + std::to_string(i)});
  }
  SmallVector<NamedValue> values;

private:
  void add(Value v, const GroupName &group) { add(v, group.name.str(), group.dims); }
  void add(Value v, std::string name, ArrayRef<StringRef> dims = {}) {
    NamedValue named{v, std::move(name), {}};
    // Dimension names only where they apply: a matrix has two.
    auto type = dyn_cast<ShapedType>(v.getType());
    if (type && type.hasRank() && type.getRank() == int64_t(dims.size()))
      for (StringRef d : dims)
        named.dims.push_back(d.str());
    values.push_back(std::move(named));
  }
};
} // namespace

/// Whether the segment sizes of `op` (if it has any) add up to its operands
/// and results; only then do its ODS groups mean anything.
static bool hasConsistentSegments(Operation *op) {
  for (auto [name, count] :
       {std::pair<StringRef, unsigned>{"operandSegmentSizes",
                                       op->getNumOperands()},
        {"resultSegmentSizes", op->getNumResults()}}) {
    std::optional<Attribute> attr = op->getInherentAttr(name);
    // Ops without segments have no such attribute (or a null one).
    if (!attr || !*attr)
      continue;
    auto sizes = dyn_cast_or_null<DenseI32ArrayAttr>(*attr);
    if (!sizes)
      return false;
    int64_t sum = 0;
    for (int32_t size : sizes.asArrayRef()) {
      if (size < 0)
        return false;
      sum += size;
    }
    if (sum != count)
      return false;
  }
  return true;
}

static void nameScaledMatmul(ScaledMatmulOp op, NamedValues &v) {
  bool aK = op.getAMajor() == OperandMajor::K;
  bool bK = op.getBMajor() == OperandMajor::K;
  v.addGroups(op,
              {{"A", {aK ? "M" : "K", aK ? "K" : "M"}},
               {"B", {bK ? "N" : "K", bK ? "K" : "N"}},
               {"a_scale_inv"},
               {"b_scale_inv"},
               {"bias", {"N"}},
               {"accumulate_into (C)", {"M", "N"}},
               {"result_scale"},
               {"outs (D)", {"M", "N"}},
               {"amax_outs"}},
              {{"result (D)", {"M", "N"}}, {"result_scale_inv"}, {"amax"}});
}

static void nameQuantize(QuantizeOp op, NamedValues &v) {
  bool transposed = op.getColumnwiseLayout() == ColumnwiseLayout::Transposed;
  v.addGroups(op, {{"input", {"R", "C"}}, {"scale"}},
              {{"rowwise", {"R", "C"}},
               {"rowwise_scale_inv"},
               {"columnwise", {transposed ? "C" : "R", transposed ? "R" : "C"}},
               {"columnwise_scale_inv"},
               {"amax"}});
}

static void nameLinearBackward(LinearBackwardOp op, NamedValues &v) {
  v.addGroups(op,
              {{"input", {"M (tokens)", "K"}},
               {"weight", {"N", "K"}},
               {"grad_output", {"M (tokens)", "N"}},
               {"accumulate_into", {"N", "K"}},
               {"input_scale"},
               {"weight_scale"},
               {"grad_output_scale"}},
              {{"grad_input", {"M (tokens)", "K"}},
               {"grad_weight", {"N", "K"}},
               {"grad_output_amax"}});
}

/// The operands and results of `op` by the names its syntax gives them;
/// by position where its segment sizes are inconsistent.
static SmallVector<NamedValue> getNamedValues(Operation *op) {
  NamedValues v;
  if (!hasConsistentSegments(op)) {
    v.addPositional(op);
    return std::move(v.values);
  }
  llvm::TypeSwitch<Operation *>(op)
      .Case([&](ScaledMatmulOp op) { nameScaledMatmul(op, v); })
      .Case([&](QuantizeOp op) { nameQuantize(op, v); })
      .Case([&](DequantizeOp op) {
        v.addGroups(op, {{"input", {"R", "C"}}, {"scale_inv"}},
                    {{"result", {"R", "C"}}});
      })
      .Case([&](AmaxOp op) {
        v.addGroups(op, {{"input", {"R", "C"}}}, {{"amax"}});
      })
      .Case([&](ComputeScaleOp op) {
        v.addGroups(op, {{"amax", {"history length"}}, {"previous_scale"}},
                    {{"scale"},
                     {"scale_inv"},
                     {"next_history", {"history length"}}});
      })
      .Case([&](UpdateAmaxHistoryOp op) {
        v.addGroups(op, {{"history", {"history length"}}, {"amax"}},
                    {{"result", {"history length"}}});
      })
      .Case([&](LinearOp op) {
        v.addGroups(op,
                    {{"input", {"M (tokens)", "K"}},
                     {"weight", {"N", "K"}},
                     {"bias", {"N"}},
                     {"input_scale"},
                     {"weight_scale"}},
                    {{"result", {"M (tokens)", "N"}}, {"amax"}});
      })
      .Case([&](LinearBackwardOp op) { nameLinearBackward(op, v); });
  return std::move(v.values);
}

/// `K-major [M, K] [128, 256]`
static std::string describeGemmOperand(OperandMajor major, StringRef mn,
                                       ShapedType type) {
  return (major == OperandMajor::K ? "K-major [" + mn + ", K] "
                                   : "MN-major [K, " + mn + "] ")
             .str() +
         contract::formatShape(type.getShape());
}

/// A and B of a GEMM agree on K. A and B are its first two operands
/// whatever the segment sizes say.
static LogicalResult verifySameK(ScaledMatmulOp op) {
  if (op->getNumOperands() < 2)
    return success();
  auto a = dyn_cast<ShapedType>(op->getOperand(0).getType());
  auto b = dyn_cast<ShapedType>(op->getOperand(1).getType());
  if (!a || !b || !a.hasRank() || !b.hasRank() || a.getRank() != 2 ||
      b.getRank() != 2)
    return success();
  int64_t ka = a.getDimSize(op.getAMajor() == OperandMajor::K ? 1 : 0);
  int64_t kb = b.getDimSize(op.getBMajor() == OperandMajor::K ? 1 : 0);
  if (ShapedType::isDynamic(ka) || ShapedType::isDynamic(kb) || ka == kb)
    return success();
  return op.emitOpError() << "expected A and B to have the same K: A is "
                          << describeGemmOperand(op.getAMajor(), "M", a)
                          << " with K = " << ka << ", B is "
                          << describeGemmOperand(op.getBMajor(), "N", b)
                          << " with K = " << kb;
}

/// A linear layer's input `[M, K]` and weight `[N, K]` (its first two
/// operands) agree on K.
static LogicalResult verifyLinearSameK(Operation *op) {
  if (op->getNumOperands() < 2)
    return success();
  auto x = dyn_cast<ShapedType>(op->getOperand(0).getType());
  auto w = dyn_cast<ShapedType>(op->getOperand(1).getType());
  if (!x || !w || !x.hasRank() || !w.hasRank() || x.getRank() != 2 ||
      w.getRank() != 2)
    return success();
  int64_t kx = x.getDimSize(1), kw = w.getDimSize(1);
  if (ShapedType::isDynamic(kx) || ShapedType::isDynamic(kw) || kx == kw)
    return success();
  return op->emitOpError()
         << "expected the input [M, K] and the weight [N, K] to have the "
            "same K, got "
         << contract::formatShape(x.getShape()) << " and "
         << contract::formatShape(w.getShape());
}

/// The element type of operand `index` of `op` when it is a shaped value.
static Type getElementTypeOf(Operation *op, unsigned index) {
  if (index >= op->getNumOperands())
    return Type();
  auto type = dyn_cast<ShapedType>(op->getOperand(index).getType());
  return type ? type.getElementType() : Type();
}

/// The commonest mix-up of the two levels of the dialect: a GEMM given the
/// high-precision tensors, a linear layer given FP8 data. (A, B and the
/// layer's input and weight are the first two operands.)
static LogicalResult verifyDataLevel(Operation *op) {
  bool gemm = isa<ScaledMatmulOp>(op);
  for (auto [index, name] : {std::pair<unsigned, StringRef>{0, "A"}, {1, "B"}}) {
    Type elem = getElementTypeOf(op, index);
    if (!elem)
      continue;
    StringRef operand = gemm ? name : (index == 0 ? "input" : "weight");
    bool fp8 = isa<Float8E4M3FNType, Float8E5M2Type>(elem);
    bool highPrecision = isa<BFloat16Type, Float16Type, Float32Type>(elem);
    if (gemm && highPrecision)
      return op->emitOpError()
             << operand << " has element type " << elem
             << ": fp8.scaled_matmul reads FP8 data (f8E4M3FN or f8E5M2); "
                "quantize it with fp8.quantize first, or use fp8.linear, "
                "which quantizes its operands itself";
    if (!gemm && fp8)
      return op->emitOpError()
             << operand << " has element type " << elem << ": "
             << op->getName()
             << " takes the high-precision tensors (bf16, f16 or f32) and "
                "quantizes them itself; for FP8 data use fp8.scaled_matmul";
  }
  return success();
}

/// The message for segment sizes that do not add up (the generic form of
/// an op written without, or with wrong, `operandSegmentSizes`).
static LogicalResult emitSegmentError(Operation *op) {
  InFlightDiagnostic diag = op->emitOpError();
  diag << "has " << op->getNumOperands() << " operands and "
       << op->getNumResults()
       << " results, which its operandSegmentSizes/resultSegmentSizes "
          "do not describe (one entry per operand or result of the op's "
          "definition, in order, adding up to those counts";
  if (std::optional<Attribute> sizes = op->getInherentAttr("operandSegmentSizes"))
    diag << "; operandSegmentSizes = " << *sizes;
  diag << ")";
  diag.attachNote() << "write the op in its custom form, where the "
                       "keywords give the sizes";
  return diag;
}

LogicalResult mlir::fp8::verifyBeforeInvariants(Operation *op) {
  SmallVector<NamedValue> values = getNamedValues(op);
  for (const NamedValue &v : values)
    if (failed(contract::verifyRanked(op, v)))
      return failure();
  if (auto matmul = dyn_cast<ScaledMatmulOp>(op))
    if (failed(verifySameK(matmul)))
      return failure();
  if (isa<LinearOp, LinearBackwardOp>(op) && failed(verifyLinearSameK(op)))
    return failure();
  if (isa<ScaledMatmulOp, LinearOp, LinearBackwardOp>(op) &&
      failed(verifyDataLevel(op)))
    return failure();
  if (!hasConsistentSegments(op))
    return emitSegmentError(op);
  for (const NamedValue &v : values)
    if (failed(contract::verifyExtents(op, v)))
      return failure();
  return success();
}
