//===- ExpandLinear.cpp - FP8 linear layers to quantizations and GEMMs ----===//
//
// Expands fp8.linear / fp8.linear_backward into the fp8.quantize ops and the
// three training GEMMs (fprop, dgrad, wgrad) of a recipe on a chip, sharing
// each tensor's quantization between the GEMMs that read it (see the pass
// description in Passes.td).
//
//===----------------------------------------------------------------------===//

#include "FP8/Conversion/FP8ToGPU/KernelContract.h"
#include "FP8/Dialect/FP8/IR/FP8Ops.h"
#include "FP8/Dialect/FP8/Transforms/Passes.h"
#include "FP8/Dialect/FP8/IR/FP8Target.h"
#include "LinearLayer.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8EXPANDLINEAR
#include "FP8/Dialect/FP8/Transforms/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;

namespace {

/// An fp8.quantize to create: one tensor at one granularity, element type
/// and (delayed scaling) scale, with every output its GEMMs read.
struct QuantizeKey {
  Block *block;
  Value input;
  Attribute granularity;
  Type elementType;
  Value scale;
  bool operator==(const QuantizeKey &o) const {
    return block == o.block && input == o.input &&
           granularity == o.granularity && elementType == o.elementType &&
           scale == o.scale;
  }
};

struct QuantizeRequest {
  RecipeAttrInterface recipe;
  /// The layer tensor of the first request (names the saved tensors of a
  /// split training step).
  LayerTensor tensor = LayerTensor::Input;
  /// The first op of the block that reads it: the insertion point, which
  /// the input and scale (operands of that op) dominate.
  Operation *firstUser = nullptr;
  bool rowwise = false;
  bool columnwise = false;
  bool amax = false;
  QuantizeOp op;
};

/// A GEMM operand: FP8 data, its scales, and how the GEMM reads them.
struct GemmOperand {
  Value data;
  Value scaleInv;
  GranularityAttr granularity;
  OperandMajor major;
};

} // namespace

namespace llvm {
template <>
struct DenseMapInfo<QuantizeKey> {
  static QuantizeKey getEmptyKey() {
    return {DenseMapInfo<Block *>::getEmptyKey(), mlir::Value(),
            mlir::Attribute(), mlir::Type(), mlir::Value()};
  }
  static QuantizeKey getTombstoneKey() {
    return {DenseMapInfo<Block *>::getTombstoneKey(), mlir::Value(),
            mlir::Attribute(), mlir::Type(), mlir::Value()};
  }
  static unsigned getHashValue(const QuantizeKey &k) {
    return hash_combine(k.block, k.input.getAsOpaquePointer(),
                        k.granularity.getAsOpaquePointer(),
                        k.elementType.getAsOpaquePointer(),
                        k.scale.getAsOpaquePointer());
  }
  static bool isEqual(const QuantizeKey &a, const QuantizeKey &b) {
    return a == b;
  }
};
} // namespace llvm

StringRef mlir::fp8::getLayerTensorName(LayerTensor tensor) {
  static constexpr StringLiteral kNames[] = {"x", "w", "dy"};
  return kNames[static_cast<int>(tensor)];
}

SmallVector<Operation *> mlir::fp8::collectLinearLayers(Operation *root) {
  SmallVector<Operation *> layers;
  root->walk([&](Operation *op) {
    if (isa<LinearOp, LinearBackwardOp>(op))
      layers.push_back(op);
  });
  return layers;
}

TensorQuantization mlir::fp8::getTensorQuantization(RecipeAttrInterface recipe,
                                                    LayerTensor tensor) {
  MLIRContext *ctx = recipe.getContext();
  Type e4m3 = Float8E4M3FNType::get(ctx);
  Type e5m2 = Float8E5M2Type::get(ctx);
  auto perTensor = [&](RecipeFormat format) {
    bool hybridGrad =
        format == RecipeFormat::Hybrid && tensor == LayerTensor::GradOutput;
    return TensorQuantization{GranularityAttr::getTensor(ctx),
                              hybridGrad ? e5m2 : e4m3};
  };
  return llvm::TypeSwitch<Attribute, TensorQuantization>(recipe)
      .Case<DelayedScalingAttr, CurrentScalingAttr>(
          [&](auto r) { return perTensor(r.getFormat()); })
      .Case<BlockwiseScalingAttr>([&](BlockwiseScalingAttr r) {
        TileShape tile =
            tensor == LayerTensor::Weight ? r.getWeight() : r.getAct();
        return TensorQuantization{
            GranularityAttr::getTile(ctx, tile.rows, tile.cols), e4m3};
      })
      .Case<MXScalingAttr>([&](MXScalingAttr r) {
        return TensorQuantization{
            GranularityAttr::getMX(ctx, r.getBlock()),
            r.getFormat() == ElementFormat::E5M2 ? e5m2 : e4m3};
      });
}

