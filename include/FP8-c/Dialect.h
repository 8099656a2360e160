/*===-- FP8-c/Dialect.h - C API for the fp8 dialect ---------------*- C -*-===*\
|*                                                                            *|
|* The fp8 dialect handle and its attributes, in the style of the MLIR C API  *|
|* (mlir-c/Dialect/*.h). Enum values are those of the dialect's TableGen      *|
|* enums.                                                                     *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef FP8_C_DIALECT_H
#define FP8_C_DIALECT_H

#include "mlir-c/IR.h"
#include "mlir-c/Support.h"

#ifdef __cplusplus
extern "C" {
#endif

/// mlirGetDialectHandle__fp8__(): insert into a registry or load.
MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(FP8, fp8);

/// Which elements share one scale (#fp8.granularity).
enum Fp8GranularityKind {
  Fp8GranularityKindTensor = 0,
  Fp8GranularityKindRow = 1,
  Fp8GranularityKindTile = 2,
  Fp8GranularityKindMX = 3,
};
typedef enum Fp8GranularityKind Fp8GranularityKind;

/// Element formats of the per-tensor recipes (#fp8.delayed, #fp8.current).
enum Fp8RecipeFormat { Fp8RecipeFormatHybrid = 0, Fp8RecipeFormatE4M3 = 1 };
typedef enum Fp8RecipeFormat Fp8RecipeFormat;
/// Element format of MXFP8 data.
enum Fp8ElementFormat { Fp8ElementFormatE4M3 = 0, Fp8ElementFormatE5M2 = 1 };
typedef enum Fp8ElementFormat Fp8ElementFormat;
enum Fp8AmaxComputeAlgo {
  Fp8AmaxComputeAlgoMax = 0,
  Fp8AmaxComputeAlgoMostRecent = 1,
};
typedef enum Fp8AmaxComputeAlgo Fp8AmaxComputeAlgo;
enum Fp8BlockScaleKind {
  Fp8BlockScaleKindPowerOfTwo = 0,
  Fp8BlockScaleKindFloat32 = 1,
};
typedef enum Fp8BlockScaleKind Fp8BlockScaleKind;
enum Fp8UE8M0Rounding { Fp8UE8M0RoundingRoundUp = 0, Fp8UE8M0RoundingOCP = 1 };
typedef enum Fp8UE8M0Rounding Fp8UE8M0Rounding;

//===----------------------------------------------------------------------===//
// #fp8.granularity
//===----------------------------------------------------------------------===//

MLIR_CAPI_EXPORTED bool fp8AttributeIsAGranularity(MlirAttribute attr);
MLIR_CAPI_EXPORTED MlirAttribute fp8GranularityAttrGetTensor(MlirContext ctx);
MLIR_CAPI_EXPORTED MlirAttribute fp8GranularityAttrGetRow(MlirContext ctx);
MLIR_CAPI_EXPORTED MlirAttribute fp8GranularityAttrGetTile(MlirContext ctx,
                                                           int64_t rows,
                                                           int64_t cols);
MLIR_CAPI_EXPORTED MlirAttribute fp8GranularityAttrGetMX(MlirContext ctx,
                                                         int64_t block);
MLIR_CAPI_EXPORTED Fp8GranularityKind
fp8GranularityAttrGetKind(MlirAttribute attr);
/// The block's rows and columns (0 for "the whole dimension").
MLIR_CAPI_EXPORTED int64_t fp8GranularityAttrGetTileRows(MlirAttribute attr);
MLIR_CAPI_EXPORTED int64_t fp8GranularityAttrGetTileCols(MlirAttribute attr);

//===----------------------------------------------------------------------===//
// #fp8.accumulation
//===----------------------------------------------------------------------===//

MLIR_CAPI_EXPORTED bool fp8AttributeIsAAccumulation(MlirAttribute attr);
/// `promoted(interval)`, or `fast` when interval is 0.
MLIR_CAPI_EXPORTED MlirAttribute fp8AccumulationAttrGet(MlirContext ctx,
                                                        int64_t interval);
MLIR_CAPI_EXPORTED int64_t
fp8AccumulationAttrGetPromoteInterval(MlirAttribute attr);

//===----------------------------------------------------------------------===//
// #fp8.gemm_config
//===----------------------------------------------------------------------===//

MLIR_CAPI_EXPORTED bool fp8AttributeIsAGemmConfig(MlirAttribute attr);
/// Null when the parameters are invalid (the reason is emitted as a
/// diagnostic on the context).
MLIR_CAPI_EXPORTED MlirAttribute fp8GemmConfigAttrGet(
    MlirContext ctx, int64_t tileM, int64_t tileN, int64_t tileK,
    int64_t stages, int64_t clusterM, int64_t clusterN, int64_t rasterGroup);
MLIR_CAPI_EXPORTED int64_t fp8GemmConfigAttrGetTileM(MlirAttribute attr);
MLIR_CAPI_EXPORTED int64_t fp8GemmConfigAttrGetTileN(MlirAttribute attr);
MLIR_CAPI_EXPORTED int64_t fp8GemmConfigAttrGetTileK(MlirAttribute attr);
MLIR_CAPI_EXPORTED int64_t fp8GemmConfigAttrGetStages(MlirAttribute attr);
MLIR_CAPI_EXPORTED int64_t fp8GemmConfigAttrGetClusterM(MlirAttribute attr);
MLIR_CAPI_EXPORTED int64_t fp8GemmConfigAttrGetClusterN(MlirAttribute attr);
MLIR_CAPI_EXPORTED int64_t fp8GemmConfigAttrGetRasterGroup(MlirAttribute attr);

//===----------------------------------------------------------------------===//
// Recipes. `accumulate` is a promotion interval (0: fast). The getters
// return a null attribute when the parameters are invalid (with a
// diagnostic on the context).
//===----------------------------------------------------------------------===//

/// Any of the recipe attributes below.
MLIR_CAPI_EXPORTED bool fp8AttributeIsARecipe(MlirAttribute attr);
/// The default promotion interval of a recipe's GEMMs (0: fast).
MLIR_CAPI_EXPORTED int64_t fp8RecipeAttrGetAccumulate(MlirAttribute attr);

MLIR_CAPI_EXPORTED bool fp8AttributeIsADelayedScaling(MlirAttribute attr);
MLIR_CAPI_EXPORTED MlirAttribute fp8DelayedScalingAttrGet(
    MlirContext ctx, int64_t history, Fp8AmaxComputeAlgo algo, int64_t margin,
    Fp8RecipeFormat format, int64_t accumulate);

MLIR_CAPI_EXPORTED bool fp8AttributeIsACurrentScaling(MlirAttribute attr);
MLIR_CAPI_EXPORTED MlirAttribute fp8CurrentScalingAttrGet(
    MlirContext ctx, float epsilon, bool pow2, Fp8RecipeFormat format,
    int64_t accumulate);

MLIR_CAPI_EXPORTED bool fp8AttributeIsABlockwiseScaling(MlirAttribute attr);
MLIR_CAPI_EXPORTED MlirAttribute fp8BlockwiseScalingAttrGet(
    MlirContext ctx, int64_t actRows, int64_t actCols, int64_t weightRows,
    int64_t weightCols, Fp8BlockScaleKind scales, float amaxClamp,
    int64_t accumulate);

MLIR_CAPI_EXPORTED bool fp8AttributeIsAMXScaling(MlirAttribute attr);
MLIR_CAPI_EXPORTED MlirAttribute
fp8MXScalingAttrGet(MlirContext ctx, int64_t block, Fp8UE8M0Rounding rounding,
                    Fp8ElementFormat format, int64_t accumulate);

#ifdef __cplusplus
}
#endif

#endif // FP8_C_DIALECT_H
