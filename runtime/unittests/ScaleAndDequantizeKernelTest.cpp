// The kernels of fp8.compute_scale, fp8.update_amax_history (`"kind":
// "compute_scale"` / `"update_amax_history"`, one CTA), fp8.dequantize
// (`"kind": "dequantize"`, tiles of the output) and fp8.scales_to_mx
// (`"kind": "scales_to_mx"`, one CTA per 128 rows) through the runtime with
// the fake driver, as fp8-compile writes them; and the rounded-up extents
// ("roundup(M, 4)") of the GEMMs' MN-major 1x128 scales.
#include "KernelFixture.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace fp8rt::testing {
namespace {

// fp8.compute_scale %h, %prev {#fp8.delayed<history = 1024>, element_type =
// f8E4M3FN}: the history rolled in place.
const char *const kDelayedScaleJson = R"json({
  "format": "fp8-mlir-kernel", "version": 1,
  "name": "cs", "entry": "cs", "chip": "sm_90a", "kind": "compute_scale",
  "ptx": "cs.ptx", "block": [256, 1, 1], "cluster": [1, 1, 1],
  "dynamic_shared_memory_bytes": 32,
  "grid": {"kind": "fixed", "dims": [1, 1, 1]},
  "operands": [
    {"name": "amax_history", "dtype": "f32", "shape": [1024], "role": "output", "alignment": 4},
    {"name": "previous_scale", "dtype": "f32", "shape": [], "role": "input", "alignment": 4},
    {"name": "scale", "dtype": "f32", "shape": [], "role": "output", "alignment": 4},
    {"name": "scale_inv", "dtype": "f32", "shape": [], "role": "output", "alignment": 4}
  ],
  "tensor_maps": [],
  "params": [
    {"name": "amax_history", "kind": "pointer", "operand": "amax_history"},
    {"name": "previous_scale", "kind": "pointer", "operand": "previous_scale"},
    {"name": "scale", "kind": "pointer", "operand": "scale"},
    {"name": "scale_inv", "kind": "pointer", "operand": "scale_inv"}
  ],
  "compute_scale": {"rule": "delayed", "history": 1024, "algo": "max", "margin": 0, "dtype": "e4m3"}
})json";

// fp8.update_amax_history %h, %amax {#fp8.delayed<history = 16>}.
const char *const kRecordAmaxJson = R"json({
  "format": "fp8-mlir-kernel", "version": 1,
  "name": "cs", "entry": "cs", "chip": "sm_90a", "kind": "update_amax_history",
  "ptx": "cs.ptx", "block": [1, 1, 1], "dynamic_shared_memory_bytes": 0,
  "grid": {"kind": "fixed", "dims": [1, 1, 1]},
  "operands": [
    {"name": "amax_history", "dtype": "f32", "shape": [16], "role": "output", "alignment": 4},
    {"name": "amax", "dtype": "f32", "shape": [], "role": "input", "alignment": 4}
  ],
  "params": [
    {"name": "amax_history", "kind": "pointer", "operand": "amax_history"},
    {"name": "amax", "kind": "pointer", "operand": "amax"}
  ],
  "update_amax_history": {"history": 16}
})json";

// fp8.dequantize of a [200, 384] E4M3 tensor with 1x128 scales in the
// quantize kernels' MN-major layout [ceil(384/128), roundup(200, 4)].
const char *const kDequantizeJson = R"json({
  "format": "fp8-mlir-kernel", "version": 1,
  "name": "cs", "entry": "cs", "chip": "sm_90a", "kind": "dequantize",
  "ptx": "cs.ptx", "block": [256, 1, 1], "dynamic_shared_memory_bytes": 0,
  "grid": {"kind": "tiles", "tile_m": 128, "tile_n": 128, "operand": "y"},
  "operands": [
    {"name": "x", "dtype": "e4m3", "shape": [200, 384], "role": "input", "alignment": 8},
    {"name": "scale_inv", "dtype": "f32", "shape": [3, 200], "role": "input", "alignment": 4},
    {"name": "y", "dtype": "bf16", "shape": [200, 384], "role": "output", "alignment": 16}
  ],
  "params": [
    {"name": "x", "kind": "pointer", "operand": "x"},
    {"name": "scale_inv", "kind": "pointer", "operand": "scale_inv"},
    {"name": "y", "kind": "pointer", "operand": "y"}
  ],
  "dequantize": {"rows": 200, "cols": 384, "dtype": "e4m3", "out_dtype": "bf16",
                 "granularity": "1x128", "scale_layout": "mn_major_tma_aligned"}
})json";

