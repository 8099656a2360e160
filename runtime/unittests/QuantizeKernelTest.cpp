// Quantization kernels (`"kind": "quantize"` / `"amax"`, written by
// fp8-lower-quantize) through the runtime with the fake driver: the metadata
// loads, a launch passes the pointers in order on the tiles grid, and every
// malformed argument a caller of a quantization kernel can get wrong is
// rejected, naming the operand, before any driver call.
#include "KernelFixture.h"

#include <gtest/gtest.h>

#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

namespace fp8rt::testing {
namespace {

// As fp8-compile writes it for
//   fp8.quantize %x scale %s {#fp8.delayed<history = 16>, tensor}
//       : tensor<256x512xbf16> -> rowwise(...) columnwise(...) amax(...)
// with the amax fused into an fp8.update_amax_history.
const char *const kQuantizeJson = R"json({
  "format": "fp8-mlir-kernel",
  "version": 1,
  "name": "q",
  "entry": "q",
  "chip": "sm_90a",
  "kind": "quantize",
  "ptx": "q.ptx",
  "block": [256, 1, 1],
  "cluster": [1, 1, 1],
  "dynamic_shared_memory_bytes": 65568,
  "grid": {"kind": "tiles", "tile_m": 128, "tile_n": 128, "operand": "x"},
  "operands": [
    {"name": "x", "dtype": "bf16", "shape": [256, 512], "role": "input", "alignment": 16},
    {"name": "scale", "dtype": "f32", "shape": [], "role": "input", "alignment": 4},
    {"name": "rowwise", "dtype": "e4m3", "shape": [256, 512], "role": "output", "alignment": 8},
    {"name": "rowwise_scale_inv", "dtype": "f32", "shape": [], "role": "output", "alignment": 4},
    {"name": "columnwise", "dtype": "e4m3", "shape": [512, 256], "role": "output", "alignment": 8},
    {"name": "columnwise_scale_inv", "dtype": "f32", "shape": [], "role": "output", "alignment": 4},
    {"name": "amax_history", "dtype": "f32", "shape": [16], "role": "output", "alignment": 4}
  ],
  "tensor_maps": [],
  "params": [
    {"name": "x", "kind": "pointer", "operand": "x"},
    {"name": "scale", "kind": "pointer", "operand": "scale"},
    {"name": "rowwise", "kind": "pointer", "operand": "rowwise"},
    {"name": "rowwise_scale_inv", "kind": "pointer", "operand": "rowwise_scale_inv"},
    {"name": "columnwise", "kind": "pointer", "operand": "columnwise"},
    {"name": "columnwise_scale_inv", "kind": "pointer", "operand": "columnwise_scale_inv"},
    {"name": "amax_history", "kind": "pointer", "operand": "amax_history"}
  ],
  "quantize": {"rows": 256, "cols": 512, "input_dtype": "bf16", "rule": "tensor"}
})json";

const char *const kQuantizePtx = R"ptx(
.version 8.0
.target sm_90a
.address_size 64
.visible .entry q(
	.param .u64 .ptr .global .align 1 q_param_0,
	.param .u64 .ptr .global .align 1 q_param_1,
	.param .u64 .ptr .global .align 1 q_param_2,
	.param .u64 .ptr .global .align 1 q_param_3,
	.param .u64 .ptr .global .align 1 q_param_4,
	.param .u64 .ptr .global .align 1 q_param_5,
	.param .u64 .ptr .global .align 1 q_param_6
)
.maxntid 256, 1, 1
{
	ret;
}
)ptx";

constexpr uintptr_t kX = 0x10000000, kScale = 0x20000000, kQ = 0x30000000,
                    kQScale = 0x40000000, kQt = 0x50000000,
                    kQtScale = 0x60000000, kHistory = 0x70000000;

