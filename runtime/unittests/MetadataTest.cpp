#include "KernelMetadata.h"
#include "PtxSignature.h"
#include "TestKernels.h"

#include <gtest/gtest.h>

#include <string>

namespace fp8rt::testing {
namespace {

KernelMetadata parseOk(const std::string &json) {
  KernelMetadata meta;
  Status status = parseKernelMetadata(json, "k.json", meta);
  EXPECT_TRUE(status.ok()) << status.message();
  return meta;
}

TEST(MetadataTest, ParsesTheSpecExample) {
  KernelMetadata meta = parseOk(kExampleJson);
  EXPECT_EQ(meta.name, "gemm_tn_e4m3_bf16_n7168_k2048");
  EXPECT_EQ(meta.entry, "gemm_tn_e4m3_bf16_n7168_k2048");
  EXPECT_EQ(meta.chip, "sm_90a");
  EXPECT_EQ(meta.chipMajor, 9);
  EXPECT_EQ(meta.chipMinor, 0);
  EXPECT_EQ(meta.chipSuffix, 'a');
  EXPECT_EQ(meta.ptxFile, "gemm_tn_e4m3_bf16_n7168_k2048.ptx");
  EXPECT_EQ(meta.cubinFile, "");
  EXPECT_EQ(meta.block[0], 384u);
  EXPECT_EQ(meta.clusterSize(), 1u);
  EXPECT_EQ(meta.dynamicSharedMemoryBytes, 197632u);
  EXPECT_EQ(meta.grid.kind, GridKind::Persistent);
  EXPECT_EQ(meta.grid.tileM, 128);
  EXPECT_EQ(meta.grid.tileN, 256);
  EXPECT_EQ(meta.grid.problemOperand, 5); // "d", the first output

  ASSERT_EQ(meta.operands.size(), 6u);
  const OperandSpec &a = meta.operands[0];
  EXPECT_EQ(a.name, "a");
  EXPECT_EQ(a.dtype, DType::E4M3);
  ASSERT_EQ(a.shape.size(), 2u);
  EXPECT_EQ(a.shape[0], Expr::symbol("M"));
  EXPECT_EQ(a.shape[1], Expr::constant(2048));
  EXPECT_EQ(a.alignmentBytes, 1);
  EXPECT_EQ(meta.operands[2].shape.size(), 0u); // scalar
  EXPECT_EQ(meta.operands[2].alignmentBytes, 4);
  EXPECT_TRUE(meta.operands[4].optional);
  EXPECT_FALSE(meta.operands[5].optional);
  EXPECT_EQ(meta.operands[5].role, OperandRole::Output);

  ASSERT_EQ(meta.tensorMaps.size(), 1u);
  const TensorMapSpec &map = meta.tensorMaps[0];
  EXPECT_EQ(map.operand, 0);
  EXPECT_EQ(map.rank, 2);
  EXPECT_EQ(map.dims[0], Expr::constant(2048));
  EXPECT_EQ(map.dims[1], Expr::symbol("M"));
  EXPECT_EQ(map.stridesBytes[0], Expr::constant(2048));
  EXPECT_EQ(map.box[0], 128u);
  EXPECT_EQ(map.box[1], 128u);
  EXPECT_EQ(map.swizzle, CU_TENSOR_MAP_SWIZZLE_128B);
  EXPECT_EQ(map.l2Promotion, CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
  EXPECT_EQ(map.oobFill, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  EXPECT_TRUE(map.usedByParam);

  // CUDA's param layout: the grid_constant CUtensorMap at a 64-byte aligned
  // offset, then 8-byte pointers, then the i32.
  ASSERT_EQ(meta.params.size(), 5u);
  const size_t offsets[] = {0, 128, 136, 144, 152};
  const size_t sizes[] = {128, 8, 8, 8, 4};
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(meta.params[i].offset, offsets[i]) << i;
    EXPECT_EQ(meta.params[i].size, sizes[i]) << i;
  }
  EXPECT_EQ(meta.params[0].alignment, 64u);
  EXPECT_EQ(meta.params[4].value, Expr::symbol("M"));
  EXPECT_EQ(meta.paramBufferSize, 156u);
  EXPECT_FALSE(meta.hasGlobalTensorMaps);
}

TEST(MetadataTest, AppliesDefaultsForOptionalFields) {
  std::string json = replaced(kExampleJson, "\"cluster\": [1, 1, 1],", "");
  json = replaced(
      json, "\"element_strides\": [1, 1], \"interleave\": \"none\", ", "");
  json = replaced(json, "\"l2_promotion\": \"256B\", \"oob_fill\": \"zero\"",
                  "\"swizzle\": \"none\"");
  json = replaced(json, "\"swizzle\": \"128B\",", "");
  KernelMetadata meta = parseOk(json);
  EXPECT_EQ(meta.cluster[0], 1u);
  EXPECT_EQ(meta.cluster[2], 1u);
  const TensorMapSpec &map = meta.tensorMaps[0];
  EXPECT_EQ(map.elementStrides[0], 1u);
  EXPECT_EQ(map.elementStrides[1], 1u);
  EXPECT_EQ(map.interleave, CU_TENSOR_MAP_INTERLEAVE_NONE);
  EXPECT_EQ(map.swizzle, CU_TENSOR_MAP_SWIZZLE_NONE);
  EXPECT_EQ(map.l2Promotion, CU_TENSOR_MAP_L2_PROMOTION_NONE);
  EXPECT_EQ(map.oobFill, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}

TEST(MetadataTest, ParsesStrideExpressions) {
  const struct {
    const char *json;
    const char *expr; // as printed
  } cases[] = {{"\"M\"", "M"},
               {"\"M*16\"", "M*16"},
               {"\"32*M\"", "32*M"},
               {"\" 2 * M \"", "2*M"},
               {"4096", "4096"}};
  for (const auto &c : cases) {
    std::string json =
        replaced(kExampleJson, "\"strides_bytes\": [2048]",
                 std::string("\"strides_bytes\": [") + c.json + "]");
    KernelMetadata meta = parseOk(json);
    ASSERT_EQ(meta.tensorMaps.size(), 1u);
    EXPECT_EQ(meta.tensorMaps[0].stridesBytes[0].str(), c.expr) << c.json;
  }
}

TEST(MetadataTest, ParsesOtherGridKindsAndCubin) {
  std::string json =
      replaced(kExampleJson,
               "{\"kind\": \"persistent\", \"tile_m\": 128, \"tile_n\": 256}",
               "{\"kind\": \"fixed\", \"dims\": [8, 4, 2]}");
  json = replaced(json, "\"ptx\": \"gemm_tn_e4m3_bf16_n7168_k2048.ptx\"",
                  "\"cubin\": \"k.cubin\"");
  KernelMetadata meta = parseOk(json);
  EXPECT_EQ(meta.grid.kind, GridKind::Fixed);
  EXPECT_EQ(meta.grid.fixed[0], 8u);
  EXPECT_EQ(meta.grid.fixed[2], 2u);
  EXPECT_EQ(meta.cubinFile, "k.cubin");
  EXPECT_EQ(meta.ptxFile, "");

  json =
      replaced(kExampleJson,
               "{\"kind\": \"persistent\", \"tile_m\": 128, \"tile_n\": 256}",
               "{\"kind\": \"tiles\", \"tile_m\": 64, \"tile_n\": 128, "
               "\"operand\": \"d\"}");
  json = replaced(json, "\"passing\": \"grid_constant\"",
                  "\"passing\": \"global\"");
  meta = parseOk(json);
  EXPECT_EQ(meta.grid.kind, GridKind::Tiles);
  EXPECT_EQ(meta.grid.tileM, 64);
  EXPECT_EQ(meta.grid.problemOperand, 5);
  EXPECT_TRUE(meta.hasGlobalTensorMaps);
  // A "global" tensor map is a pointer: 8 bytes, no 64-byte alignment.
  EXPECT_EQ(meta.params[0].size, 8u);
  EXPECT_EQ(meta.params[1].offset, 8u);
  EXPECT_EQ(meta.paramBufferSize, 36u);
}

// One metadata mistake: replace `from` by `to` in the example. The error
// location is where `to` has an '@' (removed before parsing) or, without
// one, `location`.
struct BadMetadata {
  const char *from;
  const char *to;
  const char *message;
  const char *location = nullptr;
};

std::string locationOf(const std::string &text, size_t offset) {
  int line = 1, column = 1;
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return std::to_string(line) + ":" + std::to_string(column);
}

class MetadataErrorTest : public ::testing::TestWithParam<BadMetadata> {};

TEST_P(MetadataErrorTest, NamesFieldAndLocation) {
  const BadMetadata &bad = GetParam();
  std::string json = replaced(kExampleJson, bad.from, bad.to);
  std::string location = bad.location ? bad.location : "";
  size_t marker = json.find('@');
  if (marker != std::string::npos) {
    location = locationOf(json, marker);
    json.erase(marker, 1);
  }
  ASSERT_FALSE(location.empty()) << "test bug: no location for " << bad.to;
  KernelMetadata meta;
  Status status = parseKernelMetadata(json, "k.json", meta);
  ASSERT_FALSE(status.ok()) << bad.to;
  EXPECT_EQ(status.code(), FP8RT_ERROR_INVALID_METADATA);
  std::string expected = "k.json:" + location + ": " + bad.message;
  EXPECT_NE(status.message().find(expected), std::string::npos)
      << "got:      " << status.message() << "\nexpected: " << expected;
}

const BadMetadata kBadMetadata[] = {
    // Syntax errors keep the JSON parser's position.
    {"\"version\": 1,", "\"version\": 1,@,",
     "invalid JSON: unexpected ',' where an object key (a string) was "
     "expected"},
    // Format and version come first.
    {"\"format\": \"fp8-mlir-kernel\",", "",
     "(top level): missing required "
     "field \"format\"",
     "1:1"},
    {"\"fp8-mlir-kernel\"", "@\"fp8-mlir-kernal\"",
     "format: \"fp8-mlir-kernal\" is not \"fp8-mlir-kernel\""},
    {"\"version\": 1", "\"version\": @2",
     "version: unsupported version 2 (this runtime reads version 1)"},
    {"\"name\": \"gemm_tn_e4m3_bf16_n7168_k2048\",", "",
     "(top level): missing required field \"name\"", "1:1"},
    {"\"name\": \"gemm_tn_e4m3_bf16_n7168_k2048\",", "\"name\": @\"\",",
     "name: must not be empty"},
    {"\"cluster\": [1, 1, 1],", "\"clusters\": @[1, 1, 1],",
     "(top level): unknown key \"clusters\" (allowed: format, version, name, "
     "entry, chip, ptx, cubin, block, cluster, dynamic_shared_memory_bytes, "
     "grid, operands, tensor_maps, params, kind, variants, variant_of, "
     "variant_choice, programmatic_launch, gemm, "
     "quantize, compute_scale, update_amax_history, dequantize, scales_to_mx, "
     "convert)"},
    {"\"entry\": \"gemm_tn_e4m3_bf16_n7168_k2048\"", "\"entry\": @\"9gemm\"",
     "entry: \"9gemm\" is not a PTX identifier"},
    {"\"chip\": \"sm_90a\"", "\"chip\": @\"hopper\"",
     "chip: \"hopper\" is not a chip name like \"sm_90a\""},
    {"\"ptx\": \"gemm_tn_e4m3_bf16_n7168_k2048.ptx\",", "",
     "(top level): missing required field \"ptx\" (or \"cubin\")", "1:1"},
    {"\"block\": [384, 1, 1]", "\"block\": @[384, 4, 1]",
     "block: [384, 4, 1] exceeds CUDA's limits (z <= 64, at most 1024 "
     "threads)"},
    {"\"block\": [384, 1, 1]", "\"block\": @[384, 1]",
     "block: expected 3 entries, got 2"},
    {"\"cluster\": [1, 1, 1]", "\"cluster\": @[4, 4, 2]",
     "cluster: more than 16 blocks per cluster"},
    {"\"dynamic_shared_memory_bytes\": 197632",
     "\"dynamic_shared_memory_bytes\": @-1",
     "dynamic_shared_memory_bytes: value -1 is out of range [0, 2147483647]"},
    // Operands.
    {"{\"name\": \"b\", \"dtype\": \"e4m3\"",
     "{\"name\": \"b\", \"dtype\": @\"e4m4\"",
     "operands[1].dtype: unknown value \"e4m4\" (expected one of: e4m3, "
     "e5m2, ue8m0, bf16, f16, f32, i32)"},
    {"\"shape\": [7168, 2048]", "\"shape\": [7168, @-1]",
     "operands[1].shape[1]: value -1 is out of range [1, "
     "9223372036854775807]"},
    {"\"shape\": [\"M\", 2048]", "\"shape\": [@\"2M\", 2048]",
     "operands[0].shape[0]: \"2M\" is not a symbol"},
    {"\"shape\": [7168], \"role\"", "\"shape\": @[1, 1, 1, 1, 7168], \"role\"",
     "operands[4].shape: expected at most 4 entries, got 5"},
    {"{\"name\": \"b_scale_inv\"", "{\"name\": @\"b\"",
     "operands[3].name: duplicate operand name \"b\""},
    // Rounded-up extents: a multiple of at least 2, of a symbol some operand
    // binds.
    {"\"name\": \"a_scale_inv\", \"dtype\": \"f32\", \"shape\": []",
     "\"name\": \"a_scale_inv\", \"dtype\": \"f32\", \"shape\": "
     "[16, @\"roundup(Q, 4)\"]",
     "operands[2].shape[1]: symbol \"Q\" does not appear in any operand "
     "shape, so no launch can bind it"},
    {"\"name\": \"a_scale_inv\", \"dtype\": \"f32\", \"shape\": []",
     "\"name\": \"a_scale_inv\", \"dtype\": \"f32\", \"shape\": "
     "[16, @\"roundup(M, 1)\"]",
     "operands[2].shape[1]: \"roundup(M, 1)\" is not an extent (expected an "
     "integer, a symbol, \"roundup(SYM, INT)\" or \"ceildiv(SYM, INT)\" with "
     "INT in [2, 2^20])"},
    {"\"name\": \"a_scale_inv\", \"dtype\": \"f32\", \"shape\": []",
     "\"name\": \"a_scale_inv\", \"dtype\": \"f32\", \"shape\": "
     "[16, @\"ceildiv(M, 0)\"]",
     "operands[2].shape[1]: \"ceildiv(M, 0)\" is not an extent"},
    {"\"name\": \"a_scale_inv\", \"dtype\": \"f32\", \"shape\": []",
     "\"name\": \"a_scale_inv\", \"dtype\": \"f32\", \"shape\": "
     "[16, @\"ceildiv(Q, 128)\"]",
     "operands[2].shape[1]: symbol \"Q\" does not appear in any operand "
     "shape, so no launch can bind it"},
    {"\"name\": \"a_scale_inv\", \"dtype\": \"f32\", \"shape\": []",
     "\"name\": \"a_scale_inv\", \"dtype\": \"f32\", \"shape\": "
     "[16, @\"roundup(M 4)\"]",
     "operands[2].shape[1]: \"roundup(M 4)\" is not an extent"},
    {"\"role\": \"output\"", "\"role\": @\"out\"",
     "operands[5].role: unknown value \"out\" (expected one of: input, "
     "output)"},
    {"\"optional\": true", "\"optional\": @1",
     "operands[4].optional: expected boolean, got number"},
    {"\"shape\": [\"M\", 7168], \"role\": \"output\"}",
     "\"shape\": [\"M\", 7168], \"role\": \"output\", \"alignment\": @24}",
     "operands[5].alignment: 24 is not a power of two"},
    // Tensor maps.
    {"\"operand\": \"a\", \"dtype\": \"e4m3\"",
     "\"operand\": @\"x\", \"dtype\": \"e4m3\"",
     "tensor_maps[0].operand: unknown operand \"x\""},
    {"\"operand\": \"a\", \"dtype\": \"e4m3\"",
     "\"operand\": @\"bias\", \"dtype\": \"e4m3\"",
     "tensor_maps[0].operand: operand \"bias\" is optional; tensor maps need "
     "an operand that is always present"},
    {"\"operand\": \"a\", \"dtype\": \"e4m3\"",
     "\"operand\": \"a\", \"dtype\": @\"e5m2\"",
     "tensor_maps[0].dtype: dtype e5m2 differs from operand \"a\"'s dtype "
     "e4m3"},
    {"\"rank\": 2", "\"rank\": @6",
     "tensor_maps[0].rank: value 6 is out of range [1, 5]"},
    {"\"rank\": 2,\n     \"dims\": [2048, \"M\"]",
     "\"rank\": 3,\n     \"dims\": @[2048, \"M\"]",
     "tensor_maps[0].dims: expected 3 entries (the rank), got 2"},
    {"\"dims\": [2048, \"M\"]", "\"dims\": [2048, @\"Q\"]",
     "tensor_maps[0].dims[1]: symbol \"Q\" does not appear in any operand "
     "shape, so no launch can bind it"},
    {"\"dims\": [2048, \"M\"]", "\"dims\": [@4294967297, \"M\"]",
     "tensor_maps[0].dims[0]: value 4294967297 is out of range [1, "
     "4294967296]"},
    {"\"strides_bytes\": [2048]", "\"strides_bytes\": @[2048, 16]",
     "tensor_maps[0].strides_bytes: expected 1 entries (rank - 1), got 2"},
    {"\"strides_bytes\": [2048]", "\"strides_bytes\": [@2056]",
     "tensor_maps[0].strides_bytes[0]: value 2056 is not a multiple of 16 "
     "(TMA requires it)"},
    {"\"strides_bytes\": [2048]", "\"strides_bytes\": [@1099511627776]",
     "tensor_maps[0].strides_bytes[0]: value 1099511627776 is out of range "
     "[16, 1099511627775]"},
    {"\"strides_bytes\": [2048]", "\"strides_bytes\": [@\"M*M\"]",
     "tensor_maps[0].strides_bytes[0]: \"M*M\" is not a stride expression"},
    {"\"strides_bytes\": [2048]", "\"strides_bytes\": [@\"K\"]",
     "tensor_maps[0].strides_bytes[0]: symbol \"K\" does not appear in any "
     "operand shape"},
    {"\"strides_bytes\": [2048]", "\"strides_bytes\": [@true]",
     "tensor_maps[0].strides_bytes[0]: expected an integer or a string "
     "\"SYM\", \"SYM*INT\" or \"INT*SYM\", got boolean"},
    {"\"box\": [128, 128]", "\"box\": [128, @512]",
     "tensor_maps[0].box[1]: value 512 is out of range [1, 256]"},
    {"\"box\": [128, 128]", "\"box\": @[100, 128]",
     "tensor_maps[0].box: inner box dimension 100 x 1 bytes = 100 bytes is "
     "not a multiple of 16"},
    {"\"box\": [128, 128]", "\"box\": @[256, 128]",
     "tensor_maps[0].box: inner box dimension is 256 bytes, more than the "
     "128-byte span of swizzle \"128B\""},
    {"\"element_strides\": [1, 1]", "\"element_strides\": [1, @9]",
     "tensor_maps[0].element_strides[1]: value 9 is out of range [1, 8]"},
    {"\"swizzle\": \"128B\"", "\"swizzle\": @\"256B\"",
     "tensor_maps[0].swizzle: unknown value \"256B\" (expected one of: none, "
     "32B, 64B, 128B)"},
    {"\"interleave\": \"none\"", "\"interleave\": @\"16B\"",
     "tensor_maps[0].interleave: unknown value \"16B\" (expected one of: "
     "none)"},
    {"\"l2_promotion\": \"256B\"", "\"l2_promotion\": @\"512B\"",
     "tensor_maps[0].l2_promotion: unknown value \"512B\" (expected one of: "
     "none, 64B, 128B, 256B)"},
    {"\"oob_fill\": \"zero\"", "\"oob_fill\": @\"nan\"",
     "tensor_maps[0].oob_fill: \"nan\" needs a floating-point TMA type "
     "(bf16, f16, f32); e4m3 is encoded as UINT8"},
    // Params.
    {"\"tensor_map\": \"tma_a\"", "\"tensor_map\": @\"tma_b\"",
     "params[0].tensor_map: unknown tensor map \"tma_b\""},
    {"\"passing\": \"grid_constant\"", "\"passing\": @\"param\"",
     "params[0].passing: unknown value \"param\" (expected one of: "
     "grid_constant, global)"},
    {"{\"name\": \"tma_a\", \"kind\": \"tensor_map\", \"tensor_map\": "
     "\"tma_a\", \"passing\": \"grid_constant\"}",
     "@{\"name\": \"tma_a\", \"kind\": \"tensor_map\", \"tensor_map\": "
     "\"tma_a\"}",
     "params[0]: missing required field \"passing\""},
    {"\"operand\": \"d\"}", "\"operand\": @\"e\"}",
     "params[3].operand: unknown operand \"e\""},
    {"\"kind\": \"i32\"", "\"kind\": @\"u32\"",
     "params[4].kind: unknown value \"u32\" (expected one of: tensor_map, "
     "pointer, i32, i64, workspace)"},
    {"{\"name\": \"m\", \"kind\": \"i32\", \"value\": \"M\"}",
     "{\"name\": \"m\", \"kind\": \"workspace\", \"bytes_per_cta\": @0}",
     "params[4].bytes_per_cta: "},
    {"{\"name\": \"m\", \"kind\": \"i32\", \"value\": \"M\"}",
     "{\"name\": \"m\", \"kind\": \"workspace\", \"bytes\": @8}",
     "params[4]: unknown key \"bytes\" (allowed: name, kind, bytes_per_cta)"},
    {"{\"name\": \"m\", \"kind\": \"i32\", \"value\": \"M\"}",
     "{\"name\": \"w\", \"kind\": \"workspace\", \"bytes_per_cta\": 8}, "
     "@{\"name\": \"m\", \"kind\": \"workspace\", \"bytes_per_cta\": 8}",
     "params[5]: a kernel has at most one workspace param"},
    {"\"value\": \"M\"}", "\"value\": \"M\", \"operand\": @\"d\"}",
     "params[4]: unknown key \"operand\" (allowed: name, kind, value, "
     "multiple_of, reason)"},
    {"\"value\": \"M\"", "\"value\": @4294967296",
     "params[4].value: value 4294967296 is out of range [-2147483648, "
     "2147483647]"},
    {"\"value\": \"M\"", "\"value\": @\"K\"",
     "params[4].value: symbol \"K\" does not appear in any operand shape"},
    {"{\"name\": \"m\", \"kind\"", "{\"name\": @\"d\", \"kind\"",
     "params[4].name: duplicate param name \"d\""},
    // Grid.
    {"\"kind\": \"persistent\"", "\"kind\": @\"dynamic\"",
     "grid.kind: unknown value \"dynamic\" (expected one of: persistent, "
     "tiles, fixed)"},
    {"\"tile_m\": 128", "\"tile_m\": @0",
     "grid.tile_m: value 0 is out of range [1, 2147483647]"},
    {"\"tile_m\": 128", "\"tile_m\": @128.0",
     "grid.tile_m: expected an integer, got a non-integer number"},
    {"\"tile_m\": 128", "\"tile_m\": @18446744073709551615",
     "grid.tile_m: integer does not fit in 64 bits"},
    {"\"tile_m\": 128", "\"tile_m\": @\"128\"",
     "grid.tile_m: expected an integer, got string"},
    {"\"tile_n\": 256}", "\"tile_n\": 256, \"operand\": @\"bias\"}",
     "grid.operand: operand \"bias\" must be a non-optional rank-2 [M, N] "
     "operand (or [G, M, N] for a persistent grid) to define the grid"},
    {"\"role\": \"output\"", "\"role\": \"input\"",
     "grid: no operand has role \"output\"; name the [M, N] operand with "
     "\"operand\"",
     "11:11"},
    {"{\"kind\": \"persistent\", \"tile_m\": 128, \"tile_n\": 256}",
     "{\"kind\": \"fixed\", \"dims\": @[1, 70000, 1]}",
     "grid.dims: y and z must be <= 65535"},
    {"{\"kind\": \"persistent\", \"tile_m\": 128, \"tile_n\": 256}",
     "{\"kind\": \"fixed\", \"tile_m\": @1, \"dims\": [1, 1, 1]}",
     "grid: unknown key \"tile_m\" (allowed: kind, dims)"},
};

INSTANTIATE_TEST_SUITE_P(Validation, MetadataErrorTest,
                         ::testing::ValuesIn(kBadMetadata));

//===----------------------------------------------------------------------===//
// The PTX entry's parameter list against the metadata
//===----------------------------------------------------------------------===//

TEST(PtxSignatureTest, ReadsEntryParameters) {
  std::vector<PtxParam> params;
  Status status =
      parsePtxEntryParams(kExamplePtx, "gemm_tn_e4m3_bf16_n7168_k2048", params);
  ASSERT_TRUE(status.ok()) << status.message();
  ASSERT_EQ(params.size(), 5u);
  EXPECT_EQ(params[0].declaration,
            ".param .align 64 .b8 gemm_tn_e4m3_bf16_n7168_k2048_param_0[128]");
  EXPECT_EQ(params[0].size, 128u);
  EXPECT_EQ(params[0].alignment, 64u);
  // `.align 16` after `.ptr` is the pointee's alignment, not the param's.
  EXPECT_EQ(params[3].size, 8u);
  EXPECT_EQ(params[3].alignment, 8u);
  EXPECT_EQ(params[4].size, 4u);
  EXPECT_EQ(params[4].alignment, 4u);
}

TEST(PtxSignatureTest, FindsTheNamedEntryAmongSeveral) {
  const char *ptx = ".visible .entry other(.param .u32 x)\n{ ret; }\n"
                    "/* .entry k(.param .u64 fake) */\n"
                    ".visible .entry k()\n{ ret; }\n"
                    ".entry k2 {}\n";
  std::vector<PtxParam> params;
  ASSERT_TRUE(parsePtxEntryParams(ptx, "other", params).ok());
  EXPECT_EQ(params.size(), 1u);
  ASSERT_TRUE(parsePtxEntryParams(ptx, "k", params).ok());
  EXPECT_EQ(params.size(), 0u);
  ASSERT_TRUE(parsePtxEntryParams(ptx, "k2", params).ok());
  EXPECT_EQ(params.size(), 0u);
  Status missing = parsePtxEntryParams(ptx, "k3", params);
  EXPECT_EQ(missing.code(), FP8RT_ERROR_INVALID_METADATA);
  EXPECT_EQ(missing.message(), "the PTX has no .entry named \"k3\"");
}

TEST(PtxSignatureTest, RejectsMetadataThatDisagreesWithThePtx) {
  KernelMetadata meta = parseOk(kExampleJson);
  EXPECT_TRUE(checkPtxMatchesMetadata(kExamplePtx, meta, "k.ptx").ok());

  std::string fewer =
      replaced(kExamplePtx,
               ",\n\t.param .u32 gemm_tn_e4m3_bf16_n7168_k2048_param_4", "");
  Status status = checkPtxMatchesMetadata(fewer, meta, "k.ptx");
  EXPECT_EQ(status.code(), FP8RT_ERROR_INVALID_METADATA);
  EXPECT_EQ(status.message(),
            "k.ptx: the metadata lists 5 params but PTX entry "
            "\"gemm_tn_e4m3_bf16_n7168_k2048\" takes 4");

  std::string wide = replaced(kExamplePtx, ".param .u32", ".param .u64");
  status = checkPtxMatchesMetadata(wide, meta, "k.ptx");
  EXPECT_NE(status.message().find(
                "params[4] \"m\" (i32) needs a 4-byte parameter but PTX entry "
                "\"gemm_tn_e4m3_bf16_n7168_k2048\" declares \".param .u64 "
                "gemm_tn_e4m3_bf16_n7168_k2048_param_4\" (8 bytes, align 8)"),
            std::string::npos)
      << status.message();

  std::string misaligned =
      replaced(kExamplePtx, ".align 64 .b8", ".align 8 .b8");
  status = checkPtxMatchesMetadata(misaligned, meta, "k.ptx");
  EXPECT_NE(status.message().find("params[0] \"tma_a\" (tensor_map, "
                                  "grid_constant) needs a 128-byte parameter "
                                  "aligned to 64 bytes"),
            std::string::npos)
      << status.message();

  std::string renamed =
      replaced(kExamplePtx, ".entry gemm_tn", ".entry gemm_nt");
  status = checkPtxMatchesMetadata(renamed, meta, "k.ptx");
  EXPECT_EQ(status.message(), "k.ptx: the PTX has no .entry named "
                              "\"gemm_tn_e4m3_bf16_n7168_k2048\"");
}

} // namespace
} // namespace fp8rt::testing
