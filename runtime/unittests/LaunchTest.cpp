// The launch path against the fake driver: what gets encoded, the grid, the
// parameter bytes, which launch call is used, module/context handling, the
// "global" tensor-map buffer, and every launch-time validation error.
#include "FakeDriver.h"
#include "Kernel.h"
#include "LaunchArguments.h"
#include "TestKernels.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

namespace fp8rt::testing {
namespace {

template <typename T> std::vector<unsigned char> bytesOf(const T &value) {
  const auto *p = reinterpret_cast<const unsigned char *>(&value);
  return std::vector<unsigned char>(p, p + sizeof(T));
}

fp8rt_tensor *findOperand(std::vector<fp8rt_tensor> &ops, const char *name) {
  for (fp8rt_tensor &t : ops)
    if (std::strcmp(t.name, name) == 0)
      return &t;
  ADD_FAILURE() << "test bug: no operand " << name;
  return &ops[0];
}

constexpr uintptr_t kStream = 0x5700, kOtherStream = 0x5800;

const char *const kPersistentGrid =
    "{\"kind\": \"persistent\", \"tile_m\": 128, \"tile_n\": 256}";
const char *const kGridConstantPtxParam =
    ".param .align 64 .b8 gemm_tn_e4m3_bf16_n7168_k2048_param_0[128]";
const char *const kPointerPtxParam =
    ".param .u64 gemm_tn_e4m3_bf16_n7168_k2048_param_0";

class LaunchTest : public ::testing::Test {
protected:
  FakeDriver &fake = FakeDriver::get();
  std::vector<fp8rt_kernel *> kernels;

  void SetUp() override {
    fake.reset();
    setDriverForTesting(&fake.api);
  }
  void TearDown() override {
    destroyAll();
    setDriverForTesting(nullptr);
    fake.reset();
  }
  void destroyAll() {
    for (fp8rt_kernel *kernel : kernels)
      fp8rt_kernel_destroy(kernel);
    kernels.clear();
  }

  fp8rt_kernel *load(const std::string &json = kExampleJson,
                     const std::string &ptx = kExamplePtx) {
    fp8rt_kernel *kernel = nullptr;
    fp8rt_status status =
        fp8rt_kernel_load_from_memory(json.c_str(), ptx.c_str(), 0, &kernel);
    EXPECT_EQ(status, FP8RT_SUCCESS) << fp8rt_last_error();
    if (kernel) {
      kernels.push_back(kernel);
      fake.paramSizes.clear();
      for (const ParamSpec &param : kernel->meta.params)
        fake.paramSizes.push_back(param.size);
    }
    return kernel;
  }

  // The example kernel with its tensor map passed through global memory.
  fp8rt_kernel *loadGlobalVariant() {
    return load(replaced(kExampleJson, "\"passing\": \"grid_constant\"",
                         "\"passing\": \"global\""),
                replaced(kExamplePtx, kGridConstantPtxParam, kPointerPtxParam));
  }

  fp8rt_status launch(fp8rt_kernel *kernel,
                      const std::vector<fp8rt_tensor> &ops,
                      uintptr_t stream = kStream) {
    return fp8rt_launch(kernel, ops.data(), static_cast<int>(ops.size()),
                        reinterpret_cast<void *>(stream));
  }

  void expectSuccess(fp8rt_kernel *kernel, const std::vector<fp8rt_tensor> &ops,
                     uintptr_t stream = kStream) {
    EXPECT_EQ(launch(kernel, ops, stream), FP8RT_SUCCESS) << fp8rt_last_error();
  }

