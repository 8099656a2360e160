//===- HostProgramSupport.h - What fp8-build-host-program reads -*- C++ -*-===//
//
// The pieces of fp8-build-host-program (BuildHostProgram.cpp) that do not
// walk functions: size expressions built with constants folded, a
// kernel's `fp8.kernel_metadata` read as the program needs it (its
// operands, their shapes and alignments, the symbols a launch binds, the
// extents a tensor gives them), and the fp8 ops no program runs.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_LIB_TARGET_PTX_HOSTPROGRAMSUPPORT_H
#define FP8_LIB_TARGET_PTX_HOSTPROGRAMSUPPORT_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include "fp8schema/Common.h"
#include "fp8schema/Expr.h"

#include <map>
#include <string>
#include <vector>

namespace mlir::fp8::host {

using fp8schema::DType;
using fp8schema::Expr;

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

/// The expressions of `lhs op rhs` with constants folded (x + 0 = x,
/// x * 1 = x, c * x = x * c, (x * a) * b = x * (a*b), ceildiv(x, 1) = x,
/// roundup(x, 1) = x); failure when folding overflows int64 or divides by
/// less than 1.
FailureOr<Expr> addExprs(const Expr &lhs, const Expr &rhs);
FailureOr<Expr> mulExprs(const Expr &lhs, const Expr &rhs);
FailureOr<Expr> ceilDivExprs(const Expr &lhs, const Expr &rhs);
FailureOr<Expr> roundUpExprs(const Expr &lhs, const Expr &rhs);

/// `e` with each symbol that `values` names replaced by its value, folded.
FailureOr<Expr> substitute(const Expr &e,
                           const std::map<std::string, Expr> &values);

/// The bytes of a dense tensor of `shape` with `elementBytes`-byte elements.
FailureOr<Expr> byteSize(ArrayRef<Expr> shape, int64_t elementBytes);

/// Bytes per element of `dtype`.
int64_t dtypeBytes(DType dtype);

/// The element type of a memref the runtime takes (f8E4M3FN, f8E5M2,
/// f8E8M0FNU, bf16, f16, f32); failure for any other.
FailureOr<DType> getRuntimeDType(Type type);

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

/// A kernel operand as its metadata describes it.
struct KernelOperand {
  std::string name;
  DType dtype = DType::E4M3;
  std::vector<Expr> shape; // of the kernel's symbols
  bool output = false;
  bool optional = false;
  /// What the kernel needs of its address: its `alignment` (default the
  /// element size), and 16 bytes when a tensor map reads it.
  int64_t alignment = 1;
};

struct KernelDesc {
  std::string name;
  std::vector<KernelOperand> operands;
  /// The plain symbols of the operand shapes, in order: what a launch
  /// binds.
  std::vector<std::string> symbols;
};

/// The extents of a tensor of `shape` in the rank of kernel operand
/// `operand`'s layout, along which a launch binds the kernel's symbols: the
/// shape itself; without its extents of 1 (row scales `[M, 1]` as `[M]`);
/// for the MX scale-factor atoms `[ceil(R/128), ceil(C/4), 512]` (UE8M0) of
/// `[R, C]` scales, `[ceil(R/128), ...]`. Failure when none gives its rank.
FailureOr<std::vector<Expr>> getLayoutExtents(const KernelOperand &operand,
                                              const std::vector<Expr> &shape);

/// Reads the `fp8.kernel_metadata` of `kernel`; an error at the kernel when
/// it has none or it does not say what the program needs.
FailureOr<KernelDesc> readKernelDesc(gpu::GPUFuncOp kernel);

/// Reports each fp8 op in the host code of a private function (public ones
/// report their own): nothing would run it. True when there is one.
bool reportFP8OpsOutsidePrograms(ModuleOp module);

} // namespace mlir::fp8::host

#endif // FP8_LIB_TARGET_PTX_HOSTPROGRAMSUPPORT_H
