//===- FP8Ops.h - FP8 dialect operations ------------------------*- C++ -*-===//

#ifndef FP8_DIALECT_FP8_IR_FP8OPS_H
#define FP8_DIALECT_FP8_IR_FP8OPS_H

#include "FP8/Dialect/FP8/IR/FP8Dialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::fp8 {
/// The checks of FP8_VerifiesContractFirst (FP8Ops.td): what the generic
/// verification would report in its own terms or hide, by the names the
/// user wrote (unranked operands, extents outside the contract, the K of a
/// GEMM, inconsistent operand segment sizes).
LogicalResult verifyBeforeInvariants(Operation *op);

template <typename ConcreteType>
class VerifiesContractFirst
    : public OpTrait::TraitBase<ConcreteType, VerifiesContractFirst> {
public:
  static LogicalResult verifyTrait(Operation *op) {
    return verifyBeforeInvariants(op);
  }
};
} // namespace mlir::fp8

#define GET_OP_CLASSES
#include "FP8/Dialect/FP8/IR/FP8Ops.h.inc"

#endif // FP8_DIALECT_FP8_IR_FP8OPS_H
