// The generic half of reading a metadata format: JSON values into the
// structs schema/gen_schema.py generates from the format's definition
// (schema/*.schema.json), checking types, enums, bounds, array lengths,
// required and unknown keys. Each error names the field's JSON path and
// where it is in the text: "SOURCE:LINE:COL: operands[1].dtype: unknown
// value ...".
//
// The generated reader (KernelMetadataParser.inc) calls `field` and
// `optionalField` with a spec of each field's type (Str, Int, EnumOf,
// ExprOf, arrayOf, objectOf...). The reader remembers where each path was,
// so that the format's hand-written checks across fields (references,
// symbols, lengths that depend on another field) report their errors the
// same way (errorAtPath).
#ifndef FP8RT_LIB_SCHEMAREADER_H
#define FP8RT_LIB_SCHEMAREADER_H

#include "Json.h"
#include "Status.h"

#include "fp8schema/Enum.h"
#include "fp8schema/Expr.h"
#include "fp8schema/ReadSpec.h"

#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fp8rt::schema {

class SchemaReader;

// The specs of the value types (shared with the compiler's reader), and
// ObjectOf, a nested struct read by its generated parse function.
using namespace fp8schema::spec;
template <typename T> struct ObjectOf {
  Status (*parse)(SchemaReader &, const json::Value &, const std::string &,
                  T &);
};

template <typename T>
ObjectOf<T> objectOf(Status (*parse)(SchemaReader &, const json::Value &,
                                     const std::string &, T &)) {
  return {parse};
}

// Parses a whole document; invalid JSON is FP8RT_ERROR_INVALID_METADATA
// "SOURCE:LINE:COL: invalid JSON: ...".
Status parseJsonDocument(std::string_view text, std::string_view source,
                         json::Value &out);

// Reads a whole document into `out` with `parse` (a generated
// parseROOTDocument, which checks the format and version first).
template <typename T>
Status readDocument(std::string_view text, std::string_view source,
                    SchemaReader &reader, T &out,
                    Status (*parse)(SchemaReader &, const json::Value &, T &)) {
  json::Value root;
  FP8RT_RETURN_IF_ERROR(parseJsonDocument(text, source, root));
  out = T();
  return parse(reader, root, out);
}

// "operands[1]" and "operands[1].dtype".
std::string indexPath(const std::string &path, size_t index);
std::string fieldPath(const std::string &path, std::string_view key);

class SchemaReader {
public:
  explicit SchemaReader(std::string_view source) : source_(source) {}

  // "SOURCE:LINE:COL: PATH: pieces..." at `where`.
  template <typename... Pieces>
  Status errorAt(const json::Value &where, const std::string &path,
                 const Pieces &...pieces) const {
    return errorAtLocation(where.location, path, pieces...);
  }
  // The same at the value read at `path` (or, for a field that is absent,
  // at the nearest enclosing value that was read).
  template <typename... Pieces>
  Status errorAtPath(const std::string &path, const Pieces &...pieces) const {
    return errorAtLocation(locationOf(path), path, pieces...);
  }

  Status expectKind(const json::Value &v, const std::string &path,
                    json::Kind kind);
  // An object whose keys are all in `allowed` (the message lists them).
  Status expectObject(const json::Value &v, const std::string &path,
                      std::initializer_list<const char *> allowed);
  // The leading "format" and "version" of a document: a file of another
  // format or version says so rather than fail on some field.
  Status expectFormat(const json::Value &root, const char *format,
                      int64_t version);

