//===- ShardQuantize.cpp - Sharded quantization and FP8 all-gathers ------===//
//
// Rewrites an fp8.quantize of a tensor annotated as sharded over a device
// grid (upstream `shard.shard ... annotate_for_users`) into the quantization
// of each device's shard whose FP8 data, gathered over the grid, equal those
// of quantizing the whole tensor (see the pass description in Passes.td and
// docs/distributed.md).
//
//===----------------------------------------------------------------------===//

#include "FP8/Dialect/FP8/IR/FP8Ops.h"
#include "FP8/Dialect/FP8/Transforms/Passes.h"

#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Dominance.h"
#include "llvm/ADT/STLExtras.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8SHARDQUANTIZE
#include "FP8/Dialect/FP8/Transforms/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;

namespace {
/// How a quantize input is split: along `dim` over the grid axes `axes` of
/// `grid`, into `count` equal shards of `local` rows/columns.
struct Split {
  shard::GridOp grid;
  SmallVector<shard::GridAxis> axes;
  int64_t dim = 0;
  int64_t count = 1;
  int64_t local = 0;
};
} // namespace

/// The split of `op`'s input, or failure (with a diagnostic) when it is
/// annotated in a way this pass does not handle; std::nullopt when the
/// input is not annotated.
static FailureOr<std::optional<Split>>
getSplit(QuantizeOp op, SymbolTableCollection &symbols) {
  auto annotation = op.getInput().getDefiningOp<shard::ShardOp>();
  if (!annotation || !annotation.getAnnotateForUsers())
    return std::optional<Split>();
  auto sharding = annotation.getSharding().getDefiningOp<shard::ShardingOp>();
  if (!sharding)
    return op.emitOpError("input sharding is not a shard.sharding op");
  if (!sharding.getStaticShardedDimsOffsets().empty() ||
      !sharding.getDynamicShardedDimsOffsets().empty() ||
      !sharding.getStaticHaloSizes().empty() ||
      !sharding.getDynamicHaloSizes().empty())
    return op.emitOpError(
        "input is sharded with explicit offsets or halos: the FP8 "
        "all-gather concatenates equal shards (uneven shards are the "
        "runtime's, fp8mlir.distributed)");
  Split split;
  split.grid = shard::getGridOrNull(annotation, sharding.getGridAttr(), symbols);
  if (!split.grid)
    return op.emitOpError("input is sharded over an unknown grid ")
           << sharding.getGridAttr();
  int splitDims = 0;
  for (auto [dim, axes] : llvm::enumerate(sharding.getSplitAxes().getAxes())) {
    if (axes.asArrayRef().empty())
      continue;
    ++splitDims;
    split.dim = dim;
    split.axes.assign(axes.asArrayRef().begin(), axes.asArrayRef().end());
  }
  if (splitDims != 1)
    return op.emitOpError("input must be split along exactly one dimension, "
                          "not ")
           << splitDims;
  for (shard::GridAxis axis : split.axes) {
    int64_t size = split.grid.getShape()[axis];
    if (ShapedType::isDynamic(size))
      return op.emitOpError("grid axis ")
             << axis << " of " << sharding.getGridAttr()
             << " has a dynamic size: the shard extents must be static";
    split.count *= size;
  }
  auto type = cast<RankedTensorType>(op.getInput().getType());
  int64_t extent = type.getDimSize(split.dim);
  if (ShapedType::isDynamic(extent) || extent % split.count)
    return op.emitOpError("dimension ")
           << split.dim << " of the input (" << extent
           << ") does not split into " << split.count
           << " equal static shards";
  split.local = extent / split.count;
  return std::optional<Split>(split);
}

/// The block extent along input dimension `dim` of one output: the
/// granularity's block on the input (transposed for the columnwise output);
/// 0 when the block spans the whole dimension.
static int64_t getBlockExtent(GranularityAttr g, bool columnwise, int64_t dim) {
  if (g.isTensor())
    return 0;
  int64_t rows = 1, cols = 0; // row: one row, all columns
  if (g.isTile() || g.isMX()) {
    rows = g.getTile().rows;
    cols = g.getTile().cols;
  }
  if (columnwise)
    std::swap(rows, cols);
  return dim == 0 ? rows : cols;
}

