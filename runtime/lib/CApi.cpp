// The C entry points: argument checks, file reading, and turning internal
// Status values into fp8rt_status + the thread-local error message. No C++
// exception may cross this boundary.
#include "fp8rt/fp8rt.h"

#include "CApiSupport.h"
#include "Kernel.h"
#include "KernelMetadata.h"
#include "Status.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>
#include <string>
#include <system_error>

namespace fp8rt {
namespace {
thread_local std::string lastError;
} // namespace

fp8rt_status report(const char *function, const Status &status) {
  if (!status.ok())
    lastError = strCat(function, ": ", status.message());
  return status.code();
}

Status readFile(const std::string &path, std::string &out) {
  FILE *file = std::fopen(path.c_str(), "rb");
  if (!file)
    return Status(FP8RT_ERROR_IO,
                  strCat("cannot open \"", path,
                         "\": ", std::generic_category().message(errno)));
  out.clear();
  char chunk[1 << 16];
  size_t n;
  while ((n = std::fread(chunk, 1, sizeof(chunk), file)) > 0)
    out.append(chunk, n);
  bool failed = std::ferror(file) != 0;
  int error = errno;
  std::fclose(file);
  if (failed)
    return Status(FP8RT_ERROR_IO,
                  strCat("cannot read \"", path,
                         "\": ", std::generic_category().message(error)));
  return Status();
}

namespace {

// Image paths in the metadata are relative to the JSON file's directory.
std::string siblingPath(const std::string &jsonPath, const std::string &name) {
  if (!name.empty() && name[0] == '/')
    return name;
  size_t slash = jsonPath.rfind('/');
  if (slash == std::string::npos)
    return name;
  return jsonPath.substr(0, slash + 1) + name;
}

Status loadFromFile(const char *jsonPath, fp8rt_kernel **out);

// Loads the launch variants `kernel`'s metadata lists from its directory.
// Each must launch like the kernel (a persistent GEMM grid, the same
// operands) and have no variants itself.
Status loadVariants(const char *jsonPath, fp8rt_kernel &kernel) {
  const KernelMetadata &meta = kernel.meta;
  for (const std::string &file : meta.variantFiles) {
    std::string path = siblingPath(jsonPath, file);
    fp8rt_kernel *loaded = nullptr;
    Status status = loadFromFile(path.c_str(), &loaded);
    std::unique_ptr<fp8rt_kernel> variant(loaded);
    if (!status.ok()) {
      status.prepend(strCat("launch variant \"", file, "\" of \"", meta.name,
                            "\": "));
      return status;
    }
    const KernelMetadata &other = variant->meta;
    bool sameOperands = other.operands.size() == meta.operands.size();
    for (size_t i = 0; sameOperands && i < meta.operands.size(); ++i)
      sameOperands = other.operands[i].name == meta.operands[i].name &&
                     other.operands[i].dtype == meta.operands[i].dtype &&
                     other.operands[i].role == meta.operands[i].role;
    if (other.kind != meta.kind || other.grid.kind != GridKind::Persistent ||
        !sameOperands || !other.variantFiles.empty())
      return Status(FP8RT_ERROR_INVALID_METADATA,
                    strCat(path, ": launch variant of \"", meta.name,
                           "\" must be a ", fp8schema::stringify(meta.kind),
                           " kernel with a persistent grid, the same operands "
                           "and no variants of its own"));
    kernel.variants.push_back(std::move(variant));
  }
  return Status();
}

Status loadFromFile(const char *jsonPath, fp8rt_kernel **out) {
  if (!out)
    return invalidArgument("out is NULL");
  *out = nullptr;
  if (!jsonPath)
    return invalidArgument("json_path is NULL");
  std::string json;
  FP8RT_RETURN_IF_ERROR(readFile(jsonPath, json));
  KernelMetadata meta;
  FP8RT_RETURN_IF_ERROR(parseKernelMetadata(json, jsonPath, meta));
  std::string imagePath = siblingPath(
      jsonPath, meta.cubinFile.empty() ? meta.ptxFile : meta.cubinFile);
  std::string image;
  FP8RT_RETURN_IF_ERROR(readFile(imagePath, image));
  if (image.empty())
    return Status(FP8RT_ERROR_IO, strCat("\"", imagePath, "\" is empty"));
  std::unique_ptr<fp8rt_kernel> kernel;
  FP8RT_RETURN_IF_ERROR(createKernel(std::move(meta), image.data(),
                                     image.size(), imagePath, kernel));
  FP8RT_RETURN_IF_ERROR(loadVariants(jsonPath, *kernel));
  *out = kernel.release();
  return Status();
}

} // namespace

Status loadKernelFile(const std::string &jsonPath,
                      std::unique_ptr<fp8rt_kernel> &out) {
  fp8rt_kernel *loaded = nullptr;
  Status status = loadFromFile(jsonPath.c_str(), &loaded);
  out.reset(loaded);
  return status;
}

namespace {

Status loadFromMemory(const char *json, const void *image, size_t imageSize,
                      fp8rt_kernel **out) {
  if (!out)
    return invalidArgument("out is NULL");
  *out = nullptr;
  if (!json)
    return invalidArgument("json is NULL");
  if (!image)
    return invalidArgument("image is NULL");
  if (imageSize == 0) // a NUL-terminated PTX string
    imageSize = std::strlen(static_cast<const char *>(image));
  if (imageSize == 0)
    return invalidArgument("image is empty");
  KernelMetadata meta;
  FP8RT_RETURN_IF_ERROR(parseKernelMetadata(json, "<json>", meta));
  std::unique_ptr<fp8rt_kernel> kernel;
  FP8RT_RETURN_IF_ERROR(
      createKernel(std::move(meta), image, imageSize, "<image>", kernel));
  *out = kernel.release();
  return Status();
}

} // namespace
} // namespace fp8rt

