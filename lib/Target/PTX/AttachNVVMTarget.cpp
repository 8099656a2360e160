//===- AttachNVVMTarget.cpp - #nvvm.target from the module's fp8.target ---===//
//
// What `nvvm-attach-target{chip features O}` does, with the chip and the
// features read from the module's #fp8.target instead of pass options: the
// NVVM target can only be the one the kernels were lowered for.
//
//===----------------------------------------------------------------------===//

#include "FP8/Dialect/FP8/IR/FP8Target.h"
#include "FP8/Target/PTX/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Target/LLVM/NVVM/Target.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8ATTACHNVVMTARGET
#include "FP8/Target/PTX/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;

namespace {
struct AttachNVVMTargetPass
    : public fp8::impl::FP8AttachNVVMTargetBase<AttachNVVMTargetPass> {
  using FP8AttachNVVMTargetBase::FP8AttachNVVMTargetBase;

  void getDependentDialects(DialectRegistry &registry) const override {
    FP8AttachNVVMTargetBase::getDependentDialects(registry);
    // gpu-module-to-binary serializes through the target's interface.
    NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<TargetInfo> target = getTarget(module);
    if (failed(target))
      return signalPassFailure();
    // The defaults of nvvm-attach-target for everything but the optimization
    // level, the chip and the features (no flags, no libraries to link).
    auto nvvm = NVVM::NVVMTargetAttr::get(&getContext(), optLevel,
                                          /*triple=*/"nvptx64-nvidia-cuda",
                                          target->chip.name,
                                          target->ptxFeatures);
    Builder builder(&getContext());
    for (auto gpuModule : module.getOps<gpu::GPUModuleOp>()) {
      SmallVector<Attribute> targets;
      if (ArrayAttr attached = gpuModule.getTargetsAttr())
        llvm::append_range(targets, attached.getValue());
      if (!llvm::is_contained(targets, nvvm))
        targets.push_back(nvvm);
      gpuModule.setTargetsAttr(builder.getArrayAttr(targets));
    }
  }
};
} // namespace
