// A fake CUDA driver for the unit tests: a DriverApi table whose functions
// record their calls and arguments and return configurable results, so the
// launch path can be tested without a GPU.
#ifndef FP8RT_UNITTESTS_FAKEDRIVER_H
#define FP8RT_UNITTESTS_FAKEDRIVER_H

#include "CudaDriver.h"

#include <map>
#include <string>
#include <vector>

namespace fp8rt::testing {

struct EncodeCall {
  CUtensorMapDataType dataType;
  cuuint32_t rank;
  void *address;
  std::vector<cuuint64_t> dims, stridesBytes;
  std::vector<cuuint32_t> box, elementStrides;
  CUtensorMapInterleave interleave;
  CUtensorMapSwizzle swizzle;
  CUtensorMapL2promotion l2Promotion;
  CUtensorMapFloatOOBfill oobFill;
};

struct LaunchCall {
  bool ex = false; // cuLaunchKernelEx
  CUfunction function = nullptr;
  unsigned grid[3] = {}, block[3] = {};
  unsigned sharedMemBytes = 0;
  CUstream stream = nullptr;
  unsigned numAttrs = 0;
  CUlaunchAttributeID attrId{};
  unsigned cluster[3] = {};
  // A CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION attribute's value
  // (-1: none).
  int programmaticSerialization = -1;
  std::vector<void *> paramPointers;
  std::vector<std::vector<unsigned char>> params; // copied with paramSizes
};

struct CopyCall {
  CUdeviceptr destination;
  std::vector<unsigned char> bytes;
  CUstream stream;
};

struct MemsetCall {
  CUdeviceptr destination;
  unsigned char value;
  size_t bytes;
  CUstream stream;
};

struct DeviceCopyCall {
  CUdeviceptr destination, source;
  size_t bytes;
  CUstream stream;
};

// A stream-ordered allocation (cuMemAllocAsync) or free (cuMemFreeAsync).
struct AsyncMemoryCall {
  CUdeviceptr pointer;
  size_t bytes; // 0 for a free
  CUstream stream;
};

// A cuMemcpy2DAsync between device pointers.
struct Copy2DCall {
  CUdeviceptr destination, source;
  size_t destinationPitch, sourcePitch, widthBytes, height;
  CUstream stream;
};

class FakeDriver {
public:
  static FakeDriver &get();
  void reset(); // default configuration, no recorded calls

  // The table to install with setDriverForTesting.
  DriverApi api;

  // Configuration.
  CUcontext currentContext; // nullptr: no current context
  CUcontext primaryContext;
  int ccMajor, ccMinor, numSMs, maxSharedOptin;
  CUstreamCaptureStatus captureStatus;
  // cuStreamGetId's answer per stream handle; by default the handle + 1.
  std::map<CUstream, unsigned long long> streamIds;
  std::string jitErrorLog; // written to the JIT error log on load failure
  // Calls that fail: cuda.h name ("cuLaunchKernel") -> result.
  std::map<std::string, CUresult> failures;
  // Sizes of the kernel params, to copy them out of cuLaunchKernel(Ex).
  std::vector<size_t> paramSizes;
  // The same per kernel entry name, for launches of several kernels (the
  // launch's function is looked up in functionHandles).
  std::map<std::string, std::vector<size_t>> paramSizesByKernel;

  // Records.
  std::vector<std::string> calls; // cuda.h names in call order
  std::vector<EncodeCall> encodes;
  std::vector<LaunchCall> launches;
  std::vector<std::pair<CUfunction_attribute, int>> functionAttributes;
  std::vector<std::string> loadedImages;
  std::vector<CUcontext> moduleContexts; // current context at each load
  std::vector<std::string> functionNames;
  std::map<CUfunction, std::string> functionHandles; // -> entry name
  std::vector<CUmodule> unloadedModules;
  std::vector<CUdeviceptr> deviceAllocations, deviceFrees;
  std::vector<size_t> deviceAllocationSizes;
  std::vector<AsyncMemoryCall> asyncAllocations, asyncFrees;
  std::vector<void *> hostAllocations, hostFrees;
  std::vector<CopyCall> copies;
  std::vector<MemsetCall> memsets;
  std::vector<DeviceCopyCall> deviceCopies;
  std::vector<Copy2DCall> copies2D;
  // When set, device copies (cuMemcpyDtoDAsync, cuMemcpy2DAsync) also move
  // the bytes: for tests whose "device" pointers are host memory.
  bool copyBytes = false;
  std::vector<CUevent> createdEvents, destroyedEvents, synchronizedEvents;
  std::vector<std::pair<CUevent, CUstream>> recordedEvents;
  std::vector<CUcontext> pushedContexts;

  // cuTensorMapReplaceAddress is optional: absent (nullptr in `api`) after
  // reset(), installed by this. It sets the map's first word (where
  // fakeEncodedMap puts the address) and records the address.
  void provideReplaceAddress();
  std::vector<void *> replacedAddresses;
  // cuOccupancyMaxActiveClusters is optional too: installed by this, it
  // answers `count` clusters and records each query's cluster width.
  void provideMaxActiveClusters(int count);
  int maxActiveClusters = 0;
  std::vector<unsigned> clusterQueries;

  int count(const std::string &call) const;
  // Helper for the fakes: records `call` and returns its configured result.
  CUresult enter(const char *call);

private:
  FakeDriver();
  std::vector<std::vector<unsigned char>> hostBuffers_;
  uintptr_t nextHandle_ = 0;
  friend struct FakeFunctions;
};

// The bytes the fake cuTensorMapEncodeTiled writes for the n-th encoding
// (0-based) of a map at `address`: recognisable in param buffers.
CUtensorMap fakeEncodedMap(int n, void *address);

} // namespace fp8rt::testing

#endif // FP8RT_UNITTESTS_FAKEDRIVER_H
