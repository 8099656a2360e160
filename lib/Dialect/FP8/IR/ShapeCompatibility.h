//===- ShapeCompatibility.h - Shape checks of the op verifiers --*- C++ -*-===//
//
// What the verifiers of FP8Ops.cpp and FP8GroupedOps.cpp share (private to
// the dialect library).
//
//===----------------------------------------------------------------------===//

#ifndef FP8_LIB_DIALECT_FP8_IR_SHAPECOMPATIBILITY_H
#define FP8_LIB_DIALECT_FP8_IR_SHAPECOMPATIBILITY_H

#include "FP8/Dialect/FP8/IR/FP8Attrs.h"

#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"

namespace mlir::fp8::detail {

/// Static shapes must agree; a dynamic extent matches anything.
bool isCompatibleShape(ArrayRef<int64_t> actual, ArrayRef<int64_t> expected);

/// The FP8 result of a GEMM op: its quantization attributes and values, the
/// element type of D, and the extents of the `rows x cols` matrix the
/// scales describe (`outerDims` before them: a grouped result's groups).
struct FP8ResultForm {
  RecipeAttrInterface recipe;
  GranularityAttr granularity;
  Value scale, scaleInv;
  Type elementType;
  int64_t rows, cols;
  SmallVector<int64_t, 1> outerDims;
};

/// Checks an FP8 D against its quantization (result_recipe,
/// result_granularity, result_scale, its scale_inv), or that a D of another
/// element type has none of them.
LogicalResult verifyFP8Result(Operation *op, const FP8ResultForm &form);

} // namespace mlir::fp8::detail

#endif // FP8_LIB_DIALECT_FP8_IR_SHAPECOMPATIBILITY_H
