//===- Copy2DGeometryTest.cpp - The strided copy's bounds rule -----------===//
//
// fp8schema::copy2dFits is the one bounds rule of a copy2d step, checked by
// fp8-build-host-program (in elements) and by the runtime (in bytes).
//
//===----------------------------------------------------------------------===//

#include "fp8schema/Copy2DGeometry.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

using fp8schema::copy2dFits;

namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

struct Case {
  const char *what;
  int64_t rows, row, offset, pitch, lastRank, size;
  bool fits;
};

// Units are whatever the caller counts in (elements or bytes).
const Case kCases[] = {
    // 4 rows of 4 out of a 4x8 buffer: the last row ends at 3 * 8 + 4 = 28.
    {"rows inside", 4, 4, 0, 8, 0, 32, true},
    {"last row ends at the end", 4, 4, 4, 8, 0, 32, true},
    {"contiguous rows", 4, 4, 0, 4, 0, 16, true},
    {"one full row", 1, 32, 0, 32, 0, 32, true},
    {"one row too many", 5, 4, 0, 8, 0, 32, false},
    {"offset one too far", 4, 4, 5, 8, 0, 32, false},
    {"buffer one too small", 4, 4, 0, 8, 0, 27, false},
    {"rows overlap", 2, 8, 0, 4, 0, 64, false},
    {"empty rows overlap", 0, 8, 0, 4, 0, 64, false},
    // A slice of 4 ranks: rank r starts at offset + r * row, so the last
    // rank's rows end at 3 * 2 + (4 - 1) * 8 + 2 = 32.
    {"last rank inside", 4, 2, 0, 8, 3, 32, true},
    {"last rank one too far", 4, 2, 1, 8, 3, 32, false},
    {"one rank too many", 4, 2, 0, 8, 4, 32, false},
    {"empty copy", 0, 4, 0, 8, 0, 0, true},
    {"empty copy at any offset", 0, 4, kMax, 8, 0, 0, true},
    {"negative rows", -1, 4, 0, 8, 0, 32, false},
    {"negative row", 4, -1, 0, 8, 0, 32, false},
    {"negative offset", 4, 4, -8, 8, 0, 32, false},
    {"negative pitch", 4, 4, 0, -8, 0, 32, false},
    {"negative rank", 4, 4, 0, 8, -1, 32, false},
    {"negative size", 4, 4, 0, 8, 0, -1, false},
    // Each step of the end's computation overflows once; none may wrap into
    // a small end that would pass.
    {"rank * row overflows", 2, kMax / 2 + 1, 0, kMax, 2, kMax, false},
    {"offset + row overflows", 1, 1, kMax, 1, 0, kMax, false},
    {"rows * pitch overflows", 3, 1, 0, kMax / 2 + 1, 0, kMax, false},
    {"offset + rows * pitch overflows", 2, 1, 1, kMax - 1, 0, kMax, false},
    {"the last row's end overflows", 2, 2, 0, kMax - 1, 0, kMax, false},
    {"the last row ends at INT64_MAX", 2, 1, 0, kMax - 1, 0, kMax, true},
};

TEST(Copy2DGeometry, Cases) {
  for (const Case &c : kCases)
    EXPECT_EQ(copy2dFits(c.rows, c.row, c.offset, c.pitch, c.lastRank,
                         c.size),
              c.fits)
        << c.what;
}

} // namespace