/// Checks that no block of `op`'s outputs crosses a shard boundary, except
/// per-tensor blocks, whose amax the pass reduces over the grid.
static LogicalResult checkBlocks(QuantizeOp op, const Split &split) {
  if (cast<ShapedType>(op.getInput().getType()).getRank() == 3)
    return op.emitOpError() << "a batch of matrices (rank 3) is not "
                               "sharded: quantize each device's on it";
  GranularityAttr g = op.getGranularity();
  if (g.isTensor())
    return success();
  for (bool columnwise : {false, true}) {
    if (!(columnwise ? op.getColumnwise() : op.getRowwise()))
      continue;
    int64_t block = getBlockExtent(g, columnwise, split.dim);
    if (block != 0 && split.local % block == 0)
      continue;
    InFlightDiagnostic diag = op.emitOpError();
    diag << "the " << (columnwise ? "columnwise" : "rowwise") << " output's `"
         << g.describe() << "` blocks ";
    if (block == 0)
      diag << "span dimension " << split.dim << ", which is split";
    else
      diag << "are cut by the shard boundaries (every " << split.local
           << " along dimension " << split.dim << ", not a multiple of "
           << block << ")";
    diag << ": each shard's block amax would need a max all-reduce before "
            "its scale, which fp8.quantize does not take; split on block "
            "boundaries (pad the tensor) or quantize with the runtime's "
            "sharded quantization (fp8mlir.distributed)";
    return diag;
  }
  return success();
}

/// `type` with dimension `dim` divided by `count` (rank-0 types as they are).
static Type getLocalType(Type type, int64_t dim, int64_t count) {
  auto ranked = cast<RankedTensorType>(type);
  if (ranked.getRank() == 0)
    return type;
  SmallVector<int64_t> shape(ranked.getShape());
  shape[dim] /= count;
  return ranked.clone(shape);
}

/// The first op of `block` that uses `value` or holds a user of it; null
/// when a user lies outside `block`.
static Operation *getFirstUserInBlock(Value value, Block *block) {
  Operation *first = nullptr;
  for (Operation *user : value.getUsers()) {
    Operation *ancestor = block->findAncestorOpInBlock(*user);
    if (!ancestor)
      return nullptr;
    if (!first || ancestor->isBeforeInBlock(first))
      first = ancestor;
  }
  return first;
}

namespace {
struct ShardQuantizePass
    : public fp8::impl::FP8ShardQuantizeBase<ShardQuantizePass> {
  void runOnOperation() override;
  void rewrite(QuantizeOp op, const Split &split);
};
} // namespace

