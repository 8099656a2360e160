//===- LowerCollectives.cpp - shard collectives as host program steps -----===//
//
// fp8-lower-collectives: each collective of the upstream `shard` dialect on
// tensors (the amax all-reduce and the FP8 all-gathers fp8-shard-quantize
// creates, reduce-scatters, the local slice of a replicated input) becomes
// an `fp8.launch` of a bodiless declaration tagged `fp8.collective`, the
// collective's input and output as memrefs. One-shot bufferization turns it
// into a call on buffers, which fp8-build-host-program writes as a
// collective step of module.json; the runtime runs it through the caller's
// collective backend (NCCL).
//
//===----------------------------------------------------------------------===//

#include "FP8/Conversion/Passes.h"
#include "FP8/Dialect/FP8/IR/FP8Ops.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/TypeSwitch.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8LOWERCOLLECTIVES
#include "FP8/Conversion/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;

/// On a collective's declaration: what it does (fp8-build-host-program
/// reads it).
static constexpr llvm::StringLiteral kCollectiveAttrName = "fp8.collective";

namespace {
/// One collective, as the host program records it.
struct Collective {
  StringRef kind;      // all_reduce, all_gather, reduce_scatter, all_slice
  StringRef reduction; // all_reduce, reduce_scatter: sum or max
  FlatSymbolRefAttr grid;
  ArrayRef<int16_t> axes;
  int64_t axis = -1; // the gathered, scattered or sliced dimension
  Value input;
};
} // namespace

static FailureOr<StringRef>
getReductionName(Operation *op, shard::ReductionKind kind, Type element) {
  if (kind != shard::ReductionKind::Sum && kind != shard::ReductionKind::Max)
    return op->emitOpError()
           << "reduces with '" << shard::stringifyReductionKind(kind)
           << "': the host program's collectives reduce with sum or max";
  if (!element.isF32() && !element.isBF16() && !element.isF16())
    return op->emitOpError()
           << "reduces " << element
           << " values: the host program reduces f32, bf16 or f16 (FP8 "
              "tensors are gathered, reductions stay in high precision)";
  return kind == shard::ReductionKind::Sum ? StringRef("sum")
                                           : StringRef("max");
}

/// The fields every collective has.
template <typename OpT>
static Collective getFields(OpT op, StringRef kind, int64_t axis) {
  return Collective{kind, "",           op.getGridAttr(), op.getGridAxes(),
                    axis, op.getInput()};
}

static FailureOr<Collective> describe(Operation *op) {
  Type element = getElementTypeOrSelf(op->getOperand(0).getType());
  // A reduction's kind, for the reducing collectives.
  auto reducing = [&](Collective c,
                      shard::ReductionKind kind) -> FailureOr<Collective> {
    FailureOr<StringRef> reduction = getReductionName(op, kind, element);
    if (failed(reduction))
      return failure();
    c.reduction = *reduction;
    return c;
  };
  return llvm::TypeSwitch<Operation *, FailureOr<Collective>>(op)
      .Case([&](shard::AllReduceOp o) -> FailureOr<Collective> {
        if (getElementTypeOrSelf(o.getType()) != element)
          return o.emitOpError() << "changes the element type: the host "
                                    "program's all-reduce keeps it";
        return reducing(getFields(o, "all_reduce", -1), o.getReduction());
      })
      .Case([&](shard::AllGatherOp o) {
        return getFields(o, "all_gather", o.getGatherAxis().getSExtValue());
      })
      .Case([&](shard::ReduceScatterOp o) {
        return reducing(
            getFields(o, "reduce_scatter", o.getScatterAxis().getSExtValue()),
            o.getReduction());
      })
      .Case([&](shard::AllSliceOp o) {
        return getFields(o, "all_slice", o.getSliceAxis().getSExtValue());
      })
      .Default([](Operation *) { return failure(); });
}

/// Each device's piece must be one contiguous run of the row-major whole
/// (every extent before `axis` is 1), as NCCL's collectives take it.
static LogicalResult checkContiguous(Operation *op, const Collective &c,
                                     RankedTensorType whole) {
  for (int64_t d = 0; d < c.axis; ++d)
    if (whole.getDimSize(d) != 1)
      return op->emitOpError()
             << "splits " << whole << " along dimension " << c.axis
             << ": a device's piece is not contiguous in row-major order, "
                "which NCCL's all-gather and reduce-scatter need (split along "
                "the outermost dimension, e.g. the rowwise data rather than "
                "the transposed columnwise copy)";
  return success();
}

