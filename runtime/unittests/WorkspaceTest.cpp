// The workspace of stream-K kernels against the fake driver: one per stream
// for eager launches (no host synchronization between streams), one of the
// graph for launches captured into a CUDA graph (allocation, zeroing and
// free captured on the stream, never a host wait), and the driver errors of
// both paths.
#include "Workspace.h"
#include "KernelFixture.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace fp8rt::testing {
namespace {

constexpr uintptr_t kStream = 0x5700, kOtherStream = 0x5800;

// The example kernel with a trailing workspace param of 1000 bytes per CTA:
// on 132 SMs a launch takes 132 CTAs and 132000 bytes of workspace.
const char *const kWorkspaceParam =
    "{\"name\": \"m\", \"kind\": \"i32\", \"value\": \"M\"},"
    "\n    {\"name\": \"workspace\", \"kind\": \"workspace\", "
    "\"bytes_per_cta\": 1000}";
constexpr size_t kWorkspaceBytes = 132000;

std::string streamKJson() {
  return replaced(kExampleJson,
                  "{\"name\": \"m\", \"kind\": \"i32\", \"value\": \"M\"}",
                  kWorkspaceParam);
}

std::string streamKPtx() {
  return replaced(kExamplePtx, "_param_4 /* m */",
                  "_param_4,\n\t.param .u64 .ptr .global .align 1 "
                  "gemm_tn_e4m3_bf16_n7168_k2048_param_5");
}

CUstream streamOf(uintptr_t handle) {
  return reinterpret_cast<CUstream>(handle);
}

class WorkspaceTest : public KernelFixture {
protected:
  void loadStreamK(const std::string &json = streamKJson()) {
    load(json, streamKPtx());
  }

  fp8rt_status launchOn(uintptr_t stream, int64_t m = 128) {
    std::vector<fp8rt_tensor> ops = exampleOperands(m);
    return fp8rt_launch(kernel, ops.data(), static_cast<int>(ops.size()),
                        reinterpret_cast<void *>(stream));
  }

  void expectLaunchOn(uintptr_t stream, int64_t m = 128) {
    EXPECT_EQ(launchOn(stream, m), FP8RT_SUCCESS) << fp8rt_last_error();
  }

  void expectFailure(fp8rt_status status, const std::string &message) {
    EXPECT_EQ(status, FP8RT_ERROR_CUDA) << fp8rt_last_error();
    EXPECT_NE(std::string(fp8rt_last_error()).find(message), std::string::npos)
        << "got:      " << fp8rt_last_error() << "\nexpected: " << message;
  }

  // A launch on `stream` fails, and says so, when `call` (made for `what`)
  // fails; the failure is cleared after.
  void expectFailureOf(uintptr_t stream, const std::string &call,
                       const std::string &what) {
    fake.failures[call] = CUDA_ERROR_INVALID_VALUE;
    expectFailure(launchOn(stream),
                  call + " (" + what + ") failed: CUDA_ERROR_INVALID_VALUE");
    fake.failures.clear();
  }

  // The workspace address the n-th launch was passed (its last param).
  CUdeviceptr workspaceOf(size_t n) {
    EXPECT_LT(n, fake.launches.size());
    if (n >= fake.launches.size())
      return 0;
    CUdeviceptr value = 0;
    std::memcpy(&value, fake.launches[n].params.back().data(), sizeof(value));
    return value;
  }

  // The events recorded on `stream`, in order.
  std::vector<CUevent> eventsRecordedOn(uintptr_t stream) {
    std::vector<CUevent> events;
    for (const auto &[event, on] : fake.recordedEvents)
      if (on == streamOf(stream))
        events.push_back(event);
    return events;
  }

