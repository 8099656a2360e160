// Collective steps against the fake driver and an in-process backend: two
// ranks (threads) call a sharded function whose program slices the
// replicated input, max-all-reduces the amax between its kernels and
// all-gathers the FP8 data. The backend moves real bytes between the
// ranks' host buffers (the fake driver's "device" memory), so the test sees
// each collective's pointers, counts and order among the launches; then
// the errors: no backend, a missing function, a failing backend, and
// programs whose collectives are inconsistent. Last, f32 partial sums
// reduce-scattered, then rounded by a conversion kernel.
#include "FakeDriver.h"
#include "Module.h"
#include "TestModule.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace fp8rt::testing {
namespace {

constexpr int64_t kRows = 512, kShardRows = 256, kCols = 2048;

// shard(x: bf16 [512, 2048]) -> (y: e4m3 [512, 2048], y_scale: f32 [])
// on grid "tp" of 2 devices.
const char *const kShardedJson = R"json({
  "format": "fp8-mlir-module", "version": 1, "chip": "sm_90a",
  "kernels": ["amax", "cast"],
  "functions": [{
    "name": "shard",
    "symbols": [],
    "arguments": [{"name": "x", "dtype": "bf16", "shape": [512, 2048], "alignment": 16}],
    "results": [
      {"name": "y", "dtype": "e4m3", "shape": [512, 2048], "alignment": 16},
      {"name": "y_scale", "dtype": "f32", "shape": [], "alignment": 4}
    ],
    "buffers": [
      {"name": "xs", "dtype": "bf16", "shape": [256, 2048], "bytes": 1048576, "alignment": 256, "offset": 0},
      {"name": "amax", "dtype": "f32", "shape": [], "bytes": 4, "alignment": 256, "offset": 1048576},
      {"name": "amax_g", "dtype": "f32", "shape": [], "bytes": 4, "alignment": 256, "offset": 1048832},
      {"name": "q", "dtype": "e4m3", "shape": [256, 2048], "bytes": 524288, "alignment": 256, "offset": 1049088}
    ],
    "workspace_bytes": 1573376,
    "steps": [
      {"kind": "all_slice", "source": "x", "target": "xs", "dtype": "bf16", "count": 524288,
       "group": {"grid": "tp", "axes": [0], "size": 2}},
      {"kind": "fill", "target": "amax", "byte": 0},
      {"kind": "launch", "kernel": "amax", "operands": {"x": "xs", "amax": "amax"}, "symbols": {"R": 256}},
      {"kind": "all_reduce", "reduction": "max", "source": "amax", "target": "amax_g", "dtype": "f32",
       "count": 1, "group": {"grid": "tp", "axes": [0], "size": 2}},
      {"kind": "launch", "kernel": "cast",
       "operands": {"x": "xs", "amax": "amax_g", "q": "q", "q_scale_inv": "y_scale"}, "symbols": {"R": 256}},
      {"kind": "all_gather", "source": "q", "target": "y", "dtype": "e4m3", "count": 524288,
       "group": {"grid": "tp", "axes": [0], "size": 2}}
    ]
  }]
})json";

constexpr int64_t kWorkspaceBytes = 1573376, kAmaxOffset = 1048576,
                  kAmaxGOffset = 1048832, kQOffset = 1049088;

// Serializes the ranks' use of the (single-threaded) fake driver: a rank
// holds it while its call runs and lets go while it waits in a collective.
std::mutex driverMutex;

// One recorded collective of a rank.
struct Event {
  std::string kind;
  const void *send;
  void *recv;
  size_t count;
  fp8rt_dtype dtype;
  int op;                // fp8rt_reduction, -1 for a gather
  size_t launchesBefore; // fake driver launches on the rank's stream so far
};

size_t launchesOn(CUstream stream) {
  size_t n = 0;
  for (const LaunchCall &launch : FakeDriver::get().launches)
    n += launch.stream == stream;
  return n;
}

// The collectives of `size` ranks in one process: each call waits until
// every rank has posted its send buffer, copies (or reduces) the bytes of
// all into its receive buffer, and waits again before returning.
class ThreadGroup {
public:
  explicit ThreadGroup(int size) : size_(size), sends_(size) {}
  int size() const { return size_; }

  template <typename Body>
  void exchange(int rank, const void *send, Body &&body) {
    driverMutex.unlock();
    {
      std::unique_lock<std::mutex> lock(mutex_);
      sends_[rank] = send;
      wait(lock);
      body(sends_);
      wait(lock);
    }
    driverMutex.lock();
  }

private:
  int size_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<const void *> sends_;
  int arrived_ = 0;
  long generation_ = 0;

  void wait(std::unique_lock<std::mutex> &lock) {
    long generation = generation_;
    if (++arrived_ == size_) {
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
    } else {
      cv_.wait(lock, [&] { return generation_ != generation; });
    }
  }
};