// fp8.scales_to_mx of the UE8M0 1x128 scales [R, 2] of an [R, 256] operand
// (8 MX blocks, two atoms along K) with a run-time R.
const char *const kScalesToMXJson = R"json({
  "format": "fp8-mlir-kernel", "version": 1,
  "name": "cs", "entry": "cs", "chip": "sm_90a", "kind": "scales_to_mx",
  "ptx": "cs.ptx", "block": [128, 1, 1], "dynamic_shared_memory_bytes": 0,
  "grid": {"kind": "tiles", "tile_m": 128, "tile_n": 2, "operand": "scale_inv"},
  "operands": [
    {"name": "scale_inv", "dtype": "ue8m0", "shape": ["R", 2], "role": "input", "alignment": 1},
    {"name": "mx_scale_inv", "dtype": "ue8m0", "shape": ["ceildiv(R, 128)", 2, 512], "role": "output", "alignment": 4}
  ],
  "params": [
    {"name": "scale_inv", "kind": "pointer", "operand": "scale_inv"},
    {"name": "mx_scale_inv", "kind": "pointer", "operand": "mx_scale_inv"},
    {"name": "r", "kind": "i32", "value": "R"}
  ],
  "scales_to_mx": {"rows": "R", "mx_blocks": 8, "tile": [1, 128], "input_dtype": "ue8m0", "input_layout": "row_major", "scale_layout": "mx_atom_128x4_ue8m0"}
})json";

// A PTX entry `cs` with `count` pointer parameters.
std::string pointerEntryPtx(int count) {
  std::string ptx = ".version 8.0\n.target sm_90a\n.address_size 64\n"
                    ".visible .entry cs(\n";
  for (int i = 0; i < count; ++i)
    ptx += "\t.param .u64 .ptr .global .align 1 cs_param_" + std::to_string(i) +
           (i + 1 < count ? ",\n" : "\n");
  return ptx + ")\n{\n\tret;\n}\n";
}

constexpr uintptr_t kHistory = 0x10000000, kPrevious = 0x20000000,
                    kScale = 0x30000000, kScaleInv = 0x40000000,
                    kAmax = 0x50000000, kX = 0x60000000, kY = 0x70000000;

//===----------------------------------------------------------------------===//
// compute_scale (delayed)
//===----------------------------------------------------------------------===//

class DelayedScaleKernelTest : public KernelFixture {
protected:
  void SetUp() override {
    KernelFixture::SetUp();
    load(kDelayedScaleJson, pointerEntryPtx(4));
  }
  static std::vector<fp8rt_tensor> operands() {
    return {makeTensor("amax_history", kHistory, FP8RT_F32, {1024}),
            makeTensor("previous_scale", kPrevious, FP8RT_F32, {}),
            makeTensor("scale", kScale, FP8RT_F32, {}),
            makeTensor("scale_inv", kScaleInv, FP8RT_F32, {})};
  }
};

TEST_F(DelayedScaleKernelTest, LaunchesOneCtaWithThePointersInOrder) {
  EXPECT_EQ(kernel->meta.kind, fp8schema::KernelKind::ComputeScale);
  ASSERT_EQ(launch(operands()), FP8RT_SUCCESS) << fp8rt_last_error();
  const LaunchCall &call = fake.launches[0];
  EXPECT_EQ(call.grid[0], 1u);
  EXPECT_EQ(call.grid[1], 1u);
  EXPECT_EQ(call.block[0], 256u);
  EXPECT_EQ(call.sharedMemBytes, 32u);
  expectPointers({kHistory, kPrevious, kScale, kScaleInv});
}

