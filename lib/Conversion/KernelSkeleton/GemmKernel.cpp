//===- GemmKernel.cpp - Target-neutral description of a GEMM kernel -------===//

#include "FP8/Conversion/KernelSkeleton/GemmKernel.h"
#include "FP8/Conversion/KernelSkeleton/KernelBuilder.h"
#include "FP8/Conversion/KernelSkeleton/KernelMetadata.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Builders.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::fp8;

static constexpr int64_t kScaleBlock = kBlockwiseScaleBlock;
/// Symbol of ceil(M / 128), the MX A scale tensor's atom rows (the runtime
/// schema has symbols, not expressions: the caller's scale shape binds it).
static constexpr llvm::StringLiteral kMXAtomRowsSymbol = "M_ATOMS";

static FailureOr<ScaleMode> getScaleMode(ScaledMatmulOp op, StringRef operand,
                                         GranularityAttr g, bool isA,
                                         bool allowMX) {
  if (g.isTensor())
    return ScaleMode::Tensor;
  if (g.isRow())
    return ScaleMode::Row;
  if (g.isTile()) {
    // A: 1x128 activation tiles. B: 128x128 weight tiles ("1D x 2D") or
    // 1x128 activation-gradient tiles ("1D x 1D", the wgrad GEMM).
    TileShape rowTile{1, kScaleBlock};
    TileShape weightTile{kScaleBlock, kScaleBlock};
    if (isA && g.getTile() != rowTile)
      return op.emitOpError()
             << "the GEMM kernels take blockwise A scales in 1x" << kScaleBlock
             << " tiles, got " << g.describe();
    if (!isA && g.getTile() != rowTile && g.getTile() != weightTile)
      return op.emitOpError()
             << "the GEMM kernels take blockwise B scales in " << kScaleBlock
             << "x" << kScaleBlock << " or 1x" << kScaleBlock
             << " tiles, got " << g.describe();
    return ScaleMode::Blockwise;
  }
  if (allowMX) {
    if (g.getTile() != TileShape{1, kMXScaleBlock})
      return op.emitOpError()
             << "the block-scaled GEMM kernels take MX " << operand
             << " scales in 1x" << kMXScaleBlock << " blocks, got "
             << g.describe();
    return ScaleMode::MX;
  }
  return op.emitOpError() << "MXFP8 scales need the block-scaled MMA of "
                             "sm_100a (run fp8-verify-target first)";
}

FailureOr<GemmProblem> GemmProblem::get(ScaledMatmulOp op,
                                        bool allowMXScales) {
  GemmProblem p;
  p.n = op.getN();
  p.k = op.getK();
  p.staticM = op.getM();
  if (ShapedType::isDynamic(p.n) || ShapedType::isDynamic(p.k))
    return op.emitOpError() << "expected static N and K (one kernel is built "
                               "per N and K; M may be dynamic)";
  // TMA needs 16-byte row strides: K bytes for the FP8 operands. The
  // epilogue's paired stores need even N; 16 keeps every output row
  // 16-byte aligned for any output type.
  if (p.k % 16 != 0 || p.n % 16 != 0)
    return op.emitOpError() << "expected N and K to be multiples of 16 (TMA "
                               "needs 16-byte aligned row strides), got N = "
                            << p.n << ", K = " << p.k
                            << ": pad A and B with zeros along K, and B (and "
                               "D) along N, to the next multiple of 16";
  p.aElementType = cast<ShapedType>(op.getA().getType()).getElementType();
  p.bElementType = cast<ShapedType>(op.getB().getType()).getElementType();
  p.outElementType = op.getOutputType().getElementType();

  FailureOr<ScaleMode> aScale =
      getScaleMode(op, "A", op.getAGranularity(), /*isA=*/true, allowMXScales);
  if (failed(aScale))
    return failure();
  FailureOr<ScaleMode> bScale =
      getScaleMode(op, "B", op.getBGranularity(), /*isA=*/false, allowMXScales);
  if (failed(bScale))
    return failure();
  p.aScale = *aScale;
  p.bScale = *bScale;
  if (p.bScale == ScaleMode::Blockwise)
    p.bScaleBlockRows = op.getBGranularity().getTile().rows;

  Accumulation accumulation = op.getAccumulation().getMode();
  p.promoteInterval = accumulation.promoteInterval;
  if (!accumulation.isFast() && p.promoteInterval != kScaleBlock)
    return op.emitOpError() << "the GEMM kernels promote every " << kScaleBlock
                            << " K elements: expected accumulation fast or "
                               "promoted("
                            << kScaleBlock << "), got promoted("
                            << p.promoteInterval << ")";
  if (Value bias = op.getBias())
    p.biasElementType = cast<ShapedType>(bias.getType()).getElementType();
  p.accumulateIntoC = static_cast<bool>(op.getC());
  p.activation = op.getActivation();
  p.outputAmax = op.getAmax() || op.getAmaxOut();
  if (p.outputAmax && p.accumulateIntoC)
    return op.emitOpError() << "the GEMM kernels compute the output amax "
                               "without accumulate_into (C is added at the "
                               "store)";
  return p;
}