// One rank's backend: fp8rt_collectives over the group, recording events.
struct Rank {
  ThreadGroup *group;
  int rank;
  CUstream stream;
  std::vector<Event> events;
  int failWith = 0; // all_gather returns it when set

  void record(const char *kind, const void *send, void *recv, size_t count,
              fp8rt_dtype dtype, int op) {
    events.push_back({kind, send, recv, count, dtype, op, launchesOn(stream)});
  }

  static int rankOf(void *user, const fp8rt_device_group *group, int64_t *out) {
    auto &r = *static_cast<Rank *>(user);
    if (group->size != r.group->size() || std::string(group->grid) != "tp" ||
        group->num_axes != 1 || group->axes[0] != 0)
      return 3;
    *out = r.rank;
    return 0;
  }

  static int allReduce(void *user, const fp8rt_device_group *group,
                       const void *send, void *recv, size_t count,
                       fp8rt_dtype dtype, fp8rt_reduction op, void *) {
    auto &r = *static_cast<Rank *>(user);
    int64_t rank;
    if (dtype != FP8RT_F32 || rankOf(user, group, &rank))
      return 5;
    r.record("all_reduce", send, recv, count, dtype, op);
    r.group->exchange(r.rank, send, [&](const std::vector<const void *> &all) {
      for (size_t i = 0; i < count; ++i) {
        float v = static_cast<const float *>(all[0])[i];
        for (size_t k = 1; k < all.size(); ++k) {
          float w = static_cast<const float *>(all[k])[i];
          v = op == FP8RT_REDUCE_MAX ? std::max(v, w) : v + w;
        }
        static_cast<float *>(recv)[i] = v;
      }
    });
    return 0;
  }

  static int allGather(void *user, const fp8rt_device_group *group,
                       const void *send, void *recv, size_t count,
                       fp8rt_dtype dtype, void *) {
    auto &r = *static_cast<Rank *>(user);
    int64_t rank;
    if (r.failWith)
      return r.failWith;
    if (dtype != FP8RT_E4M3 || rankOf(user, group, &rank))
      return 5;
    r.record("all_gather", send, recv, count, dtype, -1);
    r.group->exchange(r.rank, send, [&](const std::vector<const void *> &all) {
      for (size_t k = 0; k < all.size(); ++k)
        std::memcpy(static_cast<char *>(recv) + k * count, all[k], count);
    });
    return 0;
  }

  static int reduceScatter(void *user, const fp8rt_device_group *group,
                           const void *send, void *recv, size_t count,
                           fp8rt_dtype dtype, fp8rt_reduction op, void *) {
    auto &r = *static_cast<Rank *>(user);
    int64_t rank;
    if (dtype != FP8RT_F32 || op != FP8RT_REDUCE_SUM ||
        rankOf(user, group, &rank))
      return 5;
    r.record("reduce_scatter", send, recv, count, dtype, op);
    r.group->exchange(r.rank, send, [&](const std::vector<const void *> &all) {
      for (size_t i = 0; i < count; ++i) {
        float v = 0;
        for (const void *piece : all)
          v += static_cast<const float *>(piece)[rank * count + i];
        static_cast<float *>(recv)[i] = v;
      }
    });
    return 0;
  }

  static const char *lastError(void *) { return "the fake backend failed"; }

  fp8rt_collectives table() {
    fp8rt_collectives c{};
    c.user_data = this;
    c.rank = rankOf;
    c.all_reduce = allReduce;
    c.all_gather = allGather;
    c.reduce_scatter = reduceScatter;
    c.last_error = lastError;
    return c;
  }
};

// One rank's memory: the replicated input, the workspace and the results,
// host buffers standing for device memory.
struct RankMemory {
  std::vector<unsigned char> x, y;
  float yScale = 0;
  unsigned char *workspace;

  explicit RankMemory(int rank)
      : x(kRows * kCols * 2, 0x11), y(kRows * kCols, 0),
        workspace(static_cast<unsigned char *>(
            std::aligned_alloc(256, kWorkspaceBytes))) {
    std::memset(workspace, 0, kWorkspaceBytes);
    // What the (fake) kernels would have written: this rank's amax and FP8
    // shard.
    float amax = rank == 0 ? 1.5f : 3.25f;
    std::memcpy(workspace + kAmaxOffset, &amax, sizeof(amax));
    std::memset(workspace + kQOffset, 0x40 + rank, kShardRows * kCols);
  }
  ~RankMemory() { std::free(workspace); }
  RankMemory(const RankMemory &) = delete;
  RankMemory &operator=(const RankMemory &) = delete;

  uintptr_t at(int64_t offset) const {
    return reinterpret_cast<uintptr_t>(workspace + offset);
  }

