// The objects behind the C API's fp8rt_module and fp8rt_function handles,
// and a function call (FunctionCall.cpp): the caller's tensors checked
// against the function, the buffers placed in the caller's workspace, the
// steps run on the caller's stream.
#ifndef FP8RT_LIB_MODULE_H
#define FP8RT_LIB_MODULE_H

#include "Kernel.h"
#include "ModuleProgram.h"
#include "Status.h"

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace fp8rt {

// What a call needs that follows from the symbols' values alone: the
// evaluated shapes, sizes and offsets, and each launch's operands with
// their shapes (the addresses are filled in per call). Immutable once made.
struct CallPlan {
  std::vector<int64_t> symbols; // the values, in the function's order
  std::vector<std::vector<int64_t>> resultShapes;
  std::vector<int64_t> resultBytes;
  std::vector<int64_t> bufferOffsets, bufferBytes;
  int64_t workspaceBytes = 0;
  struct Step {
    std::vector<fp8rt_tensor> operands; // per kernel operand, data NULL
    size_t bytes = 0;                   // fill and copy steps
    size_t count = 0;                   // collectives: elements per device
    Copy2DPlan copy2d;                  // copy2d steps
    // all_gather: how many steps from this one run as one backend group
    // (the model's run of gathers cut at the first dependent one); 1 for
    // every other step.
    int batch = 1;
  };
  std::vector<Step> steps;
};

// The gathers of a batch run together (one backend group), so none may
// read or write what another one of it writes: sets each step's `batch`
// in `plan` to the model's run of gathers cut at the first gather that
// touches an earlier one's tensors (one tensor's memory, or workspace
// buffers sharing bytes at the plan's offsets: the compiler may give
// buffers of consecutive steps the same bytes).
void cutGatherBatches(const FunctionModel &fn, CallPlan &plan);

// How many symbol configurations a function keeps planned.
constexpr size_t kCallPlans = 8;

} // namespace fp8rt

struct fp8rt_module {
  std::string directory;
  std::string source; // DIR/module.json, for messages
  fp8rt::ModuleModel model;
  std::map<std::string, std::unique_ptr<fp8rt_kernel>> kernels;
  std::vector<std::unique_ptr<fp8rt_function>> functions; // model order
  // The caller's collective backend (fp8rt_module_set_collectives).
  fp8rt_collectives collectives{};
  bool hasCollectives = false;
};

struct fp8rt_function {
  fp8rt_module *module = nullptr;
  const fp8rt::FunctionModel *model = nullptr;
  // The extents as text, per argument and per result (for introspection).
  std::vector<std::vector<std::string>> argumentShapes, resultShapes;
  // Per argument and dim: the index of the symbol there, or -1 (an
  // integer extent).
  std::vector<std::vector<int>> argumentSymbols;
  bool hasMemorySteps = false; // fills, copies or slices (driver calls)
  int numCollectives = 0;      // collective steps

  std::mutex mutex; // guards `plans`
  // Planned symbol configurations, most recently used first.
  std::vector<std::shared_ptr<const fp8rt::CallPlan>> plans;
};

namespace fp8rt {

// Loads DIR/module.json and the kernels its functions launch
// (DIR/NAME.json through `loadKernel`, which reads the files).
using KernelLoader = Status (*)(const std::string &jsonPath,
                                std::unique_ptr<fp8rt_kernel> &out);
Status loadModule(const std::string &directory, const std::string &jsonText,
                  KernelLoader loadKernel, std::unique_ptr<fp8rt_module> &out);

// The workspace a call needs for the symbols `names[i]` = `values[i]`
// (every symbol of the function, in any order).
Status functionWorkspaceBytes(fp8rt_function &fn, const char *const *names,
                              const int64_t *values, int count, size_t &out);

// The workspace a call with these arguments needs (the symbols bound from
// their shapes; the arguments are checked as a call checks them, except
// their addresses).
Status functionWorkspaceBytesFor(fp8rt_function &fn,
                                 const fp8rt_tensor *arguments,
                                 int numArguments, size_t &out);

// fp8rt_function_call.
Status callFunction(fp8rt_function &fn, const fp8rt_tensor *arguments,
                    int numArguments, const fp8rt_tensor *results,
                    int numResults, void *workspace, size_t workspaceBytes,
                    CUstream stream);

} // namespace fp8rt

#endif // FP8RT_LIB_MODULE_H