/// Whether quantizing a tensor along its columns gives the same values and
/// scales (transposed) as along its rows: per-tensor scales and square tiles.
static bool isDirectionIndependent(GranularityAttr g) {
  return g.isTensor() || (g.isTile() && g.getTile().rows == g.getTile().cols);
}

static RankedTensorType withElementType(Value v, Type elementType) {
  return cast<RankedTensorType>(v.getType()).clone(elementType);
}

static Type getScaleElementType(GranularityAttr g) {
  MLIRContext *ctx = g.getContext();
  return g.isMX() ? Type(Float8E8M0FNUType::get(ctx)) : Float32Type::get(ctx);
}

namespace {
/// Expands the linear layers of one region-holding op for one chip.
class LinearExpander {
public:
  explicit LinearExpander(const ChipInfo &chip) : chip(chip) {}

  /// Records the quantizations `op` needs; fails on combinations the chip
  /// cannot run.
  LogicalResult plan(Operation *op);
  /// Creates the quantize ops and replaces every planned linear op.
  void rewrite(OpBuilder &b);

private:
  /// The quantization of `input` that `user`'s recipe gives it.
  static QuantizeKey getKey(Operation *user, RecipeAttrInterface recipe,
                            LayerTensor tensor, Value input, Value scale);
  /// Records that a GEMM of `user` reads that quantization with its K
  /// dimension along the stored rows (`kAlongRows`: the tensor's last
  /// dimension is K) or along its columns.
  void request(Operation *user, RecipeAttrInterface recipe, LayerTensor tensor,
               Value input, Value scale, bool kAlongRows, bool wantsAmax);
  GemmOperand getOperand(OpBuilder &b, const QuantizeKey &key,
                         bool kAlongRows);
  /// Whether a GEMM reading a tensor with K along its columns reads the
  /// rowwise quantization MN-major (no columnwise output needed).
  bool readsRowwiseMNMajor(const QuantizeKey &key) const {
    return chip.supportsMNMajorFP8 &&
           isDirectionIndependent(cast<GranularityAttr>(key.granularity));
  }
  Value createGemm(OpBuilder &b, Location loc, const GemmOperand &a,
                   const GemmOperand &bOperand, Type resultType,
                   RecipeAttrInterface recipe, Value bias, Value c);
  void rewriteLinear(OpBuilder &b, LinearOp op);
  void rewriteBackward(OpBuilder &b, LinearBackwardOp op);
  // The expert (grouped) layer.
  LogicalResult planGrouped(Operation *op);
  void rewriteGroupedLinear(OpBuilder &b, GroupedLinearOp op);
  void rewriteGroupedBackward(OpBuilder &b, GroupedLinearBackwardOp op);
  /// In a function to split (fp8.split_backward): marks the output
  /// gradient `gradOutput` that `op` reads, which must be an argument,
  /// fp8.grad_output.
  static LogicalResult markGradOutput(Operation *op, Value gradOutput);
  static bool isInSplitFunction(Operation *op);

  const ChipInfo &chip;
  llvm::MapVector<QuantizeKey, QuantizeRequest> requests;
  SmallVector<Operation *> layers;
};
} // namespace

QuantizeKey LinearExpander::getKey(Operation *user,
                                   RecipeAttrInterface recipe,
                                   LayerTensor tensor, Value input,
                                   Value scale) {
  TensorQuantization q = getTensorQuantization(recipe, tensor);
  return {user->getBlock(), input, q.granularity, q.elementType, scale};
}