std::vector<fp8rt_tensor> quantizeOperands() {
  return {makeTensor("x", kX, FP8RT_BF16, {256, 512}),
          makeTensor("scale", kScale, FP8RT_F32, {}),
          makeTensor("rowwise", kQ, FP8RT_E4M3, {256, 512}),
          makeTensor("rowwise_scale_inv", kQScale, FP8RT_F32, {}),
          makeTensor("columnwise", kQt, FP8RT_E4M3, {512, 256}),
          makeTensor("columnwise_scale_inv", kQtScale, FP8RT_F32, {}),
          makeTensor("amax_history", kHistory, FP8RT_F32, {16})};
}

class QuantizeKernelTest : public KernelFixture {
protected:
  void SetUp() override {
    KernelFixture::SetUp();
    load(kQuantizeJson, kQuantizePtx);
  }
};

TEST_F(QuantizeKernelTest, LoadsTheKind) {
  EXPECT_EQ(kernel->meta.kind, fp8schema::KernelKind::Quantize);
  fp8rt_kernel *other = nullptr;
  std::string json = replaced(kQuantizeJson, "\"kind\": \"quantize\"",
                              "\"kind\": \"transpose\"");
  EXPECT_EQ(fp8rt_kernel_load_from_memory(json.c_str(), kQuantizePtx, 0, &other),
            FP8RT_ERROR_INVALID_METADATA);
  EXPECT_NE(std::string(fp8rt_last_error())
                .find("kind: unknown value \"transpose\" (expected one of: "
                      "gemm, quantize, amax, compute_scale, "
                      "update_amax_history, dequantize, scales_to_mx, "
                      "convert)"),
            std::string::npos)
      << fp8rt_last_error();
}

TEST_F(QuantizeKernelTest, LaunchesOneCtaPerTileWithThePointersInOrder) {
  ASSERT_EQ(launch(quantizeOperands()), FP8RT_SUCCESS) << fp8rt_last_error();
  ASSERT_EQ(fake.launches.size(), 1u);
  const LaunchCall &call = fake.launches[0];
  // [ceil(512 / 128), ceil(256 / 128)]: tiles of the input, not an output.
  EXPECT_EQ(call.grid[0], 4u);
  EXPECT_EQ(call.grid[1], 2u);
  EXPECT_EQ(call.grid[2], 1u);
  EXPECT_EQ(call.block[0], 256u);
  EXPECT_EQ(call.sharedMemBytes, 65568u);
  expectPointers({kX, kScale, kQ, kQScale, kQt, kQtScale, kHistory});
}

TEST_F(QuantizeKernelTest, RejectsAColumnwiseOutputThatIsNotTransposed) {
  std::vector<fp8rt_tensor> ops = quantizeOperands();
  operand(ops, "columnwise").shape[0] = 256;
  operand(ops, "columnwise").shape[1] = 512;
  expectRejected(ops, "operand \"columnwise\": shape[0] is 256, expected 512");
}

TEST_F(QuantizeKernelTest, RejectsAnotherInputShape) {
  std::vector<fp8rt_tensor> ops = quantizeOperands();
  operand(ops, "x").shape[1] = 384;
  expectRejected(ops, "operand \"x\": shape[1] is 384, expected 512");
}

TEST_F(QuantizeKernelTest, RejectsAnotherInputDtype) {
  std::vector<fp8rt_tensor> ops = quantizeOperands();
  operand(ops, "x").dtype = FP8RT_F16;
  expectRejected(ops, "operand \"x\": dtype is f16, expected bf16");
}

TEST_F(QuantizeKernelTest, RejectsAnotherElementFormat) {
  std::vector<fp8rt_tensor> ops = quantizeOperands();
  operand(ops, "rowwise").dtype = FP8RT_E5M2;
  expectRejected(ops, "operand \"rowwise\": dtype is e5m2, expected e4m3");
}

TEST_F(QuantizeKernelTest, RejectsAnInputNotAlignedForVectorLoads) {
  std::vector<fp8rt_tensor> ops = quantizeOperands();
  operand(ops, "x").data = reinterpret_cast<void *>(kX + 8);
  expectRejected(ops, "operand \"x\": data 0x10000008 is not 16-byte aligned");
}

