//===- ShardLinear.cpp - Tensor- and data-parallel FP8 linear layers ------===//
//
// Rewrites the fp8.linear / fp8.linear_backward ops of a single-device
// training step into the program of one device of a tensor-parallel
// (column or row) or ZeRO-1 data-parallel group, with upstream `shard`
// collectives, such that every FP8 tensor a GEMM reads is the single-device
// one (see the pass description in Passes.td and docs/distributed.md).
//
//===----------------------------------------------------------------------===//

#include "FP8/Dialect/FP8/IR/FP8Ops.h"
#include "FP8/Dialect/FP8/Transforms/Passes.h"
#include "LinearLayer.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSwitch.h"

#include <limits>

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8SHARDLINEAR
#include "FP8/Dialect/FP8/Transforms/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;

namespace {

enum class ParallelMode { Column, Row, Data };

/// Where one device holds a layer tensor.
enum class Placement {
  /// The whole tensor (not split).
  Whole,
  /// A shard along `dim`, used where it lies (the device's all_slice).
  Local,
  /// A shard along `dim`, quantized and FP8-all-gathered
  /// (fp8-shard-quantize).
  Gathered,
};

struct TensorPlacement {
  Placement placement = Placement::Whole;
  int64_t dim = 0;
  bool isSplit() const { return placement != Placement::Whole; }
};

/// The grid axis a layer is split over.
struct GroupInfo {
  std::string grid;
  int16_t axis = 0;
  int64_t size = 1;
  ParallelMode mode = ParallelMode::Column;
  bool sequenceParallel = true;
  bool f32Partials = true;
};

} // namespace

static StringRef getModeName(ParallelMode mode) {
  static constexpr StringLiteral kNames[] = {
      "column-parallel", "row-parallel",
      "ZeRO-1 data-parallel (FP8 primary weights)"};
  return kNames[static_cast<int>(mode)];
}

/// How `mode` places `tensor` (seed 000, 4.1 and 5.1).
static TensorPlacement getPlacement(const GroupInfo &g, LayerTensor tensor) {
  switch (g.mode) {
  case ParallelMode::Column:
    if (tensor == LayerTensor::Input)
      return g.sequenceParallel ? TensorPlacement{Placement::Gathered, 0}
                                : TensorPlacement{};
    if (tensor == LayerTensor::Weight)
      return {Placement::Local, 0};
    return {Placement::Local, 1};
  case ParallelMode::Row:
    if (tensor == LayerTensor::GradOutput)
      return g.sequenceParallel ? TensorPlacement{Placement::Gathered, 0}
                                : TensorPlacement{};
    return {Placement::Local, 1};
  case ParallelMode::Data:
    if (tensor == LayerTensor::Weight)
      return {Placement::Gathered, 0};
    return {};
  }
  llvm_unreachable("unknown mode");
}

/// The tensor's name in diagnostics.
static StringRef getTensorName(LayerTensor tensor) {
  static constexpr StringLiteral kNames[] = {"X", "W", "dY"};
  return kNames[static_cast<int>(tensor)];
}

/// The name of dimension `dim` of `tensor` in the layer's terms.
static StringRef getDimName(LayerTensor tensor, int64_t dim) {
  if (tensor == LayerTensor::Weight)
    return dim == 0 ? "N (rows)" : "K (columns)";
  if (dim == 0)
    return "M (tokens)";
  return tensor == LayerTensor::Input ? "K (columns)" : "N (columns)";
}

/// The extent along input dimension `dim` of a block of granularity `g`
/// (the rowwise output's, or the columnwise output's, i.e. transposed).
static int64_t getBlockExtent(GranularityAttr g, bool columnwise,
                              int64_t dim) {
  int64_t rows = g.getTile().rows, cols = g.getTile().cols;
  if (columnwise)
    std::swap(rows, cols);
  return dim == 0 ? rows : cols;
}

