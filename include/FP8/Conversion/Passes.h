//===- Passes.h - FP8 lowering passes ---------------------------*- C++ -*-===//

#ifndef FP8_CONVERSION_PASSES_H
#define FP8_CONVERSION_PASSES_H

#include "FP8/Dialect/FP8/IR/FP8Dialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

namespace mlir::fp8 {

#define GEN_PASS_DECL
#include "FP8/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "FP8/Conversion/Passes.h.inc"

} // namespace mlir::fp8

#endif // FP8_CONVERSION_PASSES_H
