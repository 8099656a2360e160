//===- KernelArtifacts.cpp - PTX and JSON metadata of kernels -------------===//

#include "FP8/Target/PTX/KernelArtifacts.h"
#include "FP8/Target/KernelMetadataReader.h"
#include "FP8/Target/PTX/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Diagnostics.h"

#include "llvm/ADT/StringMap.h"

#include "fp8schema/KernelMetadataKeys.h"
#include "fp8schema/ModuleProgram.h"
#include "fp8schema/ModuleProgramKeys.h"

#include <cmath>

using namespace mlir;
using namespace mlir::fp8;

using KernelKeys = fp8schema::keys::KernelMetadata;
using ModuleKeys = fp8schema::keys::ModuleProgram;

/// A PTX identifier that LLVM emits unchanged (it rewrites other characters
/// of symbol names) and that is safe as a file name.
static bool isPlainPTXIdentifier(StringRef name) {
  auto isIdentChar = [](char c) {
    return llvm::isAlnum(c) || c == '_' || c == '$';
  };
  return !name.empty() && !llvm::isDigit(name.front()) &&
         llvm::all_of(name, isIdentChar);
}

FailureOr<std::vector<KernelInfo>> mlir::fp8::collectKernels(ModuleOp module) {
  std::vector<KernelInfo> kernels;
  llvm::StringMap<Location> seen;
  bool failed = false;
  for (auto gpuModule : module.getOps<gpu::GPUModuleOp>()) {
    for (auto func : gpuModule.getOps<gpu::GPUFuncOp>()) {
      if (!func.isKernel())
        continue;
      StringRef name = func.getName();
      auto metadata =
          func->getAttrOfType<DictionaryAttr>(kKernelMetadataAttrName);
      if (!metadata) {
        func.emitError() << "kernel @" << name << " has no '"
                         << kKernelMetadataAttrName
                         << "' dictionary: the runtime could not launch it";
        failed = true;
        continue;
      }
      // The fields it gives, each whole; fp8-compile converts the rest
      // generically.
      FailureOr<fp8schema::KernelMetadata> fields = readKernelMetadata(
          metadata, schema::ReadMode::Present,
          [&]() { return func.emitError(); });
      if (!succeeded(fields)) {
        failed = true;
        continue;
      }
      if (!fields->entry.empty() && fields->entry != name) {
        func.emitError() << "kernel @" << name << " has metadata "
                         << KernelKeys::entry << " = \"" << fields->entry
                         << "\": expected \"" << name << "\"";
        failed = true;
        continue;
      }
      if (!isPlainPTXIdentifier(name)) {
        func.emitError() << "kernel name '" << name
                         << "' is not a PTX identifier "
                            "([A-Za-z_$][A-Za-z0-9_$]*)";
        failed = true;
        continue;
      }
      auto [it, inserted] = seen.try_emplace(name, func.getLoc());
      if (!inserted) {
        InFlightDiagnostic diag = func.emitError()
                                  << "two kernels are named '" << name
                                  << "': their files would collide";
        diag.attachNote(it->second) << "the other one is here";
        failed = true;
        continue;
      }
      kernels.push_back({name.str(), gpuModule.getName().str(), metadata,
                         std::move(*fields), func.getLoc()});
    }
  }
  if (failed)
    return failure();
  return kernels;
}

FailureOr<StringRef> mlir::fp8::getBinaryPTX(ModuleOp module,
                                             StringRef binaryName) {
  auto binary = module.lookupSymbol<gpu::BinaryOp>(binaryName);
  if (!binary)
    return module.emitError()
           << "no gpu.binary @" << binaryName << " after code generation";
  for (Attribute attr : binary.getObjectsAttr()) {
    auto object = dyn_cast<gpu::ObjectAttr>(attr);
    if (object && isa<NVVM::NVVMTargetAttr>(object.getTarget()) &&
        object.getFormat() == gpu::CompilationTarget::Assembly)
      return object.getObject().getValue();
  }
  return binary.emitError() << "has no PTX assembly object for an #nvvm.target";
}

namespace {
/// Converts attributes to JSON, reporting the first unsupported value with
/// its key path (e.g. `operands[2].shape`).
class MetadataConverter {
public:
  explicit MetadataConverter(Location loc) : loc(loc) {}

  FailureOr<llvm::json::Value> convert(Attribute attr, StringRef path) {
    if (auto str = dyn_cast<StringAttr>(attr)) {
      if (!llvm::json::isUTF8(str.getValue()))
        return error(path) << "a string that is not valid UTF-8";
      return llvm::json::Value(str.getValue().str());
    }
    if (auto flag = dyn_cast<BoolAttr>(attr))
      return llvm::json::Value(flag.getValue());
    if (auto integer = dyn_cast<IntegerAttr>(attr))
      return convertInteger(integer.getValue(), integer.getType(), path);
    if (auto real = dyn_cast<FloatAttr>(attr))
      return convertFloat(real.getValueAsDouble(), path);
    if (auto array = dyn_cast<ArrayAttr>(attr)) {
      llvm::json::Array result;
      for (auto [i, element] : llvm::enumerate(array)) {
        FailureOr<llvm::json::Value> value =
            convert(element, (path + "[" + Twine(i) + "]").str());
        if (failed(value))
          return failure();
        result.push_back(std::move(*value));
      }
      return llvm::json::Value(std::move(result));
    }
    if (auto dense = dyn_cast<DenseArrayAttr>(attr))
      return convertDenseArray(dense, path);
    if (auto dict = dyn_cast<DictionaryAttr>(attr)) {
      llvm::json::Object result;
      for (NamedAttribute member : dict) {
        StringRef key = member.getName().getValue();
        FailureOr<llvm::json::Value> value =
            convert(member.getValue(),
                    path.empty() ? key.str() : (path + "." + key).str());
        if (failed(value))
          return failure();
        result[key] = std::move(*value);
      }
      return llvm::json::Value(std::move(result));
    }
    return error(path) << attr
                       << ": expected a string, integer, bool, float, array "
                          "or dictionary";
  }

private:
  InFlightDiagnostic error(StringRef path) {
    InFlightDiagnostic diag = emitError(loc) << "kernel metadata";
    if (!path.empty())
      diag << " '" << path << "'";
    diag << " holds ";
    return diag;
  }