/// `[4096x1024]`, `?` for a dynamic extent.
static std::string formatShape(ArrayRef<int64_t> shape) {
  std::string text = "[";
  llvm::raw_string_ostream os(text);
  llvm::interleave(
      shape, os,
      [&](int64_t d) {
        if (ShapedType::isDynamic(d))
          os << '?';
        else
          os << d;
      },
      "x");
  os << ']';
  return text;
}

static RankedTensorType getShardType(Type type, int64_t dim, int64_t count) {
  auto ranked = cast<RankedTensorType>(type);
  SmallVector<int64_t> shape(ranked.getShape());
  shape[dim] /= count;
  return ranked.clone(shape);
}

namespace {
/// Checks and rewrites the linear layers of one module for one group.
class LayerSharder {
public:
  explicit LayerSharder(const GroupInfo &group) : group(group) {}

  /// Reports what the parallel form cannot keep exact, in the layer's terms.
  LogicalResult check(Operation *op);
  void rewrite(Operation *op);

private:
  LogicalResult checkTensor(Operation *op, RecipeAttrInterface recipe,
                            LayerTensor tensor, Value value, bool rowwise,
                            bool columnwise);
  LogicalResult checkExtent(Operation *op, StringRef what, int64_t extent,
                            StringRef dimName);
  /// Checks a layer result that is a partial sum reduced over the tokens
  /// (`partial`) or whose shape `changes`: only func.return may use it.
  LogicalResult checkResult(Operation *op, Value result, StringRef name,
                            bool partial, bool changes);

  void rewriteLinear(LinearOp op);
  void rewriteBackward(LinearBackwardOp op);

  /// The device's operand for `tensor` (`value` on one device); under
  /// tensor-parallel current scaling, sets `scale` to the whole tensor's.
  Value getOperand(OpBuilder &b, RecipeAttrInterface recipe,
                   LayerTensor tensor, Value value, Value &scale);
  /// The device's all_slice of `value` along `dim`.
  Value getSlice(OpBuilder &b, Value value, int64_t dim);
  /// `value` annotated as split along `dim` (for fp8-shard-quantize).
  Value getAnnotated(OpBuilder &b, Value value, int64_t dim);
  /// The whole tensor's current scale of `tensor`, from the device's amax
  /// reduced over the group when the tensor is split.
  Value getCurrentScale(OpBuilder &b, CurrentScalingAttr recipe,
                        LayerTensor tensor, Value value);
  Value reduceMax(OpBuilder &b, Location loc, Value amax);
  /// Reduces a partial sum over the group (reduce-scatter over the tokens
  /// under sequence parallelism, else all-reduce), adds `bias` once and
  /// rounds to `resultType`.
  Value reducePartial(OpBuilder &b, Location loc, Value partial,
                      RankedTensorType resultType, Value bias);
  /// The type of a partial sum of `resultType` before its reduction.
  RankedTensorType getPartialType(Type resultType) const;
  Value convertElements(OpBuilder &b, Location loc, Value value,
                        Type elementType);

  const GroupInfo &group;
  /// Values created before the ops of a block, shared by the layers of
  /// that block: (block, value, kind, dim or tensor).
  using CacheKey = std::tuple<Block *, Value, int, int64_t>;
  DenseMap<CacheKey, Value> cache;
};
} // namespace

LogicalResult LayerSharder::checkExtent(Operation *op, StringRef what,
                                        int64_t extent, StringRef dimName) {
  if (!ShapedType::isDynamic(extent) && extent % group.size == 0)
    return success();
  InFlightDiagnostic diag = op->emitOpError()
                            << "as a " << getModeName(group.mode)
                            << " layer over " << group.size
                            << " devices of @" << group.grid << ", " << what
                            << " is split along " << dimName << ", ";
  if (ShapedType::isDynamic(extent))
    return diag << "which is dynamic: the shards must be static";
  diag << "whose size " << extent << " is not a multiple of " << group.size
       << ": the shard collectives concatenate equal shards; pad " << dimName
       << " to a multiple of " << group.size;
  if (group.mode == ParallelMode::Data)
    diag << " (the ZeRO-1 flat shard would cut W's rows; per-tensor recipes "
            "stay exact with any cut in the runtime's sharded quantization, "
            "fp8mlir.distributed.quantize_flat_shard)";
  return diag;
}

