//===- SchemaReader.cpp - Metadata attributes as structs ------------------===//

#include "FP8/Target/SchemaReader.h"

#include "mlir/IR/Builders.h"

#include "llvm/ADT/STLExtras.h"

#include <cstdint>

using namespace mlir;
using namespace mlir::fp8::schema;

InFlightDiagnostic AttrReader::error(const std::string &path) {
  InFlightDiagnostic diag = emitError() << what;
  if (!path.empty())
    diag << " '" << path << "'";
  diag << " ";
  return diag;
}

InFlightDiagnostic AttrReader::holds(Attribute v, const std::string &path) {
  return error(path) << "holds " << v << ": ";
}

std::string AttrReader::fieldPath(const std::string &path, StringRef key) {
  return path.empty() ? key.str() : path + "." + key.str();
}

std::string AttrReader::indexPath(const std::string &path, size_t index) {
  return path + "[" + std::to_string(index) + "]";
}

FailureOr<DictionaryAttr>
AttrReader::expectObject(Attribute v, const std::string &path,
                         std::initializer_list<const char *> allowed) {
  auto dict = dyn_cast<DictionaryAttr>(v);
  if (!dict)
    return holds(v, path) << "expected a dictionary";
  if (isLenient(path))
    return dict;
  for (NamedAttribute member : dict) {
    StringRef key = member.getName().getValue();
    if (llvm::is_contained(allowed, key))
      continue;
    InFlightDiagnostic diag = error(path) << "has an unknown key '" << key
                                          << "' (expected ";
    llvm::interleaveComma(allowed, diag);
    return diag << ")";
  }
  return dict;
}

FailureOr<SmallVector<Attribute>>
AttrReader::getItems(Attribute v, const std::string &path, int64_t minItems,
                     int64_t maxItems) {
  SmallVector<Attribute> items;
  if (auto array = dyn_cast<ArrayAttr>(v)) {
    items.assign(array.begin(), array.end());
  } else if (auto dense = dyn_cast<DenseArrayAttr>(v);
             dense && dense.getElementType().isSignlessInteger() &&
             dense.getElementType().getIntOrFloatBitWidth() > 1) {
    // array<i32: 384, 1, 1>, as a hand-written kernel may say.
    Builder b(v.getContext());
    auto append = [&](auto values) {
      for (int64_t value : values)
        items.push_back(b.getI64IntegerAttr(value));
    };
    if (auto i8 = dyn_cast<DenseI8ArrayAttr>(v))
      append(i8.asArrayRef());
    else if (auto i16 = dyn_cast<DenseI16ArrayAttr>(v))
      append(i16.asArrayRef());
    else if (auto i32 = dyn_cast<DenseI32ArrayAttr>(v))
      append(i32.asArrayRef());
    else
      append(cast<DenseI64ArrayAttr>(v).asArrayRef());
  } else {
    return holds(v, path) << "expected an array";
  }
  int64_t size = items.size();
  if (size < minItems || (maxItems >= 0 && size > maxItems)) {
    InFlightDiagnostic diag = error(path) << "has " << size << " entries: ";
    if (minItems == maxItems)
      return diag << "expected " << minItems;
    if (size < minItems)
      return diag << "expected at least " << minItems;
    return diag << "expected at most " << maxItems;
  }
  return items;
}

LogicalResult AttrReader::read(Attribute v, const std::string &path,
                               const Str &spec, std::string &out) {
  auto text = dyn_cast<StringAttr>(v);
  if (!text)
    return holds(v, path) << "expected a string";
  if (static_cast<int64_t>(text.size()) < spec.minLength)
    return holds(v, path) << "expected at least " << spec.minLength
                          << " characters";
  out = text.str();
  return success();
}

LogicalResult AttrReader::read(Attribute v, const std::string &path,
                               const Int &spec, int64_t &out) {
  auto integer = dyn_cast<IntegerAttr>(v);
  if (!integer || isa<BoolAttr>(v) || !integer.getType().isIntOrIndex())
    return holds(v, path) << "expected an integer";
  const APInt &value = integer.getValue();
  bool fits = integer.getType().isUnsignedInteger()
                  ? value.getActiveBits() < 64
                  : value.getSignificantBits() <= 64;
  if (!fits)
    return holds(v, path) << "expected a 64-bit integer";
  out = integer.getType().isUnsignedInteger() ? int64_t(value.getZExtValue())
                                              : value.getSExtValue();
  if (out < spec.min || out > spec.max)
    return holds(v, path) << "expected a value in [" << spec.min << ", "
                          << spec.max << "]";
  return success();
}

LogicalResult AttrReader::read(Attribute v, const std::string &path,
                               const Bool &, bool &out) {
  auto flag = dyn_cast<BoolAttr>(v);
  if (!flag)
    return holds(v, path) << "expected true or false";
  out = flag.getValue();
  return success();
}

LogicalResult AttrReader::read(Attribute v, const std::string &path,
                               const Num &, double &out) {
  if (auto real = dyn_cast<FloatAttr>(v)) {
    out = real.getValueAsDouble();
    return success();
  }
  int64_t integer;
  if (failed(read(v, path, Int{INT64_MIN, INT64_MAX}, integer)))
    return failure();
  out = static_cast<double>(integer);
  return success();
}

LogicalResult AttrReader::read(Attribute v, const std::string &path,
                               const Num &spec, float &out) {
  double value = 0;
  if (failed(read(v, path, spec, value)))
    return failure();
  out = static_cast<float>(value);
  return success();
}

LogicalResult AttrReader::read(Attribute v, const std::string &path,
                               const ExprOf &spec, fp8schema::Expr &out) {
  std::string problem;
  if (auto text = dyn_cast<StringAttr>(v)) {
    problem = fp8schema::parseExprString(text.getValue(), *spec.form, out);
  } else if (auto integer = dyn_cast<IntegerAttr>(v);
             integer && !isa<BoolAttr>(v)) {
    int64_t value;
    if (failed(read(v, path, Int{INT64_MIN, INT64_MAX}, value)))
      return failure();
    problem = fp8schema::checkExprConstant(value, *spec.form);
    out = fp8schema::Expr::constant(value);
  } else {
    return holds(v, path) << fp8schema::describeExprForm(*spec.form);
  }
  if (!problem.empty())
    return error(path) << problem;
  return success();
}