void LinearExpander::request(Operation *user, RecipeAttrInterface recipe,
                             LayerTensor tensor, Value input, Value scale,
                             bool kAlongRows, bool wantsAmax) {
  QuantizeKey key = getKey(user, recipe, tensor, input, scale);
  QuantizeRequest &r = requests[key];
  if (!r.firstUser) {
    r.firstUser = user;
    r.recipe = recipe;
    r.tensor = tensor;
  }
  if (kAlongRows || readsRowwiseMNMajor(key))
    r.rowwise = true;
  else
    r.columnwise = true;
  r.amax |= wantsAmax;
}

LogicalResult LinearExpander::plan(Operation *op) {
  if (isa<GroupedLinearOp, GroupedLinearBackwardOp>(op))
    return planGrouped(op);
  RecipeAttrInterface recipe;
  if (auto linear = dyn_cast<LinearOp>(op))
    recipe = linear.getRecipe();
  else
    recipe = cast<LinearBackwardOp>(op).getRecipe();
  // The chip's and the kernels' limits in the layer's terms, before the
  // GEMMs exist.
  if (failed(verifyLinearKernelContract(op, chip)))
    return failure();

  if (auto backward = dyn_cast<LinearBackwardOp>(op))
    if (failed(markGradOutput(op, backward.getGradOutput())))
      return failure();

  if (auto linear = dyn_cast<LinearOp>(op)) {
    bool amax = static_cast<bool>(linear.getInputAmax());
    // fprop Y[M, N] = X[M, K] W[N, K]^T: both read along K, their rows.
    request(op, recipe, LayerTensor::Input, linear.getInput(),
            linear.getInputScale(), /*kAlongRows=*/true, amax);
    request(op, recipe, LayerTensor::Weight, linear.getWeight(),
            linear.getWeightScale(), /*kAlongRows=*/true, amax);
  } else {
    auto backward = cast<LinearBackwardOp>(op);
    bool amax = static_cast<bool>(backward.getGradOutputAmax());
    // dgrad dX[M, K] = dY[M, N] W[N, K]: GEMM K = N, dY's rows, W's columns.
    request(op, recipe, LayerTensor::GradOutput, backward.getGradOutput(),
            backward.getGradOutputScale(), /*kAlongRows=*/true, amax);
    request(op, recipe, LayerTensor::Weight, backward.getWeight(),
            backward.getWeightScale(), /*kAlongRows=*/false, false);
    // wgrad dW[N, K] = dY^T X: GEMM K = M, the columns of both.
    request(op, recipe, LayerTensor::GradOutput, backward.getGradOutput(),
            backward.getGradOutputScale(), /*kAlongRows=*/false, amax);
    request(op, recipe, LayerTensor::Input, backward.getInput(),
            backward.getInputScale(), /*kAlongRows=*/false, false);
  }
  layers.push_back(op);
  return success();
}

/// The function of `op` if it is a training step to split into forward and
/// backward (`fp8.split_backward`), else null.
static FunctionOpInterface getSplitFunction(Operation *op) {
  auto function = op->getParentOfType<FunctionOpInterface>();
  return function && function->hasAttr(kSplitBackwardAttrName) ? function
                                                               : nullptr;
}

bool LinearExpander::isInSplitFunction(Operation *op) {
  return static_cast<bool>(getSplitFunction(op));
}

LogicalResult LinearExpander::markGradOutput(Operation *op, Value gradOutput) {
  FunctionOpInterface function = getSplitFunction(op);
  if (!function)
    return success();
  // The backward of a split step starts at its output gradients: they must
  // come in as arguments (a later call provides them).
  auto arg = dyn_cast<BlockArgument>(gradOutput);
  if (!arg || arg.getOwner() != &function.getFunctionBody().front())
    return op->emitOpError()
           << "reads an output gradient that is not an argument of its "
              "function, which is split into forward and backward ("
           << kSplitBackwardAttrName
           << "): the backward starts at the gradients passed to it";
  function.setArgAttr(arg.getArgNumber(), kGradOutputAttrName,
                      UnitAttr::get(op->getContext()));
  return success();
}

