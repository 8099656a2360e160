//===- VerifyTargetSupport.cpp - Check a GPU module against its target ----===//
//
// Everything the NVPTX backend would reject with report_fatal_error (which
// aborts the process) is checked here first and reported as a diagnostic:
// the chip, the PTX ISA features, the optimization level and the NVVM ops.
//
//===----------------------------------------------------------------------===//

#include "FP8/Dialect/FP8/IR/FP8Target.h"
#include "FP8/Target/PTX/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Triple.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8VERIFYTARGETSUPPORT
#include "FP8/Target/PTX/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;
using NVVM::NVVMCheckSMVersion;

/// The target triple of every NVVM target the fp8 pipelines attach.
static constexpr llvm::StringLiteral kNVPTXTriple = "nvptx64-nvidia-cuda";
/// Prefix of the NVPTX subtarget features that select the PTX ISA version:
/// `+ptx80` is PTX ISA 8.0.
static constexpr llvm::StringLiteral kPTXFeaturePrefix = "ptx";
/// `O` of #nvvm.target is an LLVM optimization level.
static constexpr int kMaxOptLevel = 3;

namespace {
/// What the NVPTX backend knows: its subtarget feature names, so that an
/// unknown feature (which LLVM would ignore with only a warning, and then
/// fail on the default PTX version) is an error here.
struct NVPTXFeatureTable {
  llvm::StringSet<> names;
  unsigned newestPTXVersion = 0;
};

/// One chip/features/optimization level to check a module against, with
/// where it came from for the diagnostics.
struct TargetToCheck {
  std::string chip;
  std::string features;
  std::optional<int> optLevel;
  std::string origin;
};
} // namespace

/// `+ptx80` -> 80.
static std::optional<unsigned> parsePTXVersion(StringRef feature) {
  StringRef name = feature.drop_front(); // the '+'
  unsigned version;
  if (!name.consume_front(kPTXFeaturePrefix) || name.getAsInteger(10, version))
    return std::nullopt;
  return version;
}

static const NVPTXFeatureTable *getNVPTXFeatureTable() {
  // Built once: target registration and the table are process-wide, and
  // the pass runs concurrently on several gpu.modules.
  static const std::unique_ptr<NVPTXFeatureTable> table =
      []() -> std::unique_ptr<NVPTXFeatureTable> {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTargetMC();
    llvm::Triple triple(kNVPTXTriple);
    std::string error;
    const llvm::Target *target =
        llvm::TargetRegistry::lookupTarget(triple, error);
    if (!target)
      return nullptr;
    std::unique_ptr<llvm::MCSubtargetInfo> subtarget(
        target->createMCSubtargetInfo(triple, /*CPU=*/"", /*Features=*/""));
    if (!subtarget)
      return nullptr;
    auto result = std::make_unique<NVPTXFeatureTable>();
    for (const llvm::SubtargetFeatureKV &feature :
         subtarget->getAllProcessorFeatures()) {
      result->names.insert(feature.Key);
      if (std::optional<unsigned> version =
              parsePTXVersion(std::string("+") + feature.Key))
        result->newestPTXVersion = std::max(result->newestPTXVersion, *version);
    }
    return result;
  }();
  return table.get();
}

/// "sm_100a or sm_101a", "sm_90 or newer".
static std::string describe(const NVVMCheckSMVersion &required) {
  std::string s;
  llvm::raw_string_ostream os(s);
  if (!required.archAccelerated) {
    os << "sm_" << required.smVersionList.front() << " or newer";
    return s;
  }
  ArrayRef<int> versions = required.smVersionList;
  for (auto [i, sm] : llvm::enumerate(versions)) {
    if (i != 0)
      os << (i + 1 == versions.size() ? " or " : ", ");
    os << "sm_" << sm << "a";
  }
  return s;
}

static NVVMCheckSMVersion archSpecific(std::initializer_list<int> versions) {
  NVVMCheckSMVersion required(/*archAccelerated=*/true, *versions.begin());
  required.smVersionList.assign(versions.begin(), versions.end());
  return required;
}

/// The chips an NVVM op runs on. Most ops declare it with a RequiresSM
/// trait; the table covers the ones the fp8 kernels use that carry none in
/// MLIR 22 and that the backend (or ptxas) would reject.
static std::optional<NVVMCheckSMVersion> getRequiredSM(Operation *op) {
  if (auto declared = dyn_cast<NVVM::RequiresSMInterface>(op))
    return declared.getRequiredMinSMVersion();
  // wgmma exists on Hopper only (PTX ISA 9.7.15); Blackwell has tcgen05.mma.
  if (isa<NVVM::WgmmaMmaAsyncOp>(op))
    return archSpecific({90});
  // setmaxnreg: sm_90a, and sm_100a/sm_101a since PTX ISA 8.6.
  if (isa<NVVM::SetMaxRegisterOp>(op))
    return archSpecific({90, 100, 101});
  // cvt.rp.satfinite.ue8m0x2.f32 (MXFP8 scales) is a Blackwell instruction.
  if (auto cvt = dyn_cast<NVVM::ConvertF32x2ToF8x2Op>(op))
    if (isa<Float8E8M0FNUType>(cvt.getDstTy()))
      return archSpecific({100, 101, 120});
  return std::nullopt;
}