TEST_F(DelayedScaleKernelTest, RejectsAHistoryOfAnotherLength) {
  std::vector<fp8rt_tensor> ops = operands();
  operand(ops, "amax_history").shape[0] = 16;
  expectRejected(ops, "operand \"amax_history\": shape[0] is 16, expected 1024");
}

TEST_F(DelayedScaleKernelTest, RejectsAMissingPreviousScale) {
  std::vector<fp8rt_tensor> ops = operands();
  ops.erase(ops.begin() + 1);
  expectRejected(ops, "missing operand \"previous_scale\" (f32 [])");
}

TEST_F(DelayedScaleKernelTest, RejectsAScaleThatIsNotAScalar) {
  std::vector<fp8rt_tensor> ops = operands();
  operand(ops, "scale") = makeTensor("scale", kScale, FP8RT_F32, {1});
  expectRejected(ops, "operand \"scale\": rank is 1, expected 0");
}

TEST_F(DelayedScaleKernelTest, RejectsAHistoryOfAnotherDtype) {
  std::vector<fp8rt_tensor> ops = operands();
  operand(ops, "amax_history").dtype = FP8RT_BF16;
  expectRejected(ops, "operand \"amax_history\": dtype is bf16, expected f32");
}

TEST_F(DelayedScaleKernelTest, RejectsAMisalignedScaleInv) {
  std::vector<fp8rt_tensor> ops = operands();
  operand(ops, "scale_inv").data = reinterpret_cast<void *>(kScaleInv + 2);
  expectRejected(ops, "operand \"scale_inv\": data 0x40000002 is not 4-byte "
                      "aligned");
}

//===----------------------------------------------------------------------===//
// update_amax_history
//===----------------------------------------------------------------------===//

class RecordAmaxKernelTest : public KernelFixture {
protected:
  void SetUp() override {
    KernelFixture::SetUp();
    load(kRecordAmaxJson, pointerEntryPtx(2));
  }
  static std::vector<fp8rt_tensor> operands() {
    return {makeTensor("amax_history", kHistory, FP8RT_F32, {16}),
            makeTensor("amax", kAmax, FP8RT_F32, {})};
  }
};

TEST_F(RecordAmaxKernelTest, LaunchesOneThread) {
  EXPECT_EQ(kernel->meta.kind, fp8schema::KernelKind::UpdateAmaxHistory);
  ASSERT_EQ(launch(operands()), FP8RT_SUCCESS) << fp8rt_last_error();
  EXPECT_EQ(fake.launches[0].block[0], 1u);
  expectPointers({kHistory, kAmax});
}

TEST_F(RecordAmaxKernelTest, RejectsANullHistoryAndAVectorAmax) {
  std::vector<fp8rt_tensor> ops = operands();
  operand(ops, "amax_history").data = nullptr;
  expectRejected(ops, "operand \"amax_history\": data is NULL");
  ops = operands();
  operand(ops, "amax") = makeTensor("amax", kAmax, FP8RT_F32, {16});
  expectRejected(ops, "operand \"amax\": rank is 1, expected 0");
}

//===----------------------------------------------------------------------===//
// dequantize
//===----------------------------------------------------------------------===//

class DequantizeKernelTest : public KernelFixture {
protected:
  void SetUp() override {
    KernelFixture::SetUp();
    load(kDequantizeJson, pointerEntryPtx(3));
  }
  static std::vector<fp8rt_tensor> operands() {
    return {makeTensor("x", kX, FP8RT_E4M3, {200, 384}),
            makeTensor("scale_inv", kScale, FP8RT_F32, {3, 200}),
            makeTensor("y", kY, FP8RT_BF16, {200, 384})};
  }
};

