//===- FP8LaunchOp.cpp - fp8.launch: verifier and launcher checks ---------===//
//
// fp8.launch is a kernel launch on tensors in destination-passing style: its
// operands are the kernel's, `outputs` names those the kernel writes. The
// symbol check ties it to its launcher declaration, whose memref signature
// and `bufferization.access` attributes one-shot bufferization relies on.
//
//===----------------------------------------------------------------------===//

#include "FP8/Dialect/FP8/IR/FP8Ops.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace mlir::fp8;

/// The argument attribute one-shot bufferization reads off a bodiless
/// function (BufferizationDialect::kBufferAccessAttrName; not included here
/// to keep the dialect free of a bufferization dependency).
static constexpr llvm::StringLiteral kBufferAccessAttrName =
    "bufferization.access";

int64_t LaunchOp::getOutputPosition(unsigned index) {
  ArrayRef<int64_t> outputs = getOutputs();
  const auto *it = llvm::find(outputs, static_cast<int64_t>(index));
  return it == outputs.end() ? -1 : it - outputs.begin();
}

LogicalResult LaunchOp::verify() {
  ArrayRef<int64_t> outputs = getOutputs();
  if (outputs.size() != getNumResults())
    return emitOpError() << "expected one result per output, got "
                         << outputs.size() << " outputs and "
                         << getNumResults() << " results";
  int64_t previous = -1;
  for (auto [position, index] : llvm::enumerate(outputs)) {
    if (index <= previous || index >= static_cast<int64_t>(getNumOperands()))
      return emitOpError() << "expected outputs to be increasing operand "
                              "indices below "
                           << getNumOperands() << ", got " << index
                           << " at position " << position;
    previous = index;
    Type operandType = getOperand(index).getType();
    Type resultType = getResult(position).getType();
    if (operandType != resultType)
      return emitOpError() << "expected result " << position
                           << " to have the type of operand " << index << " ("
                           << operandType << "), got " << resultType;
  }
  return success();
}

/// The identity-layout buffer of a tensor type.
static MemRefType getBufferType(Type tensorType) {
  auto tensor = cast<RankedTensorType>(tensorType);
  return MemRefType::get(tensor.getShape(), tensor.getElementType());
}

LogicalResult
LaunchOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto launcher = symbolTable.lookupNearestSymbolFrom<FunctionOpInterface>(
      *this, getLauncherAttr());
  if (!launcher)
    return emitOpError() << "expected '" << getLauncher()
                         << "' to be a launcher function";
  if (!launcher.isExternal() || launcher.getNumResults() != 0)
    return emitOpError() << "expected launcher '" << getLauncher()
                         << "' to be a declaration with no results";
  ArrayRef<Type> argTypes = launcher.getArgumentTypes();
  if (argTypes.size() != getNumOperands())
    return emitOpError() << "expected " << argTypes.size()
                         << " operands for launcher '" << getLauncher()
                         << "', got " << getNumOperands();
  for (auto [index, operand] : llvm::enumerate(getArgs())) {
    MemRefType expected = getBufferType(operand.getType());
    if (argTypes[index] != expected)
      return emitOpError() << "expected launcher argument " << index
                           << " to be " << expected << " (the buffer of "
                           << operand.getType() << "), got "
                           << argTypes[index];
    auto access = launcher.getArgAttrOfType<StringAttr>(index,
                                                        kBufferAccessAttrName);
    bool written = getOutputPosition(index) >= 0;
    bool declaredWritten =
        access && (access.getValue() == "write" ||
                   access.getValue() == "read-write");
    if (written != declaredWritten)
      return emitOpError() << "operand " << index << " is "
                           << (written ? "an output" : "not an output")
                           << " but launcher argument " << index << " has "
                           << kBufferAccessAttrName << " = "
                           << (access ? access.getValue() : "(none)");
  }
  return success();
}
