// A small, strict JSON (RFC 8259) parser for the kernel metadata.
//
// Strict means: one top-level value followed only by whitespace; no comments,
// no trailing commas, no single quotes, no NaN/Infinity, no leading zeros,
// only the standard escapes, no raw control characters in strings, strings
// must be valid UTF-8, and duplicate object keys are errors. Errors carry a
// 1-based line:column (columns count bytes).
//
// Numbers keep both a double and, when the literal has no fraction or
// exponent and fits in int64, the exact integer, so metadata can insist on
// integers without rounding surprises.
#ifndef FP8RT_LIB_JSON_H
#define FP8RT_LIB_JSON_H

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fp8rt::json {

struct Location {
  int line = 0;
  int column = 0;
};

enum class Kind { Null, Bool, Number, String, Array, Object };

const char *kindName(Kind kind); // "null", "boolean", "number", ...

class Value {
public:
  Kind kind = Kind::Null;
  Location location; // where the value starts in the text

  bool boolean = false;
  double number = 0.0;
  bool isInteger = false; // integer literal that fits in int64
  int64_t integer = 0;
  std::string string;
  std::vector<Value> array;
  std::vector<std::pair<std::string, Value>> object; // in source order

  bool is(Kind k) const { return kind == k; }
  // Object member by key, or nullptr (also when this is not an object).
  const Value *find(std::string_view key) const;
};

struct ParseError {
  std::string message; // without the location
  Location location;
};

// Parses `text`. Returns false and fills `error` on failure.
bool parse(std::string_view text, Value &out, ParseError &error);

} // namespace fp8rt::json

#endif // FP8RT_LIB_JSON_H
