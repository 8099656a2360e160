//===- KernelMetadataRoundTripTest.cpp - Compiler writer vs runtime reader ===//
//
// The kernel metadata is defined once (schema/kernel.schema.json); the
// compiler writes the generated structs as the `fp8.kernel_metadata`
// attribute and reads that back with its generated reader, fp8-compile
// converts it to NAME.json, and the runtime reads that with its generated
// reader. Each struct here must come back equal both ways, and the kernels
// the builders make must pass the runtime's checks.
//
//===----------------------------------------------------------------------===//

#include "FP8/Conversion/FP8ToBlackwell/BlackwellGemm.h"
#include "FP8/Conversion/FP8ToHopper/HopperGemm.h"
#include "FP8/Conversion/KernelSkeleton/KernelMetadata.h"
#include "FP8/Conversion/QuantizeKernels/DequantizeKernel.h"
#include "FP8/Conversion/QuantizeKernels/QuantizeKernel.h"
#include "FP8/Conversion/QuantizeKernels/ScaleKernels.h"
#include "FP8/Target/KernelMetadataReader.h"
#include "FP8/Target/PTX/KernelArtifacts.h"

// The runtime's internal interface (runtime/lib).
#include "KernelMetadata.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::fp8;

namespace {

class KernelMetadataRoundTrip : public ::testing::Test {
protected:
  MLIRContext ctx;
  const ChipInfo &hopper = *lookupChip("sm_90a");
  const ChipInfo &blackwell = *lookupChip("sm_100a");

  Type e4m3() { return Float8E4M3FNType::get(&ctx); }
  Type bf16() { return BFloat16Type::get(&ctx); }
  Type f32() { return Float32Type::get(&ctx); }

  /// NAME.json as fp8-compile writes it.
  std::string toJSON(const md::KernelMetadata &metadata) {
    KernelInfo kernel{metadata.name, "fp8_kernels",
                      getKernelMetadataAttr(&ctx, metadata), metadata,
                      UnknownLoc::get(&ctx)};
    FailureOr<llvm::json::Value> json =
        buildKernelJSON(kernel, metadata.name + ".ptx");
    EXPECT_TRUE(succeeded(json));
    if (failed(json))
      return "";
    std::string text;
    llvm::raw_string_ostream os(text);
    llvm::json::OStream(os, 2).value(*json);
    return text;
  }

  /// Reads `attr` with the compiler's reader; the errors, if any, are in
  /// `errors`.
  FailureOr<md::KernelMetadata> readAttr(DictionaryAttr attr,
                                         schema::ReadMode mode,
                                         std::string &errors) {
    ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &diag) {
      errors += diag.str() + "\n";
      return success();
    });
    return readKernelMetadata(attr, mode,
                              [&]() { return emitError(UnknownLoc::get(&ctx)); });
  }

  /// Writes `metadata`, reads it back from the attribute (the compiler) and
  /// from NAME.json (the runtime), and checks both the structs and the
  /// runtime's checks across fields.
  void expectRoundTrip(md::KernelMetadata metadata) {
    std::string errors;
    FailureOr<md::KernelMetadata> fromAttr =
        readAttr(getKernelMetadataAttr(&ctx, metadata),
                 schema::ReadMode::Complete, errors);
    ASSERT_TRUE(succeeded(fromAttr)) << errors;
    EXPECT_TRUE(*fromAttr == metadata) << metadata.name;
    std::string json = toJSON(metadata);
    md::KernelMetadata read;
    fp8rt::Status status = fp8rt::readKernelMetadataFile(json, "k.json", read);
    ASSERT_TRUE(status.ok()) << status.message() << "\n" << json;
    // fp8-compile names the PTX file.
    metadata.ptx = metadata.name + ".ptx";
    EXPECT_TRUE(read == metadata) << json;
    fp8rt::KernelMetadata resolved;
    status = fp8rt::parseKernelMetadata(json, "k.json", resolved);
    EXPECT_TRUE(status.ok()) << status.message() << "\n" << json;
  }

  GemmProblem gemmProblem() {
    GemmProblem p;
    p.n = 7168;
    p.k = 2048;
    p.aElementType = e4m3();
    p.bElementType = e4m3();
    p.outElementType = bf16();
    return p;
  }
};

