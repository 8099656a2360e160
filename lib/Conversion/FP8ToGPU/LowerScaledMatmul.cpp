//===- LowerScaledMatmul.cpp - fp8.scaled_matmul to GPU kernels -----------===//
//
// Builds one kernel per distinct GEMM (N, K, recipe, tiling) into the
// `gpu.module @fp8_kernels` and replaces each op by a launch of a host
// launcher declaration that names its kernel (`fp8.kernel`): on tensors an
// `fp8.launch` in destination-passing style (D into a new tensor), on
// memrefs a call writing the `outs` buffers. The launcher is what the host
// runtime provides: it encodes the tensor maps from the kernel metadata and
// launches on the caller's stream.
//
//===----------------------------------------------------------------------===//

#include "FP8/Conversion/FP8ToBlackwell/BlackwellGemm.h"
#include "FP8/Conversion/FP8ToHopper/HopperGemm.h"
#include "FP8/Conversion/Passes.h"
#include "FP8/Dialect/FP8/IR/FP8Ops.h"
#include "FP8/Dialect/FP8/IR/FP8Target.h"
#include "GemmPlan.h"
#include "KernelModule.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8LOWERSCALEDMATMUL
#include "FP8/Conversion/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;

namespace {
struct LowerScaledMatmulPass
    : public fp8::impl::FP8LowerScaledMatmulBase<LowerScaledMatmulPass> {
  using FP8LowerScaledMatmulBase::FP8LowerScaledMatmulBase;

  void runOnOperation() override;

private:
  LogicalResult lower(ScaledMatmulOp op, const TargetInfo &target,
                      gpu::GPUModuleOp kernels);
  LogicalResult lower(GroupedScaledMatmulOp op, const TargetInfo &target,
                      gpu::GPUModuleOp kernels);
};
} // namespace

// Each target builder returns the kernel's name, building it into `kernels`
// (with its metadata) when it is not there yet.

/// sm_90a: wgmma kernels (lib/Conversion/FP8ToHopper), with launch
/// variants chosen as `variantChoice` says when it is given (a GEMM of
/// run-time M: a dense one picks by M at each launch, a masked grouped one
/// by the caller's expected rows per group).
static FailureOr<std::string>
buildHopperKernel(Operation *op, GemmConfigAttr config,
                  std::optional<md::VariantChoice> variantChoice,
                  const TargetInfo &target, const GemmKernelPlan &plan,
                  gpu::GPUModuleOp kernels) {
  const ChipInfo &chip = target.chip;
  const GemmProblem *problem = &plan.gemm.problem;
  const GemmTiling *tiling = &plan.tiling;
  std::string name = getGemmKernelName(*problem, *tiling);
  if (kernels.lookupSymbol(name))
    return name;
  OpBuilder builder(op);
  MLIRContext *ctx = op->getContext();
  // Builds the kernel of `t`. Its metadata names its launch variants'
  // metadata files (or the kernel it is a variant of), and its grid carries
  // the tile's throughput for the runtime's choice among them.
  auto build = [&](StringRef kernelName, const GemmTiling &t,
                   std::vector<std::string> variantFiles,
                   std::optional<std::string> variantOf) {
    gpu::GPUFuncOp kernel = hopper::buildGemmKernel(
        builder, op->getLoc(), kernels, kernelName, *problem, t);
    md::KernelMetadata metadata =
        hopper::buildKernelMetadata(kernelName, chip, *problem, t);
    metadata.grid.throughput =
        hopper::getTileThroughput(*problem, t, target.numMultiprocessors);
    if (!variantFiles.empty()) {
      metadata.variants = std::move(variantFiles);
      if (variantChoice != md::VariantChoice::M)
        metadata.variantChoice = variantChoice;
    }
    metadata.variantOf = std::move(variantOf);
    kernel->setAttr(kKernelMetadataAttrName,
                    getKernelMetadataAttr(ctx, metadata));
    kernel->setAttr(kGridConstantArgsAttrName,
                    builder.getDenseI32ArrayAttr(getGridConstantParams(t)));
  };
  // Launch variants (dynamic M): own kernels, named by their tiling, that
  // the primary's metadata lists by metadata file; the runtime picks one per
  // launch from M (or from the caller's hint).
  SmallVector<GemmTiling> variants;
  if (variantChoice)
    variants =
        hopper::selectLaunchVariants(*problem, *tiling, config, target);
  std::vector<std::string> variantFiles;
  for (const GemmTiling &t : variants)
    variantFiles.push_back(getGemmKernelName(*problem, t) + ".json");
  build(name, *tiling, variantFiles, std::nullopt);
  for (const GemmTiling &t : variants) {
    std::string variant = getGemmKernelName(*problem, t);
    if (!kernels.lookupSymbol(variant))
      build(variant, t, {}, name);
  }
  return name;
}

