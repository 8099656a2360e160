//===- LowerCollectives.cpp - shard collectives as host program steps -----===//
//
// fp8-lower-collectives: each collective of the upstream `shard` dialect on
// tensors (the amax all-reduce and the FP8 all-gathers fp8-shard-quantize
// creates, reduce-scatters, the local slice of a replicated input) becomes
// an `fp8.launch` of a bodiless declaration tagged `fp8.collective`, the
// collective's input and output as memrefs. One-shot bufferization turns it
// into a call on buffers, which fp8-build-host-program writes as a
// collective step of module.json; the runtime runs it through the caller's
// collective backend (NCCL). A gather, scatter or slice along an inner
// dimension, whose pieces are not contiguous, also gets strided copies
// (declarations of kind "copy2d", `copy2d` steps) between the whole tensor
// and a contiguous buffer of the pieces that NCCL moves.
//
//===----------------------------------------------------------------------===//

#include "FP8/Conversion/FP8ToGPU/Collectives.h"
#include "FP8/Conversion/Passes.h"
#include "FP8/Dialect/FP8/IR/FP8Ops.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/CheckedArithmetic.h"

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

/// Whether each device's piece is one contiguous run of the row-major whole
/// (every extent before `axis` is 1), as NCCL's collectives take it.
static bool isContiguous(RankedTensorType whole, int64_t axis) {
  for (int64_t d = 0; d < axis; ++d)
    if (whole.getDimSize(d) != 1)
      return false;
  return true;
}

namespace {
/// A split along an inner dimension as 2-D geometry of the row-major whole
/// `[rows, wholeRow]` (rows: the extents before the axis multiplied,
/// wholeRow: those from the axis on): each device's piece is `rows` rows of
/// `pieceRow` elements, the piece of rank r starting at column r * pieceRow.
struct Strided {
  int64_t rows = 1, wholeRow = 1, pieceRow = 1;
};
} // namespace

static FailureOr<Strided> getStrided(Operation *op, RankedTensorType whole,
                                     int64_t axis, int64_t size) {
  Strided s;
  std::optional<int64_t> product = 1;
  for (int64_t d = 0; d < whole.getRank() && product; ++d) {
    product = llvm::checkedMul(*product, whole.getDimSize(d));
    if (d + 1 == axis && product)
      s.rows = *product;
  }
  if (!product || size < 1)
    return op->emitOpError() << "splits " << whole
                             << ", whose element count overflows";
  if (*product == 0)
    return op->emitOpError() << "splits " << whole
                             << ", which has no elements";
  s.wholeRow = *product / s.rows;
  if (s.wholeRow % size != 0)
    return op->emitOpError()
           << "splits " << whole << " along dimension " << axis << " into "
           << size << " pieces, which do not divide its rows of "
           << s.wholeRow << " elements";
  s.pieceRow = s.wholeRow / size;
  return s;
}

/// The declaration @<base>[_N] of `type` tagged `attr`: an existing one of
/// the same type and attribute, or a new one whose second argument is
/// accessed as `targetAccess`.
static func::FuncOp getDeclaration(ModuleOp module, Location loc,
                                   StringRef base, FunctionType type,
                                   DictionaryAttr attr,
                                   StringRef targetAccess) {
  Builder b(module.getContext());
  for (int n = 0;; ++n) {
    std::string name = n ? (base + "_" + Twine(n)).str() : base.str();
    auto existing = module.lookupSymbol<func::FuncOp>(name);
    if (existing && existing.getFunctionType() == type &&
        existing->getAttr(kCollectiveAttrName) == attr)
      return existing;
    if (existing)
      continue;
    OpBuilder builder(module.getContext());
    builder.setInsertionPointToStart(module.getBody());
    auto decl = func::FuncOp::create(builder, loc, name, type);
    decl.setPrivate();
    decl.setArgAttr(0, bufferization::BufferizationDialect::kBufferAccessAttrName,
                    b.getStringAttr("read"));
    decl.setArgAttr(1, bufferization::BufferizationDialect::kBufferAccessAttrName,
                    b.getStringAttr(targetAccess));
    decl->setAttr(kCollectiveAttrName, attr);
    return decl;
  }
}

static MemRefType getMemRefType(RankedTensorType type) {
  return MemRefType::get(type.getShape(), type.getElementType());
}