  fp8rt_status call(fp8rt_function *fn, CUstream stream) {
    fp8rt_tensor args[] = {makeTensor(nullptr,
                                      reinterpret_cast<uintptr_t>(x.data()),
                                      FP8RT_BF16, {kRows, kCols})};
    fp8rt_tensor results[] = {
        makeTensor(nullptr, reinterpret_cast<uintptr_t>(y.data()), FP8RT_E4M3,
                   {kRows, kCols}),
        makeTensor(nullptr, reinterpret_cast<uintptr_t>(&yScale), FP8RT_F32,
                   {})};
    return fp8rt_function_call(fn, args, 1, results, 2, workspace,
                               kWorkspaceBytes, stream);
  }
};

class CollectiveTest : public ::testing::Test {
protected:
  FakeDriver &fake = FakeDriver::get();
  ModuleDirectory dir;

  void SetUp() override {
    fake.reset();
    setDriverForTesting(&fake.api);
    dir.write("module.json", kShardedJson);
  }
  void TearDown() override {
    setDriverForTesting(nullptr);
    fake.reset();
  }

  fp8rt_module *load(const std::string &json = kShardedJson) {
    dir.write("module.json", json);
    fp8rt_module *m = nullptr;
    EXPECT_EQ(fp8rt_module_load(dir.path().c_str(), &m), FP8RT_SUCCESS)
        << fp8rt_last_error();
    return m;
  }

  static fp8rt_function *function(fp8rt_module *m) {
    fp8rt_function *fn = nullptr;
    EXPECT_EQ(fp8rt_module_function(m, "shard", &fn), FP8RT_SUCCESS);
    return fn;
  }

  // The launches' params are pointers (8 bytes) and the row count r.
  void sizeParams() {
    fake.paramSizesByKernel["amax"] = {8, 8, 4};
    fake.paramSizesByKernel["cast"] = {8, 8, 8, 8, 4};
  }

  static uintptr_t pointerParam(const LaunchCall &launch, size_t i) {
    uintptr_t value = 0;
    EXPECT_EQ(launch.params.at(i).size(), sizeof(value));
    std::memcpy(&value, launch.params.at(i).data(), sizeof(value));
    return value;
  }

  // The last error names `message`.
  static void expectMessage(const std::string &message) {
    std::string error = fp8rt_last_error();
    EXPECT_NE(error.find(message), std::string::npos)
        << "got:      " << error << "\nexpected: " << message;
  }

  // Loading `json` fails with an error naming `message`.
  void expectRejected(const std::string &json, const std::string &message) {
    dir.write("module.json", json);
    fp8rt_module *bad = nullptr;
    fp8rt_status status = fp8rt_module_load(dir.path().c_str(), &bad);
    fp8rt_module_destroy(bad);
    EXPECT_EQ(status, FP8RT_ERROR_INVALID_METADATA);
    expectMessage(message);
  }
};

// Runs `call(r)` for ranks 0 and 1 on threads, each with its backend set on
// `modules[r]` and the fake driver held while it runs.
template <typename Call>
void runRanks(fp8rt_module *const modules[2], Rank ranks[2],
              fp8rt_status status[2], Call call) {
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {
    fp8rt_collectives table = ranks[r].table();
    ASSERT_EQ(fp8rt_module_set_collectives(modules[r], &table), FP8RT_SUCCESS);
    threads.emplace_back([&, r] {
      std::lock_guard<std::mutex> lock(driverMutex);
      status[r] = call(r);
    });
  }
  for (std::thread &t : threads)
    t.join();
}

