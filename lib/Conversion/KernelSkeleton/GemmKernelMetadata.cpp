//===- GemmKernelMetadata.cpp - The metadata of a GEMM kernel -------------===//
//
// What the runtime needs to launch a GEMM kernel without MLIR: its operands
// and their shapes, its tensor maps, its parameters in order and a
// description of the GEMM (kernel.schema.json).
//
//===----------------------------------------------------------------------===//

#include "FP8/Conversion/KernelSkeleton/GemmKernel.h"
#include "FP8/Conversion/KernelSkeleton/KernelBuilder.h"
#include "FP8/Conversion/KernelSkeleton/KernelMetadata.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::fp8;

/// Symbol of ceil(M / 128), the MX A scale tensor's atom rows: the caller's
/// scale shape binds it.
static constexpr llvm::StringLiteral kMXAtomRowsSymbol = "M_ATOMS";

/// A symbol of a run-time extent.
static md::Expr sym(StringRef name) { return md::Expr::symbol(name.str()); }
static md::Expr num(int64_t value) { return md::Expr::constant(value); }

namespace {
/// Builds the metadata of one GEMM kernel.
class GemmMetadataBuilder {
public:
  GemmMetadataBuilder(const GemmProblem &p, const GemmTiling &t,
                      const GemmTargetLayout &layout)
      : p(p), t(t), layout(layout), kBlocks(p.numKBlocks(kBlockwiseScaleBlock)),
        nBlocks(llvm::divideCeil(p.n, kBlockwiseScaleBlock)) {}

  md::KernelMetadata build(StringRef name, const ChipInfo &chip);

private:
  const GemmProblem &p;
  const GemmTiling &t;
  const GemmTargetLayout &layout;
  int64_t kBlocks, nBlocks;

  void addOperands(md::KernelMetadata &metadata) const;
  void addKGroupedOperands(md::KernelMetadata &metadata) const;
  /// K: the constant of the problem, or k_grouped's run-time symbol.
  md::Expr getK() const;
  std::vector<md::Expr> getScaleShape(ScaleMode mode, bool isA) const;
  void addTensorMaps(md::KernelMetadata &metadata) const;
  md::TensorMap getOperandMap(StringRef name, StringRef operand, Type type,
                              md::Expr mn, bool mnMajor, int64_t boxRows) const;
  md::TensorMap getScaleMap(StringRef name, StringRef operand, md::Expr outer,
                            int64_t boxOuter) const;
  void addParams(md::KernelMetadata &metadata) const;
  md::GemmInfo getDescription() const;
};
} // namespace

/// The grouped GEMM's run-time group operand: DeepGEMM's names.
static StringRef getGroupsOperandName(const GemmProblem &p) {
  if (p.isKGrouped())
    return "ks";
  return p.isMasked() ? "masked_m" : "group_index";
}

md::Expr GemmMetadataBuilder::getK() const {
  return p.isKGrouped() ? sym("K") : num(p.k);
}

static md::Operand makeOperand(StringRef name, Type type,
                               std::vector<md::Expr> shape,
                               md::OperandRole role) {
  md::Operand operand;
  operand.name = name.str();
  operand.dtype = getKernelDType(type);
  operand.shape = std::move(shape);
  operand.role = role;
  return operand;
}

/// k_grouped: a [M, K] and b [N, K] over the columns of all groups (K
/// bound at launch, a multiple of 128), the scales (per-tensor and per-row
/// one set per group; 1x128 MN-major over all columns, as the dense 1x128
/// x 1x128 kernel reads them), ks [G] and d [G, M, N].
void GemmMetadataBuilder::addKGroupedOperands(
    md::KernelMetadata &metadata) const {
  using md::OperandRole;
  MLIRContext *ctx = p.aElementType.getContext();
  Type f32 = Float32Type::get(ctx);
  md::Expr g = num(p.numGroups);
  md::Expr kBlocks = md::Expr::ceilDiv(sym("K"), num(kBlockwiseScaleBlock));
  auto scaleShape = [&](ScaleMode mode, md::Expr rows,
                        md::Expr paddedRows) -> std::vector<md::Expr> {
    if (mode == ScaleMode::Tensor)
      return {g};
    if (mode == ScaleMode::Row)
      return {g, std::move(rows)};
    return {kBlocks, std::move(paddedRows)};
  };
  auto &operands = metadata.operands;
  operands.push_back(makeOperand("a", p.aElementType, {sym("M"), sym("K")},
                                 OperandRole::Input));
  operands.push_back(makeOperand("b", p.bElementType, {num(p.n), sym("K")},
                                 OperandRole::Input));
  operands.push_back(makeOperand(
      "a_scale_inv", f32,
      scaleShape(p.aScale, sym("M"),
                 md::Expr::roundUp(sym("M"), num(kMNMajorScaleAlignment))),
      OperandRole::Input));
  operands.push_back(makeOperand(
      "b_scale_inv", f32,
      scaleShape(p.bScale, num(p.n),
                 num(llvm::alignTo(p.n, kMNMajorScaleAlignment))),
      OperandRole::Input));
  if (p.isBlockwise() && t.blockwiseScaleAlignment) {
    operands[2].alignment = t.blockwiseScaleAlignment;
    operands[3].alignment = t.blockwiseScaleAlignment;
  }
  operands.push_back(makeOperand(getGroupsOperandName(p),
                                 IntegerType::get(ctx, 32), {g},
                                 OperandRole::Input));
  operands.push_back(makeOperand("d", p.outElementType,
                                 {g, sym("M"), num(p.n)},
                                 OperandRole::Output));
}