GemmOperand LinearExpander::getOperand(OpBuilder &b, const QuantizeKey &key,
                                       bool kAlongRows) {
  QuantizeOp q = requests.lookup(key).op;
  auto granularity = cast<GranularityAttr>(key.granularity);
  if (kAlongRows)
    return {q.getRowwise(), q.getRowwiseScaleInv(), granularity,
            OperandMajor::K};
  if (!readsRowwiseMNMajor(key)) {
    // The columnwise quantization: stored transposed (K-major) where the
    // MMA reads K-major only, as it is (MN-major) elsewhere.
    bool transposed =
        q.getColumnwiseLayout() == ColumnwiseLayout::Transposed;
    return {q.getColumnwise(), q.getColumnwiseScaleInv(), granularity,
            transposed ? OperandMajor::K : OperandMajor::MN};
  }
  // The rowwise data read MN-major; the GEMM takes scales in its logical
  // orientation, so a square tile's scale matrix is transposed (a few
  // hundred values, not the data).
  Value scale = q.getRowwiseScaleInv();
  if (!granularity.isTensor()) {
    Location loc = q.getLoc();
    auto type = cast<RankedTensorType>(scale.getType());
    SmallVector<OpFoldResult> sizes;
    for (int64_t dim : {1, 0})
      sizes.push_back(tensor::getMixedSize(b, loc, scale, dim));
    Value init =
        tensor::EmptyOp::create(b, loc, sizes, type.getElementType());
    scale = linalg::TransposeOp::create(b, loc, scale, init,
                                        ArrayRef<int64_t>{1, 0})
                .getResult()[0];
  }
  return {q.getRowwise(), scale, granularity, OperandMajor::MN};
}

Value LinearExpander::createGemm(OpBuilder &b, Location loc,
                                 const GemmOperand &a,
                                 const GemmOperand &bOperand, Type resultType,
                                 RecipeAttrInterface recipe, Value bias,
                                 Value c) {
  MLIRContext *ctx = b.getContext();
  auto gemm = ScaledMatmulOp::create(
      b, loc, resultType, /*result_scale_inv=*/Type(), /*amax=*/Type(), a.data,
      bOperand.data, a.scaleInv, bOperand.scaleInv, bias, c,
      /*result_scale=*/Value(), /*out=*/Value(), /*amax_out=*/Value(),
      a.granularity,
      bOperand.granularity, OperandMajorAttr::get(ctx, a.major),
      OperandMajorAttr::get(ctx, bOperand.major),
      AccumulationAttr::get(ctx, recipe.getAccumulate()), recipe,
      /*config=*/GemmConfigAttr(), /*activation=*/ActivationAttr(),
      /*result_recipe=*/RecipeAttrInterface(),
      /*result_granularity=*/GranularityAttr());
  return gemm.getResult();
}

void LinearExpander::rewriteLinear(OpBuilder &b, LinearOp op) {
  RecipeAttrInterface recipe = op.getRecipe();
  b.setInsertionPoint(op);
  QuantizeKey x = getKey(op, recipe, LayerTensor::Input, op.getInput(),
                         op.getInputScale());
  QuantizeKey w = getKey(op, recipe, LayerTensor::Weight, op.getWeight(),
                         op.getWeightScale());
  Value y = createGemm(b, op.getLoc(), getOperand(b, x, true),
                       getOperand(b, w, true), op.getResult().getType(), recipe,
                       op.getBias(), /*c=*/Value());
  op.getResult().replaceAllUsesWith(y);
  if (op.getInputAmax()) {
    op.getInputAmax().replaceAllUsesWith(requests.lookup(x).op.getAmax());
    op.getWeightAmax().replaceAllUsesWith(requests.lookup(w).op.getAmax());
  }
  op.erase();
}

void LinearExpander::rewriteBackward(OpBuilder &b, LinearBackwardOp op) {
  RecipeAttrInterface recipe = op.getRecipe();
  b.setInsertionPoint(op);
  QuantizeKey dy = getKey(op, recipe, LayerTensor::GradOutput,
                          op.getGradOutput(), op.getGradOutputScale());
  QuantizeKey w = getKey(op, recipe, LayerTensor::Weight, op.getWeight(),
                         op.getWeightScale());
  QuantizeKey x = getKey(op, recipe, LayerTensor::Input, op.getInput(),
                         op.getInputScale());
  Value dx = createGemm(b, op.getLoc(), getOperand(b, dy, true),
                        getOperand(b, w, false), op.getGradInput().getType(),
                        recipe, /*bias=*/Value(), /*c=*/Value());
  Value dw = createGemm(b, op.getLoc(), getOperand(b, dy, false),
                        getOperand(b, x, false), op.getGradWeight().getType(),
                        recipe, /*bias=*/Value(), op.getAccumulateInto());
  op.getGradInput().replaceAllUsesWith(dx);
  op.getGradWeight().replaceAllUsesWith(dw);
  if (op.getGradOutputAmax())
    op.getGradOutputAmax().replaceAllUsesWith(requests.lookup(dy).op.getAmax());
  op.erase();
}

