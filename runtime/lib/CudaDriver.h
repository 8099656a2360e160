// The CUDA driver entry points fp8rt calls, as a table of function pointers.
//
// Production code fills the table from libcuda.so.1 with dlopen/dlsym (the
// versioned symbol names cuda.h maps to, e.g. cuMemAlloc_v2). Tests install
// a table of fakes with setDriverForTesting, which is how the launch logic
// is unit-tested on machines without a GPU.
#ifndef FP8RT_LIB_CUDADRIVER_H
#define FP8RT_LIB_CUDADRIVER_H

#include "CudaTypes.h"
#include "Status.h"

#include <string>

namespace fp8rt {

// X(member, exported symbol, parameter list). The symbol is the name the
// driver library exports (what cuda.h's #defines resolve to).
// clang-format off
#define FP8RT_DRIVER_FUNCTIONS(X)                                              \
  X(init, cuInit, (unsigned int))                                              \
  X(getErrorName, cuGetErrorName, (CUresult, const char **))                   \
  X(getErrorString, cuGetErrorString, (CUresult, const char **))               \
  X(deviceGet, cuDeviceGet, (CUdevice *, int))                                 \
  X(deviceGetAttribute, cuDeviceGetAttribute,                                  \
    (int *, CUdevice_attribute, CUdevice))                                     \
  X(devicePrimaryCtxRetain, cuDevicePrimaryCtxRetain, (CUcontext *, CUdevice)) \
  X(ctxGetCurrent, cuCtxGetCurrent, (CUcontext *))                             \
  X(ctxSetCurrent, cuCtxSetCurrent, (CUcontext))                               \
  X(ctxPushCurrent, cuCtxPushCurrent_v2, (CUcontext))                          \
  X(ctxPopCurrent, cuCtxPopCurrent_v2, (CUcontext *))                          \
  X(ctxGetDevice, cuCtxGetDevice, (CUdevice *))                                \
  X(moduleLoadDataEx, cuModuleLoadDataEx,                                      \
    (CUmodule *, const void *, unsigned int, CUjit_option *, void **))         \
  X(moduleUnload, cuModuleUnload, (CUmodule))                                  \
  X(moduleGetFunction, cuModuleGetFunction,                                    \
    (CUfunction *, CUmodule, const char *))                                    \
  X(funcSetAttribute, cuFuncSetAttribute,                                      \
    (CUfunction, CUfunction_attribute, int))                                   \
  X(launchKernel, cuLaunchKernel,                                              \
    (CUfunction, unsigned int, unsigned int, unsigned int, unsigned int,       \
     unsigned int, unsigned int, unsigned int, CUstream, void **, void **))    \
  X(launchKernelEx, cuLaunchKernelEx,                                          \
    (const CUlaunchConfig *, CUfunction, void **, void **))                    \
  X(tensorMapEncodeTiled, cuTensorMapEncodeTiled,                              \
    (CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *,                   \
     const cuuint64_t *, const cuuint64_t *, const cuuint32_t *,               \
     const cuuint32_t *, CUtensorMapInterleave, CUtensorMapSwizzle,            \
     CUtensorMapL2promotion, CUtensorMapFloatOOBfill))                         \
  X(memAlloc, cuMemAlloc_v2, (CUdeviceptr *, size_t))                          \
  X(memFree, cuMemFree_v2, (CUdeviceptr))                                      \
  X(memAllocHost, cuMemAllocHost_v2, (void **, size_t))                        \
  X(memAllocAsync, cuMemAllocAsync, (CUdeviceptr *, size_t, CUstream))         \
  X(memFreeAsync, cuMemFreeAsync, (CUdeviceptr, CUstream))                     \
  X(memFreeHost, cuMemFreeHost, (void *))                                      \
  X(memcpyHtoDAsync, cuMemcpyHtoDAsync_v2,                                     \
    (CUdeviceptr, const void *, size_t, CUstream))                             \
  X(memcpyDtoDAsync, cuMemcpyDtoDAsync_v2,                                     \
    (CUdeviceptr, CUdeviceptr, size_t, CUstream))                              \
  X(memcpy2DAsync, cuMemcpy2DAsync_v2, (const CUDA_MEMCPY2D *, CUstream))       \
  X(memsetD8Async, cuMemsetD8Async, (CUdeviceptr, unsigned char, size_t,       \
                                     CUstream))                                \
  X(eventCreate, cuEventCreate, (CUevent *, unsigned int))                     \
  X(eventRecord, cuEventRecord, (CUevent, CUstream))                           \
  X(eventSynchronize, cuEventSynchronize, (CUevent))                           \
  X(eventDestroy, cuEventDestroy_v2, (CUevent))                                \
  X(streamIsCapturing, cuStreamIsCapturing, (CUstream, CUstreamCaptureStatus *)) \
  X(streamGetId, cuStreamGetId, (CUstream, unsigned long long *))
// clang-format on

// Entry points fp8rt uses when the driver has them (nullptr otherwise):
// cuTensorMapReplaceAddress (CUDA 12.3) patches the address of an encoded
// tensor map, which is cheaper than encoding it again;
// cuOccupancyMaxActiveClusters (CUDA 12.0) counts the clusters a device
// runs at once, for the choice among K-split launch variants.
// clang-format off
#define FP8RT_OPTIONAL_DRIVER_FUNCTIONS(X)                                     \
  X(tensorMapReplaceAddress, cuTensorMapReplaceAddress, (CUtensorMap *, void *)) \
  X(occupancyMaxActiveClusters, cuOccupancyMaxActiveClusters,                  \
    (int *, CUfunction, const CUlaunchConfig *))
// clang-format on

struct DriverApi {
#define FP8RT_DRIVER_MEMBER(member, symbol, params)                            \
  CUresult(*member) params = nullptr;
  FP8RT_DRIVER_FUNCTIONS(FP8RT_DRIVER_MEMBER)
  FP8RT_OPTIONAL_DRIVER_FUNCTIONS(FP8RT_DRIVER_MEMBER)
#undef FP8RT_DRIVER_MEMBER
};

// The default shared-object name of the driver.
constexpr const char *kDriverLibraryName = "libcuda.so.1";

// dlopens `library` and resolves every entry point into `api` (no cuInit).
// FP8RT_ERROR_DRIVER_NOT_FOUND when the library or a symbol is missing.
// The library stays loaded for the life of the process unless `handle` is
// given, in which case the caller owns the dlopen handle.
Status loadDriverLibrary(const char *library, DriverApi &api,
                         void **handle = nullptr);

// The driver launches use: the table installed by setDriverForTesting, or
// libcuda.so.1, loaded and cuInit'ed once per process (the outcome, success
// or failure, is remembered).
Status acquireDriver(const DriverApi *&out);

// Installs `fake` (which must outlive its use) as the driver; nullptr goes
// back to the real one. Also forgets the cached primary context.
void setDriverForTesting(const DriverApi *fake);

// FP8RT_ERROR_CUDA "CALL failed: CUDA_ERROR_X (description)" unless
// result == CUDA_SUCCESS.
Status checkCuda(const DriverApi &api, CUresult result, const char *call);

// The calling thread's current context; if it has none, the primary context
// of device 0, retained once per process (never released) and made current.
Status currentOrPrimaryContext(const DriverApi &api, CUcontext &out);

} // namespace fp8rt

#endif // FP8RT_LIB_CUDADRIVER_H