Value mlir::fp8::emitAmaxUpdate(KernelBuilder &kb, Value runningAmax, Value x,
                                Type outType, Value inBounds) {
  ImplicitLocOpBuilder &b = kb.builder();
  // The value as stored: RNE to the output type (monotonic, so the max of
  // the rounded values is the rounded max), then |.| by clearing the sign.
  if (!outType.isF32())
    x = arith::ExtFOp::create(b, b.getF32Type(),
                              arith::TruncFOp::create(b, outType, x).getResult());
  Value magnitude =
      arith::BitcastOp::create(b, b.getF32Type(), kb.absF32Bits(x));
  if (inBounds)
    magnitude = arith::SelectOp::create(b, inBounds, magnitude, kb.f32(0.0f));
  return arith::MaximumFOp::create(b, runningAmax, magnitude);
}

void mlir::fp8::emitAmaxFlush(KernelBuilder &kb, Value runningAmax,
                              Value amaxPtr, Value lane) {
  ImplicitLocOpBuilder &b = kb.builder();
  Value bits = arith::BitcastOp::create(b, b.getI32Type(), runningAmax);
  Value allLanes = kb.i32(-1);
  for (int64_t offset = 16; offset >= 1; offset /= 2) {
    Value other = NVVM::ShflOp::create(b, b.getI32Type(), allLanes, bits,
                                       kb.i32(offset), kb.i32(31),
                                       NVVM::ShflKind::bfly,
                                       /*return_value_and_is_valid=*/nullptr);
    bits = arith::MaxUIOp::create(b, bits, other);
  }
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
    Value t = arith::DivFOp::create(b, c(1.0), add(c(1.0), mul(c(0.3275911), z)));
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
      "fp8_gemm_{0}_{1}_{2}_{3}_n{4}_k{5}_t{6}x{7}x{8}_s{9}", getRecipeName(p),
      getKernelDTypeName(p.aElementType), getKernelDTypeName(p.bElementType),
      getKernelDTypeName(p.outElementType), p.n, p.k, t.tileM, t.tileN, t.tileK,
      t.stages);
  if (t.clusterM * t.clusterN > 1)
    name += llvm::formatv("_c{0}x{1}", t.clusterM, t.clusterN).str();
  if (t.streamK)
    name += "_sk";
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
  return name;
}

GemmTiling mlir::fp8::getGemmTiling(GemmConfigAttr config, int64_t outputBytes,
                                    bool canStageOutput) {
  GemmTiling t;
  t.outputBytes = outputBytes;
  t.tileM = config.getTile().m;
  t.tileN = config.getTile().n;
  t.tileK = config.getTile().k;
  t.stages = config.getStages();
  t.clusterM = config.getCluster().rows;
  t.clusterN = config.getCluster().cols;
  t.rasterGroup = config.getRasterGroup();
  t.tmaStoreEpilogue = canStageOutput && t.tileN % t.storeBoxColumns() == 0;
  return t;
}

