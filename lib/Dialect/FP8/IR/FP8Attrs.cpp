//===- FP8Attrs.cpp - FP8 dialect attributes ------------------------------===//

#include "FP8/Dialect/FP8/IR/FP8Contract.h"
#include "FP8/Dialect/FP8/IR/FP8Dialect.h"
#include "FP8/Target/Chip.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::fp8;

#include "FP8/Dialect/FP8/IR/FP8Enums.cpp.inc"
#include "FP8/Dialect/FP8/IR/FP8AttrInterfaces.cpp.inc"

//===----------------------------------------------------------------------===//
// Parameter parsers and printers
//===----------------------------------------------------------------------===//

FailureOr<Accumulation> mlir::fp8::parseAccumulation(AsmParser &parser) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef keyword;
  if (parser.parseKeyword(&keyword))
    return failure();
  if (keyword == "fast")
    return Accumulation::fast();
  if (keyword != "promoted") {
    parser.emitError(loc, "expected accumulation 'fast' or 'promoted(N)', got '")
        << keyword << "'";
    return failure();
  }
  int64_t interval = 0;
  if (parser.parseLParen())
    return failure();
  SMLoc intervalLoc = parser.getCurrentLocation();
  if (parser.parseInteger(interval) || parser.parseRParen())
    return failure();
  // promoted(0) would read as `fast` (interval 0).
  if (interval == 0) {
    parser.emitError(intervalLoc, "expected accumulation promoted(N) with N a "
                                  "positive multiple of 32 (the MMA K step), "
                                  "got promoted(0)");
    return failure();
  }
  return Accumulation::promoted(interval);
}

void mlir::fp8::printAccumulation(AsmPrinter &printer, const Accumulation &a) {
  if (a.isFast())
    printer << "fast";
  else
    printer << "promoted(" << a.promoteInterval << ")";
}

FailureOr<TileShape> mlir::fp8::parseTileShape(AsmParser &parser) {
  SMLoc loc = parser.getCurrentLocation();
  SmallVector<int64_t, 2> dims;
  if (parser.parseDimensionList(dims, /*allowDynamic=*/false,
                                /*withTrailingX=*/false))
    return failure();
  if (dims.size() != 2) {
    parser.emitError(loc, "expected a 2-D tile shape RxC of positive "
                          "integers, got ")
        << dims.size() << " dimension(s)";
    return failure();
  }
  return TileShape{dims[0], dims[1]};
}

void mlir::fp8::printTileShape(AsmPrinter &printer, const TileShape &t) {
  printer << t.rows << "x" << t.cols;
}

FailureOr<GemmTileShape> mlir::fp8::parseGemmTileShape(AsmParser &parser) {
  SMLoc loc = parser.getCurrentLocation();
  SmallVector<int64_t, 3> dims;
  if (parser.parseDimensionList(dims, /*allowDynamic=*/false,
                                /*withTrailingX=*/false))
    return failure();
  if (dims.size() != 3) {
    parser.emitError(loc, "expected a GEMM tile MxNxK, got ")
        << dims.size() << " dimension(s)";
    return failure();
  }
  return GemmTileShape{dims[0], dims[1], dims[2]};
}

void mlir::fp8::printGemmTileShape(AsmPrinter &printer,
                                   const GemmTileShape &t) {
  printer << t.m << "x" << t.n << "x" << t.k;
}

FailureOr<APFloat> mlir::fp8::parseF32(AsmParser &parser) {
  APFloat value(0.0f);
  if (parser.parseFloat(APFloat::IEEEsingle(), value))
    return failure();
  return value;
}

void mlir::fp8::printF32(AsmPrinter &printer, const APFloat &value) {
  printer.printFloat(value);
}

static bool isValidAccumulation(const Accumulation &a) {
  return a.promoteInterval >= 0 && a.promoteInterval % 32 == 0;
}

static LogicalResult
verifyAccumulationParam(function_ref<InFlightDiagnostic()> emitError,
                        const Accumulation &a) {
  if (!isValidAccumulation(a))
    return emitError() << "expected accumulation promoted(N) with N a positive "
                          "multiple of 32 (the MMA K step), got promoted("
                       << a.promoteInterval << ")";
  if (a.promoteInterval > contract::kMaxExtent)
    return emitError() << "expected accumulation promoted(N) with N at most "
                       << contract::kMaxExtentText
                       << " (a K extent), got promoted(" << a.promoteInterval
                       << ")";
  return success();
}

