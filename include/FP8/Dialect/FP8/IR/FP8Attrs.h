//===- FP8Attrs.h - FP8 dialect attributes ----------------------*- C++ -*-===//

#ifndef FP8_DIALECT_FP8_IR_FP8ATTRS_H
#define FP8_DIALECT_FP8_IR_FP8ATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/Hashing.h"

#include "FP8/Dialect/FP8/IR/FP8Enums.h.inc"

namespace mlir::fp8 {

/// K-extent at which a GEMM moves its partial sums into an f32 accumulator;
/// 0 means `fast` (never).
struct Accumulation {
  int64_t promoteInterval = 0;

  static Accumulation fast() { return {0}; }
  static Accumulation promoted(int64_t interval) { return {interval}; }
  bool isFast() const { return promoteInterval == 0; }
  bool operator==(const Accumulation &o) const {
    return promoteInterval == o.promoteInterval;
  }
};
inline llvm::hash_code hash_value(const Accumulation &a) {
  return llvm::hash_value(a.promoteInterval);
}
FailureOr<Accumulation> parseAccumulation(AsmParser &parser);
void printAccumulation(AsmPrinter &printer, const Accumulation &a);

/// A rows x cols block of a 2-D tensor.
struct TileShape {
  int64_t rows = 0;
  int64_t cols = 0;
  bool operator==(const TileShape &o) const {
    return rows == o.rows && cols == o.cols;
  }
  bool operator!=(const TileShape &o) const { return !(*this == o); }
};
inline llvm::hash_code hash_value(const TileShape &t) {
  return llvm::hash_combine(t.rows, t.cols);
}
FailureOr<TileShape> parseTileShape(AsmParser &parser);
void printTileShape(AsmPrinter &printer, const TileShape &t);

/// The DeepSeek-V3 block of #fp8.blockwise, its default tiles (1x128
/// activations, 128x128 weights) and the only tiles the GEMM kernels take:
/// the K extent of every blockwise scale and the N extent of B's (1x128 on
/// B too: the "1D x 1D" wgrad GEMM).
inline constexpr int64_t kBlockwiseScaleBlock = 128;

/// The output tile and K step of a GEMM kernel.
struct GemmTileShape {
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  bool operator==(const GemmTileShape &o) const {
    return m == o.m && n == o.n && k == o.k;
  }
};
inline llvm::hash_code hash_value(const GemmTileShape &t) {
  return llvm::hash_combine(t.m, t.n, t.k);
}
FailureOr<GemmTileShape> parseGemmTileShape(AsmParser &parser);
void printGemmTileShape(AsmPrinter &printer, const GemmTileShape &t);

FailureOr<llvm::APFloat> parseF32(AsmParser &parser);
void printF32(AsmPrinter &printer, const llvm::APFloat &value);

class GranularityAttr;

} // namespace mlir::fp8

#include "FP8/Dialect/FP8/IR/FP8AttrInterfaces.h.inc"

#define GET_ATTRDEF_CLASSES
#include "FP8/Dialect/FP8/IR/FP8Attrs.h.inc"

#endif // FP8_DIALECT_FP8_IR_FP8ATTRS_H