TEST_F(DequantizeKernelTest, LaunchesOneCtaPerOutputTile) {
  EXPECT_EQ(kernel->meta.kind, fp8schema::KernelKind::Dequantize);
  ASSERT_EQ(launch(operands()), FP8RT_SUCCESS) << fp8rt_last_error();
  const LaunchCall &call = fake.launches[0];
  EXPECT_EQ(call.grid[0], 3u); // ceil(384 / 128)
  EXPECT_EQ(call.grid[1], 2u); // ceil(200 / 128)
  expectPointers({kX, kScale, kY});
}

TEST_F(DequantizeKernelTest, RejectsLogicalScalesInsteadOfTheLayout) {
  // The logical [R, ceil(C/128)] grid is not what the kernel reads.
  std::vector<fp8rt_tensor> ops = operands();
  operand(ops, "scale_inv") = makeTensor("scale_inv", kScale, FP8RT_F32, {200, 3});
  expectRejected(ops, "operand \"scale_inv\": shape[0] is 200, expected 3");
}

TEST_F(DequantizeKernelTest, RejectsAnotherOutputDtypeAndAMisalignedOutput) {
  std::vector<fp8rt_tensor> ops = operands();
  operand(ops, "y").dtype = FP8RT_F16;
  expectRejected(ops, "operand \"y\": dtype is f16, expected bf16");
  ops = operands();
  operand(ops, "y").data = reinterpret_cast<void *>(kY + 8);
  expectRejected(ops, "operand \"y\": data 0x70000008 is not 16-byte aligned");
}

TEST_F(DequantizeKernelTest, RejectsAnInputOfAnotherFormat) {
  std::vector<fp8rt_tensor> ops = operands();
  operand(ops, "x").dtype = FP8RT_E5M2;
  expectRejected(ops, "operand \"x\": dtype is e5m2, expected e4m3");
}

// fp8.dequantize of tensor<?x384xf8E4M3FN> with 1x128 scales, as
// fp8-compile writes it: R bound from x, scales [3, roundup(R, 4)], R
// passed last.
std::string dynamicRowsDequantizeJson() {
  std::string json = kDequantizeJson;
  auto replace = [&](const std::string &from, const std::string &to) {
    json.replace(json.find(from), from.size(), to);
  };
  replace("\"shape\": [200, 384], \"role\": \"input\"",
          "\"shape\": [\"R\", 384], \"role\": \"input\"");
  replace("\"shape\": [3, 200]", "\"shape\": [3, \"roundup(R, 4)\"]");
  replace("\"shape\": [200, 384], \"role\": \"output\"",
          "\"shape\": [\"R\", 384], \"role\": \"output\"");
  replace("{\"name\": \"y\", \"kind\": \"pointer\", \"operand\": \"y\"}",
          "{\"name\": \"y\", \"kind\": \"pointer\", \"operand\": \"y\"},\n"
          "    {\"name\": \"r\", \"kind\": \"i32\", \"value\": \"R\"}");
  replace("\"rows\": 200", "\"rows\": \"R\"");
  return json;
}

// pointerEntryPtx(3) and an i32.
std::string dynamicRowsDequantizePtx() {
  std::string ptx = pointerEntryPtx(3);
  std::string last = "cs_param_2\n";
  ptx.replace(ptx.find(last), last.size(), "cs_param_2,\n\t.param .u32 cs_param_3\n");
  return ptx;
}

class DynamicRowsDequantizeKernelTest : public KernelFixture {
protected:
  void SetUp() override {
    KernelFixture::SetUp();
    load(dynamicRowsDequantizeJson(), dynamicRowsDequantizePtx());
  }
  static std::vector<fp8rt_tensor> operands(int64_t r) {
    return {makeTensor("x", kX, FP8RT_E4M3, {r, 384}),
            makeTensor("scale_inv", kScale, FP8RT_F32, {3, (r + 3) / 4 * 4}),
            makeTensor("y", kY, FP8RT_BF16, {r, 384})};
  }
};

