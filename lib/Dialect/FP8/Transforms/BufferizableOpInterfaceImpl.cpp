//===- BufferizableOpInterfaceImpl.cpp - fp8 ops and bufferization --------===//
//
// fp8.scaled_matmul on tensors bufferizes to its destination-passing memref
// form: it reads its operands in place and writes D (and its amax) into new
// buffers.
//
//===----------------------------------------------------------------------===//

#include "FP8/Dialect/FP8/Transforms/BufferizableOpInterfaceImpl.h"
#include "FP8/Dialect/FP8/IR/FP8Ops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace mlir::bufferization;
using namespace mlir::fp8;

/// `view` itself when it has the identity layout, else a new dense buffer
/// holding a copy of it.
static FailureOr<Value> getDenseBuffer(RewriterBase &rewriter, Location loc,
                                       Value view,
                                       const BufferizationOptions &options) {
  auto type = cast<MemRefType>(view.getType());
  if (type.getLayout().isIdentity())
    return view;
  SmallVector<Value> dynamicSizes;
  for (int64_t dim = 0; dim < type.getRank(); ++dim)
    if (type.isDynamicDim(dim))
      dynamicSizes.push_back(memref::DimOp::create(rewriter, loc, view, dim));
  auto denseType = MemRefType::get(type.getShape(), type.getElementType(),
                                   MemRefLayoutAttrInterface(),
                                   type.getMemorySpace());
  FailureOr<Value> dense =
      options.createAlloc(rewriter, loc, denseType, dynamicSizes);
  if (failed(dense) ||
      failed(options.createMemCpy(rewriter, loc, view, *dense)))
    return failure();
  return *dense;
}

namespace {
struct ScaledMatmulOpInterface
    : public BufferizableOpInterface::ExternalModel<ScaledMatmulOpInterface,
                                                    ScaledMatmulOp> {
  bool bufferizesToMemoryRead(Operation *, OpOperand &,
                              const AnalysisState &) const {
    return true;
  }
  bool bufferizesToMemoryWrite(Operation *, OpOperand &,
                               const AnalysisState &) const {
    return false;
  }
  AliasingValueList getAliasingValues(Operation *, OpOperand &,
                                      const AnalysisState &) const {
    return {};
  }
  bool bufferizesToAllocation(Operation *, Value) const { return true; }

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto matmul = cast<ScaledMatmulOp>(op);
    if (matmul.hasBufferSemantics())
      return success();
    Location loc = op->getLoc();
    // The kernels read dense row-major buffers: a tensor whose buffer is a
    // strided view is copied into one.
    auto buffer = [&](Value v) -> FailureOr<Value> {
      if (!v)
        return Value();
      FailureOr<Value> view = getBuffer(rewriter, v, options, state);
      if (failed(view))
        return failure();
      return getDenseBuffer(rewriter, loc, *view, options);
    };
    FailureOr<Value> a = buffer(matmul.getA()), b = buffer(matmul.getB()),
                     sa = buffer(matmul.getAScaleInv()),
                     sb = buffer(matmul.getBScaleInv()),
                     bias = buffer(matmul.getBias()), c = buffer(matmul.getC());
    if (failed(a) || failed(b) || failed(sa) || failed(sb) || failed(bias) ||
        failed(c))
      return failure();

    // D: a new [M, N] buffer, its dynamic extents read off A and B.
    auto resultType = cast<RankedTensorType>(matmul.getResult().getType());
    auto memrefType =
        MemRefType::get(resultType.getShape(), resultType.getElementType());
    SmallVector<Value> dynamicSizes;
    if (resultType.isDynamicDim(0))
      dynamicSizes.push_back(memref::DimOp::create(
          rewriter, loc, *a,
          matmul.getAMajor() == OperandMajor::K ? 0 : 1));
    if (resultType.isDynamicDim(1))
      dynamicSizes.push_back(memref::DimOp::create(
          rewriter, loc, *b,
          matmul.getBMajor() == OperandMajor::K ? 0 : 1));
    FailureOr<Value> out =
        options.createAlloc(rewriter, loc, memrefType, dynamicSizes);
    if (failed(out))
      return failure();

    // The amax: a new scalar buffer holding 0, which the kernel
    // max-accumulates into.
    Value amax;
    SmallVector<Value> replacements = {*out};
    if (matmul.getAmax()) {
      FailureOr<Value> alloc = options.createAlloc(
          rewriter, loc, MemRefType::get({}, rewriter.getF32Type()), {});
      if (failed(alloc))
        return failure();
      amax = *alloc;
      memref::StoreOp::create(
          rewriter, loc,
          arith::ConstantOp::create(rewriter, loc,
                                    rewriter.getF32FloatAttr(0.0f)),
          amax);
      replacements.push_back(amax);
    }

    ScaledMatmulOp::create(
        rewriter, loc, /*result=*/Type(), /*amax=*/Type(), *a, *b, *sa, *sb,
        *bias, *c, *out, amax, matmul.getAGranularity(),
        matmul.getBGranularity(), matmul.getAMajorAttr(),
        matmul.getBMajorAttr(), matmul.getAccumulation(),
        matmul.getRecipeAttr(), matmul.getConfigAttr(),
        matmul.getActivationAttr());
    replaceOpWithBufferizedValues(rewriter, op, replacements);
    return success();
  }
};
} // namespace

void mlir::fp8::registerBufferizableOpInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, FP8Dialect *) {
    ScaledMatmulOp::attachInterface<ScaledMatmulOpInterface>(*ctx);
    ctx->loadDialect<memref::MemRefDialect>();
  });
}
