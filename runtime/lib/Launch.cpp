#include "Kernel.h"

#include "CudaLimits.h"
#include "PtxSignature.h"
#include "Workspace.h"

#include <cstring>

namespace fp8rt {

// Device buffer slot for the CUtensorMaps of params passed "global". A slot
// is only ever used from one stream at a time, and `done` is recorded on
// that stream after every launch that reads it, so waiting on `done`
// guarantees no launch still reads the slot (or its pinned staging copy).
struct GlobalMapSlot {
  CUevent done = nullptr;
  CUstream stream = nullptr;
  bool used = false;
  std::vector<unsigned char> contents; // what the device copy holds
};

struct ContextState {
  CUcontext context = nullptr;
  CUdevice device = 0;
  CUmodule module = nullptr;
  CUfunction function = nullptr;
  int numSMs = 0;
  // For the choice among the kernel's K-split variants.
  ResidentClusters residentClusters;

  // "global" tensor maps: kGlobalTensorMapSlots slots of `slotBytes` each
  // on the device, plus a pinned host staging area of the same layout
  // (pinned so cuMemcpyHtoDAsync is truly asynchronous).
  size_t slotBytes = 0;
  CUdeviceptr slotsDevice = 0;
  unsigned char *slotsHost = nullptr;
  std::vector<GlobalMapSlot> slots;
  size_t nextSlot = 0;

