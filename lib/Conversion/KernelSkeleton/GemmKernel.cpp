//===- GemmKernel.cpp - Target-neutral description of a GEMM kernel -------===//

#include "FP8/Conversion/KernelSkeleton/GemmKernel.h"
#include "FP8/Conversion/KernelSkeleton/GemmOutputQuantization.h"
#include "FP8/Conversion/KernelSkeleton/KernelBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Builders.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::fp8;

static FailureOr<ScaleMode> getScaleMode(Operation *op, StringRef operand,
                                         GranularityAttr g, bool isA,
                                         bool allowMX) {
  if (g.isTensor())
    return ScaleMode::Tensor;
  if (g.isRow())
    return ScaleMode::Row;
  if (g.isTile()) {
    // A: 1x128 activation tiles. B: 128x128 weight tiles ("1D x 2D") or
    // 1x128 activation-gradient tiles ("1D x 1D", the wgrad GEMM).
    TileShape rowTile{1, kBlockwiseScaleBlock};
    TileShape weightTile{kBlockwiseScaleBlock, kBlockwiseScaleBlock};
    if (isA && g.getTile() != rowTile)
      return op->emitOpError()
             << "the GEMM kernels take blockwise A scales in 1x"
             << kBlockwiseScaleBlock << " tiles, got " << g.describe();
    if (!isA && g.getTile() != rowTile && g.getTile() != weightTile)
      return op->emitOpError()
             << "the GEMM kernels take blockwise B scales in "
             << kBlockwiseScaleBlock << "x" << kBlockwiseScaleBlock << " or 1x"
             << kBlockwiseScaleBlock << " tiles, got " << g.describe();
    return ScaleMode::Blockwise;
  }
  if (allowMX) {
    if (g.getTile() != TileShape{1, kMXScaleBlock})
      return op->emitOpError()
             << "the block-scaled GEMM kernels take MX " << operand
             << " scales in 1x" << kMXScaleBlock << " blocks, got "
             << g.describe();
    return ScaleMode::MX;
  }
  return op->emitOpError() << "MXFP8 scales need the block-scaled MMA of "
                             "sm_100a (run fp8-verify-target first)";
}

/// What the dense and the grouped GEMMs share: N, K, the element types, the
/// scale modes and the accumulation.
static LogicalResult getGemmBasics(Operation *op, GemmProblem &p, Type a,
                                   Type b, Type out, GranularityAttr ga,
                                   GranularityAttr gb,
                                   Accumulation accumulation,
                                   bool allowMXScales) {
  if (p.isKGrouped()) {
    // K is the run-time columns of all groups (the kernel's `k`).
    if (ShapedType::isDynamic(p.n) || p.n % 16 != 0)
      return op->emitOpError()
             << "expected a static N, a multiple of 16 (one k_grouped kernel "
                "is built per N; M and K may be dynamic), got N = "
             << (ShapedType::isDynamic(p.n) ? std::string("?")
                                            : std::to_string(p.n));
  } else if (ShapedType::isDynamic(p.n) || ShapedType::isDynamic(p.k))
    return op->emitOpError() << "expected static N and K (one kernel is built "
                                "per N and K; M may be dynamic)";
  // TMA needs 16-byte row strides: K bytes for the FP8 operands. The
  // epilogue's paired stores need even N; 16 keeps every output row
  // 16-byte aligned for any output type.
  if (!p.isKGrouped() && (p.k % 16 != 0 || p.n % 16 != 0))
    return op->emitOpError() << "expected N and K to be multiples of 16 (TMA "
                                "needs 16-byte aligned row strides), got N = "
                             << p.n << ", K = " << p.k
                             << ": pad A and B with zeros along K, and B (and "
                                "D) along N, to the next multiple of 16";
  p.aElementType = a;
  p.bElementType = b;
  p.outElementType = out;

  FailureOr<ScaleMode> aScale =
      getScaleMode(op, "A", ga, /*isA=*/true, allowMXScales);
  if (failed(aScale))
    return failure();
  FailureOr<ScaleMode> bScale =
      getScaleMode(op, "B", gb, /*isA=*/false, allowMXScales);
  if (failed(bScale))
    return failure();
  p.aScale = *aScale;
  p.bScale = *bScale;
  if (p.bScale == ScaleMode::Blockwise)
    p.bScaleBlockRows = gb.getTile().rows;

  p.promoteInterval = accumulation.promoteInterval;
  if (!accumulation.isFast() && p.promoteInterval != kBlockwiseScaleBlock)
    return op->emitOpError()
           << "the GEMM kernels promote every " << kBlockwiseScaleBlock
           << " K elements: expected accumulation fast or promoted("
           << kBlockwiseScaleBlock << "), got promoted(" << p.promoteInterval
           << ")";
  return success();
}

