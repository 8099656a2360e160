//===- KernelMetadata.cpp - The metadata dictionary of a kernel -----------===//

#include "FP8/Conversion/KernelSkeleton/KernelMetadata.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::fp8;

StringRef mlir::fp8::getKernelDTypeName(Type t) {
  if (isa<Float8E4M3FNType>(t))
    return "e4m3";
  if (isa<Float8E5M2Type>(t))
    return "e5m2";
  if (isa<Float8E8M0FNUType>(t))
    return "ue8m0";
  if (t.isBF16())
    return "bf16";
  if (t.isF16())
    return "f16";
  return "f32";
}

Attribute KernelMetadataBuilder::shape(ArrayRef<int64_t> extents) {
  SmallVector<Attribute> dims;
  for (int64_t extent : extents)
    dims.push_back(dim(extent));
  return list(dims);
}

DictionaryAttr KernelMetadataBuilder::dict(
    ArrayRef<std::pair<StringRef, Attribute>> entries) {
  SmallVector<NamedAttribute> named;
  for (auto [key, value] : entries)
    named.push_back(b.getNamedAttr(key, value));
  return b.getDictionaryAttr(named);
}

void KernelMetadataBuilder::addPointerOperand(StringRef name, StringRef dtype,
                                              Attribute shape, StringRef role,
                                              int64_t alignment) {
  operands.push_back(dict({{"name", str(name)},
                           {"dtype", str(dtype)},
                           {"shape", shape},
                           {"role", str(role)},
                           {"alignment", num(alignment)}}));
  params.push_back(dict(
      {{"name", str(name)}, {"kind", str("pointer")}, {"operand", str(name)}}));
}

void KernelMetadataBuilder::addValueParam(StringRef name, StringRef kind,
                                          StringRef symbol, int64_t multipleOf,
                                          StringRef reason) {
  SmallVector<std::pair<StringRef, Attribute>> entries = {
      {"name", str(name)}, {"kind", str(kind)}, {"value", str(symbol)}};
  if (multipleOf > 1) {
    entries.push_back({"multiple_of", num(multipleOf)});
    entries.push_back({"reason", str(reason)});
  }
  params.push_back(dict(entries));
}

Attribute KernelMetadataBuilder::tilesGrid(int64_t tileRows, int64_t tileCols,
                                           StringRef operand) {
  return dict({{"kind", str("tiles")},
               {"tile_m", num(tileRows)},
               {"tile_n", num(tileCols)},
               {"operand", str(operand)}});
}

Attribute KernelMetadataBuilder::singleCtaGrid() {
  return fixedGrid({1, 1, 1});
}

Attribute KernelMetadataBuilder::fixedGrid(ArrayRef<int64_t> dims) {
  SmallVector<Attribute> extents;
  for (int64_t d : dims)
    extents.push_back(num(d));
  return dict({{"kind", str("fixed")}, {"dims", list(extents)}});
}

DictionaryAttr KernelMetadataBuilder::finish(
    StringRef name, const ChipInfo &chip, StringRef kind, int64_t threads,
    int64_t dynamicSharedMemoryBytes, Attribute grid, StringRef descriptionKey,
    Attribute description) {
  return dict({{"name", str(name)},
               {"entry", str(name)},
               {"chip", str(chip.name)},
               {"kind", str(kind)},
               {"block", list({num(threads), num(1), num(1)})},
               {"cluster", list({num(1), num(1), num(1)})},
               {"dynamic_shared_memory_bytes", num(dynamicSharedMemoryBytes)},
               {"grid", grid},
               {"operands", list(operands)},
               {"tensor_maps", list({})},
               {"params", list(params)},
               {descriptionKey, description}});
}
