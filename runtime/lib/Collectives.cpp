// Collective steps through the caller's backend, and the NCCL backend.
#include "Collectives.h"

#include <dlfcn.h>

#include <memory>
#include <mutex>
#include <type_traits>
#include <vector>

namespace fp8rt {
namespace {

fp8rt_device_group groupOf(const FunctionStep &step) {
  fp8rt_device_group group;
  group.grid = step.group.grid.c_str();
  group.axes = step.group.axes.data();
  group.num_axes = static_cast<int>(step.group.axes.size());
  group.size = step.group.size;
  return group;
}

fp8rt_reduction reductionOf(const FunctionStep &step) {
  return step.reduction == fp8schema::Reduction::Max ? FP8RT_REDUCE_MAX
                                                     : FP8RT_REDUCE_SUM;
}

// What the backend needs for `kind`: its function's name and whether the
// table has it.
std::pair<const char *, bool> needed(const fp8rt_collectives &backend,
                                     fp8schema::StepKind kind) {
  switch (kind) {
  case fp8schema::StepKind::AllReduce:
    return {"all_reduce", backend.all_reduce != nullptr};
  case fp8schema::StepKind::AllGather:
    return {"all_gather", backend.all_gather != nullptr};
  case fp8schema::StepKind::ReduceScatter:
    return {"reduce_scatter", backend.reduce_scatter != nullptr};
  default:
    return {"rank", backend.rank != nullptr};
  }
}

Status backendFailed(const fp8rt_collectives &backend, const char *what,
                     int code) {
  const char *message =
      backend.last_error ? backend.last_error(backend.user_data) : nullptr;
  return Status(FP8RT_ERROR_COLLECTIVE,
                strCat("the collective backend's ", what, " returned ", code,
                       message && *message ? strCat(": ", message) : ""));
}

} // namespace

// This device's rank in `step`'s group, from the backend.
static Status rankOf(const fp8rt_collectives &b, const FunctionStep &step,
                     int64_t &rank) {
  fp8rt_device_group group = groupOf(step);
  rank = -1;
  if (int code = b.rank(b.user_data, &group, &rank))
    return backendFailed(b, "rank", code);
  if (rank < 0 || rank >= step.group.size)
    return Status(FP8RT_ERROR_COLLECTIVE,
                  strCat("the collective backend gives rank ", rank,
                         ", not below the group's size ", step.group.size));
  return Status();
}

Status runCopy2D(const fp8rt_collectives &backend, const DriverApi &api,
                 const FunctionStep &step, const Copy2DPlan &plan, void *source,
                 void *target, CUstream stream) {
  size_t sourceOffset = plan.sourceOffset;
  if (step.sliced) {
    int64_t rank = 0;
    FP8RT_RETURN_IF_ERROR(rankOf(backend, step, rank));
    // The plan checked the last rank's rows against the source's bytes.
    sourceOffset += static_cast<size_t>(rank) * plan.rowBytes;
  }
  if (plan.rows == 0 || plan.rowBytes == 0)
    return Status();
  CUDA_MEMCPY2D copy{};
  copy.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  copy.srcDevice = reinterpret_cast<CUdeviceptr>(source) + sourceOffset;
  copy.srcPitch = plan.sourcePitch;
  copy.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  copy.dstDevice = reinterpret_cast<CUdeviceptr>(target) + plan.targetOffset;
  copy.dstPitch = plan.targetPitch;
  copy.WidthInBytes = plan.rowBytes;
  copy.Height = plan.rows;
  return checkCuda(api, api.memcpy2DAsync(&copy, stream), "cuMemcpy2DAsync");
}

std::string describeCollective(const FunctionStep &step) {
  std::string axes;
  for (int64_t axis : step.group.axes)
    axes += strCat(axes.empty() ? "" : ", ", axis);
  return strCat(fp8schema::stringify(step.kind), " on grid \"", step.group.grid,
                "\" axes [", axes, "] (", step.group.size,
                step.group.size == 1 ? " device)" : " devices)");
}

Status checkCollectiveBackend(const FunctionModel &fn, bool hasBackend,
                              const fp8rt_collectives &backend) {
  for (const FunctionStep &step : fn.steps) {
    if (!needsCollectiveBackend(step))
      continue;
    if (!hasBackend)
      return Status(FP8RT_ERROR_COLLECTIVE,
                    strCat("function ", fn.name, " has collective steps (",
                           describeCollective(step),
                           ", ...) and the module has no collective backend: "
                           "give one with fp8rt_module_set_collectives (an "
                           "NCCL communicator: fp8rt_nccl_collectives; "
                           "Python: load_module(..., process_group=...))"));
    auto [name, present] = needed(backend, step.kind);
    if (!present)
      return Status(
          FP8RT_ERROR_COLLECTIVE,
          strCat("function ", fn.name, " runs ", describeCollective(step),
                 " and the collective backend has no '", name, "' function"));
  }
  return Status();
}

bool groupsCollectives(const fp8rt_collectives &b) {
  return b.group_start && b.group_end;
}

Status startCollectiveGroup(const fp8rt_collectives &b) {
  int code = b.group_start(b.user_data);
  return code ? backendFailed(b, "group_start", code) : Status();
}

Status endCollectiveGroup(const fp8rt_collectives &b) {
  int code = b.group_end(b.user_data);
  return code ? backendFailed(b, "group_end", code) : Status();
}

Status runCollective(const fp8rt_collectives &b, const DriverApi *api,
                     const FunctionStep &step, size_t count, void *source,
                     void *target, CUstream stream) {
  fp8rt_device_group group = groupOf(step);
  auto dtype = static_cast<fp8rt_dtype>(step.dtype);
  int code = 0;
  switch (step.kind) {
  case fp8schema::StepKind::AllReduce:
    code = b.all_reduce(b.user_data, &group, source, target, count, dtype,
                        reductionOf(step), stream);
    return code ? backendFailed(b, "all_reduce", code) : Status();
  case fp8schema::StepKind::AllGather:
    code =
        b.all_gather(b.user_data, &group, source, target, count, dtype, stream);
    return code ? backendFailed(b, "all_gather", code) : Status();
  case fp8schema::StepKind::ReduceScatter:
    code = b.reduce_scatter(b.user_data, &group, source, target, count, dtype,
                            reductionOf(step), stream);
    return code ? backendFailed(b, "reduce_scatter", code) : Status();
  case fp8schema::StepKind::AllSlice: {
    int64_t rank = -1;
    FP8RT_RETURN_IF_ERROR(rankOf(b, step, rank));
    size_t bytes = count * static_cast<size_t>(dtypeSize(step.dtype));
    auto from = reinterpret_cast<CUdeviceptr>(source) +
                static_cast<CUdeviceptr>(rank) * bytes;
    return checkCuda(*api,
                     api->memcpyDtoDAsync(reinterpret_cast<CUdeviceptr>(target),
                                          from, bytes, stream),
                     "cuMemcpyDtoDAsync");
  }
  default:
    break;
  }
  return Status(FP8RT_ERROR_INTERNAL, "not a collective step");
}

//===----------------------------------------------------------------------===//
// The NCCL backend
//===----------------------------------------------------------------------===//

namespace {

// NCCL's ABI (nccl.h, stable since 2.x): the enumerators and entry points
// the backend uses.
using NcclComm = void *;
using NcclResult = int;
enum NcclDataType {
  NcclUint8 = 1,
  NcclFloat16 = 6,
  NcclFloat32 = 7,
  NcclBfloat16 = 9
};
enum NcclRedOp { NcclSum = 0, NcclMax = 2 };

struct NcclApi {
  NcclResult (*allReduce)(const void *, void *, size_t, int, int, NcclComm,
                          CUstream);
  NcclResult (*allGather)(const void *, void *, size_t, int, NcclComm,
                          CUstream);
  NcclResult (*reduceScatter)(const void *, void *, size_t, int, int, NcclComm,
                              CUstream); // allReduce's type
  NcclResult (*groupStart)();
  NcclResult (*groupEnd)();
  NcclResult (*commCount)(NcclComm, int *);
  NcclResult (*userRank)(NcclComm, int *);
  const char *(*errorString)(NcclResult);
};

// libnccl.so.2, loaded once per process (the outcome remembered).
Status loadNccl(const NcclApi *&out) {
  static NcclApi api;
  static Status status;
  static std::once_flag once;
  std::call_once(once, [] {
    void *handle = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!handle)
      handle = dlopen("libnccl.so", RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char *why = dlerror();
      status = Status(FP8RT_ERROR_COLLECTIVE,
                      strCat("cannot load libnccl.so.2 (",
                             why ? why : "unknown dlopen error", ")"));
      return;
    }
    auto resolve = [&](auto &slot, const char *name) {
      slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(
          dlsym(handle, name));
      if (!slot && status.ok())
        status =
            Status(FP8RT_ERROR_COLLECTIVE, strCat("libnccl has no ", name));
    };
    resolve(api.allReduce, "ncclAllReduce");
    resolve(api.allGather, "ncclAllGather");
    resolve(api.reduceScatter, "ncclReduceScatter");
    resolve(api.groupStart, "ncclGroupStart");
    resolve(api.groupEnd, "ncclGroupEnd");
    resolve(api.commCount, "ncclCommCount");
    resolve(api.userRank, "ncclCommUserRank");
    resolve(api.errorString, "ncclGetErrorString");
  });
  out = &api;
  return status;
}

struct NcclBackend {
  const NcclApi *api;
  NcclComm comm;
};

thread_local std::string ncclMessage;

int ncclDataType(fp8rt_dtype dtype) {
  switch (dtype) {
  case FP8RT_BF16:
    return NcclBfloat16;
  case FP8RT_F16:
    return NcclFloat16;
  case FP8RT_F32:
    return NcclFloat32;
  default:
    return NcclUint8; // FP8 and UE8M0 bytes (gathers only)
  }
}

// The group must be the communicator.
int checkGroup(const NcclBackend &b, const fp8rt_device_group *group) {
  int size = 0;
  NcclResult r = b.api->commCount(b.comm, &size);
  if (r != 0) {
    ncclMessage = strCat("ncclCommCount: ", b.api->errorString(r));
    return r;
  }
  if (size != group->size) {
    ncclMessage = strCat("the group on grid \"", group->grid, "\" has ",
                         group->size, " devices, the NCCL communicator ", size);
    return -1;
  }
  return 0;
}

int done(const NcclBackend &b, NcclResult r, const char *call) {
  if (r != 0)
    ncclMessage = strCat(call, ": ", b.api->errorString(r));
  return r;
}

int ncclRank(void *user, const fp8rt_device_group *group, int64_t *rank) {
  auto &b = *static_cast<NcclBackend *>(user);
  if (int r = checkGroup(b, group))
    return r;
  int value = 0;
  int r = done(b, b.api->userRank(b.comm, &value), "ncclCommUserRank");
  *rank = value;
  return r;
}

// An all-reduce (recv: `count` elements) or a reduce-scatter (recv: this
// rank's `count` of the group's `count * size`).
template <bool Scatter>
int ncclReduceStep(void *user, const fp8rt_device_group *group,
                   const void *send, void *recv, size_t count,
                   fp8rt_dtype dtype, fp8rt_reduction op, void *stream) {
  auto &b = *static_cast<NcclBackend *>(user);
  if (int r = checkGroup(b, group))
    return r;
  auto call = Scatter ? b.api->reduceScatter : b.api->allReduce;
  return done(b,
              call(send, recv, count, ncclDataType(dtype),
                   op == FP8RT_REDUCE_MAX ? NcclMax : NcclSum, b.comm,
                   static_cast<CUstream>(stream)),
              Scatter ? "ncclReduceScatter" : "ncclAllReduce");
}

int ncclAllGatherStep(void *user, const fp8rt_device_group *group,
                      const void *send, void *recv, size_t count,
                      fp8rt_dtype dtype, void *stream) {
  auto &b = *static_cast<NcclBackend *>(user);
  if (int r = checkGroup(b, group))
    return r;
  return done(b,
              b.api->allGather(send, recv, count, ncclDataType(dtype), b.comm,
                               static_cast<CUstream>(stream)),
              "ncclAllGather");
}

// Consecutive all-gathers as one NCCL operation (one launch).
template <bool Start> int ncclGroupStep(void *user) {
  auto &b = *static_cast<NcclBackend *>(user);
  return done(b, Start ? b.api->groupStart() : b.api->groupEnd(),
              Start ? "ncclGroupStart" : "ncclGroupEnd");
}

const char *ncclLastError(void *) { return ncclMessage.c_str(); }

} // namespace

Status makeNcclCollectives(void *comm, fp8rt_collectives &out) {
  if (!comm)
    return invalidArgument("nccl_comm is NULL");
  const NcclApi *api = nullptr;
  FP8RT_RETURN_IF_ERROR(loadNccl(api));
  // One small record per communicator, kept for the life of the process
  // (a table may be copied into any number of modules).
  static std::mutex mutex;
  static std::vector<std::unique_ptr<NcclBackend>> backends;
  std::lock_guard<std::mutex> lock(mutex);
  NcclBackend *backend = nullptr;
  for (auto &b : backends)
    if (b->comm == comm)
      backend = b.get();
  if (!backend) {
    backends.push_back(std::make_unique<NcclBackend>(NcclBackend{api, comm}));
    backend = backends.back().get();
  }
  out = fp8rt_collectives{};
  out.user_data = backend;
  out.rank = ncclRank;
  out.all_reduce = ncclReduceStep<false>;
  out.all_gather = ncclAllGatherStep;
  out.reduce_scatter = ncclReduceStep<true>;
  out.last_error = ncclLastError;
  out.group_start = ncclGroupStep<true>;
  out.group_end = ncclGroupStep<false>;
  return Status();
}

} // namespace fp8rt