  FailureOr<llvm::json::Value> convertInteger(const APInt &value, Type type,
                                              StringRef path) {
    // JSON numbers here are 64-bit integers, as the runtime reads them.
    if (type.isUnsignedInteger()) {
      if (value.getActiveBits() > 64)
        return error(path) << "an integer wider than 64 bits";
      return llvm::json::Value(value.getZExtValue());
    }
    if (value.getSignificantBits() > 64)
      return error(path) << "an integer wider than 64 bits";
    return llvm::json::Value(value.getSExtValue());
  }

  FailureOr<llvm::json::Value> convertFloat(double value, StringRef path) {
    if (!std::isfinite(value))
      return error(path) << "a non-finite float, which JSON cannot represent";
    return llvm::json::Value(value);
  }

  FailureOr<llvm::json::Value> convertDenseArray(DenseArrayAttr dense,
                                                 StringRef path) {
    llvm::json::Array result;
    Type elementType = dense.getElementType();
    ArrayRef<char> raw = dense.getRawData();
    int64_t size = dense.getSize();
    // DenseArrayAttr stores elements natively: bool, int8..int64, float,
    // double.
    auto elements = [&](auto tag) {
      using T = decltype(tag);
      return ArrayRef<T>(reinterpret_cast<const T *>(raw.data()), size);
    };
    if (elementType.isInteger(1)) {
      for (bool v : elements(bool()))
        result.push_back(v);
    } else if (elementType.isInteger(8)) {
      for (int8_t v : elements(int8_t()))
        result.push_back(static_cast<int64_t>(v));
    } else if (elementType.isInteger(16)) {
      for (int16_t v : elements(int16_t()))
        result.push_back(static_cast<int64_t>(v));
    } else if (elementType.isInteger(32)) {
      for (int32_t v : elements(int32_t()))
        result.push_back(static_cast<int64_t>(v));
    } else if (elementType.isInteger(64)) {
      for (int64_t v : elements(int64_t()))
        result.push_back(v);
    } else if (elementType.isF32() || elementType.isF64()) {
      for (int64_t i = 0; i < size; ++i) {
        double v =
            elementType.isF32() ? elements(float())[i] : elements(double())[i];
        FailureOr<llvm::json::Value> value =
            convertFloat(v, (path + "[" + Twine(i) + "]").str());
        if (failed(value))
          return failure();
        result.push_back(std::move(*value));
      }
    } else {
      return error(path) << "a dense array of " << elementType;
    }
    return llvm::json::Value(std::move(result));
  }

  Location loc;
};
} // namespace

FailureOr<llvm::json::Value> mlir::fp8::convertMetadataToJSON(Attribute attr,
                                                              Location loc) {
  return MetadataConverter(loc).convert(attr, /*path=*/"");
}

FailureOr<llvm::json::Value>
mlir::fp8::buildKernelJSON(const KernelInfo &kernel, StringRef ptxFileName) {
  for (StringRef reserved :
       {KernelKeys::format, KernelKeys::version, KernelKeys::ptx})
    if (kernel.metadata.get(reserved))
      return emitError(kernel.loc) << "kernel metadata must not hold '"
                                   << reserved << "': fp8-compile sets it";
  FailureOr<llvm::json::Value> json =
      convertMetadataToJSON(kernel.metadata, kernel.loc);
  if (failed(json))
    return failure();
  llvm::json::Object *object = json->getAsObject();
  (*object)[KernelKeys::format] = fp8schema::kKernelMetadataFormat;
  (*object)[KernelKeys::version] = fp8schema::kKernelMetadataVersion;
  (*object)[KernelKeys::ptx] = ptxFileName.str();
  return json;
}

FailureOr<llvm::json::Value>
mlir::fp8::buildModuleProgramJSON(ModuleOp module) {
  auto program = module->getAttrOfType<DictionaryAttr>(kHostProgramAttrName);
  if (!program)
    return module.emitError() << "no '" << kHostProgramAttrName
                              << "' on the module: run "
                                 "fp8-build-host-program first";
  for (StringRef reserved : {ModuleKeys::format, ModuleKeys::version})
    if (program.get(reserved))
      return module.emitError() << "the host program must not hold '"
                                << reserved << "': fp8-compile sets it";
  FailureOr<llvm::json::Value> json =
      convertMetadataToJSON(program, module.getLoc());
  if (failed(json))
    return failure();
  llvm::json::Object *object = json->getAsObject();
  (*object)[ModuleKeys::format] = fp8schema::kModuleProgramFormat;
  (*object)[ModuleKeys::version] = fp8schema::kModuleProgramVersion;
  return json;
}