  // The driver calls from the first `first` on, without the queries.
  std::vector<std::string> callsFrom(const std::string &first) {
    auto it = std::find(fake.calls.begin(), fake.calls.end(), first);
    std::vector<std::string> out;
    for (; it != fake.calls.end(); ++it)
      if (*it != "cuStreamIsCapturing" && *it != "cuStreamGetId")
        out.push_back(*it);
    return out;
  }
};

//===----------------------------------------------------------------------===//
// Eager launches: a workspace per stream
//===----------------------------------------------------------------------===//

TEST_F(WorkspaceTest, StreamKTakesEverySmAndItsWorkspaceIsZeroedOnce) {
  loadStreamK();
  // M = 128: 1 x 28 tiles of 128x256, fewer than the SMs: a stream-K
  // kernel splits their K blocks over a CTA per SM.
  expectLaunchOn(kStream);
  ASSERT_EQ(fake.launches.size(), 1u);
  EXPECT_EQ(fake.launches[0].grid[0], 132u);
  ASSERT_EQ(fake.deviceAllocations.size(), 1u);
  EXPECT_EQ(fake.deviceAllocationSizes[0], kWorkspaceBytes);
  const CUdeviceptr workspace = fake.deviceAllocations[0];
  // Zeroed on the launch stream by the device, not copied from the host.
  EXPECT_TRUE(fake.copies.empty());
  ASSERT_EQ(fake.memsets.size(), 1u);
  EXPECT_EQ(fake.memsets[0].destination, workspace);
  EXPECT_EQ(fake.memsets[0].value, 0);
  EXPECT_EQ(fake.memsets[0].bytes, kWorkspaceBytes);
  EXPECT_EQ(fake.memsets[0].stream, streamOf(kStream));
  EXPECT_EQ(workspaceOf(0), workspace);
  ASSERT_EQ(fake.createdEvents.size(), 1u);
  const CUevent done = fake.createdEvents[0];
  EXPECT_EQ(eventsRecordedOn(kStream), std::vector<CUevent>{done});

  // Same stream: reused as is (the kernel leaves it zeroed), also with more
  // tiles than SMs (M = 1024: 224 tiles, the same 132 CTAs).
  expectLaunchOn(kStream, 1);
  expectLaunchOn(kStream, 1024);
  EXPECT_EQ(fake.launches[2].grid[0], 132u);
  EXPECT_EQ(workspaceOf(1), workspace);
  EXPECT_EQ(workspaceOf(2), workspace);
  EXPECT_EQ(fake.deviceAllocations.size(), 1u);
  EXPECT_EQ(fake.memsets.size(), 1u);
  EXPECT_TRUE(fake.synchronizedEvents.empty());
  EXPECT_EQ(eventsRecordedOn(kStream), std::vector<CUevent>(3, done));

  // Destroy waits for the last launch, then frees.
  fp8rt_kernel_destroy(kernel);
  kernel = nullptr;
  EXPECT_EQ(fake.synchronizedEvents, std::vector<CUevent>{done});
  EXPECT_EQ(fake.destroyedEvents, std::vector<CUevent>{done});
  EXPECT_EQ(fake.deviceFrees, fake.deviceAllocations);
}

TEST_F(WorkspaceTest, StreamsUsedAlternatelyNeverWaitOnTheHost) {
  loadStreamK();
  for (int round = 0; round < 3; ++round) {
    expectLaunchOn(kStream);
    expectLaunchOn(kOtherStream);
  }
  EXPECT_EQ(fake.count("cuEventSynchronize"), 0);
  // A workspace and an event per stream, each zeroed on its own stream.
  ASSERT_EQ(fake.deviceAllocations.size(), 2u);
  ASSERT_EQ(fake.memsets.size(), 2u);
  EXPECT_EQ(fake.memsets[0].stream, streamOf(kStream));
  EXPECT_EQ(fake.memsets[1].stream, streamOf(kOtherStream));
  const CUdeviceptr first = fake.deviceAllocations[0],
                    second = fake.deviceAllocations[1];
  for (size_t n = 0; n < fake.launches.size(); ++n)
    EXPECT_EQ(workspaceOf(n), n % 2 == 0 ? first : second) << "launch " << n;
  ASSERT_EQ(fake.createdEvents.size(), 2u);
  EXPECT_EQ(eventsRecordedOn(kStream),
            std::vector<CUevent>(3, fake.createdEvents[0]));
  EXPECT_EQ(eventsRecordedOn(kOtherStream),
            std::vector<CUevent>(3, fake.createdEvents[1]));

  // Destroy waits for both, then frees them (most recently used first).
  fp8rt_kernel_destroy(kernel);
  kernel = nullptr;
  auto reversed = [](auto items) {
    std::reverse(items.begin(), items.end());
    return items;
  };
  EXPECT_EQ(fake.synchronizedEvents, reversed(fake.createdEvents));
  EXPECT_EQ(fake.destroyedEvents, reversed(fake.createdEvents));
  EXPECT_EQ(fake.deviceFrees, reversed(fake.deviceAllocations));
}

TEST_F(WorkspaceTest, StreamsAreToldApartByIdNotHandle) {
  loadStreamK();
  fake.streamIds[streamOf(kStream)] = 100;
  expectLaunchOn(kStream);
  // The stream is destroyed and a new one gets the same handle: its launches
  // are not ordered after the old stream's, so it gets a workspace of its
  // own.
  fake.streamIds[streamOf(kStream)] = 101;
  expectLaunchOn(kStream);
  ASSERT_EQ(fake.deviceAllocations.size(), 2u);
  EXPECT_EQ(workspaceOf(0), fake.deviceAllocations[0]);
  EXPECT_EQ(workspaceOf(1), fake.deviceAllocations[1]);
  EXPECT_EQ(fake.count("cuEventSynchronize"), 0);
}

TEST_F(WorkspaceTest, LeastRecentlyUsedStreamWorkspaceIsTakenOver) {
  loadStreamK();
  std::vector<uintptr_t> streams;
  for (size_t i = 0; i <= kStreamWorkspaces; ++i)
    streams.push_back(0x9000 + 0x100 * i);
  for (size_t i = 0; i < kStreamWorkspaces; ++i)
    expectLaunchOn(streams[i]);
  expectLaunchOn(streams[0]); // streams[1] is now the least recently used
  EXPECT_EQ(fake.deviceAllocations.size(), kStreamWorkspaces);
  EXPECT_EQ(fake.count("cuEventSynchronize"), 0);

  // One stream more: it waits for the last launch of streams[1]'s
  // workspace, frees it and takes its event.
  expectLaunchOn(streams[kStreamWorkspaces]);
  const CUevent taken = fake.createdEvents[1];
  EXPECT_EQ(fake.synchronizedEvents, std::vector<CUevent>{taken});
  EXPECT_EQ(fake.deviceFrees,
            std::vector<CUdeviceptr>{fake.deviceAllocations[1]});
  ASSERT_EQ(fake.deviceAllocations.size(), kStreamWorkspaces + 1);
  EXPECT_EQ(workspaceOf(kStreamWorkspaces + 1), fake.deviceAllocations.back());
  EXPECT_EQ(fake.recordedEvents.back(),
            std::make_pair(taken, streamOf(streams[kStreamWorkspaces])));
  // streams[0] kept its workspace.
  expectLaunchOn(streams[0]);
  EXPECT_EQ(workspaceOf(kStreamWorkspaces + 2), fake.deviceAllocations[0]);
  EXPECT_EQ(fake.deviceAllocations.size(), kStreamWorkspaces + 1);
}

TEST_F(WorkspaceTest, GrowingWaitsForTheLastLaunchAndZeroesOnTheStream) {
  // A tiles grid over a run-time N: the workspace is 1000 bytes per tile
  // column, so a wider launch needs a larger one.
  std::string json = replaced(streamKJson(), "\"kind\": \"persistent\"",
                              "\"kind\": \"tiles\"");
  json = replaced(json, "\"shape\": [7168, 2048]", "\"shape\": [\"N\", 2048]");
  json = replaced(json, "\"shape\": [7168], \"role\": \"input\"",
                  "\"shape\": [\"N\"], \"role\": \"input\"");
  json =
      replaced(json, "\"shape\": [\"M\", 7168]", "\"shape\": [\"M\", \"N\"]");
  loadStreamK(json);
  auto launchWithN = [&](int64_t n) {
    std::vector<fp8rt_tensor> ops = exampleOperands(128);
    ops[1].shape[0] = n;
    ops[4].shape[1] = n;
    return fp8rt_launch(kernel, ops.data(), static_cast<int>(ops.size()),
                        reinterpret_cast<void *>(kStream));
  };
  ASSERT_EQ(launchWithN(512), FP8RT_SUCCESS) << fp8rt_last_error();
  ASSERT_EQ(fake.deviceAllocationSizes, std::vector<size_t>{2000});
  // Narrower: the same workspace.
  ASSERT_EQ(launchWithN(256), FP8RT_SUCCESS) << fp8rt_last_error();
  EXPECT_EQ(workspaceOf(1), fake.deviceAllocations[0]);
  EXPECT_TRUE(fake.synchronizedEvents.empty());

  // Wider: wait for the last launch, free, allocate and zero on the stream.
  ASSERT_EQ(launchWithN(1024), FP8RT_SUCCESS) << fp8rt_last_error();
  const CUevent done = fake.createdEvents[0];
  EXPECT_EQ(fake.synchronizedEvents, std::vector<CUevent>{done});
  EXPECT_EQ(fake.deviceFrees,
            std::vector<CUdeviceptr>{fake.deviceAllocations[0]});
  EXPECT_EQ(fake.deviceAllocationSizes, (std::vector<size_t>{2000, 4000}));
  ASSERT_EQ(fake.memsets.size(), 2u);
  EXPECT_EQ(fake.memsets[1].destination, fake.deviceAllocations[1]);
  EXPECT_EQ(fake.memsets[1].bytes, 4000u);
  EXPECT_EQ(fake.memsets[1].stream, streamOf(kStream));
  EXPECT_EQ(workspaceOf(2), fake.deviceAllocations[1]);
  EXPECT_EQ(fake.createdEvents.size(), 1u);
  EXPECT_EQ(callsFrom("cuEventSynchronize"),
            (std::vector<std::string>{"cuEventSynchronize", "cuMemFree",
                                      "cuMemAlloc", "cuMemsetD8Async",
                                      "cuLaunchKernel", "cuEventRecord"}));
}

//===----------------------------------------------------------------------===//
// Launches captured into a CUDA graph: a workspace of the graph
//===----------------------------------------------------------------------===//

TEST_F(WorkspaceTest, CaptureAfterEagerUseOnAnotherStreamUsesTheGraphsOwn) {
  loadStreamK();
  expectLaunchOn(kStream);
  const CUdeviceptr eager = fake.deviceAllocations[0];
  const size_t recorded = fake.recordedEvents.size();

  // torch.cuda.graph: the capture runs on a stream of its own.
  fake.captureStatus = CU_STREAM_CAPTURE_STATUS_ACTIVE;
  fake.calls.clear();
  expectLaunchOn(kOtherStream);
  // Allocation, zeroing, launch and free, all captured on the stream; no
  // host wait, no cuMemAlloc/cuMemFree, no event.
  EXPECT_EQ(callsFrom("cuMemAllocAsync"),
            (std::vector<std::string>{"cuMemAllocAsync", "cuMemsetD8Async",
                                      "cuLaunchKernel", "cuMemFreeAsync"}));
  EXPECT_EQ(fake.count("cuEventSynchronize"), 0);
  EXPECT_EQ(fake.deviceAllocations.size(), 1u);
  EXPECT_TRUE(fake.deviceFrees.empty());
  EXPECT_EQ(fake.recordedEvents.size(), recorded);
  ASSERT_EQ(fake.asyncAllocations.size(), 1u);
  const AsyncMemoryCall &graphs = fake.asyncAllocations[0];
  EXPECT_EQ(graphs.bytes, kWorkspaceBytes);
  EXPECT_EQ(graphs.stream, streamOf(kOtherStream));
  EXPECT_NE(graphs.pointer, eager);
  EXPECT_EQ(workspaceOf(1), graphs.pointer);
  ASSERT_EQ(fake.memsets.size(), 2u);
  EXPECT_EQ(fake.memsets[1].destination, graphs.pointer);
  EXPECT_EQ(fake.memsets[1].bytes, kWorkspaceBytes);
  EXPECT_EQ(fake.memsets[1].stream, streamOf(kOtherStream));
  ASSERT_EQ(fake.asyncFrees.size(), 1u);
  EXPECT_EQ(fake.asyncFrees[0].pointer, graphs.pointer);
  EXPECT_EQ(fake.asyncFrees[0].stream, streamOf(kOtherStream));

  // A second captured launch, even on the eager stream: another allocation
  // of the graph, never the eager workspace.
  expectLaunchOn(kStream);
  ASSERT_EQ(fake.asyncAllocations.size(), 2u);
  EXPECT_EQ(workspaceOf(2), fake.asyncAllocations[1].pointer);
  EXPECT_EQ(fake.count("cuEventSynchronize"), 0);

  // After the capture, eager launches on the capture's stream get a
  // workspace of their own; the first stream keeps its.
  fake.captureStatus = CU_STREAM_CAPTURE_STATUS_NONE;
  expectLaunchOn(kOtherStream);
  expectLaunchOn(kStream);
  ASSERT_EQ(fake.deviceAllocations.size(), 2u);
  EXPECT_EQ(workspaceOf(3), fake.deviceAllocations[1]);
  EXPECT_EQ(workspaceOf(4), eager);
  EXPECT_EQ(fake.count("cuEventSynchronize"), 0);

  // The graph's allocations are the graph's: destroy frees only the eager
  // workspaces.
  fp8rt_kernel_destroy(kernel);
  kernel = nullptr;
  EXPECT_EQ(fake.deviceFrees, fake.deviceAllocations);
  EXPECT_EQ(fake.asyncFrees.size(), 2u);
}

TEST_F(WorkspaceTest, InvalidatedCaptureNeverWaitsOnTheHost) {
  loadStreamK();
  expectLaunchOn(kStream);
  fake.captureStatus = CU_STREAM_CAPTURE_STATUS_INVALIDATED;
  expectFailureOf(kOtherStream, "cuMemAllocAsync",
                  "workspace of a captured launch");
  EXPECT_EQ(fake.launches.size(), 1u);
  EXPECT_EQ(fake.count("cuEventSynchronize"), 0);
  EXPECT_TRUE(fake.asyncFrees.empty());
}

//===----------------------------------------------------------------------===//
// Driver errors: named, and nothing left half done
//===----------------------------------------------------------------------===//

TEST_F(WorkspaceTest, CapturedDriverErrorsAreNamedAndKeepTheGraphBalanced) {
  loadStreamK();
  fake.captureStatus = CU_STREAM_CAPTURE_STATUS_ACTIVE;
  // The zeroing fails: no launch, and the allocation is freed in the graph.
  expectFailureOf(kStream, "cuMemsetD8Async", "workspace of a captured launch");
  EXPECT_TRUE(fake.launches.empty());
  ASSERT_EQ(fake.asyncAllocations.size(), 1u);
  ASSERT_EQ(fake.asyncFrees.size(), 1u);
  EXPECT_EQ(fake.asyncFrees[0].pointer, fake.asyncAllocations[0].pointer);
  // The free fails: reported after the launch.
  expectFailureOf(kStream, "cuMemFreeAsync", "workspace of a captured launch");
  EXPECT_EQ(fake.launches.size(), 1u);
  EXPECT_EQ(fake.count("cuEventSynchronize"), 0);
}

TEST_F(WorkspaceTest, FailedLaunchStillFreesOrMarksItsWorkspace) {
  loadStreamK();
  fake.failures["cuLaunchKernel"] = CUDA_ERROR_INVALID_VALUE;
  expectFailure(launchOn(kStream), "cuLaunchKernel failed");
  // The zeroing was enqueued: the event marks it.
  EXPECT_EQ(eventsRecordedOn(kStream),
            std::vector<CUevent>{fake.createdEvents[0]});
  fake.captureStatus = CU_STREAM_CAPTURE_STATUS_ACTIVE;
  expectFailure(launchOn(kOtherStream), "cuLaunchKernel failed");
  ASSERT_EQ(fake.asyncFrees.size(), 1u);
  EXPECT_EQ(fake.asyncFrees[0].pointer, fake.asyncAllocations[0].pointer);
}

TEST_F(WorkspaceTest, EagerDriverErrorsAreNamedAndRecoveredFrom) {
  loadStreamK();
  fake.failures["cuStreamIsCapturing"] = CUDA_ERROR_INVALID_VALUE;
  expectFailure(launchOn(kStream), "cuStreamIsCapturing failed");
  fake.failures.clear();
  fake.failures["cuStreamGetId"] = CUDA_ERROR_INVALID_VALUE;
  expectFailure(launchOn(kStream), "cuStreamGetId failed");
  fake.failures.clear();
  expectFailureOf(kStream, "cuMemAlloc", "workspace");
  EXPECT_TRUE(fake.launches.empty());

  // A workspace whose zeroing failed is never handed out: the next launch
  // replaces it.
  expectFailureOf(kStream, "cuMemsetD8Async", "workspace");
  EXPECT_TRUE(fake.launches.empty());
  expectLaunchOn(kStream);
  ASSERT_EQ(fake.deviceAllocations.size(), 2u);
  EXPECT_EQ(fake.deviceFrees,
            std::vector<CUdeviceptr>{fake.deviceAllocations[0]});
  EXPECT_EQ(workspaceOf(0), fake.deviceAllocations[1]);
  EXPECT_EQ(fake.memsets.back().destination, fake.deviceAllocations[1]);
}

TEST_F(WorkspaceTest, TakeOverWaitFailureIsNamed) {
  loadStreamK();
  for (size_t i = 0; i < kStreamWorkspaces; ++i)
    expectLaunchOn(0x9000 + 0x100 * i);
  expectFailureOf(kOtherStream, "cuEventSynchronize", "workspace");
  EXPECT_EQ(fake.launches.size(), kStreamWorkspaces);
  EXPECT_TRUE(fake.deviceFrees.empty());
}

} // namespace
} // namespace fp8rt::testing