SmallVector<int32_t> mlir::fp8::getGridConstantParams(const GemmTiling &t) {
  SmallVector<int32_t> params = {0, 1};
  if (t.tmaStoreEpilogue)
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
                                t.tmaStoreEpilogue ? generic : global, scale,
                                scale};
  if (p.biasElementType)
    argTypes.push_back(global);
  if (p.accumulateIntoC)
    argTypes.push_back(global);
  if (p.outputAmax)
    argTypes.push_back(global);
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
  if (t.clusterM > 1)
    func->setAttr(NVVM::NVVMDialect::getClusterDimAttrName(),
                  b.getDenseI32ArrayAttr(
                      {static_cast<int32_t>(t.clusterM), 1, 1}));

  Block &entry = func.getBody().front();
  b.setInsertionPointToStart(&entry);
  unsigned arg = 0;
  params = GemmKernelParams{};
  params.tmaA = entry.getArgument(arg++);
  params.tmaB = entry.getArgument(arg++);
  (t.tmaStoreEpilogue ? params.tmaD : params.d) = entry.getArgument(arg++);
  params.aScaleInv = entry.getArgument(arg++);
  params.bScaleInv = entry.getArgument(arg++);
  if (p.biasElementType)
    params.bias = entry.getArgument(arg++);
  if (p.accumulateIntoC)
    params.c = entry.getArgument(arg++);
  if (p.outputAmax)
    params.amax = entry.getArgument(arg++);
  params.m = entry.getArgument(arg++);
  if (t.workspaceBytesPerCta)
    params.workspace = entry.getArgument(arg++);
  return func;
}

