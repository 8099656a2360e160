//===- Copy2DGeometry.h - Bounds rule of a strided copy ---------*- C++ -*-===//
//
// A module program's copy2d step copies `rows` rows of `row` units each,
// row i from `sourceOffset + i * sourcePitch` into `targetOffset + i *
// targetPitch` (units: elements for the compiler, bytes for the runtime).
// fp8-build-host-program checks the geometry it writes into module.json and
// the runtime checks module.json again before it copies; both use this rule.
//
//===----------------------------------------------------------------------===//

#ifndef FP8SCHEMA_COPY2DGEOMETRY_H
#define FP8SCHEMA_COPY2DGEOMETRY_H

#include <cstdint>

namespace fp8schema {

/// Whether `rows` rows of `row` units, the first at `offset` and each next
/// one `pitch` further, lie inside a buffer of `size` units and do not
/// overlap (`row <= pitch`). A sliced copy moves every rank's rows by
/// `rank * row`: `lastRank` is the last rank (0 for an unsliced copy).
/// An empty copy (`rows == 0`) touches nothing. Negative arguments and
/// sizes that overflow int64_t do not fit.
inline bool copy2dFits(int64_t rows, int64_t row, int64_t offset,
                       int64_t pitch, int64_t lastRank, int64_t size) {
  if (rows < 0 || row < 0 || offset < 0 || pitch < 0 || lastRank < 0 ||
      size < 0 || row > pitch)
    return false;
  if (rows == 0)
    return true;
  // The end of the last row: offset + lastRank * row + (rows - 1) * pitch
  // + row.
  int64_t end = 0, rest = 0;
  return !__builtin_mul_overflow(row, lastRank, &end) &&
         !__builtin_add_overflow(end, offset, &end) &&
         !__builtin_mul_overflow(rows - 1, pitch, &rest) &&
         !__builtin_add_overflow(end, rest, &end) &&
         !__builtin_add_overflow(end, row, &end) && end <= size;
}

} // namespace fp8schema

#endif // FP8SCHEMA_COPY2DGEOMETRY_H