TEST_F(DynamicRowsDequantizeKernelTest, BindsRAndTheGridForEveryRowCount) {
  for (int64_t r : {1, 127, 128, 208, 4097}) {
    fake.launches.clear();
    ASSERT_EQ(launch(operands(r)), FP8RT_SUCCESS)
        << "R = " << r << ": " << fp8rt_last_error();
    const LaunchCall &call = fake.launches[0];
    EXPECT_EQ(call.grid[0], 3u);
    EXPECT_EQ(call.grid[1], static_cast<unsigned>((r + 127) / 128));
    ASSERT_EQ(call.params.size(), 4u);
    int32_t value = static_cast<int32_t>(r);
    EXPECT_EQ(call.params[3],
              std::vector<unsigned char>(
                  reinterpret_cast<unsigned char *>(&value),
                  reinterpret_cast<unsigned char *>(&value) + sizeof(value)));
  }
}

TEST_F(DynamicRowsDequantizeKernelTest, RejectsMismatchedRowCounts) {
  std::vector<fp8rt_tensor> ops = operands(208);
  operand(ops, "y").shape[0] = 200;
  expectRejected(ops, "operand \"y\": shape[0] (R) is 200, but R is 208");
  ops = operands(127);
  operand(ops, "scale_inv").shape[1] = 127;
  expectRejected(ops, "operand \"scale_inv\": shape[1] (roundup(R, 4)) is "
                      "127, expected 128");
}

//===----------------------------------------------------------------------===//
// roundup(M, 4): the sm_90a GEMM's MN-major 1x128 A scales
//===----------------------------------------------------------------------===//

class RoundedUpExtentTest : public KernelFixture {
protected:
  void SetUp() override {
    KernelFixture::SetUp();
    load(replaced(
             kExampleJson,
             R"json("name": "a_scale_inv", "dtype": "f32", "shape": [])json",
             R"json("name": "a_scale_inv", "dtype": "f32", "shape": [16, "roundup(M, 4)"])json"),
         kExamplePtx);
  }
  static std::vector<fp8rt_tensor> operands(int64_t m, int64_t scaleRows) {
    return {makeTensor("a", kA, FP8RT_E4M3, {m, 2048}),
            makeTensor("b", kB, FP8RT_E4M3, {7168, 2048}),
            makeTensor("a_scale_inv", kAScale, FP8RT_F32, {16, scaleRows}),
            makeTensor("b_scale_inv", kBScale, FP8RT_F32, {}),
            makeTensor("d", kD, FP8RT_BF16, {m, 7168})};
  }
};

TEST_F(RoundedUpExtentTest, ParsesAndPrints) {
  const Expr &e = kernel->meta.operands[2].shape[1];
  EXPECT_EQ(e, Expr::roundUp(Expr::symbol("M"), Expr::constant(4)));
  EXPECT_EQ(e.str(), "roundup(M, 4)");
  EXPECT_EQ(evaluateFor(e, 127), 128);
  EXPECT_EQ(evaluateFor(e, 128), 128);
  EXPECT_EQ(evaluateFor(e, 1), 4);
}

TEST_F(RoundedUpExtentTest, AcceptsThePaddedExtentForEveryM) {
  for (int64_t m : {1, 127, 128, 4097}) {
    fake.launches.clear();
    int64_t padded = (m + 3) / 4 * 4;
    EXPECT_EQ(launch(operands(m, padded)), FP8RT_SUCCESS)
        << "M = " << m << ": " << fp8rt_last_error();
  }
}

TEST_F(RoundedUpExtentTest, RejectsTheUnpaddedExtent) {
  expectRejected(operands(127, 127),
                 "operand \"a_scale_inv\": shape[1] (roundup(M, 4)) is 127, "
                 "expected 128 (M is 127, bound by operand \"a\" shape[0])");
}

