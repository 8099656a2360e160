// The workspaces of a kernel with a "workspace" param (a stream-K GEMM) in
// one context: what a launch passes as the param, and how it is kept safe
// from other launches (runtime/README.md, "Workspace").
//
// An eager launch (its stream is not being captured) uses its stream's own
// workspace: launches on one stream use it in stream order, so no launch
// waits for another stream. A launch captured into a CUDA graph takes a
// workspace of the graph (cuMemAllocAsync + cuMemFreeAsync on the capturing
// stream: allocation and free nodes), so the driver ties its lifetime to
// the graph and no host synchronization is ever needed under capture.
#ifndef FP8RT_LIB_WORKSPACE_H
#define FP8RT_LIB_WORKSPACE_H

#include "CudaDriver.h"
#include "Status.h"

#include <vector>

namespace fp8rt {

// How many streams keep a workspace of their own per kernel and context;
// a launch on one more stream takes the least recently used one over,
// waiting for its last launch first.
constexpr size_t kStreamWorkspaces = 8;

// The workspace of one stream, identified by its cuStreamGetId (unique for
// the life of the process, unlike a handle, which a new stream may reuse).
struct StreamWorkspace {
  unsigned long long streamId = 0;
  CUdeviceptr memory = 0;
  size_t bytes = 0;       // zeroed bytes at `memory` (0 until zeroed)
  CUevent done = nullptr; // recorded after each launch that uses it
  bool used = false;      // `done` marks a launch
};

// What a launch passes as its workspace, and what must follow the launch
// (finishWorkspace).
struct WorkspaceLease {
  CUdeviceptr address = 0;
  StreamWorkspace *eager = nullptr; // eager: record its `done`
  bool captured = false;            // in a graph: free it in the graph
};

// The eager workspaces of one kernel in one context, most recently used
// first. Needs the kernel's mutex.
class WorkspacePool {
public:
  // The zeroed workspace of at least `bytes` for an eager launch on
  // `stream`: the stream's own, created or grown (after waiting for its
  // last launch) when needed and zeroed with cuMemsetD8Async on `stream`.
  Status acquire(const DriverApi &api, CUstream stream, size_t bytes,
                 WorkspaceLease &out);

  // Waits for the last launch of each workspace, then frees them all.
  // Errors are ignored (this runs from fp8rt_kernel_destroy).
  void release(const DriverApi &api);

private:
  // The workspace of `streamId`, moved to the front: found, added, or the
  // least recently used one taken over.
  Status entryFor(const DriverApi &api, unsigned long long streamId,
                  StreamWorkspace *&out);

  std::vector<StreamWorkspace> workspaces_;
};

// The workspace of a launch of `bytes` on `stream`: from `pool` when the
// stream is not being captured, else a zeroed allocation of the graph.
Status acquireWorkspace(const DriverApi &api, WorkspacePool &pool,
                        CUstream stream, bool capturing, size_t bytes,
                        WorkspaceLease &out);

// After the launch (also a failed one) of a successful acquireWorkspace:
// records the eager workspace's event, or frees the graph's allocation in
// the graph. Nothing for an empty lease.
Status finishWorkspace(const DriverApi &api, CUstream stream,
                       const WorkspaceLease &lease);

} // namespace fp8rt

#endif // FP8RT_LIB_WORKSPACE_H