/// sm_100a: tcgen05 kernels (lib/Conversion/FP8ToBlackwell).
static FailureOr<std::string> buildBlackwellKernel(Operation *op,
                                                   const TargetInfo &target,
                                                   const GemmKernelPlan &plan,
                                                   gpu::GPUModuleOp kernels) {
  const blackwell::BlackwellGemm *gemm = &plan.gemm;
  const GemmTiling *tiling = &plan.tiling;
  std::string name = blackwell::getKernelName(*gemm, *tiling);
  if (!kernels.lookupSymbol(name)) {
    OpBuilder builder(op);
    gpu::GPUFuncOp kernel = blackwell::buildGemmKernel(
        builder, op->getLoc(), kernels, name, *gemm, *tiling);
    kernel->setAttr(kKernelMetadataAttrName,
                    getKernelMetadataAttr(op->getContext(),
                                          blackwell::buildKernelMetadata(
                                              name, target.chip, *gemm,
                                              *tiling)));
    kernel->setAttr(kGridConstantArgsAttrName,
                    builder.getDenseI32ArrayAttr(getGridConstantParams(*tiling)));
  }
  return name;
}

/// Whether kernel `name` of `kernels`, and each of its launch variants, may
/// be given C's memory as D: its metadata's d is `in_place_of` c.
static bool updatesCInPlace(gpu::GPUModuleOp kernels, StringRef name) {
  auto kernel = kernels.lookupSymbol<gpu::GPUFuncOp>(name);
  auto metadata =
      kernel ? kernel->getAttrOfType<DictionaryAttr>(kKernelMetadataAttrName)
             : DictionaryAttr();
  auto operands =
      metadata ? metadata.getAs<ArrayAttr>("operands") : ArrayAttr();
  if (!operands || !llvm::any_of(operands, [](Attribute operand) {
        auto fields = dyn_cast<DictionaryAttr>(operand);
        auto of = fields ? fields.getAs<StringAttr>("in_place_of") : nullptr;
        auto d = fields ? fields.getAs<StringAttr>("name") : nullptr;
        return of && d && of.getValue() == "c" && d.getValue() == "d";
      }))
    return false;
  // Launch variants are named by their metadata files, `NAME.json`.
  auto variants = metadata.getAs<ArrayAttr>("variants");
  return !variants || llvm::all_of(variants, [&](Attribute file) {
    auto text = dyn_cast<StringAttr>(file);
    return text && text.getValue().ends_with(".json") &&
           updatesCInPlace(kernels, text.getValue().drop_back(5));
  });
}

/// The destination of a GEMM's D on tensors: C itself where the kernel adds
/// into C's memory in place (the main-grad form D += A B, which one-shot
/// bufferization then writes into C's buffer) and nothing reads C after the
/// GEMM, else none (D gets a new tensor).
static Value getInPlaceDestination(ScaledMatmulOp op,
                                   gpu::GPUModuleOp kernels, StringRef name) {
  Value c = op.getC();
  if (!c || !updatesCInPlace(kernels, name))
    return Value();
  for (Operation *user : c.getUsers())
    if (user != op && (user->getBlock() != op->getBlock() ||
                       !user->isBeforeInBlock(op)))
      return Value();
  return c;
}

