//===- HostProgramSupport.cpp - What fp8-build-host-program reads ---------===//

#include "HostProgramSupport.h"

#include "FP8/Dialect/FP8/IR/FP8Dialect.h"
#include "FP8/Target/KernelMetadataReader.h"
#include "FP8/Target/PTX/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::host;

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

FailureOr<Expr> host::addExprs(const Expr &lhs, const Expr &rhs) {
  if (lhs.isConstant() && rhs.isConstant()) {
    int64_t sum;
    if (__builtin_add_overflow(lhs.value(), rhs.value(), &sum))
      return failure();
    return Expr::constant(sum);
  }
  if (rhs.isConstant() && rhs.value() == 0)
    return lhs;
  if (lhs.isConstant() && lhs.value() == 0)
    return rhs;
  return Expr::add(lhs, rhs);
}

FailureOr<Expr> host::mulExprs(const Expr &lhs, const Expr &rhs) {
  if (lhs.isConstant() && rhs.isConstant()) {
    int64_t product;
    if (__builtin_mul_overflow(lhs.value(), rhs.value(), &product))
      return failure();
    return Expr::constant(product);
  }
  // Constants last, and gathered: x * a * b is x * (a*b).
  if (lhs.isConstant())
    return mulExprs(rhs, lhs);
  if (rhs.isConstant() && rhs.value() == 1)
    return lhs;
  if (rhs.isConstant() && rhs.value() == 0)
    return Expr::constant(0);
  if (rhs.isConstant() && lhs.kind() == Expr::Kind::Mul &&
      lhs.rhs().isConstant()) {
    FailureOr<Expr> factor = mulExprs(lhs.rhs(), rhs);
    if (failed(factor))
      return failure();
    return mulExprs(lhs.lhs(), *factor);
  }
  return Expr::mul(lhs, rhs);
}

FailureOr<Expr> host::ceilDivExprs(const Expr &lhs, const Expr &rhs) {
  if (rhs.isConstant() && rhs.value() < 1)
    return failure();
  if (rhs.isConstant() && rhs.value() == 1)
    return lhs;
  if (lhs.isConstant() && rhs.isConstant())
    return Expr::constant(lhs.value() / rhs.value() +
                          (lhs.value() % rhs.value() != 0));
  return Expr::ceilDiv(lhs, rhs);
}

FailureOr<Expr> host::roundUpExprs(const Expr &lhs, const Expr &rhs) {
  if (rhs.isConstant() && rhs.value() < 1)
    return failure();
  if (rhs.isConstant() && rhs.value() == 1)
    return lhs;
  if (lhs.isConstant() && rhs.isConstant()) {
    FailureOr<Expr> quotient = ceilDivExprs(lhs, rhs);
    return mulExprs(*quotient, rhs);
  }
  return Expr::roundUp(lhs, rhs);
}

FailureOr<Expr> host::substitute(const Expr &e,
                                 const std::map<std::string, Expr> &values) {
  switch (e.kind()) {
  case Expr::Kind::Constant:
    return e;
  case Expr::Kind::Symbol: {
    auto it = values.find(e.name());
    return it == values.end() ? e : it->second;
  }
  default:
    break;
  }
  FailureOr<Expr> lhs = substitute(e.lhs(), values);
  FailureOr<Expr> rhs = substitute(e.rhs(), values);
  if (failed(lhs) || failed(rhs))
    return failure();
  switch (e.kind()) {
  case Expr::Kind::Add:
    return addExprs(*lhs, *rhs);
  case Expr::Kind::Mul:
    return mulExprs(*lhs, *rhs);
  case Expr::Kind::CeilDiv:
    return ceilDivExprs(*lhs, *rhs);
  default:
    return roundUpExprs(*lhs, *rhs);
  }
}

FailureOr<Expr> host::byteSize(ArrayRef<Expr> shape, int64_t elementBytes) {
  Expr bytes = Expr::constant(elementBytes);
  for (const Expr &extent : shape) {
    FailureOr<Expr> product = mulExprs(extent, bytes);
    if (failed(product))
      return failure();
    bytes = *product;
  }
  return bytes;
}