void ShardQuantizePass::rewrite(QuantizeOp op, const Split &split) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  auto annotation = op.getInput().getDefiningOp<shard::ShardOp>();
  shard::GridOp gridOp = split.grid;
  StringRef grid = gridOp.getSymName();
  auto inputType = cast<RankedTensorType>(op.getInput().getType());
  Type sliceType = getLocalType(inputType, split.dim, split.count);
  // The same slice taken before (fp8-shard-linear's, for the amax), or a
  // new one.
  Value local;
  DominanceInfo dominance(op->getParentOp());
  for (Operation *user : annotation.getSrc().getUsers())
    if (auto slice = dyn_cast<shard::AllSliceOp>(user);
        slice && !local && slice.getType() == sliceType &&
        slice.getGrid() == grid &&
        slice.getGridAxes() == ArrayRef<shard::GridAxis>(split.axes) &&
        slice.getSliceAxis().getSExtValue() == split.dim &&
        dominance.properlyDominates(slice.getOperation(), op))
      local = slice.getResult();
  if (!local)
    local = shard::AllSliceOp::create(b, loc, sliceType, annotation.getSrc(),
                                      grid, split.axes, split.dim);
  auto reduceMax = [&](Value amax) -> Value {
    return shard::AllReduceOp::create(b, loc, amax, grid, split.axes,
                                      shard::ReductionKind::Max);
  };

  // Per-tensor current scaling computes its scale from the reduced amax.
  Value scale = op.getScale();
  Value amax;
  if (!scale && op.getGranularity().isTensor()) {
    auto scalarType = RankedTensorType::get({}, b.getF32Type());
    amax = reduceMax(AmaxOp::create(b, loc, scalarType, local));
    Value data = op.getRowwise() ? op.getRowwise() : op.getColumnwise();
    Type elementType = cast<RankedTensorType>(data.getType()).getElementType();
    scale = ComputeScaleOp::create(b, loc, scalarType, scalarType, Type(), amax,
                                   Value(), op.getRecipe(), elementType)
                .getScale();
  }

  // The axis of each output along which the shards lie: the columnwise
  // output stored transposed has the input's dimensions swapped; its
  // scales are x^T's (`[C, ceil(R/b)]`) in either layout.
  bool transposed = op.getColumnwiseLayout() == ColumnwiseLayout::Transposed;
  int64_t rowAxis = split.dim;
  int64_t colAxis = transposed ? 1 - split.dim : split.dim;
  int64_t colScaleAxis = 1 - split.dim;
  auto localType = [&](Value v, int64_t axis) {
    return v ? getLocalType(v.getType(), axis, split.count) : Type();
  };
  bool wantsAmax = op.getAmax() && !amax;
  auto sharded = QuantizeOp::create(
      b, loc, localType(op.getRowwise(), rowAxis),
      localType(op.getRowwiseScaleInv(), rowAxis),
      localType(op.getColumnwise(), colAxis),
      localType(op.getColumnwiseScaleInv(), colScaleAxis),
      wantsAmax ? op.getAmax().getType() : Type(), local, scale, op.getRecipe(),
      op.getGranularity(), op.getColumnwiseLayout(),
      op.getScaleGranularityAttr());

  // FP8 all-gathers of the data and of block scales, each right before the
  // first op that reads it (the columnwise copy of a layer input at the
  // start of the backward: the device keeps its shard until then); per-tensor
  // scales are already equal on every device.
  auto gather = [&](Value full, Value piece, int64_t axis) {
    if (!full)
      return;
    Value result = piece;
    if (cast<RankedTensorType>(full.getType()).getRank() != 0) {
      OpBuilder::InsertionGuard guard(b);
      if (Operation *user = getFirstUserInBlock(full, op->getBlock()))
        b.setInsertionPoint(user);
      result = shard::AllGatherOp::create(b, loc, full.getType(), grid,
                                          split.axes, piece, APInt(64, axis))
                   .getResult();
    }
    full.replaceAllUsesWith(result);
  };
  gather(op.getRowwise(), sharded.getRowwise(), rowAxis);
  gather(op.getRowwiseScaleInv(), sharded.getRowwiseScaleInv(), rowAxis);
  gather(op.getColumnwise(), sharded.getColumnwise(), colAxis);
  gather(op.getColumnwiseScaleInv(), sharded.getColumnwiseScaleInv(),
         colScaleAxis);
  if (op.getAmax())
    op.getAmax().replaceAllUsesWith(amax ? amax : reduceMax(sharded.getAmax()));
  op.erase();
  if (annotation->use_empty()) {
    Operation *sharding = annotation.getSharding().getDefiningOp();
    annotation.erase();
    if (sharding && sharding->use_empty())
      sharding->erase();
  }
}

void ShardQuantizePass::runOnOperation() {
  SymbolTableCollection symbols;
  SmallVector<std::pair<QuantizeOp, Split>> work;
  WalkResult result = getOperation()->walk([&](QuantizeOp op) {
    FailureOr<std::optional<Split>> split = getSplit(op, symbols);
    if (failed(split) || (*split && failed(checkBlocks(op, **split))))
      return WalkResult::interrupt();
    if (*split)
      work.emplace_back(op, **split);
    return WalkResult::advance();
  });
  if (result.wasInterrupted())
    return signalPassFailure();
  for (auto &[op, split] : work)
    rewrite(op, split);
}