TEST_F(QuantizeKernelTest, RejectsOutputsNotAlignedForVectorStores) {
  std::vector<fp8rt_tensor> ops = quantizeOperands();
  operand(ops, "columnwise").data = reinterpret_cast<void *>(kQt + 4);
  expectRejected(ops,
                 "operand \"columnwise\": data 0x50000004 is not 8-byte aligned");
}

TEST_F(QuantizeKernelTest, RejectsAMissingOrNullHistory) {
  std::vector<fp8rt_tensor> ops = quantizeOperands();
  ops.pop_back();
  expectRejected(ops, "missing operand \"amax_history\" (f32 [16])");
  ops = quantizeOperands();
  operand(ops, "amax_history").data = nullptr;
  expectRejected(ops, "operand \"amax_history\": data is NULL");
}

TEST_F(QuantizeKernelTest, RejectsAHistoryOfAnotherLength) {
  std::vector<fp8rt_tensor> ops = quantizeOperands();
  operand(ops, "amax_history").shape[0] = 1024;
  expectRejected(ops, "operand \"amax_history\": shape[0] is 1024, expected 16");
}

TEST_F(QuantizeKernelTest, RejectsAScaleThatIsNotAScalar) {
  std::vector<fp8rt_tensor> ops = quantizeOperands();
  operand(ops, "scale").rank = 1;
  operand(ops, "scale").shape[0] = 1;
  expectRejected(ops, "operand \"scale\": rank is 1, expected 0");
}

// MXFP8 scales in the 128x4 atom layout: [ceil(R/128), ceil(C/128), 512]
// bytes; the logical [R, C/32] grid has the same byte count when R is a
// multiple of 128 and must still be rejected.
TEST(QuantizeKernelMetadata, MXScalesMustBeInTheAtomLayout) {
  FakeDriver &fake = FakeDriver::get();
  fake.reset();
  setDriverForTesting(&fake.api);
  std::string json =
      replaced(kQuantizeJson,
               R"("name": "rowwise_scale_inv", "dtype": "f32", "shape": [])",
               R"("name": "rowwise_scale_inv", "dtype": "ue8m0", "shape": [2, 4, 512])");
  fp8rt_kernel *kernel = nullptr;
  ASSERT_EQ(fp8rt_kernel_load_from_memory(json.c_str(), kQuantizePtx, 0, &kernel),
            FP8RT_SUCCESS)
      << fp8rt_last_error();
  for (const ParamSpec &param : kernel->meta.params)
    fake.paramSizes.push_back(param.size);
  std::vector<fp8rt_tensor> ops = quantizeOperands();
  fp8rt_tensor &scales = operand(ops, "rowwise_scale_inv");
  scales = makeTensor("rowwise_scale_inv", kQScale, FP8RT_UE8M0, {256, 16});
  EXPECT_EQ(fp8rt_launch(kernel, ops.data(), static_cast<int>(ops.size()),
                         nullptr),
            FP8RT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(fp8rt_last_error())
                .find("operand \"rowwise_scale_inv\": rank is 2, expected 3"),
            std::string::npos)
      << fp8rt_last_error();
  scales = makeTensor("rowwise_scale_inv", kQScale, FP8RT_UE8M0, {2, 4, 512});
  EXPECT_EQ(fp8rt_launch(kernel, ops.data(), static_cast<int>(ops.size()),
                         nullptr),
            FP8RT_SUCCESS)
      << fp8rt_last_error();
  fp8rt_kernel_destroy(kernel);
  setDriverForTesting(nullptr);
  fake.reset();
}

//===----------------------------------------------------------------------===//
// A run-time row count R: the i32 parameter `r`, symbolic scale extents
//===----------------------------------------------------------------------===//