int64_t host::dtypeBytes(DType dtype) {
  switch (dtype) {
  case DType::BF16:
  case DType::F16:
    return 2;
  case DType::F32:
  case DType::I32:
    return 4;
  default:
    return 1;
  }
}

FailureOr<DType> host::getRuntimeDType(Type type) {
  if (isa<Float8E4M3FNType>(type))
    return DType::E4M3;
  if (isa<Float8E5M2Type>(type))
    return DType::E5M2;
  if (isa<Float8E8M0FNUType>(type))
    return DType::UE8M0;
  if (type.isBF16())
    return DType::BF16;
  if (type.isF16())
    return DType::F16;
  if (type.isF32())
    return DType::F32;
  if (type.isInteger(32))
    return DType::I32;
  return failure();
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

/// The operand `op` of kernel metadata, as the host program binds it.
static KernelOperand getKernelOperand(const fp8schema::Operand &op) {
  KernelOperand operand;
  operand.name = op.name;
  operand.dtype = op.dtype;
  operand.shape = op.shape;
  operand.output = op.role == fp8schema::OperandRole::Output;
  operand.optional = op.optionalOrDefault();
  operand.alignment = op.alignment.value_or(dtypeBytes(op.dtype));
  return operand;
}

FailureOr<KernelDesc> host::readKernelDesc(gpu::GPUFuncOp kernel) {
  auto error = [&]() {
    return kernel.emitError() << "kernel @" << kernel.getName() << " ";
  };
  auto metadataAttr =
      kernel->getAttrOfType<DictionaryAttr>(kKernelMetadataAttrName);
  if (!metadataAttr)
    return error() << "has no '" << kKernelMetadataAttrName
                   << "' dictionary: the host program cannot bind its operands";
  // The fields a hand-written kernel gives, each whole.
  FailureOr<fp8schema::KernelMetadata> metadata = readKernelMetadata(
      metadataAttr, schema::ReadMode::Present, error, "metadata");
  if (failed(metadata))
    return failure();
  if (metadata->operands.empty())
    return error() << "metadata has no operands: the host program cannot "
                      "bind its operands";
  KernelDesc desc;
  desc.name = kernel.getName().str();
  for (const fp8schema::Operand &op : metadata->operands)
    desc.operands.push_back(getKernelOperand(op));
  // TMA reads its global address 16-byte aligned.
  for (const fp8schema::TensorMap &map : metadata->tensorMapsOrDefault())
    for (KernelOperand &op : desc.operands)
      if (op.name == map.operand)
        op.alignment = std::max<int64_t>(op.alignment, 16);
  for (const KernelOperand &op : desc.operands)
    for (const Expr &e : op.shape)
      if (e.isSymbol() && !llvm::is_contained(desc.symbols, e.name()))
        desc.symbols.push_back(e.name());
  return desc;
}

FailureOr<std::vector<Expr>>
mlir::fp8::host::getLayoutExtents(const KernelOperand &operand,
                                  const std::vector<Expr> &shape) {
  size_t rank = operand.shape.size();
  if (shape.size() == rank)
    return shape;
  std::vector<Expr> squeezed;
  for (const Expr &e : shape)
    if (!e.isConstant() || e.value() != 1)
      squeezed.push_back(e);
  if (squeezed.size() == rank)
    return squeezed;
  // MX scales: 128 rows of four 1x32 blocks per 512-byte atom.
  bool atoms = operand.dtype == DType::UE8M0 && rank == 3 &&
               operand.shape[2].isConstant() && operand.shape[2].value() == 512;
  if (!atoms || shape.size() != 2)
    return failure();
  FailureOr<Expr> atomRows = ceilDivExprs(shape[0], Expr::constant(128));
  if (failed(atomRows))
    return failure();
  return std::vector<Expr>{*atomRows, operand.shape[1], operand.shape[2]};
}

bool mlir::fp8::host::reportFP8OpsOutsidePrograms(ModuleOp module) {
  Dialect *fp8 = module->getContext()->getLoadedDialect<FP8Dialect>();
  bool found = false;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isPublic())
      continue;
    func.walk([&](Operation *op) {
      if (op->getDialect() != fp8)
        return;
      op->emitError() << "'" << op->getName()
                      << "' has no kernel: the runtime cannot run it";
      found = true;
    });
  }
  return found;
}
