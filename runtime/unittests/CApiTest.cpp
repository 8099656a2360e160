// The C entry points: loading from files, argument checks, error reporting.
#include "Kernel.h"
#include "TestKernels.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

extern "C" int fp8rt_c_smoke(void);

namespace fp8rt::testing {
namespace {

namespace fs = std::filesystem;

const char *const kPtxName = "gemm_tn_e4m3_bf16_n7168_k2048.ptx";

class CApiTest : public ::testing::Test {
protected:
  fs::path dir;

  void SetUp() override {
    char pattern[] = "/tmp/fp8rt-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir = pattern;
  }
  void TearDown() override { fs::remove_all(dir); }

  std::string write(const std::string &name, const std::string &contents) {
    fs::path path = dir / name;
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << contents;
    return path.string();
  }

  std::string lastError() const { return fp8rt_last_error(); }
};

TEST_F(CApiTest, LoadsMetadataAndThePtxNextToIt) {
  std::string json = write("k.json", kExampleJson);
  write(kPtxName, kExamplePtx);
  fp8rt_kernel *kernel = nullptr;
  ASSERT_EQ(fp8rt_kernel_load(json.c_str(), &kernel), FP8RT_SUCCESS)
      << lastError();
  EXPECT_STREQ(fp8rt_kernel_name(kernel), "gemm_tn_e4m3_bf16_n7168_k2048");
  EXPECT_EQ(kernel->imageKind, ImageKind::Ptx);
  std::string image(kernel->image.begin(), kernel->image.end());
  EXPECT_EQ(image, std::string(kExamplePtx) + '\0'); // NUL-terminated for JIT
  fp8rt_kernel_destroy(kernel);
}

TEST_F(CApiTest, ResolvesImagePathsAgainstTheJsonDirectory) {
  std::string json =
      write("meta/k.json",
            replaced(kExampleJson, std::string("\"ptx\": \"") + kPtxName + "\"",
                     "\"ptx\": \"../ptx/k.ptx\""));
  write("ptx/k.ptx", kExamplePtx);
  fp8rt_kernel *kernel = nullptr;
  ASSERT_EQ(fp8rt_kernel_load(json.c_str(), &kernel), FP8RT_SUCCESS)
      << lastError();
  fp8rt_kernel_destroy(kernel);

  std::string absolute = write("abs.ptx", kExamplePtx);
  json = write("k2.json", replaced(kExampleJson,
                                   std::string("\"ptx\": \"") + kPtxName + "\"",
                                   "\"ptx\": \"" + absolute + "\""));
  ASSERT_EQ(fp8rt_kernel_load(json.c_str(), &kernel), FP8RT_SUCCESS)
      << lastError();
  fp8rt_kernel_destroy(kernel);
}

TEST_F(CApiTest, LoadsTheCubinWhenOneIsNamed) {
  const char elf[] = "\x7f"
                     "ELF\x02\x01\x01\0\0\0binary";
  std::string cubin(elf, sizeof(elf) - 1); // with its embedded NULs
  std::string json = write(
      "k.json",
      replaced(kExampleJson, "\"ptx\": ", "\"cubin\": \"k.cubin\", \"ptx\": "));
  write("k.cubin", cubin); // the PTX file does not even exist
  fp8rt_kernel *kernel = nullptr;
  ASSERT_EQ(fp8rt_kernel_load(json.c_str(), &kernel), FP8RT_SUCCESS)
      << lastError();
  EXPECT_EQ(kernel->imageKind, ImageKind::Binary);
  EXPECT_EQ(std::string(kernel->image.begin(), kernel->image.end()), cubin);
  fp8rt_kernel_destroy(kernel);
}

TEST_F(CApiTest, MissingOrEmptyFilesAreIoErrors) {
  fp8rt_kernel *kernel = reinterpret_cast<fp8rt_kernel *>(0x1);
  std::string missing = (dir / "nope.json").string();
  EXPECT_EQ(fp8rt_kernel_load(missing.c_str(), &kernel), FP8RT_ERROR_IO);
  EXPECT_EQ(kernel, nullptr); // cleared on failure
  EXPECT_EQ(lastError(), "fp8rt_kernel_load: cannot open \"" + missing +
                             "\": No such file or directory");

  std::string json = write("k.json", kExampleJson);
  EXPECT_EQ(fp8rt_kernel_load(json.c_str(), &kernel), FP8RT_ERROR_IO);
  EXPECT_EQ(lastError(), "fp8rt_kernel_load: cannot open \"" +
                             (dir / kPtxName).string() +
                             "\": No such file or directory");

  write(kPtxName, "");
  EXPECT_EQ(fp8rt_kernel_load(json.c_str(), &kernel), FP8RT_ERROR_IO);
  EXPECT_EQ(lastError(), "fp8rt_kernel_load: \"" + (dir / kPtxName).string() +
                             "\" is empty");

  EXPECT_EQ(fp8rt_kernel_load(dir.c_str(), &kernel), FP8RT_ERROR_IO)
      << "reading a directory";
}

TEST_F(CApiTest, MetadataErrorsNameTheFileLineAndColumn) {
  std::string json = write(
      "k.json", replaced(kExampleJson, "\"version\": 1", "\"version\": 2"));
  fp8rt_kernel *kernel = nullptr;
  EXPECT_EQ(fp8rt_kernel_load(json.c_str(), &kernel),
            FP8RT_ERROR_INVALID_METADATA);
  EXPECT_EQ(lastError(), "fp8rt_kernel_load: " + json +
                             ":3:14: version: unsupported version 2 (this "
                             "runtime reads version 1)");
  EXPECT_EQ(fp8rt_kernel_load_from_memory("{\"format\": ", "x", 1, &kernel),
            FP8RT_ERROR_INVALID_METADATA);
  EXPECT_EQ(lastError(), "fp8rt_kernel_load_from_memory: <json>:1:12: invalid "
                         "JSON: unexpected end of input, expected a value");
}

TEST_F(CApiTest, PtxThatDisagreesWithTheMetadataIsRejectedAtLoad) {
  std::string json = write("k.json", kExampleJson);
  write(kPtxName, replaced(kExamplePtx, ".param .u32", ".param .u16"));
  fp8rt_kernel *kernel = nullptr;
  EXPECT_EQ(fp8rt_kernel_load(json.c_str(), &kernel),
            FP8RT_ERROR_INVALID_METADATA);
  EXPECT_NE(
      lastError().find("fp8rt_kernel_load: " + (dir / kPtxName).string() +
                       ": params[4] \"m\" (i32) needs a 4-byte parameter"),
      std::string::npos)
      << lastError();
}

TEST_F(CApiTest, RejectsNullArguments) {
  fp8rt_kernel *kernel = nullptr;
  EXPECT_EQ(fp8rt_kernel_load(nullptr, &kernel), FP8RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(lastError(), "fp8rt_kernel_load: json_path is NULL");
  EXPECT_EQ(fp8rt_kernel_load("k.json", nullptr), FP8RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(lastError(), "fp8rt_kernel_load: out is NULL");
  EXPECT_EQ(fp8rt_kernel_load_from_memory(kExampleJson, nullptr, 0, &kernel),
            FP8RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(lastError(), "fp8rt_kernel_load_from_memory: image is NULL");
  EXPECT_EQ(fp8rt_kernel_load_from_memory(kExampleJson, "", 0, &kernel),
            FP8RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(lastError(), "fp8rt_kernel_load_from_memory: image is empty");
  EXPECT_EQ(fp8rt_kernel_load_from_memory(nullptr, kExamplePtx, 0, &kernel),
            FP8RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(lastError(), "fp8rt_kernel_load_from_memory: json is NULL");
  EXPECT_STREQ(fp8rt_kernel_name(nullptr), "");
  fp8rt_kernel_destroy(nullptr); // no-op
}

TEST_F(CApiTest, LoadsBinaryImagesFromMemory) {
  const unsigned char fatbin[] = {0x50, 0xED, 0x55, 0xBA,
                                  0x01, 0x00, 0x10, 0x00};
  fp8rt_kernel *kernel = nullptr;
  ASSERT_EQ(fp8rt_kernel_load_from_memory(kExampleJson, fatbin, sizeof(fatbin),
                                          &kernel),
            FP8RT_SUCCESS)
      << lastError();
  EXPECT_EQ(kernel->imageKind, ImageKind::Binary);
  EXPECT_EQ(kernel->image.size(), sizeof(fatbin));
  fp8rt_kernel_destroy(kernel);
  // An explicit PTX size need not include the NUL.
  std::string ptx = kExamplePtx;
  ASSERT_EQ(fp8rt_kernel_load_from_memory(kExampleJson, ptx.data(), ptx.size(),
                                          &kernel),
            FP8RT_SUCCESS)
      << lastError();
  EXPECT_EQ(kernel->image.size(), ptx.size() + 1);
  EXPECT_EQ(kernel->image.back(), '\0');
  fp8rt_kernel_destroy(kernel);
}

TEST_F(CApiTest, LastErrorIsPerThreadAndKeptAcrossSuccesses) {
  fp8rt_kernel *kernel = nullptr;
  EXPECT_EQ(fp8rt_kernel_load(nullptr, &kernel), FP8RT_ERROR_INVALID_ARGUMENT);
  std::string otherThread = "unset";
  std::thread([&] { otherThread = fp8rt_last_error(); }).join();
  EXPECT_EQ(otherThread, "");
  ASSERT_EQ(
      fp8rt_kernel_load_from_memory(kExampleJson, kExamplePtx, 0, &kernel),
      FP8RT_SUCCESS);
  EXPECT_EQ(lastError(), "fp8rt_kernel_load: json_path is NULL");
  fp8rt_kernel_destroy(kernel);
}

TEST_F(CApiTest, StatusStrings) {
  EXPECT_STREQ(fp8rt_status_string(FP8RT_SUCCESS), "FP8RT_SUCCESS");
  EXPECT_STREQ(fp8rt_status_string(FP8RT_ERROR_INVALID_ARGUMENT),
               "FP8RT_ERROR_INVALID_ARGUMENT");
  EXPECT_STREQ(fp8rt_status_string(FP8RT_ERROR_INVALID_METADATA),
               "FP8RT_ERROR_INVALID_METADATA");
  EXPECT_STREQ(fp8rt_status_string(FP8RT_ERROR_DRIVER_NOT_FOUND),
               "FP8RT_ERROR_DRIVER_NOT_FOUND");
  EXPECT_STREQ(fp8rt_status_string(FP8RT_ERROR_CUDA), "FP8RT_ERROR_CUDA");
  EXPECT_STREQ(fp8rt_status_string(FP8RT_ERROR_IO), "FP8RT_ERROR_IO");
  EXPECT_STREQ(fp8rt_status_string(FP8RT_ERROR_INTERNAL),
               "FP8RT_ERROR_INTERNAL");
  EXPECT_STREQ(fp8rt_status_string(FP8RT_ERROR_COLLECTIVE),
               "FP8RT_ERROR_COLLECTIVE");
  EXPECT_STREQ(fp8rt_status_string(static_cast<fp8rt_status>(8)),
               "FP8RT_ERROR_UNKNOWN_STATUS");
}

TEST_F(CApiTest, HeaderIsUsableFromC) { EXPECT_EQ(fp8rt_c_smoke(), 0); }

} // namespace
} // namespace fp8rt::testing