TEST_F(CollectiveTest, TwoRanksRunTheStepsInOrderWithTheirBuffers) {
  // One module per rank (a process each on real GPUs), same directory.
  fp8rt_module *modules[2] = {load(), load()};
  ASSERT_TRUE(modules[0] && modules[1]);
  sizeParams();
  EXPECT_EQ(fp8rt_function_num_collectives(function(modules[0])), 3);
  ThreadGroup group(2);
  Rank ranks[2] = {{&group, 0, reinterpret_cast<CUstream>(0x100), {}, 0},
                   {&group, 1, reinterpret_cast<CUstream>(0x101), {}, 0}};
  RankMemory memory0(0), memory1(1);
  RankMemory *memory[2] = {&memory0, &memory1};
  fp8rt_status status[2] = {};
  runRanks(modules, ranks, status, [&](int r) {
    return memory[r]->call(function(modules[r]), ranks[r].stream);
  });
  for (int r = 0; r < 2; ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    ASSERT_EQ(status[r], FP8RT_SUCCESS) << fp8rt_last_error();
    RankMemory &m = *memory[r];
    // The slice: a copy of this rank's half of x into xs (offset 0).
    int found = 0;
    for (const DeviceCopyCall &copy : fake.deviceCopies)
      if (copy.stream == ranks[r].stream) {
        ++found;
        EXPECT_EQ(copy.destination, CUdeviceptr(m.at(0)));
        EXPECT_EQ(copy.source, CUdeviceptr(reinterpret_cast<uintptr_t>(
                                   m.x.data() + r * kShardRows * kCols * 2)));
        EXPECT_EQ(copy.bytes, size_t(kShardRows * kCols * 2));
      }
    EXPECT_EQ(found, 1);
    // The launches: amax(xs, amax), then cast(xs, amax_g, q, y_scale).
    std::vector<const LaunchCall *> launches;
    for (const LaunchCall &launch : fake.launches)
      if (launch.stream == ranks[r].stream)
        launches.push_back(&launch);
    ASSERT_EQ(launches.size(), 2u);
    EXPECT_EQ(pointerParam(*launches[0], 0), m.at(0));
    EXPECT_EQ(pointerParam(*launches[0], 1), m.at(kAmaxOffset));
    EXPECT_EQ(pointerParam(*launches[1], 0), m.at(0));
    EXPECT_EQ(pointerParam(*launches[1], 1), m.at(kAmaxGOffset));
    EXPECT_EQ(pointerParam(*launches[1], 2), m.at(kQOffset));
    EXPECT_EQ(pointerParam(*launches[1], 3),
              reinterpret_cast<uintptr_t>(&m.yScale));
    // The collectives, between the right launches, on the right buffers.
    const std::vector<Event> &events = ranks[r].events;
    ASSERT_EQ(events.size(), 2u);
    EXPECT_EQ(events[0].kind, "all_reduce");
    EXPECT_EQ(events[0].launchesBefore, 1u);
    EXPECT_EQ(events[0].send, reinterpret_cast<void *>(m.at(kAmaxOffset)));
    EXPECT_EQ(events[0].recv, reinterpret_cast<void *>(m.at(kAmaxGOffset)));
    EXPECT_EQ(events[0].count, 1u);
    EXPECT_EQ(events[0].op, FP8RT_REDUCE_MAX);
    EXPECT_EQ(events[1].kind, "all_gather");
    EXPECT_EQ(events[1].launchesBefore, 2u);
    EXPECT_EQ(events[1].send, reinterpret_cast<void *>(m.at(kQOffset)));
    EXPECT_EQ(events[1].recv, m.y.data());
    EXPECT_EQ(events[1].count, size_t(kShardRows * kCols));
    EXPECT_EQ(events[1].dtype, FP8RT_E4M3);
    // The data the backend moved: the max of the amaxes, the shards in
    // rank order.
    float amax;
    std::memcpy(&amax, m.workspace + kAmaxGOffset, sizeof(amax));
    EXPECT_EQ(amax, 3.25f);
    EXPECT_EQ(m.y[0], 0x40);
    EXPECT_EQ(m.y[kShardRows * kCols - 1], 0x40);
    EXPECT_EQ(m.y[kShardRows * kCols], 0x41);
    EXPECT_EQ(m.y.back(), 0x41);
  }
  for (fp8rt_module *m : modules)
    fp8rt_module_destroy(m);
}

TEST_F(CollectiveTest, ACallWithoutABackendFailsBeforeAnything) {
  fp8rt_module *m = load();
  ASSERT_TRUE(m);
  RankMemory memory(0);
  EXPECT_EQ(memory.call(function(m), nullptr), FP8RT_ERROR_COLLECTIVE);
  expectMessage("function shard has collective steps (all_slice on grid "
                "\"tp\" axes [0] (2 devices), ...) and the module has no "
                "collective backend");
  EXPECT_TRUE(fake.launches.empty());
  EXPECT_TRUE(fake.deviceCopies.empty());
  // A backend without all_gather.
  ThreadGroup group(2);
  Rank rank{&group, 0, nullptr, {}, 0};
  fp8rt_collectives table = rank.table();
  table.all_gather = nullptr;
  ASSERT_EQ(fp8rt_module_set_collectives(m, &table), FP8RT_SUCCESS);
  EXPECT_EQ(memory.call(function(m), nullptr), FP8RT_ERROR_COLLECTIVE);
  expectMessage("runs all_gather on grid \"tp\" axes [0] (2 devices) and "
                "the collective backend has no 'all_gather' function");
  EXPECT_TRUE(fake.launches.empty());
  fp8rt_module_destroy(m);
}

