//===- SchemaWriter.h - Metadata structs as attributes ----------*- C++ -*-===//
//
// What the compiler's writers generated from schema/*.schema.json
// (schema/gen_schema.py --emit writer) call: an expression, an array and a
// map as attributes. A file that includes a generated NAMEWriter.inc
// includes this header first.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_TARGET_SCHEMAWRITER_H
#define FP8_TARGET_SCHEMAWRITER_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OperationSupport.h"

#include "fp8schema/Expr.h"

#include <map>
#include <string>
#include <vector>

namespace mlir::fp8 {

/// A constant as an i64 integer, any other expression as its text
/// ("M", "roundup(M, 4)").
inline Attribute writeExpr(Builder &b, const fp8schema::Expr &e) {
  if (e.isConstant())
    return b.getI64IntegerAttr(e.value());
  return b.getStringAttr(e.str());
}

template <typename T, typename WriteItem>
ArrayAttr writeArray(Builder &b, const std::vector<T> &items,
                     WriteItem writeItem) {
  SmallVector<Attribute> attrs;
  for (const T &item : items)
    attrs.push_back(writeItem(item));
  return b.getArrayAttr(attrs);
}

template <typename T, typename WriteItem>
DictionaryAttr writeMap(Builder &b, const std::map<std::string, T> &items,
                        WriteItem writeItem) {
  NamedAttrList entries;
  for (const auto &[key, item] : items)
    entries.append(key, writeItem(item));
  return entries.getDictionary(b.getContext());
}

} // namespace mlir::fp8

#endif // FP8_TARGET_SCHEMAWRITER_H
