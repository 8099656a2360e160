//===- LinearLayer.h - How a recipe quantizes a linear layer's tensors ----===//
//
// Shared by the passes that rewrite fp8.linear / fp8.linear_backward
// (fp8-expand-linear, fp8-shard-linear).
//
//===----------------------------------------------------------------------===//

#ifndef FP8_LIB_DIALECT_FP8_TRANSFORMS_LINEARLAYER_H
#define FP8_LIB_DIALECT_FP8_TRANSFORMS_LINEARLAYER_H

#include "FP8/Dialect/FP8/IR/FP8Attrs.h"
#include "mlir/IR/Operation.h"

namespace mlir::fp8 {

/// The three tensors of a linear layer, which a recipe quantizes
/// differently: X, W and dY.
enum class LayerTensor { Input, Weight, GradOutput };

/// "x", "w" or "dy".
StringRef getLayerTensorName(LayerTensor tensor);

/// The fp8.linear and fp8.linear_backward ops nested in `root`, in order.
SmallVector<Operation *> collectLinearLayers(Operation *root);

/// How a recipe quantizes one of the layer's tensors.
struct TensorQuantization {
  GranularityAttr granularity;
  Type elementType;
};

/// The granularity and element type `recipe` gives `tensor`.
TensorQuantization getTensorQuantization(RecipeAttrInterface recipe,
                                         LayerTensor tensor);

} // namespace mlir::fp8

#endif // FP8_LIB_DIALECT_FP8_TRANSFORMS_LINEARLAYER_H