/// Tile extents are tensor extents: at most contract::kMaxExtent.
static LogicalResult
verifyTileExtents(function_ref<InFlightDiagnostic()> emitError,
                  StringRef what, const TileShape &tile) {
  if (tile.rows <= 0 || tile.cols <= 0)
    return emitError() << "expected " << what
                       << " with positive extents, got " << tile.rows << "x"
                       << tile.cols;
  if (tile.rows > contract::kMaxExtent || tile.cols > contract::kMaxExtent)
    return emitError() << "expected " << what << " with extents of at most "
                       << contract::kMaxExtentText << " (tensor extents), got "
                       << tile.rows << "x" << tile.cols;
  return success();
}

static bool isFiniteNonNegative(const APFloat &v) {
  return v.isFinite() && !v.isNegative();
}

//===----------------------------------------------------------------------===//
// AccumulationAttr
//===----------------------------------------------------------------------===//

LogicalResult
AccumulationAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                         Accumulation mode) {
  return verifyAccumulationParam(emitError, mode);
}

//===----------------------------------------------------------------------===//
// GranularityAttr
//===----------------------------------------------------------------------===//

GranularityAttr GranularityAttr::getTensor(MLIRContext *ctx) {
  return get(ctx, GranularityKind::Tensor, TileShape{});
}
GranularityAttr GranularityAttr::getRow(MLIRContext *ctx) {
  return get(ctx, GranularityKind::Row, TileShape{});
}
GranularityAttr GranularityAttr::getTile(MLIRContext *ctx, int64_t rows,
                                         int64_t cols) {
  return get(ctx, GranularityKind::Tile, TileShape{rows, cols});
}
GranularityAttr GranularityAttr::getMX(MLIRContext *ctx, int64_t block) {
  return get(ctx, GranularityKind::MX, TileShape{1, block});
}

LogicalResult
GranularityAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        GranularityKind kind, TileShape tile) {
  switch (kind) {
  case GranularityKind::Tensor:
  case GranularityKind::Row:
    if (tile != TileShape{})
      return emitError() << "granularity '" << stringifyGranularityKind(kind)
                         << "' takes no tile shape";
    return success();
  case GranularityKind::Tile:
    return verifyTileExtents(emitError, "a tile shape", tile);
  case GranularityKind::MX:
    if (tile.rows != 1 || tile.cols != 32)
      return emitError() << "expected MX blocks of 1x32 (OCP MX v1.0), got "
                         << tile.rows << "x" << tile.cols;
    return success();
  }
  llvm_unreachable("unknown granularity kind");
}

Attribute GranularityAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef keyword;
  if (parser.parseLess() || parser.parseKeyword(&keyword))
    return {};
  std::optional<GranularityKind> kind = symbolizeGranularityKind(keyword);
  if (!kind) {
    parser.emitError(loc, "expected granularity 'tensor', 'row', 'tile RxC' "
                          "or 'mx 1x32', got '")
        << keyword << "'";
    return {};
  }
  TileShape tile;
  if (*kind == GranularityKind::Tile || *kind == GranularityKind::MX) {
    FailureOr<TileShape> parsed = parseTileShape(parser);
    if (failed(parsed))
      return {};
    tile = *parsed;
  }
  if (parser.parseGreater())
    return {};
  return parser.getChecked<GranularityAttr>(loc, parser.getContext(), *kind,
                                            tile);
}

void GranularityAttr::print(AsmPrinter &printer) const {
  printer << "<" << describe() << ">";
}

std::string GranularityAttr::describe() const {
  std::string s = stringifyGranularityKind(getKind()).str();
  if (isTile() || isMX())
    s += " " + std::to_string(getTile().rows) + "x" +
         std::to_string(getTile().cols);
  return s;
}

static int64_t ceilDivOrDynamic(int64_t size, int64_t block) {
  if (ShapedType::isDynamic(size))
    return ShapedType::kDynamic;
  return llvm::divideCeil(size, block);
}