/// Checks the chip, features and optimization level; reports on `module`.
static LogicalResult checkTargetOptions(gpu::GPUModuleOp module,
                                        const TargetToCheck &target,
                                        const ChipInfo *&chipInfo) {
  llvm::Expected<const ChipInfo &> chip = parseChip(target.chip);
  if (!chip)
    return module.emitError() << llvm::toString(chip.takeError()) << " ("
                              << target.origin << ")";
  chipInfo = &*chip;

  if (target.optLevel &&
      (*target.optLevel < 0 || *target.optLevel > kMaxOptLevel))
    return module.emitError()
           << "optimization level " << *target.optLevel << " (" << target.origin
           << ") is not between 0 and " << kMaxOptLevel;

  const NVPTXFeatureTable *known = getNVPTXFeatureTable();
  if (!known)
    return module.emitError()
           << "this LLVM has no NVPTX backend: cannot generate PTX";

  SmallVector<StringRef> features;
  StringRef(target.features)
      .split(features, ',', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  std::optional<unsigned> ptxVersion;
  for (StringRef feature : features) {
    feature = feature.trim();
    if (feature.empty())
      continue;
    if (feature.size() < 2 || (feature[0] != '+' && feature[0] != '-'))
      return module.emitError()
             << "malformed PTX feature '" << feature << "' (" << target.origin
             << "): expected +name or -name";
    if (!known->names.contains(feature.drop_front()))
      return module.emitError()
             << "unknown PTX feature '" << feature << "' (" << target.origin
             << "): the NVPTX backend supports up to +" << kPTXFeaturePrefix
             << known->newestPTXVersion;
    std::optional<unsigned> version = parsePTXVersion(feature);
    if (!version || feature[0] != '+')
      continue;
    if (ptxVersion)
      return module.emitError()
             << "features '" << target.features << "' (" << target.origin
             << ") select more than one PTX ISA version";
    ptxVersion = version;
  }
  std::optional<unsigned> minimum = parsePTXVersion(chipInfo->ptxFeatures);
  if (!ptxVersion)
    return module.emitError()
           << "features '" << target.features << "' (" << target.origin
           << ") select no PTX ISA version: " << chipInfo->name
           << " needs at least " << chipInfo->ptxFeatures;
  if (minimum && *ptxVersion < *minimum)
    return module.emitError()
           << "PTX ISA +" << kPTXFeaturePrefix << *ptxVersion << " ("
           << target.origin << ") is too old for " << chipInfo->name
           << ": it needs at least " << chipInfo->ptxFeatures;
  return success();
}

/// Reports every NVVM op of `module` that `chip` cannot run.
static LogicalResult checkOps(gpu::GPUModuleOp module, const ChipInfo &chip,
                              StringRef origin) {
  // "sm_90a" -> arch-specific 90, as the NVVM dialect reads its targets (the
  // name is one of the chip table's).
  NVVMCheckSMVersion targetSM =
      NVVMCheckSMVersion::getTargetSMVersionFromStr(chip.name);
  bool failed = false;
  module.walk([&](Operation *op) {
    std::optional<NVVMCheckSMVersion> required = getRequiredSM(op);
    if (!required || required->isCompatibleWith(targetSM))
      return;
    op->emitOpError() << "needs " << describe(*required) << " but the target "
                      << "is " << chip.name << " (" << origin << ")";
    failed = true;
  });
  return failure(failed);
}

namespace {
struct VerifyTargetSupportPass
    : public fp8::impl::FP8VerifyTargetSupportBase<VerifyTargetSupportPass> {
  using FP8VerifyTargetSupportBase::FP8VerifyTargetSupportBase;

  void runOnOperation() override {
    gpu::GPUModuleOp module = getOperation();
    SmallVector<TargetToCheck> targets;
    TargetAttr fp8Target = lookupTarget(module);
    if (fp8Target)
      targets.push_back({fp8Target.getChip().str(),
                         fp8Target.getPtxFeatures().str(), std::nullopt,
                         "fp8.target of the module"});
    if (ArrayAttr attached = module.getTargetsAttr())
      for (Attribute attr : attached)
        if (auto nvvm = dyn_cast<NVVM::NVVMTargetAttr>(attr))
          targets.push_back({nvvm.getChip().str(), nvvm.getFeatures().str(),
                             nvvm.getO(), "#nvvm.target of the module"});
    // Nothing to check against: getTarget's diagnostic says what to run.
    if (targets.empty()) {
      (void)getTarget(module);
      return signalPassFailure();
    }
    // An NVVM target must be the chip the kernels were lowered for.
    if (fp8Target)
      for (const TargetToCheck &target : ArrayRef(targets).drop_front())
        if (target.chip != fp8Target.getChip()) {
          module.emitError() << "the " << target.origin << " is for '"
                             << target.chip << "' but the kernels were "
                             << "lowered for the module's " << fp8Target;
          return signalPassFailure();
        }

    bool failed = false;
    for (const TargetToCheck &target : targets) {
      const ChipInfo *info = nullptr;
      if (mlir::failed(checkTargetOptions(module, target, info)) ||
          mlir::failed(checkOps(module, *info, target.origin))) {
        failed = true;
        // One target's errors are enough; the others would repeat them.
        break;
      }
    }
    if (failed)
      signalPassFailure();
  }
};
} // namespace