TEST_F(CollectiveTest, ABackendFailureNamesTheStep) {
  // A group of one: every exchange returns at once.
  fp8rt_module *m = load(
      replaced(replaced(replaced(kShardedJson, "\"size\": 2", "\"size\": 1"),
                        "\"size\": 2", "\"size\": 1"),
               "\"size\": 2", "\"size\": 1"));
  ASSERT_TRUE(m);
  RankMemory memory(0);
  // The slice of a group of one is the whole tensor: the sizes disagree.
  EXPECT_EQ(memory.call(function(m), nullptr), FP8RT_ERROR_INVALID_METADATA);
  expectMessage("step 0 (all_slice on grid \"tp\" axes [0] (1 device)): "
                "524288 elements per device, but buffer 'xs' has "
                "1048576 bytes and argument 'x' 2097152");
  fp8rt_module_destroy(m);

  m = load();
  ThreadGroup group(1);
  Rank rank{&group, 0, nullptr, {}, 7};
  fp8rt_collectives table = rank.table();
  ASSERT_EQ(fp8rt_module_set_collectives(m, &table), FP8RT_SUCCESS);
  // rank() checks the group's size against its own (1): fails first.
  EXPECT_EQ(memory.call(function(m), nullptr), FP8RT_ERROR_COLLECTIVE);
  expectMessage("step 0 (all_slice on grid \"tp\" axes [0] (2 devices) "
                "of argument 'x' into buffer 'xs'): the collective "
                "backend's rank returned 3: the fake backend failed");
  fp8rt_module_destroy(m);
}

// kShardedJson with the first `from` replaced by `to`.
std::string edit(const std::string &from, const std::string &to) {
  return replaced(kShardedJson, from, to);
}

TEST_F(CollectiveTest, InconsistentCollectivesAreLoadErrors) {
  expectRejected(edit("\"target\": \"amax_g\", \"dtype\": \"f32\"",
                      "\"target\": \"amax_g\", \"dtype\": \"bf16\""),
                 "functions[0].steps[3].source: buffer 'amax' is f32, the "
                 "collective moves bf16");
  expectRejected(edit("\"source\": \"q\", \"target\": \"y\"",
                      "\"source\": \"q\", \"target\": \"nothing\""),
                 "functions[0].steps[5].target: \"nothing\" is not an "
                 "argument, a result or a buffer of function shard");
  expectRejected(edit("\"source\": \"q\", \"target\": \"y\"",
                      "\"source\": \"q\", \"target\": \"q\""),
                 "the collective reads and writes 'q'");
  expectRejected(edit("\"source\": \"x\", \"target\": \"xs\"",
                      "\"source\": \"xs\", \"target\": \"x\""),
                 "the step writes argument 'x', which is not marked "
                 "\"written\"");
  expectRejected(edit("\"count\": 1,", "\"count\": \"n\","),
                 "functions[0].steps[3].count");
  expectRejected(edit("\"reduction\": \"max\"", "\"reduction\": \"min\""),
                 "functions[0].steps[3].reduction");
  expectRejected(
      edit("\"group\": {\"grid\": \"tp\", \"axes\": [0], \"size\": 2}}\n    ]",
           "\"group\": {\"grid\": \"tp\", \"axes\": [], \"size\": 2}}\n    ]"),
      "functions[0].steps[5].group.axes");
}

TEST_F(CollectiveTest, TheNcclBackendNeedsACommunicator) {
  fp8rt_collectives table;
  EXPECT_EQ(fp8rt_nccl_collectives(nullptr, &table),
            FP8RT_ERROR_INVALID_ARGUMENT);
  expectMessage("nccl_comm is NULL");
}

// inner(x: bf16 [4, 8], q: e4m3 [4, 4], p: f32 [4, 8])
//   -> (xs: bf16 [4, 4], g: e4m3 [4, 8], s: f32 [4, 4])
// on 2 devices, every collective along the columns (what
// fp8-lower-collectives writes for an inner dimension): xs is this rank's
// column block of x (a sliced copy2d), g the column-wise gather of q (NCCL
// into [2, 4, 4], then one copy2d per piece), s this rank's column block of
// the sum of the p's (one copy2d per piece into [2, 4, 4], then NCCL).
const char *const kInnerJson = R"json({
  "format": "fp8-mlir-module", "version": 1, "chip": "sm_90a",
  "kernels": [],
  "functions": [{
    "name": "inner",
    "symbols": [],
    "arguments": [
      {"name": "x", "dtype": "bf16", "shape": [4, 8], "alignment": 2},
      {"name": "q", "dtype": "e4m3", "shape": [4, 4], "alignment": 1},
      {"name": "p", "dtype": "f32", "shape": [4, 8], "alignment": 4}],
    "results": [
      {"name": "xs", "dtype": "bf16", "shape": [4, 4], "alignment": 2},
      {"name": "g", "dtype": "e4m3", "shape": [4, 8], "alignment": 1},
      {"name": "s", "dtype": "f32", "shape": [4, 4], "alignment": 4}],
    "buffers": [
      {"name": "gathered", "dtype": "e4m3", "shape": [2, 4, 4], "bytes": 32, "alignment": 256, "offset": 0},
      {"name": "pieces", "dtype": "f32", "shape": [2, 4, 4], "bytes": 128, "alignment": 256, "offset": 256}],
    "workspace_bytes": 512,
    "steps": [
      {"kind": "copy2d", "source": "x", "target": "xs", "rows": 4, "row_bytes": 8,
       "source_offset": 0, "source_pitch": 16, "target_offset": 0, "target_pitch": 8,
       "slice_group": {"grid": "tp", "axes": [0], "size": 2}},
      {"kind": "all_gather", "source": "q", "target": "gathered", "dtype": "e4m3", "count": 16,
       "group": {"grid": "tp", "axes": [0], "size": 2}},
      {"kind": "copy2d", "source": "gathered", "target": "g", "rows": 4, "row_bytes": 4,
       "source_offset": 0, "source_pitch": 4, "target_offset": 0, "target_pitch": 8},
      {"kind": "copy2d", "source": "gathered", "target": "g", "rows": 4, "row_bytes": 4,
       "source_offset": 16, "source_pitch": 4, "target_offset": 4, "target_pitch": 8},
      {"kind": "copy2d", "source": "p", "target": "pieces", "rows": 4, "row_bytes": 16,
       "source_offset": 0, "source_pitch": 32, "target_offset": 0, "target_pitch": 16},
      {"kind": "copy2d", "source": "p", "target": "pieces", "rows": 4, "row_bytes": 16,
       "source_offset": 16, "source_pitch": 32, "target_offset": 64, "target_pitch": 16},
      {"kind": "reduce_scatter", "reduction": "sum", "source": "pieces", "target": "s",
       "dtype": "f32", "count": 16, "group": {"grid": "tp", "axes": [0], "size": 2}}
    ]
  }]
})json";

