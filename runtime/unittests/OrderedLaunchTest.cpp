// fp8rt_launch_ordered against the fake driver: the same launch as
// fp8rt_launch, validation memoized per configuration with the address
// checks on every launch, tensor maps patched when only an address moved,
// launch variants, and the operand queries.
#include "KernelFixture.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <functional>
#include <fstream>
#include <string>
#include <vector>

namespace fp8rt::testing {
namespace {

// The example kernel's operands in metadata order (bias absent).
std::vector<fp8rt_tensor> ordered(int64_t m) {
  return {makeTensor(nullptr, kA, FP8RT_E4M3, {m, 2048}),
          makeTensor(nullptr, kB, FP8RT_E4M3, {7168, 2048}),
          makeTensor(nullptr, kAScale, FP8RT_F32, {}),
          makeTensor(nullptr, kBScale, FP8RT_F32, {}),
          makeTensor(nullptr, 0, FP8RT_BF16, {7168}),
          makeTensor(nullptr, kD, FP8RT_BF16, {m, 7168})};
}

// The same operands by name, for fp8rt_launch.
std::vector<fp8rt_tensor> named(int64_t m) {
  std::vector<fp8rt_tensor> ops = ordered(m);
  const char *names[] = {"a", "b", "a_scale_inv", "b_scale_inv", "bias", "d"};
  for (size_t i = 0; i < ops.size(); ++i)
    ops[i].name = names[i];
  ops.erase(ops.begin() + 4); // bias left out
  return ops;
}

constexpr int kA_ = 0, kBias_ = 4, kD_ = 5; // indices in ordered()

class OrderedLaunchTest : public KernelFixture {
protected:
  fp8rt_status launchOrdered(const std::vector<fp8rt_tensor> &ops) {
    return fp8rt_launch_ordered(kernel, ops.data(),
                                static_cast<int>(ops.size()), nullptr);
  }
  void expectLaunched(const std::vector<fp8rt_tensor> &ops) {
    EXPECT_EQ(launchOrdered(ops), FP8RT_SUCCESS) << fp8rt_last_error();
  }
  void expectError(fp8rt_status status, const std::string &message) {
    EXPECT_EQ(status, FP8RT_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(fp8rt_last_error()).find(message), std::string::npos)
        << "got:      " << fp8rt_last_error() << "\nexpected: " << message;
  }
};

TEST_F(OrderedLaunchTest, LaunchesExactlyAsTheNamedLaunch) {
  load(kExampleJson, kExamplePtx);
  ASSERT_EQ(launch(named(256)), FP8RT_SUCCESS)
      << fp8rt_last_error();
  expectLaunched(ordered(256));
  ASSERT_EQ(fake.launches.size(), 2u);
  const LaunchCall &named = fake.launches[0], &fast = fake.launches[1];
  EXPECT_EQ(fast.params, named.params);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(fast.grid[i], named.grid[i]);
    EXPECT_EQ(fast.block[i], named.block[i]);
  }
  EXPECT_EQ(fast.sharedMemBytes, named.sharedMemBytes);
}

TEST_F(OrderedLaunchTest, RepeatedLaunchesValidateAndEncodeOnce) {
  load(kExampleJson, kExamplePtx);
  for (int i = 0; i < 3; ++i)
    expectLaunched(ordered(256));
  EXPECT_EQ(fake.launches.size(), 3u);
  EXPECT_EQ(fake.encodes.size(), 1u);
  EXPECT_EQ(kernel->orderedPlans.size(), 1u);
  // A new M is a new configuration: validated and encoded anew, and the
  // old one is kept.
  expectLaunched(ordered(512));
  EXPECT_EQ(fake.encodes.size(), 2u);
  EXPECT_EQ(fake.encodes[1].dims, (std::vector<cuuint64_t>{2048, 512}));
  EXPECT_EQ(kernel->orderedPlans.size(), 2u);
}

TEST_F(OrderedLaunchTest, MovedOperandsAreRebound) {
  load(kExampleJson, kExamplePtx);
  expectLaunched(ordered(256));
  // Without cuTensorMapReplaceAddress the map is encoded again.
  std::vector<fp8rt_tensor> moved = ordered(256);
  moved[kA_].data = reinterpret_cast<void *>(kA + 0x1000);
  moved[kD_].data = reinterpret_cast<void *>(kD + 0x2000);
  expectLaunched(moved);
  ASSERT_EQ(fake.encodes.size(), 2u);
  EXPECT_EQ(fake.encodes[1].address, reinterpret_cast<void *>(kA + 0x1000));
  // The pointer param of d carries the new address.
  uint64_t d;
  std::memcpy(&d, fake.launches[1].params[3].data(), sizeof(d));
  EXPECT_EQ(d, kD + 0x2000);
  // With it, only the address is patched.
  fake.provideReplaceAddress();
  moved[kA_].data = reinterpret_cast<void *>(kA + 0x3000);
  expectLaunched(moved);
  EXPECT_EQ(fake.encodes.size(), 2u);
  ASSERT_EQ(fake.replacedAddresses.size(), 1u);
  EXPECT_EQ(fake.replacedAddresses[0], reinterpret_cast<void *>(kA + 0x3000));
  EXPECT_EQ(fake.launches.back().params[0],
            std::vector<unsigned char>(
                reinterpret_cast<const unsigned char *>(
                    &kernel->encodedMaps[0].map),
                reinterpret_cast<const unsigned char *>(
                    &kernel->encodedMaps[0].map) +
                    sizeof(CUtensorMap)));
  EXPECT_EQ(kernel->encodedMaps[0].map.opaque[0], kA + 0x3000);
}

TEST_F(OrderedLaunchTest, AddressesAreCheckedOnEveryLaunch) {
  load(kExampleJson, kExamplePtx);
  expectLaunched(ordered(256));
  std::vector<fp8rt_tensor> misaligned = ordered(256);
  misaligned[kD_].data = reinterpret_cast<void *>(kD + 1);
  expectError(launchOrdered(misaligned),
              "operand \"d\": data 0x50000001 is not 2-byte aligned");
  misaligned = ordered(256);
  misaligned[kA_].data = reinterpret_cast<void *>(kA + 8);
  expectError(launchOrdered(misaligned),
              "tensor map \"tma_a\": operand \"a\" data 0x10000008 is not "
              "16-byte aligned");
  // The same rejected addresses again are rejected again.
  expectError(launchOrdered(misaligned), "is not 16-byte aligned");
  EXPECT_EQ(fake.launches.size(), 1u);
  // The plan still launches with good addresses afterwards.
  expectLaunched(ordered(256));
  EXPECT_EQ(fake.launches.size(), 2u);
}

TEST_F(OrderedLaunchTest, NewConfigurationsAreValidatedInFull) {
  load(kExampleJson, kExamplePtx);
  expectLaunched(ordered(256));
  std::vector<fp8rt_tensor> wrong = ordered(256);
  wrong[kD_].shape[0] = 255;
  expectError(launchOrdered(wrong), "operand \"d\": shape[0] (M) is 255");
  struct Case {
    int operand;
    std::function<void(fp8rt_tensor &)> change;
    const char *message;
  } cases[] = {
      {kD_, [](fp8rt_tensor &t) { t.dtype = FP8RT_F16; },
       "operand \"d\": dtype is f16"},
      {kA_, [](fp8rt_tensor &t) { t.strides[0] = 4096, t.strides[1] = 1; },
       "operand \"a\": strides [4096, 1]"},
      {kA_, [](fp8rt_tensor &t) { t.data = nullptr; }, "operand \"a\""},
      {kA_, [](fp8rt_tensor &t) { t.shape[0] = 0; }, "must be >= 1"},
  };
  for (const Case &c : cases) {
    wrong = ordered(256);
    c.change(wrong[c.operand]);
    expectError(launchOrdered(wrong), c.message);
  }
  EXPECT_EQ(fake.launches.size(), 1u);
  EXPECT_EQ(kernel->orderedPlans.size(), 1u);
}

// The launch checks of the input contract, each as fp8rt_launch reports it:
// on a first launch (a new plan) and, for those that depend only on the
// addresses, on a launch of a validated plan whose addresses moved.
struct ContractCase {
  const char *name;
  int64_t m;
  int operand; // moved to `address` (-1: none)
  uintptr_t address;
  bool addressOnly; // also checked on a validated plan
};

const ContractCase kContractCases[] = {
    {"MIsZero", 0, -1, 0, false},
    {"MOverTheI32Limit", int64_t(1) << 31, -1, 0, false},
    {"MisalignedOutput", 256, kD_, kD + 1, true},
    {"MisalignedTmaOperand", 256, kA_, kA + 8, true},
    {"OutputIsAnInput", 256, kD_, kA, true},
    {"OutputOverlapsTheEndOfAnInput", 256, kD_, kB + 0xDFFFF0, true},
    {"ScaleInsideTheOutput", 256, 3, kD + 0x1000, true},
};

class OrderedLaunchContractTest
    : public OrderedLaunchTest,
      public ::testing::WithParamInterface<ContractCase> {};

TEST_P(OrderedLaunchContractTest, RejectedAsTheNamedLaunchRejectsIt) {
  const ContractCase &c = GetParam();
  load(kExampleJson, kExamplePtx);
  std::vector<fp8rt_tensor> bad = ordered(c.m);
  if (c.operand >= 0)
    bad[c.operand].data = reinterpret_cast<void *>(c.address);
  std::vector<fp8rt_tensor> badNamed = bad;
  const char *names[] = {"a", "b", "a_scale_inv", "b_scale_inv", "bias", "d"};
  for (size_t i = 0; i < badNamed.size(); ++i)
    badNamed[i].name = names[i];
  badNamed.erase(badNamed.begin() + kBias_);
  ASSERT_EQ(launch(badNamed), FP8RT_ERROR_INVALID_ARGUMENT);
  // The same message after the entry point's name ("fp8rt_launch: ").
  std::string expected = fp8rt_last_error();
  expected = expected.substr(expected.find(": ") + 2);
  // A new configuration: the full validation.
  expectError(launchOrdered(bad), expected);
  if (c.addressOnly) {
    // The validated plan of the same configuration, addresses moved.
    expectLaunched(ordered(c.m));
    expectError(launchOrdered(bad), expected);
    // Rejected again, and good addresses still launch.
    expectError(launchOrdered(bad), expected);
    expectLaunched(ordered(c.m));
  }
  EXPECT_EQ(fake.launches.size(), c.addressOnly ? 2u : 0u);
}

INSTANTIATE_TEST_SUITE_P(Contract, OrderedLaunchContractTest,
                         ::testing::ValuesIn(kContractCases),
                         [](const auto &param) {
                           return std::string(param.param.name);
                         });

TEST_F(OrderedLaunchTest, OptionalOperandsArePresentOrNull) {
  load(kExampleJson, kExamplePtx);
  std::vector<fp8rt_tensor> withBias = ordered(128);
  withBias[kBias_].data = reinterpret_cast<void *>(kBias);
  expectLaunched(withBias);
  expectLaunched(ordered(128));
  ASSERT_EQ(fake.launches.size(), 2u);
  uint64_t bias;
  std::memcpy(&bias, fake.launches[0].params[2].data(), sizeof(bias));
  EXPECT_EQ(bias, kBias);
  std::memcpy(&bias, fake.launches[1].params[2].data(), sizeof(bias));
  EXPECT_EQ(bias, 0u);
}

TEST_F(OrderedLaunchTest, RejectsBadOperandArrays) {
  load(kExampleJson, kExamplePtx);
  std::vector<fp8rt_tensor> five = ordered(128);
  five.pop_back();
  expectError(launchOrdered(five),
              "num_operands is 5, but the kernel has 6 operands");
  expectError(fp8rt_launch_ordered(kernel, nullptr, 6, nullptr),
              "operands is NULL");
  EXPECT_EQ(fp8rt_launch_ordered(nullptr, nullptr, 0, nullptr),
            FP8RT_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(fake.launches.empty());
}

TEST_F(OrderedLaunchTest, PlansArePerContextAndBounded) {
  load(kExampleJson, kExamplePtx);
  expectLaunched(ordered(128));
  fake.currentContext = reinterpret_cast<CUcontext>(uintptr_t(0xC1000));
  expectLaunched(ordered(128));
  EXPECT_EQ(fake.loadedImages.size(), 2u);
  EXPECT_EQ(kernel->orderedPlans.size(), 2u);
  for (int64_t m = 1; m <= 40; ++m)
    expectLaunched(ordered(m));
  EXPECT_EQ(kernel->orderedPlans.size(), kOrderedPlans);
}

TEST_F(OrderedLaunchTest, OperandQueries) {
  load(kExampleJson, kExamplePtx);
  ASSERT_EQ(fp8rt_kernel_num_operands(kernel), 6);
  const char *names[] = {"a", "b", "a_scale_inv", "b_scale_inv", "bias", "d"};
  for (int i = 0; i < 6; ++i)
    EXPECT_STREQ(fp8rt_kernel_operand_name(kernel, i), names[i]);
  EXPECT_EQ(fp8rt_kernel_operand_name(kernel, 6), nullptr);
  EXPECT_EQ(fp8rt_kernel_operand_name(kernel, -1), nullptr);
  EXPECT_EQ(fp8rt_kernel_num_operands(nullptr), 0);
}

TEST_F(OrderedLaunchTest, LaunchVariantsAreChosenPerConfiguration) {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      ("fp8rt-ordered-" + std::to_string(reinterpret_cast<uintptr_t>(this)));
  std::filesystem::create_directories(dir);
  auto grid = [](int tileM, int tileN) {
    return "{\"kind\": \"persistent\", \"tile_m\": " + std::to_string(tileM) +
           ", \"tile_n\": " + std::to_string(tileN) + "}";
  };
  const std::string persistent =
      "{\"kind\": \"persistent\", \"tile_m\": 128, \"tile_n\": 256}";
  std::ofstream(dir / "gemm_tn_e4m3_bf16_n7168_k2048.ptx") << kExamplePtx;
  std::ofstream(dir / "small.json") << replaced(
      replaced(kExampleJson, persistent, grid(64, 128)), "\"version\": 1,",
      "\"version\": 1, \"variant_of\": \"gemm_tn_e4m3_bf16_n7168_k2048\",");
  std::ofstream(dir / "large.json") << replaced(
      kExampleJson, "\"version\": 1,",
      "\"version\": 1, \"variants\": [\"small.json\"],");
  ASSERT_EQ(fp8rt_kernel_load((dir / "large.json").c_str(), &kernel),
            FP8RT_SUCCESS)
      << fp8rt_last_error();
  for (const ParamSpec &param : kernel->meta.params)
    fake.paramSizes.push_back(param.size);
  // M = 64: the 64x128 variant (56 CTAs); M = 4096: the kernel (132).
  expectLaunched(ordered(64));
  expectLaunched(ordered(4096));
  expectLaunched(ordered(64));
  ASSERT_EQ(fake.launches.size(), 3u);
  EXPECT_EQ(fake.launches[0].grid[0], 56u);
  EXPECT_EQ(fake.launches[1].grid[0], 132u);
  EXPECT_EQ(fake.launches[2].grid[0], 56u);
  // Each runs its own encoding, kept across launches.
  EXPECT_EQ(fake.encodes.size(), 2u);
  std::filesystem::remove_all(dir);
}

} // namespace
} // namespace fp8rt::testing