/// On tensors: an fp8.launch of the kernel, in destination-passing style,
/// writing D into a new tensor (or into `destination`: C, which the kernel
/// updates in place), an FP8 D's scale_inv (when `scaleInv`) into another
/// and the amax (when `amax`) into a zeroed scalar. D's dynamic extents are
/// those of the operands `extentOf` names per dimension (tensor,
/// dimension): M from A, N from B.
static LogicalResult
lowerToLaunch(Operation *op, Value d,
              ArrayRef<std::pair<Value, int64_t>> extentOf, Value scaleInv,
              Value amax, gpu::GPUModuleOp kernels, StringRef name,
              Value destination = Value()) {
  OpBuilder builder(op);
  Location loc = op->getLoc();
  SmallVector<Value> operands(op->getOperands());
  SmallVector<LauncherAccess> access(operands.size(), LauncherAccess::Read);
  auto resultType = cast<RankedTensorType>(d.getType());
  SmallVector<Value> dynamicSizes, extents(extentOf.size());
  for (auto [dim, source] : llvm::enumerate(extentOf))
    if (resultType.isDynamicDim(dim) && !destination) {
      extents[dim] =
          tensor::DimOp::create(builder, loc, source.first, source.second);
      dynamicSizes.push_back(extents[dim]);
    }
  std::optional<unsigned> inPlaceOf;
  if (destination) { // f32 D: no scale_inv
    inPlaceOf = llvm::find(operands, destination) - operands.begin();
    operands.push_back(destination);
  } else {
    operands.push_back(tensor::EmptyOp::create(builder, loc,
                                               resultType.getShape(),
                                               resultType.getElementType(),
                                               dynamicSizes));
  }
  access.push_back(LauncherAccess::Write);
  // An FP8 D's scale_inv: a scalar, or [M, ceil(N/128)] ([G, M,
  // ceil(N/128)]; the extents before the last as D's).
  if (scaleInv) {
    auto type = cast<RankedTensorType>(scaleInv.getType());
    SmallVector<Value> sizes;
    for (int64_t dim = 0; dim + 1 < type.getRank(); ++dim)
      if (type.isDynamicDim(dim))
        sizes.push_back(extents[dim]);
    operands.push_back(tensor::EmptyOp::create(builder, loc, type.getShape(),
                                               type.getElementType(), sizes));
    access.push_back(LauncherAccess::Write);
  }
  if (amax) {
    operands.push_back(
        createZeroFilled(op, cast<RankedTensorType>(amax.getType())));
    access.push_back(LauncherAccess::ReadWrite);
  }
  FailureOr<ValueRange> results =
      createLaunch(op, kernels, name, operands, access, inPlaceOf);
  if (failed(results))
    return failure();
  op->replaceAllUsesWith(*results);
  op->erase();
  return success();
}

LogicalResult LowerScaledMatmulPass::lower(ScaledMatmulOp op,
                                           const TargetInfo &target,
                                           gpu::GPUModuleOp kernels) {
  // An FP8 D whose scales need more than one tile's data, and every FP8 D
  // on sm_100a (whose epilogue writes bf16, f16 or f32): an f32 GEMM and a
  // quantization (lowered by fp8-lower-quantize).
  bool blackwell = target.chip.architecture == Architecture::Blackwell;
  if (op.hasFP8Result() && (blackwell || needsTwoPhaseFP8Result(op))) {
    FailureOr<ScaledMatmulOp> gemm = splitTwoPhaseFP8Result(op);
    if (failed(gemm))
      return failure();
    op = *gemm;
  }
  FailureOr<GemmKernelPlan> plan = planGemmKernel(op, target);
  if (failed(plan))
    return failure();
  FailureOr<std::string> built =
      target.chip.architecture == Architecture::Blackwell
          ? buildBlackwellKernel(op, target, *plan, kernels)
          : buildHopperKernel(op, op.getConfigAttr(), md::VariantChoice::M,
                              target, *plan, kernels);
  if (failed(built))
    return failure();
  std::string name = *built;
  if (!op.hasBufferSemantics())
    return lowerToLaunch(
        op, op.getResult(),
        {{op.getA(), op.getAMajor() == OperandMajor::K ? 0 : 1},
         {op.getB(), op.getBMajor() == OperandMajor::K ? 0 : 1}},
        op.getResultScaleInv(), op.getAmax(), kernels, name,
        getInPlaceDestination(op, kernels, name));
  OpBuilder builder(op);

  // Host side: a call of the launcher declared for this kernel, which
  // writes the `outs` buffers.
  ModuleOp module = getOperation();
  // The launcher only reads its inputs; it writes only the `outs` buffers:
  // D, and the amax it max-accumulates into.
  SmallVector<LauncherAccess> access(op->getNumOperands(),
                                     LauncherAccess::Read);
  for (OpOperand &operand : op->getOpOperands()) {
    if (operand.get() == op.getOut())
      access[operand.getOperandNumber()] = LauncherAccess::Write;
    else if (operand.get() == op.getAmaxOut())
      access[operand.getOperandNumber()] = LauncherAccess::ReadWrite;
  }
  func::FuncOp launcher = getOrCreateLauncher(
      module, op, kernels, name, name + "_launch_into",
      builder.getFunctionType(op->getOperandTypes(), {}), access);
  if (!launcher)
    return failure();
  func::CallOp::create(builder, op.getLoc(), launcher, op->getOperands());
  op.erase();
  return success();
}