void GemmMetadataBuilder::addOperands(md::KernelMetadata &metadata) const {
  using md::OperandRole;
  if (p.isKGrouped())
    return addKGroupedOperands(metadata);
  // An MN-major operand is stored [K, MN].
  auto stored = [](md::Expr mn, int64_t k, bool mnMajor) {
    return mnMajor ? std::vector<md::Expr>{num(k), mn}
                   : std::vector<md::Expr>{mn, num(k)};
  };
  auto &operands = metadata.operands;
  // A masked grouped GEMM's A, D and per-row/1x128 A scales: G outermost.
  auto perGroup = [&](std::vector<md::Expr> shape) {
    if (p.isMasked() && !shape.empty())
      shape.insert(shape.begin(), num(p.numGroups));
    return shape;
  };
  operands.push_back(makeOperand("a", p.aElementType,
                                 perGroup(stored(sym("M"), p.k, layout.aMNMajor)),
                                 OperandRole::Input));
  std::vector<md::Expr> bShape = stored(num(p.n), p.k, layout.bMNMajor);
  if (p.isGrouped())
    bShape.insert(bShape.begin(), num(p.numGroups));
  operands.push_back(
      makeOperand("b", p.bElementType, std::move(bShape), OperandRole::Input));
  MLIRContext *ctx = p.aElementType.getContext();
  Type f32 = Float32Type::get(ctx);
  Type ue8m0 = Float8E8M0FNUType::get(ctx);
  bool aUE8M0 = p.aScale == ScaleMode::MX || p.blockwiseAsMX;
  bool bUE8M0 = p.bScale == ScaleMode::MX || p.blockwiseAsMX;
  operands.push_back(makeOperand("a_scale_inv", aUE8M0 ? ue8m0 : f32,
                                 perGroup(getScaleShape(p.aScale, true)),
                                 OperandRole::Input));
  operands.push_back(makeOperand("b_scale_inv", bUE8M0 ? ue8m0 : f32,
                                 getScaleShape(p.bScale, false),
                                 OperandRole::Input));
  // Stated only where the kernel reads wider than one element.
  if (p.aScale == ScaleMode::Blockwise && t.blockwiseScaleAlignment)
    operands[2].alignment = t.blockwiseScaleAlignment;
  if (p.hasBlockwiseColumnScales() && t.blockwiseScaleAlignment)
    operands[3].alignment = t.blockwiseScaleAlignment;
  // A grouped GEMM's B scales: one set per group, outermost.
  if (p.isGrouped()) {
    operands[3].shape.insert(operands[3].shape.begin(), num(p.numGroups));
    operands.push_back(makeOperand(getGroupsOperandName(p),
                                   IntegerType::get(ctx, 32),
                                   {p.isMasked() ? num(p.numGroups) : sym("M")},
                                   OperandRole::Input));
  }
  if (p.biasElementType)
    operands.push_back(
        makeOperand("bias", p.biasElementType, {num(p.n)}, OperandRole::Input));
  if (p.accumulateIntoC)
    operands.push_back(
        makeOperand("c", f32, {sym("M"), num(p.n)}, OperandRole::Input));
  // The launcher's order: the op's operands, then its results.
  if (p.outQuantization == OutputQuantization::Tensor)
    operands.push_back(
        makeOperand("result_scale", f32, {}, OperandRole::Input));
  operands.push_back(makeOperand("d", p.outElementType,
                                 perGroup({sym("M"), num(p.n)}),
                                 OperandRole::Output));
  if (accumulatesThroughStaging(p, t)) // C's memory as D: TMA reduce-add
    operands.back().inPlaceOf = "c";
  if (t.guardedStagedStores) // 16-byte stores
    operands.back().alignment = 16;
  if (p.outQuantization == OutputQuantization::Tensor)
    operands.push_back(
        makeOperand("result_scale_inv", f32, {}, OperandRole::Output));
  // 1x128 blocks along N: MN-major [ceil(N/128), roundup(M, 4)], as the
  // next GEMM reads its A scales.
  // (m_masked: one set per group, [G, ceil(N/128), roundup(M, 4)]).
  if (p.outQuantization == OutputQuantization::Block1x128)
    operands.push_back(makeOperand(
        "result_scale_inv", f32,
        perGroup({num(nBlocks),
                  md::Expr::roundUp(sym("M"), num(kMNMajorScaleAlignment))}),
        OperandRole::Output));
  // max |D| is max-accumulated into it: the caller zeroes it first.
  if (p.outputAmax)
    operands.push_back(makeOperand("amax", f32, {}, OperandRole::Output));
}

