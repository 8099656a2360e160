// The collective steps of a module function (all_reduce, all_gather,
// reduce_scatter, all_slice), run through the caller's collective backend
// (fp8rt_collectives), and the backend on an NCCL communicator
// (fp8rt_nccl_collectives, libnccl loaded at run time).
#ifndef FP8RT_LIB_COLLECTIVES_H
#define FP8RT_LIB_COLLECTIVES_H

#include "CudaDriver.h"
#include "ModuleProgram.h"
#include "Status.h"

#include "fp8rt/fp8rt.h"

namespace fp8rt {

// Before anything of a call is enqueued: a backend with every function the
// function's collective steps need (FP8RT_ERROR_COLLECTIVE otherwise).
Status checkCollectiveBackend(const FunctionModel &fn, bool hasBackend,
                              const fp8rt_collectives &backend);

// Enqueues collective `step` on `stream`: `count` elements of one device's
// piece from `source` into `target`. `api` (all_slice's copy) may be null
// for the other kinds.
Status runCollective(const fp8rt_collectives &backend, const DriverApi *api,
                     const FunctionStep &step, size_t count, void *source,
                     void *target, CUstream stream);

// Whether the backend brackets collectives in groups (group_start and
// group_end both given).
bool groupsCollectives(const fp8rt_collectives &backend);
// The backend's group_start / group_end (only where groupsCollectives).
Status startCollectiveGroup(const fp8rt_collectives &backend);
Status endCollectiveGroup(const fp8rt_collectives &backend);

// Enqueues copy2d `step` with the geometry `plan` on `stream`
// (cuMemcpy2DAsync); a slice asks `backend` for this device's rank.
Status runCopy2D(const fp8rt_collectives &backend, const DriverApi &api,
                 const FunctionStep &step, const Copy2DPlan &plan, void *source,
                 void *target, CUstream stream);

// fp8rt_nccl_collectives: a backend on NCCL communicator `comm`.
Status makeNcclCollectives(void *comm, fp8rt_collectives &out);

// "all_gather on grid "tp" axes [0] (2 devices)"
std::string describeCollective(const FunctionStep &step);

} // namespace fp8rt

#endif // FP8RT_LIB_COLLECTIVES_H