// One rank's tensors of `inner`: distinct values per rank and element.
struct InnerMemory {
  std::vector<uint16_t> x = std::vector<uint16_t>(32), xs = std::vector<uint16_t>(16);
  std::vector<uint8_t> q = std::vector<uint8_t>(16), g = std::vector<uint8_t>(32);
  std::vector<float> p = std::vector<float>(32), s = std::vector<float>(16);
  alignas(256) unsigned char workspace[512] = {};

  explicit InnerMemory(int rank) {
    for (int i = 0; i < 32; ++i) {
      x[i] = static_cast<uint16_t>(0x3F00 + i); // the same on every rank
      p[i] = static_cast<float>(i + 100 * rank);
    }
    for (int i = 0; i < 16; ++i)
      q[i] = static_cast<uint8_t>(16 * rank + i);
  }

  fp8rt_status call(fp8rt_function *fn, CUstream stream) {
    auto at = [](const void *data) { return reinterpret_cast<uintptr_t>(data); };
    fp8rt_tensor args[] = {makeTensor(nullptr, at(x.data()), FP8RT_BF16, {4, 8}),
                           makeTensor(nullptr, at(q.data()), FP8RT_E4M3, {4, 4}),
                           makeTensor(nullptr, at(p.data()), FP8RT_F32, {4, 8})};
    fp8rt_tensor results[] = {
        makeTensor(nullptr, at(xs.data()), FP8RT_BF16, {4, 4}),
        makeTensor(nullptr, at(g.data()), FP8RT_E4M3, {4, 8}),
        makeTensor(nullptr, at(s.data()), FP8RT_F32, {4, 4})};
    return fp8rt_function_call(fn, args, 3, results, 3, workspace,
                               sizeof(workspace), stream);
  }
};

TEST_F(CollectiveTest, InnerDimensionCollectivesMoveTheColumnBlocks) {
  fake.copyBytes = true;
  fp8rt_module *modules[2] = {load(kInnerJson), load(kInnerJson)};
  ASSERT_TRUE(modules[0] && modules[1]);
  fp8rt_function *fns[2] = {};
  for (int r = 0; r < 2; ++r)
    ASSERT_EQ(fp8rt_module_function(modules[r], "inner", &fns[r]),
              FP8RT_SUCCESS);
  // The sliced copy needs the backend's rank: it counts as a collective.
  EXPECT_EQ(fp8rt_function_num_collectives(fns[0]), 3);
  ThreadGroup group(2);
  Rank ranks[2] = {{&group, 0, reinterpret_cast<CUstream>(0x100), {}, 0},
                   {&group, 1, reinterpret_cast<CUstream>(0x101), {}, 0}};
  InnerMemory memory0(0), memory1(1);
  InnerMemory *memory[2] = {&memory0, &memory1};
  fp8rt_status status[2] = {};
  runRanks(modules, ranks, status,
           [&](int r) { return memory[r]->call(fns[r], ranks[r].stream); });
  for (int r = 0; r < 2; ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    ASSERT_EQ(status[r], FP8RT_SUCCESS) << fp8rt_last_error();
    const InnerMemory &m = *memory[r];
    for (int row = 0; row < 4; ++row)
      for (int col = 0; col < 4; ++col) {
        // xs: columns [4r, 4r + 4) of x.
        EXPECT_EQ(m.xs[row * 4 + col], m.x[row * 8 + 4 * r + col]);
        // s: columns [4r, 4r + 4) of p summed over the ranks.
        EXPECT_EQ(m.s[row * 4 + col], memory0.p[row * 8 + 4 * r + col] +
                                          memory1.p[row * 8 + 4 * r + col]);
      }
    // g: row i is rank 0's row i of q, then rank 1's.
    for (int row = 0; row < 4; ++row)
      for (int col = 0; col < 8; ++col)
        EXPECT_EQ(m.g[row * 8 + col],
                  memory[col / 4]->q[row * 4 + col % 4]);
    // Each copy2d is one cuMemcpy2DAsync on the rank's stream: 5.
    int copies = 0;
    for (const Copy2DCall &c : fake.copies2D)
      copies += c.stream == ranks[r].stream;
    EXPECT_EQ(copies, 5);
    const std::vector<Event> &events = ranks[r].events;
    ASSERT_EQ(events.size(), 2u);
    EXPECT_EQ(events[0].kind, "all_gather");
    EXPECT_EQ(events[0].recv, m.workspace);
    EXPECT_EQ(events[0].count, 16u);
    EXPECT_EQ(events[1].kind, "reduce_scatter");
    EXPECT_EQ(events[1].send, m.workspace + 256);
    EXPECT_EQ(events[1].count, 16u);
  }
  for (fp8rt_module *m : modules)
    fp8rt_module_destroy(m);
}