std::vector<md::Expr> GemmMetadataBuilder::getScaleShape(ScaleMode mode,
                                                         bool isA) const {
  // The MX scale-factor atoms the kernel reads: [ceil(MN/128),
  // ceil(K/128), 512] bytes, each [i, g, :] the 128x4 atom of rows
  // [128 i, 128 i + 128) and K blocks [4 g, 4 g + 4) (padding rows/blocks:
  // any value). Blockwise scales on the sm_100a block-scaled MMA take the
  // same layout, converted by the host (GemmProblem::blockwiseAsMX).
  std::vector<md::Expr> atoms = {isA ? sym(kMXAtomRowsSymbol) : num(nBlocks),
                                 num(kBlocks), num(kMXAtomBytes)};
  switch (mode) {
  case ScaleMode::Tensor:
    return {};
  case ScaleMode::Row:
    return {isA ? sym("M") : num(p.n)};
  case ScaleMode::Blockwise:
    if (p.blockwiseAsMX)
      return atoms;
    // 1x128 tiles are MN-major: A [ceil(K/128), roundup(M, 4)], B
    // [ceil(K/128), N] (N is a multiple of 16; a K block's scales are
    // contiguous, kMNMajorScaleAlignment; the runtime checks the padded
    // extent against the bound M). 128x128 B: [ceil(N/128), ceil(K/128)].
    if (isA)
      return {num(kBlocks),
              md::Expr::roundUp(sym("M"), num(kMNMajorScaleAlignment))};
    if (p.hasBlockwiseColumnScales())
      return {num(kBlocks), num(llvm::alignTo(p.n, kMNMajorScaleAlignment))};
    return {num(nBlocks), num(kBlocks)};
  case ScaleMode::MX:
    return atoms;
  }
  llvm_unreachable("unknown scale mode");
}

md::TensorMap GemmMetadataBuilder::getOperandMap(StringRef name,
                                                 StringRef operand, Type type,
                                                 md::Expr mn, bool mnMajor,
                                                 int64_t boxRows) const {
  md::TensorMap map;
  map.name = name.str();
  map.operand = operand.str();
  map.dtype = getKernelDType(type);
  map.rank = 2;
  // K-major [MN, K]: rows of K bytes, boxes of tile K x `boxRows`.
  // MN-major [K, MN]: rows of MN bytes, boxes of one 128-byte swizzle span
  // of MN x tile K.
  map.dims = {getK(), mn};
  map.stridesBytes = {getK()};
  map.box = {t.tileK, boxRows};
  if (mnMajor) {
    map.dims = {mn, getK()};
    map.stridesBytes = {mn};
    map.box = {kSwizzle128BRowBytes, t.tileK};
  }
  map.elementStrides = std::vector<int64_t>{1, 1};
  map.interleave = md::Interleave::None;
  map.swizzle = md::Swizzle::Bytes128;
  map.l2Promotion = md::L2Promotion::Bytes256;
  map.oobFill = md::OobFill::Zero;
  return map;
}

