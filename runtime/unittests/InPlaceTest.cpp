// An output whose metadata names an input with `in_place_of` (the 1D x 1D
// GEMM adding A B into C's memory) may be passed that input's very memory;
// every other overlap stays an error, and the field is checked at load.

#include "KernelMetadata.h"
#include "LaunchArguments.h"
#include "TestKernels.h"

#include <gtest/gtest.h>

#include <string>

namespace fp8rt::testing {
namespace {

constexpr const char *kD =
    R"({"name": "d", "dtype": "bf16", "shape": ["M", 7168], "role": "output"})";

// kExampleJson with an input `c` shaped like d, and `dField` added to d.
std::string withC(const std::string &dField,
                  const std::string &cShape = R"(["M", 7168])") {
  std::string json = kExampleJson;
  size_t at = json.find(kD);
  EXPECT_NE(at, std::string::npos) << "test bug: kExampleJson changed";
  std::string d = kD;
  d.insert(d.size() - 1, ", " + dField);
  json.replace(at, std::string(kD).size(),
               R"({"name": "c", "dtype": "bf16", "shape": )" + cShape +
                   R"(, "role": "input"}, )" + d);
  return json;
}

// Operands a, b, a_scale_inv, b_scale_inv, bias (absent), c, d at M = 256,
// each 1 MiB apart; d at `dAddress`.
LaunchArguments boundAt(const KernelMetadata &meta, CUdeviceptr dAddress) {
  LaunchArguments args;
  for (size_t i = 0; i < meta.operands.size(); ++i) {
    BoundOperand op;
    op.present = meta.operands[i].name != "bias";
    op.address = 0x10000000 + i * 0x100000;
    op.sizeBytes = meta.operands[i].name == "c" || meta.operands[i].name == "d"
                       ? 256 * 7168 * 2
                       : 16;
    args.operands.push_back(op);
  }
  args.operands[meta.findOperand("d")].address = dAddress;
  return args;
}

TEST(InPlaceTest, ResolvesTheInputAnOutputMayUpdate) {
  KernelMetadata meta;
  Status status =
      parseKernelMetadata(withC(R"("in_place_of": "c")"), "k.json", meta);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(meta.operands[meta.findOperand("d")].inPlaceOf,
            meta.findOperand("c"));
  EXPECT_EQ(meta.operands[meta.findOperand("c")].inPlaceOf, -1);
}

TEST(InPlaceTest, OnlyTheNamedInputsWholeMemoryMayBeShared) {
  KernelMetadata meta;
  ASSERT_TRUE(
      parseKernelMetadata(withC(R"("in_place_of": "c")"), "k.json", meta).ok());
  CUdeviceptr c = 0x10000000 + meta.findOperand("c") * 0x100000;
  EXPECT_TRUE(checkOperandAddresses(meta, boundAt(meta, c)).ok());
  Status shifted = checkOperandAddresses(meta, boundAt(meta, c + 0x1000));
  EXPECT_EQ(shifted.code(), FP8RT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(shifted.message().find("overlaps operand \"c\" (an input"),
            std::string::npos)
      << shifted.message();
  Status onA = checkOperandAddresses(meta, boundAt(meta, 0x10000000));
  EXPECT_NE(onA.message().find("overlaps operand \"a\" (an input"),
            std::string::npos)
      << onA.message();
}

TEST(InPlaceTest, WithoutTheFieldSharingStaysAnError) {
  KernelMetadata meta;
  ASSERT_TRUE(parseKernelMetadata(withC(R"("optional": false)"), "k.json", meta)
                  .ok());
  CUdeviceptr c = 0x10000000 + meta.findOperand("c") * 0x100000;
  Status status = checkOperandAddresses(meta, boundAt(meta, c));
  EXPECT_NE(status.message().find("overlaps operand \"c\""), std::string::npos)
      << status.message();
}

struct BadInPlace {
  const char *field;
  const char *cShape;
  const char *message;
};

class InPlaceMetadataTest : public ::testing::TestWithParam<BadInPlace> {};

TEST_P(InPlaceMetadataTest, IsRejectedAtLoad) {
  KernelMetadata meta;
  Status status = parseKernelMetadata(
      withC(GetParam().field, GetParam().cShape), "k.json", meta);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), FP8RT_ERROR_INVALID_METADATA);
  EXPECT_NE(status.message().find(GetParam().message), std::string::npos)
      << status.message();
}

INSTANTIATE_TEST_SUITE_P(
    Fields, InPlaceMetadataTest,
    ::testing::Values(
        BadInPlace{R"("in_place_of": "e")", R"(["M", 7168])",
                   "unknown operand \"e\""},
        BadInPlace{R"("in_place_of": "d")", R"(["M", 7168])",
                   "\"d\" is an output and \"d\" an output"},
        BadInPlace{R"("in_place_of": "c")", R"(["M", 2048])",
                   "\"d\" and \"c\" differ in dtype or shape"}));

} // namespace
} // namespace fp8rt::testing