TEST_F(CollectiveTest, StridedCopiesThatDoNotFitAreErrors) {
  // Loading checks the names; a call checks the bytes against the tensors.
  expectRejected(replaced(kInnerJson, "\"source\": \"x\", \"target\": \"xs\"",
                          "\"source\": \"xs\", \"target\": \"xs\""),
                 "the copy reads and writes 'xs'");
  expectRejected(replaced(kInnerJson, "\"rows\": 4, \"row_bytes\": 8",
                          "\"rows\": \"n\", \"row_bytes\": 8"),
                 "functions[0].steps[0].rows");
  // The last rank's slice would read past x: 4 rows of 12 bytes at
  // 12 * rank, pitch 16.
  fp8rt_module *m = load(replaced(kInnerJson, "\"row_bytes\": 8,", "\"row_bytes\": 12,"));
  ASSERT_TRUE(m);
  fp8rt_function *fn = nullptr;
  ASSERT_EQ(fp8rt_module_function(m, "inner", &fn), FP8RT_SUCCESS);
  ThreadGroup group(1);
  Rank rank{&group, 0, nullptr, {}, 0};
  fp8rt_collectives table = rank.table();
  ASSERT_EQ(fp8rt_module_set_collectives(m, &table), FP8RT_SUCCESS);
  InnerMemory memory(0);
  EXPECT_EQ(memory.call(fn, nullptr), FP8RT_ERROR_INVALID_METADATA);
  expectMessage("inner step 0 (copy2d of argument 'x' into result 'xs'): 4 "
                "rows of 12 bytes (source offset 0 + rank * row_bytes, pitch "
                "16; target offset 0, pitch 8) do not fit argument 'x' (64 "
                "bytes) and result 'xs' (32 bytes)");
  EXPECT_TRUE(fake.copies2D.empty());
  fp8rt_module_destroy(m);
  // Without a backend, the slice's rank is unknown: nothing runs.
  m = load(kInnerJson);
  ASSERT_TRUE(m);
  ASSERT_EQ(fp8rt_module_function(m, "inner", &fn), FP8RT_SUCCESS);
  EXPECT_EQ(memory.call(fn, nullptr), FP8RT_ERROR_COLLECTIVE);
  expectMessage("function inner has collective steps (copy2d on grid \"tp\" "
                "axes [0] (2 devices), ...) and the module has no collective "
                "backend");
  EXPECT_TRUE(fake.copies2D.empty());
  fp8rt_module_destroy(m);
}

// partial(p: f32 [4, 8]) -> (y: bf16 [2, 8]) on grid "tp" of 2 devices:
// the f32 partial sums of a parallel layer reduce-scattered in f32, then
// rounded once to bf16 by a conversion kernel (fp8-shard-linear's
// f32-partials, compiled).
const char *const kConvertJson = R"json({
  "format": "fp8-mlir-kernel", "version": 1,
  "name": "convert", "entry": "convert", "chip": "sm_90a", "kind": "convert",
  "ptx": "convert.ptx", "block": [256, 1, 1], "dynamic_shared_memory_bytes": 0,
  "grid": {"kind": "tiles", "tile_m": 128, "tile_n": 128, "operand": "y"},
  "operands": [
    {"name": "x", "dtype": "f32", "shape": ["R", 8], "role": "input", "alignment": 16},
    {"name": "y", "dtype": "bf16", "shape": ["R", 8], "role": "output", "alignment": 16}
  ],
  "params": [
    {"name": "x", "kind": "pointer", "operand": "x"},
    {"name": "y", "kind": "pointer", "operand": "y"},
    {"name": "r", "kind": "i32", "value": "R"}
  ],
  "convert": {"rows": "R", "cols": 8, "input_dtype": "f32", "out_dtype": "bf16",
              "rounding": "to nearest even, subnormals kept"}
})json";