  // The workspaces of a kernel with a "workspace" param (Workspace.h).
  WorkspacePool workspaces;
};

namespace {

// Frees what a context state holds, with its context made current. Errors
// are ignored: this runs from fp8rt_kernel_destroy, which cannot fail. If
// the context is gone (destroyed, driver shut down), so are its resources.
void releaseContextState(const DriverApi &api, ContextState &state) {
  if (api.ctxPushCurrent(state.context) != CUDA_SUCCESS)
    return;
  // A launch may still read a "global" tensor-map slot or a workspace:
  // wait for them.
  for (GlobalMapSlot &slot : state.slots)
    if (slot.used)
      (void)api.eventSynchronize(slot.done);
  for (GlobalMapSlot &slot : state.slots)
    if (slot.done)
      (void)api.eventDestroy(slot.done);
  if (state.slotsDevice)
    (void)api.memFree(state.slotsDevice);
  state.workspaces.release(api);
  if (state.slotsHost)
    (void)api.memFreeHost(state.slotsHost);
  if (state.module)
    (void)api.moduleUnload(state.module);
  CUcontext popped;
  (void)api.ctxPopCurrent(&popped);
}

// "sm_90a"/"sm_100a" code runs only on exactly that compute capability,
// "sm_100f" on the same major version, plain "sm_90" on anything newer.
Status checkChip(const KernelMetadata &meta, int major, int minor) {
  bool ok;
  const char *rule;
  if (meta.chipSuffix == 'a') {
    ok = major == meta.chipMajor && minor == meta.chipMinor;
    rule = "exactly";
  } else if (meta.chipSuffix == 'f') {
    ok = major == meta.chipMajor && minor >= meta.chipMinor;
    rule = "the same major version as";
  } else {
    ok = major > meta.chipMajor ||
         (major == meta.chipMajor && minor >= meta.chipMinor);
    rule = "at least";
  }
  if (ok)
    return Status();
  return Status(FP8RT_ERROR_CUDA,
                strCat("kernel \"", meta.name, "\" was compiled for ",
                       meta.chip, ", which needs ", rule,
                       " compute capability ", meta.chipMajor, ".",
                       meta.chipMinor, ", but the current device is ", major,
                       ".", minor));
}

Status deviceAttribute(const DriverApi &api, CUdevice device,
                       CUdevice_attribute attribute, const char *what,
                       int &out) {
  return checkCuda(api, api.deviceGetAttribute(&out, attribute, device), what);
}

// A cluster of x * y * z CTAs, as a launch attribute.
CUlaunchAttribute clusterDimension(unsigned x, unsigned y, unsigned z) {
  CUlaunchAttribute cluster;
  std::memset(&cluster, 0, sizeof(cluster));
  cluster.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  cluster.value.clusterDim.x = x;
  cluster.value.clusterDim.y = y;
  cluster.value.clusterDim.z = z;
  return cluster;
}

// The extended launch configuration of `meta`'s block and shared memory on
// `grid` with `attributes`.
CUlaunchConfig launchConfig(const KernelMetadata &meta, const GridDims &grid,
                            CUstream stream, CUlaunchAttribute *attributes,
                            unsigned numAttributes) {
  CUlaunchConfig config;
  std::memset(&config, 0, sizeof(config));
  config.gridDimX = grid.x;
  config.gridDimY = grid.y;
  config.gridDimZ = grid.z;
  config.blockDimX = meta.block[0];
  config.blockDimY = meta.block[1];
  config.blockDimZ = meta.block[2];
  config.sharedMemBytes = meta.dynamicSharedMemoryBytes;
  config.hStream = stream;
  config.attrs = attributes;
  config.numAttrs = numAttributes;
  return config;
}

// The clusters of each K-split variant's size the device runs at once
// (ResidentClusters), asked of the driver with the kernel's own function:
// its shared memory, like the variants', leaves one CTA per SM (GPCs
// differ in size from die to die: an H200 ran 30 clusters of 4, not the 32
// of 8 GPCs of 16.5 SMs). Left to the model where the driver has no such
// entry point, the kernel is a cluster itself or a query fails.
void countResidentClusters(const fp8rt_kernel &kernel, const DriverApi &api,
                           int maxSharedOptin, ContextState &state) {
  const KernelMetadata &meta = kernel.meta;
  if (!api.occupancyMaxActiveClusters || meta.clusterSize() != 1 ||
      2 * static_cast<int64_t>(meta.dynamicSharedMemoryBytes) <= maxSharedOptin)
    return;
  for (const auto &variant : kernel.variants) {
    int64_t size = variant->meta.grid.kSplit;
    if (size < 2 || size > ResidentClusters::kMaxSize ||
        state.residentClusters.counts[size] > 0)
      continue;
    CUlaunchAttribute cluster =
        clusterDimension(static_cast<unsigned>(size), 1, 1);
    GridDims grid;
    grid.x = static_cast<uint32_t>(size);
    CUlaunchConfig config = launchConfig(meta, grid, nullptr, &cluster, 1);
    int count = 0;
    if (api.occupancyMaxActiveClusters(&count, state.function, &config) ==
            CUDA_SUCCESS &&
        count > 0)
      state.residentClusters.counts[size] = count;
  }
}

// Loads the module into `context` (the current one) and prepares the
// function: first launch in each context only.
Status createContextState(const fp8rt_kernel &kernel, const DriverApi &api,
                          CUcontext context,
                          std::unique_ptr<ContextState> &out) {
  const KernelMetadata &meta = kernel.meta;
  auto state = std::make_unique<ContextState>();
  state->context = context;
  FP8RT_RETURN_IF_ERROR(
      checkCuda(api, api.ctxGetDevice(&state->device), "cuCtxGetDevice"));
  int major = 0, minor = 0, maxSharedOptin = 0;
  FP8RT_RETURN_IF_ERROR(deviceAttribute(
      api, state->device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
      "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MAJOR)", major));
  FP8RT_RETURN_IF_ERROR(deviceAttribute(
      api, state->device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
      "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MINOR)", minor));
  FP8RT_RETURN_IF_ERROR(checkChip(meta, major, minor));
  FP8RT_RETURN_IF_ERROR(deviceAttribute(
      api, state->device, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
      "cuDeviceGetAttribute(MULTIPROCESSOR_COUNT)", state->numSMs));
  FP8RT_RETURN_IF_ERROR(deviceAttribute(
      api, state->device, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
      "cuDeviceGetAttribute(MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)",
      maxSharedOptin));
  if (meta.dynamicSharedMemoryBytes > static_cast<uint32_t>(maxSharedOptin))
    return Status(FP8RT_ERROR_CUDA,
                  strCat("kernel \"", meta.name, "\" needs ",
                         meta.dynamicSharedMemoryBytes,
                         " bytes of dynamic shared memory, but the device "
                         "allows at most ",
                         maxSharedOptin, " per block"));

  // Keep the JIT's error log: for PTX it is the only useful diagnostic.
  char errorLog[8192] = {};
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER,
                            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {errorLog, reinterpret_cast<void *>(sizeof(errorLog))};
  Status status =
      checkCuda(api,
                api.moduleLoadDataEx(&state->module, kernel.image.data(), 2,
                                     options, values),
                "cuModuleLoadDataEx");
  if (!status.ok()) {
    state->module = nullptr;
    errorLog[sizeof(errorLog) - 1] = '\0';
    if (errorLog[0])
      status = Status(status.code(),
                      strCat(status.message(), "; JIT log: ", errorLog));
    return status;
  }
  status = checkCuda(api,
                     api.moduleGetFunction(&state->function, state->module,
                                           meta.entry.c_str()),
                     "cuModuleGetFunction");
  // The 48 KiB default must be raised explicitly for larger dynamic smem.
  if (status.ok() && meta.dynamicSharedMemoryBytes > kDefaultDynamicSharedMemoryBytes)
    status = checkCuda(
        api,
        api.funcSetAttribute(state->function,
                             CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                             static_cast<int>(meta.dynamicSharedMemoryBytes)),
        "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
  // Clusters above the portable size of 8 must be allowed explicitly.
  if (status.ok() && meta.clusterSize() > 8)
    status =
        checkCuda(api,
                  api.funcSetAttribute(
                      state->function,
                      CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1),
                  "cuFuncSetAttribute(NON_PORTABLE_CLUSTER_SIZE_ALLOWED)");
  if (!status.ok()) {
    (void)api.moduleUnload(state->module);
    return status;
  }
  countResidentClusters(kernel, api, maxSharedOptin, *state);
  out = std::move(state);
  return Status();
}

// Encodes the tensor maps some param passes, reusing the previous encoding
// of a map while its arguments are unchanged.
Status encodeTensorMaps(fp8rt_kernel &kernel, const DriverApi &api,
                        const LaunchArguments &args) {
  const KernelMetadata &meta = kernel.meta;
  for (size_t i = 0; i < meta.tensorMaps.size(); ++i) {
    if (!meta.tensorMaps[i].usedByParam)
      continue;
    EncodedTensorMap &cache = kernel.encodedMaps[i];
    const ResolvedTensorMap &r = args.tensorMaps[i];
    if (cache.valid && cache.arguments == r)
      continue;
    // Only the address changed: patch the encoding where the driver can
    // (cuTensorMapReplaceAddress, CUDA 12.3), which is cheaper than
    // encoding it anew.
    if (cache.valid && api.tensorMapReplaceAddress &&
        cache.arguments.sameExceptAddress(r)) {
      cache.valid = false;
      Status status = checkCuda(
          api, api.tensorMapReplaceAddress(&cache.map, r.address),
          "cuTensorMapReplaceAddress");
      if (!status.ok())
        return status.prepend(strCat("tensor map \"",
                                     meta.tensorMaps[i].name, "\" (",
                                     r.describe(), "): "));
      cache.arguments.address = r.address;
      cache.valid = true;
      continue;
    }
    cache.valid = false;
    Status status =
        checkCuda(api,
                  api.tensorMapEncodeTiled(
                      &cache.map, r.dataType, r.rank, r.address, r.dims,
                      r.stridesBytes, r.box, r.elementStrides, r.interleave,
                      r.swizzle, r.l2Promotion, r.oobFill),
                  "cuTensorMapEncodeTiled");
    if (!status.ok())
      return status.prepend(strCat("tensor map \"", meta.tensorMaps[i].name,
                                   "\" (", r.describe(), "): "));
    cache.arguments = r;
    cache.valid = true;
  }
  return Status();
}

// Allocates the slots of "global" tensor maps; safe to call again after a
// partial failure.
Status allocateGlobalMapSlots(const DriverApi &api, ContextState &state,
                              size_t slotBytes) {
  state.slotBytes = slotBytes;
  size_t total = slotBytes * kGlobalTensorMapSlots;
  if (!state.slotsDevice)
    FP8RT_RETURN_IF_ERROR(checkCuda(api,
                                    api.memAlloc(&state.slotsDevice, total),
                                    "cuMemAlloc (global tensor maps)"));
  if (!state.slotsHost) {
    void *host = nullptr;
    FP8RT_RETURN_IF_ERROR(checkCuda(api, api.memAllocHost(&host, total),
                                    "cuMemAllocHost (global tensor maps)"));
    state.slotsHost = static_cast<unsigned char *>(host);
  }
  state.slots.resize(kGlobalTensorMapSlots);
  for (GlobalMapSlot &slot : state.slots)
    if (!slot.done)
      FP8RT_RETURN_IF_ERROR(
          checkCuda(api, api.eventCreate(&slot.done, CU_EVENT_DISABLE_TIMING),
                    "cuEventCreate"));
  return Status();
}

// Whether `stream` is being captured into a CUDA graph (or was, and the
// capture has been invalidated).
Status streamCapturing(const DriverApi &api, CUstream stream, bool &out) {
  CUstreamCaptureStatus capture = CU_STREAM_CAPTURE_STATUS_NONE;
  FP8RT_RETURN_IF_ERROR(checkCuda(api, api.streamIsCapturing(stream, &capture),
                                  "cuStreamIsCapturing"));
  out = capture != CU_STREAM_CAPTURE_STATUS_NONE;
  return Status();
}

// Puts the CUtensorMaps of "global" params in device memory, in stream
// order before the launch, and returns their addresses (per param) and the
// slot the caller must mark with an event after the launch.
Status stageGlobalTensorMaps(fp8rt_kernel &kernel, const DriverApi &api,
                             ContextState &state, CUstream stream,
                             bool capturing,
                             std::vector<CUdeviceptr> &addresses,
                             GlobalMapSlot *&usedSlot) {
  const KernelMetadata &meta = kernel.meta;
  // Graph replays would reuse slots that later launches overwrite.
  if (capturing)
    return invalidArgument(
        "kernel \"", meta.name,
        "\" passes tensor maps through global memory (passing \"global\"), "
        "which fp8rt cannot do while the stream is being captured into a "
        "CUDA graph; compile it with \"grid_constant\" tensor maps");

  std::vector<unsigned char> contents;
  for (const ParamSpec &param : meta.params)
    if (param.kind == ParamKind::TensorMap &&
        param.passing == TensorMapPassing::Global) {
      const auto *bytes = reinterpret_cast<const unsigned char *>(
          &kernel.encodedMaps[param.tensorMap].map);
      contents.insert(contents.end(), bytes, bytes + sizeof(CUtensorMap));
    }
  FP8RT_RETURN_IF_ERROR(allocateGlobalMapSlots(api, state, contents.size()));

  // Same maps on the same stream as an earlier launch: reuse its slot.
  // Stream order makes the earlier copy visible to this launch.
  size_t index = kGlobalTensorMapSlots;
  for (size_t i = 0; i < state.slots.size(); ++i)
    if (state.slots[i].used && state.slots[i].stream == stream &&
        state.slots[i].contents == contents)
      index = i;
  if (index == kGlobalTensorMapSlots) {
    index = state.nextSlot;
    state.nextSlot = (state.nextSlot + 1) % kGlobalTensorMapSlots;
    GlobalMapSlot &slot = state.slots[index];
    // Wait until the slot's last reader (and its staging copy) is done.
    if (slot.used)
      FP8RT_RETURN_IF_ERROR(checkCuda(api, api.eventSynchronize(slot.done),
                                      "cuEventSynchronize"));
    slot.used = false;
    unsigned char *host = state.slotsHost + index * state.slotBytes;
    std::memcpy(host, contents.data(), contents.size());
    FP8RT_RETURN_IF_ERROR(checkCuda(
        api,
        api.memcpyHtoDAsync(state.slotsDevice + index * state.slotBytes, host,
                            contents.size(), stream),
        "cuMemcpyHtoDAsync (global tensor maps)"));
    slot.used = true;
    slot.stream = stream;
    slot.contents = std::move(contents);
  }
  usedSlot = &state.slots[index];
  CUdeviceptr next = state.slotsDevice + index * state.slotBytes;
  for (size_t i = 0; i < meta.params.size(); ++i)
    if (meta.params[i].kind == ParamKind::TensorMap &&
        meta.params[i].passing == TensorMapPassing::Global) {
      addresses[i] = next;
      next += sizeof(CUtensorMap);
    }
  return Status();
}

// Packs the parameters (tensor maps, operand and buffer addresses in
// kernel.scratch.deviceAddresses) and launches on `stream`.
Status launchPacked(fp8rt_kernel &kernel, const DriverApi &api,
                    const ContextState &state, const LaunchArguments &args,
                    const GridDims &grid, CUstream stream) {
  const KernelMetadata &meta = kernel.meta;
  LaunchScratch &scratch = kernel.scratch;
  scratch.maps.resize(meta.tensorMaps.size());
  for (size_t i = 0; i < scratch.maps.size(); ++i)
    if (kernel.encodedMaps[i].valid)
      scratch.maps[i] = kernel.encodedMaps[i].map;
  scratch.buffer.resize((meta.paramBufferSize + 63) / 64 + 1);
  unsigned char *buffer = scratch.buffer.front().bytes;
  packParams(meta, args, scratch.maps.data(), scratch.deviceAddresses.data(),
             buffer);
  // cuLaunchKernel reads each parameter through its own pointer.
  scratch.kernelParams.resize(meta.params.size());
  for (size_t i = 0; i < meta.params.size(); ++i)
    scratch.kernelParams[i] = buffer + meta.params[i].offset;

  CUresult result;
  const char *call;
  if (meta.clusterSize() > 1 || meta.programmaticLaunch) {
    CUlaunchAttribute attributes[2];
    std::memset(attributes, 0, sizeof(attributes));
    unsigned numAttributes = 0;
    if (meta.clusterSize() > 1)
      attributes[numAttributes++] =
          clusterDimension(meta.cluster[0], meta.cluster[1], meta.cluster[2]);
    // The kernel waits for the grids before it (griddepcontrol.wait) before
    // touching global memory: its launch may start as they end.
    if (meta.programmaticLaunch) {
      CUlaunchAttribute &serialization = attributes[numAttributes++];
      serialization.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
      serialization.value.programmaticStreamSerializationAllowed = 1;
    }
    CUlaunchConfig config =
        launchConfig(meta, grid, stream, attributes, numAttributes);
    result = api.launchKernelEx(&config, state.function,
                                scratch.kernelParams.data(), nullptr);
    call = "cuLaunchKernelEx";
  } else {
    result = api.launchKernel(state.function, grid.x, grid.y, grid.z,
                              meta.block[0], meta.block[1], meta.block[2],
                              meta.dynamicSharedMemoryBytes, stream,
                              scratch.kernelParams.data(), nullptr);
    call = "cuLaunchKernel";
  }
  Status status = checkCuda(api, result, call);
  if (!status.ok())
    status.prepend(strCat(
        "grid [", grid.x, ", ", grid.y, ", ", grid.z, "], block [",
        meta.block[0], ", ", meta.block[1], ", ", meta.block[2], "], cluster [",
        meta.cluster[0], ", ", meta.cluster[1], ", ", meta.cluster[2], "], ",
        meta.dynamicSharedMemoryBytes, " bytes of dynamic shared memory: "));
  return status;
}

} // namespace

ImageKind detectImageKind(const void *image, size_t size) {
  const auto *b = static_cast<const unsigned char *>(image);
  if (size >= 4 && b[0] == 0x7f && b[1] == 'E' && b[2] == 'L' && b[3] == 'F')
    return ImageKind::Binary; // cubin
  if (size >= 4 && b[0] == 0x50 && b[1] == 0xED && b[2] == 0x55 && b[3] == 0xBA)
    return ImageKind::Binary; // fatbin (magic 0xBA55ED50, little endian)
  return ImageKind::Ptx;
}

Status createKernel(KernelMetadata meta, const void *image, size_t imageSize,
                    std::string_view sourceName,
                    std::unique_ptr<fp8rt_kernel> &out) {
  auto kernel = std::make_unique<fp8rt_kernel>();
  kernel->imageKind = detectImageKind(image, imageSize);
  const char *bytes = static_cast<const char *>(image);
  if (kernel->imageKind == ImageKind::Ptx) {
    std::string_view ptx(bytes, imageSize);
    ptx = ptx.substr(0, ptx.find('\0'));
    FP8RT_RETURN_IF_ERROR(checkPtxMatchesMetadata(ptx, meta, sourceName));
    kernel->image.assign(ptx.begin(), ptx.end());
    kernel->image.push_back('\0'); // cuModuleLoadDataEx reads PTX as a C string
  } else {
    kernel->image.assign(bytes, bytes + imageSize);
  }
  kernel->encodedMaps.resize(meta.tensorMaps.size());
  kernel->meta = std::move(meta);
  out = std::move(kernel);
  return Status();
}

Status contextStateFor(fp8rt_kernel &kernel, const DriverApi &api,
                       CUcontext context, ContextState *&out) {
  auto it = kernel.contexts.find(context);
  if (it == kernel.contexts.end()) {
    std::unique_ptr<ContextState> state;
    FP8RT_RETURN_IF_ERROR(createContextState(kernel, api, context, state));
    it = kernel.contexts.emplace(context, std::move(state)).first;
  }
  out = it->second.get();
  return Status();
}

int contextSMs(const ContextState &state) { return state.numSMs; }

Status enterLaunch(fp8rt_kernel &kernel, std::unique_lock<std::mutex> &lock,
                   const DriverApi *&api, CUcontext &context) {
  FP8RT_RETURN_IF_ERROR(acquireDriver(api));
  lock = std::unique_lock<std::mutex>(kernel.mutex);
  FP8RT_RETURN_IF_ERROR(claimDriver(kernel, *api));
  return currentOrPrimaryContext(*api, context);
}

Status claimDriver(fp8rt_kernel &kernel, const DriverApi &api) {
  if (kernel.driver && kernel.driver != &api)
    return Status(FP8RT_ERROR_CUDA, "the CUDA driver table changed since this "
                                    "kernel was first launched");
  kernel.driver = &api;
  return Status();
}

size_t chooseLaunchVariant(const fp8rt_kernel &kernel,
                           const LaunchArguments &args,
                           const ContextState &state) {
  // Variants chosen by a hint (fp8rt_kernel_for_expected_m) are launched
  // themselves: a launch of the kernel runs the kernel.
  if (kernel.variants.empty() ||
      kernel.meta.variantChoice != fp8schema::VariantChoice::M)
    return 0;
  std::vector<const KernelMetadata *> candidates = {&kernel.meta};
  for (const auto &variant : kernel.variants)
    candidates.push_back(&variant->meta);
  return selectLaunchVariant(candidates, args.problemM, args.problemN,
                             state.numSMs, state.residentClusters);
}

Status kernelForExpectedM(fp8rt_kernel &kernel, int64_t expectedM, int numSMs,
                          fp8rt_kernel *&out) {
  out = nullptr;
  if (expectedM < 1)
    return invalidArgument("expected_m = ", expectedM,
                           ": expected the rows a group is expected to hold, "
                           "at least 1");
  if (numSMs < 1)
    return invalidArgument("num_sms = ", numSMs, ": expected at least 1");
  const KernelMetadata &meta = kernel.meta;
  if (kernel.variants.empty()) {
    out = &kernel;
    return Status();
  }
  if (meta.variantChoice != fp8schema::VariantChoice::ExpectedM)
    return invalidArgument(
        "its launch variants are chosen by M at each launch (\"variant_choice"
        "\": \"", fp8schema::stringify(meta.variantChoice),
        "\"), not by an expected number of rows per group");
  std::vector<const KernelMetadata *> candidates = {&meta};
  for (const auto &variant : kernel.variants)
    candidates.push_back(&variant->meta);
  size_t chosen = selectExpectedMVariant(candidates, expectedM,
                                         meta.hintColumns, meta.hintGroups,
                                         numSMs);
  out = chosen == 0 ? &kernel : kernel.variants[chosen - 1].get();
  return Status();
}

// enterLaunch, then the kernel's state in the current context (its module
// loaded there, the device's SMs and resident clusters).
static Status enterKernelContext(fp8rt_kernel &kernel,
                                 std::unique_lock<std::mutex> &lock,
                                 const DriverApi *&api, ContextState *&state) {
  CUcontext context = nullptr;
  FP8RT_RETURN_IF_ERROR(enterLaunch(kernel, lock, api, context));
  return contextStateFor(kernel, *api, context, state);
}

Status kernelForM(fp8rt_kernel &kernel, int64_t m, fp8rt_kernel *&out) {
  out = nullptr;
  if (m < 1)
    return invalidArgument("m = ", m,
                           ": expected the problem's rows, at least 1");
  const KernelMetadata &meta = kernel.meta;
  if (kernel.variants.empty() ||
      meta.variantChoice != fp8schema::VariantChoice::M ||
      meta.grid.kind == GridKind::Fixed) {
    out = &kernel;
    return Status();
  }
  // A kernel chosen among by M has a static N: its problem operand's last
  // extent (the variants were checked to have the kernel's operands).
  const std::vector<fp8schema::Expr> &shape =
      meta.operands[meta.grid.problemOperand].shape;
  if (shape.size() < 2 || !shape.back().isConstant())
    return invalidArgument("operand \"",
                           meta.operands[meta.grid.problemOperand].name,
                           "\" has no static N to choose a launch variant by");
  LaunchArguments args;
  args.problemM = m;
  args.problemN = shape.back().value();
  std::unique_lock<std::mutex> lock;
  const DriverApi *api = nullptr;
  ContextState *state = nullptr;
  FP8RT_RETURN_IF_ERROR(enterKernelContext(kernel, lock, api, state));
  size_t chosen = chooseLaunchVariant(kernel, args, *state);
  out = chosen == 0 ? &kernel : kernel.variants[chosen - 1].get();
  return Status();
}

Status launchKernel(fp8rt_kernel &kernel, const fp8rt_tensor *operands,
                    int numOperands, CUstream stream) {
  const KernelMetadata &meta = kernel.meta;
  LaunchArguments args;
  FP8RT_RETURN_IF_ERROR(bindLaunchArguments(meta, operands, numOperands, args));

  std::unique_lock<std::mutex> lock;
  const DriverApi *api = nullptr;
  ContextState *state = nullptr;
  FP8RT_RETURN_IF_ERROR(enterKernelContext(kernel, lock, api, state));

  // The launch variant for this M on this context's SMs.
  if (size_t chosen = chooseLaunchVariant(kernel, args, *state)) {
    lock.unlock();
    return launchKernel(*kernel.variants[chosen - 1], operands, numOperands,
                        stream);
  }

  GridDims grid;
  FP8RT_RETURN_IF_ERROR(computeGrid(meta, args, state->numSMs, grid));
  return launchBound(kernel, *api, *state, args, grid, stream);
}

Status launchBound(fp8rt_kernel &kernel, const DriverApi &api,
                   ContextState &state, const LaunchArguments &args,
                   const GridDims &grid, CUstream stream) {
  const KernelMetadata &meta = kernel.meta;
  LaunchScratch &scratch = kernel.scratch;
  FP8RT_RETURN_IF_ERROR(encodeTensorMaps(kernel, api, args));
  bool capturing = false;
  if (meta.hasGlobalTensorMaps || meta.workspaceParam >= 0)
    FP8RT_RETURN_IF_ERROR(streamCapturing(api, stream, capturing));
  scratch.deviceAddresses.assign(meta.params.size(), 0);
  GlobalMapSlot *slot = nullptr;
  if (meta.hasGlobalTensorMaps)
    FP8RT_RETURN_IF_ERROR(stageGlobalTensorMaps(kernel, api, state, stream,
                                                capturing,
                                                scratch.deviceAddresses, slot));
  WorkspaceLease workspace;
  Status status;
  if (meta.workspaceParam >= 0) {
    status = acquireWorkspace(
        api, state.workspaces, stream, capturing,
        static_cast<size_t>(grid.x) *
            meta.params[meta.workspaceParam].workspaceBytesPerCta,
        workspace);
    scratch.deviceAddresses[meta.workspaceParam] = workspace.address;
  }
  if (status.ok())
    status = launchPacked(kernel, api, state, args, grid, stream);
  // Mark the slot and the workspace even if the launch failed (or was not
  // made): their copy and zeroing were enqueued.
  if (slot) {
    Status recorded =
        checkCuda(api, api.eventRecord(slot->done, stream), "cuEventRecord");
    if (status.ok())
      status = recorded;
  }
  Status finished = finishWorkspace(api, stream, workspace);
  if (status.ok())
    status = finished;
  return status;
}

} // namespace fp8rt

fp8rt_kernel::fp8rt_kernel() = default;

fp8rt_kernel::~fp8rt_kernel() {
  if (!driver)
    return;
  for (auto &entry : contexts)
    fp8rt::releaseContextState(*driver, *entry.second);
}