LogicalResult LayerSharder::checkTensor(Operation *op,
                                        RecipeAttrInterface recipe,
                                        LayerTensor tensor, Value value,
                                        bool rowwise, bool columnwise) {
  TensorPlacement p = getPlacement(group, tensor);
  if (!p.isSplit())
    return success();
  auto type = cast<RankedTensorType>(value.getType());
  std::string what =
      (getTensorName(tensor) + " " + formatShape(type.getShape())).str();
  StringRef dimName = getDimName(tensor, p.dim);
  int64_t extent = type.getDimSize(p.dim);
  if (failed(checkExtent(op, what, extent, dimName)))
    return failure();
  GranularityAttr g = getTensorQuantization(recipe, tensor).granularity;
  if (g.isTensor())
    return success(); // per-tensor: the amax is max-all-reduced.
  int64_t local = extent / group.size;
  for (bool cw : {false, true}) {
    if (!(cw ? columnwise : rowwise))
      continue;
    int64_t block = getBlockExtent(g, cw, p.dim);
    if (local % block == 0)
      continue;
    InFlightDiagnostic diag = op->emitOpError();
    diag << "as a " << getModeName(group.mode) << " layer over "
         << group.size << " devices of @" << group.grid << ", " << what
         << " is split along " << dimName << " into shards of " << local
         << ", which cut its " << (cw ? "columnwise" : "rowwise") << " `"
         << g.describe() << "` blocks (" << block << " along " << dimName
         << "): ";
    if (p.placement == Placement::Gathered)
      diag << "a block on two devices needs its amax max-all-reduced before "
              "its scale, which fp8.quantize does not take (the runtime's "
              "sharded quantization, fp8mlir.distributed, reduces the "
              "block-amax grid)";
    else
      diag << "the device's GEMMs would read blocks that start or end in "
              "another device's shard, whose scales only the whole tensor "
              "has (no exact local form)";
    return diag << "; pad " << dimName << " to a multiple of "
                << block * group.size << " so that every shard holds whole "
                << "blocks";
  }
  return success();
}

LogicalResult LayerSharder::checkResult(Operation *op, Value result,
                                        StringRef name, bool partial,
                                        bool changes) {
  auto type = cast<RankedTensorType>(result.getType());
  if (partial && group.sequenceParallel &&
      failed(checkExtent(op, ("the partial " + name).str(), type.getDimSize(0),
                         "M (tokens)")))
    return failure();
  if (!changes)
    return success();
  for (Operation *user : result.getUsers())
    if (!isa<func::ReturnOp>(user))
      return user->emitOpError()
             << "uses the " << name << " of a linear layer that becomes "
             << getModeName(group.mode)
             << ", whose shape changes to the device's shard: "
                "fp8-shard-linear rewrites layers whose results the "
                "function returns";
  return success();
}

LogicalResult LayerSharder::check(Operation *op) {
  bool isLinear = isa<LinearOp>(op);
  auto recipe = isLinear ? cast<LinearOp>(op).getRecipe()
                         : cast<LinearBackwardOp>(op).getRecipe();
  if (!op->getParentOfType<func::FuncOp>())
    return op->emitOpError("fp8-shard-linear rewrites layers in func.func "
                           "functions");
  bool row = group.mode == ParallelMode::Row;
  bool column = group.mode == ParallelMode::Column;
  if (auto linear = dyn_cast<LinearOp>(op)) {
    // fprop reads X and W rowwise.
    if (failed(checkTensor(op, recipe, LayerTensor::Input, linear.getInput(),
                           true, false)) ||
        failed(checkTensor(op, recipe, LayerTensor::Weight,
                           linear.getWeight(), true, false)))
      return failure();
    return checkResult(op, linear.getResult(), "Y", /*partial=*/row,
                       /*changes=*/row || column);
  }
  auto backward = cast<LinearBackwardOp>(op);
  // dgrad reads dY rowwise and W columnwise, wgrad dY and X columnwise.
  if (failed(checkTensor(op, recipe, LayerTensor::GradOutput,
                         backward.getGradOutput(), true, true)) ||
      failed(checkTensor(op, recipe, LayerTensor::Weight, backward.getWeight(),
                         false, true)) ||
      failed(checkTensor(op, recipe, LayerTensor::Input, backward.getInput(),
                         false, true)))
    return failure();
  if (failed(checkResult(op, backward.getGradInput(), "dX",
                         /*partial=*/column, /*changes=*/row || column)))
    return failure();
  return checkResult(op, backward.getGradWeight(), "dW", /*partial=*/false,
                     /*changes=*/true);
}