DictionaryAttr mlir::fp8::buildGemmKernelMetadata(
    MLIRContext *ctx, StringRef name, const ChipInfo &chip,
    const GemmProblem &p, const GemmTiling &t,
    int64_t dynamicSharedMemoryBytes) {
  KernelMetadataBuilder m(ctx);
  int64_t kBlocks = p.numKBlocks(kScaleBlock);
  int64_t nBlocks = contract::ceilDiv(p.n, kScaleBlock);

  auto operand = [&](StringRef opName, Type type, ArrayRef<Attribute> shape,
                     StringRef role, bool optional = false,
                     int64_t alignmentBytes = 0) {
    SmallVector<std::pair<StringRef, Attribute>> entries = {
        {"name", m.str(opName)},
        {"dtype", m.str(getKernelDTypeName(type))},
        {"shape", m.list(shape)},
        {"role", m.str(role)}};
    if (optional)
      entries.push_back({"optional", m.flag(true)});
    // Only where the kernel reads wider than one element.
    if (alignmentBytes)
      entries.push_back({"alignment", m.num(alignmentBytes)});
    return m.dict(entries);
  };
  // The runtime checks the padded extent against the bound M.
  std::string mnMajorScaleRows =
      llvm::formatv("roundup(M, {0})", kMNMajorScaleAlignment).str();
  auto scaleShape = [&](ScaleMode mode, bool isA) -> SmallVector<Attribute> {
    switch (mode) {
    case ScaleMode::Tensor:
      return {};
    case ScaleMode::Row:
      return {isA ? m.dim("M") : m.dim(p.n)};
    case ScaleMode::Blockwise:
      // sm_100a block-scaled MMA: the MX atom layout below, converted by
      // the host (GemmProblem::blockwiseAsMX).
      if (p.blockwiseAsMX)
        return {isA ? m.dim(kMXAtomRowsSymbol) : m.dim(nBlocks),
                m.dim(kBlocks), m.dim(kMXAtomBytes)};
      // 1x128 tiles are MN-major: A [ceil(K/128), roundup(M, 4)], B
      // [ceil(K/128), N] (N is a multiple of 16; a K block's scales are
      // contiguous, kMNMajorScaleAlignment). 128x128 B tiles:
      // [ceil(N/128), ceil(K/128)].
      if (isA)
        return {m.dim(kBlocks), m.dim(mnMajorScaleRows)};
      if (p.hasBlockwiseColumnScales())
        return {m.dim(kBlocks),
                m.dim(static_cast<int64_t>(
                           llvm::alignTo(p.n, kMNMajorScaleAlignment)))};
      return {m.dim(nBlocks), m.dim(kBlocks)};
    case ScaleMode::MX:
      // The physical layout the kernel reads: [ceil(MN/128), ceil(K/128),
      // 512] bytes, each [i, g, :] the 128x4 atom of rows [128 i, 128 i +
      // 128) and K blocks [4 g, 4 g + 4) (padding rows/blocks: any value).
      return {isA ? m.dim(kMXAtomRowsSymbol) : m.dim(nBlocks), m.dim(kBlocks),
              m.dim(kMXAtomBytes)};
    }
    llvm_unreachable("unknown scale mode");
  };
  Type f32 = Float32Type::get(ctx);
  Type ue8m0 = Float8E8M0FNUType::get(ctx);
  Type aScaleType =
      p.aScale == ScaleMode::MX || p.blockwiseAsMX ? ue8m0 : f32;
  Type bScaleType =
      p.bScale == ScaleMode::MX || p.blockwiseAsMX ? ue8m0 : f32;

  SmallVector<Attribute> operands = {
      operand("a", p.aElementType, {m.dim("M"), m.dim(p.k)}, "input"),
      operand("b", p.bElementType, {m.dim(p.n), m.dim(p.k)}, "input"),
      operand("a_scale_inv", aScaleType, scaleShape(p.aScale, true), "input",
              /*optional=*/false,
              p.aScale == ScaleMode::Blockwise ? t.blockwiseScaleAlignment
                                               : 0),
      operand("b_scale_inv", bScaleType, scaleShape(p.bScale, false), "input",
              /*optional=*/false,
              p.hasBlockwiseColumnScales() ? t.blockwiseScaleAlignment : 0)};
  if (p.biasElementType)
    operands.push_back(
        operand("bias", p.biasElementType, {m.dim(p.n)}, "input"));
  if (p.accumulateIntoC)
    operands.push_back(operand("c", f32, {m.dim("M"), m.dim(p.n)}, "input"));
  operands.push_back(
      operand("d", p.outElementType, {m.dim("M"), m.dim(p.n)}, "output"));
  // max |D| is max-accumulated into it: the caller zeroes it first.
  if (p.outputAmax)
    operands.push_back(operand("amax", f32, {}, "output"));

  auto tensorMap = [&](StringRef mapName, StringRef opName, Type type,
                       Attribute outer, int64_t boxOuter) {
    return m.dict({{"name", m.str(mapName)},
                   {"operand", m.str(opName)},
                   {"dtype", m.str(getKernelDTypeName(type))},
                   {"rank", m.num(2)},
                   {"dims", m.list({m.dim(p.k), outer})},
                   {"strides_bytes", m.list({m.num(p.k)})},
                   {"box", m.list({m.num(t.tileK), m.num(boxOuter)})},
                   {"element_strides", m.list({m.num(1), m.num(1)})},
                   {"interleave", m.str("none")},
                   {"swizzle", m.str("128B")},
                   {"l2_promotion", m.str("256B")},
                   {"oob_fill", m.str("zero")}});
  };
  SmallVector<Attribute> tensorMaps = {
      tensorMap("tma_a", "a", p.aElementType, m.dim("M"), t.tileM),
      // With a cluster each CTA loads (and multicasts) 1/clusterM of B.
      tensorMap("tma_b", "b", p.bElementType, m.dim(p.n),
                t.tileN / t.clusterM)};
  if (t.tmaStoreEpilogue)
    // The output, [M, N] row-major, stored in boxes of 128 bytes x tile M.
    tensorMaps.push_back(m.dict(
        {{"name", m.str("tma_d")},
         {"operand", m.str("d")},
         {"dtype", m.str(getKernelDTypeName(p.outElementType))},
         {"rank", m.num(2)},
         {"dims", m.list({m.dim(p.n), m.dim("M")})},
         {"strides_bytes", m.list({m.num(p.n * t.outputBytes)})},
         {"box", m.list({m.num(t.storeBoxColumns()), m.num(t.tileM)})},
         {"element_strides", m.list({m.num(1), m.num(1)})},
         {"interleave", m.str("none")},
         {"swizzle", m.str("128B")},
         {"l2_promotion", m.str("none")},
         {"oob_fill", m.str("zero")}}));
  if (t.scaleTensorMaps) {
    // MX scales as a 3-D view of the atom-tiled bytes: 128-byte rows (one
    // atom row: 4 K blocks of 32 MN rows), 4 * ceil(K/128) of them per 128
    // MN rows, then the atom rows along MN. A box of 128 x 4 x (tile/128)
    // is the atoms of one 128-K block: one load per operand and stage.
    auto scaleMap = [&](StringRef mapName, StringRef opName, Attribute outer,
                        int64_t boxOuter) {
      return m.dict({{"name", m.str(mapName)},
                     {"operand", m.str(opName)},
                     {"dtype", m.str("ue8m0")},
                     {"rank", m.num(3)},
                     {"dims", m.list({m.dim(kMXAtomBytes / 4),
                                      m.dim(4 * kBlocks), outer})},
                     {"strides_bytes", m.list({m.num(kMXAtomBytes / 4),
                                               m.num(kMXAtomBytes * kBlocks)})},
                     {"box", m.list({m.num(kMXAtomBytes / 4), m.num(4),
                                     m.num(boxOuter)})},
                     {"element_strides", m.list({m.num(1), m.num(1), m.num(1)})},
                     {"interleave", m.str("none")},
                     {"swizzle", m.str("none")},
                     {"l2_promotion", m.str("256B")},
                     {"oob_fill", m.str("zero")}});
    };
    tensorMaps.push_back(scaleMap("tma_sfa", "a_scale_inv",
                                  m.dim(kMXAtomRowsSymbol),
                                  t.tileM / kMXAtomRows));
    tensorMaps.push_back(scaleMap("tma_sfb", "b_scale_inv", m.dim(nBlocks),
                                  t.tileN / kMXAtomRows));
  }

  auto param = [&](StringRef paramName, StringRef kind, StringRef key,
                   Attribute value) {
    SmallVector<std::pair<StringRef, Attribute>> entries = {
        {"name", m.str(paramName)}, {"kind", m.str(kind)}, {key, value}};
    if (kind == "tensor_map")
      entries.push_back({"passing", m.str("grid_constant")});
    return m.dict(entries);
  };
  SmallVector<Attribute> params = {
      param("tma_a", "tensor_map", "tensor_map", m.str("tma_a")),
      param("tma_b", "tensor_map", "tensor_map", m.str("tma_b")),
      t.tmaStoreEpilogue
          ? param("tma_d", "tensor_map", "tensor_map", m.str("tma_d"))
          : param("d", "pointer", "operand", m.str("d")),
      t.scaleTensorMaps
          ? param("tma_sfa", "tensor_map", "tensor_map", m.str("tma_sfa"))
          : param("a_scale_inv", "pointer", "operand", m.str("a_scale_inv")),
      t.scaleTensorMaps
          ? param("tma_sfb", "tensor_map", "tensor_map", m.str("tma_sfb"))
          : param("b_scale_inv", "pointer", "operand", m.str("b_scale_inv"))};
  if (p.biasElementType)
    params.push_back(param("bias", "pointer", "operand", m.str("bias")));
  if (p.accumulateIntoC)
    params.push_back(param("c", "pointer", "operand", m.str("c")));
  if (p.outputAmax)
    params.push_back(param("amax", "pointer", "operand", m.str("amax")));
  params.push_back(param("m", "i32", "value", m.str("M")));
  if (t.workspaceBytesPerCta)
    params.push_back(param("workspace", "workspace", "bytes_per_cta",
                           m.num(t.workspaceBytesPerCta)));

  auto granularity = [&](ScaleMode mode, bool isA) -> StringRef {
    switch (mode) {
    case ScaleMode::Tensor:
      return "tensor";
    case ScaleMode::Row:
      return "row";
    case ScaleMode::Blockwise:
      return isA || p.hasBlockwiseColumnScales() ? "tile 1x128"
                                                 : "tile 128x128";
    case ScaleMode::MX:
      return "mx 1x32";
    }
    llvm_unreachable("unknown scale mode");
  };
  std::string accumulation =
      p.promoteInterval == 0
          ? std::string("fast")
          : llvm::formatv("promoted({0})", p.promoteInterval).str();
  SmallVector<std::pair<StringRef, Attribute>> gemmEntries = {
      {"m", m.dim("M")},
       {"n", m.num(p.n)},
       {"k", m.num(p.k)},
       {"a_dtype", m.str(getKernelDTypeName(p.aElementType))},
       {"b_dtype", m.str(getKernelDTypeName(p.bElementType))},
       {"out_dtype", m.str(getKernelDTypeName(p.outElementType))},
       {"a_granularity", m.str(granularity(p.aScale, true))},
       {"b_granularity", m.str(granularity(p.bScale, false))},
       {"accumulation", m.str(accumulation)},
       {"bias", m.flag(static_cast<bool>(p.biasElementType))},
       {"accumulate_into_c", m.flag(p.accumulateIntoC)},
       {"tile", m.list({m.num(t.tileM), m.num(t.tileN), m.num(t.tileK)})},
       {"stages", m.num(t.stages)},
       {"cluster", m.list({m.num(t.clusterM), m.num(t.clusterN), m.num(1)})}};
  if (p.activation)
    gemmEntries.push_back(
        {"activation", m.str(stringifyActivation(*p.activation))});
  if (p.outputAmax)
    gemmEntries.push_back({"output_amax", m.flag(true)});
  if (t.streamK)
    gemmEntries.push_back({"stream_k", m.flag(true)});
  if (p.blockwiseAsMX) {
    // What the caller must pass as a_scale_inv / b_scale_inv (the runtime's
    // operand schema has no layout key; tools read it here): the blockwise
    // power-of-two scales as UE8M0 in the MX 128x4 atom layout, made on the
    // host by emulation::blockwiseScalesToMx then layoutScaleFactors. The
    // four bytes of a 128-K group (one atom row) are equal, a 1x128 tile's
    // scale repeated; a 128x128 tile's scale is broadcast to its 128 rows.
    // The MMAs still select sf_id 0..3 (all the same value).
    gemmEntries.push_back({"scale_layout", m.str("mx_atom_128x4_ue8m0")});
    gemmEntries.push_back(
        {"scale_conversion",
         m.str("host: blockwiseScalesToMx + layoutScaleFactors")});
    gemmEntries.push_back({"scale_k_group_bytes_equal", m.flag(true)});
  }
  Attribute gemm = m.dict(gemmEntries);

  return cast<DictionaryAttr>(m.dict(
      {{"name", m.str(name)},
       {"entry", m.str(name)},
       {"chip", m.str(chip.name)},
       {"block", m.list({m.num(t.numThreads()), m.num(1), m.num(1)})},
       {"cluster",
        m.list({m.num(t.clusterM * t.clusterN), m.num(1), m.num(1)})},
       {"dynamic_shared_memory_bytes", m.num(dynamicSharedMemoryBytes)},
       {"grid", m.dict({{"kind", m.str("persistent")},
                        {"tile_m", m.num(t.tileM)},
                        {"tile_n", m.num(t.tileN)}})},
       {"operands", m.list(operands)},
       {"tensor_maps", m.list(tensorMaps)},
       {"params", m.list(params)},
       {"gemm", gemm}}));
}