/// `fp8.launch @decl(input, init) outputs [1]` with `init` a new
/// tensor.empty of `output`'s type unless given.
static Value createLaunch(OpBuilder &builder, Location loc, func::FuncOp decl,
                          Value input, RankedTensorType output,
                          Value init = Value()) {
  if (!init)
    init = tensor::EmptyOp::create(builder, loc, output.getShape(),
                                   output.getElementType());
  SmallVector<Type> resultTypes = {output};
  SmallVector<Value> operands = {input, init};
  SmallVector<int64_t> outputs = {1};
  return LaunchOp::create(builder, loc, resultTypes, decl.getSymName(),
                          operands, outputs)
      ->getResult(0);
}

namespace {
/// The group of a collective and its attributes.
struct Group {
  FlatSymbolRefAttr grid;
  SmallVector<int64_t> axes;
  int64_t size;

  SmallVector<NamedAttribute> fields(Builder &b, StringRef prefix = "") const {
    return {b.getNamedAttr((prefix + "grid").str(), grid),
            b.getNamedAttr((prefix + "grid_axes").str(),
                           b.getDenseI64ArrayAttr(axes)),
            b.getNamedAttr((prefix + "group_size").str(),
                           b.getI64IntegerAttr(size))};
  }
};

/// One strided copy (a `copy2d` step), in elements.
struct Copy2D {
  int64_t rows, rowElements, sourceOffset, sourcePitch, targetOffset,
      targetPitch;
};
} // namespace

/// A launch of a `copy2d` declaration from `input` into `init` (or a new
/// tensor of `output`'s type); with `slice`, the source offset advances by
/// the device's rank times the row.
static Value createCopy2D(OpBuilder &builder, Location loc, const Copy2D &c,
                          Value input, RankedTensorType output, Value init,
                          const Group *slice) {
  Builder b(builder.getContext());
  SmallVector<NamedAttribute> fields = {
      b.getNamedAttr("kind", b.getStringAttr("copy2d")),
      b.getNamedAttr("rows", b.getI64IntegerAttr(c.rows)),
      b.getNamedAttr("row_elements", b.getI64IntegerAttr(c.rowElements)),
      b.getNamedAttr("source_offset", b.getI64IntegerAttr(c.sourceOffset)),
      b.getNamedAttr("source_pitch", b.getI64IntegerAttr(c.sourcePitch)),
      b.getNamedAttr("target_offset", b.getI64IntegerAttr(c.targetOffset)),
      b.getNamedAttr("target_pitch", b.getI64IntegerAttr(c.targetPitch))};
  if (slice)
    llvm::append_range(fields, slice->fields(b, "slice_"));
  auto type = b.getFunctionType(
      {getMemRefType(cast<RankedTensorType>(input.getType())),
       getMemRefType(output)},
      {});
  func::FuncOp decl = getDeclaration(
      builder.getInsertionBlock()->getParentOp()->getParentOfType<ModuleOp>(),
      loc, "fp8_copy2d", type, b.getDictionaryAttr(fields), "read-write");
  return createLaunch(builder, loc, decl, input, output, init);
}