Value LayerSharder::getSlice(OpBuilder &b, Value value, int64_t dim) {
  CacheKey key{b.getInsertionBlock(), value, 0, dim};
  if (Value slice = cache.lookup(key))
    return slice;
  Value slice = shard::AllSliceOp::create(
      b, value.getLoc(), getShardType(value.getType(), dim, group.size), value,
      group.grid, ArrayRef<shard::GridAxis>{group.axis}, dim);
  cache[key] = slice;
  return slice;
}

Value LayerSharder::getAnnotated(OpBuilder &b, Value value, int64_t dim) {
  CacheKey key{b.getInsertionBlock(), value, 1, dim};
  if (Value annotated = cache.lookup(key))
    return annotated;
  MLIRContext *ctx = b.getContext();
  SmallVector<shard::GridAxesAttr> splitAxes(dim + 1,
                                             DenseI16ArrayAttr::get(ctx, {}));
  splitAxes[dim] = DenseI16ArrayAttr::get(ctx, {group.axis});
  Location loc = value.getLoc();
  Value sharding =
      shard::ShardingOp::create(b, loc, group.grid, splitAxes).getResult();
  Value annotated = shard::ShardOp::create(b, loc, value, sharding,
                                           /*annotate_for_users=*/true)
                        .getResult();
  cache[key] = annotated;
  return annotated;
}

Value LayerSharder::getOperand(OpBuilder &b, RecipeAttrInterface recipe,
                               LayerTensor tensor, Value value, Value &scale) {
  TensorPlacement p = getPlacement(group, tensor);
  // Tensor parallelism under current scaling: the whole tensor's scale for
  // every tensor of the layer (all or none of the layer's scales).
  if (auto current = dyn_cast<CurrentScalingAttr>(recipe);
      current && group.mode != ParallelMode::Data)
    scale = getCurrentScale(b, current, tensor, value);
  switch (p.placement) {
  case Placement::Whole:
    return value;
  case Placement::Local:
    return getSlice(b, value, p.dim);
  case Placement::Gathered:
    return getAnnotated(b, value, p.dim);
  }
  llvm_unreachable("unknown placement");
}

Value LayerSharder::reduceMax(OpBuilder &b, Location loc, Value amax) {
  return shard::AllReduceOp::create(b, loc, amax, group.grid,
                                    ArrayRef<shard::GridAxis>{group.axis},
                                    shard::ReductionKind::Max)
      .getResult();
}

Value LayerSharder::getCurrentScale(OpBuilder &b, CurrentScalingAttr recipe,
                                    LayerTensor tensor, Value value) {
  CacheKey key{b.getInsertionBlock(), value, 2, static_cast<int64_t>(tensor)};
  if (Value scale = cache.lookup(key))
    return scale;
  TensorPlacement p = getPlacement(group, tensor);
  Value local = p.isSplit() ? getSlice(b, value, p.dim) : value;
  Location loc = value.getLoc();
  auto scalarType = RankedTensorType::get({}, b.getF32Type());
  Value amax = AmaxOp::create(b, loc, scalarType, local);
  if (p.isSplit())
    amax = reduceMax(b, loc, amax);
  Value scale = ComputeScaleOp::create(b, loc, scalarType, scalarType, Type(),
                                       amax, Value(), recipe,
                                       getTensorQuantization(recipe, tensor)
                                           .elementType)
                    .getScale();
  cache[key] = scale;
  return scale;
}