static Type getElementType(Value v) {
  return cast<ShapedType>(v.getType()).getElementType();
}

/// The epilogue's quantization of an FP8 D; or, when it is lowered in two
/// phases, the first phase's GEMM: f32 D, with its amax for per-tensor
/// current scaling.
static void getOutputQuantization(ScaledMatmulOp op, GemmProblem &p,
                                  bool epilogueQuantizes) {
  GranularityAttr g = op.getResultGranularityAttr();
  if (!epilogueQuantizes || needsTwoPhaseFP8Result(op)) {
    p.outElementType = Float32Type::get(op.getContext());
    p.outputAmax = g.isTensor() && !op.getResultScale();
    return;
  }
  setEpilogueQuantization(p, op.getResultRecipeAttr(), g);
}

FailureOr<GemmProblem> GemmProblem::get(ScaledMatmulOp op, bool allowMXScales,
                                        bool epilogueQuantizes) {
  GemmProblem p;
  p.n = op.getN();
  p.k = op.getK();
  p.staticM = op.getM();
  if (failed(getGemmBasics(op, p, getElementType(op.getA()),
                           getElementType(op.getB()),
                           op.getOutputType().getElementType(),
                           op.getAGranularity(), op.getBGranularity(),
                           op.getAccumulation().getMode(), allowMXScales)))
    return failure();
  if (Value bias = op.getBias())
    p.biasElementType = cast<ShapedType>(bias.getType()).getElementType();
  p.accumulateIntoC = static_cast<bool>(op.getC());
  p.activation = op.getActivation();
  if (op.hasFP8Result())
    getOutputQuantization(op, p, epilogueQuantizes);
  p.outputAmax |= op.getAmax() || op.getAmaxOut();
  if (p.outputAmax && p.accumulateIntoC)
    return op.emitOpError() << "the GEMM kernels compute the output amax "
                               "without accumulate_into (C is added at the "
                               "store)";
  return p;
}

FailureOr<GemmProblem> GemmProblem::get(GroupedScaledMatmulOp op,
                                        bool allowMXScales) {
  GemmProblem p;
  p.n = op.getN();
  p.k = op.getK();
  p.staticM = op.getM();
  p.numGroups = op.getNumGroups();
  p.groupLayout = op.getLayout();
  if (ShapedType::isDynamic(p.numGroups))
    return op.emitOpError() << "expected a static group count G (B is [G, N, "
                               "K]; one kernel is built per G, N and K)";
  // k_grouped: the kernel takes K at run time.
  if (p.isKGrouped())
    p.k = 0;
  if (failed(getGemmBasics(op, p, getElementType(op.getA()),
                           getElementType(op.getB()),
                           getElementType(op.getResult()),
                           op.getAGranularity(), op.getBGranularity(),
                           op.getAccumulation().getMode(), allowMXScales)))
    return failure();
  if (!op.hasFP8Result())
    return p;
  // No two phases: an f32 D would leave the rows the layout does not
  // write (padding, past each count) for the quantization to read.
  RecipeAttrInterface recipe = op.getResultRecipeAttr();
  GranularityAttr g = op.getResultGranularityAttr();
  if (needsTwoPhases(recipe, g, static_cast<bool>(op.getResultScale()))) {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << recipe;
    return op.emitOpError()
           << "the grouped GEMM kernels quantize an FP8 result per tensor "
              "with a given result_scale or in 1x"
           << kBlockwiseScaleBlock << " blocks along N (#fp8.blockwise), got "
           << text << " at " << g.describe()
           << ", whose scales reduce over more than one tile: produce an f32 "
              "result and quantize the rows of each group";
  }
  setEpilogueQuantization(p, recipe, g);
  return p;
}