//===----------------------------------------------------------------------===//
// The expert (grouped) layer
//===----------------------------------------------------------------------===//

/// What the grouped expansion asks of a layer, in its terms: the recipe
/// and chip it has kernels for, static expert extents, and weights whose
/// 128x128 tiles stay inside one expert.
static LogicalResult verifyGroupedLinearContract(Operation *op,
                                                 RecipeAttrInterface recipe,
                                                 const ChipInfo &chip) {
  auto blockwise = dyn_cast<BlockwiseScalingAttr>(recipe);
  if (!blockwise || blockwise.getAct() != TileShape{1, kBlockwiseScaleBlock} ||
      blockwise.getWeight() !=
          TileShape{kBlockwiseScaleBlock, kBlockwiseScaleBlock}) {
    InFlightDiagnostic diag =
        op->emitOpError()
        << "expert layers are expanded for the DeepSeek-V3 blockwise recipe "
           "(#fp8.blockwise: 1x128 activation and 128x128 weight tiles) "
           "only, got "
        << Attribute(recipe);
    if (isa<CurrentScalingAttr, DelayedScalingAttr>(recipe))
      diag << ": the grouped GEMMs take per-tensor and rowwise weight scales "
              "per expert, which the layer's quantizations do not compute "
              "(use fp8.grouped_scaled_matmul with scales of your own)";
    return diag;
  }
  if (chip.architecture != Architecture::Hopper)
    return op->emitOpError()
           << "expert layers need the sm_90a grouped GEMM kernels (f32 "
              "blockwise scales, the k_grouped weight gradient), not "
           << chip.name;
  // The weights [G, N, K] are quantized as a batch of matrices in 128x128
  // tiles, each expert on its own.
  auto x = cast<RankedTensorType>(op->getOperand(0).getType());
  auto w = cast<RankedTensorType>(op->getOperand(1).getType());
  if (!w.hasStaticShape())
    return op->emitOpError()
           << "expected a static weight [G, N, K] (experts, output and input "
              "features), got "
           << w << ": the grouped GEMM kernels are built per G, N and K";
  int64_t n = w.getDimSize(1), k = w.getDimSize(2);
  bool backward = isa<GroupedLinearBackwardOp>(op);
  if (n % 128 != 0 || (backward && k % 128 != 0))
    return op->emitOpError()
           << "expected N (output features)"
           << (backward ? " and K (input features)" : "")
           << " to be multiples of 128, got N = " << n << ", K = " << k
           << ": the quantization kernel casts the experts' weights [G, N, K] "
              "as one [G * N, K] matrix in 128x128 tiles, which may not cross "
              "experts"
           << (backward ? " (nor their transposes [G, K, N], which dgrad "
                          "reads)"
                        : "");
  if (k % 16 != 0)
    return op->emitOpError() << "expected K (input features) to be a multiple "
                                "of 16, got "
                             << k << ": the kernels read rows of it in "
                                     "16-byte aligned strides (TMA)";
  if (backward && (x.isDynamicDim(0) || x.getDimSize(0) % 128 != 0))
    return op->emitOpError()
           << "expected a static token count M, a multiple of 128, got "
           << (x.isDynamicDim(0) ? std::string("?")
                                 : std::to_string(x.getDimSize(0)))
           << ": the weight gradient reduces over the tokens in whole "
              "128-token blocks (the kernels are built per M); pad the tokens "
              "with zero rows, as every expert's rows are";
  return success();
}