  // A required field.
  template <typename T, typename Spec>
  Status field(const json::Value &object, const std::string &path,
               const char *key, T &out, const Spec &spec) {
    const json::Value *v = object.find(key);
    if (!v)
      return errorAt(object, path, "missing required field \"", key, "\"");
    return readAt(*v, fieldPath(path, key), spec, out);
  }
  // A required field whose member is optional (it is optional in another
  // variant of a union).
  template <typename T, typename Spec>
  Status field(const json::Value &object, const std::string &path,
               const char *key, std::optional<T> &out, const Spec &spec) {
    out.emplace();
    return field(object, path, key, *out, spec);
  }
  template <typename T, typename Spec>
  Status optionalField(const json::Value &object, const std::string &path,
                       const char *key, std::optional<T> &out,
                       const Spec &spec) {
    const json::Value *v = object.find(key);
    if (!v)
      return Status();
    out.emplace();
    return readAt(*v, fieldPath(path, key), spec, *out);
  }

  Status read(const json::Value &v, const std::string &path, const Str &spec,
              std::string &out);
  Status read(const json::Value &v, const std::string &path, const Int &spec,
              int64_t &out);
  Status read(const json::Value &v, const std::string &path, const Bool &,
              bool &out);
  Status read(const json::Value &v, const std::string &path, const Num &,
              double &out);
  Status read(const json::Value &v, const std::string &path, const Num &spec,
              float &out);
  Status read(const json::Value &v, const std::string &path, const ExprOf &spec,
              fp8schema::Expr &out);

  template <typename E>
  Status read(const json::Value &v, const std::string &path, const EnumOf<E> &,
              E &out) {
    FP8RT_RETURN_IF_ERROR(expectKind(v, path, json::Kind::String));
    if (fp8schema::parseEnum(v.string, out))
      return Status();
    std::string list;
    for (const char *name : fp8schema::EnumTraits<E>::names)
      list += (list.empty() ? "" : ", ") + std::string(name);
    return errorAt(v, path, "unknown value \"", v.string,
                   "\" (expected one of: ", list, ")");
  }

  template <typename Item, typename T>
  Status read(const json::Value &v, const std::string &path,
              const ArrayOf<Item> &spec, std::vector<T> &out) {
    FP8RT_RETURN_IF_ERROR(expectKind(v, path, json::Kind::Array));
    FP8RT_RETURN_IF_ERROR(checkLength(v, path, spec.minItems, spec.maxItems));
    out.assign(v.array.size(), T());
    for (size_t i = 0; i < v.array.size(); ++i)
      FP8RT_RETURN_IF_ERROR(
          readAt(v.array[i], indexPath(path, i), spec.item, out[i]));
    return Status();
  }

  template <typename Item, typename T>
  Status read(const json::Value &v, const std::string &path,
              const MapOf<Item> &spec, std::map<std::string, T> &out) {
    FP8RT_RETURN_IF_ERROR(expectKind(v, path, json::Kind::Object));
    out.clear();
    for (const auto &member : v.object)
      FP8RT_RETURN_IF_ERROR(readAt(member.second, fieldPath(path, member.first),
                                   spec.item, out[member.first]));
    return Status();
  }

  template <typename T>
  Status read(const json::Value &v, const std::string &path,
              const ObjectOf<T> &spec, T &out) {
    return spec.parse(*this, v, path, out);
  }

private:
  std::string_view source_;
  // Where each path read so far starts in the text.
  std::map<std::string, json::Location> locations_;

  template <typename... Pieces>
  Status errorAtLocation(json::Location where, const std::string &path,
                         const Pieces &...pieces) const {
    return invalidMetadata(source_, ":", where.line, ":", where.column, ": ",
                           path.empty() ? std::string("(top level)") : path,
                           ": ", pieces...);
  }
  json::Location locationOf(std::string path) const;

  template <typename Spec, typename T>
  Status readAt(const json::Value &v, const std::string &path, const Spec &spec,
                T &out) {
    locations_[path] = v.location;
    return read(v, path, spec, out);
  }

  Status checkLength(const json::Value &v, const std::string &path,
                     int64_t minItems, int64_t maxItems) const;
};

} // namespace fp8rt::schema

#endif // FP8RT_LIB_SCHEMAREADER_H