RankedTensorType LayerSharder::getPartialType(Type resultType) const {
  auto type = cast<RankedTensorType>(resultType);
  return group.f32Partials
             ? type.clone(Float32Type::get(type.getContext()))
             : type;
}

Value LayerSharder::convertElements(OpBuilder &b, Location loc, Value value,
                                    Type elementType) {
  auto type = cast<RankedTensorType>(value.getType());
  Type from = type.getElementType();
  if (from == elementType)
    return value;
  RankedTensorType to = type.clone(elementType);
  if (from.getIntOrFloatBitWidth() < elementType.getIntOrFloatBitWidth())
    return arith::ExtFOp::create(b, loc, to, value);
  return arith::TruncFOp::create(b, loc, to, value);
}

Value LayerSharder::reducePartial(OpBuilder &b, Location loc, Value partial,
                                  RankedTensorType resultType, Value bias) {
  ArrayRef<shard::GridAxis> axes(group.axis);
  auto partialType = cast<RankedTensorType>(partial.getType());
  Value sum;
  if (group.sequenceParallel) {
    sum = shard::ReduceScatterOp::create(
              b, loc, getShardType(partialType, 0, group.size), group.grid,
              axes, partial, shard::ReductionKind::Sum, APInt(64, 0))
              .getResult();
  } else {
    sum = shard::AllReduceOp::create(b, loc, partial, group.grid, axes,
                                     shard::ReductionKind::Sum)
              .getResult();
  }
  if (bias) {
    // Added once, to the reduced sum, as the single-device epilogue adds
    // it to the whole sum before rounding.
    Type elementType = partialType.getElementType();
    Value b1 = convertElements(b, loc, bias, elementType);
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, sum);
    Value init = tensor::EmptyOp::create(b, loc, sizes, elementType);
    Value broadcast =
        linalg::BroadcastOp::create(b, loc, b1, init, ArrayRef<int64_t>{0})
            .getResult()[0];
    sum = arith::AddFOp::create(b, loc, sum, broadcast);
  }
  return convertElements(b, loc, sum, resultType.getElementType());
}

void LayerSharder::rewriteLinear(LinearOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  RecipeAttrInterface recipe = op.getRecipe();
  Value xScale = op.getInputScale(), wScale = op.getWeightScale();
  Value x = getOperand(b, recipe, LayerTensor::Input, op.getInput(), xScale);
  Value w = getOperand(b, recipe, LayerTensor::Weight, op.getWeight(), wScale);
  // Column-parallel: the bias rows of the device's W rows. Row-parallel:
  // the bias is added after the reduction.
  Value bias = op.getBias();
  Value localBias = bias;
  if (bias && group.mode == ParallelMode::Column)
    localBias = getSlice(b, bias, 0);
  else if (bias && group.mode == ParallelMode::Row)
    localBias = Value();

  auto resultType = cast<RankedTensorType>(op.getResult().getType());
  RankedTensorType localType = resultType;
  if (group.mode == ParallelMode::Column)
    localType = getShardType(resultType, 1, group.size);
  else if (group.mode == ParallelMode::Row)
    localType = getPartialType(resultType);
  auto local = LinearOp::create(b, loc, localType, op.getAmaxes().getTypes(),
                                x, w, localBias, xScale, wScale, recipe);
  Value y = local.getResult();
  if (group.mode == ParallelMode::Row) {
    RankedTensorType rowType =
        group.sequenceParallel ? getShardType(resultType, 0, group.size)
                               : resultType;
    y = reducePartial(b, loc, y, rowType, bias);
  }
  op.getResult().replaceAllUsesWith(y);
  // Delayed scaling: the amaxes to record are the whole tensors'. Those of
  // gathered tensors fp8-shard-quantize reduces.
  static constexpr LayerTensor kAmaxTensors[] = {LayerTensor::Input,
                                                  LayerTensor::Weight};
  for (auto [tensor, oldAmax, newAmax] :
       llvm::zip(kAmaxTensors, op.getAmaxes(), local.getAmaxes())) {
    Value amax = newAmax;
    if (getPlacement(group, tensor).placement == Placement::Local)
      amax = reduceMax(b, loc, amax);
    oldAmax.replaceAllUsesWith(amax);
  }
  op.erase();
}