TEST(RoundedUpExtent, NeedsItsSymbolBoundByAPresentOperand) {
  // A rounded-up extent checks a symbol, it never binds one: here only the
  // optional bias binds B, and without the bias the launch is rejected.
  FakeDriver &fake = FakeDriver::get();
  fake.reset();
  setDriverForTesting(&fake.api);
  std::string json = replaced(
      replaced(kExampleJson,
               R"json("name": "a_scale_inv", "dtype": "f32", "shape": [])json",
               R"json("name": "a_scale_inv", "dtype": "f32", "shape": [16, "roundup(B, 4)"])json"),
      R"json("name": "bias", "dtype": "bf16", "shape": [7168])json",
      R"json("name": "bias", "dtype": "bf16", "shape": ["B"])json");
  fp8rt_kernel *kernel = nullptr;
  ASSERT_EQ(fp8rt_kernel_load_from_memory(json.c_str(), kExamplePtx, 0, &kernel),
            FP8RT_SUCCESS)
      << fp8rt_last_error();
  for (const ParamSpec &param : kernel->meta.params)
    fake.paramSizes.push_back(param.size);
  std::vector<fp8rt_tensor> ops = {
      makeTensor("a", kA, FP8RT_E4M3, {128, 2048}),
      makeTensor("b", kB, FP8RT_E4M3, {7168, 2048}),
      makeTensor("a_scale_inv", kAScale, FP8RT_F32, {16, 8}),
      makeTensor("b_scale_inv", kBScale, FP8RT_F32, {}),
      makeTensor("d", kD, FP8RT_BF16, {128, 7168})};
  EXPECT_EQ(fp8rt_launch(kernel, ops.data(), static_cast<int>(ops.size()),
                         nullptr),
            FP8RT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(fp8rt_last_error())
                .find("operand \"a_scale_inv\": shape[1] (roundup(B, 4)): "
                      "symbol \"B\" is only named by absent optional "
                      "operands"),
            std::string::npos)
      << fp8rt_last_error();
  ops.push_back(makeTensor("bias", kBias, FP8RT_BF16, {6}));
  EXPECT_EQ(fp8rt_launch(kernel, ops.data(), static_cast<int>(ops.size()),
                         nullptr),
            FP8RT_SUCCESS)
      << fp8rt_last_error();
  fp8rt_kernel_destroy(kernel);
  setDriverForTesting(nullptr);
  fake.reset();
}

//===----------------------------------------------------------------------===//
// scales_to_mx
//===----------------------------------------------------------------------===//

class ScalesToMXKernelTest : public KernelFixture {
protected:
  void SetUp() override {
    KernelFixture::SetUp();
    std::string ptx = pointerEntryPtx(2);
    ptx.replace(ptx.find("cs_param_1\n"), std::strlen("cs_param_1\n"),
                "cs_param_1,\n\t.param .u32 cs_param_2\n");
    load(kScalesToMXJson, ptx);
  }
  static std::vector<fp8rt_tensor> operands(int64_t rows, int64_t bands) {
    return {makeTensor("scale_inv", kX, FP8RT_UE8M0, {rows, 2}),
            makeTensor("mx_scale_inv", kY, FP8RT_UE8M0, {bands, 2, 512})};
  }
};

TEST_F(ScalesToMXKernelTest, LaunchesOneCtaPer128RowsWithR) {
  EXPECT_EQ(kernel->meta.kind, fp8schema::KernelKind::ScalesToMx);
  ASSERT_EQ(launch(operands(300, 3)), FP8RT_SUCCESS) << fp8rt_last_error();
  const LaunchCall &call = fake.launches[0];
  EXPECT_EQ(call.grid[0], 1u);
  EXPECT_EQ(call.grid[1], 3u);
  EXPECT_EQ(call.block[0], 128u);
  ASSERT_EQ(call.params.size(), 3u);
  int32_t r = 0;
  std::memcpy(&r, call.params[2].data(), sizeof(r));
  EXPECT_EQ(r, 300);
}

TEST_F(ScalesToMXKernelTest, RejectsAtomsForAnotherR) {
  expectRejected(operands(300, 2),
                 "operand \"mx_scale_inv\": shape[0] (ceildiv(R, 128)) is 2, "
                 "expected 3 (R is 300, bound by operand \"scale_inv\" "
                 "shape[0])");
}

} // namespace
} // namespace fp8rt::testing
