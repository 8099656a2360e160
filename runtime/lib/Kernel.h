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

// 64-byte aligned storage for the parameter buffer, so grid_constant
// tensor maps sit at 64-byte aligned host addresses too.
struct alignas(64) ParamChunk {
  unsigned char bytes[64];
};

// What a launch needs besides its arguments, kept per kernel (under its
// mutex) so that a launch allocates no host memory.
struct LaunchScratch {
  std::vector<CUdeviceptr> deviceAddresses; // per param
  std::vector<CUtensorMap> maps;            // per metadata tensor map
  std::vector<ParamChunk> buffer;           // the packed parameters
  std::vector<void *> kernelParams;         // per param, into `buffer`
};

// One operand of a plan's configuration.
struct OperandKey {
  bool present = false;
  int dtype = 0;
  int rank = 0;
  int64_t shape[FP8RT_MAX_RANK] = {};
  int64_t strides[FP8RT_MAX_RANK] = {};

  bool matches(const fp8rt_tensor &t) const {
    if (present != (t.data != nullptr))
      return false;
    if (!present)
      return true;
    if (dtype != static_cast<int>(t.dtype) || rank != t.rank)
      return false;
    for (int d = 0; d < rank; ++d)
      if (shape[d] != t.shape[d] || strides[d] != t.strides[d])
        return false;
    return true;
  }

  void assign(const fp8rt_tensor &t) {
    *this = OperandKey();
    present = t.data != nullptr;
    if (!present)
      return;
    dtype = static_cast<int>(t.dtype);
    rank = t.rank;
    for (int d = 0; d < rank && d < FP8RT_MAX_RANK; ++d) {
      shape[d] = t.shape[d];
      strides[d] = t.strides[d];
    }
  }
};

// A configuration fp8rt_launch_ordered validated (OrderedLaunch.cpp).
struct OrderedPlan {
  CUcontext context = nullptr;
  std::vector<OperandKey> key; // per metadata operand
  fp8rt_kernel *target = nullptr;  // the kernel or the launch variant run
  ContextState *state = nullptr;   // target's, in `context`
  LaunchArguments args;            // bound against target->meta
  GridDims grid;
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
  fp8rt::LaunchScratch scratch;
  // fp8rt_launch_ordered's validated configurations, most recently used
  // first (at most kOrderedPlans).
  std::vector<std::unique_ptr<fp8rt::OrderedPlan>> orderedPlans;
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

// fp8rt_launch_ordered: operands[i] is the metadata's operand i. Validation
// is memoized per (context, operand dtypes, shapes, strides, presence);
// see OrderedLaunch.cpp.
Status launchKernelOrdered(fp8rt_kernel &kernel, const fp8rt_tensor *operands,
                           int numOperands, CUstream stream);

// The start of every launch: the driver, `kernel`'s mutex locked into
// `lock`, the driver claimed, and the context to launch in.
Status enterLaunch(fp8rt_kernel &kernel, std::unique_lock<std::mutex> &lock,
                   const DriverApi *&api, CUcontext &context);

// Records `api` as the driver of the kernel's module state (under
// kernel.mutex); an error if the kernel already has state of another.
Status claimDriver(fp8rt_kernel &kernel, const DriverApi &api);

// The module state of `kernel` in `context` (loaded at the first use).
// Needs kernel.mutex.
Status contextStateFor(fp8rt_kernel &kernel, const DriverApi &api,
                       CUcontext context, ContextState *&out);
int contextSMs(const ContextState &state);

// The index into kernel.variants + 1 of the launch variant that runs an
// M x N problem on `state`'s device, or 0 for the kernel itself.
size_t chooseLaunchVariant(const fp8rt_kernel &kernel,
                           const LaunchArguments &args,
                           const ContextState &state);

// fp8rt_kernel_for_expected_m: the kernel (or the launch variant of it)
// with the fewest estimated waves for groups of `expectedM` rows on
// `numSMs` SMs, where the kernel's variants are chosen by that hint; the
// kernel itself where it has no variants.
Status kernelForExpectedM(fp8rt_kernel &kernel, int64_t expectedM, int numSMs,
                          fp8rt_kernel *&out);

// fp8rt_kernel_for_m: the kernel (or the launch variant of it) that a
// launch for `m` rows runs on the current context's device.
Status kernelForM(fp8rt_kernel &kernel, int64_t m, fp8rt_kernel *&out);

// Launches `kernel` (whose mutex the caller holds) with bound arguments in
// `state`'s context: tensor maps (re-encoded only when their arguments
// changed), "global" map slots, workspace, parameters, the launch.
Status launchBound(fp8rt_kernel &kernel, const DriverApi &api,
                   ContextState &state, const LaunchArguments &args,
                   const GridDims &grid, CUstream stream);

// How many configurations fp8rt_launch_ordered keeps per kernel.
constexpr size_t kOrderedPlans = 16;

// How many launches may use distinct "global" tensor-map contents before a
// slot of the device buffer is reused (waiting for its last launch first).
constexpr size_t kGlobalTensorMapSlots = 16;

} // namespace fp8rt

#endif // FP8RT_LIB_KERNEL_H