void LayerSharder::rewriteBackward(LinearBackwardOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  RecipeAttrInterface recipe = op.getRecipe();
  Value xScale = op.getInputScale(), wScale = op.getWeightScale();
  Value dyScale = op.getGradOutputScale();
  Value x = getOperand(b, recipe, LayerTensor::Input, op.getInput(), xScale);
  Value w = getOperand(b, recipe, LayerTensor::Weight, op.getWeight(), wScale);
  Value dy = getOperand(b, recipe, LayerTensor::GradOutput,
                        op.getGradOutput(), dyScale);
  // dW has W's placement (the main gradient too); in dp mode it is the
  // whole gradient, reduce-scattered to the optimizer shards below.
  Value acc = op.getAccumulateInto();
  TensorPlacement wp = getPlacement(group, LayerTensor::Weight);
  bool localW = wp.placement == Placement::Local;
  if (acc && localW)
    acc = getSlice(b, acc, wp.dim);
  auto dwType = cast<RankedTensorType>(op.getGradWeight().getType());
  RankedTensorType localDw =
      localW ? getShardType(dwType, wp.dim, group.size) : dwType;
  auto dxType = cast<RankedTensorType>(op.getGradInput().getType());
  RankedTensorType localDx = dxType;
  if (group.mode == ParallelMode::Column)
    localDx = getPartialType(dxType);
  else if (group.mode == ParallelMode::Row)
    localDx = getShardType(dxType, 1, group.size);

  Type amaxType = op.getGradOutputAmax() ? op.getGradOutputAmax().getType()
                                         : Type();
  auto local = LinearBackwardOp::create(b, loc, localDx, localDw, amaxType, x,
                                        w, dy, acc, xScale, wScale, dyScale,
                                        recipe);
  Value dx = local.getGradInput();
  if (group.mode == ParallelMode::Column) {
    RankedTensorType rowType =
        group.sequenceParallel ? getShardType(dxType, 0, group.size) : dxType;
    dx = reducePartial(b, loc, dx, rowType, /*bias=*/Value());
  }
  Value dw = local.getGradWeight();
  if (group.mode == ParallelMode::Data)
    // ZeRO-1: each device keeps the summed gradient of its weight shard.
    dw = shard::ReduceScatterOp::create(
             b, loc, getShardType(dwType, 0, group.size), group.grid,
             ArrayRef<shard::GridAxis>{group.axis}, dw,
             shard::ReductionKind::Sum, APInt(64, 0))
             .getResult();
  op.getGradInput().replaceAllUsesWith(dx);
  op.getGradWeight().replaceAllUsesWith(dw);
  if (Value amax = op.getGradOutputAmax()) {
    Value reduced = local.getGradOutputAmax();
    if (getPlacement(group, LayerTensor::GradOutput).placement ==
        Placement::Local)
      reduced = reduceMax(b, loc, reduced);
    amax.replaceAllUsesWith(reduced);
  }
  op.erase();
}

void LayerSharder::rewrite(Operation *op) {
  if (auto linear = dyn_cast<LinearOp>(op))
    rewriteLinear(linear);
  else
    rewriteBackward(cast<LinearBackwardOp>(op));
}

/// Makes `function`'s result types those its returns now produce.
static LogicalResult updateResultTypes(func::FuncOp function) {
  SmallVector<Type> results;
  for (Block &block : function.getBody()) {
    auto ret = dyn_cast<func::ReturnOp>(block.getTerminator());
    if (!ret)
      continue;
    SmallVector<Type> types(ret.getOperandTypes());
    if (!results.empty() && types != results)
      return ret.emitOpError("returns other shard types than the other "
                             "returns of the function");
    results = types;
  }
  if (results.empty())
    return success();
  function.setType(FunctionType::get(function.getContext(),
                                     function.getArgumentTypes(), results));
  return success();
}

