//===- FP8Contract.h - Limits every fp8 op is checked against ---*- C++ -*-===//
//
// The chip-independent part of the input contract (docs/contract.md): the
// extent, element-count and parameter limits that the op and attribute
// verifiers enforce, and the overflow-free shape arithmetic they (and the
// lowerings) compute scale shapes and sizes with. Every limit here has a
// hardware, PTX, TMA or kernel-ABI reason, given beside it.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_DIALECT_FP8_IR_FP8CONTRACT_H
#define FP8_DIALECT_FP8_IR_FP8CONTRACT_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <optional>
#include <string>

namespace mlir::fp8::contract {

/// The largest extent of a tensor dimension, a tile, a promotion interval:
/// the kernels take run-time extents (`m`, `r`) as i32 parameters and
/// index rows and tiles with 32-bit integers, and TMA's global dimensions
/// stop at 2^32. Every row stride the kernels use is then below 2^33 bytes
/// (f32 rows of 2^31 - 1 elements), under TMA's 2^40 stride limit.
inline constexpr int64_t kMaxExtent = (int64_t(1) << 31) - 1;
inline constexpr llvm::StringLiteral kMaxExtentText = "2^31 - 1 = 2147483647";

/// The most elements of a tensor the kernels index with 32-bit element
/// offsets (scale tensors, the operands of a quantization kernel).
inline constexpr int64_t kMaxIndexedElements = kMaxExtent;

/// TMA (cuTensorMapEncodeTiled): global strides are multiples of 16 bytes.
inline constexpr int64_t kTmaStrideAlignment = 16;

/// `a` rounded up to a multiple of `b` (a >= 0, b > 0), or nullopt when
/// that does not fit an int64_t.
std::optional<int64_t> roundUp(int64_t a, int64_t b);

/// The product of the extents of `shape` (static ones only; a dynamic
/// extent gives nullopt), or nullopt when it does not fit an int64_t.
std::optional<int64_t> getNumElements(ArrayRef<int64_t> shape);

/// `[4096, ?, 56]`
std::string formatShape(ArrayRef<int64_t> shape);

/// A value and how a diagnostic names it: the operand as the user wrote it
/// (`A`, `input`, `grad_output`) and the op's names for its dimensions
/// (`M`, `K`; empty: "dimension i").
struct NamedValue {
  Value value;
  std::string name;
  SmallVector<std::string, 2> dims;
};

/// The name of dimension `dim` of `v`: its op's name, or "dimension i".
std::string getDimensionName(const NamedValue &v, unsigned dim);

/// Checks every static extent of `v` (a ranked tensor or memref) against
/// [1, kMaxExtent] and its element count against int64_t; emits an error
/// on `op` naming the dimension, the operand and the limit.
LogicalResult verifyExtents(Operation *op, const NamedValue &v);

/// An error on `op` when `v` is an unranked tensor or memref, or a tensor
/// with an encoding (the kernels read dense tensors).
LogicalResult verifyRanked(Operation *op, const NamedValue &v);

} // namespace mlir::fp8::contract

#endif // FP8_DIALECT_FP8_IR_FP8CONTRACT_H