// As fp8-compile writes it for a 1x128 blockwise fp8.quantize of
// tensor<?x512xbf16> with rowwise and untransposed columnwise outputs:
// 1x128 scales [4, roundup(R, 4)], 128x1 scales [ceil(R / 128), 512]; the
// kernel of kQuantizeJson with these operands and parameters.
const char *const kDynamicRowsOperands = R"json("operands": [
    {"name": "x", "dtype": "bf16", "shape": ["R", 512], "role": "input", "alignment": 16},
    {"name": "rowwise", "dtype": "e4m3", "shape": ["R", 512], "role": "output", "alignment": 8},
    {"name": "rowwise_scale_inv", "dtype": "f32", "shape": [4, "roundup(R, 4)"], "role": "output", "alignment": 4},
    {"name": "columnwise", "dtype": "e4m3", "shape": ["R", 512], "role": "output", "alignment": 8},
    {"name": "columnwise_scale_inv", "dtype": "f32", "shape": ["ceildiv(R, 128)", 512], "role": "output", "alignment": 4}
  ],
  "tensor_maps": [],)json";

// `json` (kQuantizeJson) with `operands`, a pointer parameter for each of
// `names`, then R.
std::string withDynamicRows(std::string json, const char *operands,
                            std::initializer_list<const char *> names) {
  json = json.substr(0, json.find("\"operands\": [")) + operands;
  json += "\n  \"params\": [\n";
  for (const char *name : names)
    json += std::string("    {\"name\": \"") + name +
            "\", \"kind\": \"pointer\", \"operand\": \"" + name + "\"},\n";
  return json + "    {\"name\": \"r\", \"kind\": \"i32\", \"value\": \"R\"}\n"
                "  ],\n"
                "  \"quantize\": {\"rows\": \"R\", \"cols\": 512, "
                "\"input_dtype\": \"bf16\"}\n}";
}

// kQuantizeJson with the operands above.
std::string dynamicRowsJson() {
  return withDynamicRows(kQuantizeJson, kDynamicRowsOperands,
                         {"x", "rowwise", "rowwise_scale_inv", "columnwise",
                          "columnwise_scale_inv"});
}

// kQuantizePtx with five pointers and the i32 R.
std::string dynamicRowsPtx() {
  return replaced(kQuantizePtx,
                  "\t.param .u64 .ptr .global .align 1 q_param_5,\n"
                  "\t.param .u64 .ptr .global .align 1 q_param_6\n",
                  "\t.param .u32 q_param_5\n");
}

template <typename T> std::vector<unsigned char> bytesOf(const T &value) {
  const auto *p = reinterpret_cast<const unsigned char *>(&value);
  return std::vector<unsigned char>(p, p + sizeof(T));
}

class DynamicRowsQuantizeKernelTest : public KernelFixture {
protected:
  void SetUp() override {
    KernelFixture::SetUp();
    load(dynamicRowsJson(), dynamicRowsPtx());
  }
  static std::vector<fp8rt_tensor> operands(int64_t r) {
    return {makeTensor("x", kX, FP8RT_BF16, {r, 512}),
            makeTensor("rowwise", kQ, FP8RT_E4M3, {r, 512}),
            makeTensor("rowwise_scale_inv", kQScale, FP8RT_F32,
                       {4, (r + 3) / 4 * 4}),
            makeTensor("columnwise", kQt, FP8RT_E4M3, {r, 512}),
            makeTensor("columnwise_scale_inv", kQtScale, FP8RT_F32,
                       {(r + 127) / 128, 512})};
  }
};

TEST_F(DynamicRowsQuantizeKernelTest, ParsesTheCeilDivExtent) {
  const Expr &e = kernel->meta.operands[4].shape[0];
  EXPECT_EQ(e.kind(), Expr::Kind::CeilDiv);
  EXPECT_EQ(e.str(), "ceildiv(R, 128)");
  EXPECT_EQ(e.symbols(), std::vector<std::string>{"R"});
  EXPECT_EQ(evaluateFor(e, 1), 1);
  EXPECT_EQ(evaluateFor(e, 128), 1);
  EXPECT_EQ(evaluateFor(e, 4097), 33);
}