SmallVector<int64_t> GranularityAttr::getScaleShape(int64_t rows,
                                                    int64_t cols) const {
  switch (getKind()) {
  case GranularityKind::Tensor:
    return {};
  case GranularityKind::Row:
    return {rows, 1};
  case GranularityKind::Tile:
  case GranularityKind::MX:
    return {ceilDivOrDynamic(rows, getTile().rows),
            ceilDivOrDynamic(cols, getTile().cols)};
  }
  llvm_unreachable("unknown granularity kind");
}

//===----------------------------------------------------------------------===//
// GemmConfigAttr
//===----------------------------------------------------------------------===//

/// More tile rows than a grid dimension holds gain nothing, and the
/// scheduler multiplies the group by the tile columns in 32 bits.
static constexpr int64_t kMaxRasterGroup = 65535;
/// The sm_100a CTA pair's tile; sm_90a takes at most 128.
static constexpr int64_t kMaxGemmTileM = 256;

LogicalResult
GemmConfigAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                       GemmTileShape tile, int64_t stages, TileShape cluster,
                       int64_t rasterGroup, BoolAttr streamK,
                       int64_t promotionParts, BoolAttr pingPong) {
  if (tile.m <= 0 || tile.m % 64 != 0)
    return emitError() << "expected a tile M that is a positive multiple of "
                          "64 (one warpgroup MMA), got "
                       << tile.m;
  if (tile.m > kMaxGemmTileM)
    return emitError() << "expected a tile M of at most " << kMaxGemmTileM
                       << " (the largest the sm_90a and sm_100a kernels "
                          "take), got "
                       << tile.m;
  if (tile.n < 8 || tile.n > kMaxMmaN || tile.n % 8 != 0)
    return emitError() << "expected a tile N that is a multiple of 8 in "
                          "[8, "
                       << kMaxMmaN << "], got " << tile.n;
  if (tile.k != 128)
    return emitError() << "expected a tile K of 128 (the 128-byte swizzle "
                          "span of FP8 and the blockwise scale block), got "
                       << tile.k;
  if (stages < 1 || stages > 16)
    return emitError() << "expected 1 to 16 pipeline stages, got " << stages;
  bool validCluster = (cluster.rows == 1 && cluster.cols == 1) ||
                      (cluster.rows == 2 && cluster.cols == 1) ||
                      (cluster.rows == 1 && cluster.cols == 2);
  if (!validCluster)
    return emitError() << "expected a cluster of 1x1, 2x1 or 1x2, got "
                       << cluster.rows << "x" << cluster.cols;
  if (rasterGroup < 1)
    return emitError() << "expected a raster_group >= 1, got " << rasterGroup;
  if (rasterGroup > kMaxRasterGroup)
    return emitError() << "expected a raster_group of at most "
                       << kMaxRasterGroup
                       << " (tile rows walked together), got " << rasterGroup;
  if (streamK && streamK.getValue() && !(cluster.rows == 1 && cluster.cols == 1))
    return emitError() << "stream-K takes a 1x1 cluster, got " << cluster.rows
                       << "x" << cluster.cols;
  if (promotionParts < 0 || promotionParts > 2)
    return emitError() << "expected promotion_parts 1 or 2 (0: the lowering "
                          "decides), got "
                       << promotionParts;
  if (pingPong && pingPong.getValue() && streamK && streamK.getValue())
    return emitError() << "ping_pong gives each consumer whole tiles: it "
                          "takes no stream-K";
  if (pingPong && pingPong.getValue() && promotionParts != 0)
    return emitError() << "ping_pong takes fast accumulation, which has no "
                          "promotion_parts";
  return success();
}

//===----------------------------------------------------------------------===//
// Recipes
//===----------------------------------------------------------------------===//

static bool isE4M3(Type t) { return isa<Float8E4M3FNType>(t); }
static bool isE5M2(Type t) { return isa<Float8E5M2Type>(t); }

static bool allowsFormat(RecipeFormat format, Type type) {
  return isE4M3(type) || (format == RecipeFormat::Hybrid && isE5M2(type));
}

static StringRef describeFormat(RecipeFormat format) {
  return format == RecipeFormat::Hybrid
             ? "f8E4M3FN (forward) or f8E5M2 (gradients)"
             : "f8E4M3FN";
}

