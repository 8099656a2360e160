// Modules against the fake driver: loading module.json and its kernels,
// introspection, workspace sizes, a call's launch sequence (kernel order,
// every pointer bound to the right tensor or workspace offset), every error
// of a call in the user's terms, and the program checks at load.
#include "ModuleFixture.h"

#include <string>
#include <vector>

namespace fp8rt::testing {
namespace {

// Fake device addresses.
constexpr uintptr_t kX = 0x10000000, kW = 0x20000000, kWScale = 0x30000000,
                    kHistory = 0x30000100, kY = 0x40000000,
                    kWorkspace = 0x50000000;
constexpr int64_t kRows = 256;
// The workspace of `step` at x_0 = kRows: q (kRows * 2048 bytes) at 256,
// q_scale after it.
constexpr int64_t kQOffset = 256, kQScaleOffset = kRows * 2048 + 256,
                  kStepWorkspace = kRows * 2048 + 512;

class ModuleTest : public ModuleFixture {
protected:
  fp8rt_function *step = nullptr;

  void load() {
    ASSERT_EQ(fp8rt_module_load(dir.path().c_str(), &module), FP8RT_SUCCESS)
        << fp8rt_last_error();
    ASSERT_EQ(fp8rt_module_function(module, "step", &step), FP8RT_SUCCESS)
        << fp8rt_last_error();
  }

  // module.json with `from` replaced by `to` fails to load with `message`.
  void expectLoadError(const std::string &from, const std::string &to,
                       const std::string &message) {
    dir.write("module.json", replaced(kModuleJson, from, to));
    fp8rt_module *bad = nullptr;
    EXPECT_EQ(fp8rt_module_load(dir.path().c_str(), &bad),
              FP8RT_ERROR_INVALID_METADATA);
    EXPECT_EQ(bad, nullptr);
    EXPECT_NE(std::string(fp8rt_last_error()).find(message), std::string::npos)
        << "got:      " << fp8rt_last_error() << "\nexpected: " << message;
    fp8rt_module_destroy(bad);
  }

  // module.json with `from` replaced by `to` loads, but a call fails with
  // a metadata error containing `message`, before any driver work.
  void expectCallError(const std::string &from, const std::string &to,
                       const std::string &message) {
    dir.write("module.json", replaced(kModuleJson, from, to));
    load();
    EXPECT_EQ(call(arguments(), results()), FP8RT_ERROR_INVALID_METADATA);
    EXPECT_NE(std::string(fp8rt_last_error()).find(message), std::string::npos)
        << "got:      " << fp8rt_last_error() << "\nexpected: " << message;
    EXPECT_TRUE(fake.calls.empty());
  }

  static std::vector<fp8rt_tensor> arguments(int64_t rows = kRows) {
    return {makeTensor(nullptr, kX, FP8RT_BF16, {rows, 2048}),
            makeTensor(nullptr, kW, FP8RT_E4M3, {7168, 2048}),
            makeTensor(nullptr, kWScale, FP8RT_F32, {}),
            makeTensor(nullptr, kHistory, FP8RT_F32, {4})};
  }
  static std::vector<fp8rt_tensor> results(int64_t rows = kRows) {
    return {makeTensor(nullptr, kY, FP8RT_BF16, {rows, 7168}),
            makeTensor(nullptr, 0, FP8RT_F32, {4})};
  }

  fp8rt_status call(const std::vector<fp8rt_tensor> &args,
                    const std::vector<fp8rt_tensor> &res,
                    uintptr_t workspace = kWorkspace,
                    size_t bytes = kStepWorkspace) {
    return fp8rt_function_call(step, args.data(), int(args.size()), res.data(),
                               int(res.size()),
                               reinterpret_cast<void *>(workspace), bytes,
                               reinterpret_cast<void *>(uintptr_t(0x5700)));
  }

  // Calls "rows" on a bf16 [64, 2048] and a bf16 [bRows, 2048] argument.
  fp8rt_status callRows(fp8rt_function *rows, int64_t bRows) {
    std::vector<fp8rt_tensor> args = {
        makeTensor(nullptr, kX, FP8RT_BF16, {64, 2048}),
        makeTensor(nullptr, kY, FP8RT_BF16, {bRows, 2048})};
    return fp8rt_function_call(rows, args.data(), 2, nullptr, 0,
                               reinterpret_cast<void *>(kWorkspace), 256,
                               nullptr);
  }

