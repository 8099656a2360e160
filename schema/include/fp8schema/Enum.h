//===- Enum.h - The string values of the schema enums -----------*- C++ -*-===//
//
// Each enum the schema generator emits (an `enum class` whose enumerators
// follow the schema's `enum` list) has an EnumTraits specialization with
// its JSON strings; stringify and parseEnum convert either way.
//
//===----------------------------------------------------------------------===//

#ifndef FP8SCHEMA_ENUM_H
#define FP8SCHEMA_ENUM_H

#include <cstddef>
#include <iterator>
#include <string_view>

namespace fp8schema {

/// Specialized by the generated headers: `typeName` and `names`, the JSON
/// string of each enumerator in order.
template <typename E> struct EnumTraits;

/// The JSON string of `value`.
template <typename E> const char *stringify(E value) {
  return EnumTraits<E>::names[static_cast<size_t>(value)];
}

/// The enumerator whose JSON string is `text`; false when there is none.
template <typename E> bool parseEnum(std::string_view text, E &out) {
  const auto &names = EnumTraits<E>::names;
  for (size_t i = 0; i < std::size(names); ++i)
    if (text == names[i]) {
      out = static_cast<E>(i);
      return true;
    }
  return false;
}

} // namespace fp8schema

#endif // FP8SCHEMA_ENUM_H