static StringRef getRecipeName(const GemmProblem &p) {
  if (p.hasBlockwiseColumnScales())
    return "blockwise_1d1d";
  if (p.isBlockwise())
    return "blockwise";
  if (p.isMX())
    return "mxfp8";
  if (p.aScale == ScaleMode::Row || p.bScale == ScaleMode::Row)
    return "rowwise";
  return "tensorwise";
}

std::string mlir::fp8::getGemmKernelName(const GemmProblem &p,
                                         const GemmTiling &t) {
  std::string name = llvm::formatv(
      "fp8_{10}gemm_{0}_{1}_{2}_{3}_n{4}_k{5}_t{6}x{7}x{8}_s{9}",
      getRecipeName(p),
      getKernelDTypeName(p.aElementType), getKernelDTypeName(p.bElementType),
      getKernelDTypeName(p.outElementType), p.n,
      p.isKGrouped() ? std::string("dyn") : std::to_string(p.k), t.tileM,
      t.tileN, t.tileK, t.stages,
      p.isMasked()     ? "grouped_masked_"
      : p.isKGrouped() ? "grouped_k_"
      : p.isGrouped()  ? "grouped_"
                       : "");
  if (p.isGrouped())
    name += llvm::formatv("_g{0}", p.numGroups).str();
  if (t.clusterM * t.clusterN > 1)
    name += llvm::formatv("_c{0}x{1}", t.clusterM, t.clusterN).str();
  if (t.streamK)
    name += "_sk";
  if (t.swapAB)
    name += t.splitK > 1 ? llvm::formatv("_swapab_ks{0}", t.splitK).str()
                         : std::string("_swapab");
  if (t.promotionParts)
    name += llvm::formatv("_p{0}", t.promotionParts).str();
  if (t.pingPong)
    name += "_pp";
  if (p.aScale != p.bScale)
    name += "_a" + std::string(p.aScale == ScaleMode::Row ? "row" : "tensor");
  if (p.promoteInterval == 0)
    name += "_fast";
  if (p.biasElementType)
    name += "_bias";
  if (p.accumulateIntoC)
    name += "_acc";
  if (p.activation)
    name += "_" + stringifyActivation(*p.activation).str();
  if (p.outputAmax)
    name += "_amax";
  if (p.outQuantization == OutputQuantization::Tensor)
    name += "_qtensor";
  else if (p.outQuantization == OutputQuantization::Block1x128)
    name += p.outScalePow2 ? "_q1x128" : "_q1x128f32";
  return name;
}

GemmTiling mlir::fp8::getGemmTiling(GemmConfigAttr config, int64_t outputBytes,
                                    bool canStageOutput, bool narrowBoxes) {
  GemmTiling t;
  t.outputBytes = outputBytes;
  t.narrowStoreBoxes = narrowBoxes;
  t.tileM = config.getTile().m;
  t.tileN = config.getTile().n;
  t.tileK = config.getTile().k;
  t.stages = config.getStages();
  t.clusterM = config.getCluster().rows;
  t.clusterN = config.getCluster().cols;
  t.rasterGroup = config.getRasterGroup();
  t.promotionParts = config.getPromotionParts();
  t.pingPong = config.getPingPong() && config.getPingPong().getValue();
  t.tmaStoreEpilogue = canStageOutput && t.tileN % t.storeBoxColumns() == 0;
  return t;
}