  // The call fails with an argument error containing `message`, before any
  // driver work.
  void expectRejected(fp8rt_status status, const std::string &message) {
    EXPECT_EQ(status, FP8RT_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(fp8rt_last_error()).find(message), std::string::npos)
        << "got:      " << fp8rt_last_error() << "\nexpected: " << message;
    EXPECT_TRUE(fake.launches.empty());
    EXPECT_TRUE(fake.memsets.empty());
  }
};

//===----------------------------------------------------------------------===//
// Loading and introspection
//===----------------------------------------------------------------------===//

TEST_F(ModuleTest, LoadsTheFunctionsAndTheirKernels) {
  load();
  EXPECT_STREQ(fp8rt_module_chip(module), "sm_90a");
  ASSERT_EQ(fp8rt_module_num_functions(module), 3);
  EXPECT_STREQ(fp8rt_module_function_name(module, 0), "step");
  EXPECT_STREQ(fp8rt_module_function_name(module, 1), "rows");
  EXPECT_STREQ(fp8rt_module_function_name(module, 2), "reset");
  EXPECT_EQ(fp8rt_module_function_name(module, 3), nullptr);
  EXPECT_EQ(module->kernels.size(), 3u);
  EXPECT_TRUE(fake.calls.empty()); // loading never touches the driver
}

TEST_F(ModuleTest, DescribesArgumentsResultsAndSymbols) {
  load();
  EXPECT_STREQ(fp8rt_function_name(step), "step");
  ASSERT_EQ(fp8rt_function_num_arguments(step), 4);
  ASSERT_EQ(fp8rt_function_num_results(step), 2);
  fp8rt_tensor_info info;
  ASSERT_EQ(fp8rt_function_argument(step, 0, &info), FP8RT_SUCCESS);
  EXPECT_STREQ(info.name, "x");
  EXPECT_EQ(info.dtype, FP8RT_BF16);
  ASSERT_EQ(info.rank, 2);
  EXPECT_STREQ(info.shape[0], "x_0");
  EXPECT_STREQ(info.shape[1], "2048");
  EXPECT_EQ(info.alignment, 16);
  EXPECT_EQ(info.written, 0);
  ASSERT_EQ(fp8rt_function_argument(step, 3, &info), FP8RT_SUCCESS);
  EXPECT_STREQ(info.name, "history");
  EXPECT_EQ(info.written, 1);
  ASSERT_EQ(fp8rt_function_result(step, 0, &info), FP8RT_SUCCESS);
  EXPECT_STREQ(info.name, "y");
  EXPECT_STREQ(info.shape[0], "x_0");
  EXPECT_STREQ(info.shape[1], "7168");
  EXPECT_EQ(info.alias_of, -1);
  ASSERT_EQ(fp8rt_function_result(step, 1, &info), FP8RT_SUCCESS);
  EXPECT_EQ(info.alias_of, 3);
  EXPECT_EQ(fp8rt_function_result(step, 2, &info),
            FP8RT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(fp8rt_last_error()).find("result index 2 of step"),
            std::string::npos);
  ASSERT_EQ(fp8rt_function_num_symbols(step), 1);
  EXPECT_STREQ(fp8rt_function_symbol_name(step, 0), "x_0");
  EXPECT_EQ(fp8rt_function_symbol_name(step, 1), nullptr);
}

TEST_F(ModuleTest, AnUnknownFunctionListsTheModulesFunctions) {
  load();
  fp8rt_function *fn = nullptr;
  EXPECT_EQ(fp8rt_module_function(module, "stpe", &fn),
            FP8RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(fn, nullptr);
  EXPECT_NE(std::string(fp8rt_last_error())
                .find("has no function \"stpe\" (its functions: step, rows, "
                      "reset)"),
            std::string::npos)
      << fp8rt_last_error();
}

TEST_F(ModuleTest, AMissingDirectoryOrKernelIsAnIOError) {
  fp8rt_module *bad = nullptr;
  EXPECT_EQ(fp8rt_module_load("/nonexistent/fp8rt", &bad), FP8RT_ERROR_IO);
  EXPECT_NE(std::string(fp8rt_last_error())
                .find("cannot open \"/nonexistent/fp8rt/module.json\""),
            std::string::npos);
  std::filesystem::remove(dir.path() + "/cast.json");
  EXPECT_EQ(fp8rt_module_load(dir.path().c_str(), &bad), FP8RT_ERROR_IO);
  EXPECT_NE(std::string(fp8rt_last_error()).find("cast.json"),
            std::string::npos);
}

//===----------------------------------------------------------------------===//
// Workspace sizes
//===----------------------------------------------------------------------===//

TEST_F(ModuleTest, WorkspaceBytesFollowTheSymbols) {
  load();
  const char *names[] = {"x_0"};
  for (int64_t rows : {1, 100, 256, 1000}) {
    size_t bytes = 0;
    ASSERT_EQ(fp8rt_function_workspace_bytes(step, names, &rows, 1, &bytes),
              FP8RT_SUCCESS)
        << fp8rt_last_error();
    EXPECT_EQ(bytes, size_t((rows * 2048 + 255) / 256 * 256 + 512)) << rows;
    std::vector<fp8rt_tensor> args = arguments(rows);
    size_t fromArgs = 0;
    ASSERT_EQ(
        fp8rt_function_workspace_bytes_for(step, args.data(), 4, &fromArgs),
        FP8RT_SUCCESS)
        << fp8rt_last_error();
    EXPECT_EQ(fromArgs, bytes);
  }
}

TEST_F(ModuleTest, WorkspaceBytesNeedEverySymbolOnce) {
  load();
  size_t bytes = 0;
  const char *unknown[] = {"m"};
  int64_t value = 128;
  EXPECT_EQ(fp8rt_function_workspace_bytes(step, unknown, &value, 1, &bytes),
            FP8RT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(fp8rt_last_error())
                .find("'m' is not a symbol of step (its symbols: x_0)"),
            std::string::npos);
  EXPECT_EQ(fp8rt_function_workspace_bytes(step, nullptr, nullptr, 0, &bytes),
            FP8RT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(fp8rt_last_error())
                .find("symbol x_0 (dim 0 of argument 'x') has no value"),
            std::string::npos);
  const char *twice[] = {"x_0", "x_0"};
  int64_t values[] = {128, 128};
  EXPECT_EQ(fp8rt_function_workspace_bytes(step, twice, values, 2, &bytes),
            FP8RT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(fp8rt_last_error()).find("x_0 is given twice"),
            std::string::npos);
  const char *names[] = {"x_0"};
  int64_t zero = 0;
  EXPECT_EQ(fp8rt_function_workspace_bytes(step, names, &zero, 1, &bytes),
            FP8RT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(
      std::string(fp8rt_last_error()).find("x_0 is 0, expected at least 1"),
      std::string::npos);
}

//===----------------------------------------------------------------------===//
// A call
//===----------------------------------------------------------------------===//

TEST_F(ModuleTest, RunsTheStepsInOrderOnTheCallersStream) {
  load();
  ASSERT_EQ(call(arguments(), results()), FP8RT_SUCCESS) << fp8rt_last_error();
  // Fills and launches in program order (module loads and tensor-map
  // encodes in between are the kernels' first launch).
  std::vector<std::string> work;
  for (const std::string &c : fake.calls)
    if (c == "cuMemsetD8Async" || c == "cuLaunchKernel")
      work.push_back(c);
  EXPECT_EQ(work, (std::vector<std::string>{"cuMemsetD8Async", "cuLaunchKernel",
                                            "cuLaunchKernel", "cuLaunchKernel",
                                            "cuMemsetD8Async"}));
  ASSERT_EQ(fake.functionNames,
            (std::vector<std::string>{"amax", "cast", kGemmName}));
  auto stream = reinterpret_cast<CUstream>(uintptr_t(0x5700));
  ASSERT_EQ(fake.memsets.size(), 2u);
  EXPECT_EQ(fake.memsets[0].destination, kWorkspace); // amax at offset 0
  EXPECT_EQ(fake.memsets[0].bytes, 4u);
  EXPECT_EQ(fake.memsets[0].value, 0);
  EXPECT_EQ(fake.memsets[0].stream, stream);
  EXPECT_EQ(fake.memsets[1].destination, kHistory); // the argument itself
  EXPECT_EQ(fake.memsets[1].bytes, 16u);
  ASSERT_EQ(fake.launches.size(), 3u);
  for (const LaunchCall &launch : fake.launches)
    EXPECT_EQ(launch.stream, stream);
}

TEST_F(ModuleTest, BindsEveryKernelOperandToItsTensor) {
  load();
  sizeParams();
  ASSERT_EQ(call(arguments(), results()), FP8RT_SUCCESS) << fp8rt_last_error();
  ASSERT_EQ(fake.launches.size(), 3u);
  const LaunchCall &amax = fake.launches[0], &cast = fake.launches[1],
                   &gemm = fake.launches[2];
  // amax(x, amax = workspace + 0, r = x_0)
  EXPECT_EQ(param(amax, 0), kX);
  EXPECT_EQ(param(amax, 1), kWorkspace);
  EXPECT_EQ(param(amax, 2), uint64_t(kRows));
  // cast(x, amax, q = workspace + 256, q_scale_inv = after q, r)
  EXPECT_EQ(param(cast, 0), kX);
  EXPECT_EQ(param(cast, 1), kWorkspace);
  EXPECT_EQ(param(cast, 2), kWorkspace + kQOffset);
  EXPECT_EQ(param(cast, 3), kWorkspace + kQScaleOffset);
  EXPECT_EQ(param(cast, 4), uint64_t(kRows));
  // gemm: A's tensor map over q [x_0, 2048], a_scale_inv = q_scale, no
  // bias, d = y, m = x_0.
  ASSERT_EQ(fake.encodes.size(), 1u);
  EXPECT_EQ(fake.encodes[0].address,
            reinterpret_cast<void *>(kWorkspace + kQOffset));
  EXPECT_EQ(fake.encodes[0].dims, (std::vector<cuuint64_t>{2048, kRows}));
  EXPECT_EQ(param(gemm, 0), kWorkspace + kQOffset); // the fake's encoding
  EXPECT_EQ(param(gemm, 1), kWorkspace + kQScaleOffset);
  EXPECT_EQ(param(gemm, 2), 0u);
  EXPECT_EQ(param(gemm, 3), kY);
  EXPECT_EQ(param(gemm, 4), uint64_t(kRows));
}

TEST_F(ModuleTest, CopiesAndFillsInOrder) {
  load();
  fp8rt_function *reset = nullptr;
  ASSERT_EQ(fp8rt_module_function(module, "reset", &reset), FP8RT_SUCCESS);
  fp8rt_tensor h = makeTensor(nullptr, kHistory, FP8RT_F32, {4});
  fp8rt_tensor old = makeTensor(nullptr, kY, FP8RT_F32, {4});
  auto stream = reinterpret_cast<CUstream>(uintptr_t(0x5700));
  ASSERT_EQ(fp8rt_function_call(reset, &h, 1, &old, 1, nullptr, 0, stream),
            FP8RT_SUCCESS)
      << fp8rt_last_error();
  EXPECT_EQ(fake.calls,
            (std::vector<std::string>{"cuCtxGetCurrent", "cuMemcpyDtoDAsync",
                                      "cuMemsetD8Async"}));
  ASSERT_EQ(fake.deviceCopies.size(), 1u);
  EXPECT_EQ(fake.deviceCopies[0].destination, kY);
  EXPECT_EQ(fake.deviceCopies[0].source, kHistory);
  EXPECT_EQ(fake.deviceCopies[0].bytes, 16u);
  EXPECT_EQ(fake.deviceCopies[0].stream, stream);
  ASSERT_EQ(fake.memsets.size(), 1u);
  EXPECT_EQ(fake.memsets[0].destination, kHistory);
}

TEST_F(ModuleTest, TakesTensorsByName) {
  load();
  sizeParams();
  std::vector<fp8rt_tensor> args = arguments(), res = results();
  const char *argNames[] = {"x", "w", "w_scale_inv", "history"};
  for (size_t i = 0; i < args.size(); ++i)
    args[i].name = argNames[i];
  std::reverse(args.begin(), args.end());
  res.resize(1); // history_out is history: left out
  res[0].name = "y";
  ASSERT_EQ(call(args, res), FP8RT_SUCCESS) << fp8rt_last_error();
  ASSERT_EQ(fake.launches.size(), 3u);
  EXPECT_EQ(param(fake.launches[0], 0), kX);
  EXPECT_EQ(param(fake.launches[2], 3), kY);
  // The aliasing result may also be the argument's own tensor.
  std::vector<fp8rt_tensor> positional = results();
  positional[1].data = reinterpret_cast<void *>(kHistory);
  EXPECT_EQ(call(arguments(), positional), FP8RT_SUCCESS) << fp8rt_last_error();
}

TEST_F(ModuleTest, RepeatedCallsReuseTheirPlans) {
  load();
  sizeParams();
  for (int i = 0; i < 3; ++i)
    ASSERT_EQ(call(arguments(), results()), FP8RT_SUCCESS)
        << fp8rt_last_error();
  EXPECT_EQ(step->plans.size(), 1u);
  EXPECT_EQ(fake.encodes.size(), 1u); // the same addresses: encoded once
  EXPECT_EQ(fake.launches.size(), 9u);
  for (const auto &entry : module->kernels)
    EXPECT_EQ(entry.second->orderedPlans.size(), 1u) << entry.first;
  // Another row count is another plan, and the first is kept.
  ASSERT_EQ(call(arguments(128), results(128), kWorkspace, 128 * 2048 + 512),
            FP8RT_SUCCESS)
      << fp8rt_last_error();
  EXPECT_EQ(step->plans.size(), 2u);
  EXPECT_EQ(step->plans.front()->symbols, std::vector<int64_t>{128});
  EXPECT_EQ(param(fake.launches.back(), 4), 128u);
}

TEST_F(ModuleTest, ArgumentsAreCheckedInTheUsersTerms) {
  load();
  std::vector<fp8rt_tensor> args = arguments();
  args.pop_back();
  expectRejected(call(args, results()),
                 "step: step has 4 arguments (x, w, w_scale_inv, history), "
                 "got 3");
  args = arguments();
  args[0].data = nullptr;
  expectRejected(call(args, results()), "argument 'x': data is NULL");
  args = arguments();
  args[0].dtype = FP8RT_F16;
  expectRejected(call(args, results()),
                 "argument 'x': dtype f16, expected bf16");
  args = arguments();
  args[1].rank = 1;
  expectRejected(call(args, results()),
                 "argument 'w': rank 1, expected 2 (shape [7168, 2048])");
  args = arguments();
  args[1].shape[0] = 4096;
  expectRejected(call(args, results()),
                 "argument 'w': dim 0 is 4096, expected 7168 (shape "
                 "[7168, 2048], got [4096, 2048])");
  args = arguments();
  args[0].shape[0] = 0;
  expectRejected(call(args, results()),
                 "argument 'x': dim 0 (x_0) is 0, expected at least 1");
  args = arguments();
  args[0].strides[0] = 1;
  args[0].strides[1] = kRows;
  expectRejected(call(args, results()),
                 "argument 'x': strides [1, 256] are not the dense row-major "
                 "strides [2048, 1] of shape [256, 2048]");
  args = arguments();
  args[0].data = reinterpret_cast<void *>(kX + 8);
  expectRejected(call(args, results()),
                 "argument 'x': address 0x10000008 is not 16-byte aligned");
}

TEST_F(ModuleTest, NamedArgumentsAreCheckedByName) {
  load();
  std::vector<fp8rt_tensor> args = arguments();
  const char *names[] = {"x", "w", "w_scale_inv", "hist"};
  for (size_t i = 0; i < args.size(); ++i)
    args[i].name = names[i];
  expectRejected(call(args, results()),
                 "'hist' is not an argument of step (its arguments: x, w, "
                 "w_scale_inv, history)");
  args[3].name = "x";
  expectRejected(call(args, results()), "argument 'x' is given twice");
  args.pop_back();
  expectRejected(call(args, results()), "argument 'history' is missing");
  args[1].name = nullptr;
  expectRejected(call(args, results()),
                 "name every argument or none (argument 1 has no name)");
}

TEST_F(ModuleTest, ASymbolHasOneValueAcrossArguments) {
  load();
  fp8rt_function *rows = nullptr;
  ASSERT_EQ(fp8rt_module_function(module, "rows", &rows), FP8RT_SUCCESS);
  expectRejected(callRows(rows, 32),
                 "rows: argument 'b': dim 0 is 32, but symbol n is 64 (dim 0 "
                 "of argument 'a')");
  EXPECT_EQ(callRows(rows, 64), FP8RT_SUCCESS) << fp8rt_last_error();
  EXPECT_EQ(fake.launches.size(), 2u);
}

TEST_F(ModuleTest, ResultsAreCheckedAgainstTheSymbols) {
  load();
  std::vector<fp8rt_tensor> res = results();
  res[0].shape[0] = 128;
  expectRejected(call(arguments(), res),
                 "result 'y': shape [128, 7168], expected [256, 7168] "
                 "([x_0, 7168])");
  res = results();
  res[0].dtype = FP8RT_F32;
  expectRejected(call(arguments(), res),
                 "result 'y': dtype f32, expected bf16");
  res = results();
  res[0].data = reinterpret_cast<void *>(kY + 1);
  expectRejected(call(arguments(), res),
                 "result 'y': address 0x40000001 is not 2-byte aligned");
  res = results();
  res[1].data = reinterpret_cast<void *>(kY);
  expectRejected(call(arguments(), res),
                 "result 'history_out' is argument 'history', updated in "
                 "place: pass that argument's tensor (its address, dtype and "
                 "shape) or nothing");
  res = results();
  res[0].name = "y";
  res[1].name = "history_out";
  res.erase(res.begin());
  expectRejected(call(arguments(), res), "result 'y' is missing");
}

TEST_F(ModuleTest, WhatTheCallWritesMustNotOverlap) {
  load();
  std::vector<fp8rt_tensor> res = results();
  res[0].data = reinterpret_cast<void *>(kX + 4096);
  expectRejected(call(arguments(), res),
                 "result 'y' overlaps argument 'x', which the call reads");
  res = results();
  res[0].data = reinterpret_cast<void *>(kWorkspace + 512);
  expectRejected(call(arguments(), res), "result 'y' overlaps the workspace");
  std::vector<fp8rt_tensor> args = arguments();
  args[3].data = reinterpret_cast<void *>(kWScale);
  expectRejected(call(args, results()),
                 "argument 'history' overlaps argument 'w_scale_inv'");
}

TEST_F(ModuleTest, TheWorkspaceMustHoldTheBuffers) {
  load();
  expectRejected(call(arguments(), results(), kWorkspace, kStepWorkspace - 1),
                 "workspace: 524799 bytes given, the call needs 524800 "
                 "(x_0 = 256)");
  expectRejected(call(arguments(), results(), 0, kStepWorkspace),
                 "workspace: 0 bytes given, the call needs 524800");
  expectRejected(call(arguments(), results(), kWorkspace + 128, kStepWorkspace),
                 "workspace: address 0x50000080 is not 256-byte aligned");
}

//===----------------------------------------------------------------------===//
// The program's checks at load
//===----------------------------------------------------------------------===//

TEST_F(ModuleTest, TheFormatAndVersionAreCheckedFirst) {
  expectLoadError("\"version\": 1, \"chip\"", "\"version\": 2, \"chip\"",
                  "module.json:2:43: version: unsupported version 2 (this "
                  "runtime reads version 1)");
  expectLoadError("\"fp8-mlir-module\"", "\"fp8-mlir-kernel\"",
                  "format: \"fp8-mlir-kernel\" is not \"fp8-mlir-module\"");
}

TEST_F(ModuleTest, StepsNameKnownKernelsAndTensors) {
  expectLoadError("\"kernel\": \"cast\"", "\"kernel\": \"cats\"",
                  "functions[0].steps[2].kernel: \"cats\" is not one of the "
                  "module's kernels");
  expectLoadError("\"q_scale_inv\": \"q_scale\"", "\"q_scale_inv\": \"qs\"",
                  "functions[0].steps[2].operands.q_scale_inv: \"qs\" is not "
                  "an argument, a result or a buffer of function step");
  expectLoadError("\"q_scale_inv\": \"q_scale\"", "\"scale\": \"q_scale\"",
                  "kernel \"cast\" has no operand \"scale\" (its operands: x, "
                  "amax, q, q_scale_inv)");
  expectLoadError(", \"q_scale_inv\": \"q_scale\"}", "}",
                  "kernel operand \"q_scale_inv\" of \"cast\" is not bound");
  expectLoadError("\"d\": \"y\"", "\"d\": \"history_out\"",
                  "result 'history_out' is argument 'history': steps name the "
                  "argument");
  expectLoadError("{\"name\": \"q_scale\"", "{\"name\": \"q\"",
                  "functions[0].buffers[2].name: \"q\" also names buffer 1");
}

TEST_F(ModuleTest, KernelOperandsMatchTheirTensors) {
  expectLoadError("\"name\": \"w\", \"dtype\": \"e4m3\"",
                  "\"name\": \"w\", \"dtype\": \"e5m2\"",
                  "operands.b: kernel operand \"b\" is e4m3, argument 'w' "
                  "e5m2");
  expectLoadError("\"shape\": [\"x_0\", 2048], \"alignment\": 16",
                  "\"shape\": [\"x_0\", 2048], \"alignment\": 8",
                  "operands.x: kernel operand \"x\" needs 16-byte alignment, "
                  "argument 'x' guarantees 8");
  expectLoadError(", \"written\": true", "",
                  "steps[4].target: the step writes argument 'history', "
                  "which is not marked \"written\"");
}

TEST_F(ModuleTest, KernelSymbolsGetValuesOfTheFunctionsSymbols) {
  expectLoadError("\"symbols\": {\"M\": \"x_0\"}", "\"symbols\": {}",
                  "steps[3].symbols: no value for symbol \"M\" of kernel");
  expectLoadError("\"symbols\": {\"M\": \"x_0\"}",
                  "\"symbols\": {\"M\": \"x_0\", \"N\": 7168}",
                  "\"N\" is not a symbol of kernel "
                  "\"gemm_tn_e4m3_bf16_n7168_k2048\" (its symbols: M)");
  expectLoadError("\"symbols\": {\"M\": \"x_0\"}",
                  "\"symbols\": {\"M\": \"y_0\"}",
                  "steps[3].symbols.M: \"y_0\" names \"y_0\", which is not a "
                  "symbol of the function (its symbols: x_0)");
}

TEST_F(ModuleTest, SymbolsAreBoundByArgumentExtents) {
  expectLoadError("{\"name\": \"x_0\", \"argument\": \"x\", \"dim\": 0}",
                  "{\"name\": \"x_0\", \"argument\": \"x\", \"dim\": 1}",
                  "symbols[0].dim: argument 'x' [x_0, 2048] does not have "
                  "symbol \"x_0\" at dim 1");
  expectLoadError("\"argument\": \"x\", \"dim\": 0",
                  "\"argument\": \"y\", \"dim\": 0",
                  "symbols[0].argument: \"y\" is not an argument");
  // An argument's other extents are expressions of the symbols.
  expectLoadError(
      "\"shape\": [\"x_0\", 2048], \"alignment\": 16",
      "\"shape\": [\"x_0\", \"roundup(z, 4)\"], \"alignment\": 16",
      "arguments[0].shape[1]: \"roundup(z, 4)\" names \"z\", which is not a "
      "symbol of the function");
}

TEST_F(ModuleTest, AnAliasIsAnArgumentOfTheSameType) {
  expectLoadError("\"alias_of\": \"history\"", "\"alias_of\": \"hist\"",
                  "results[1].alias_of: \"hist\" is not an argument");
  expectLoadError("\"shape\": [4], \"alignment\": 4, \"alias_of\"",
                  "\"shape\": [8], \"alignment\": 4, \"alias_of\"",
                  "result 'history_out' (f32 [8]) cannot be argument "
                  "'history' (f32 [4])");
}

TEST_F(ModuleTest, AKernelWithARuntimeOwnedWorkspaceIsRejected) {
  std::string gemm = replaced(
      kExampleJson, "{\"name\": \"m\", \"kind\": \"i32\", \"value\": \"M\"}",
      "{\"name\": \"m\", \"kind\": \"i32\", \"value\": \"M\"},\n"
      "    {\"name\": \"ws\", \"kind\": \"workspace\", \"bytes_per_cta\": 64}");
  dir.write(std::string(kGemmName) + ".json", gemm);
  dir.write(std::string(kGemmName) + ".ptx",
            ptxWithParams(kGemmName,
                          {"map", ".u64", ".u64", ".u64", ".u32", ".u64"}));
  expectLoadError("\"version\": 1", "\"version\": 1",
                  "kernel \"gemm_tn_e4m3_bf16_n7168_k2048\" has a workspace "
                  "the runtime owns (a stream-K GEMM), which a module function "
                  "cannot give it");
}

// A kernel's launch variants may be stream-K (a workspace the runtime
// owns): a call at a small M runs one like fp8rt_launch does, also while
// the stream is being captured into a CUDA graph, where the workspace is
// an allocation of the graph and nothing waits on the host.
TEST_F(ModuleTest, AStreamKLaunchVariantRunsUnderCapture) {
  dir.write(std::string(kGemmName) + ".json",
            replaced(kExampleJson, "\"version\": 1,",
                     "\"version\": 1, \"variants\": [\"sk.json\"],"));
  std::string sk = replaced(kExampleJson, "\"version\": 1,",
                            std::string("\"version\": 1, \"variant_of\": \"") +
                                kGemmName + "\",");
  sk = replaced(sk, std::string("\"entry\": \"") + kGemmName + "\"",
                "\"entry\": \"sk\"");
  sk = replaced(sk, std::string("\"ptx\": \"") + kGemmName + ".ptx\"",
                "\"ptx\": \"sk.ptx\"");
  sk = replaced(sk, "\"tile_m\": 128, \"tile_n\": 256",
                "\"tile_m\": 64, \"tile_n\": 64");
  sk = replaced(sk, "{\"name\": \"m\", \"kind\": \"i32\", \"value\": \"M\"}",
                "{\"name\": \"m\", \"kind\": \"i32\", \"value\": \"M\"},\n"
                "    {\"name\": \"ws\", \"kind\": \"workspace\", "
                "\"bytes_per_cta\": 1000}");
  dir.write("sk.json", sk);
  dir.write("sk.ptx", ptxWithParams("sk", {"map", ".u64", ".u64", ".u64",
                                           ".u32", ".u64"}));
  load();
  sizeParams();
  for (const ParamSpec &p :
       module->kernels[kGemmName]->variants.at(0)->meta.params)
    fake.paramSizesByKernel["sk"].push_back(p.size);

  fake.captureStatus = CU_STREAM_CAPTURE_STATUS_ACTIVE;
  ASSERT_EQ(call(arguments(16), results(16)), FP8RT_SUCCESS)
      << fp8rt_last_error();
  ASSERT_EQ(fake.launches.size(), 3u);
  const LaunchCall &gemm = fake.launches[2];
  EXPECT_EQ(fake.functionHandles[gemm.function], "sk");
  ASSERT_EQ(fake.asyncAllocations.size(), 1u);
  EXPECT_EQ(fake.asyncAllocations[0].bytes, 132000u);
  EXPECT_EQ(param(gemm, 5), fake.asyncAllocations[0].pointer);
  ASSERT_EQ(fake.asyncFrees.size(), 1u);
  EXPECT_EQ(fake.asyncFrees[0].pointer, fake.asyncAllocations[0].pointer);
  EXPECT_EQ(fake.count("cuEventSynchronize"), 0);
  EXPECT_TRUE(fake.deviceAllocations.empty());
}

// Checks that depend on the symbols' values run when a configuration is
// first planned: the program's fault, not the caller's.
TEST_F(ModuleTest, BuffersAreCheckedForTheSymbolValues) {
  expectCallError("\"bytes\": \"x_0*2048\"", "\"bytes\": 2048",
                  "step step 2 (kernel \"cast\"): operand 'q' [256, 2048] "
                  "e4m3 does not fit buffer 'q' (2048 bytes) (x_0 = 256)");
}

TEST_F(ModuleTest, LiveBuffersDoNotShareBytes) {
  expectCallError("\"offset\": \"roundup(x_0*2048, 256) + 256\"",
                  "\"offset\": 0",
                  "buffers 'amax' and 'q_scale' share workspace bytes while "
                  "both are live");
}

TEST_F(ModuleTest, AnArgumentExtentMayBeAnExpressionOfTheSymbols) {
  // As for scales passed in the padded layout of the kernels that read them:
  // checked against the symbols the other arguments bind.
  dir.write("module.json",
            replaced(kModuleJson,
                     R"x({"name": "b", "dtype": "bf16", "shape": ["n", 2048])x",
                     R"x({"name": "b", "dtype": "bf16", "shape": ["ceildiv(n, 1)", 2048])x"));
  load();
  fp8rt_function *rows = nullptr;
  ASSERT_EQ(fp8rt_module_function(module, "rows", &rows), FP8RT_SUCCESS);
  fp8rt_tensor_info info;
  ASSERT_EQ(fp8rt_function_argument(rows, 1, &info), FP8RT_SUCCESS);
  EXPECT_STREQ(info.shape[0], "ceildiv(n, 1)");
  expectRejected(callRows(rows, 32),
                 "rows: argument 'b': dim 0 is 32, expected 64");
  EXPECT_EQ(callRows(rows, 64), FP8RT_SUCCESS) << fp8rt_last_error();
}

} // namespace
} // namespace fp8rt::testing

