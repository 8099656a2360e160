// A function whose GEMM adds into an argument in place (the main-grad form of
// a wgrad GEMM): its launch binds C and D to that argument, which the result
// is (`alias_of`). The runtime accepts exactly that sharing, when the kernel's
// metadata lets D update C (`in_place_of`), and gives the kernel the
// argument's memory as both; any other binding of an output and another
// operand to one tensor is an error at load, and a result passed for the
// argument must be that very tensor.
#include "ModuleFixture.h"

#include <string>
#include <vector>

namespace fp8rt::testing {
namespace {

constexpr uintptr_t kA = 0x10000000, kB = 0x20000000, kAScale = 0x30000000,
                    kBScale = 0x30000100, kMainGrad = 0x40000000;
constexpr int64_t kRows = 256;
constexpr const char *kKernel = "gemm_acc";

// kExampleJson with an input `c` like d, which d may update in place; its
// params: tma_a, a_scale_inv, bias, c, d, m.
std::string accumulatingKernelJson(bool inPlace) {
  std::string json = replaced(kExampleJson, "gemm_tn_e4m3_bf16_n7168_k2048",
                              kKernel);
  json = replaced(json, "gemm_tn_e4m3_bf16_n7168_k2048", kKernel); // entry
  json = replaced(json, "gemm_tn_e4m3_bf16_n7168_k2048.ptx",
                  std::string(kKernel) + ".ptx");
  json = replaced(
      json,
      R"({"name": "d", "dtype": "bf16", "shape": ["M", 7168], "role": "output"})",
      std::string(R"({"name": "c", "dtype": "bf16", "shape": ["M", 7168], "role": "input"},
    {"name": "d", "dtype": "bf16", "shape": ["M", 7168], "role": "output")") +
          (inPlace ? R"(, "in_place_of": "c"})" : "}"));
  return replaced(json, R"({"name": "d", "kind": "pointer", "operand": "d"})",
                  R"({"name": "c", "kind": "pointer", "operand": "c"},
    {"name": "d", "kind": "pointer", "operand": "d"})");
}

// accumulate(a: e4m3 [a_0, 2048], b: e4m3 [7168, 2048], a_scale_inv,
//            b_scale_inv: f32 [], main_grad: bf16 [a_0, 7168] written)
//     -> (dw = main_grad): main_grad += a b^T, in place.
const char *const kModule = R"json({
  "format": "fp8-mlir-module", "version": 1, "chip": "sm_90a",
  "kernels": ["gemm_acc"],
  "functions": [{
    "name": "accumulate",
    "symbols": [{"name": "a_0", "argument": "a", "dim": 0}],
    "arguments": [
      {"name": "a", "dtype": "e4m3", "shape": ["a_0", 2048], "alignment": 16},
      {"name": "b", "dtype": "e4m3", "shape": [7168, 2048], "alignment": 16},
      {"name": "a_scale_inv", "dtype": "f32", "shape": [], "alignment": 4},
      {"name": "b_scale_inv", "dtype": "f32", "shape": [], "alignment": 4},
      {"name": "main_grad", "dtype": "bf16", "shape": ["a_0", 7168], "alignment": 16, "written": true}
    ],
    "results": [
      {"name": "dw", "dtype": "bf16", "shape": ["a_0", 7168], "alignment": 16, "alias_of": "main_grad"}
    ],
    "buffers": [],
    "workspace_bytes": 0,
    "steps": [
      {"kind": "launch", "kernel": "gemm_acc",
       "operands": {"a": "a", "b": "b", "a_scale_inv": "a_scale_inv", "b_scale_inv": "b_scale_inv",
                    "c": "main_grad", "d": "main_grad"},
       "symbols": {"M": "a_0"}}
    ]
  }]
})json";

class ModuleInPlaceTest : public ModuleFixture {
protected:
  fp8rt_function *fn = nullptr;

  void SetUp() override {
    ModuleFixture::SetUp();
    writeKernel(/*inPlace=*/true);
    dir.write("module.json", kModule);
  }

  void writeKernel(bool inPlace) {
    dir.write(std::string(kKernel) + ".json", accumulatingKernelJson(inPlace));
    dir.write(std::string(kKernel) + ".ptx",
              ptxWithParams(kKernel,
                            {"map", ".u64", ".u64", ".u64", ".u64", ".u32"}));
  }

  fp8rt_status load() {
    fp8rt_status status = fp8rt_module_load(dir.path().c_str(), &module);
    if (status == FP8RT_SUCCESS)
      status = fp8rt_module_function(module, "accumulate", &fn);
    return status;
  }

