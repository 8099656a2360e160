//===- SchemaReader.h - Metadata attributes as structs ----------*- C++ -*-===//
//
// The generic half of the compiler's readers generated from
// schema/*.schema.json (schema/gen_schema.py --emit reader): the attributes
// a writer made (SchemaWriter.h) back into the fp8schema structs, checking
// types, enums, bounds and array lengths as the runtime's reader
// (runtime/lib/SchemaReader.h) checks the JSON. Each error names the key
// path of the value: "kernel metadata 'operands[1].dtype' holds f32:
// expected a string".
//
// A reader reads either a complete value (every required key present, no
// unknown key: what the runtime will accept) or, at the top level, only the
// keys present: the dictionary of a hand-written kernel, which fp8-compile
// converts generically, may give some fields only (and keys of its own), but
// each field it gives is read whole and checked.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_TARGET_SCHEMAREADER_H
#define FP8_TARGET_SCHEMAREADER_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Support/LLVM.h"

#include "fp8schema/Enum.h"
#include "fp8schema/Expr.h"
#include "fp8schema/ReadSpec.h"

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mlir::fp8::schema {

class AttrReader;

// The specs of the value types (shared with the runtime's reader), and
// ObjectOf, a nested struct read by its generated read function.
using namespace fp8schema::spec;
template <typename T> struct ObjectOf {
  LogicalResult (*read)(AttrReader &, Attribute, const std::string &, T &);
};

template <typename T>
ObjectOf<T> objectOf(LogicalResult (*read)(AttrReader &, Attribute,
                                           const std::string &, T &)) {
  return {read};
}

/// What a reader checks beyond the values present.
enum class ReadMode {
  /// Required keys must be present and unknown keys are errors.
  Complete,
  /// At the top level, only the keys present are read: missing required
  /// keys keep their default values and unknown keys are left to the
  /// caller. Below it, as Complete.
  Present,
};

class AttrReader {
public:
  /// `what` names the value in messages ("kernel metadata"); `emitError`
  /// starts a diagnostic at the value's owner.
  AttrReader(StringRef what, function_ref<InFlightDiagnostic()> emitError,
             ReadMode mode)
      : what(what), emitError(emitError), mode(mode) {}

  /// "WHAT 'PATH' " (or "WHAT " at the top level): the caller goes on.
  InFlightDiagnostic error(const std::string &path);

  /// A dictionary whose keys (in Complete mode) are all in `allowed`.
  FailureOr<DictionaryAttr> expectObject(Attribute v, const std::string &path,
                                         std::initializer_list<const char *>
                                             allowed);

  template <typename T, typename Spec>
  LogicalResult field(DictionaryAttr object, const std::string &path,
                      const char *key, T &out, const Spec &spec) {
    Attribute v = object.get(key);
    if (!v) {
      if (isLenient(path))
        return success();
      return error(path) << "has no '" << key << "'";
    }
    return read(v, fieldPath(path, key), spec, out);
  }
  /// A required field whose member is optional (it is optional in another
  /// variant of a union).
  template <typename T, typename Spec>
  LogicalResult field(DictionaryAttr object, const std::string &path,
                      const char *key, std::optional<T> &out,
                      const Spec &spec) {
    if (!object.get(key) && isLenient(path))
      return success();
    out.emplace();
    return field(object, path, key, *out, spec);
  }
  template <typename T, typename Spec>
  LogicalResult optionalField(DictionaryAttr object, const std::string &path,
                              const char *key, std::optional<T> &out,
                              const Spec &spec) {
    Attribute v = object.get(key);
    if (!v)
      return success();
    out.emplace();
    return read(v, fieldPath(path, key), spec, *out);
  }

  LogicalResult read(Attribute v, const std::string &path, const Str &spec,
                     std::string &out);
  LogicalResult read(Attribute v, const std::string &path, const Int &spec,
                     int64_t &out);
  LogicalResult read(Attribute v, const std::string &path, const Bool &,
                     bool &out);
  LogicalResult read(Attribute v, const std::string &path, const Num &,
                     double &out);
  LogicalResult read(Attribute v, const std::string &path, const Num &spec,
                     float &out);
  LogicalResult read(Attribute v, const std::string &path, const ExprOf &spec,
                     fp8schema::Expr &out);
  template <typename E>
  LogicalResult read(Attribute v, const std::string &path, const EnumOf<E> &,
                     E &out) {
    auto text = dyn_cast<StringAttr>(v);
    if (!text)
      return holds(v, path) << "expected a string";
    if (fp8schema::parseEnum(text.getValue(), out))
      return success();
    InFlightDiagnostic diag = holds(v, path) << "expected one of ";
    llvm::interleaveComma(fp8schema::EnumTraits<E>::names, diag,
                          [&](const char *name) { diag << name; });
    return diag;
  }
  template <typename Item, typename T>
  LogicalResult read(Attribute v, const std::string &path,
                     const ArrayOf<Item> &spec, std::vector<T> &out) {
    FailureOr<SmallVector<Attribute>> items =
        getItems(v, path, spec.minItems, spec.maxItems);
    if (failed(items))
      return failure();
    out.assign(items->size(), T());
    for (auto [i, item] : llvm::enumerate(*items))
      if (failed(read(item, indexPath(path, i), spec.item, out[i])))
        return failure();
    return success();
  }
  template <typename Item, typename T>
  LogicalResult read(Attribute v, const std::string &path,
                     const MapOf<Item> &spec, std::map<std::string, T> &out) {
    auto dict = dyn_cast<DictionaryAttr>(v);
    if (!dict)
      return holds(v, path) << "expected a dictionary";
    out.clear();
    for (NamedAttribute member : dict) {
      std::string key = member.getName().str();
      if (failed(read(member.getValue(), fieldPath(path, key), spec.item,
                      out[key])))
        return failure();
    }
    return success();
  }
  template <typename T>
  LogicalResult read(Attribute v, const std::string &path,
                     const ObjectOf<T> &spec, T &out) {
    return spec.read(*this, v, path, out);
  }

private:
  StringRef what;
  function_ref<InFlightDiagnostic()> emitError;
  ReadMode mode;

  /// Whether the dictionary at `path` may lack required keys and hold
  /// unknown ones.
  bool isLenient(const std::string &path) const {
    return mode == ReadMode::Present && path.empty();
  }
  /// "WHAT 'PATH' holds V: " for a value of the wrong type or range.
  InFlightDiagnostic holds(Attribute v, const std::string &path);
  /// The elements of an array (an ArrayAttr or a dense integer array) of
  /// `minItems` to `maxItems` (< 0: any number) elements.
  FailureOr<SmallVector<Attribute>> getItems(Attribute v,
                                             const std::string &path,
                                             int64_t minItems,
                                             int64_t maxItems);
  static std::string fieldPath(const std::string &path, StringRef key);
  static std::string indexPath(const std::string &path, size_t index);
};

} // namespace mlir::fp8::schema

#endif // FP8_TARGET_SCHEMAREADER_H