TEST_F(DynamicRowsQuantizeKernelTest, BindsRAndTheGridForEveryRowCount) {
  for (int64_t r : {1, 127, 128, 208, 4097}) {
    fake.launches.clear();
    ASSERT_EQ(launch(operands(r)), FP8RT_SUCCESS)
        << "R = " << r << ": " << fp8rt_last_error();
    ASSERT_EQ(fake.launches.size(), 1u);
    const LaunchCall &call = fake.launches[0];
    EXPECT_EQ(call.grid[0], 4u);
    EXPECT_EQ(call.grid[1], static_cast<unsigned>((r + 127) / 128));
    ASSERT_EQ(call.params.size(), 6u);
    EXPECT_EQ(call.params[0], bytesOf(uint64_t(kX)));
    EXPECT_EQ(call.params[4], bytesOf(uint64_t(kQtScale)));
    EXPECT_EQ(call.params[5], bytesOf(static_cast<int32_t>(r)));
  }
}

TEST_F(DynamicRowsQuantizeKernelTest, RejectsOutputsOfAnotherRowCount) {
  std::vector<fp8rt_tensor> ops = operands(208);
  operand(ops, "rowwise").shape[0] = 256;
  expectRejected(ops, "operand \"rowwise\": shape[0] (R) is 256, but R is 208 "
                      "(bound by operand \"x\" shape[0])");
}

// Derived extents: checked against the bound R, never binding it.
TEST_F(DynamicRowsQuantizeKernelTest, RejectsScalesOfAnotherDerivedExtent) {
  struct Case {
    int64_t r;
    const char *name;
    int dim;
    int64_t extent;
    const char *message;
  } cases[] = {
      {127, "rowwise_scale_inv", 1, 127,
       "operand \"rowwise_scale_inv\": shape[1] (roundup(R, 4)) is 127, "
       "expected 128 (R is 127, bound by operand \"x\" shape[0])"},
      {4097, "columnwise_scale_inv", 0, 32,
       "operand \"columnwise_scale_inv\": shape[0] (ceildiv(R, 128)) is 32, "
       "expected 33 (R is 4097, bound by operand \"x\" shape[0])"}};
  for (const Case &c : cases) {
    std::vector<fp8rt_tensor> ops = operands(c.r);
    operand(ops, c.name).shape[c.dim] = c.extent;
    expectRejected(ops, c.message);
  }
}

// As fp8-compile writes it for a row-granularity fp8.quantize
// (#fp8.current, #fp8.granularity<row>) of tensor<?x512xbf16>: one CTA per
// band of 32 rows, 8 bands along x (tile_m = 8 * 32, tile_n = C / 8),
// scale_inv [R, 1], then R.
std::string rowGranularityJson() {
  std::string json =
      replaced(kQuantizeJson, "\"tile_n\": 128", "\"tile_n\": 64");
  return withDynamicRows(
      replaced(json, "\"tile_m\": 128", "\"tile_m\": 256"),
      R"json("operands": [
    {"name": "x", "dtype": "bf16", "shape": ["R", 512], "role": "input", "alignment": 16},
    {"name": "rowwise", "dtype": "e4m3", "shape": ["R", 512], "role": "output", "alignment": 8},
    {"name": "rowwise_scale_inv", "dtype": "f32", "shape": ["R", 1], "role": "output", "alignment": 4}
  ],
  "tensor_maps": [],)json",
      {"x", "rowwise", "rowwise_scale_inv"});
}

// kQuantizePtx with three pointers and the i32 R.
std::string rowGranularityPtx() {
  std::string ptx = kQuantizePtx;
  size_t from = ptx.find("\t.param .u64 .ptr .global .align 1 q_param_3");
  size_t to = ptx.find(")\n.maxntid");
  return ptx.substr(0, from) + "\t.param .u32 q_param_3\n" + ptx.substr(to);
}

class RowGranularityQuantizeKernelTest : public KernelFixture {
protected:
  void SetUp() override {
    KernelFixture::SetUp();
    load(rowGranularityJson(), rowGranularityPtx());
  }
};

