#include "Workspace.h"

#include <algorithm>

namespace fp8rt {

namespace {

// Waits for the last launch that used `workspace` (eager launches only:
// never while a stream is being captured).
Status waitForLastLaunch(const DriverApi &api, StreamWorkspace &workspace) {
  if (!workspace.used)
    return Status();
  FP8RT_RETURN_IF_ERROR(checkCuda(api, api.eventSynchronize(workspace.done),
                                  "cuEventSynchronize (workspace)"));
  workspace.used = false;
  return Status();
}

// Frees the memory of `workspace` once its last launch is done.
Status freeMemory(const DriverApi &api, StreamWorkspace &workspace) {
  FP8RT_RETURN_IF_ERROR(waitForLastLaunch(api, workspace));
  if (workspace.memory) {
    FP8RT_RETURN_IF_ERROR(
        checkCuda(api, api.memFree(workspace.memory), "cuMemFree (workspace)"));
    workspace.memory = 0;
  }
  workspace.bytes = 0;
  return Status();
}

// Replaces the memory of `workspace` by `bytes`, zeroed in stream order on
// `stream` (no pageable copy, no host wait for the zeroing).
Status grow(const DriverApi &api, StreamWorkspace &workspace, CUstream stream,
            size_t bytes) {
  FP8RT_RETURN_IF_ERROR(freeMemory(api, workspace));
  CUdeviceptr memory = 0;
  FP8RT_RETURN_IF_ERROR(
      checkCuda(api, api.memAlloc(&memory, bytes), "cuMemAlloc (workspace)"));
  workspace.memory = memory;
  FP8RT_RETURN_IF_ERROR(checkCuda(api,
                                  api.memsetD8Async(memory, 0, bytes, stream),
                                  "cuMemsetD8Async (workspace)"));
  workspace.bytes = bytes;
  return Status();
}

// A workspace owned by the graph being captured on `stream`: allocation,
// zeroing and (finishWorkspace) free are nodes of the graph, so each replay
// allocates and zeroes it again, and the driver releases it with the graph.
Status acquireCapturedWorkspace(const DriverApi &api, CUstream stream,
                                size_t bytes, WorkspaceLease &out) {
  CUdeviceptr memory = 0;
  FP8RT_RETURN_IF_ERROR(
      checkCuda(api, api.memAllocAsync(&memory, bytes, stream),
                "cuMemAllocAsync (workspace of a captured launch)"));
  Status zeroed = checkCuda(api, api.memsetD8Async(memory, 0, bytes, stream),
                            "cuMemsetD8Async (workspace of a captured launch)");
  if (!zeroed.ok()) {
    (void)api.memFreeAsync(memory, stream); // keep the graph balanced
    return zeroed;
  }
  out.address = memory;
  out.captured = true;
  return Status();
}

} // namespace

Status WorkspacePool::entryFor(const DriverApi &api,
                               unsigned long long streamId,
                               StreamWorkspace *&out) {
  auto it = std::find_if(
      workspaces_.begin(), workspaces_.end(),
      [&](const StreamWorkspace &w) { return w.streamId == streamId; });
  if (it == workspaces_.end()) {
    if (workspaces_.size() < kStreamWorkspaces) {
      workspaces_.emplace_back();
    } else {
      // Take the least recently used workspace over.
      FP8RT_RETURN_IF_ERROR(freeMemory(api, workspaces_.back()));
    }
    it = workspaces_.end() - 1;
    it->streamId = streamId;
  }
  std::rotate(workspaces_.begin(), it, it + 1);
  out = &workspaces_.front();
  return Status();
}

Status WorkspacePool::acquire(const DriverApi &api, CUstream stream,
                              size_t bytes, WorkspaceLease &out) {
  unsigned long long streamId = 0;
  FP8RT_RETURN_IF_ERROR(
      checkCuda(api, api.streamGetId(stream, &streamId), "cuStreamGetId"));
  StreamWorkspace *workspace = nullptr;
  FP8RT_RETURN_IF_ERROR(entryFor(api, streamId, workspace));
  if (!workspace->done) {
    CUevent done = nullptr;
    FP8RT_RETURN_IF_ERROR(checkCuda(
        api, api.eventCreate(&done, CU_EVENT_DISABLE_TIMING), "cuEventCreate"));
    workspace->done = done;
  }
  if (workspace->bytes < bytes)
    FP8RT_RETURN_IF_ERROR(grow(api, *workspace, stream, bytes));
  out.address = workspace->memory;
  out.eager = workspace;
  return Status();
}

void WorkspacePool::release(const DriverApi &api) {
  for (StreamWorkspace &workspace : workspaces_) {
    if (workspace.used)
      (void)api.eventSynchronize(workspace.done);
    if (workspace.done)
      (void)api.eventDestroy(workspace.done);
    if (workspace.memory)
      (void)api.memFree(workspace.memory);
  }
  workspaces_.clear();
}

Status acquireWorkspace(const DriverApi &api, WorkspacePool &pool,
                        CUstream stream, bool capturing, size_t bytes,
                        WorkspaceLease &out) {
  out = WorkspaceLease();
  if (capturing)
    return acquireCapturedWorkspace(api, stream, bytes, out);
  return pool.acquire(api, stream, bytes, out);
}

Status finishWorkspace(const DriverApi &api, CUstream stream,
                       const WorkspaceLease &lease) {
  if (lease.captured)
    return checkCuda(api, api.memFreeAsync(lease.address, stream),
                     "cuMemFreeAsync (workspace of a captured launch)");
  if (!lease.eager)
    return Status();
  Status recorded = checkCuda(api, api.eventRecord(lease.eager->done, stream),
                              "cuEventRecord");
  lease.eager->used = recorded.ok();
  return recorded;
}

} // namespace fp8rt