namespace {
struct ShardLinearPass
    : public fp8::impl::FP8ShardLinearBase<ShardLinearPass> {
  using FP8ShardLinearBase::FP8ShardLinearBase;

  /// Parses the options and finds or creates the grid.
  FailureOr<GroupInfo> getGroup();
  void runOnOperation() override;
};
} // namespace

FailureOr<GroupInfo> ShardLinearPass::getGroup() {
  ModuleOp module = getOperation();
  GroupInfo g;
  std::optional<ParallelMode> parsed =
      llvm::StringSwitch<std::optional<ParallelMode>>(mode)
          .Case("column", ParallelMode::Column)
          .Case("row", ParallelMode::Row)
          .Case("dp", ParallelMode::Data)
          .Default(std::nullopt);
  if (!parsed)
    return module.emitError() << "fp8-shard-linear: unknown mode '" << mode
                              << "' (expected column, row or dp)";
  g.mode = *parsed;
  g.grid = grid.empty() ? (g.mode == ParallelMode::Data ? "dp" : "tp")
                        : std::string(grid);
  g.sequenceParallel = sequenceParallel;
  g.f32Partials = f32Partials;
  if (gridAxis < 0 || gridAxis > std::numeric_limits<int16_t>::max())
    return module.emitError() << "fp8-shard-linear: grid-axis "
                              << static_cast<int64_t>(gridAxis)
                              << " is not a grid axis";
  g.axis = static_cast<int16_t>(gridAxis);
  if (worldSize < 0)
    return module.emitError()
           << "fp8-shard-linear: world-size must be positive, got "
           << static_cast<int64_t>(worldSize);
  auto gridOp = SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(
      module, StringAttr::get(module.getContext(), g.grid));
  if (!gridOp) {
    if (worldSize == 0 || gridAxis != 0)
      return module.emitError()
             << "fp8-shard-linear: the module has no shard.grid @" << g.grid
             << "; give world-size (and grid-axis = 0) to create a 1-D grid";
    OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
    shard::GridOp::create(b, module.getLoc(), g.grid,
                          ArrayRef<int64_t>{worldSize});
    g.size = worldSize;
    return g;
  }
  ArrayRef<int64_t> shape = gridOp.getShape();
  if (gridAxis >= static_cast<int64_t>(shape.size()))
    return gridOp.emitError() << "fp8-shard-linear: grid-axis "
                              << static_cast<int64_t>(gridAxis)
                              << " is out of range for a grid of rank "
                              << shape.size();
  g.size = shape[gridAxis];
  if (ShapedType::isDynamic(g.size))
    return gridOp.emitError()
           << "fp8-shard-linear: axis " << static_cast<int64_t>(gridAxis)
           << " of the grid has a dynamic size; the shards must be static";
  if (worldSize != 0 && worldSize != g.size)
    return gridOp.emitError()
           << "fp8-shard-linear: world-size " << static_cast<int64_t>(worldSize)
           << " differs from the grid's axis " << static_cast<int64_t>(gridAxis)
           << " size "
           << g.size;
  return g;
}

void ShardLinearPass::runOnOperation() {
  SmallVector<Operation *> layers = collectLinearLayers(getOperation());
  if (layers.empty())
    return;
  FailureOr<GroupInfo> group = getGroup();
  if (failed(group))
    return signalPassFailure();
  LayerSharder sharder(*group);
  bool failedCheck = false;
  for (Operation *op : layers)
    failedCheck |= failed(sharder.check(op));
  if (failedCheck)
    return signalPassFailure();
  llvm::SetVector<func::FuncOp> functions;
  for (Operation *op : layers) {
    functions.insert(op->getParentOfType<func::FuncOp>());
    sharder.rewrite(op);
  }
  for (func::FuncOp function : functions)
    if (failed(updateResultTypes(function)))
      return signalPassFailure();
}
