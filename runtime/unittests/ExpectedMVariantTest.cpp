// Launch variants chosen by the caller's hint ("variant_choice":
// "expected_m", the masked grouped GEMMs): fp8rt_kernel_for_expected_m
// picks among the kernel and its variants for G groups of expected_m rows,
// a launch of the kernel itself always runs the kernel, and the metadata
// and arguments are checked. Against the fake driver.
#include "KernelFixture.h"
#include "LaunchArguments.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace fp8rt::testing {
namespace {

const char *const kPersistent =
    "{\"kind\": \"persistent\", \"tile_m\": 128, \"tile_n\": 256}";
const char *const kDenseD = "\"shape\": [\"M\", 7168], \"role\": \"output\"";
// The example kernel as a masked grouped GEMM's: D [4, M, 7168].
const char *const kGroupedD = "\"shape\": [4, \"M\", 7168], \"role\": \"output\"";

// The example kernel named `name` with a `tileM` x `tileN` persistent grid
// of `throughput` percent over D [4, M, 7168], plus the top-level `extra`.
std::string groupedJson(const std::string &name, int tileM, int tileN,
                        int throughput, const std::string &extra = "") {
  std::string json = replaced(kExampleJson, kDenseD, kGroupedD);
  json = replaced(json, kPersistent,
                  "{\"kind\": \"persistent\", \"tile_m\": " +
                      std::to_string(tileM) + ", \"tile_n\": " +
                      std::to_string(tileN) + ", \"throughput\": " +
                      std::to_string(throughput) + "}");
  json = replaced(json, "\"name\": \"gemm_tn_e4m3_bf16_n7168_k2048\"",
                  "\"name\": \"" + name + "\"");
  return extra.empty() ? json
                       : replaced(json, "\"version\": 1,",
                                  "\"version\": 1, " + extra + ",");
}

constexpr const char *kHinted =
    "\"variants\": [\"medium.json\", \"small.json\"], "
    "\"variant_choice\": \"expected_m\"";

// The operands of the grouped example: A [M, 2048], D [4, M, 7168].
std::vector<fp8rt_tensor> groupedOperands(int64_t m) {
  return {makeTensor("a", kA, FP8RT_E4M3, {m, 2048}),
          makeTensor("b", kB, FP8RT_E4M3, {7168, 2048}),
          makeTensor("a_scale_inv", kAScale, FP8RT_F32, {}),
          makeTensor("b_scale_inv", kBScale, FP8RT_F32, {}),
          makeTensor("d", kD, FP8RT_BF16, {4, m, 7168})};
}

class ExpectedMVariantTest : public KernelFixture {
protected:
  std::filesystem::path dir;

  void SetUp() override {
    KernelFixture::SetUp();
    char pattern[] = "/tmp/fp8rt-expected-m-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir = pattern;
    write("gemm_tn_e4m3_bf16_n7168_k2048.ptx", kExamplePtx);
    write("medium.json",
          groupedJson("medium", 128, 128, 85, "\"variant_of\": \"large\""));
    write("small.json",
          groupedJson("small", 64, 128, 65, "\"variant_of\": \"large\""));
  }
  void TearDown() override {
    KernelFixture::TearDown();
    std::filesystem::remove_all(dir);
  }

