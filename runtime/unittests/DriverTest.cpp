// Loading the real driver library: missing library, missing symbols, the
// CUDA toolkit's stub library (every entry point must resolve), and the
// launch path on a machine without a driver.
#include "CudaDriver.h"
#include "Kernel.h"
#include "TestKernels.h"

#include <gtest/gtest.h>

#include <dlfcn.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

namespace fp8rt::testing {
namespace {

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

TEST(DriverTest, MissingLibraryIsDriverNotFound) {
  DriverApi api;
  Status status = loadDriverLibrary("libfp8rt-no-such-driver.so.1", api);
  EXPECT_EQ(status.code(), FP8RT_ERROR_DRIVER_NOT_FOUND);
  EXPECT_TRUE(contains(status.message(), "cannot load the CUDA driver "
                                         "(libfp8rt-no-such-driver.so.1): "))
      << status.message();
  EXPECT_TRUE(contains(status.message(), "is the NVIDIA driver installed?"));
  EXPECT_EQ(api.init, nullptr);
}

TEST(DriverTest, LibraryWithoutTheEntryPointsIsDriverNotFound) {
  DriverApi api;
  Status status = loadDriverLibrary("libm.so.6", api);
  EXPECT_EQ(status.code(), FP8RT_ERROR_DRIVER_NOT_FOUND);
  EXPECT_EQ(status.message(),
            "the CUDA driver (libm.so.6) does not export "
            "cuInit; fp8rt needs a CUDA 12.0 or newer driver");
}

TEST(DriverTest, ResolvesEveryEntryPointFromTheToolkitStub) {
#ifndef FP8RT_TEST_STUB_DRIVER
  GTEST_SKIP() << "no CUDA toolkit stub libcuda.so at configure time";
#else
  if (access(FP8RT_TEST_STUB_DRIVER, R_OK) != 0)
    GTEST_SKIP() << FP8RT_TEST_STUB_DRIVER << " is gone";
  DriverApi api;
  void *handle = nullptr;
  Status status = loadDriverLibrary(FP8RT_TEST_STUB_DRIVER, api, &handle);
  ASSERT_TRUE(status.ok()) << status.message();
  // Unloaded at the end: its soname is libcuda.so.1, and while it is loaded
  // dlopen("libcuda.so.1") would find it.
  std::unique_ptr<void, int (*)(void *)> unload(handle, dlclose);
#define FP8RT_EXPECT_RESOLVED(member, symbol, params)                          \
  EXPECT_NE(reinterpret_cast<void *>(api.member), nullptr) << #symbol;
  FP8RT_DRIVER_FUNCTIONS(FP8RT_EXPECT_RESOLVED)
#undef FP8RT_EXPECT_RESOLVED
  // The stub refuses to initialise; that must be a clean error.
  Status init = checkCuda(api, api.init(0), "cuInit");
  EXPECT_EQ(init.code(), FP8RT_ERROR_CUDA);
  EXPECT_TRUE(contains(init.message(), "cuInit failed: ")) << init.message();
#endif
}

TEST(DriverTest, CheckCudaNamesTheCallAndTheError) {
  DriverApi api;
  EXPECT_TRUE(checkCuda(api, CUDA_SUCCESS, "cuFoo").ok());
  // Without the name functions the numeric code is used.
  Status bare = checkCuda(api, CUDA_ERROR_INVALID_VALUE, "cuFoo");
  EXPECT_EQ(bare.code(), FP8RT_ERROR_CUDA);
  EXPECT_EQ(bare.message(), "cuFoo failed: CUDA error 1");
  api.getErrorName = [](CUresult, const char **name) {
    *name = "CUDA_ERROR_INVALID_VALUE";
    return CUDA_SUCCESS;
  };
  api.getErrorString = [](CUresult, const char **text) {
    *text = "invalid argument";
    return CUDA_SUCCESS;
  };
  EXPECT_EQ(checkCuda(api, CUDA_ERROR_INVALID_VALUE, "cuFoo").message(),
            "cuFoo failed: CUDA_ERROR_INVALID_VALUE (invalid argument)");
}

TEST(DriverTest, LaunchWithoutADriverIsDriverNotFound) {
  if (void *driver = dlopen(kDriverLibraryName, RTLD_LAZY)) {
    dlclose(driver);
    GTEST_SKIP() << "a CUDA driver is installed here";
  }
  setDriverForTesting(nullptr);
  fp8rt_kernel *kernel = nullptr;
  ASSERT_EQ(
      fp8rt_kernel_load_from_memory(kExampleJson, kExamplePtx, 0, &kernel),
      FP8RT_SUCCESS)
      << fp8rt_last_error();
  std::vector<fp8rt_tensor> ops = {
      makeTensor("a", kA, FP8RT_E4M3, {128, 2048}),
      makeTensor("b", kB, FP8RT_E4M3, {7168, 2048}),
      makeTensor("a_scale_inv", kAScale, FP8RT_F32, {}),
      makeTensor("b_scale_inv", kBScale, FP8RT_F32, {}),
      makeTensor("d", kD, FP8RT_BF16, {128, 7168})};
  for (int attempt = 0; attempt < 2; ++attempt) { // the outcome is cached
    EXPECT_EQ(fp8rt_launch(kernel, ops.data(), 5, nullptr),
              FP8RT_ERROR_DRIVER_NOT_FOUND);
    EXPECT_TRUE(
        contains(fp8rt_last_error(),
                 "fp8rt_launch: kernel \"gemm_tn_e4m3_bf16_n7168_k2048\": "
                 "cannot load the CUDA driver (libcuda.so.1): "))
        << fp8rt_last_error();
  }
  // Validation still comes first.
  ops[0].dtype = FP8RT_BF16;
  EXPECT_EQ(fp8rt_launch(kernel, ops.data(), 5, nullptr),
            FP8RT_ERROR_INVALID_ARGUMENT);
  fp8rt_kernel_destroy(kernel);
}

} // namespace
} // namespace fp8rt::testing
