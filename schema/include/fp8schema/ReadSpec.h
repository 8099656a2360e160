//===- ReadSpec.h - The value types a generated reader reads ----*- C++ -*-===//
//
// What the readers generated from a schema (the runtime's, JSON to structs,
// runtime/lib/SchemaReader.h, and the compiler's, attributes to structs,
// include/FP8/Target/SchemaReader.h) pass for each field: a spec of its
// type, with the schema's bounds. Each reader adds ObjectOf, the spec of a
// nested struct, which names its own read function.
//
//===----------------------------------------------------------------------===//

#ifndef FP8SCHEMA_READSPEC_H
#define FP8SCHEMA_READSPEC_H

#include "fp8schema/Expr.h"

#include <cstdint>

namespace fp8schema::spec {

struct Str {
  int64_t minLength;
};
struct Int {
  int64_t min, max;
};
struct Bool {};
struct Num {};
template <typename E> struct EnumOf {};
struct ExprOf {
  const ExprForm *form;
};
template <typename Item> struct ArrayOf {
  int64_t minItems, maxItems; // maxItems < 0: no limit
  Item item;
};
template <typename Item> struct MapOf {
  Item item;
};

template <typename Item>
ArrayOf<Item> arrayOf(int64_t minItems, int64_t maxItems, Item item) {
  return {minItems, maxItems, item};
}
template <typename Item> MapOf<Item> mapOf(Item item) { return {item}; }

} // namespace fp8schema::spec

#endif // FP8SCHEMA_READSPEC_H
