//===- FP8ResultVerifier.h - The FP8 result of a GEMM op --------*- C++ -*-===//
//
// The check of an FP8 D against its quantization, shared by the verifiers
// of fp8.scaled_matmul (FP8Ops.cpp, which defines it) and
// fp8.grouped_scaled_matmul (FP8GroupedOps.cpp); private to the dialect
// library.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_LIB_DIALECT_FP8_IR_FP8RESULTVERIFIER_H
#define FP8_LIB_DIALECT_FP8_IR_FP8RESULTVERIFIER_H

#include "FP8/Dialect/FP8/IR/FP8Attrs.h"

#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"

namespace mlir::fp8::detail {

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

#endif // FP8_LIB_DIALECT_FP8_IR_FP8RESULTVERIFIER_H