  void expectError(fp8rt_status status, fp8rt_status expected,
                   const std::string &message) {
    EXPECT_EQ(status, expected) << fp8rt_last_error();
    EXPECT_NE(std::string(fp8rt_last_error()).find(message), std::string::npos)
        << "got:      " << fp8rt_last_error() << "\nexpected: " << message;
  }
};

//===----------------------------------------------------------------------===//
// What is encoded and passed
//===----------------------------------------------------------------------===//

TEST_F(LaunchTest, EncodesTensorMapWithExactArguments) {
  fp8rt_kernel *kernel = load();
  expectSuccess(kernel, exampleOperands(256));
  ASSERT_EQ(fake.encodes.size(), 1u);
  const EncodeCall &e = fake.encodes[0];
  EXPECT_EQ(e.dataType, CU_TENSOR_MAP_DATA_TYPE_UINT8);
  EXPECT_EQ(e.rank, 2u);
  EXPECT_EQ(e.address, reinterpret_cast<void *>(kA));
  EXPECT_EQ(e.dims, (std::vector<cuuint64_t>{2048, 256}));
  EXPECT_EQ(e.stridesBytes, (std::vector<cuuint64_t>{2048}));
  EXPECT_EQ(e.box, (std::vector<cuuint32_t>{128, 128}));
  EXPECT_EQ(e.elementStrides, (std::vector<cuuint32_t>{1, 1}));
  EXPECT_EQ(e.interleave, CU_TENSOR_MAP_INTERLEAVE_NONE);
  EXPECT_EQ(e.swizzle, CU_TENSOR_MAP_SWIZZLE_128B);
  EXPECT_EQ(e.l2Promotion, CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
  EXPECT_EQ(e.oobFill, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}

TEST_F(LaunchTest, EncodesBf16AndF32TensorMapTypes) {
  std::string json =
      replaced(kExampleJson,
               "\"operand\": \"a\", \"dtype\": \"e4m3\", \"rank\": 2,\n"
               "     \"dims\": [2048, \"M\"], \"strides_bytes\": [2048], "
               "\"box\": [128, 128]",
               "\"operand\": \"d\", \"dtype\": \"bf16\", \"rank\": 2,\n"
               "     \"dims\": [7168, \"M\"], \"strides_bytes\": [14336], "
               "\"box\": [64, 32]");
  json = replaced(json, "\"oob_fill\": \"zero\"", "\"oob_fill\": \"nan\"");
  fp8rt_kernel *kernel = load(json);
  expectSuccess(kernel, exampleOperands(64));
  ASSERT_EQ(fake.encodes.size(), 1u);
  EXPECT_EQ(fake.encodes[0].dataType, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
  EXPECT_EQ(fake.encodes[0].address, reinterpret_cast<void *>(kD));
  EXPECT_EQ(fake.encodes[0].dims, (std::vector<cuuint64_t>{7168, 64}));
  EXPECT_EQ(fake.encodes[0].stridesBytes, (std::vector<cuuint64_t>{14336}));
  EXPECT_EQ(fake.encodes[0].box, (std::vector<cuuint32_t>{64, 32}));
  EXPECT_EQ(fake.encodes[0].oobFill,
            CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA);
  EXPECT_EQ(tensorMapDataType(DType::F32), CU_TENSOR_MAP_DATA_TYPE_FLOAT32);
  EXPECT_EQ(tensorMapDataType(DType::F16), CU_TENSOR_MAP_DATA_TYPE_FLOAT16);
  EXPECT_EQ(tensorMapDataType(DType::UE8M0), CU_TENSOR_MAP_DATA_TYPE_UINT8);
  EXPECT_EQ(tensorMapDataType(DType::E5M2), CU_TENSOR_MAP_DATA_TYPE_UINT8);
  // A grouped GEMM's group index.
  EXPECT_EQ(tensorMapDataType(DType::I32), CU_TENSOR_MAP_DATA_TYPE_INT32);
  EXPECT_EQ(dtypeSize(DType::I32), 4);
}

TEST_F(LaunchTest, PassesParamsInCudaLayout) {
  fp8rt_kernel *kernel = load();
  std::vector<fp8rt_tensor> ops = exampleOperands(256);
  ops.push_back(makeTensor("bias", kBias, FP8RT_BF16, {7168}));
  expectSuccess(kernel, ops);
  ASSERT_EQ(fake.launches.size(), 1u);
  const LaunchCall &call = fake.launches[0];
  ASSERT_EQ(call.params.size(), 5u);
  EXPECT_EQ(call.params[0],
            bytesOf(fakeEncodedMap(0, reinterpret_cast<void *>(kA))));
  EXPECT_EQ(call.params[1], bytesOf(uint64_t(kAScale)));
  EXPECT_EQ(call.params[2], bytesOf(uint64_t(kBias)));
  EXPECT_EQ(call.params[3], bytesOf(uint64_t(kD)));
  EXPECT_EQ(call.params[4], bytesOf<int32_t>(256));
  // One buffer in CUDA's layout; the CUtensorMap 64-byte aligned.
  auto base = reinterpret_cast<uintptr_t>(call.paramPointers[0]);
  EXPECT_EQ(base % 64, 0u);
  const uintptr_t offsets[] = {0, 128, 136, 144, 152};
  for (size_t i = 0; i < 5; ++i)
    EXPECT_EQ(reinterpret_cast<uintptr_t>(call.paramPointers[i]) - base,
              offsets[i]);
}

TEST_F(LaunchTest, OptionalOperandMayBeOmittedOrNull) {
  fp8rt_kernel *kernel = load();
  expectSuccess(kernel, exampleOperands(256)); // bias left out
  std::vector<fp8rt_tensor> ops = exampleOperands(256);
  ops.push_back(makeTensor("bias", 0, FP8RT_BF16, {7168})); // bias NULL
  expectSuccess(kernel, ops);
  ASSERT_EQ(fake.launches.size(), 2u);
  EXPECT_EQ(fake.launches[0].params[2], bytesOf(uint64_t(0)));
  EXPECT_EQ(fake.launches[1].params[2], bytesOf(uint64_t(0)));
}

TEST_F(LaunchTest, PackParamsWritesEachParamAtItsOffset) {
  KernelMetadata meta;
  ASSERT_TRUE(parseKernelMetadata(kExampleJson, "k.json", meta).ok());
  LaunchArguments args;
  ASSERT_TRUE(
      bindLaunchArguments(meta, exampleOperands(300).data(), 5, args).ok());
  CUtensorMap map = fakeEncodedMap(7, reinterpret_cast<void *>(kA));
  alignas(64) unsigned char buffer[192];
  std::memset(buffer, 0xAB, sizeof(buffer));
  packParams(meta, args, &map, nullptr, buffer);
  EXPECT_EQ(std::memcmp(buffer, &map, 128), 0);
  uint64_t pointer;
  std::memcpy(&pointer, buffer + 128, 8);
  EXPECT_EQ(pointer, kAScale);
  std::memcpy(&pointer, buffer + 136, 8);
  EXPECT_EQ(pointer, 0u); // absent bias
  std::memcpy(&pointer, buffer + 144, 8);
  EXPECT_EQ(pointer, kD);
  int32_t m;
  std::memcpy(&m, buffer + 152, 4);
  EXPECT_EQ(m, 300);
  EXPECT_EQ(buffer[156], 0xAB); // nothing written past paramBufferSize
}

TEST_F(LaunchTest, ReencodesTensorMapsOnlyWhenArgumentsChange) {
  fp8rt_kernel *kernel = load();
  expectSuccess(kernel, exampleOperands(256));
  expectSuccess(kernel, exampleOperands(256));
  EXPECT_EQ(fake.encodes.size(), 1u);
  ASSERT_EQ(fake.launches.size(), 2u);
  EXPECT_EQ(fake.launches[1].params[0],
            bytesOf(fakeEncodedMap(0, reinterpret_cast<void *>(kA))));
  expectSuccess(kernel, exampleOperands(512)); // new M
  ASSERT_EQ(fake.encodes.size(), 2u);
  EXPECT_EQ(fake.encodes[1].dims, (std::vector<cuuint64_t>{2048, 512}));
  std::vector<fp8rt_tensor> moved = exampleOperands(512);
  moved[0].data = reinterpret_cast<void *>(kA + 0x1000); // new address
  expectSuccess(kernel, moved);
  ASSERT_EQ(fake.encodes.size(), 3u);
  EXPECT_EQ(fake.encodes[2].address, reinterpret_cast<void *>(kA + 0x1000));
  EXPECT_EQ(fake.launches[3].params[0],
            bytesOf(fakeEncodedMap(2, reinterpret_cast<void *>(kA + 0x1000))));
}

//===----------------------------------------------------------------------===//
// Grids
//===----------------------------------------------------------------------===//

GridDims gridFor(const std::string &json, int64_t m, int numSMs) {
  KernelMetadata meta;
  Status parsed = parseKernelMetadata(json, "k.json", meta);
  EXPECT_TRUE(parsed.ok()) << parsed.message();
  LaunchArguments args;
  Status bound = bindLaunchArguments(meta, exampleOperands(m).data(), 5, args);
  EXPECT_TRUE(bound.ok()) << bound.message();
  GridDims grid;
  Status computed = computeGrid(meta, args, numSMs, grid);
  EXPECT_TRUE(computed.ok()) << computed.message();
  return grid;
}

std::string withGrid(const std::string &grid,
                     const char *cluster = "[1, 1, 1]") {
  return replaced(replaced(kExampleJson, kPersistentGrid, grid),
                  "\"cluster\": [1, 1, 1]",
                  std::string("\"cluster\": ") + cluster);
}

TEST_F(LaunchTest, PersistentGridIsMinOfSmsAndTiles) {
  // N = 7168 / tile_n 256 = 28 tile columns.
  EXPECT_EQ(gridFor(kExampleJson, 256, 132).x, 56u);   // 2 x 28 tiles
  EXPECT_EQ(gridFor(kExampleJson, 4096, 132).x, 132u); // 896 tiles
  EXPECT_EQ(gridFor(kExampleJson, 1, 132).x, 28u);
  EXPECT_EQ(gridFor(kExampleJson, 129, 132).x, 56u); // partial tile row
  GridDims grid = gridFor(kExampleJson, 4096, 132);
  EXPECT_EQ(grid.y, 1u);
  EXPECT_EQ(grid.z, 1u);
  // Clusters of 2: the SM cap rounds down to a multiple of 2 (133 -> 132),
  // a tile count rounds up (7 -> 8).
  std::string clustered = withGrid(kPersistentGrid, "[2, 1, 1]");
  EXPECT_EQ(gridFor(clustered, 4096, 133).x, 132u);
  std::string sevenTiles =
      withGrid("{\"kind\": \"persistent\", \"tile_m\": 128, \"tile_n\": 1024}",
               "[2, 1, 1]");
  EXPECT_EQ(gridFor(sevenTiles, 128, 132).x, 8u);
  std::string tall = withGrid(kPersistentGrid, "[1, 2, 1]");
  EXPECT_EQ(gridFor(tall, 4096, 132).y, 2u);

  // Through a launch, with the fake's 132 SMs.
  fp8rt_kernel *kernel = load();
  expectSuccess(kernel, exampleOperands(256));
  ASSERT_EQ(fake.launches.size(), 1u);
  const LaunchCall &call = fake.launches[0];
  EXPECT_EQ(call.grid[0], 56u);
  EXPECT_EQ(call.grid[1], 1u);
  EXPECT_EQ(call.block[0], 384u);
  EXPECT_EQ(call.block[1], 1u);
  EXPECT_EQ(call.sharedMemBytes, 197632u);
  EXPECT_EQ(call.stream, reinterpret_cast<CUstream>(kStream));
  fake.numSMs = 78; // fetched once per context: the cached 132 still applies
  expectSuccess(kernel, exampleOperands(4096));
  EXPECT_EQ(fake.launches[1].grid[0], 132u);
}

TEST_F(LaunchTest, KSplitGridRunsAClusterPerTile) {
  // N = 7168 / tile_n 256 = 28 tile columns, 2 CTAs per tile.
  std::string split = withGrid("{\"kind\": \"persistent\", \"tile_m\": 16, "
                               "\"tile_n\": 256, \"k_split\": 2}",
                               "[2, 1, 1]");
  EXPECT_EQ(gridFor(split, 1, 132).x, 56u);
  // 2 x 28 tiles: 112 CTAs; 3 x 28: capped at the SMs.
  EXPECT_EQ(gridFor(split, 32, 132).x, 112u);
  EXPECT_EQ(gridFor(split, 48, 132).x, 132u);
  EXPECT_EQ(gridFor(split, 48, 133).x, 132u);
  // k_split names the cluster's CTAs.
  KernelMetadata meta;
  Status parsed = parseKernelMetadata(
      withGrid("{\"kind\": \"persistent\", \"tile_m\": 16, "
               "\"tile_n\": 256, \"k_split\": 2}"),
      "k.json", meta);
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.message().find(
                "grid.k_split: a k_split of 2 needs a persistent grid whose "
                "cluster is [2, 1, 1] (the CTAs splitting a tile), not [1, 1, "
                "1]"),
            std::string::npos)
      << parsed.message();
}

TEST_F(LaunchTest, TilesGridCoversTheOutput) {
  const char *tiles = "{\"kind\": \"tiles\", \"tile_m\": 128, \"tile_n\": 256}";
  GridDims grid = gridFor(withGrid(tiles), 300, 132);
  EXPECT_EQ(grid.x, 28u); // ceil(7168 / 256)
  EXPECT_EQ(grid.y, 3u);  // ceil(300 / 128)
  EXPECT_EQ(grid.z, 1u);
  grid = gridFor(withGrid(tiles, "[1, 2, 1]"), 300, 132);
  EXPECT_EQ(grid.y, 4u); // rounded up to the cluster
  grid = gridFor(
      withGrid("{\"kind\": \"tiles\", \"tile_m\": 64, \"tile_n\": 3000}",
               "[4, 1, 1]"),
      64, 132);
  EXPECT_EQ(grid.x, 4u); // ceil(7168 / 3000) = 3, rounded up to 4
  EXPECT_EQ(grid.y, 1u);

  // A grid beyond CUDA's limits is an argument error, caught before the
  // driver is touched.
  fp8rt_kernel *kernel = load(withGrid(tiles));
  expectError(launch(kernel, exampleOperands(8388609)),
              FP8RT_ERROR_INVALID_ARGUMENT,
              "the grid [28, 65537, 1] for M = 8388609, N = 7168 exceeds "
              "CUDA's limits (x < 2^31, y and z <= 65535)");
  EXPECT_TRUE(fake.calls.empty());
}

TEST_F(LaunchTest, FixedGridIsRoundedUpToClusterMultiples) {
  GridDims grid = gridFor(
      withGrid("{\"kind\": \"fixed\", \"dims\": [5, 3, 1]}", "[2, 2, 1]"), 1,
      132);
  EXPECT_EQ(grid.x, 6u);
  EXPECT_EQ(grid.y, 4u);
  EXPECT_EQ(grid.z, 1u);
}

//===----------------------------------------------------------------------===//
// Driver usage
//===----------------------------------------------------------------------===//

TEST_F(LaunchTest, ClusterLaunchUsesLaunchKernelEx) {
  fp8rt_kernel *kernel = load(withGrid(kPersistentGrid, "[2, 1, 1]"));
  expectSuccess(kernel, exampleOperands(4096));
  ASSERT_EQ(fake.launches.size(), 1u);
  const LaunchCall &call = fake.launches[0];
  EXPECT_TRUE(call.ex);
  EXPECT_EQ(fake.count("cuLaunchKernelEx"), 1);
  EXPECT_EQ(fake.count("cuLaunchKernel"), 0);
  EXPECT_EQ(call.numAttrs, 1u);
  EXPECT_EQ(call.attrId, CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION);
  EXPECT_EQ(call.cluster[0], 2u);
  EXPECT_EQ(call.cluster[1], 1u);
  EXPECT_EQ(call.cluster[2], 1u);
  EXPECT_EQ(call.grid[0], 132u);
  EXPECT_EQ(call.block[0], 384u);
  EXPECT_EQ(call.sharedMemBytes, 197632u);
  EXPECT_EQ(call.stream, reinterpret_cast<CUstream>(kStream));
  EXPECT_EQ(call.params[4], bytesOf<int32_t>(4096));
}

TEST_F(LaunchTest, ProgrammaticLaunchSetsStreamSerialization) {
  // Without a cluster: cuLaunchKernelEx with the one attribute.
  std::string programmatic = replaced(kExampleJson, "\"version\": 1,",
                                      "\"version\": 1, "
                                      "\"programmatic_launch\": true,");
  fp8rt_kernel *kernel = load(programmatic);
  expectSuccess(kernel, exampleOperands(4096));
  ASSERT_EQ(fake.launches.size(), 1u);
  EXPECT_TRUE(fake.launches[0].ex);
  EXPECT_EQ(fake.launches[0].numAttrs, 1u);
  EXPECT_EQ(fake.launches[0].attrId,
            CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION);
  EXPECT_EQ(fake.launches[0].programmaticSerialization, 1);
  // With a cluster: both attributes.
  fp8rt_kernel *clustered = load(replaced(
      programmatic, "\"cluster\": [1, 1, 1]", "\"cluster\": [2, 1, 1]"));
  expectSuccess(clustered, exampleOperands(4096));
  ASSERT_EQ(fake.launches.size(), 2u);
  EXPECT_EQ(fake.launches[1].numAttrs, 2u);
  EXPECT_EQ(fake.launches[1].cluster[0], 2u);
  EXPECT_EQ(fake.launches[1].programmaticSerialization, 1);
  // A kernel without the key: no attribute.
  expectSuccess(load(), exampleOperands(4096));
  EXPECT_FALSE(fake.launches[2].ex);
  EXPECT_EQ(fake.launches[2].programmaticSerialization, -1);
}

TEST_F(LaunchTest, NonClusterLaunchUsesLaunchKernel) {
  fp8rt_kernel *kernel = load();
  expectSuccess(kernel, exampleOperands(128));
  EXPECT_EQ(fake.count("cuLaunchKernel"), 1);
  EXPECT_EQ(fake.count("cuLaunchKernelEx"), 0);
  ASSERT_EQ(fake.launches.size(), 1u);
  EXPECT_FALSE(fake.launches[0].ex);
}

TEST_F(LaunchTest, AllowsNonPortableClusterSizes) {
  fp8rt_kernel *kernel = load(withGrid(kPersistentGrid, "[16, 1, 1]"));
  expectSuccess(kernel, exampleOperands(4096));
  EXPECT_EQ(fake.functionAttributes,
            (std::vector<std::pair<CUfunction_attribute, int>>{
                {CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 197632},
                {CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1}}));
  EXPECT_EQ(fake.launches[0].cluster[0], 16u);
  EXPECT_EQ(fake.launches[0].grid[0], 128u); // 132 SMs rounded down to 16s
}

TEST_F(LaunchTest, RaisesDynamicSharedMemoryLimitOnlyAbove48KiB) {
  fp8rt_kernel *kernel = load();
  expectSuccess(kernel, exampleOperands(128));
  EXPECT_EQ(fake.functionAttributes,
            (std::vector<std::pair<CUfunction_attribute, int>>{
                {CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 197632}}));
  destroyAll();
  fake.reset();
  kernel = load(replaced(kExampleJson, "197632", "49152"));
  expectSuccess(kernel, exampleOperands(128));
  EXPECT_TRUE(fake.functionAttributes.empty());
  EXPECT_EQ(fake.launches[0].sharedMemBytes, 49152u);
}

TEST_F(LaunchTest, RejectsSharedMemoryBeyondTheDevice) {
  fake.maxSharedOptin = 100000;
  fp8rt_kernel *kernel = load();
  expectError(launch(kernel, exampleOperands(128)), FP8RT_ERROR_CUDA,
              "fp8rt_launch: kernel \"gemm_tn_e4m3_bf16_n7168_k2048\": kernel "
              "\"gemm_tn_e4m3_bf16_n7168_k2048\" needs 197632 bytes of dynamic "
              "shared memory, but the device allows at most 100000 per block");
  EXPECT_EQ(fake.count("cuModuleLoadDataEx"), 0);
}

TEST_F(LaunchTest, RejectsAKernelCompiledForAnotherChip) {
  fake.ccMajor = 10;
  fp8rt_kernel *kernel = load();
  expectError(launch(kernel, exampleOperands(128)), FP8RT_ERROR_CUDA,
              "was compiled for sm_90a, which needs exactly compute "
              "capability 9.0, but the current device is 10.0");
  EXPECT_EQ(fake.count("cuModuleLoadDataEx"), 0);
  // Plain sm_90 PTX runs on newer devices.
  fp8rt_kernel *portable = load(
      replaced(kExampleJson, "\"chip\": \"sm_90a\"", "\"chip\": \"sm_90\""));
  expectSuccess(portable, exampleOperands(128));
  fake.ccMajor = 8;
  fake.currentContext = reinterpret_cast<CUcontext>(uintptr_t(0xC1000));
  expectError(launch(portable, exampleOperands(128)), FP8RT_ERROR_CUDA,
              "which needs at least compute capability 9.0, but the current "
              "device is 8.0");
}

TEST_F(LaunchTest, LoadsTheModuleOncePerContext) {
  const auto contextA = reinterpret_cast<CUcontext>(uintptr_t(0xC0000));
  const auto contextB = reinterpret_cast<CUcontext>(uintptr_t(0xC1000));
  fp8rt_kernel *kernel = load();
  expectSuccess(kernel, exampleOperands(128));
  expectSuccess(kernel, exampleOperands(128));
  EXPECT_EQ(fake.count("cuModuleLoadDataEx"), 1);
  ASSERT_EQ(fake.loadedImages.size(), 1u);
  EXPECT_EQ(fake.loadedImages[0], kExamplePtx);
  EXPECT_EQ(fake.functionNames,
            std::vector<std::string>{"gemm_tn_e4m3_bf16_n7168_k2048"});
  fake.currentContext = contextB;
  expectSuccess(kernel, exampleOperands(128));
  EXPECT_EQ(fake.count("cuModuleLoadDataEx"), 2);
  EXPECT_EQ(fake.moduleContexts, (std::vector<CUcontext>{contextA, contextB}));
  EXPECT_EQ(fake.launches.size(), 3u);
  EXPECT_EQ(fake.launches[0].function, fake.launches[1].function);
  EXPECT_NE(fake.launches[1].function, fake.launches[2].function);

  // Destroy unloads in each context, made current around the cleanup.
  destroyAll();
  EXPECT_EQ(fake.unloadedModules.size(), 2u);
  EXPECT_EQ(fake.pushedContexts, (std::vector<CUcontext>{contextA, contextB}));
  EXPECT_EQ(fake.count("cuCtxPopCurrent"), 2);
  EXPECT_EQ(fake.currentContext, contextB); // restored
}

TEST_F(LaunchTest, DestroySkipsContextsThatAreGone) {
  fp8rt_kernel *kernel = load();
  expectSuccess(kernel, exampleOperands(128));
  fake.failures["cuCtxPushCurrent"] = static_cast<CUresult>(709); // destroyed
  destroyAll();
  EXPECT_TRUE(fake.unloadedModules.empty());
  EXPECT_EQ(fake.count("cuCtxPopCurrent"), 0);
}

TEST_F(LaunchTest, UsesThePrimaryContextOfDevice0WhenNoneIsCurrent) {
  fake.currentContext = nullptr;
  fp8rt_kernel *kernel = load();
  expectSuccess(kernel, exampleOperands(128));
  EXPECT_EQ(fake.count("cuDeviceGet"), 1);
  EXPECT_EQ(fake.count("cuDevicePrimaryCtxRetain"), 1);
  EXPECT_EQ(fake.count("cuCtxSetCurrent"), 1);
  EXPECT_EQ(fake.currentContext, fake.primaryContext);
  EXPECT_EQ(fake.moduleContexts, std::vector<CUcontext>{fake.primaryContext});
  // Retained once: later launches (even on threads without a context) reuse it.
  fake.currentContext = nullptr;
  expectSuccess(kernel, exampleOperands(128));
  EXPECT_EQ(fake.count("cuDevicePrimaryCtxRetain"), 1);
  EXPECT_EQ(fake.count("cuCtxSetCurrent"), 2);
  EXPECT_EQ(fake.count("cuModuleLoadDataEx"), 1);
}

TEST_F(LaunchTest, ReportsDriverFailuresWithTheCallAndTheError) {
  fp8rt_kernel *kernel = load();
  fake.failures["cuLaunchKernel"] = CUDA_ERROR_INVALID_VALUE;
  expectError(launch(kernel, exampleOperands(256)), FP8RT_ERROR_CUDA,
              "fp8rt_launch: kernel \"gemm_tn_e4m3_bf16_n7168_k2048\": grid "
              "[56, 1, 1], block [384, 1, 1], cluster [1, 1, 1], 197632 bytes "
              "of dynamic shared memory: cuLaunchKernel failed: "
              "CUDA_ERROR_INVALID_VALUE (invalid argument)");
  fake.failures["cuLaunchKernel"] = static_cast<CUresult>(700);
  expectError(launch(kernel, exampleOperands(256)), FP8RT_ERROR_CUDA,
              "cuLaunchKernel failed: CUDA error 700");
  fake.failures.clear();

  fake.failures["cuTensorMapEncodeTiled"] = CUDA_ERROR_INVALID_VALUE;
  expectError(launch(kernel, exampleOperands(512)), FP8RT_ERROR_CUDA,
              "tensor map \"tma_a\" (address 0x10000000, dims [2048, 512], "
              "strides_bytes [2048], box [128, 128], element_strides [1, 1], "
              "type 0, swizzle 3, l2_promotion 3, oob_fill 0): "
              "cuTensorMapEncodeTiled failed: CUDA_ERROR_INVALID_VALUE");
  // A failed encoding is not cached.
  fake.failures.clear();
  expectSuccess(kernel, exampleOperands(512));
  EXPECT_EQ(fake.launches.back().params[0],
            bytesOf(fakeEncodedMap(2, reinterpret_cast<void *>(kA))));
}

TEST_F(LaunchTest, ReportsTheJitLogWhenTheModuleFailsToLoad) {
  fp8rt_kernel *kernel = load();
  fake.failures["cuModuleLoadDataEx"] = CUDA_ERROR_INVALID_PTX;
  fake.jitErrorLog = "ptxas fatal   : Unresolved extern function 'foo'";
  expectError(launch(kernel, exampleOperands(128)), FP8RT_ERROR_CUDA,
              "cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX (a PTX JIT "
              "compilation failed); JIT log: ptxas fatal   : Unresolved "
              "extern function 'foo'");
  // Nothing is cached: the next launch tries again.
  fake.failures.clear();
  expectSuccess(kernel, exampleOperands(128));
  EXPECT_EQ(fake.count("cuModuleLoadDataEx"), 2);

  fake.failures["cuModuleGetFunction"] = CUDA_ERROR_NOT_FOUND;
  fake.currentContext = reinterpret_cast<CUcontext>(uintptr_t(0xC1000));
  EXPECT_EQ(launch(kernel, exampleOperands(128)), FP8RT_ERROR_CUDA);
  EXPECT_EQ(fake.unloadedModules.size(), 1u); // the half-loaded module
}

//===----------------------------------------------------------------------===//
// Tensor maps passed through global memory
//===----------------------------------------------------------------------===//

TEST_F(LaunchTest, GlobalTensorMapsAreCopiedInStreamOrder) {
  fp8rt_kernel *kernel = loadGlobalVariant();
  expectSuccess(kernel, exampleOperands(256), kStream);
  ASSERT_EQ(fake.deviceAllocations.size(), 1u);
  EXPECT_EQ(fake.deviceAllocationSizes[0], 128u * kGlobalTensorMapSlots);
  EXPECT_EQ(fake.hostAllocations.size(), 1u);
  EXPECT_EQ(fake.createdEvents.size(), kGlobalTensorMapSlots);
  const CUdeviceptr base = fake.deviceAllocations[0];
  ASSERT_EQ(fake.copies.size(), 1u);
  EXPECT_EQ(fake.copies[0].destination, base);
  EXPECT_EQ(fake.copies[0].bytes,
            bytesOf(fakeEncodedMap(0, reinterpret_cast<void *>(kA))));
  EXPECT_EQ(fake.copies[0].stream, reinterpret_cast<CUstream>(kStream));
  ASSERT_EQ(fake.launches.size(), 1u);
  EXPECT_EQ(fake.launches[0].params[0], bytesOf(uint64_t(base)));
  // Copy, then launch, then mark the slot, all on the launch stream.
  std::vector<std::string> order;
  for (const std::string &call : fake.calls)
    if (call == "cuMemcpyHtoDAsync" || call == "cuLaunchKernel" ||
        call == "cuEventRecord")
      order.push_back(call);
  EXPECT_EQ(order,
            (std::vector<std::string>{"cuMemcpyHtoDAsync", "cuLaunchKernel",
                                      "cuEventRecord"}));
  ASSERT_EQ(fake.recordedEvents.size(), 1u);
  EXPECT_EQ(fake.recordedEvents[0].first, fake.createdEvents[0]);
  EXPECT_EQ(fake.recordedEvents[0].second, reinterpret_cast<CUstream>(kStream));

  // Same maps, same stream: the slot is reused without a copy.
  expectSuccess(kernel, exampleOperands(256), kStream);
  EXPECT_EQ(fake.copies.size(), 1u);
  EXPECT_EQ(fake.launches[1].params[0], bytesOf(uint64_t(base)));
  // Another stream gets its own slot (no cross-stream ordering is assumed).
  expectSuccess(kernel, exampleOperands(256), kOtherStream);
  ASSERT_EQ(fake.copies.size(), 2u);
  EXPECT_EQ(fake.copies[1].destination, base + 128);
  EXPECT_EQ(fake.copies[1].stream, reinterpret_cast<CUstream>(kOtherStream));
  EXPECT_EQ(fake.launches[2].params[0], bytesOf(uint64_t(base + 128)));
  // New operands: re-encoded and copied to the next slot.
  expectSuccess(kernel, exampleOperands(512), kStream);
  ASSERT_EQ(fake.copies.size(), 3u);
  EXPECT_EQ(fake.copies[2].destination, base + 256);
  EXPECT_EQ(fake.copies[2].bytes,
            bytesOf(fakeEncodedMap(1, reinterpret_cast<void *>(kA))));
  EXPECT_TRUE(fake.synchronizedEvents.empty());

  // Once every slot is used, a slot is reused only after its last launch
  // has finished.
  for (int64_t m = 1; m <= 13; ++m)
    expectSuccess(kernel, exampleOperands(m), kStream);
  EXPECT_TRUE(fake.synchronizedEvents.empty());
  expectSuccess(kernel, exampleOperands(1000), kStream);
  EXPECT_EQ(fake.synchronizedEvents,
            std::vector<CUevent>{fake.createdEvents[0]});
  EXPECT_EQ(fake.copies.back().destination, base);
  EXPECT_EQ(fake.deviceAllocations.size(), 1u);

  // Destroy waits for every used slot before freeing the buffers.
  fake.synchronizedEvents.clear();
  destroyAll();
  EXPECT_EQ(fake.synchronizedEvents, fake.createdEvents);
  EXPECT_EQ(fake.destroyedEvents, fake.createdEvents);
  EXPECT_EQ(fake.deviceFrees, std::vector<CUdeviceptr>{base});
  EXPECT_EQ(fake.hostFrees, fake.hostAllocations);
}

TEST_F(LaunchTest, GlobalTensorMapsAreRejectedDuringStreamCapture) {
  fp8rt_kernel *kernel = loadGlobalVariant();
  fake.captureStatus = CU_STREAM_CAPTURE_STATUS_ACTIVE;
  expectError(launch(kernel, exampleOperands(256)),
              FP8RT_ERROR_INVALID_ARGUMENT,
              "passes tensor maps through global memory (passing \"global\"), "
              "which fp8rt cannot do while the stream is being captured into "
              "a CUDA graph");
  EXPECT_TRUE(fake.launches.empty());
  // grid_constant tensor maps are fine under capture: no check is made.
  fp8rt_kernel *plain = load();
  expectSuccess(plain, exampleOperands(256));
  EXPECT_EQ(fake.count("cuStreamIsCapturing"), 1);
}

//===----------------------------------------------------------------------===//
// Launch-time validation: every error names the argument, and is reported
// before any driver call.
//===----------------------------------------------------------------------===//

struct BadLaunch {
  const char *name;
  std::function<void(std::vector<fp8rt_tensor> &)> mutate;
  fp8rt_status status;
  const char *message;
};

void PrintTo(const BadLaunch &bad, std::ostream *os) { *os << bad.name; }

class LaunchValidationTest : public LaunchTest,
                             public ::testing::WithParamInterface<BadLaunch> {};

TEST_P(LaunchValidationTest, FailsBeforeTouchingTheDriver) {
  const BadLaunch &bad = GetParam();
  fp8rt_kernel *kernel = load();
  std::vector<fp8rt_tensor> ops = exampleOperands(256);
  bad.mutate(ops);
  expectError(launch(kernel, ops), bad.status,
              std::string("fp8rt_launch: kernel "
                          "\"gemm_tn_e4m3_bf16_n7168_k2048\": ") +
                  bad.message);
  EXPECT_TRUE(fake.calls.empty());
}

void setM(std::vector<fp8rt_tensor> &ops, int64_t m) {
  findOperand(ops, "a")->shape[0] = m;
  findOperand(ops, "d")->shape[0] = m;
}

const BadLaunch kBadLaunches[] = {
    {"MissingOperand", [](auto &ops) { ops.erase(ops.begin() + 1); },
     FP8RT_ERROR_INVALID_ARGUMENT, "missing operand \"b\" (e4m3 [7168, 2048])"},
    {"UnknownOperand",
     [](auto &ops) { ops.push_back(makeTensor("c", kB, FP8RT_F32, {})); },
     FP8RT_ERROR_INVALID_ARGUMENT,
     "operands[5]: unknown operand \"c\" (the kernel's operands are: a, b, "
     "a_scale_inv, b_scale_inv, bias, d)"},
    {"DuplicateOperand", [](auto &ops) { ops.push_back(ops[0]); },
     FP8RT_ERROR_INVALID_ARGUMENT,
     "operand \"a\" is given twice (operands[0] and operands[5])"},
    {"NullName", [](auto &ops) { ops[1].name = nullptr; },
     FP8RT_ERROR_INVALID_ARGUMENT, "operands[1].name is NULL"},
    {"NullDataForRequiredOperand",
     [](auto &ops) { findOperand(ops, "d")->data = nullptr; },
     FP8RT_ERROR_INVALID_ARGUMENT,
     "operand \"d\": data is NULL; only optional operands may be NULL"},
    {"DtypeMismatch",
     [](auto &ops) { findOperand(ops, "a")->dtype = FP8RT_BF16; },
     FP8RT_ERROR_INVALID_ARGUMENT,
     "operand \"a\": dtype is bf16, expected e4m3"},
    {"DtypeOutOfRange",
     [](auto &ops) {
       findOperand(ops, "a")->dtype = static_cast<fp8rt_dtype>(7);
     },
     FP8RT_ERROR_INVALID_ARGUMENT,
     "operand \"a\": dtype 7 is not an fp8rt_dtype value"},
    {"RankMismatch", [](auto &ops) { findOperand(ops, "b")->rank = 3; },
     FP8RT_ERROR_INVALID_ARGUMENT,
     "operand \"b\": rank is 3, expected 2 (shape [7168, 2048])"},
    {"ScalarGivenAsVector",
     [](auto &ops) {
       *findOperand(ops, "a_scale_inv") =
           makeTensor("a_scale_inv", kAScale, FP8RT_F32, {1});
     },
     FP8RT_ERROR_INVALID_ARGUMENT,
     "operand \"a_scale_inv\": rank is 1, expected 0 (shape [])"},
    {"ConstantExtentMismatch",
     [](auto &ops) { findOperand(ops, "b")->shape[0] = 4096; },
     FP8RT_ERROR_INVALID_ARGUMENT,
     "operand \"b\": shape[0] is 4096, expected 7168 (shape [7168, 2048])"},
    {"InconsistentSymbol",
     [](auto &ops) { findOperand(ops, "d")->shape[0] = 128; },
     FP8RT_ERROR_INVALID_ARGUMENT,
     "operand \"d\": shape[0] (M) is 128, but M is 256 (bound by operand "
     "\"a\" shape[0])"},
    {"MBelowOne", [](auto &ops) { setM(ops, 0); }, FP8RT_ERROR_INVALID_ARGUMENT,
     "operand \"a\": shape[0] (M) is 0; M must be >= 1"},
    {"NegativeExtent", [](auto &ops) { findOperand(ops, "b")->shape[1] = -5; },
     FP8RT_ERROR_INVALID_ARGUMENT,
     "operand \"b\": shape[1] is -5; it must be >= 1"},
    {"InnermostStrideNotOne",
     [](auto &ops) {
       fp8rt_tensor *a = findOperand(ops, "a");
       a->strides[0] = 4096;
       a->strides[1] = 2;
     },
     FP8RT_ERROR_INVALID_ARGUMENT,
     "operand \"a\": strides[1] is 2; the innermost stride must be 1 "
     "(row-major, contiguous)"},
    {"PaddedRows",
     [](auto &ops) {
       fp8rt_tensor *a = findOperand(ops, "a");
       a->strides[0] = 4096;
       a->strides[1] = 1;
     },
     FP8RT_ERROR_INVALID_ARGUMENT,
     "operand \"a\": strides [4096, 1] are not dense row-major for shape "
     "[256, 2048] (strides[0] should be 2048)"},
    {"MisalignedTmaOperand",
     [](auto &ops) {
       findOperand(ops, "a")->data = reinterpret_cast<void *>(kA + 8);
     },
     FP8RT_ERROR_INVALID_ARGUMENT,
     "tensor map \"tma_a\": operand \"a\" data 0x10000008 is not 16-byte "
     "aligned (TMA requires it)"},
    {"MisalignedPointerOperand",
     [](auto &ops) {
       findOperand(ops, "a_scale_inv")->data =
           reinterpret_cast<void *>(kAScale + 2);
     },
     FP8RT_ERROR_INVALID_ARGUMENT,
     "operand \"a_scale_inv\": data 0x30000002 is not 4-byte aligned (the "
     "kernel requires it)"},
    {"TmaDimBeyond2Pow32", [](auto &ops) { setM(ops, (int64_t(1) << 32) + 1); },
     FP8RT_ERROR_INVALID_ARGUMENT,
     "tensor map \"tma_a\": dims[1] = M = 4294967297 exceeds TMA's limit of "
     "2^32"},
    {"I32ParamOverflow", [](auto &ops) { setM(ops, int64_t(1) << 31); },
     FP8RT_ERROR_INVALID_ARGUMENT,
     "param \"m\": M = 2147483648 does not fit in the kernel's i32 parameter "
     "(max 2147483647; M is bound by operand \"a\" shape[0])"},
    {"OutputIsAnInput",
     [](auto &ops) { findOperand(ops, "d")->data = reinterpret_cast<void *>(kA); },
     FP8RT_ERROR_INVALID_ARGUMENT,
     "operand \"d\" (an output, bytes [0x10000000, 0x10380000)) overlaps "
     "operand \"a\" (an input, bytes [0x10000000, 0x10080000)); each output "
     "needs memory no other operand uses"},
    {"OutputOverlapsTheEndOfAnInput",
     [](auto &ops) {
       findOperand(ops, "d")->data = reinterpret_cast<void *>(kB + 0xDFFFF0);
     },
     FP8RT_ERROR_INVALID_ARGUMENT,
     "operand \"d\" (an output, bytes [0x20dffff0, 0x2117fff0)) overlaps "
     "operand \"b\" (an input, bytes [0x20000000, 0x20e00000)); each output "
     "needs memory no other operand uses"},
    {"ScaleInsideTheOutput",
     [](auto &ops) {
       findOperand(ops, "b_scale_inv")->data =
           reinterpret_cast<void *>(kD + 0x1000);
     },
     FP8RT_ERROR_INVALID_ARGUMENT,
     "operand \"d\" (an output, bytes [0x50000000, 0x50380000)) overlaps "
     "operand \"b_scale_inv\" (an input, bytes [0x50001000, 0x50001004)); "
     "each output needs memory no other operand uses"},
    {"ByteSizeOverflow", [](auto &ops) { setM(ops, int64_t(1) << 62); },
     FP8RT_ERROR_INVALID_ARGUMENT,
     "operand \"a\": shape [4611686018427387904, 2048] is too large (its size "
     "in bytes overflows int64)"},
};

INSTANTIATE_TEST_SUITE_P(Operands, LaunchValidationTest,
                         ::testing::ValuesIn(kBadLaunches),
                         [](const ::testing::TestParamInfo<BadLaunch> &param) {
                           return std::string(param.param.name);
                         });

TEST_F(LaunchTest, InputsMayShareMemory) {
  // Only outputs need memory of their own: both scales may be one scalar.
  fp8rt_kernel *kernel = load();
  std::vector<fp8rt_tensor> ops = exampleOperands(256);
  findOperand(ops, "b_scale_inv")->data = reinterpret_cast<void *>(kAScale);
  expectSuccess(kernel, ops);
}

TEST_F(LaunchTest, PersistentGridTilesFitIn32Bits) {
  KernelMetadata meta;
  ASSERT_TRUE(parseKernelMetadata(kExampleJson, "k.json", meta).ok());
  LaunchArguments args;
  args.problemM = INT32_MAX;
  args.problemN = INT32_MAX;
  GridDims grid;
  Status status = computeGrid(meta, args, 132, grid);
  EXPECT_EQ(status.code(), FP8RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(status.message(),
            "M = 2147483647 and N = 2147483647 make 140737488355328 output "
            "tiles of 128x256; the kernel numbers its tiles in 32 bits (at "
            "most 2^31 - 1): split the problem along M");
}

TEST_F(LaunchTest, AcceptsExplicitDenseStrides) {
  fp8rt_kernel *kernel = load();
  std::vector<fp8rt_tensor> ops = exampleOperands(256);
  findOperand(ops, "a")->strides[0] = 2048;
  findOperand(ops, "a")->strides[1] = 1;
  expectSuccess(kernel, ops);
  // The stride of an extent-1 dim does not matter.
  ops = exampleOperands(1);
  findOperand(ops, "d")->strides[0] = 999999;
  findOperand(ops, "d")->strides[1] = 1;
  expectSuccess(kernel, ops);
}

TEST_F(LaunchTest, RejectsBadOperandArrays) {
  fp8rt_kernel *kernel = load();
  std::vector<fp8rt_tensor> ops = exampleOperands(256);
  expectError(fp8rt_launch(kernel, ops.data(), -1, nullptr),
              FP8RT_ERROR_INVALID_ARGUMENT,
              "num_operands is -1; it must be >= 0");
  expectError(fp8rt_launch(kernel, nullptr, 5, nullptr),
              FP8RT_ERROR_INVALID_ARGUMENT,
              "operands is NULL but num_operands is 5");
  expectError(fp8rt_launch(kernel, nullptr, 0, nullptr),
              FP8RT_ERROR_INVALID_ARGUMENT, "missing operand \"a\"");
  expectError(fp8rt_launch(nullptr, ops.data(), 5, nullptr),
              FP8RT_ERROR_INVALID_ARGUMENT, "fp8rt_launch: kernel is NULL");
  EXPECT_TRUE(fake.calls.empty());
}

TEST_F(LaunchTest, SymbolicStridesAreCheckedAtLaunch) {
  std::string json = replaced(
      kExampleJson,
      "{\"name\": \"a\", \"dtype\": \"e4m3\", \"shape\": [\"M\", 2048]",
      "{\"name\": \"a\", \"dtype\": \"e4m3\", \"shape\": [\"M\", \"K\"]");
  json = replaced(json, "\"dims\": [2048, \"M\"], \"strides_bytes\": [2048]",
                  "\"dims\": [\"K\", \"M\"], \"strides_bytes\": [\"K\"]");
  fp8rt_kernel *kernel = load(json);
  std::vector<fp8rt_tensor> ops = exampleOperands(256);
  findOperand(ops, "a")->shape[1] = 24;
  expectError(launch(kernel, ops), FP8RT_ERROR_INVALID_ARGUMENT,
              "tensor map \"tma_a\": strides_bytes[0] = K = 24 bytes is not a "
              "multiple of 16 (TMA requires it)");
  EXPECT_TRUE(fake.calls.empty());
  findOperand(ops, "a")->shape[1] = 4096;
  expectSuccess(kernel, ops);
  ASSERT_EQ(fake.encodes.size(), 1u);
  EXPECT_EQ(fake.encodes[0].dims, (std::vector<cuuint64_t>{4096, 256}));
  EXPECT_EQ(fake.encodes[0].stridesBytes, (std::vector<cuuint64_t>{4096}));
}

TEST_F(LaunchTest, SymbolsBoundOnlyByAbsentOptionalOperandsAreReported) {
  std::string json = replaced(
      kExampleJson, "{\"name\": \"d\",",
      "{\"name\": \"extra\", \"dtype\": \"f32\", \"shape\": [\"K\"], \"role\": "
      "\"input\", \"optional\": true},\n    {\"name\": \"d\",");
  json =
      replaced(json, "{\"name\": \"m\", \"kind\": \"i32\", \"value\": \"M\"}",
               "{\"name\": \"m\", \"kind\": \"i32\", \"value\": \"M\"},\n"
               "    {\"name\": \"k\", \"kind\": \"i64\", \"value\": \"K\"}");
  std::string ptx = replaced(kExamplePtx, "_param_4 /* m */",
                             "_param_4,\n\t.param .u64 k_param_5");
  fp8rt_kernel *kernel = load(json, ptx);
  expectError(launch(kernel, exampleOperands(256)),
              FP8RT_ERROR_INVALID_ARGUMENT,
              "param \"k\" needs symbol K, but no operand given to this launch "
              "binds it (only absent optional operands name it)");
  std::vector<fp8rt_tensor> ops = exampleOperands(256);
  ops.push_back(makeTensor("extra", 0x60000000, FP8RT_F32, {77}));
  expectSuccess(kernel, ops);
  ASSERT_EQ(fake.launches.size(), 1u);
  EXPECT_EQ(fake.launches[0].params[5], bytesOf(int64_t(77)));
}

TEST_F(LaunchTest, TensorMapsReachingBeyondTheirOperandAreMetadataErrors) {
  fp8rt_kernel *kernel = load(replaced(
      kExampleJson, "\"dims\": [2048, \"M\"], \"strides_bytes\": [2048]",
      "\"dims\": [4096, \"M\"], \"strides_bytes\": [4096]"));
  expectError(launch(kernel, exampleOperands(256)),
              FP8RT_ERROR_INVALID_METADATA,
              "tensor map \"tma_a\" (dims [4096, 256], strides_bytes [4096]) "
              "reaches beyond operand \"a\", which has 524288 bytes; the "
              "metadata is inconsistent");
  EXPECT_TRUE(fake.calls.empty());
}


//===----------------------------------------------------------------------===//
// Launch variants
//===----------------------------------------------------------------------===//

// The example kernel named `name` with a `tile_m` x `tile_n` persistent grid
// of `throughput` percent, plus the top-level `extra` entries.
std::string variantJson(const std::string &name, int tileM, int tileN,
                        int throughput, const std::string &extra = "") {
  std::string json = replaced(
      kExampleJson, kPersistentGrid,
      strCat("{\"kind\": \"persistent\", \"tile_m\": ", tileM,
             ", \"tile_n\": ", tileN, ", \"throughput\": ", throughput, "}"));
  json = replaced(json, "\"name\": \"gemm_tn_e4m3_bf16_n7168_k2048\"",
                  "\"name\": \"" + name + "\"");
  return extra.empty() ? json : replaced(json, "\"version\": 1,",
                                         "\"version\": 1, " + extra + ",");
}

KernelMetadata parsedMetadata(const std::string &json) {
  KernelMetadata meta;
  Status parsed = parseKernelMetadata(json, "k.json", meta);
  EXPECT_TRUE(parsed.ok()) << parsed.message();
  return meta;
}

TEST_F(LaunchTest, LaunchVariantWithTheFewestWeightedWavesIsChosen) {
  KernelMetadata large = parsedMetadata(variantJson("large", 128, 192, 100));
  KernelMetadata medium = parsedMetadata(variantJson("medium", 128, 128, 85));
  KernelMetadata small = parsedMetadata(variantJson("small", 64, 128, 65));
  std::vector<const KernelMetadata *> all = {&large, &medium, &small};
  // N = 7168: 38 tile columns of 192, 56 of 128. M = 64: one wave each, the
  // 64x128 tiles do the least work.
  EXPECT_EQ(selectLaunchVariant(all, 64, 7168, 132), 2u);
  // M = 256: 76 / 112 / 224 tiles, i.e. 1 / 1 / 2 waves.
  EXPECT_EQ(selectLaunchVariant(all, 256, 7168, 132), 1u);
  // M = 8192: 19 / 28 / 55 waves.
  EXPECT_EQ(selectLaunchVariant(all, 8192, 7168, 132), 0u);
  // The device's SMs count: M = 128 is 38 / 56 / 112 tiles, one wave each
  // on 132 SMs, but 1 / 2 / 3 waves on 40.
  EXPECT_EQ(selectLaunchVariant(all, 128, 7168, 132), 2u);
  EXPECT_EQ(selectLaunchVariant(all, 128, 7168, 40), 0u);
  // Ties go to the earlier candidate.
  EXPECT_EQ(selectLaunchVariant({&medium, &medium}, 64, 7168, 132), 0u);
}

// `json` with a workspace param of `bytesPerCta` bytes: a stream-K kernel.
static std::string withWorkspace(const std::string &json, int bytesPerCta) {
  return replaced(
      json, "{\"name\": \"m\", \"kind\": \"i32\", \"value\": \"M\"}",
      strCat("{\"name\": \"m\", \"kind\": \"i32\", \"value\": \"M\"},"
             "\n    {\"name\": \"workspace\", \"kind\": \"workspace\", "
             "\"bytes_per_cta\": ",
             bytesPerCta, "}"));
}

// The 64x64 tile with a workspace param: a stream-K kernel.
static std::string streamKTile64Json() {
  return withWorkspace(variantJson("tile64_sk", 64, 64, 45), 16388);
}

TEST_F(LaunchTest, StreamKVariantIsChosenWhereItsTilesLeaveSmsIdle) {
  KernelMetadata large = parsedMetadata(variantJson("large", 128, 192, 100));
  KernelMetadata tile64 = parsedMetadata(variantJson("tile64", 64, 64, 45));
  KernelMetadata streamK = parsedMetadata(streamKTile64Json());
  ASSERT_GE(streamK.workspaceParam, 0);
  std::vector<const KernelMetadata *> all = {&large, &tile64, &streamK};
  // N = 2112: 33 tiles of 64x64 for M <= 64, a quarter of 132 SMs.
  EXPECT_EQ(selectLaunchVariant(all, 1, 2112, 132), 2u);
  EXPECT_EQ(selectLaunchVariant(all, 64, 2112, 132), 2u);
  // One row of tiles splits up to 0.4 of the SMs: N = 3328 is 52 tiles
  // (0.39), N = 3392 53; N = 4224, 66 tiles, half the SMs in one row,
  // runs whole tiles.
  EXPECT_EQ(selectLaunchVariant(all, 16, 3328, 132), 2u);
  EXPECT_EQ(selectLaunchVariant(all, 16, 3392, 132), 1u);
  EXPECT_EQ(selectLaunchVariant(all, 64, 4224, 132), 1u);
  // M = 65 and 128: two rows of 33 tiles, half the SMs (0.5 + 0.05 x 2
  // waves against one); M = 129, 99 tiles, more than half: whole waves,
  // a tie the 64x64 kernel takes.
  EXPECT_EQ(selectLaunchVariant(all, 65, 2112, 132), 2u);
  EXPECT_EQ(selectLaunchVariant(all, 128, 2112, 132), 2u);
  EXPECT_EQ(selectLaunchVariant(all, 129, 2112, 132), 1u);
  // N = 576: 9 tiles a row; M = 256 is 36 of them on 132 SMs.
  EXPECT_EQ(selectLaunchVariant(all, 256, 576, 132), 2u);
  // Large M: the 128x192 tiles.
  EXPECT_EQ(selectLaunchVariant(all, 4096, 2112, 132), 0u);
}

TEST_F(LaunchTest, KSplitVariantIsChosenWhereItsClustersCoverTheTiles) {
  // The swap-AB stream-K kernel (a workspace, gemm.swap_ab) and the same
  // tile split along K over clusters of 2 and 4 CTAs.
  std::string swapAB = R"("gemm": {"m": "M", "n": 7168, "k": 2048,
    "a_dtype": "e4m3", "b_dtype": "e4m3", "out_dtype": "bf16",
    "a_granularity": "tensor", "b_granularity": "tensor",
    "accumulation": "fast", "bias": false, "accumulate_into_c": false,
    "tile": [16, 64, 128], "stages": 16, "cluster": [1, 1, 1],
    "swap_ab": true})";
  KernelMetadata large = parsedMetadata(variantJson("large", 128, 192, 100));
  KernelMetadata streamK = parsedMetadata(
      withWorkspace(variantJson("swapab_sk", 16, 64, 16, swapAB), 4224));
  ASSERT_TRUE(streamK.swapAB);
  auto split = [&](int ctas) {
    std::string cluster = strCat("[", ctas, ", 1, 1]");
    return parsedMetadata(replaced(
        replaced(variantJson(strCat("swapab_ks", ctas), 16, 64, 16,
                             replaced(swapAB, "\"cluster\": [1, 1, 1]",
                                      "\"cluster\": " + cluster)),
                 "\"throughput\": 16}",
                 strCat("\"throughput\": 16, \"k_split\": ", ctas, "}")),
        "\"cluster\": [1, 1, 1]", "\"cluster\": " + cluster));
  };
  KernelMetadata split2 = split(2), split4 = split(4);
  std::vector<const KernelMetadata *> all = {&large, &streamK, &split2,
                                             &split4};
  // Tile N 64 (the JSON's operands are N = 7168, but the choice takes N):
  // N = 4096 is 64 tiles, one wave of 66 clusters of 2 at half a tile each
  // (0.5 waves against the stream-K kernel's 64 / 132 + 0.05 x 132 / 64).
  EXPECT_EQ(selectLaunchVariant(all, 1, 4096, 132), 2u);
  // N = 2112, 33 tiles: two waves of the 32 resident clusters of 4 (8
  // GPCs of 16.5 SMs, 4 each) or one of 64 clusters of 2, 0.5 waves
  // against the stream-K kernel's 0.25 + 0.05 x 4; N = 1024, 16 tiles: the
  // clusters of 4 (the stream-K kernel's fixup chains 8 CTAs).
  EXPECT_EQ(selectLaunchVariant(all, 16, 2112, 132), 1u);
  EXPECT_EQ(selectLaunchVariant(all, 1, 1024, 132), 3u);
  // N = 7168, 112 tiles: 112 / 132 + 0.05 x 1.18 against a whole wave.
  EXPECT_EQ(selectLaunchVariant(all, 1, 7168, 132), 1u);
  // N = 28672, 448 tiles: 3.39 + 0.05 waves against 3.5.
  EXPECT_EQ(selectLaunchVariant(all, 1, 28672, 132), 1u);
  // Large M: the 128x192 tiles.
  EXPECT_EQ(selectLaunchVariant(all, 4096, 4096, 132), 0u);
  // A swap-AB kernel runs one row of its tiles, or, split along K, several
  // where all its CTAs fill at most 0.6 of the SMs: at M = 17, N = 1024
  // (two rows of 16 tiles), the clusters of 2 (64 CTAs, one wave at half
  // a tile each) but not those of 4 (128 CTAs) nor the stream-K kernel;
  // at M = 128 (eight rows) the 128x192 tile, the only other candidate.
  EXPECT_EQ(selectLaunchVariant(all, 16, 1024, 132), 3u);
  EXPECT_EQ(selectLaunchVariant(all, 17, 1024, 132), 2u);
  EXPECT_EQ(selectLaunchVariant(all, 128, 1024, 132), 0u);
  EXPECT_EQ(selectLaunchVariant({&large, &streamK, &split4}, 17, 1024, 132),
            0u);
  // The 32-token swap-AB tile (throughput 31) streams the same B rows:
  // at M <= 16 it costs more than the 16-token one (2048 / 31 against
  // 1024 / 16 a tile), at M = 17-32 it is the swap-AB kernel that runs,
  // at M = 33 none does.
  KernelMetadata wide = parsedMetadata(replaced(
      withWorkspace(variantJson("swapab32_sk", 32, 64, 31, swapAB), 8320),
      "\"tile\": [16, 64, 128]", "\"tile\": [32, 64, 128]"));
  ASSERT_TRUE(wide.swapAB);
  std::vector<const KernelMetadata *> tokens = {&large, &streamK, &wide};
  EXPECT_EQ(selectLaunchVariant(tokens, 16, 4096, 132), 1u);
  EXPECT_EQ(selectLaunchVariant(tokens, 17, 4096, 132), 2u);
  EXPECT_EQ(selectLaunchVariant(tokens, 32, 4096, 132), 2u);
  EXPECT_EQ(selectLaunchVariant(tokens, 33, 4096, 132), 0u);
  // The driver's resident clusters where it gave them: N = 2048, 32 tiles,
  // one wave of the model's 32 clusters of 4 (0.25 waves) but two of an
  // H200's 30 (0.5, like the clusters of 2), where the stream-K kernel's
  // 32 / 132 + 0.05 x 4.1 waves run.
  EXPECT_EQ(selectLaunchVariant(all, 1, 2048, 132), 3u);
  ResidentClusters h200;
  h200.counts[2] = 66;
  h200.counts[4] = 30;
  EXPECT_EQ(selectLaunchVariant(all, 1, 2048, 132, h200), 1u);
  EXPECT_EQ(selectLaunchVariant(all, 1, 1024, 132, h200), 3u);
  KernelMetadata tile64sk = parsedMetadata(streamKTile64Json());
  std::vector<const KernelMetadata *> withTile64 = {&large, &tile64sk, &split2,
                                                    &split4};
  // N = 576, M = 128: 18 tiles of 64x64 split over 132 CTAs (0.14 + 0.05 x
  // 7.3 waves x 4096 / 45 = 45.5) against 72 swap-AB tiles in 3 waves of
  // the clusters of 4 (192; with the split discount it took 48), which
  // the several-row rule leaves out (288 CTAs).
  EXPECT_EQ(selectLaunchVariant(withTile64, 128, 576, 132), 1u);
  EXPECT_EQ(selectLaunchVariant(withTile64, 1, 576, 132), 3u);
}

// A temporary kernel directory holding the example PTX: write() puts a file
// in it and returns its path; removed at the end of the test.
class KernelDirectory {
public:
  explicit KernelDirectory(const char *prefix) {
    std::string pattern = std::string("/tmp/") + prefix + "-XXXXXX";
    if (mkdtemp(pattern.data()))
      dir_ = pattern;
    write("gemm_tn_e4m3_bf16_n7168_k2048.ptx", kExamplePtx);
  }
  ~KernelDirectory() {
    if (!dir_.empty())
      std::filesystem::remove_all(dir_);
  }
  bool ok() const { return !dir_.empty(); }
  std::string write(const std::string &name, const std::string &text) {
    std::ofstream(dir_ / name, std::ios::binary) << text;
    return (dir_ / name).string();
  }

private:
  std::filesystem::path dir_;
};

TEST_F(LaunchTest, LaunchVariantsAreLoadedFromTheKernelsDirectory) {
  KernelDirectory dir("fp8rt-variants");
  ASSERT_TRUE(dir.ok());
  auto write = [&](const std::string &name, const std::string &text) {
    return dir.write(name, text);
  };
  write("small.json", variantJson("small", 64, 128, 65,
                                  "\"variant_of\": \"large\""));
  std::string large = write(
      "large.json", variantJson("large", 128, 256, 100,
                                "\"variants\": [\"small.json\"]"));
  fp8rt_kernel *kernel = nullptr;
  ASSERT_EQ(fp8rt_kernel_load(large.c_str(), &kernel), FP8RT_SUCCESS)
      << fp8rt_last_error();
  kernels.push_back(kernel);
  ASSERT_EQ(kernel->variants.size(), 1u);
  EXPECT_EQ(kernel->variants[0]->meta.name, "small");
  for (const ParamSpec &param : kernel->meta.params)
    fake.paramSizes.push_back(param.size);
  // M = 64: the 64x128 variant (56 CTAs); M = 4096: the kernel itself (896
  // tiles of 128x256 on 132 SMs).
  expectSuccess(kernel, exampleOperands(64));
  expectSuccess(kernel, exampleOperands(4096));
  ASSERT_EQ(fake.launches.size(), 2u);
  EXPECT_EQ(fake.launches[0].grid[0], 56u);
  EXPECT_EQ(fake.launches[1].grid[0], 132u);
  // A wrong launch is diagnosed the same with variants.
  std::vector<fp8rt_tensor> wrong = exampleOperands(64);
  findOperand(wrong, "d")->shape[0] = 65;
  expectError(launch(kernel, wrong), FP8RT_ERROR_INVALID_ARGUMENT, "\"d\"");

  // From memory there is no directory: the kernel runs every launch.
  fp8rt_kernel *inMemory =
      load(variantJson("large", 128, 256, 100, "\"variants\": [\"small.json\"]"));
  ASSERT_NE(inMemory, nullptr);
  EXPECT_TRUE(inMemory->variants.empty());
  expectSuccess(inMemory, exampleOperands(64));
  EXPECT_EQ(fake.launches.back().grid[0], 28u);

  // A missing variant, or one that does not launch like the kernel, fails
  // the load with the variant named.
  std::string missing = write(
      "missing.json", variantJson("large", 128, 256, 100,
                                  "\"variants\": [\"nowhere.json\"]"));
  fp8rt_kernel *failed = nullptr;
  expectError(fp8rt_kernel_load(missing.c_str(), &failed), FP8RT_ERROR_IO,
              "launch variant \"nowhere.json\" of \"large\": cannot open");
  EXPECT_EQ(failed, nullptr);
  write("other.json",
        replaced(variantJson("other", 64, 128, 65), "\"dtype\": \"bf16\", \"shape\": [\"M\", 7168]",
                 "\"dtype\": \"f32\", \"shape\": [\"M\", 7168]"));
  std::string mismatched = write(
      "mismatched.json", variantJson("large", 128, 256, 100,
                                     "\"variants\": [\"other.json\"]"));
  expectError(fp8rt_kernel_load(mismatched.c_str(), &failed),
              FP8RT_ERROR_INVALID_METADATA,
              "launch variant of \"large\" must be a gemm kernel with a "
              "persistent grid, the same operands and no variants of its own");
}

TEST_F(LaunchTest, KernelForMNamesTheKernelALaunchRuns) {
  KernelDirectory dir("fp8rt-for-m");
  ASSERT_TRUE(dir.ok());
  dir.write("small.json",
            variantJson("small", 64, 128, 65, "\"variant_of\": \"large\""));
  std::string large =
      dir.write("large.json", variantJson("large", 128, 256, 100,
                                          "\"variants\": [\"small.json\"]"));
  fp8rt_kernel *kernel = nullptr;
  ASSERT_EQ(fp8rt_kernel_load(large.c_str(), &kernel), FP8RT_SUCCESS)
      << fp8rt_last_error();
  kernels.push_back(kernel);
  // The launches of LaunchVariantsAreLoadedFromTheKernelsDirectory: M = 64
  // runs the 64x128 variant, M = 4096 the kernel itself.
  fp8rt_kernel *out = nullptr;
  ASSERT_EQ(fp8rt_kernel_for_m(kernel, 64, &out), FP8RT_SUCCESS)
      << fp8rt_last_error();
  EXPECT_STREQ(fp8rt_kernel_name(out), "small");
  ASSERT_EQ(fp8rt_kernel_for_m(kernel, 4096, &out), FP8RT_SUCCESS);
  EXPECT_EQ(out, kernel);
  // The device's SMs decide: M = 128 is 28 tiles of 128x256 or 112 of
  // 64x128, one wave of either on 132 SMs, but one against three on 40.
  ASSERT_EQ(fp8rt_kernel_for_m(kernel, 128, &out), FP8RT_SUCCESS);
  EXPECT_STREQ(fp8rt_kernel_name(out), "small");
  fake.numSMs = 40;
  fp8rt_kernel *other = nullptr;
  ASSERT_EQ(fp8rt_kernel_load(large.c_str(), &other), FP8RT_SUCCESS);
  kernels.push_back(other);
  ASSERT_EQ(fp8rt_kernel_for_m(other, 128, &out), FP8RT_SUCCESS);
  EXPECT_EQ(out, other);
  // A variant, and a kernel without variants, run themselves.
  fp8rt_kernel *variant = kernel->variants[0].get();
  ASSERT_EQ(fp8rt_kernel_for_m(variant, 4096, &out), FP8RT_SUCCESS);
  EXPECT_EQ(out, variant);
  EXPECT_TRUE(fake.launches.empty());
  expectError(
      fp8rt_kernel_for_m(kernel, 0, &out), FP8RT_ERROR_INVALID_ARGUMENT,
      "kernel \"large\": m = 0: expected the problem's rows, at least 1");
  EXPECT_EQ(out, nullptr);
  expectError(fp8rt_kernel_for_m(nullptr, 64, &out),
              FP8RT_ERROR_INVALID_ARGUMENT, "kernel is NULL");
  expectError(fp8rt_kernel_for_m(kernel, 64, nullptr),
              FP8RT_ERROR_INVALID_ARGUMENT, "out is NULL");
}

TEST_F(LaunchTest, ResidentClustersAreAskedOfTheDriver) {
  KernelDirectory dir("fp8rt-clusters");
  ASSERT_TRUE(dir.ok());
  dir.write("split.json",
            replaced(replaced(variantJson("split", 16, 64, 16,
                                          "\"variant_of\": \"large\""),
                              "\"throughput\": 16}",
                              "\"throughput\": 16, \"k_split\": 4}"),
                     "\"cluster\": [1, 1, 1]", "\"cluster\": [4, 1, 1]"));
  std::string large =
      dir.write("large.json", variantJson("large", 128, 256, 100,
                                          "\"variants\": [\"split.json\"]"));
  // M = 1, N = 7168: 112 tiles of 64. Without the driver's count, the
  // model's 32 clusters of 4 take them in 4 waves of a quarter of a tile
  // (the split kernel runs, a persistent grid of 132 CTAs); with 1 cluster
  // at a time they would take 112 waves: the kernel itself runs (28 CTAs
  // of 128x256 tiles).
  for (int count : {0, 1}) {
    fake.reset();
    for (const ParamSpec &param :
         parsedMetadata(variantJson("large", 128, 256, 100)).params)
      fake.paramSizes.push_back(param.size);
    if (count)
      fake.provideMaxActiveClusters(count);
    fp8rt_kernel *kernel = nullptr;
    ASSERT_EQ(fp8rt_kernel_load(large.c_str(), &kernel), FP8RT_SUCCESS)
        << fp8rt_last_error();
    kernels.push_back(kernel);
    expectSuccess(kernel, exampleOperands(1));
    ASSERT_EQ(fake.launches.size(), 1u);
    EXPECT_EQ(fake.launches[0].grid[0], count ? 28u : 132u) << count;
    EXPECT_EQ(fake.clusterQueries,
              count ? std::vector<unsigned>{4} : std::vector<unsigned>{});
  }
}

TEST_F(LaunchTest, LaunchVariantMetadataIsChecked) {
  auto error = [](const std::string &json) {
    KernelMetadata meta;
    return parseKernelMetadata(json, "k.json", meta).message();
  };
  EXPECT_NE(error(replaced(kExampleJson, kPersistentGrid,
                           "{\"kind\": \"fixed\", \"dims\": [1, 1, 1]}")
                      .insert(1, "\"variants\": [\"v.json\"],"))
                .find("variants: only a kernel with a \"persistent\" grid has "
                      "launch variants"),
            std::string::npos);
  EXPECT_NE(error(variantJson("v", 64, 128, 65,
                              "\"variant_of\": \"k\", \"variants\": [\"w.json\"]"))
                .find("a variant (\"variant_of\") has no variants"),
            std::string::npos);
  EXPECT_NE(error(variantJson("v", 64, 128, 0)).find("grid.throughput: value 0 is "
                                                     "out of range [1, 1000]"),
            std::string::npos);
  EXPECT_NE(error(variantJson("v", 64, 128, 65, "\"variants\": [\"\"]"))
                .find("variants[0]: must not be empty"),
            std::string::npos);
}

} // namespace
} // namespace fp8rt::testing
