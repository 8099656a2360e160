//===- ShapeCompatibility.h - Shape checks of the op verifiers --*- C++ -*-===//
//
// The shape check the op verifiers share (private to the dialect library).
//
//===----------------------------------------------------------------------===//

#ifndef FP8_LIB_DIALECT_FP8_IR_SHAPECOMPATIBILITY_H
#define FP8_LIB_DIALECT_FP8_IR_SHAPECOMPATIBILITY_H

#include "mlir/Support/LLVM.h"

#include <cstdint>

namespace mlir::fp8::detail {

/// Static shapes must agree; a dynamic extent matches anything.
bool isCompatibleShape(ArrayRef<int64_t> actual, ArrayRef<int64_t> expected);

} // namespace mlir::fp8::detail

#endif // FP8_LIB_DIALECT_FP8_IR_SHAPECOMPATIBILITY_H