std::vector<fp8rt_tensor> rowGranularityOperands(int64_t r) {
  return {makeTensor("x", kX, FP8RT_BF16, {r, 512}),
          makeTensor("rowwise", kQ, FP8RT_E4M3, {r, 512}),
          makeTensor("rowwise_scale_inv", kQScale, FP8RT_F32, {r, 1})};
}

TEST_F(RowGranularityQuantizeKernelTest, LaunchesOneCtaPerRowBand) {
  ASSERT_EQ(launch(rowGranularityOperands(4097)), FP8RT_SUCCESS)
      << fp8rt_last_error();
  ASSERT_EQ(fake.launches.size(), 1u);
  // 8 bands of 32 rows along x, ceil(4097 / 256) along y, R last.
  EXPECT_EQ(fake.launches[0].grid[0], 8u);
  EXPECT_EQ(fake.launches[0].grid[1], 17u);
  EXPECT_EQ(fake.launches[0].params.back(), bytesOf(int32_t(4097)));
}

TEST_F(RowGranularityQuantizeKernelTest, RejectsScalesOfAnotherShape) {
  std::vector<fp8rt_tensor> ops = rowGranularityOperands(208);
  operand(ops, "rowwise_scale_inv").shape[0] = 256;
  expectRejected(ops, "operand \"rowwise_scale_inv\": shape[0] (R) is 256, "
                      "but R is 208 (bound by operand \"x\" shape[0])");
  ops = rowGranularityOperands(208);
  operand(ops, "rowwise_scale_inv").shape[1] = 2;
  expectRejected(ops, "operand \"rowwise_scale_inv\": shape[1]");
}

// A transposed columnwise output with a run-time R ([512, R]: rows of R
// bytes), as fp8-compile writes it: R is passed as "r", which must be a
// multiple of 16; other row counts are rejected before any launch.
std::string transposedDynamicRowsJson() {
  std::string json = withDynamicRows(kQuantizeJson, R"json("operands": [
    {"name": "x", "dtype": "bf16", "shape": ["R", 512], "role": "input", "alignment": 16},
    {"name": "columnwise", "dtype": "e4m3", "shape": [512, "R"], "role": "output", "alignment": 8},
    {"name": "columnwise_scale_inv", "dtype": "f32", "shape": ["ceildiv(R, 128)", 512], "role": "output", "alignment": 4}
  ],
  "tensor_maps": [],)json",
                                     {"x", "columnwise", "columnwise_scale_inv"});
  return replaced(json, R"json("value": "R"})json",
                  R"json("value": "R", "multiple_of": 16, "reason": "the transposed columnwise output's rows are R bytes, 16-byte aligned"})json");
}

class TransposedDynamicRowsQuantizeKernelTest : public KernelFixture {
protected:
  void SetUp() override {
    KernelFixture::SetUp();
    load(transposedDynamicRowsJson(), rowGranularityPtx());
  }
  static std::vector<fp8rt_tensor> operands(int64_t r) {
    return {makeTensor("x", kX, FP8RT_BF16, {r, 512}),
            makeTensor("columnwise", kQt, FP8RT_E4M3, {512, r}),
            makeTensor("columnwise_scale_inv", kQtScale, FP8RT_F32,
                       {(r + 127) / 128, 512})};
  }
};

TEST_F(TransposedDynamicRowsQuantizeKernelTest, ParsesTheMultiple) {
  const ParamSpec &r = kernel->meta.params.back();
  EXPECT_EQ(r.multipleOf, 16);
  EXPECT_EQ(r.multipleOfReason, "the transposed columnwise output's rows are "
                                "R bytes, 16-byte aligned");
}

TEST_F(TransposedDynamicRowsQuantizeKernelTest, LaunchesRowCountsOf16Bytes) {
  for (int64_t r : {16, 128, 208, 4112}) {
    fake.launches.clear();
    ASSERT_EQ(launch(operands(r)), FP8RT_SUCCESS)
        << "R = " << r << ": " << fp8rt_last_error();
    ASSERT_EQ(fake.launches.size(), 1u);
    EXPECT_EQ(fake.launches[0].grid[1], static_cast<unsigned>((r + 127) / 128));
    EXPECT_EQ(fake.launches[0].params.back(), bytesOf(static_cast<int32_t>(r)));
  }
}

