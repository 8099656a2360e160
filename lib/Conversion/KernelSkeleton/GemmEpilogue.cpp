//===- GemmEpilogue.cpp - Epilogue pieces shared by the GEMMs -------------===//

#include "FP8/Conversion/KernelSkeleton/GemmEpilogue.h"
#include "FP8/Conversion/KernelSkeleton/GemmOutputQuantization.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

#include <cmath>

using namespace mlir;
using namespace mlir::fp8;

Value mlir::fp8::emitTensorScale(KernelBuilder &kb, const GemmProblem &p,
                                 Value aScaleInv, Value bScaleInv) {
  Value tensorScale;
  if (p.aScale == ScaleMode::Tensor)
    tensorScale = kb.loadF32(aScaleInv, kb.i32(0));
  if (p.bScale == ScaleMode::Tensor) {
    Value s = kb.loadF32(bScaleInv, kb.i32(0));
    tensorScale =
        tensorScale ? arith::MulFOp::create(kb.builder(), tensorScale, s) : s;
  }
  return tensorScale;
}

Value mlir::fp8::emitBiasLoad(KernelBuilder &kb, const GemmProblem &p,
                              Value bias, Value column) {
  ImplicitLocOpBuilder &b = kb.builder();
  Value x =
      kb.load(p.biasElementType,
              kb.globalElementPtr(
                  bias, column, p.biasElementType.getIntOrFloatBitWidth() / 8));
  if (p.biasElementType.isF32())
    return x;
  return arith::ExtFOp::create(b, b.getF32Type(), x);
}

Value mlir::fp8::emitRowMajorIndex(KernelBuilder &kb, Value row, Value col,
                                   int64_t n) {
  ImplicitLocOpBuilder &b = kb.builder();
  Value row64 = arith::ExtUIOp::create(b, b.getI64Type(), row);
  Value col64 = arith::ExtUIOp::create(b, b.getI64Type(), col);
  return arith::AddIOp::create(b, arith::MulIOp::create(b, row64, kb.i64(n)),
                               col64);
}

void mlir::fp8::emitAddC(KernelBuilder &kb, MutableArrayRef<Value> values,
                         Value c, Value index) {
  ImplicitLocOpBuilder &b = kb.builder();
  auto vectorType =
      VectorType::get({static_cast<int64_t>(values.size())}, b.getF32Type());
  Value cValues = kb.load(vectorType, kb.globalElementPtr(c, index, 4));
  for (size_t e = 0; e < values.size(); ++e)
    values[e] = arith::AddFOp::create(
        b, values[e], LLVM::ExtractElementOp::create(b, cValues, kb.i32(e)));
}

Value mlir::fp8::packVector(KernelBuilder &kb, ArrayRef<Value> values,
                            Type type) {
  ImplicitLocOpBuilder &b = kb.builder();
  auto f32Vector =
      VectorType::get({static_cast<int64_t>(values.size())}, b.getF32Type());
  Value vec = LLVM::UndefOp::create(b, f32Vector);
  for (auto [i, x] : llvm::enumerate(values))
    vec = LLVM::InsertElementOp::create(b, vec, x, kb.i32(i));
  if (type.isF32())
    return vec;
  return arith::TruncFOp::create(
      b, VectorType::get({static_cast<int64_t>(values.size())}, type), vec);
}

Value mlir::fp8::emitAmaxUpdate(KernelBuilder &kb, Value runningAmax, Value x,
                                Type outType, Value inBounds) {
  ImplicitLocOpBuilder &b = kb.builder();
  // The value as stored: RNE to the output type (monotonic, so the max of
  // the rounded values is the rounded max), then |.| by clearing the sign.
  if (!outType.isF32())
    x = arith::ExtFOp::create(
        b, b.getF32Type(), arith::TruncFOp::create(b, outType, x).getResult());
  Value magnitude =
      arith::BitcastOp::create(b, b.getF32Type(), kb.absF32Bits(x));
  if (inBounds)
    magnitude = arith::SelectOp::create(b, inBounds, magnitude, kb.f32(0.0f));
  return arith::MaximumFOp::create(b, runningAmax, magnitude);
}