SmallVector<int32_t> mlir::fp8::getGridConstantParams(const GemmTiling &t) {
  SmallVector<int32_t> params = {0, 1};
  if (t.storesWithTma())
    params.push_back(2);
  if (t.scaleTensorMaps)
    params.append({3, 4});
  return params;
}

gpu::GPUFuncOp mlir::fp8::createGemmKernelFunc(
    OpBuilder &b, Location loc, StringRef name, const GemmProblem &p,
    const GemmTiling &t, int64_t numThreads, GemmKernelParams &params) {
  MLIRContext *ctx = b.getContext();
  Type generic = LLVM::LLVMPointerType::get(ctx);
  Type global = LLVM::LLVMPointerType::get(
      ctx, static_cast<unsigned>(AddressSpace::Global));
  // Scale parameters are by-value tensor maps (generic pointers to them)
  // when the kernel reads the scales with TMA.
  Type scale = t.scaleTensorMaps ? generic : global;
  SmallVector<Type> argTypes = {generic, generic,
                                t.storesWithTma() ? generic : global, scale,
                                scale};
  if (p.biasElementType)
    argTypes.push_back(global);
  if (p.accumulateIntoC)
    argTypes.push_back(global);
  if (accumulatesThroughStaging(p, t))
    argTypes.push_back(global);
  if (p.outputAmax)
    argTypes.push_back(global);
  if (p.isGrouped())
    argTypes.push_back(global);
  if (p.outQuantization == OutputQuantization::Tensor)
    argTypes.push_back(global);
  if (p.hasFP8Output())
    argTypes.push_back(global);
  argTypes.push_back(b.getI32Type());
  if (p.isKGrouped())
    argTypes.push_back(b.getI32Type());
  if (t.workspaceBytesPerCta)
    argTypes.push_back(global);

  auto func = gpu::GPUFuncOp::create(b, loc, name,
                                     b.getFunctionType(argTypes, {}));
  func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  // A register cap at entry lets setmaxnreg move registers between warp
  // roles (one CTA per SM).
  func->setAttr(NVVM::NVVMDialect::getMaxntidAttrName(),
                b.getDenseI32ArrayAttr({static_cast<int32_t>(numThreads), 1, 1}));
  func->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                b.getI32IntegerAttr(1));
  if (t.clusterCtas() > 1)
    func->setAttr(NVVM::NVVMDialect::getClusterDimAttrName(),
                  b.getDenseI32ArrayAttr(
                      {static_cast<int32_t>(t.clusterCtas()), 1, 1}));

  Block &entry = func.getBody().front();
  b.setInsertionPointToStart(&entry);
  unsigned arg = 0;
  params = GemmKernelParams{};
  params.tmaA = entry.getArgument(arg++);
  params.tmaB = entry.getArgument(arg++);
  (t.storesWithTma() ? params.tmaD : params.d) = entry.getArgument(arg++);
  params.aScaleInv = entry.getArgument(arg++);
  params.bScaleInv = entry.getArgument(arg++);
  if (p.biasElementType)
    params.bias = entry.getArgument(arg++);
  if (p.accumulateIntoC)
    params.c = entry.getArgument(arg++);
  if (accumulatesThroughStaging(p, t))
    params.d = entry.getArgument(arg++);
  if (p.outputAmax)
    params.amax = entry.getArgument(arg++);
  if (p.isGrouped())
    params.groupIndex = entry.getArgument(arg++);
  if (p.outQuantization == OutputQuantization::Tensor)
    params.resultScale = entry.getArgument(arg++);
  if (p.hasFP8Output())
    params.resultScaleInv = entry.getArgument(arg++);
  params.m = entry.getArgument(arg++);
  if (p.isKGrouped())
    params.k = entry.getArgument(arg++);
  if (t.workspaceBytesPerCta)
    params.workspace = entry.getArgument(arg++);
  return func;
}
