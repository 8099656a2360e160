//===- TwoPhaseFP8Result.cpp - FP8 GEMM results quantized after the GEMM --===//
//
// An FP8 result whose scales depend on more than one output tile (per-tensor
// current scaling without a given scale: the amax of all of D; row
// granularity: a whole row of N columns; 128x128 tiles; MX blocks) cannot be
// quantized in the epilogue, where a CTA holds one tile. It is lowered in two
// phases: the GEMM writes D in f32 (so the values quantized are the f32
// values of D, as in the fused epilogue), reducing its amax with atomics in
// the same epilogue for per-tensor scaling, and a quantization kernel reads
// it back:
//
//   %d, %s = fp8.scaled_matmul ... {result_recipe = #fp8.current<>,
//                                   result_granularity = tensor}
// becomes
//   %d32, %amax = fp8.scaled_matmul ... -> (tensor<?xNxf32>, tensor<f32>)
//   %scale, %scale_inv = fp8.compute_scale %amax {recipe = #fp8.current<>}
//   %d, %s = fp8.quantize %d32 scale %scale {recipe, granularity = tensor}
//
//===----------------------------------------------------------------------===//

#include "GemmPlan.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Verifier.h"

using namespace mlir;
using namespace mlir::fp8;

FailureOr<ScaledMatmulOp> mlir::fp8::splitTwoPhaseFP8Result(ScaledMatmulOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  RecipeAttrInterface recipe = op.getResultRecipeAttr();
  GranularityAttr g = op.getResultGranularityAttr();
  auto resultType = cast<RankedTensorType>(op.getResult().getType());
  auto scalarType = RankedTensorType::get({}, b.getF32Type());
  bool perTensorAmax = g.isTensor() && !op.getResultScale();
  bool needsAmax = perTensorAmax || op.getAmax();
  auto gemm = ScaledMatmulOp::create(
      b, loc, resultType.clone(b.getF32Type()), /*result_scale_inv=*/Type(),
      needsAmax ? scalarType : Type(), op.getA(), op.getB(), op.getAScaleInv(),
      op.getBScaleInv(), op.getBias(), op.getC(), /*result_scale=*/Value(),
      /*out=*/Value(), /*amax_out=*/Value(), op.getAGranularityAttr(),
      op.getBGranularityAttr(), op.getAMajorAttr(), op.getBMajorAttr(),
      op.getAccumulationAttr(), op.getRecipeAttr(), op.getConfigAttr(),
      op.getActivationAttr(), /*result_recipe=*/RecipeAttrInterface(),
      /*result_granularity=*/GranularityAttr());
  Value scale = op.getResultScale();
  if (perTensorAmax)
    scale = ComputeScaleOp::create(b, loc, scalarType, scalarType,
                                   /*next_history=*/Type(), gemm.getAmax(),
                                   /*previous_scale=*/Value(), recipe,
                                   resultType.getElementType())
                .getScale();
  auto quantize = QuantizeOp::create(
      b, loc, resultType, op.getResultScaleInv().getType(),
      /*columnwise=*/Type(), /*columnwise_scale_inv=*/Type(), /*amax=*/Type(),
      gemm.getResult(), scale, recipe, g, ColumnwiseLayout::Transposed,
      /*scale_granularity=*/GranularityAttr());
  if (failed(mlir::verify(quantize)))
    return failure();
  op.getResult().replaceAllUsesWith(quantize.getRowwise());
  op.getResultScaleInv().replaceAllUsesWith(quantize.getRowwiseScaleInv());
  if (Value amax = op.getAmax())
    amax.replaceAllUsesWith(gemm.getAmax());
  op.erase();
  return gemm;
}