LogicalResult LinearExpander::planGrouped(Operation *op) {
  RecipeAttrInterface recipe;
  if (auto linear = dyn_cast<GroupedLinearOp>(op))
    recipe = linear.getRecipe();
  else
    recipe = cast<GroupedLinearBackwardOp>(op).getRecipe();
  if (failed(verifyGroupedLinearContract(op, recipe, chip)))
    return failure();
  if (auto linear = dyn_cast<GroupedLinearOp>(op)) {
    // fprop Y[rows of g] = X[rows of g] W[g]^T: both read along K.
    request(op, recipe, LayerTensor::Input, linear.getInput(), Value(),
            /*kAlongRows=*/true, false);
    request(op, recipe, LayerTensor::Weight, linear.getWeight(), Value(),
            /*kAlongRows=*/true, false);
  } else {
    auto backward = cast<GroupedLinearBackwardOp>(op);
    if (failed(markGradOutput(op, backward.getGradOutput())))
      return failure();
    // dgrad dX[rows of g] = dY[rows of g] W[g]: W[g]'s columns, each
    // expert's transpose.
    request(op, recipe, LayerTensor::GradOutput, backward.getGradOutput(),
            Value(), /*kAlongRows=*/true, false);
    request(op, recipe, LayerTensor::Weight, backward.getWeight(), Value(),
            /*kAlongRows=*/false, false);
    // wgrad dW[g] = dY[rows of g]^T X[rows of g]: the columns of both.
    request(op, recipe, LayerTensor::GradOutput, backward.getGradOutput(),
            Value(), /*kAlongRows=*/false, false);
    request(op, recipe, LayerTensor::Input, backward.getInput(), Value(),
            /*kAlongRows=*/false, false);
  }
  layers.push_back(op);
  return success();
}

static Value createGroupedGemm(OpBuilder &b, Location loc, const GemmOperand &a,
                               const GemmOperand &bOperand, Value groups,
                               GroupedLayout layout, Type resultType,
                               RecipeAttrInterface recipe) {
  MLIRContext *ctx = b.getContext();
  return GroupedScaledMatmulOp::create(
             b, loc, resultType, /*result_scale_inv=*/Type(), a.data,
             bOperand.data, a.scaleInv, bOperand.scaleInv, groups,
             /*result_scale=*/Value(), GroupedLayoutAttr::get(ctx, layout),
             a.granularity, bOperand.granularity,
             AccumulationAttr::get(ctx, recipe.getAccumulate()),
             /*config=*/GemmConfigAttr(), /*result_recipe=*/nullptr,
             /*result_granularity=*/nullptr)
      .getResult();
}

void LinearExpander::rewriteGroupedLinear(OpBuilder &b, GroupedLinearOp op) {
  RecipeAttrInterface recipe = op.getRecipe();
  b.setInsertionPoint(op);
  QuantizeKey x =
      getKey(op, recipe, LayerTensor::Input, op.getInput(), Value());
  QuantizeKey w =
      getKey(op, recipe, LayerTensor::Weight, op.getWeight(), Value());
  Value y = createGroupedGemm(
      b, op.getLoc(), getOperand(b, x, true), getOperand(b, w, true),
      op.getGroupIndex(), GroupedLayout::MContiguous,
      op.getResult().getType(), recipe);
  op.getResult().replaceAllUsesWith(y);
  op.erase();
}

void LinearExpander::rewriteGroupedBackward(OpBuilder &b,
                                            GroupedLinearBackwardOp op) {
  RecipeAttrInterface recipe = op.getRecipe();
  b.setInsertionPoint(op);
  QuantizeKey dy = getKey(op, recipe, LayerTensor::GradOutput,
                          op.getGradOutput(), Value());
  QuantizeKey w =
      getKey(op, recipe, LayerTensor::Weight, op.getWeight(), Value());
  QuantizeKey x =
      getKey(op, recipe, LayerTensor::Input, op.getInput(), Value());
  // dgrad: m_contiguous over dY's rows with each expert's W[g]^T [K, N].
  Value dx = createGroupedGemm(
      b, op.getLoc(), getOperand(b, dy, true), getOperand(b, w, false),
      op.getGroupIndex(), GroupedLayout::MContiguous,
      op.getGradInput().getType(), recipe);
  // wgrad: K-grouped over the tokens, dY^T [N, M] and X^T [K, M].
  Value dw = createGroupedGemm(
      b, op.getLoc(), getOperand(b, dy, false), getOperand(b, x, false),
      op.getGroupSizes(), GroupedLayout::KGrouped,
      op.getGradWeight().getType(), recipe);
  op.getGradInput().replaceAllUsesWith(dx);
  op.getGradWeight().replaceAllUsesWith(dw);
  op.erase();
}

