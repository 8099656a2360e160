//===- FinalizeKernelABI.cpp - By-value CUtensorMap kernel parameters -----===//
//
// Marks the tensor-map parameters listed in `fp8.grid_constant_args` as
// 128-byte, 64-byte-aligned byval grid constants on the lowered llvm.func
// kernels.
//
//===----------------------------------------------------------------------===//

#include "FP8/Target/PTX/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8FINALIZEKERNELABI
#include "FP8/Target/PTX/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;

/// sizeof(CUtensorMap) in the CUDA driver API.
static constexpr int64_t kTensorMapBytes = 128;
/// The driver requires a CUtensorMap to be 64-byte aligned, in parameter
/// space as anywhere else.
static constexpr int64_t kTensorMapAlignment = 64;

static LogicalResult finalizeKernel(LLVM::LLVMFuncOp func,
                                    DenseI32ArrayAttr indices) {
  MLIRContext *ctx = func.getContext();
  if (!func->hasAttr(NVVM::NVVMDialect::getKernelFuncAttrName()))
    return func.emitOpError()
           << "has '" << kGridConstantArgsAttrName
           << "' but is not an nvvm.kernel: only kernel parameters can be "
              "grid constants";

  Builder b(ctx);
  auto tensorMapType =
      LLVM::LLVMArrayType::get(IntegerType::get(ctx, 8), kTensorMapBytes);
  ArrayRef<Type> argTypes = func.getFunctionType().getParams();
  for (int32_t index : indices.asArrayRef()) {
    if (index < 0 || index >= static_cast<int32_t>(argTypes.size()))
      return func.emitOpError()
             << "'" << kGridConstantArgsAttrName << "' lists parameter "
             << index << " but the function has " << argTypes.size();
    auto ptrType = dyn_cast<LLVM::LLVMPointerType>(argTypes[index]);
    // The parameter is the address of the by-value copy: a generic pointer,
    // which the backend materializes with cvta.param.
    if (!ptrType || ptrType.getAddressSpace() != 0)
      return func.emitOpError()
             << "grid-constant parameter " << index
             << " must be an !llvm.ptr (a by-value CUtensorMap), got "
             << argTypes[index];
    func.setArgAttr(index, LLVM::LLVMDialect::getByValAttrName(),
                    TypeAttr::get(tensorMapType));
    func.setArgAttr(index, LLVM::LLVMDialect::getAlignAttrName(),
                    b.getI64IntegerAttr(kTensorMapAlignment));
    func.setArgAttr(index, NVVM::NVVMDialect::getGridConstantAttrName(),
                    b.getUnitAttr());
  }
  func->removeAttr(kGridConstantArgsAttrName);
  return success();
}

namespace {
struct FinalizeKernelABIPass
    : public fp8::impl::FP8FinalizeKernelABIBase<FinalizeKernelABIPass> {
  using FP8FinalizeKernelABIBase::FP8FinalizeKernelABIBase;

  void runOnOperation() override {
    bool failed = false;
    for (Operation &op : getOperation().getBody()->getOperations()) {
      Attribute attr = op.getAttr(kGridConstantArgsAttrName);
      if (!attr)
        continue;
      if (isa<gpu::GPUFuncOp>(op)) {
        op.emitOpError() << "still has '" << kGridConstantArgsAttrName
                         << "': run fp8-finalize-kernel-abi after "
                            "convert-gpu-to-nvvm, which drops argument "
                            "attributes";
        failed = true;
        continue;
      }
      auto func = dyn_cast<LLVM::LLVMFuncOp>(op);
      auto indices = dyn_cast<DenseI32ArrayAttr>(attr);
      if (!func || !indices) {
        op.emitOpError() << "'" << kGridConstantArgsAttrName
                         << "' must be an array<i32> on an llvm.func";
        failed = true;
        continue;
      }
      failed |= mlir::failed(finalizeKernel(func, indices));
    }
    if (failed)
      signalPassFailure();
  }
};
} // namespace