TEST_F(TransposedDynamicRowsQuantizeKernelTest, RejectsOtherRowCounts) {
  for (int64_t r : {1, 100, 127, 4097}) {
    fake.launches.clear();
    expectRejected(operands(r),
                   "param \"r\": R = " + std::to_string(r) +
                       " is not a multiple of 16 (the transposed columnwise "
                       "output's rows are R bytes, 16-byte aligned)");
    EXPECT_TRUE(fake.launches.empty());
  }
}

TEST(QuantizeKernelMetadata, MultipleOfNeedsASymbolAndARange) {
  std::string json = replaced(transposedDynamicRowsJson(),
                              "\"multiple_of\": 16", "\"multiple_of\": 1");
  KernelMetadata meta;
  Status status = parseKernelMetadata(json, "k.json", meta);
  EXPECT_EQ(status.code(), FP8RT_ERROR_INVALID_METADATA);
  EXPECT_NE(status.message().find("multiple_of"), std::string::npos)
      << status.message();
}

// Power-of-two blockwise scales written as MX scales (scale_granularity =
// mx 1x32, "_mxscales"): UE8M0 atoms [ceil(R/128), ceil(C/128), 512],
// 4-byte aligned (a tile's code is stored as one word).
std::string mxScalesJson() {
  return withDynamicRows(kQuantizeJson, R"json("operands": [
    {"name": "x", "dtype": "bf16", "shape": ["R", 512], "role": "input", "alignment": 16},
    {"name": "rowwise", "dtype": "e4m3", "shape": ["R", 512], "role": "output", "alignment": 8},
    {"name": "rowwise_scale_inv", "dtype": "ue8m0", "shape": ["ceildiv(R, 128)", 4, 512], "role": "output", "alignment": 4}
  ],
  "tensor_maps": [],)json",
                         {"x", "rowwise", "rowwise_scale_inv"});
}

class MXScalesQuantizeKernelTest : public KernelFixture {
protected:
  void SetUp() override {
    KernelFixture::SetUp();
    load(mxScalesJson(), rowGranularityPtx());
  }
  static std::vector<fp8rt_tensor> operands(int64_t r) {
    return {makeTensor("x", kX, FP8RT_BF16, {r, 512}),
            makeTensor("rowwise", kQ, FP8RT_E4M3, {r, 512}),
            makeTensor("rowwise_scale_inv", kQScale, FP8RT_UE8M0,
                       {(r + 127) / 128, 4, 512})};
  }
};

TEST_F(MXScalesQuantizeKernelTest, LaunchesWithTheAtoms) {
  ASSERT_EQ(launch(operands(4097)), FP8RT_SUCCESS) << fp8rt_last_error();
  EXPECT_EQ(fake.launches[0].grid[1], 33u);
}

TEST_F(MXScalesQuantizeKernelTest, RejectsLogicalScalesAndMisalignedAtoms) {
  // The logical [R, ceil(C/32)] tensor is not what the kernel writes.
  std::vector<fp8rt_tensor> ops = operands(208);
  operand(ops, "rowwise_scale_inv") =
      makeTensor("rowwise_scale_inv", kQScale, FP8RT_UE8M0, {208, 16});
  expectRejected(ops, "operand \"rowwise_scale_inv\": rank");
  ops = operands(208);
  operand(ops, "rowwise_scale_inv").data =
      reinterpret_cast<void *>(kQScale + 2);
  expectRejected(ops, "is not 4-byte aligned");
  ops = operands(208);
  operand(ops, "rowwise_scale_inv").dtype = FP8RT_F32;
  expectRejected(ops, "operand \"rowwise_scale_inv\": dtype is f32, expected ue8m0");
}

} // namespace
} // namespace fp8rt::testing
