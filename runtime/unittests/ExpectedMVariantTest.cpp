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

TEST_F(ExpectedMVariantTest, TheHintPicksTheFewestWavesOfAllGroups) {
  loadFile(groupedJson("large", 128, 256, 100, kHinted));
  ASSERT_EQ(kernel->variants.size(), 2u);
  EXPECT_EQ(kernel->meta.hintGroups, 4);
  EXPECT_EQ(kernel->meta.hintColumns, 7168);
  // 4 groups, N = 7168: 28 tile columns of 256, 56 of 128. expected_m = 1:
  // 112 / 224 / 224 tiles (large / medium / small), 1 / 2 / 2 waves on 132
  // SMs: the kernel's, though its tiles are the largest.
  EXPECT_EQ(chosen(1), "large");
  // On 256 SMs one wave each: the most tiles in it (224), then the smaller
  // tile (64x128: as many tiles, half the padding rows).
  EXPECT_EQ(chosen(1, 256), "small");
  EXPECT_EQ(chosen(64, 256), "small");
  // 100 rows: 112 / 224 / 448 tiles, 1 / 1 / 2 waves on 256 SMs.
  EXPECT_EQ(chosen(100, 256), "medium");
  // 300 rows: 336 / 672 / 1120 tiles, 2 / 3 / 5 waves.
  EXPECT_EQ(chosen(300, 256), "large");
  // A variant gives itself: it has no variants.
  fp8rt_kernel *small = nullptr, *again = nullptr;
  ASSERT_EQ(fp8rt_kernel_for_expected_m(kernel, 1, 256, &small),
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
  ASSERT_EQ(fp8rt_kernel_for_expected_m(kernel, 16, 256, &small),
            FP8RT_SUCCESS);
  EXPECT_STREQ(fp8rt_kernel_name(small), "small");
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

// The variant set of the blockwise decode kernel (tile M 128 or 64 by tile
// N in steps of 16; the compiler's masked launch variants of a 128x192
// kernel), as metadata.
std::vector<KernelMetadata> decodeVariantSet() {
  std::vector<std::pair<int, int>> tiles = {
      {128, 192}, {128, 160}, {128, 144}, {128, 128}, {128, 112}};
  for (int tileN : {192, 160, 144, 128, 112, 96, 80, 64, 48, 32, 16})
    tiles.push_back({64, tileN});
  std::vector<KernelMetadata> metas;
  for (auto [tileM, tileN] : tiles) {
    KernelMetadata meta;
    std::string json = groupedJson("k", tileM, tileN, 100);
    Status parsed = parseKernelMetadata(json, "k.json", meta);
    EXPECT_TRUE(parsed.ok()) << parsed.message();
    metas.push_back(std::move(meta));
  }
  return metas;
}

// The tile (M x N) selectExpectedMVariant picks from `metas`.
std::string pick(const std::vector<KernelMetadata> &metas, int64_t expectedM,
                 int64_t n, int64_t groups, int numSMs = 132) {
  std::vector<const KernelMetadata *> candidates;
  for (const KernelMetadata &meta : metas)
    candidates.push_back(&meta);
  const GridSpec &grid =
      metas[selectExpectedMVariant(candidates, expectedM, n, groups, numSMs)]
          .grid;
  return std::to_string(grid.tileM) + "x" + std::to_string(grid.tileN);
}

TEST(ExpectedMVariantChoice, FewestWavesThenTheFullestLastWave) {
  std::vector<KernelMetadata> set = decodeVariantSet();
  // One expert of 789 rows, N = 4096 (7 rows of 128-row tiles): no tile
  // makes one wave; 128x112 makes two, the last of 127 tiles (7 x 37 =
  // 259), against 92 for 128x128 and 22 for the kernel's 128x192.
  EXPECT_EQ(pick(set, 789, 4096, 1), "128x112");
  // Two of 525 rows (5 tile rows each): 2 x 5 x 26 = 260 tiles of 128x160.
  EXPECT_EQ(pick(set, 525, 4096, 2), "128x160");
  // Four of 169: 4 x 3 x 22 = 264 tiles of 64x192, two full waves.
  EXPECT_EQ(pick(set, 169, 4096, 4), "64x192");
  // Eight of 87: 8 x 32 = 256 tiles of 128x128 (124 in the last wave).
  EXPECT_EQ(pick(set, 87, 4096, 8), "128x128");
  // One expert of one row, N = 2048: one wave of 128 tiles of 64x16.
  EXPECT_EQ(pick(set, 1, 2048, 1), "64x16");
  // The SMs count: on 264 SMs the 259 tiles of 128x112 are one wave; on 66,
  // three waves of 128x160 tiles (182, 50 in the last) are the fewest.
  EXPECT_EQ(pick(set, 789, 4096, 1, 264), "128x112");
  EXPECT_EQ(pick(set, 789, 4096, 1, 66), "128x160");
}

TEST(ExpectedMVariantChoice, TiesGoToTheSmallerTileThenTheWiderN) {
  std::vector<KernelMetadata> set = decodeVariantSet();
  // 32 experts of 23 rows, N = 4096: 704 tiles of 128x192 or of 64x192 (6
  // waves, 44 in the last): the smaller tile.
  EXPECT_EQ(pick(set, 23, 4096, 32), "64x192");
  // As many tiles of equal size: the wider N (128x64 against 64x128 at 128
  // rows, N = 1024: 16 tiles each).
  std::vector<KernelMetadata> square;
  for (auto [tileM, tileN] : {std::pair{128, 64}, std::pair{64, 128}}) {
    KernelMetadata meta;
    ASSERT_TRUE(parseKernelMetadata(groupedJson("k", tileM, tileN, 100),
                                    "k.json", meta)
                    .ok());
    square.push_back(std::move(meta));
  }
  EXPECT_EQ(pick(square, 128, 1024, 1), "64x128");
  // Equal tiles: the earlier candidate (the kernel first).
  std::vector<const KernelMetadata *> same = {&square[0], &square[0]};
  EXPECT_EQ(selectExpectedMVariant(same, 64, 1024, 1, 132), 0u);
  // Tile counts past 64 bits saturate (no overflow): all tie, the smallest.
  EXPECT_EQ(pick(set, INT64_MAX, INT64_MAX, int64_t(1) << 40), "64x16");
}

} // namespace
} // namespace fp8rt::testing