  std::string write(const std::string &name, const std::string &text) {
    std::ofstream(dir / name, std::ios::binary) << text;
    return (dir / name).string();
  }
  // Loads `json` from the directory (its variants with it).
  void loadFile(const std::string &json) {
    std::string path = write("large.json", json);
    ASSERT_EQ(fp8rt_kernel_load(path.c_str(), &kernel), FP8RT_SUCCESS)
        << fp8rt_last_error();
    for (const ParamSpec &param : kernel->meta.params)
      fake.paramSizes.push_back(param.size);
  }
  // The name of the kernel fp8rt_kernel_for_expected_m gives.
  std::string chosen(int64_t expectedM, int numSMs = 132) {
    fp8rt_kernel *out = nullptr;
    EXPECT_EQ(fp8rt_kernel_for_expected_m(kernel, expectedM, numSMs, &out),
              FP8RT_SUCCESS)
        << fp8rt_last_error();
    return out ? fp8rt_kernel_name(out) : "";
  }
  void expectInvalid(fp8rt_status status, const std::string &message) {
    EXPECT_EQ(status, FP8RT_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(fp8rt_last_error()).find(message), std::string::npos)
        << "got:      " << fp8rt_last_error() << "\nexpected: " << message;
  }
};

TEST_F(ExpectedMVariantTest, TheHintPicksTheFewestWeightedWavesOfAllGroups) {
  loadFile(groupedJson("large", 128, 256, 100, kHinted));
  ASSERT_EQ(kernel->variants.size(), 2u);
  EXPECT_EQ(kernel->meta.hintGroups, 4);
  EXPECT_EQ(kernel->meta.hintColumns, 7168);
  // 4 groups, N = 7168: 28 tile columns of 256, 56 of 128. expected_m = 1:
  // 112 / 224 / 224 tiles, i.e. 1 / 2 / 2 waves on 132 SMs, weighted 328 /
  // 386 / 252: the 64x128 tiles.
  EXPECT_EQ(chosen(1), "small");
  EXPECT_EQ(chosen(64), "small");
  // 100 rows: 112 / 224 / 448 tiles, 1 / 2 / 4 waves: the kernel's.
  EXPECT_EQ(chosen(100), "large");
  // 300 rows: 336 / 672 / 1120 tiles, 3 / 6 / 9 waves (983 / 1157 / 1134).
  EXPECT_EQ(chosen(300), "large");
  // The groups count: one group of 64 rows (N = 7168) would be 28 / 56 / 56
  // tiles; four make 112 / 224 / 224. On 64 SMs: 2 / 4 / 4 waves (655 /
  // 771 / 504).
  EXPECT_EQ(chosen(64, 64), "small");
  // A variant gives itself: it has no variants.
  fp8rt_kernel *small = nullptr, *again = nullptr;
  ASSERT_EQ(fp8rt_kernel_for_expected_m(kernel, 1, 132, &small),
            FP8RT_SUCCESS);
  ASSERT_EQ(fp8rt_kernel_for_expected_m(small, 1024, 132, &again),
            FP8RT_SUCCESS);
  EXPECT_EQ(again, small);
}

TEST_F(ExpectedMVariantTest, ALaunchOfTheKernelRunsTheKernel) {
  loadFile(groupedJson("large", 128, 256, 100, kHinted));
  // M = 64: by M the 64x128 tiles would win; the kernel runs its own,
  // 4 x 28 = 112 CTAs.
  std::vector<fp8rt_tensor> ops = groupedOperands(64);
  ASSERT_EQ(launch(ops), FP8RT_SUCCESS) << fp8rt_last_error();
  // The hinted variant launches its own grid over the same [4, M, N]:
  // 4 x 56 tiles, one CTA per SM.
  fp8rt_kernel *small = nullptr;
  ASSERT_EQ(fp8rt_kernel_for_expected_m(kernel, 16, 132, &small),
            FP8RT_SUCCESS);
  ASSERT_EQ(fp8rt_launch(small, ops.data(), static_cast<int>(ops.size()),
                         nullptr),
            FP8RT_SUCCESS)
      << fp8rt_last_error();
  ASSERT_EQ(fake.launches.size(), 2u);
  EXPECT_EQ(fake.launches[0].grid[0], 112u);
  EXPECT_EQ(fake.launches[1].grid[0], 132u);
}

TEST_F(ExpectedMVariantTest, BadHintsAndKernelsAreRejected) {
  loadFile(groupedJson("large", 128, 256, 100, kHinted));
  fp8rt_kernel *out = kernel;
  expectInvalid(fp8rt_kernel_for_expected_m(kernel, 0, 132, &out),
                "kernel \"large\": expected_m = 0: expected the rows a group "
                "is expected to hold, at least 1");
  EXPECT_EQ(out, nullptr);
  expectInvalid(fp8rt_kernel_for_expected_m(kernel, -5, 132, &out),
                "expected_m = -5");
  expectInvalid(fp8rt_kernel_for_expected_m(kernel, 8, 0, &out),
                "num_sms = 0: expected at least 1");
  expectInvalid(fp8rt_kernel_for_expected_m(nullptr, 8, 132, &out),
                "kernel is NULL");
  expectInvalid(fp8rt_kernel_for_expected_m(kernel, 8, 132, nullptr),
                "out is NULL");
  fp8rt_kernel_destroy(kernel);
  kernel = nullptr;

  // Variants chosen by M at each launch take no hint.
  std::string dense = write(
      "dense.json",
      replaced(groupedJson("dense", 128, 256, 100,
                           "\"variants\": [\"small.json\"]"),
               kGroupedD, kDenseD));
  write("small.json", replaced(groupedJson("small", 64, 128, 65,
                                           "\"variant_of\": \"dense\""),
                               kGroupedD, kDenseD));
  ASSERT_EQ(fp8rt_kernel_load(dense.c_str(), &kernel), FP8RT_SUCCESS)
      << fp8rt_last_error();
  expectInvalid(fp8rt_kernel_for_expected_m(kernel, 8, 132, &out),
                "kernel \"dense\": its launch variants are chosen by M at "
                "each launch (\"variant_choice\": \"m\")");
  fp8rt_kernel_destroy(kernel);
  kernel = nullptr;

  // A kernel without variants (from memory, say) gives itself.
  load(groupedJson("large", 128, 256, 100, kHinted), kExamplePtx);
  ASSERT_EQ(fp8rt_kernel_for_expected_m(kernel, 8, 132, &out), FP8RT_SUCCESS);
  EXPECT_EQ(out, kernel);
}

TEST_F(ExpectedMVariantTest, TheVariantChoiceIsChecked) {
  auto error = [](const std::string &json) {
    KernelMetadata meta;
    return parseKernelMetadata(json, "k.json", meta).message();
  };
  EXPECT_NE(error(groupedJson("k", 128, 256, 100,
                              "\"variant_choice\": \"expected_m\""))
                .find("variant_choice: a kernel without \"variants\" has "
                      "nothing to choose"),
            std::string::npos);
  EXPECT_NE(error(replaced(groupedJson("k", 128, 256, 100, kHinted), kGroupedD,
                           kDenseD))
                .find("variant_choice: \"expected_m\" counts the tiles of "
                      "groups: the grid operand must be [G, M, N] with a "
                      "constant G and N"),
            std::string::npos);
  EXPECT_NE(error(groupedJson("k", 128, 256, 100,
                              "\"variants\": [\"v.json\"], "
                              "\"variant_choice\": \"by_m\""))
                .find("variant_choice"),
            std::string::npos);
}

} // namespace
} // namespace fp8rt::testing
