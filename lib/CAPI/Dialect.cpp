//===- Dialect.cpp - C API for the fp8 dialect ----------------------------===//

#include "FP8-c/Dialect.h"
#include "FP8/Dialect/FP8/IR/FP8Attrs.h"
#include "FP8/Dialect/FP8/IR/FP8Dialect.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Registration.h"

using namespace mlir;
using namespace mlir::fp8;

MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(FP8, fp8, mlir::fp8::FP8Dialect)

/// The promotion interval of the C API (0: fast) as an Accumulation.
static Accumulation toAccumulation(int64_t interval) {
  return interval == 0 ? Accumulation::fast()
                       : Accumulation::promoted(interval);
}

/// The attribute built by AttrT::getChecked, which reports invalid
/// parameters at an unknown location of `ctx` and returns null.
template <typename AttrT, typename... Args>
static MlirAttribute getChecked(MlirContext ctx, Args &&...args) {
  MLIRContext *context = unwrap(ctx);
  auto emitError = [context] {
    return mlir::emitError(UnknownLoc::get(context));
  };
  return wrap(AttrT::getChecked(emitError, context,
                                std::forward<Args>(args)...));
}

//===----------------------------------------------------------------------===//
// #fp8.granularity
//===----------------------------------------------------------------------===//

bool fp8AttributeIsAGranularity(MlirAttribute attr) {
  return isa<GranularityAttr>(unwrap(attr));
}

MlirAttribute fp8GranularityAttrGetTensor(MlirContext ctx) {
  return wrap(GranularityAttr::getTensor(unwrap(ctx)));
}

MlirAttribute fp8GranularityAttrGetRow(MlirContext ctx) {
  return wrap(GranularityAttr::getRow(unwrap(ctx)));
}

MlirAttribute fp8GranularityAttrGetTile(MlirContext ctx, int64_t rows,
                                        int64_t cols) {
  return getChecked<GranularityAttr>(ctx, GranularityKind::Tile,
                                     TileShape{rows, cols});
}

MlirAttribute fp8GranularityAttrGetMX(MlirContext ctx, int64_t block) {
  return getChecked<GranularityAttr>(ctx, GranularityKind::MX,
                                     TileShape{1, block});
}

Fp8GranularityKind fp8GranularityAttrGetKind(MlirAttribute attr) {
  return static_cast<Fp8GranularityKind>(
      cast<GranularityAttr>(unwrap(attr)).getKind());
}

int64_t fp8GranularityAttrGetTileRows(MlirAttribute attr) {
  return cast<GranularityAttr>(unwrap(attr)).getTile().rows;
}

int64_t fp8GranularityAttrGetTileCols(MlirAttribute attr) {
  return cast<GranularityAttr>(unwrap(attr)).getTile().cols;
}

//===----------------------------------------------------------------------===//
// #fp8.accumulation
//===----------------------------------------------------------------------===//

bool fp8AttributeIsAAccumulation(MlirAttribute attr) {
  return isa<AccumulationAttr>(unwrap(attr));
}

MlirAttribute fp8AccumulationAttrGet(MlirContext ctx, int64_t interval) {
  return getChecked<AccumulationAttr>(ctx, toAccumulation(interval));
}

int64_t fp8AccumulationAttrGetPromoteInterval(MlirAttribute attr) {
  return cast<AccumulationAttr>(unwrap(attr)).getMode().promoteInterval;
}

//===----------------------------------------------------------------------===//
// #fp8.gemm_config
//===----------------------------------------------------------------------===//

bool fp8AttributeIsAGemmConfig(MlirAttribute attr) {
  return isa<GemmConfigAttr>(unwrap(attr));
}

MlirAttribute fp8GemmConfigAttrGet(MlirContext ctx, int64_t tileM,
                                   int64_t tileN, int64_t tileK,
                                   int64_t stages, int64_t clusterM,
                                   int64_t clusterN, int64_t rasterGroup) {
  return getChecked<GemmConfigAttr>(ctx, GemmTileShape{tileM, tileN, tileK},
                                    stages, TileShape{clusterM, clusterN},
                                    rasterGroup, /*stream_k=*/BoolAttr(),
                                    /*promotion_parts=*/int64_t{0},
                                    /*ping_pong=*/BoolAttr());
}