static LogicalResult lowerCollective(Operation *op,
                                     SymbolTableCollection &symbols) {
  FailureOr<Collective> c = describe(op);
  if (failed(c))
    return failure();
  auto input = dyn_cast<RankedTensorType>(c->input.getType());
  auto output = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!input || !output || !input.hasStaticShape() || !output.hasStaticShape())
    return op->emitOpError() << "has a dynamic or unranked shape: the host "
                                "program's collectives take static shapes";
  shard::GridOp grid = shard::getGridOrNull(op, c->grid, symbols);
  if (!grid || ShapedType::isDynamicShape(grid.getShape()))
    return op->emitOpError() << "names grid " << c->grid
                             << ", which is not a shard.grid of static shape";
  int64_t size = shard::collectiveProcessGroupSize(c->axes, grid);
  if (c->kind == "all_gather" || c->kind == "reduce_scatter" ||
      c->kind == "all_slice") {
    RankedTensorType whole = c->kind == "all_gather" ? output : input;
    if (failed(checkContiguous(op, *c, whole)))
      return failure();
  }
  Builder b(op->getContext());
  SmallVector<int64_t> axes(c->axes.begin(), c->axes.end());
  SmallVector<NamedAttribute> fields = {
      b.getNamedAttr("kind", b.getStringAttr(c->kind)),
      b.getNamedAttr("grid", c->grid),
      b.getNamedAttr("grid_axes", b.getDenseI64ArrayAttr(axes)),
      b.getNamedAttr("group_size", b.getI64IntegerAttr(size))};
  if (!c->reduction.empty())
    fields.push_back(
        b.getNamedAttr("reduction", b.getStringAttr(c->reduction)));
  DictionaryAttr attr = b.getDictionaryAttr(fields);

  // One declaration per collective and types: @fp8_<kind>_<grid>[_N].
  ModuleOp module = op->getParentOfType<ModuleOp>();
  FunctionType type = b.getFunctionType(
      {MemRefType::get(input.getShape(), input.getElementType()),
       MemRefType::get(output.getShape(), output.getElementType())},
      {});
  std::string base = ("fp8_" + c->kind + "_" + c->grid.getValue()).str();
  func::FuncOp decl;
  for (int n = 0; !decl; ++n) {
    std::string name = n ? base + "_" + std::to_string(n) : base;
    auto existing = module.lookupSymbol<func::FuncOp>(name);
    if (!existing) {
      OpBuilder builder(module.getContext());
      builder.setInsertionPointToStart(module.getBody());
      decl = func::FuncOp::create(builder, op->getLoc(), name, type);
      decl.setPrivate();
      decl.setArgAttr(
          0, bufferization::BufferizationDialect::kBufferAccessAttrName,
          b.getStringAttr("read"));
      decl.setArgAttr(
          1, bufferization::BufferizationDialect::kBufferAccessAttrName,
          b.getStringAttr("write"));
      decl->setAttr(kCollectiveAttrName, attr);
    } else if (existing.getFunctionType() == type &&
               existing->getAttr(kCollectiveAttrName) == attr) {
      decl = existing;
    }
  }
  OpBuilder builder(op);
  Value init = tensor::EmptyOp::create(builder, op->getLoc(), output.getShape(),
                                       output.getElementType());
  SmallVector<Type> resultTypes = {output};
  SmallVector<Value> operands = {c->input, init};
  SmallVector<int64_t> outputs = {1};
  auto launch = LaunchOp::create(builder, op->getLoc(), resultTypes,
                                 decl.getSymName(), operands, outputs);
  op->getResult(0).replaceAllUsesWith(launch->getResult(0));
  op->erase();
  return success();
}

/// The collectives of the module's host functions, in order.
static SmallVector<Operation *> getCollectives(ModuleOp module) {
  SmallVector<Operation *> collectives;
  for (auto func : module.getOps<func::FuncOp>())
    func.walk([&](Operation *op) {
      if (isa<shard::AllReduceOp, shard::AllGatherOp, shard::ReduceScatterOp,
              shard::AllSliceOp>(op))
        collectives.push_back(op);
    });
  return collectives;
}

namespace {
struct FP8LowerCollectivesPass
    : public fp8::impl::FP8LowerCollectivesBase<FP8LowerCollectivesPass> {
  void runOnOperation() override {
    SymbolTableCollection symbols;
    bool failed = false;
    for (Operation *op : getCollectives(getOperation()))
      failed |= mlir::failed(lowerCollective(op, symbols));
    if (failed)
      signalPassFailure();
  }
};
} // namespace
