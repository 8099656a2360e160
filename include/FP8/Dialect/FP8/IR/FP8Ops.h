//===- FP8Ops.h - FP8 dialect operations ------------------------*- C++ -*-===//

#ifndef FP8_DIALECT_FP8_IR_FP8OPS_H
#define FP8_DIALECT_FP8_IR_FP8OPS_H

#include "FP8/Dialect/FP8/IR/FP8Dialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "FP8/Dialect/FP8/IR/FP8Ops.h.inc"

#endif // FP8_DIALECT_FP8_IR_FP8OPS_H