  static std::vector<fp8rt_tensor> arguments() {
    return {makeTensor(nullptr, kA, FP8RT_E4M3, {kRows, 2048}),
            makeTensor(nullptr, kB, FP8RT_E4M3, {7168, 2048}),
            makeTensor(nullptr, kAScale, FP8RT_F32, {}),
            makeTensor(nullptr, kBScale, FP8RT_F32, {}),
            makeTensor(nullptr, kMainGrad, FP8RT_BF16, {kRows, 7168})};
  }

  fp8rt_status call(const std::vector<fp8rt_tensor> &results) {
    std::vector<fp8rt_tensor> args = arguments();
    return fp8rt_function_call(fn, args.data(), int(args.size()),
                               results.data(), int(results.size()), nullptr, 0,
                               nullptr);
  }

};

TEST_F(ModuleInPlaceTest, TheKernelGetsTheArgumentAsCAndD) {
  ASSERT_EQ(load(), FP8RT_SUCCESS) << fp8rt_last_error();
  fp8rt_tensor_info info;
  ASSERT_EQ(fp8rt_function_argument(fn, 4, &info), FP8RT_SUCCESS);
  EXPECT_EQ(info.written, 1);
  ASSERT_EQ(fp8rt_function_result(fn, 0, &info), FP8RT_SUCCESS);
  EXPECT_EQ(info.alias_of, 4);
  sizeParams();
  // The result omitted (no tensor: the argument is the result).
  ASSERT_EQ(call({makeTensor(nullptr, 0, FP8RT_BF16, {kRows, 7168})}),
            FP8RT_SUCCESS)
      << fp8rt_last_error();
  ASSERT_EQ(fake.launches.size(), 1u);
  EXPECT_EQ(param(fake.launches[0], 3), kMainGrad); // c
  EXPECT_EQ(param(fake.launches[0], 4), kMainGrad); // d
  EXPECT_EQ(param(fake.launches[0], 5), uint64_t(kRows));
  // Or the argument's very tensor.
  ASSERT_EQ(call({makeTensor(nullptr, kMainGrad, FP8RT_BF16, {kRows, 7168})}),
            FP8RT_SUCCESS)
      << fp8rt_last_error();
  EXPECT_EQ(fake.launches.size(), 2u);
}

TEST_F(ModuleInPlaceTest, AResultPassedMustBeTheArgumentsTensor) {
  ASSERT_EQ(load(), FP8RT_SUCCESS) << fp8rt_last_error();
  const char *expected = "result 'dw' is argument 'main_grad', updated in "
                         "place: pass that argument's tensor (its address, "
                         "dtype and shape) or nothing";
  for (const fp8rt_tensor &result :
       {makeTensor(nullptr, kMainGrad + 0x100000, FP8RT_BF16, {kRows, 7168}),
        makeTensor(nullptr, kMainGrad, FP8RT_F32, {kRows, 7168}),
        makeTensor(nullptr, kMainGrad, FP8RT_BF16, {kRows / 2, 7168})}) {
    EXPECT_EQ(call({result}), FP8RT_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(fp8rt_last_error()).find(expected),
              std::string::npos)
        << fp8rt_last_error();
  }
  EXPECT_TRUE(fake.launches.empty());
}

TEST_F(ModuleInPlaceTest, AKernelThatDoesNotUpdateInPlaceIsRejectedAtLoad) {
  writeKernel(/*inPlace=*/false);
  EXPECT_EQ(load(), FP8RT_ERROR_INVALID_METADATA);
  EXPECT_NE(std::string(fp8rt_last_error())
                .find("kernel operands \"d\" (an output) and \"c\" are both "
                      "argument 'main_grad', but \"gemm_acc\" does not let "
                      "\"d\" update \"c\" in place"),
            std::string::npos)
      << fp8rt_last_error();
}

TEST_F(ModuleInPlaceTest, OnlyTheInputItUpdatesMayShareTheOutputsTensor) {
  // bias (bf16, an input d does not update) bound to D's tensor too.
  dir.write("module.json",
            replaced(kModule, R"("c": "main_grad", "d": "main_grad")",
                     R"("c": "main_grad", "bias": "main_grad", "d": "main_grad")"));
  EXPECT_EQ(load(), FP8RT_ERROR_INVALID_METADATA);
  EXPECT_NE(std::string(fp8rt_last_error())
                .find("kernel operands \"d\" (an output) and \"bias\" are "
                      "both argument 'main_grad'"),
            std::string::npos)
      << fp8rt_last_error();
}

} // namespace
} // namespace fp8rt::testing
