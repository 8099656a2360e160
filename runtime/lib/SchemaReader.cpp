#include "SchemaReader.h"

#include <cmath>

namespace fp8rt::schema {

Status parseJsonDocument(std::string_view text, std::string_view source,
                         json::Value &out) {
  json::ParseError error;
  if (json::parse(text, out, error))
    return Status();
  return invalidMetadata(source, ":", error.location.line, ":",
                         error.location.column,
                         ": invalid JSON: ", error.message);
}

std::string indexPath(const std::string &path, size_t index) {
  return path + "[" + std::to_string(index) + "]";
}

std::string fieldPath(const std::string &path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

json::Location SchemaReader::locationOf(std::string path) const {
  while (true) {
    auto it = locations_.find(path);
    if (it != locations_.end() || path.empty())
      return it != locations_.end() ? it->second : json::Location{1, 1};
    size_t cut = path.find_last_of(".[");
    path.resize(cut == std::string::npos ? 0 : cut);
  }
}

Status SchemaReader::expectKind(const json::Value &v, const std::string &path,
                                json::Kind kind) {
  locations_[path] = v.location;
  if (v.kind != kind)
    return errorAt(v, path, "expected ", json::kindName(kind), ", got ",
                   json::kindName(v.kind));
  return Status();
}

Status SchemaReader::expectObject(const json::Value &v, const std::string &path,
                                  std::initializer_list<const char *> allowed) {
  FP8RT_RETURN_IF_ERROR(expectKind(v, path, json::Kind::Object));
  for (const auto &member : v.object) {
    bool known = false;
    for (const char *key : allowed)
      known = known || member.first == key;
    if (known)
      continue;
    std::string list;
    for (const char *key : allowed)
      list += (list.empty() ? "" : ", ") + std::string(key);
    return errorAt(member.second, path, "unknown key \"", member.first,
                   "\" (allowed: ", list, ")");
  }
  return Status();
}

Status SchemaReader::expectFormat(const json::Value &root, const char *format,
                                  int64_t version) {
  FP8RT_RETURN_IF_ERROR(expectKind(root, "", json::Kind::Object));
  std::string actualFormat;
  FP8RT_RETURN_IF_ERROR(field(root, "", "format", actualFormat, Str{1}));
  if (actualFormat != format)
    return errorAtPath("format", "\"", actualFormat, "\" is not \"", format,
                       "\"");
  int64_t actualVersion = 0;
  FP8RT_RETURN_IF_ERROR(
      field(root, "", "version", actualVersion, Int{0, INT64_MAX}));
  if (actualVersion != version)
    return errorAtPath("version", "unsupported version ", actualVersion,
                       " (this runtime reads version ", version, ")");
  return Status();
}

Status SchemaReader::read(const json::Value &v, const std::string &path,
                          const Str &spec, std::string &out) {
  FP8RT_RETURN_IF_ERROR(expectKind(v, path, json::Kind::String));
  if (static_cast<int64_t>(v.string.size()) < spec.minLength)
    return spec.minLength == 1 ? errorAt(v, path, "must not be empty")
                               : errorAt(v, path, "must have at least ",
                                         spec.minLength, " characters");
  out = v.string;
  return Status();
}

// The error of a value that is not an integer, or "" for an integer.
static std::string notAnInteger(const json::Value &v) {
  if (v.kind == json::Kind::Number && !v.isInteger &&
      std::fabs(v.number) >= 9.2e18)
    return "integer does not fit in 64 bits";
  if (v.kind != json::Kind::Number || !v.isInteger)
    return strCat("expected an integer, got ", v.kind == json::Kind::Number
                                                   ? "a non-integer number"
                                                   : json::kindName(v.kind));
  return "";
}

Status SchemaReader::read(const json::Value &v, const std::string &path,
                          const Int &spec, int64_t &out) {
  std::string problem = notAnInteger(v);
  if (!problem.empty())
    return errorAt(v, path, problem);
  if (v.integer < spec.min || v.integer > spec.max)
    return errorAt(v, path, "value ", v.integer, " is out of range [", spec.min,
                   ", ", spec.max, "]");
  out = v.integer;
  return Status();
}

Status SchemaReader::read(const json::Value &v, const std::string &path,
                          const Bool &, bool &out) {
  FP8RT_RETURN_IF_ERROR(expectKind(v, path, json::Kind::Bool));
  out = v.boolean;
  return Status();
}

Status SchemaReader::read(const json::Value &v, const std::string &path,
                          const Num &, double &out) {
  FP8RT_RETURN_IF_ERROR(expectKind(v, path, json::Kind::Number));
  out = v.number;
  return Status();
}

Status SchemaReader::read(const json::Value &v, const std::string &path,
                          const Num &spec, float &out) {
  double value = 0;
  FP8RT_RETURN_IF_ERROR(read(v, path, spec, value));
  out = static_cast<float>(value);
  return Status();
}

Status SchemaReader::read(const json::Value &v, const std::string &path,
                          const ExprOf &spec, fp8schema::Expr &out) {
  if (v.kind == json::Kind::String) {
    std::string problem = fp8schema::parseExprString(v.string, *spec.form, out);
    if (!problem.empty())
      return errorAt(v, path, problem);
    return Status();
  }
  if (v.kind == json::Kind::Number) {
    std::string problem = notAnInteger(v);
    if (problem.empty())
      problem = fp8schema::checkExprConstant(v.integer, *spec.form);
    if (!problem.empty())
      return errorAt(v, path, problem);
    out = fp8schema::Expr::constant(v.integer);
    return Status();
  }
  return errorAt(v, path, "expected ", fp8schema::describeExprForm(*spec.form),
                 ", got ", json::kindName(v.kind));
}

Status SchemaReader::checkLength(const json::Value &v, const std::string &path,
                                 int64_t minItems, int64_t maxItems) const {
  int64_t size = static_cast<int64_t>(v.array.size());
  if (minItems == maxItems && size != minItems)
    return errorAt(v, path, "expected ", minItems, " entries, got ", size);
  if (size < minItems)
    return minItems == 1 ? errorAt(v, path, "must not be empty")
                         : errorAt(v, path, "expected at least ", minItems,
                                   " entries, got ", size);
  if (maxItems >= 0 && size > maxItems)
    return errorAt(v, path, "expected at most ", maxItems, " entries, got ",
                   size);
  return Status();
}

} // namespace fp8rt::schema