md::TensorMap GemmMetadataBuilder::getScaleMap(StringRef name,
                                               StringRef operand,
                                               md::Expr outer,
                                               int64_t boxOuter) const {
  // MX scales as a 3-D view of the atom-tiled bytes: 128-byte rows (one
  // atom row: 4 K blocks of 32 MN rows), 4 * ceil(K/128) of them per 128
  // MN rows, then the atom rows along MN. A box of 128 x 4 x (tile/128) is
  // the atoms of one 128-K block: one load per operand and stage.
  md::TensorMap map;
  map.name = name.str();
  map.operand = operand.str();
  map.dtype = md::DType::UE8M0;
  map.rank = 3;
  map.dims = {num(kMXAtomBytes / 4), num(4 * kBlocks), std::move(outer)};
  map.stridesBytes = {num(kMXAtomBytes / 4), num(kMXAtomBytes * kBlocks)};
  map.box = {kMXAtomBytes / 4, 4, boxOuter};
  map.elementStrides = std::vector<int64_t>{1, 1, 1};
  map.interleave = md::Interleave::None;
  map.swizzle = md::Swizzle::None;
  map.l2Promotion = md::L2Promotion::Bytes256;
  map.oobFill = md::OobFill::Zero;
  return map;
}

void GemmMetadataBuilder::addTensorMaps(md::KernelMetadata &metadata) const {
  std::vector<md::TensorMap> &maps = *metadata.tensorMaps;
  // With a 1x2 cluster each CTA loads (and multicasts) 1/clusterN of A,
  // with a 2x1 cluster 1/clusterM of B.
  maps.push_back(getOperandMap("tma_a", "a", p.aElementType, sym("M"),
                               layout.aMNMajor, layout.ctaTileM / t.clusterN));
  if (p.isMasked()) {
    // [G, M, K]: a box of the tile's rows of one group (rows past the
    // group's M read zeros).
    md::TensorMap &a = maps.back();
    a.rank = 3;
    a.dims.push_back(num(p.numGroups));
    a.stridesBytes.push_back(md::Expr::mul(sym("M"), num(p.k)));
    a.box.push_back(1);
    a.elementStrides = std::vector<int64_t>{1, 1, 1};
  }
  // A grouped GEMM's B: the groups' [N, K] weights stacked, [G * N, K].
  maps.push_back(getOperandMap(
      "tma_b", "b", p.bElementType,
      num(p.isGrouped() && !p.isKGrouped() ? p.numGroups * p.n : p.n),
      layout.bMNMajor,
      t.tileN / t.clusterM));
  if (t.storesWithTma()) {
    // The output, [M, N] row-major, in boxes of storeBoxBytes() x CTA rows.
    md::TensorMap d = getOperandMap("tma_d", "d", p.outElementType, sym("M"),
                                    /*mnMajor=*/false, layout.ctaTileM);
    d.dims = {num(p.n), sym("M")};
    d.stridesBytes = {num(p.n * t.outputBytes)};
    d.box = {t.storeBoxColumns(), layout.ctaTileM};
    if (t.storeBoxBytes() != 128)
      d.swizzle = t.storeBoxBytes() == 64 ? md::Swizzle::Bytes64
                                          : md::Swizzle::Bytes32;
    d.l2Promotion = md::L2Promotion::None;
    maps.push_back(std::move(d));
  }
  if (t.scaleTensorMaps) {
    maps.push_back(getScaleMap("tma_sfa", "a_scale_inv", sym(kMXAtomRowsSymbol),
                               t.tileM / kMXAtomRows));
    // A grouped GEMM's: the groups' atoms stacked, G * ceil(N/128) rows
    // of atoms (the kernel adds the group's first one).
    maps.push_back(getScaleMap(
        "tma_sfb", "b_scale_inv",
        num(p.isGrouped() ? p.numGroups * nBlocks : nBlocks),
        t.tileN / kMXAtomRows));
  }
}

static md::Param makeParam(StringRef name, md::ParamKind kind) {
  md::Param param;
  param.name = name.str();
  param.kind = kind;
  return param;
}

void GemmMetadataBuilder::addParams(md::KernelMetadata &metadata) const {
  auto map = [&](StringRef name) {
    md::Param param = makeParam(name, md::ParamKind::TensorMap);
    param.tensorMap = name.str();
    param.passing = md::TensorMapPassing::GridConstant;
    metadata.params.push_back(param);
  };
  auto pointer = [&](StringRef name) {
    md::Param param = makeParam(name, md::ParamKind::Pointer);
    param.operand = name.str();
    metadata.params.push_back(param);
  };
  map("tma_a");
  map("tma_b");
  t.storesWithTma() ? map("tma_d") : pointer("d");
  t.scaleTensorMaps ? map("tma_sfa") : pointer("a_scale_inv");
  t.scaleTensorMaps ? map("tma_sfb") : pointer("b_scale_inv");
  if (p.biasElementType)
    pointer("bias");
  if (p.accumulateIntoC)
    pointer("c");
  if (accumulatesThroughStaging(p, t))
    pointer("d");
  if (p.outputAmax)
    pointer("amax");
  if (p.isGrouped())
    pointer(getGroupsOperandName(p));
  if (p.outQuantization == OutputQuantization::Tensor)
    pointer("result_scale");
  if (p.hasFP8Output())
    pointer("result_scale_inv");
  addValueParam(metadata, "m", md::ParamKind::I32, "M");
  // k_grouped: every group's K is a multiple of 128, so their sum is.
  if (p.isKGrouped())
    addValueParam(metadata, "k", md::ParamKind::I32, "K", kBlockwiseScaleBlock,
                  "the columns of every group are a multiple of 128");
  if (t.workspaceBytesPerCta) {
    md::Param workspace = makeParam("workspace", md::ParamKind::Workspace);
    workspace.bytesPerCta = t.workspaceBytesPerCta;
    metadata.params.push_back(workspace);
  }
}

