//===- FP8Dialect.cpp - FP8 dialect ---------------------------------------===//

#include "FP8/Dialect/FP8/IR/FP8Dialect.h"
#include "FP8/Dialect/FP8/IR/FP8Ops.h"
#include "FP8/Dialect/FP8/IR/FP8Target.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;
using namespace mlir::fp8;

#include "FP8/Dialect/FP8/IR/FP8Dialect.cpp.inc"

void FP8Dialect::initialize() {
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "FP8/Dialect/FP8/IR/FP8Ops.cpp.inc"
      >();
}

Operation *FP8Dialect::materializeConstant(OpBuilder &builder, Attribute value,
                                           Type type, Location loc) {
  return arith::ConstantOp::materialize(builder, value, type, loc);
}

LogicalResult FP8Dialect::verifyOperationAttribute(Operation *op,
                                                   NamedAttribute attr) {
  if (attr.getName() != kTargetAttrName)
    return success();
  if (!isa<TargetAttr>(attr.getValue()))
    return op->emitError() << "'" << kTargetAttrName
                           << "' must be an #fp8.target attribute, got "
                           << attr.getValue();
  if (!isa<ModuleOp>(op))
    return op->emitError() << "'" << kTargetAttrName
                           << "' belongs on a builtin.module, not on '"
                           << op->getName() << "'";
  return success();
}