TEST_F(KernelMetadataRoundTrip, HopperGemms) {
  GemmProblem p = gemmProblem();
  GemmTiling t;
  t.outputBytes = 2;
  t.tmaStoreEpilogue = true;
  md::KernelMetadata tensorwise =
      hopper::buildKernelMetadata("tensorwise", hopper, p, t);
  tensorwise.grid.throughput = 100;
  tensorwise.variants = {"v1.json", "v2.json"};
  expectRoundTrip(tensorwise);

  // Blockwise scales (a rounded-up extent, an alignment), a bias, the amax,
  // accumulation into C, stream-K's workspace, no TMA-store epilogue.
  p.aScale = p.bScale = ScaleMode::Blockwise;
  p.bScaleBlockRows = 1;
  p.promoteInterval = 128;
  p.biasElementType = bf16();
  p.outputAmax = true;
  p.activation = Activation::GELU;
  t.tmaStoreEpilogue = false;
  t.blockwiseScaleAlignment = 16;
  t.streamK = true;
  t.workspaceBytesPerCta = 4096;
  md::KernelMetadata blockwise =
      hopper::buildKernelMetadata("blockwise", hopper, p, t);
  blockwise.variantOf = "tensorwise";
  expectRoundTrip(blockwise);
}

TEST_F(KernelMetadataRoundTrip, BlackwellGemms) {
  // MX scales read with TMA (rank-3 scale maps), MN-major A and B.
  blackwell::BlackwellGemm g;
  g.problem = gemmProblem();
  g.problem.aScale = g.problem.bScale = ScaleMode::MX;
  g.aMajor = g.bMajor = blackwell::OperandMajor::MN;
  GemmTiling t;
  t.scaleTensorMaps = true;
  t.tmaStoreEpilogue = true;
  expectRoundTrip(blackwell::buildKernelMetadata("mx", blackwell, g, t));
  // The CTA pair: half the tile's rows per CTA.
  blackwell::BlackwellGemm pair;
  pair.problem = gemmProblem();
  t = GemmTiling();
  t.tileM = 256;
  t.clusterM = 2;
  md::KernelMetadata metadata =
      blackwell::buildKernelMetadata("pair", blackwell, pair, t);
  EXPECT_EQ(metadata.grid.tileM, 128);
  expectRoundTrip(metadata);
}

TEST_F(KernelMetadataRoundTrip, QuantizeKernels) {
  // A run-time R: ceildiv and roundup extents, a param with a multiple.
  QuantizeProblem p;
  p.rows = ShapedType::kDynamic;
  p.dynamicRows = true;
  p.cols = 512;
  p.inputType = bf16();
  p.elementType = e4m3();
  p.granularity = GranularityKind::Tile;
  p.blockRows = 1;
  p.blockCols = 128;
  p.rowwise = p.columnwise = true;
  p.rule = QuantizeProblem::Rule::BlockwisePow2;
  p.amaxClamp = 1e-12f;
  p.historyLength = 16;
  expectRoundTrip(buildQuantizeKernelMetadata("quantize", hopper, p));

  // The amax kernel of the same input, with a static R.
  p.rows = 256;
  p.dynamicRows = false;
  p.isAmaxOnly = true;
  expectRoundTrip(buildQuantizeKernelMetadata("amax", hopper, p));
}

TEST_F(KernelMetadataRoundTrip, ScaleKernels) {
  ScaleKernelProblem p;
  p.elementType = e4m3();
  p.epsilon = 1e-6f;
  p.pow2 = true;
  expectRoundTrip(buildScaleKernelMetadata("current", hopper, p));
  p.kind = ScaleKernelProblem::Kind::DelayedScale;
  p.historyLength = 1024;
  p.margin = -1;
  expectRoundTrip(buildScaleKernelMetadata("delayed", hopper, p));
  p.kind = ScaleKernelProblem::Kind::RecordAmax;
  expectRoundTrip(buildScaleKernelMetadata("record", hopper, p));
}

TEST_F(KernelMetadataRoundTrip, DequantizeKernels) {
  DequantizeProblem p;
  p.granularity = GranularityKind::Tile;
  p.blockRows = p.blockCols = 128;
  p.elementType = e4m3();
  p.outputType = f32();
  p.rows = 200;
  p.cols = 384;
  expectRoundTrip(buildDequantizeKernelMetadata("static_rows", hopper, p));
  // A run-time R and 1x128 blocks: scales [3, roundup(R, 4)].
  p.rows = ShapedType::kDynamic;
  p.dynamicRows = true;
  p.blockRows = 1;
  expectRoundTrip(buildDequantizeKernelMetadata("dynamic_rows", hopper, p));
}