/// A grouped GEMM on tensors: an fp8.launch of its kernel writing D (and an
/// FP8 D's scale_inv) into a new tensor (the kernel skips padding rows and,
/// masked, the rows past each group's count: they hold whatever the
/// allocation held). A masked GEMM with a bf16, f16 or f32 result gets
/// launch variants of smaller tiles, chosen by the caller's expected rows
/// per group (its launch does not depend on the counts, which stay on the
/// device).
LogicalResult LowerScaledMatmulPass::lower(GroupedScaledMatmulOp op,
                                           const TargetInfo &target,
                                           gpu::GPUModuleOp kernels) {
  std::optional<md::VariantChoice> variantChoice;
  if (op.getLayout() == GroupedLayout::MMasked && !op.hasFP8Result())
    variantChoice = md::VariantChoice::ExpectedM;
  FailureOr<std::string> name = failure();
  if (FailureOr<GemmKernelPlan> plan = planGroupedGemmKernel(op, target);
      succeeded(plan))
    name = target.chip.architecture == Architecture::Blackwell
               ? buildBlackwellKernel(op, target, *plan, kernels)
               : buildHopperKernel(op, op.getConfigAttr(), variantChoice,
                                   target, *plan, kernels);
  if (failed(name))
    return failure();
  // D is [M, N] ([G, M, N] masked): G and N from B, M from A. k_grouped:
  // [G, M, N], G from the sizes, M from A, N from B.
  SmallVector<std::pair<Value, int64_t>> extentOf = {{op.getA(), 0},
                                                     {op.getB(), 1}};
  if (op.getLayout() == GroupedLayout::MMasked)
    extentOf = {{op.getB(), 0}, {op.getA(), 1}, {op.getB(), 1}};
  else if (op.getLayout() == GroupedLayout::KGrouped)
    extentOf = {{op.getGroups(), 0}, {op.getA(), 0}, {op.getB(), 0}};
  return lowerToLaunch(op, op.getResult(), extentOf, op.getResultScaleInv(),
                       /*amax=*/Value(), kernels, *name);
}

void LowerScaledMatmulPass::runOnOperation() {
  SmallVector<Operation *> ops;
  getOperation().walk([&](Operation *op) {
    if (isa<ScaledMatmulOp, GroupedScaledMatmulOp>(op))
      ops.push_back(op);
  });
  if (ops.empty())
    return;
  FailureOr<TargetInfo> target = getTarget(ops.front());
  if (failed(target))
    return signalPassFailure();
  gpu::GPUModuleOp kernels = getOrCreateKernelModule(getOperation());
  bool failedAny = false;
  for (Operation *op : ops) {
    if (auto grouped = dyn_cast<GroupedScaledMatmulOp>(op))
      failedAny |= failed(lower(grouped, *target, kernels));
    else
      failedAny |= failed(lower(cast<ScaledMatmulOp>(op), *target, kernels));
  }
  if (failedAny)
    signalPassFailure();
}