static GemmConfigAttr unwrapGemmConfig(MlirAttribute attr) {
  return cast<GemmConfigAttr>(unwrap(attr));
}

int64_t fp8GemmConfigAttrGetTileM(MlirAttribute attr) {
  return unwrapGemmConfig(attr).getTile().m;
}
int64_t fp8GemmConfigAttrGetTileN(MlirAttribute attr) {
  return unwrapGemmConfig(attr).getTile().n;
}
int64_t fp8GemmConfigAttrGetTileK(MlirAttribute attr) {
  return unwrapGemmConfig(attr).getTile().k;
}
int64_t fp8GemmConfigAttrGetStages(MlirAttribute attr) {
  return unwrapGemmConfig(attr).getStages();
}
int64_t fp8GemmConfigAttrGetClusterM(MlirAttribute attr) {
  return unwrapGemmConfig(attr).getCluster().rows;
}
int64_t fp8GemmConfigAttrGetClusterN(MlirAttribute attr) {
  return unwrapGemmConfig(attr).getCluster().cols;
}
int64_t fp8GemmConfigAttrGetRasterGroup(MlirAttribute attr) {
  return unwrapGemmConfig(attr).getRasterGroup();
}

//===----------------------------------------------------------------------===//
// Recipes
//===----------------------------------------------------------------------===//

bool fp8AttributeIsARecipe(MlirAttribute attr) {
  return isa<RecipeAttrInterface>(unwrap(attr));
}

int64_t fp8RecipeAttrGetAccumulate(MlirAttribute attr) {
  return cast<RecipeAttrInterface>(unwrap(attr)).getAccumulate()
      .promoteInterval;
}

bool fp8AttributeIsADelayedScaling(MlirAttribute attr) {
  return isa<DelayedScalingAttr>(unwrap(attr));
}

MlirAttribute fp8DelayedScalingAttrGet(MlirContext ctx, int64_t history,
                                       Fp8AmaxComputeAlgo algo, int64_t margin,
                                       Fp8RecipeFormat format,
                                       int64_t accumulate) {
  return getChecked<DelayedScalingAttr>(
      ctx, history, static_cast<AmaxComputeAlgo>(algo), margin,
      static_cast<RecipeFormat>(format), toAccumulation(accumulate));
}

bool fp8AttributeIsACurrentScaling(MlirAttribute attr) {
  return isa<CurrentScalingAttr>(unwrap(attr));
}

MlirAttribute fp8CurrentScalingAttrGet(MlirContext ctx, float epsilon,
                                       bool pow2, Fp8RecipeFormat format,
                                       int64_t accumulate) {
  return getChecked<CurrentScalingAttr>(ctx, llvm::APFloat(epsilon), pow2,
                                        static_cast<RecipeFormat>(format),
                                        toAccumulation(accumulate));
}

bool fp8AttributeIsABlockwiseScaling(MlirAttribute attr) {
  return isa<BlockwiseScalingAttr>(unwrap(attr));
}

MlirAttribute fp8BlockwiseScalingAttrGet(MlirContext ctx, int64_t actRows,
                                         int64_t actCols, int64_t weightRows,
                                         int64_t weightCols,
                                         Fp8BlockScaleKind scales,
                                         float amaxClamp, int64_t accumulate) {
  return getChecked<BlockwiseScalingAttr>(
      ctx, TileShape{actRows, actCols}, TileShape{weightRows, weightCols},
      static_cast<BlockScaleKind>(scales), llvm::APFloat(amaxClamp),
      toAccumulation(accumulate));
}

bool fp8AttributeIsAMXScaling(MlirAttribute attr) {
  return isa<MXScalingAttr>(unwrap(attr));
}

MlirAttribute fp8MXScalingAttrGet(MlirContext ctx, int64_t block,
                                  Fp8UE8M0Rounding rounding,
                                  Fp8ElementFormat format,
                                  int64_t accumulate) {
  return getChecked<MXScalingAttr>(ctx, block,
                                   static_cast<UE8M0Rounding>(rounding),
                                   static_cast<ElementFormat>(format),
                                   toAccumulation(accumulate));
}
