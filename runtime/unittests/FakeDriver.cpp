#include "FakeDriver.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace fp8rt::testing {

namespace {
std::vector<CUcontext> contextStack;

template <typename Handle> Handle makeHandle(uintptr_t &next) {
  next += 0x10;
  return reinterpret_cast<Handle>(next);
}
} // namespace

CUtensorMap fakeEncodedMap(int n, void *address) {
  CUtensorMap map;
  for (int i = 0; i < 16; ++i)
    map.opaque[i] = 0xE0C0DE0000000000ull + uint64_t(n) * 0x100 + uint64_t(i);
  map.opaque[0] = reinterpret_cast<uintptr_t>(address);
  return map;
}

// The fake entry points; each records itself through FakeDriver::enter.
struct FakeFunctions {
  static FakeDriver &d() { return FakeDriver::get(); }

  static CUresult init(unsigned int) { return d().enter("cuInit"); }
  static CUresult getErrorName(CUresult error, const char **out) {
    if (error == CUDA_ERROR_INVALID_VALUE) {
      *out = "CUDA_ERROR_INVALID_VALUE";
      return CUDA_SUCCESS;
    }
    if (error == CUDA_ERROR_INVALID_PTX) {
      *out = "CUDA_ERROR_INVALID_PTX";
      return CUDA_SUCCESS;
    }
    return CUDA_ERROR_INVALID_VALUE; // unknown to the fake
  }
  static CUresult getErrorString(CUresult error, const char **out) {
    if (error == CUDA_ERROR_INVALID_VALUE) {
      *out = "invalid argument";
      return CUDA_SUCCESS;
    }
    if (error == CUDA_ERROR_INVALID_PTX) {
      *out = "a PTX JIT compilation failed";
      return CUDA_SUCCESS;
    }
    return CUDA_ERROR_INVALID_VALUE;
  }
  static CUresult deviceGet(CUdevice *device, int ordinal) {
    *device = ordinal;
    return d().enter("cuDeviceGet");
  }
  static CUresult deviceGetAttribute(int *value, CUdevice_attribute attribute,
                                     CUdevice) {
    switch (attribute) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
      *value = d().ccMajor;
      break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
      *value = d().ccMinor;
      break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
      *value = d().numSMs;
      break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
      *value = d().maxSharedOptin;
      break;
    default:
      *value = 0;
    }
    return d().enter("cuDeviceGetAttribute");
  }
  static CUresult devicePrimaryCtxRetain(CUcontext *context, CUdevice) {
    *context = d().primaryContext;
    return d().enter("cuDevicePrimaryCtxRetain");
  }
  static CUresult ctxGetCurrent(CUcontext *context) {
    *context = d().currentContext;
    return d().enter("cuCtxGetCurrent");
  }
  static CUresult ctxSetCurrent(CUcontext context) {
    CUresult result = d().enter("cuCtxSetCurrent");
    if (result == CUDA_SUCCESS)
      d().currentContext = context;
    return result;
  }
  static CUresult ctxPushCurrent(CUcontext context) {
    d().pushedContexts.push_back(context);
    contextStack.push_back(d().currentContext);
    d().currentContext = context;
    return d().enter("cuCtxPushCurrent");
  }
  static CUresult ctxPopCurrent(CUcontext *context) {
    *context = d().currentContext;
    if (!contextStack.empty()) {
      d().currentContext = contextStack.back();
      contextStack.pop_back();
    }
    return d().enter("cuCtxPopCurrent");
  }
  static CUresult ctxGetDevice(CUdevice *device) {
    *device = 0;
    return d().enter("cuCtxGetDevice");
  }
  static CUresult moduleLoadDataEx(CUmodule *module, const void *image,
                                   unsigned int numOptions,
                                   CUjit_option *options, void **values) {
    d().loadedImages.emplace_back(static_cast<const char *>(image));
    d().moduleContexts.push_back(d().currentContext);
    CUresult result = d().enter("cuModuleLoadDataEx");
    if (result != CUDA_SUCCESS) {
      char *log = nullptr;
      size_t size = 0;
      for (unsigned i = 0; i < numOptions; ++i) {
        if (options[i] == CU_JIT_ERROR_LOG_BUFFER)
          log = static_cast<char *>(values[i]);
        if (options[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
          size = reinterpret_cast<uintptr_t>(values[i]);
      }
      if (log && size)
        std::snprintf(log, size, "%s", d().jitErrorLog.c_str());
      return result;
    }
    *module = makeHandle<CUmodule>(d().nextHandle_);
    return result;
  }
  static CUresult moduleUnload(CUmodule module) {
    d().unloadedModules.push_back(module);
    return d().enter("cuModuleUnload");
  }
  static CUresult moduleGetFunction(CUfunction *function, CUmodule,
                                    const char *name) {
    d().functionNames.emplace_back(name);
    *function = makeHandle<CUfunction>(d().nextHandle_);
    d().functionHandles[*function] = name;
    return d().enter("cuModuleGetFunction");
  }
  static CUresult funcSetAttribute(CUfunction, CUfunction_attribute attribute,
                                   int value) {
    d().functionAttributes.emplace_back(attribute, value);
    return d().enter("cuFuncSetAttribute");
  }
  static void copyParams(LaunchCall &call, void **params) {
    auto named = d().functionHandles.find(call.function);
    auto sized = named == d().functionHandles.end()
                     ? d().paramSizesByKernel.end()
                     : d().paramSizesByKernel.find(named->second);
    const std::vector<size_t> &sizes =
        sized == d().paramSizesByKernel.end() ? d().paramSizes : sized->second;
    for (size_t i = 0; i < sizes.size(); ++i) {
      call.paramPointers.push_back(params[i]);
      const auto *bytes = static_cast<const unsigned char *>(params[i]);
      call.params.emplace_back(bytes, bytes + sizes[i]);
    }
  }
  static CUresult launchKernel(CUfunction f, unsigned gx, unsigned gy,
                               unsigned gz, unsigned bx, unsigned by,
                               unsigned bz, unsigned smem, CUstream stream,
                               void **params, void **extra) {
    LaunchCall call;
    call.function = f;
    call.grid[0] = gx, call.grid[1] = gy, call.grid[2] = gz;
    call.block[0] = bx, call.block[1] = by, call.block[2] = bz;
    call.sharedMemBytes = smem;
    call.stream = stream;
    copyParams(call, params);
    if (extra)
      return CUDA_ERROR_INVALID_VALUE; // fp8rt never uses `extra`
    d().launches.push_back(std::move(call));
    return d().enter("cuLaunchKernel");
  }
  static CUresult launchKernelEx(const CUlaunchConfig *config, CUfunction f,
                                 void **params, void **extra) {
    LaunchCall call;
    call.ex = true;
    call.function = f;
    call.grid[0] = config->gridDimX, call.grid[1] = config->gridDimY,
    call.grid[2] = config->gridDimZ;
    call.block[0] = config->blockDimX, call.block[1] = config->blockDimY,
    call.block[2] = config->blockDimZ;
    call.sharedMemBytes = config->sharedMemBytes;
    call.stream = config->hStream;
    call.numAttrs = config->numAttrs;
    if (config->numAttrs > 0)
      call.attrId = config->attrs[0].id;
    for (unsigned i = 0; i < config->numAttrs; ++i) {
      const CUlaunchAttribute &attr = config->attrs[i];
      if (attr.id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) {
        call.cluster[0] = attr.value.clusterDim.x;
        call.cluster[1] = attr.value.clusterDim.y;
        call.cluster[2] = attr.value.clusterDim.z;
      } else if (attr.id ==
                 CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION) {
        call.programmaticSerialization =
            attr.value.programmaticStreamSerializationAllowed;
      }
    }
    copyParams(call, params);
    if (extra)
      return CUDA_ERROR_INVALID_VALUE;
    d().launches.push_back(std::move(call));
    return d().enter("cuLaunchKernelEx");
  }
  static CUresult tensorMapEncodeTiled(
      CUtensorMap *map, CUtensorMapDataType type, cuuint32_t rank,
      void *address, const cuuint64_t *dims, const cuuint64_t *strides,
      const cuuint32_t *box, const cuuint32_t *elementStrides,
      CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
      CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob) {
    EncodeCall call{type,
                    rank,
                    address,
                    {dims, dims + rank},
                    {strides, strides + (rank - 1)},
                    {box, box + rank},
                    {elementStrides, elementStrides + rank},
                    interleave,
                    swizzle,
                    l2,
                    oob};
    *map = fakeEncodedMap(static_cast<int>(d().encodes.size()), address);
    d().encodes.push_back(std::move(call));
    return d().enter("cuTensorMapEncodeTiled");
  }
  static CUresult occupancyMaxActiveClusters(int *count, CUfunction,
                                             const CUlaunchConfig *config) {
    d().clusterQueries.push_back(
        config->numAttrs ? config->attrs[0].value.clusterDim.x : 1);
    *count = d().maxActiveClusters;
    return d().enter("cuOccupancyMaxActiveClusters");
  }
  static CUresult tensorMapReplaceAddress(CUtensorMap *map, void *address) {
    map->opaque[0] = reinterpret_cast<uintptr_t>(address);
    d().replacedAddresses.push_back(address);
    return d().enter("cuTensorMapReplaceAddress");
  }
  static CUresult memAlloc(CUdeviceptr *pointer, size_t size) {
    CUresult result = d().enter("cuMemAlloc");
    if (result != CUDA_SUCCESS)
      return result;
    *pointer = 0x7f0000000000ull + d().deviceAllocations.size() * 0x100000;
    d().deviceAllocations.push_back(*pointer);
    d().deviceAllocationSizes.push_back(size);
    return result;
  }
  static CUresult memFree(CUdeviceptr pointer) {
    d().deviceFrees.push_back(pointer);
    return d().enter("cuMemFree");
  }
  static CUresult memAllocAsync(CUdeviceptr *pointer, size_t size,
                                CUstream stream) {
    CUresult result = d().enter("cuMemAllocAsync");
    if (result != CUDA_SUCCESS)
      return result;
    *pointer = 0x7e0000000000ull + d().asyncAllocations.size() * 0x100000;
    d().asyncAllocations.push_back(AsyncMemoryCall{*pointer, size, stream});
    return result;
  }
  static CUresult memFreeAsync(CUdeviceptr pointer, CUstream stream) {
    d().asyncFrees.push_back(AsyncMemoryCall{pointer, 0, stream});
    return d().enter("cuMemFreeAsync");
  }
  static CUresult memAllocHost(void **pointer, size_t size) {
    CUresult result = d().enter("cuMemAllocHost");
    if (result != CUDA_SUCCESS)
      return result;
    d().hostBuffers_.emplace_back(size);
    *pointer = d().hostBuffers_.back().data();
    d().hostAllocations.push_back(*pointer);
    return result;
  }
  static CUresult memFreeHost(void *pointer) {
    d().hostFrees.push_back(pointer);
    return d().enter("cuMemFreeHost");
  }
  static CUresult memcpyHtoDAsync(CUdeviceptr destination, const void *source,
                                  size_t size, CUstream stream) {
    const auto *bytes = static_cast<const unsigned char *>(source);
    d().copies.push_back(CopyCall{destination, {bytes, bytes + size}, stream});
    return d().enter("cuMemcpyHtoDAsync");
  }
  static CUresult memcpyDtoDAsync(CUdeviceptr destination, CUdeviceptr source,
                                  size_t size, CUstream stream) {
    d().deviceCopies.push_back(
        DeviceCopyCall{destination, source, size, stream});
    if (d().copyBytes)
      std::memmove(reinterpret_cast<void *>(destination),
                   reinterpret_cast<const void *>(source), size);
    return d().enter("cuMemcpyDtoDAsync");
  }
  static CUresult memcpy2DAsync(const CUDA_MEMCPY2D *copy, CUstream stream) {
    if (copy->srcMemoryType != CU_MEMORYTYPE_DEVICE ||
        copy->dstMemoryType != CU_MEMORYTYPE_DEVICE || copy->srcXInBytes ||
        copy->srcY || copy->dstXInBytes || copy->dstY)
      return CUDA_ERROR_INVALID_VALUE;
    d().copies2D.push_back(Copy2DCall{copy->dstDevice, copy->srcDevice,
                                      copy->dstPitch, copy->srcPitch,
                                      copy->WidthInBytes, copy->Height,
                                      stream});
    if (d().copyBytes)
      for (size_t row = 0; row < copy->Height; ++row)
        std::memmove(
            reinterpret_cast<void *>(copy->dstDevice + row * copy->dstPitch),
            reinterpret_cast<const void *>(copy->srcDevice +
                                           row * copy->srcPitch),
            copy->WidthInBytes);
    return d().enter("cuMemcpy2DAsync");
  }
  static CUresult memsetD8Async(CUdeviceptr destination, unsigned char value,
                                size_t size, CUstream stream) {
    d().memsets.push_back(MemsetCall{destination, value, size, stream});
    return d().enter("cuMemsetD8Async");
  }
  static CUresult eventCreate(CUevent *event, unsigned int) {
    *event = makeHandle<CUevent>(d().nextHandle_);
    d().createdEvents.push_back(*event);
    return d().enter("cuEventCreate");
  }
  static CUresult eventRecord(CUevent event, CUstream stream) {
    d().recordedEvents.emplace_back(event, stream);
    return d().enter("cuEventRecord");
  }
  static CUresult eventSynchronize(CUevent event) {
    d().synchronizedEvents.push_back(event);
    return d().enter("cuEventSynchronize");
  }
  static CUresult eventDestroy(CUevent event) {
    d().destroyedEvents.push_back(event);
    return d().enter("cuEventDestroy");
  }
  static CUresult streamIsCapturing(CUstream, CUstreamCaptureStatus *status) {
    *status = d().captureStatus;
    return d().enter("cuStreamIsCapturing");
  }
  static CUresult streamGetId(CUstream stream, unsigned long long *id) {
    auto it = d().streamIds.find(stream);
    *id = it != d().streamIds.end() ? it->second
                                    : reinterpret_cast<uintptr_t>(stream) + 1;
    return d().enter("cuStreamGetId");
  }
};

FakeDriver::FakeDriver() {
#define FP8RT_FAKE_MEMBER(member, symbol, params)                              \
  api.member = &FakeFunctions::member;
  FP8RT_DRIVER_FUNCTIONS(FP8RT_FAKE_MEMBER)
#undef FP8RT_FAKE_MEMBER
  reset();
}

FakeDriver &FakeDriver::get() {
  static FakeDriver driver;
  return driver;
}

void FakeDriver::reset() {
  currentContext = reinterpret_cast<CUcontext>(uintptr_t(0xC0000));
  primaryContext = reinterpret_cast<CUcontext>(uintptr_t(0xB0000));
  ccMajor = 9;
  ccMinor = 0;
  numSMs = 132;
  maxSharedOptin = 232448;
  captureStatus = CU_STREAM_CAPTURE_STATUS_NONE;
  streamIds.clear();
  jitErrorLog.clear();
  failures.clear();
  paramSizes.clear();
  paramSizesByKernel.clear();
  functionHandles.clear();
  calls.clear();
  encodes.clear();
  launches.clear();
  functionAttributes.clear();
  loadedImages.clear();
  moduleContexts.clear();
  functionNames.clear();
  unloadedModules.clear();
  deviceAllocations.clear();
  deviceFrees.clear();
  deviceAllocationSizes.clear();
  asyncAllocations.clear();
  asyncFrees.clear();
  hostAllocations.clear();
  hostFrees.clear();
  copies.clear();
  memsets.clear();
  deviceCopies.clear();
  copies2D.clear();
  copyBytes = false;
  createdEvents.clear();
  destroyedEvents.clear();
  synchronizedEvents.clear();
  recordedEvents.clear();
  pushedContexts.clear();
  replacedAddresses.clear();
  api.tensorMapReplaceAddress = nullptr;
  api.occupancyMaxActiveClusters = nullptr;
  clusterQueries.clear();
  hostBuffers_.clear();
  contextStack.clear();
  nextHandle_ = 0x5000;
}

void FakeDriver::provideReplaceAddress() {
  api.tensorMapReplaceAddress = &FakeFunctions::tensorMapReplaceAddress;
}

void FakeDriver::provideMaxActiveClusters(int count) {
  maxActiveClusters = count;
  api.occupancyMaxActiveClusters = &FakeFunctions::occupancyMaxActiveClusters;
}

int FakeDriver::count(const std::string &call) const {
  return static_cast<int>(std::count(calls.begin(), calls.end(), call));
}

CUresult FakeDriver::enter(const char *call) {
  calls.emplace_back(call);
  auto it = failures.find(call);
  return it == failures.end() ? CUDA_SUCCESS : it->second;
}

} // namespace fp8rt::testing