const char *const kPartialJson = R"json({
  "format": "fp8-mlir-module", "version": 1, "chip": "sm_90a",
  "kernels": ["convert"],
  "functions": [{
    "name": "partial",
    "symbols": [],
    "arguments": [{"name": "p", "dtype": "f32", "shape": [4, 8], "alignment": 16}],
    "results": [{"name": "y", "dtype": "bf16", "shape": [2, 8], "alignment": 16}],
    "buffers": [
      {"name": "s", "dtype": "f32", "shape": [2, 8], "bytes": 64, "alignment": 256, "offset": 0}
    ],
    "workspace_bytes": 256,
    "steps": [
      {"kind": "reduce_scatter", "reduction": "sum", "source": "p", "target": "s",
       "dtype": "f32", "count": 16, "group": {"grid": "tp", "axes": [0], "size": 2}},
      {"kind": "launch", "kernel": "convert", "operands": {"x": "s", "y": "y"},
       "symbols": {"R": 2}}
    ]
  }]
})json";

TEST_F(CollectiveTest, F32PartialSumsAreReducedThenConverted) {
  dir.write("convert.json", kConvertJson);
  dir.write("convert.ptx", ptxWithParams("convert", {".u64", ".u64", ".u32"}));
  fp8rt_module *modules[2] = {load(kPartialJson), load(kPartialJson)};
  ASSERT_TRUE(modules[0] && modules[1]);
  fake.paramSizesByKernel["convert"] = {8, 8, 4};
  fp8rt_function *fns[2] = {};
  for (int r = 0; r < 2; ++r)
    ASSERT_EQ(fp8rt_module_function(modules[r], "partial", &fns[r]),
              FP8RT_SUCCESS);
  EXPECT_EQ(fp8rt_function_num_collectives(fns[0]), 1);
  ThreadGroup group(2);
  Rank ranks[2] = {{&group, 0, reinterpret_cast<CUstream>(0x100), {}, 0},
                   {&group, 1, reinterpret_cast<CUstream>(0x101), {}, 0}};
  struct Memory {
    std::vector<float> p = std::vector<float>(32);
    std::vector<uint16_t> y = std::vector<uint16_t>(16);
    alignas(256) unsigned char workspace[256] = {};
  } memory[2];
  for (int r = 0; r < 2; ++r)
    for (int i = 0; i < 32; ++i)
      memory[r].p[i] = 0.25f * static_cast<float>(i) + static_cast<float>(r);
  fp8rt_status status[2] = {};
  runRanks(modules, ranks, status, [&](int r) {
    auto at = [](const void *data) { return reinterpret_cast<uintptr_t>(data); };
    fp8rt_tensor args[] = {
        makeTensor(nullptr, at(memory[r].p.data()), FP8RT_F32, {4, 8})};
    fp8rt_tensor results[] = {
        makeTensor(nullptr, at(memory[r].y.data()), FP8RT_BF16, {2, 8})};
    return fp8rt_function_call(fns[r], args, 1, results, 1, memory[r].workspace,
                               sizeof(memory[r].workspace), ranks[r].stream);
  });
  for (int r = 0; r < 2; ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    ASSERT_EQ(status[r], FP8RT_SUCCESS) << fp8rt_last_error();
    // The reduce-scatter in f32 first, nothing launched before it.
    const std::vector<Event> &events = ranks[r].events;
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].kind, "reduce_scatter");
    EXPECT_EQ(events[0].launchesBefore, 0u);
    EXPECT_EQ(events[0].send, memory[r].p.data());
    EXPECT_EQ(events[0].recv, memory[r].workspace);
    EXPECT_EQ(events[0].count, 16u);
    EXPECT_EQ(events[0].dtype, FP8RT_F32);
    // This rank's rows summed over the ranks, in f32.
    const float *s = reinterpret_cast<const float *>(memory[r].workspace);
    for (int i = 0; i < 16; ++i)
      EXPECT_EQ(s[i], memory[0].p[16 * r + i] + memory[1].p[16 * r + i]);
    // Then the conversion kernel: x the reduced buffer, y the result.
    std::vector<const LaunchCall *> launches;
    for (const LaunchCall &launch : fake.launches)
      if (launch.stream == ranks[r].stream)
        launches.push_back(&launch);
    ASSERT_EQ(launches.size(), 1u);
    EXPECT_EQ(pointerParam(*launches[0], 0),
              reinterpret_cast<uintptr_t>(memory[r].workspace));
    EXPECT_EQ(pointerParam(*launches[0], 1),
              reinterpret_cast<uintptr_t>(memory[r].y.data()));
  }
  for (fp8rt_module *m : modules)
    fp8rt_module_destroy(m);
}

} // namespace
} // namespace fp8rt::testing
