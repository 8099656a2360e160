//===- BufferizableOpInterfaceImpl.cpp - fp8 ops and bufferization --------===//
//
// fp8.scaled_matmul on tensors bufferizes to its destination-passing memref
// form: it reads its operands in place and writes D (and its amax) into new
// buffers. fp8.launch becomes a call of its launcher on the operands'
// buffers, its outputs written in place where the analysis allows it (also
// into an input's buffer where the launcher says the kernel may update that
// input in place, `fp8.in_place_of`).
//
//===----------------------------------------------------------------------===//

#include "FP8/Dialect/FP8/Transforms/BufferizableOpInterfaceImpl.h"
#include "FP8/Dialect/FP8/IR/FP8Ops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
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
    // The destination-passing form writes bf16, f16 or f32 D only; an FP8
    // D is lowered to a kernel launch on tensors (fp8-lower-scaled-matmul).
    if (matmul.hasFP8Result())
      return op->emitOpError()
             << "an FP8 result has no buffer form: run fp8-lower-scaled-matmul "
                "before bufferization";
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

    // The amax: a new scalar buffer filled with 0, which the kernel
    // max-accumulates into.
    Value amax;
    SmallVector<Value> replacements = {*out};
    if (matmul.getAmax()) {
      FailureOr<Value> alloc = options.createAlloc(
          rewriter, loc, MemRefType::get({}, rewriter.getF32Type()), {});
      if (failed(alloc))
        return failure();
      amax = *alloc;
      linalg::FillOp::create(
          rewriter, loc,
          ValueRange{arith::ConstantOp::create(
              rewriter, loc, rewriter.getF32FloatAttr(0.0f))},
          ValueRange{amax});
      replacements.push_back(amax);
    }

    ScaledMatmulOp::create(
        rewriter, loc, /*result=*/Type(), /*result_scale_inv=*/Type(),
        /*amax=*/Type(), *a, *b, *sa, *sb, *bias, *c, /*result_scale=*/Value(),
        *out, amax, matmul.getAGranularity(), matmul.getBGranularity(),
        matmul.getAMajorAttr(), matmul.getBMajorAttr(),
        matmul.getAccumulation(), matmul.getRecipeAttr(),
        matmul.getConfigAttr(), matmul.getActivationAttr(),
        /*result_recipe=*/RecipeAttrInterface(),
        /*result_granularity=*/GranularityAttr());
    replaceOpWithBufferizedValues(rewriter, op, replacements);
    return success();
  }
};

/// fp8.launch: reads every operand the launcher reads, writes its outputs
/// (each aliasing its result), and becomes a func.call of the launcher.
struct LaunchOpInterface
    : public BufferizableOpInterface::ExternalModel<LaunchOpInterface,
                                                    LaunchOp> {
  static FunctionOpInterface getLauncher(LaunchOp op) {
    return SymbolTable::lookupNearestSymbolFrom<FunctionOpInterface>(
        op, op.getLauncherAttr());
  }

  bool bufferizesToMemoryRead(Operation *op, OpOperand &operand,
                              const AnalysisState &) const {
    auto launch = cast<LaunchOp>(op);
    unsigned index = operand.getOperandNumber();
    if (launch.getOutputPosition(index) < 0)
      return true;
    // An output is read when the kernel reads its initial value
    // (read-write), e.g. an amax it max-accumulates into.
    FunctionOpInterface launcher = getLauncher(launch);
    auto access = launcher ? launcher.getArgAttrOfType<StringAttr>(
                                 index, BufferizationDialect::kBufferAccessAttrName)
                           : StringAttr();
    return !access || access.getValue() != "write";
  }
  bool bufferizesToMemoryWrite(Operation *op, OpOperand &operand,
                               const AnalysisState &) const {
    return cast<LaunchOp>(op).getOutputPosition(operand.getOperandNumber()) >=
           0;
  }
  AliasingValueList getAliasingValues(Operation *op, OpOperand &operand,
                                      const AnalysisState &) const {
    int64_t position =
        cast<LaunchOp>(op).getOutputPosition(operand.getOperandNumber());
    if (position < 0)
      return {};
    return {{op->getResult(position), BufferRelation::Equivalent}};
  }

  /// An output whose launcher argument carries `fp8.in_place_of` (a GEMM
  /// adding into C where D is C's memory) reads each element of that input
  /// before it writes it: the pair may share a buffer.
  bool bufferizesToElementwiseAccess(Operation *op, const AnalysisState &,
                                     ArrayRef<OpOperand *> operands) const {
    FunctionOpInterface launcher = getLauncher(cast<LaunchOp>(op));
    if (!launcher || operands.empty())
      return false;
    for (OpOperand *output : operands) {
      auto input = launcher.getArgAttrOfType<IntegerAttr>(
          output->getOperandNumber(), kInPlaceOfAttrName);
      if (input && llvm::all_of(operands, [&](OpOperand *operand) {
            return operand == output ||
                   operand->getOperandNumber() == input.getInt();
          }))
        return true;
    }
    return false;
  }

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto launch = cast<LaunchOp>(op);
    FunctionOpInterface launcher = getLauncher(launch);
    if (!launcher)
      return op->emitOpError() << "launcher '" << launch.getLauncher()
                               << "' not found";
    ArrayRef<Type> argTypes = launcher.getArgumentTypes();
    SmallVector<Value> buffers;
    for (OpOperand &operand : op->getOpOperands()) {
      FailureOr<Value> buffer =
          getBuffer(rewriter, operand.get(), options, state);
      if (failed(buffer))
        return failure();
      // The kernels take dense row-major buffers: a view (a subview, a
      // layout from a function boundary) would need a copy first.
      unsigned index = operand.getOperandNumber();
      if (buffer->getType() != argTypes[index])
        return op->emitOpError()
               << "operand " << index << " bufferizes to "
               << buffer->getType() << ", but the kernel takes a dense "
               << argTypes[index];
      buffers.push_back(*buffer);
    }
    func::CallOp::create(rewriter, op->getLoc(), launch.getLauncher(),
                         TypeRange(), buffers);
    SmallVector<Value> results;
    for (int64_t index : launch.getOutputs())
      results.push_back(buffers[index]);
    replaceOpWithBufferizedValues(rewriter, op, results);
    return success();
  }
};
} // namespace

void mlir::fp8::registerBufferizableOpInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, FP8Dialect *) {
    ScaledMatmulOp::attachInterface<ScaledMatmulOpInterface>(*ctx);
    LaunchOp::attachInterface<LaunchOpInterface>(*ctx);
    ctx->loadDialect<func::FuncDialect, linalg::LinalgDialect,
                     memref::MemRefDialect>();
  });
}