LogicalResult
DelayedScalingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                           int64_t history, AmaxComputeAlgo, int64_t margin,
                           RecipeFormat, Accumulation accumulate) {
  if (history < 1 || history > 65536)
    return emitError() << "expected an amax history length in [1, 65536], got "
                       << history;
  if (margin < 0 || margin > 64)
    return emitError() << "expected a margin in [0, 64], got " << margin;
  return verifyAccumulationParam(emitError, accumulate);
}
bool DelayedScalingAttr::isAllowedElementType(Type type) const {
  return allowsFormat(getFormat(), type);
}
bool DelayedScalingAttr::isAllowedGranularity(Attribute attr) const {
  auto g = dyn_cast<GranularityAttr>(attr);
  return g && g.isTensor();
}
StringRef DelayedScalingAttr::getAllowedElementTypesDescription() const {
  return describeFormat(getFormat());
}

LogicalResult
CurrentScalingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                           APFloat epsilon, bool, RecipeFormat,
                           Accumulation accumulate) {
  if (!isFiniteNonNegative(epsilon))
    return emitError() << "expected a finite, non-negative epsilon";
  return verifyAccumulationParam(emitError, accumulate);
}
bool CurrentScalingAttr::isAllowedElementType(Type type) const {
  return allowsFormat(getFormat(), type);
}
bool CurrentScalingAttr::isAllowedGranularity(Attribute attr) const {
  auto g = dyn_cast<GranularityAttr>(attr);
  return g && (g.isTensor() || g.isRow());
}
StringRef CurrentScalingAttr::getAllowedElementTypesDescription() const {
  return describeFormat(getFormat());
}

LogicalResult
BlockwiseScalingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                             TileShape act, TileShape weight, BlockScaleKind,
                             APFloat amaxClamp, Accumulation accumulate) {
  if (act.rows != 1 || act.cols <= 0 || act.cols % 32 != 0)
    return emitError() << "expected an activation tile 1xN with N a positive "
                          "multiple of 32, got "
                       << act.rows << "x" << act.cols;
  if (failed(verifyTileExtents(emitError, "an activation tile", act)) ||
      failed(verifyTileExtents(emitError, "a weight tile", weight)))
    return failure();
  if (weight.cols != act.cols)
    return emitError() << "expected a weight tile Rx" << act.cols
                       << " (same K extent as the activation tile), got "
                       << weight.rows << "x" << weight.cols;
  if (!isFiniteNonNegative(amaxClamp))
    return emitError() << "expected a finite, non-negative amax_clamp";
  if (failed(verifyAccumulationParam(emitError, accumulate)))
    return failure();
  if (accumulate.isFast() || act.cols % accumulate.promoteInterval != 0)
    return emitError() << "blockwise scales change every " << act.cols
                       << " K elements: expected accumulation promoted(N) "
                          "with N dividing "
                       << act.cols;
  return success();
}
bool BlockwiseScalingAttr::isAllowedElementType(Type type) const {
  return isE4M3(type);
}
bool BlockwiseScalingAttr::isAllowedGranularity(Attribute attr) const {
  auto g = dyn_cast<GranularityAttr>(attr);
  return g && g.isTile() && (g.getTile() == getAct() || g.getTile() == getWeight());
}
StringRef BlockwiseScalingAttr::getAllowedElementTypesDescription() const {
  return "f8E4M3FN";
}

LogicalResult MXScalingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                    int64_t block, UE8M0Rounding, ElementFormat,
                                    Accumulation accumulate) {
  if (block != 32)
    return emitError() << "expected an MX block size of 32 (OCP MX v1.0), got "
                       << block;
  return verifyAccumulationParam(emitError, accumulate);
}
bool MXScalingAttr::isAllowedElementType(Type type) const {
  return getFormat() == ElementFormat::E4M3 ? isE4M3(type) : isE5M2(type);
}
bool MXScalingAttr::isAllowedGranularity(Attribute attr) const {
  auto g = dyn_cast<GranularityAttr>(attr);
  return g && g.isMX() && g.getTile().cols == getBlock();
}
StringRef MXScalingAttr::getAllowedElementTypesDescription() const {
  return getFormat() == ElementFormat::E4M3 ? "f8E4M3FN" : "f8E5M2";
}

#define GET_ATTRDEF_CLASSES
#include "FP8/Dialect/FP8/IR/FP8Attrs.cpp.inc"

void FP8Dialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "FP8/Dialect/FP8/IR/FP8Attrs.cpp.inc"
      >();
}