static std::string getGranularityName(const GemmProblem &p, ScaleMode mode,
                                      bool isA) {
  if (mode == ScaleMode::Blockwise)
    return isA || p.hasBlockwiseColumnScales() ? "tile 1x128" : "tile 128x128";
  if (mode == ScaleMode::MX)
    return "mx 1x32";
  return mode == ScaleMode::Row ? "row" : "tensor";
}

md::GemmInfo GemmMetadataBuilder::getDescription() const {
  md::GemmInfo info;
  info.m = sym("M");
  info.n = p.n;
  info.k = getK();
  info.aDtype = getKernelDType(p.aElementType);
  info.bDtype = getKernelDType(p.bElementType);
  info.outDtype = getKernelDType(p.outElementType);
  info.aGranularity = getGranularityName(p, p.aScale, /*isA=*/true);
  info.bGranularity = getGranularityName(p, p.bScale, /*isA=*/false);
  info.accumulation =
      p.promoteInterval == 0
          ? std::string("fast")
          : llvm::formatv("promoted({0})", p.promoteInterval).str();
  info.bias = static_cast<bool>(p.biasElementType);
  info.accumulateIntoC = p.accumulateIntoC;
  info.tile = {t.tileM, t.tileN, t.tileK};
  info.stages = t.stages;
  info.cluster = {t.clusterM, t.clusterN, 1};
  if (p.activation)
    info.activation = stringifyActivation(*p.activation).str();
  if (p.outputAmax)
    info.outputAmax = true;
  if (t.streamK)
    info.streamK = true;
  if (p.isGrouped()) {
    info.groups = p.numGroups;
    info.groupLayout = stringifyGroupedLayout(p.groupLayout).str();
  }
  if (p.blockwiseAsMX) {
    // What the caller must pass as a_scale_inv / b_scale_inv (the operand
    // schema has no layout key; tools read it here): the blockwise
    // power-of-two scales as UE8M0 in the MX 128x4 atom layout, made on the
    // host by emulation::blockwiseScalesToMx then layoutScaleFactors. The
    // four bytes of a 128-K group (one atom row) are equal, a 1x128 tile's
    // scale repeated; a 128x128 tile's scale is broadcast to its 128 rows.
    // The MMAs still select sf_id 0..3 (all the same value).
    info.scaleLayout = "mx_atom_128x4_ue8m0";
    info.scaleConversion = "host: blockwiseScalesToMx + layoutScaleFactors";
    info.scaleKGroupBytesEqual = true;
  }
  return info;
}

md::KernelMetadata GemmMetadataBuilder::build(StringRef name,
                                              const ChipInfo &chip) {
  md::Grid grid;
  grid.kind = md::GridKind::Persistent;
  grid.tileM = layout.ctaTileM;
  grid.tileN = t.tileN;
  grid.kSplit = t.splitK > 1 ? std::optional<int64_t>(t.splitK) : std::nullopt;
  md::KernelMetadata metadata = makeKernelMetadata(
      name, chip, /*kind=*/std::nullopt, layout.threadsPerCta,
      layout.dynamicSharedMemoryBytes, std::move(grid));
  metadata.cluster = std::vector<int64_t>{t.clusterCtas(), 1, 1};
  addOperands(metadata);
  addTensorMaps(metadata);
  addParams(metadata);
  metadata.gemm = getDescription();
  // The kernel syncs with the grid before it (gridDependencySync).
  metadata.programmaticLaunch = true;
  return metadata;
}

md::KernelMetadata mlir::fp8::buildGemmKernelMetadata(
    StringRef name, const ChipInfo &chip, const GemmProblem &problem,
    const GemmTiling &tiling, const GemmTargetLayout &layout) {
  return GemmMetadataBuilder(problem, tiling, layout).build(name, chip);
}