/// A collective along an inner dimension: NCCL's all-gather into, or its
/// reduce-scatter out of, a contiguous `[size, rows, pieceRow]` buffer, with
/// one strided copy per piece between it and the whole; a slice is one
/// strided copy at the device's column block.
static Value lowerStrided(OpBuilder &builder, Operation *op,
                          const Collective &c, const Group &group,
                          const Strided &s, func::FuncOp contiguous) {
  Location loc = op->getLoc();
  auto input = cast<RankedTensorType>(c.input.getType());
  auto output = cast<RankedTensorType>(op->getResult(0).getType());
  if (c.kind == "all_slice")
    return createCopy2D(builder, loc,
                        {s.rows, s.pieceRow, 0, s.wholeRow, 0, s.pieceRow},
                        c.input, output, Value(), &group);
  // Piece p of the whole: rows of pieceRow at column p * pieceRow; in the
  // buffer: the p-th contiguous [rows, pieceRow].
  auto piece = [&](int64_t p, bool toWhole) {
    int64_t inBuffer = p * s.rows * s.pieceRow, inWhole = p * s.pieceRow;
    return toWhole ? Copy2D{s.rows,      s.pieceRow, inBuffer,
                            s.pieceRow,  inWhole,    s.wholeRow}
                   : Copy2D{s.rows,     s.pieceRow, inWhole,
                            s.wholeRow, inBuffer,   s.pieceRow};
  };
  auto staging = RankedTensorType::get({group.size, s.rows, s.pieceRow},
                                       input.getElementType());
  if (c.kind == "all_gather") {
    Value gathered = createLaunch(builder, loc, contiguous, c.input, staging);
    Value whole;
    for (int64_t p = 0; p < group.size; ++p)
      whole = createCopy2D(builder, loc, piece(p, /*toWhole=*/true), gathered,
                           output, whole, nullptr);
    return whole;
  }
  Value pieces;
  for (int64_t p = 0; p < group.size; ++p)
    pieces = createCopy2D(builder, loc, piece(p, /*toWhole=*/false), c.input,
                          staging, pieces, nullptr);
  return createLaunch(builder, loc, contiguous, pieces, output);
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
  Group group{c->grid, SmallVector<int64_t>(c->axes.begin(), c->axes.end()),
              shard::collectiveProcessGroupSize(c->axes, grid)};
  // Along an inner dimension: NCCL moves a contiguous [size, rows, pieceRow]
  // buffer, strided copies put the pieces in place.
  std::optional<Strided> strided;
  if (c->axis >= 0) {
    RankedTensorType whole = c->kind == "all_gather" ? output : input;
    if (!isContiguous(whole, c->axis)) {
      FailureOr<Strided> s = getStrided(op, whole, c->axis, group.size);
      if (failed(s))
        return failure();
      strided = *s;
    }
  }
  Builder b(op->getContext());
  SmallVector<NamedAttribute> fields = group.fields(b);
  fields.push_back(b.getNamedAttr("kind", b.getStringAttr(c->kind)));
  if (!c->reduction.empty())
    fields.push_back(
        b.getNamedAttr("reduction", b.getStringAttr(c->reduction)));
  DictionaryAttr attr = b.getDictionaryAttr(fields);

  // One declaration per collective and types: @fp8_<kind>_<grid>[_N]; the
  // contiguous buffer's type for a strided gather or scatter.
  ModuleOp module = op->getParentOfType<ModuleOp>();
  MemRefType source = getMemRefType(input), target = getMemRefType(output);
  if (strided && c->kind == "all_gather")
    target = MemRefType::get({group.size, strided->rows, strided->pieceRow},
                             output.getElementType());
  if (strided && c->kind == "reduce_scatter")
    source = MemRefType::get({group.size, strided->rows, strided->pieceRow},
                             input.getElementType());
  OpBuilder builder(op);
  Value result;
  if (strided && c->kind == "all_slice") {
    result = lowerStrided(builder, op, *c, group, *strided, func::FuncOp());
  } else {
    func::FuncOp decl = getDeclaration(
        module, op->getLoc(),
        ("fp8_" + c->kind + "_" + c->grid.getValue()).str(),
        b.getFunctionType({source, target}, {}), attr, "write");
    result = strided ? lowerStrided(builder, op, *c, group, *strided, decl)
                     : createLaunch(builder, op->getLoc(), decl, c->input,
                                    output);
  }
  op->getResult(0).replaceAllUsesWith(result);
  op->erase();
  return success();
}

InFlightDiagnostic mlir::fp8::emitUnsupportedShardOpError(Operation *op) {
  InFlightDiagnostic diag = op->emitError() << "'" << op->getName() << "'";
  if (auto grid = op->getAttrOfType<FlatSymbolRefAttr>("grid"))
    diag << " on grid " << grid;
  diag << ": the compiled host program (module.json) runs the collectives "
          "all_reduce, all_gather, reduce_scatter and all_slice only; ";
  return diag;
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
    // Sharding annotations fp8-shard-quantize did not lower (one that no
    // quantization reads) have no step.
    getOperation().walk([&](Operation *op) {
      if (!isa<shard::ShardOp, shard::ShardingOp>(op))
        return;
      emitUnsupportedShardOpError(op)
          << "a sharding annotation is lowered where an fp8.quantize (or an "
             "fp8.linear input) reads it (fp8-shard-quantize)";
      failed = true;
    });
    if (failed)
      signalPassFailure();
  }
};
} // namespace
