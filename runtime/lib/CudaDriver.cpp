#include "CudaDriver.h"

#include <dlfcn.h>

#include <mutex>
#include <type_traits>

namespace fp8rt {

#if FP8RT_HAVE_CUDA_H
// With the real header at hand, prove each table entry has exactly the type
// of the driver function it is loaded from.
#define FP8RT_CHECK_SIGNATURE(member, symbol, params)                          \
  static_assert(                                                               \
      std::is_same_v<decltype(DriverApi::member), decltype(&::symbol)>,        \
      "DriverApi::" #member " does not match " #symbol " in cuda.h");
FP8RT_DRIVER_FUNCTIONS(FP8RT_CHECK_SIGNATURE)
FP8RT_OPTIONAL_DRIVER_FUNCTIONS(FP8RT_CHECK_SIGNATURE)
#undef FP8RT_CHECK_SIGNATURE
#endif

namespace {

struct DriverState {
  std::mutex mutex;
  const DriverApi *fake = nullptr;
  bool realAttempted = false;
  Status realStatus;
  DriverApi real;
  CUcontext primaryContext = nullptr; // retained once, never released
};

// Deliberately leaked: kernels destroyed from other static destructors may
// still need it at exit.
DriverState &driverState() {
  static DriverState *state = new DriverState();
  return *state;
}

} // namespace

Status loadDriverLibrary(const char *library, DriverApi &api,
                         void **handleOut) {
  void *handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *why = dlerror();
    return Status(FP8RT_ERROR_DRIVER_NOT_FOUND,
                  strCat("cannot load the CUDA driver (", library,
                         "): ", why ? why : "unknown dlopen error",
                         "; is the NVIDIA driver installed?"));
  }
  DriverApi loaded;
#define FP8RT_RESOLVE(member, symbol, params)                                  \
  {                                                                            \
    void *address = dlsym(handle, #symbol);                                    \
    if (!address) {                                                            \
      dlclose(handle);                                                         \
      return Status(FP8RT_ERROR_DRIVER_NOT_FOUND,                              \
                    strCat("the CUDA driver (", library,                       \
                           ") does not export " #symbol                        \
                           "; fp8rt needs a CUDA 12.0 or newer driver"));      \
    }                                                                          \
    loaded.member = reinterpret_cast<decltype(loaded.member)>(address);        \
  }
  FP8RT_DRIVER_FUNCTIONS(FP8RT_RESOLVE)
#undef FP8RT_RESOLVE
#define FP8RT_RESOLVE_OPTIONAL(member, symbol, params)                         \
  loaded.member =                                                              \
      reinterpret_cast<decltype(loaded.member)>(dlsym(handle, #symbol));
  FP8RT_OPTIONAL_DRIVER_FUNCTIONS(FP8RT_RESOLVE_OPTIONAL)
#undef FP8RT_RESOLVE_OPTIONAL
  api = loaded;
  if (handleOut)
    *handleOut = handle;
  return Status();
}

Status acquireDriver(const DriverApi *&out) {
  DriverState &state = driverState();
  std::lock_guard<std::mutex> lock(state.mutex);
  if (state.fake) {
    out = state.fake;
    return Status();
  }
  if (!state.realAttempted) {
    state.realAttempted = true;
    state.realStatus = loadDriverLibrary(kDriverLibraryName, state.real);
    if (state.realStatus.ok())
      state.realStatus = checkCuda(state.real, state.real.init(0), "cuInit");
  }
  out = &state.real;
  return state.realStatus;
}

void setDriverForTesting(const DriverApi *fake) {
  DriverState &state = driverState();
  std::lock_guard<std::mutex> lock(state.mutex);
  state.fake = fake;
  state.primaryContext = nullptr;
}

Status checkCuda(const DriverApi &api, CUresult result, const char *call) {
  if (result == CUDA_SUCCESS)
    return Status();
  const char *name = nullptr;
  const char *description = nullptr;
  if (!api.getErrorName || api.getErrorName(result, &name) != CUDA_SUCCESS)
    name = nullptr;
  if (!api.getErrorString ||
      api.getErrorString(result, &description) != CUDA_SUCCESS)
    description = nullptr;
  std::string message = strCat(call, " failed: ");
  message += name ? std::string(name)
                  : strCat("CUDA error ", static_cast<int>(result));
  if (description)
    message += strCat(" (", description, ")");
  return Status(FP8RT_ERROR_CUDA, std::move(message));
}

Status currentOrPrimaryContext(const DriverApi &api, CUcontext &out) {
  CUcontext current = nullptr;
  FP8RT_RETURN_IF_ERROR(
      checkCuda(api, api.ctxGetCurrent(&current), "cuCtxGetCurrent"));
  if (current) {
    out = current;
    return Status();
  }
  CUcontext primary;
  {
    DriverState &state = driverState();
    std::lock_guard<std::mutex> lock(state.mutex);
    if (!state.primaryContext) {
      CUdevice device;
      FP8RT_RETURN_IF_ERROR(
          checkCuda(api, api.deviceGet(&device, 0), "cuDeviceGet(0)"));
      CUcontext retained = nullptr;
      FP8RT_RETURN_IF_ERROR(
          checkCuda(api, api.devicePrimaryCtxRetain(&retained, device),
                    "cuDevicePrimaryCtxRetain(device 0)"));
      state.primaryContext = retained;
    }
    primary = state.primaryContext;
  }
  FP8RT_RETURN_IF_ERROR(
      checkCuda(api, api.ctxSetCurrent(primary), "cuCtxSetCurrent"));
  out = primary;
  return Status();
}

} // namespace fp8rt