void LinearExpander::rewrite(OpBuilder &b) {
  for (auto &[key, r] : requests) {
    auto granularity = cast<GranularityAttr>(key.granularity);
    // Expert weights [G, N, K]: a batch of matrices, each quantized on its
    // own, with G outermost in every output.
    auto inputType = cast<RankedTensorType>(key.input.getType());
    bool batched = inputType.getRank() == 3;
    SmallVector<int64_t> batch;
    if (batched)
      batch.push_back(inputType.getDimSize(0));
    int64_t rows = inputType.getDimSize(batched ? 1 : 0);
    int64_t cols = inputType.getDimSize(batched ? 2 : 1);
    auto batchedShape = [&](ArrayRef<int64_t> shape) {
      SmallVector<int64_t> full(batch);
      llvm::append_range(full, shape);
      return full;
    };
    Type scaleElem = getScaleElementType(granularity);
    Type rowwise, rowwiseScale, columnwise, columnwiseScale, amax;
    if (r.rowwise) {
      rowwise = withElementType(key.input, key.elementType);
      rowwiseScale = RankedTensorType::get(
          batchedShape(granularity.getScaleShape(rows, cols)), scaleElem);
    }
    bool transposed = !chip.supportsMNMajorFP8;
    if (r.columnwise) {
      columnwise = RankedTensorType::get(
          batchedShape(transposed ? SmallVector<int64_t>{cols, rows}
                                  : SmallVector<int64_t>{rows, cols}),
          key.elementType);
      columnwiseScale = RankedTensorType::get(
          batchedShape(granularity.getScaleShape(cols, rows)), scaleElem);
    }
    if (r.amax)
      amax = RankedTensorType::get({}, b.getF32Type());
    b.setInsertionPoint(r.firstUser);
    r.op = QuantizeOp::create(
        b, r.firstUser->getLoc(), rowwise, rowwiseScale, columnwise,
        columnwiseScale, amax, key.input, key.scale, r.recipe, granularity,
        r.columnwise && !transposed ? ColumnwiseLayout::Untransposed
                                    : ColumnwiseLayout::Transposed,
        /*scale_granularity=*/GranularityAttr());
    if (isInSplitFunction(r.firstUser))
      r.op->setAttr(kNameAttrName, b.getStringAttr(getLayerTensorName(r.tensor)));
  }
  for (Operation *op : layers) {
    if (auto linear = dyn_cast<LinearOp>(op))
      rewriteLinear(b, linear);
    else if (auto backward = dyn_cast<LinearBackwardOp>(op))
      rewriteBackward(b, backward);
    else if (auto grouped = dyn_cast<GroupedLinearOp>(op))
      rewriteGroupedLinear(b, grouped);
    else
      rewriteGroupedBackward(b, cast<GroupedLinearBackwardOp>(op));
  }
}

namespace {
struct ExpandLinearPass
    : public fp8::impl::FP8ExpandLinearBase<ExpandLinearPass> {
  using FP8ExpandLinearBase::FP8ExpandLinearBase;

  void runOnOperation() override {
    SmallVector<Operation *> layers = collectLinearLayers(getOperation());
    // The expert layers too (fp8-shard-linear does not take them).
    getOperation()->walk([&](Operation *op) {
      if (isa<GroupedLinearOp, GroupedLinearBackwardOp>(op))
        layers.push_back(op);
    });
    if (layers.empty())
      return;
    FailureOr<TargetInfo> target = getTarget(layers.front());
    if (mlir::failed(target))
      return signalPassFailure();
    LinearExpander expander(target->chip);
    bool failed = false;
    for (Operation *op : layers)
      failed |= mlir::failed(expander.plan(op));
    if (failed)
      return signalPassFailure();
    OpBuilder b(&getContext());
    expander.rewrite(b);
  }
};
} // namespace
