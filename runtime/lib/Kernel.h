// The object behind the C API's opaque fp8rt_kernel handle, and the launch
// path (Launch.cpp): contexts, modules, tensor-map encoding, the device
// buffers of "global" tensor maps, and the launch itself.
#ifndef FP8RT_LIB_KERNEL_H
#define FP8RT_LIB_KERNEL_H

#include "CudaDriver.h"
#include "KernelMetadata.h"
#include "LaunchArguments.h"
#include "Status.h"

#include <map>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

namespace fp8rt {

struct ContextState; // per CUDA context: module, function, device limits

// The last encoding of one tensor map, reused while its arguments (operand
// address, dims, strides...) stay the same.
struct EncodedTensorMap {
  bool valid = false;
  ResolvedTensorMap arguments;
  CUtensorMap map;
};

enum class ImageKind { Ptx, Binary };

// ELF (cubin) and fatbin images are binary; anything else is PTX text.
ImageKind detectImageKind(const void *image, size_t size);

} // namespace fp8rt

struct fp8rt_kernel {
  fp8rt::KernelMetadata meta;
  std::vector<char> image; // PTX images end with a NUL byte
  fp8rt::ImageKind imageKind = fp8rt::ImageKind::Ptx;

  std::mutex mutex; // guards everything below; launches are serialised
  const fp8rt::DriverApi *driver = nullptr; // the driver of `contexts`
  std::map<CUcontext, std::unique_ptr<fp8rt::ContextState>> contexts;
  std::vector<fp8rt::EncodedTensorMap> encodedMaps; // per metadata map
  // The launch variants listed by the metadata ("variants"), loaded with
  // the kernel from its directory; a launch runs the one
  // selectLaunchVariant picks among this kernel and them.
  std::vector<std::unique_ptr<fp8rt_kernel>> variants;

  fp8rt_kernel();
  ~fp8rt_kernel(); // unloads modules, frees device buffers
  fp8rt_kernel(const fp8rt_kernel &) = delete;
  fp8rt_kernel &operator=(const fp8rt_kernel &) = delete;
};

namespace fp8rt {

// Builds a kernel from parsed metadata and its image; for PTX images checks
// the entry's parameter list against the metadata.
Status createKernel(KernelMetadata meta, const void *image, size_t imageSize,
                    std::string_view sourceName,
                    std::unique_ptr<fp8rt_kernel> &out);

// Validates the operands (no driver call before that), then launches.
Status launchKernel(fp8rt_kernel &kernel, const fp8rt_tensor *operands,
                    int numOperands, CUstream stream);

// How many launches may use distinct "global" tensor-map contents before a
// slot of the device buffer is reused (waiting for its last launch first).
constexpr size_t kGlobalTensorMapSlots = 16;

} // namespace fp8rt

#endif // FP8RT_LIB_KERNEL_H