TEST_F(KernelMetadataRoundTrip, EveryFieldOfTheDefinition) {
  // What no builder sets: i64 params with a multiple, global tensor maps,
  // element strides, nan fill, a cubin, a fixed grid with a cluster.
  md::KernelMetadata metadata =
      makeKernelMetadata("every", hopper, md::KernelKind::Gemm, 128, 1024,
                         getFixedGrid({4, 2, 1}));
  metadata.cubin = "every.cubin";
  metadata.cluster = std::vector<int64_t>{2, 1, 1};
  addPointerOperand(metadata, "x", md::DType::BF16,
                    {md::Expr::symbol("M"), md::Expr::constant(64)},
                    md::OperandRole::Input, 16);
  metadata.operands[0].optional = false;
  md::TensorMap map;
  map.name = "tma_x";
  map.operand = "x";
  map.dtype = md::DType::BF16;
  map.rank = 2;
  map.dims = {md::Expr::constant(64), md::Expr::symbol("M")};
  map.stridesBytes = {
      md::Expr::mul(md::Expr::symbol("M"), md::Expr::constant(128))};
  map.box = {64, 32};
  map.elementStrides = std::vector<int64_t>{1, 2};
  map.swizzle = md::Swizzle::Bytes128;
  map.oobFill = md::OobFill::Nan;
  metadata.tensorMaps->push_back(map);
  md::Param param;
  param.kind = md::ParamKind::TensorMap;
  param.name = "tma_x";
  param.tensorMap = "tma_x";
  param.passing = md::TensorMapPassing::Global;
  metadata.params.push_back(param);
  addValueParam(metadata, "m", md::ParamKind::I64, "M", 8, "whole vectors");
  md::Param constant;
  constant.kind = md::ParamKind::I32;
  constant.name = "c";
  constant.value = md::Expr::constant(-7);
  metadata.params.push_back(constant);
  expectRoundTrip(metadata);
}

TEST_F(KernelMetadataRoundTrip, AttrReaderErrorsNameTheKeyPath) {
  md::KernelMetadata metadata = makeKernelMetadata(
      "k", hopper, md::KernelKind::Gemm, 128, 0, getFixedGrid({1, 1, 1}));
  addPointerOperand(metadata, "x", md::DType::BF16, {md::Expr::symbol("M")},
                    md::OperandRole::Input, 16);
  DictionaryAttr attr = getKernelMetadataAttr(&ctx, metadata);
  Builder b(&ctx);
  auto with = [&](DictionaryAttr dict, StringRef key, Attribute value) {
    NamedAttrList entries(dict);
    entries.set(key, value);
    return entries.getDictionary(&ctx);
  };
  auto operand = cast<DictionaryAttr>(attr.getAs<ArrayAttr>("operands")[0]);
  DictionaryAttr badDType = with(
      attr, "operands",
      b.getArrayAttr({with(operand, "dtype", b.getStringAttr("f64"))}));
  std::string errors;
  EXPECT_TRUE(failed(readAttr(badDType, schema::ReadMode::Complete, errors)));
  EXPECT_NE(errors.find("kernel metadata 'operands[0].dtype' holds \"f64\": "
                        "expected one of e4m3"),
            std::string::npos)
      << errors;

  // Present: the top level may lack fields and hold keys of its own, but
  // what it gives is read whole.
  NamedAttrList partial;
  partial.append("chip", b.getStringAttr("sm_100a"));
  partial.append("notes", b.getStringAttr("hand-written"));
  errors.clear();
  FailureOr<md::KernelMetadata> read = readAttr(
      partial.getDictionary(&ctx), schema::ReadMode::Present, errors);
  ASSERT_TRUE(succeeded(read)) << errors;
  EXPECT_EQ(read->chip, "sm_100a");
  EXPECT_TRUE(read->entry.empty());
  errors.clear();
  EXPECT_TRUE(failed(readAttr(partial.getDictionary(&ctx),
                              schema::ReadMode::Complete, errors)));
  EXPECT_NE(errors.find("has an unknown key 'notes'"), std::string::npos)
      << errors;
  partial.set("grid", b.getDictionaryAttr(
                          {b.getNamedAttr("kind", b.getStringAttr("fixed"))}));
  errors.clear();
  EXPECT_TRUE(failed(readAttr(partial.getDictionary(&ctx),
                              schema::ReadMode::Present, errors)));
  EXPECT_NE(errors.find("kernel metadata 'grid' has no 'dims'"),
            std::string::npos)
      << errors;
}

} // namespace
