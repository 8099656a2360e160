//===- FP8Dialect.h - FP8 dialect -------------------------------*- C++ -*-===//

#ifndef FP8_DIALECT_FP8_IR_FP8DIALECT_H
#define FP8_DIALECT_FP8_IR_FP8DIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dialect.h"

#include "FP8/Dialect/FP8/IR/FP8Dialect.h.inc"

#include "FP8/Dialect/FP8/IR/FP8Attrs.h"

#endif // FP8_DIALECT_FP8_IR_FP8DIALECT_H