void mlir::fp8::emitAmaxFlush(KernelBuilder &kb, Value runningAmax,
                              Value amaxPtr, Value lane) {
  ImplicitLocOpBuilder &b = kb.builder();
  Value bits = emitLaneBitsMax(
      kb, arith::BitcastOp::create(b, b.getI32Type(), runningAmax),
      {16, 8, 4, 2, 1});
  kb.ifThen(kb.eq(lane, kb.i32(0)), [&] {
    LLVM::AtomicRMWOp::create(b, LLVM::AtomicBinOp::umax, amaxPtr, bits,
                              LLVM::AtomicOrdering::monotonic);
  });
}

Value mlir::fp8::emitActivation(KernelBuilder &kb, Activation activation,
                                Value x) {
  ImplicitLocOpBuilder &b = kb.builder();
  auto mul = [&](Value u, Value v) { return arith::MulFOp::create(b, u, v); };
  auto add = [&](Value u, Value v) { return arith::AddFOp::create(b, u, v); };
  auto c = [&](double v) { return kb.f32(static_cast<float>(v)); };
  // e^t as 2^(t log2 e), PTX ex2.approx.f32 through its NVVM intrinsic (no
  // NVVM dialect op exists; convert-gpu-to-nvvm rejects llvm.intr.exp2 and
  // turns math.exp2 into a libdevice call).
  auto exp = [&](Value t) {
    return LLVM::CallIntrinsicOp::create(
               b, b.getF32Type(), b.getStringAttr("llvm.nvvm.ex2.approx.f32"),
               ValueRange{mul(t, c(M_LOG2E))})
        .getResult(0);
  };
  // x / (1 + e^t)
  auto xOverOnePlusExp = [&](Value t) {
    return arith::DivFOp::create(b, x, add(c(1.0), exp(t)));
  };
  switch (activation) {
  case Activation::SiLU:
    return xOverOnePlusExp(arith::NegFOp::create(b, x));
  case Activation::GELUTanh: {
    // u = sqrt(2/pi) (x + 0.044715 x^3); 0.5 x (1 + tanh u) = x / (1 + e^-2u).
    Value cube = mul(mul(x, x), x);
    Value u = mul(c(std::sqrt(2.0 / M_PI)), add(x, mul(c(0.044715), cube)));
    return xOverOnePlusExp(mul(c(-2.0), u));
  }
  case Activation::GELU: {
    // |x| by clearing the sign bit (llvm.intr.fabs is illegal there too).
    Value magnitude =
        arith::BitcastOp::create(b, b.getF32Type(), kb.absF32Bits(x));
    Value z = mul(magnitude, c(M_SQRT1_2));
    Value t =
        arith::DivFOp::create(b, c(1.0), add(c(1.0), mul(c(0.3275911), z)));
    Value poly = c(1.061405429);
    for (double a : {-1.453152027, 1.421413741, -0.284496736, 0.254829592})
      poly = add(mul(poly, t), c(a));
    poly = mul(poly, t);
    // erfc(z) ~= poly e^(-z^2); 1 + erf(x / sqrt 2) = erfc(z) for x < 0,
    // 2 - erfc(z) otherwise.
    Value erfc = mul(poly, exp(arith::NegFOp::create(b, mul(z, z))));
    Value negative =
        arith::CmpFOp::create(b, arith::CmpFPredicate::OLT, x, c(0.0));
    Value onePlusErf = arith::SelectOp::create(
        b, negative, erfc, arith::SubFOp::create(b, c(2.0), erfc));
    return mul(mul(c(0.5), x), onePlusErf);
  }
  }
  llvm_unreachable("unknown activation");
}