// The entry points that answer with `kernel` or one of its launch
// variants: `choose` runs once `out` and `kernel` are checked, and its
// errors name the kernel.
template <typename Choose>
static fp8rt_status chooseKernel(const char *function, fp8rt_kernel *kernel,
                                 fp8rt_kernel **out, Choose &&choose) {
  return fp8rt::guarded(function, [&] {
    if (!out)
      return fp8rt::invalidArgument("out is NULL");
    *out = nullptr;
    if (!kernel)
      return fp8rt::invalidArgument("kernel is NULL");
    fp8rt::Status status = choose(*kernel, *out);
    if (!status.ok())
      status.prepend(fp8rt::strCat("kernel \"", kernel->meta.name, "\": "));
    return status;
  });
}

extern "C" {

FP8RT_API fp8rt_status fp8rt_kernel_load(const char *json_path,
                                         fp8rt_kernel **out) {
  return fp8rt::guarded("fp8rt_kernel_load",
                        [&] { return fp8rt::loadFromFile(json_path, out); });
}

FP8RT_API fp8rt_status fp8rt_kernel_load_from_memory(const char *json,
                                                     const void *image,
                                                     size_t image_size,
                                                     fp8rt_kernel **out) {
  return fp8rt::guarded("fp8rt_kernel_load_from_memory", [&] {
    return fp8rt::loadFromMemory(json, image, image_size, out);
  });
}

FP8RT_API void fp8rt_kernel_destroy(fp8rt_kernel *kernel) {
  try {
    delete kernel;
  } catch (...) {
    // A destructor that throws (it should not) must still not reach C.
  }
}

FP8RT_API fp8rt_status fp8rt_launch(fp8rt_kernel *kernel,
                                    const fp8rt_tensor *operands,
                                    int num_operands, void *cu_stream) {
  return fp8rt::guarded("fp8rt_launch", [&] {
    if (!kernel)
      return fp8rt::invalidArgument("kernel is NULL");
    fp8rt::Status status = fp8rt::launchKernel(
        *kernel, operands, num_operands, static_cast<CUstream>(cu_stream));
    if (!status.ok())
      status.prepend(fp8rt::strCat("kernel \"", kernel->meta.name, "\": "));
    return status;
  });
}

FP8RT_API fp8rt_status fp8rt_launch_ordered(fp8rt_kernel *kernel,
                                            const fp8rt_tensor *operands,
                                            int num_operands, void *cu_stream) {
  return fp8rt::guarded("fp8rt_launch_ordered", [&] {
    if (!kernel)
      return fp8rt::invalidArgument("kernel is NULL");
    fp8rt::Status status = fp8rt::launchKernelOrdered(
        *kernel, operands, num_operands, static_cast<CUstream>(cu_stream));
    if (!status.ok())
      status.prepend(fp8rt::strCat("kernel \"", kernel->meta.name, "\": "));
    return status;
  });
}

FP8RT_API fp8rt_status fp8rt_kernel_for_expected_m(fp8rt_kernel *kernel,
                                                   int64_t expected_m,
                                                   int num_sms,
                                                   fp8rt_kernel **out) {
  return chooseKernel("fp8rt_kernel_for_expected_m", kernel, out,
                      [&](fp8rt_kernel &k, fp8rt_kernel *&chosen) {
                        return fp8rt::kernelForExpectedM(k, expected_m, num_sms,
                                                         chosen);
                      });
}

FP8RT_API fp8rt_status fp8rt_kernel_for_m(fp8rt_kernel *kernel, int64_t m,
                                          fp8rt_kernel **out) {
  return chooseKernel("fp8rt_kernel_for_m", kernel, out,
                      [&](fp8rt_kernel &k, fp8rt_kernel *&chosen) {
                        return fp8rt::kernelForM(k, m, chosen);
                      });
}

FP8RT_API int fp8rt_kernel_num_operands(const fp8rt_kernel *kernel) {
  return kernel ? static_cast<int>(kernel->meta.operands.size()) : 0;
}

FP8RT_API const char *fp8rt_kernel_operand_name(const fp8rt_kernel *kernel,
                                                int index) {
  if (!kernel || index < 0 ||
      index >= static_cast<int>(kernel->meta.operands.size()))
    return nullptr;
  return kernel->meta.operands[index].name.c_str();
}

FP8RT_API const char *fp8rt_kernel_name(const fp8rt_kernel *kernel) {
  return kernel ? kernel->meta.name.c_str() : "";
}

FP8RT_API const char *fp8rt_last_error(void) {
  return fp8rt::lastError.c_str();
}

FP8RT_API const char *fp8rt_status_string(fp8rt_status status) {
  switch (status) {
  case FP8RT_SUCCESS:
    return "FP8RT_SUCCESS";
  case FP8RT_ERROR_INVALID_ARGUMENT:
    return "FP8RT_ERROR_INVALID_ARGUMENT";
  case FP8RT_ERROR_INVALID_METADATA:
    return "FP8RT_ERROR_INVALID_METADATA";
  case FP8RT_ERROR_DRIVER_NOT_FOUND:
    return "FP8RT_ERROR_DRIVER_NOT_FOUND";
  case FP8RT_ERROR_CUDA:
    return "FP8RT_ERROR_CUDA";
  case FP8RT_ERROR_IO:
    return "FP8RT_ERROR_IO";
  case FP8RT_ERROR_INTERNAL:
    return "FP8RT_ERROR_INTERNAL";
  case FP8RT_ERROR_COLLECTIVE:
    return "FP8RT_ERROR_COLLECTIVE";
  }
  return "FP8RT_ERROR_UNKNOWN_STATUS";
}

} // extern "C"
