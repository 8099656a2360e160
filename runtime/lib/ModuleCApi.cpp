// The C entry points of modules (fp8rt_module_*, fp8rt_function_*) and the
// loading of a module directory.
#include "fp8rt/fp8rt.h"

#include "CApiSupport.h"
#include "Collectives.h"
#include "Module.h"

namespace fp8rt {
namespace {

// The module's kernels, each loaded once, on first use, by the loader.
class DirectoryKernels : public KernelProvider {
public:
  DirectoryKernels(fp8rt_module &module, KernelLoader loader)
      : module_(module), loader_(loader) {}

  Status kernel(const std::string &name, fp8rt_kernel *&out) override {
    std::unique_ptr<fp8rt_kernel> &slot = module_.kernels[name];
    if (!slot)
      FP8RT_RETURN_IF_ERROR(
          loader_(module_.directory + "/" + name + ".json", slot));
    out = slot.get();
    return Status();
  }

private:
  fp8rt_module &module_;
  KernelLoader loader_;
};

std::vector<std::string> shapeTexts(const FunctionTensor &t) {
  std::vector<std::string> out;
  for (const Expr &e : t.shape)
    out.push_back(e.str());
  return out;
}

std::unique_ptr<fp8rt_function> makeFunction(fp8rt_module &module,
                                             const FunctionModel &model) {
  auto fn = std::make_unique<fp8rt_function>();
  fn->module = &module;
  fn->model = &model;
  for (const FunctionTensor &arg : model.arguments) {
    fn->argumentShapes.push_back(shapeTexts(arg));
    std::vector<int> symbols;
    for (const Expr &e : arg.shape)
      symbols.push_back(e.isSymbol() ? model.findSymbol(e.name()) : -1);
    fn->argumentSymbols.push_back(std::move(symbols));
  }
  for (const FunctionTensor &result : model.results)
    fn->resultShapes.push_back(shapeTexts(result));
  for (const FunctionStep &step : model.steps) {
    bool collective = isCollective(step.kind);
    fn->numCollectives += needsCollectiveBackend(step);
    fn->hasMemorySteps =
        fn->hasMemorySteps || (step.kind != fp8schema::StepKind::Launch &&
                               (!collective ||
                                step.kind == fp8schema::StepKind::AllSlice));
  }
  return fn;
}

Status loadDirectory(const char *directory, fp8rt_module **out) {
  if (!out)
    return invalidArgument("out is NULL");
  *out = nullptr;
  if (!directory)
    return invalidArgument("directory is NULL");
  std::string dir = directory;
  while (dir.size() > 1 && dir.back() == '/')
    dir.pop_back();
  std::string json;
  FP8RT_RETURN_IF_ERROR(readFile(dir + "/module.json", json));
  std::unique_ptr<fp8rt_module> module;
  FP8RT_RETURN_IF_ERROR(loadModule(dir, json, loadKernelFile, module));
  *out = module.release();
  return Status();
}

// Argument or result `index` of `function` as the C API describes it.
Status tensorInfo(const fp8rt_function *function, TensorKind kind, int index,
                  fp8rt_tensor_info *out) {
  if (!function || !out)
    return invalidArgument(function ? "out" : "function", " is NULL");
  bool argument = kind == TensorKind::Argument;
  const FunctionModel &model = *function->model;
  const std::vector<FunctionTensor> &tensors =
      argument ? model.arguments : model.results;
  int count = static_cast<int>(tensors.size());
  if (index < 0 || index >= count)
    return invalidArgument(tensorKindName(kind), " index ", index, " of ",
                           model.name, ", which has ", count);
  const FunctionTensor &t = tensors[index];
  const std::vector<std::string> &shape = argument
                                              ? function->argumentShapes[index]
                                              : function->resultShapes[index];
  *out = fp8rt_tensor_info();
  out->name = t.name.c_str();
  out->dtype = static_cast<fp8rt_dtype>(t.dtype);
  out->rank = static_cast<int>(t.shape.size());
  for (int d = 0; d < out->rank; ++d)
    out->shape[d] = shape[d].c_str();
  out->alignment = t.alignment;
  out->written = t.written ? 1 : 0;
  out->alias_of = t.aliasOf;
  return Status();
}

// Runs `body` on a non-NULL `function`, its errors prefixed with the
// function's name.
template <typename Body>
fp8rt_status withFunction(const char *api, fp8rt_function *function,
                          Body &&body) {
  return guarded(api, [&] {
    if (!function)
      return invalidArgument("function is NULL");
    Status status = body();
    if (!status.ok())
      status.prepend(strCat(function->model->name, ": "));
    return status;
  });
}

} // namespace

Status loadModule(const std::string &directory, const std::string &jsonText,
                  KernelLoader loadKernel, std::unique_ptr<fp8rt_module> &out) {
  auto module = std::make_unique<fp8rt_module>();
  module->directory = directory;
  module->source = directory + "/module.json";
  DirectoryKernels kernels(*module, loadKernel);
  FP8RT_RETURN_IF_ERROR(
      parseModuleProgram(jsonText, module->source, kernels, module->model));
  for (const FunctionModel &model : module->model.functions)
    module->functions.push_back(makeFunction(*module, model));
  out = std::move(module);
  return Status();
}

} // namespace fp8rt

extern "C" {

FP8RT_API fp8rt_status fp8rt_module_load(const char *directory,
                                         fp8rt_module **out) {
  return fp8rt::guarded("fp8rt_module_load",
                        [&] { return fp8rt::loadDirectory(directory, out); });
}

FP8RT_API void fp8rt_module_destroy(fp8rt_module *module) {
  try {
    delete module;
  } catch (...) {
    // Nothing may reach C.
  }
}

FP8RT_API const char *fp8rt_module_chip(const fp8rt_module *module) {
  return module ? module->model.chip.c_str() : "";
}

FP8RT_API int fp8rt_module_num_functions(const fp8rt_module *module) {
  return module ? static_cast<int>(module->functions.size()) : 0;
}

FP8RT_API const char *fp8rt_module_function_name(const fp8rt_module *module,
                                                 int index) {
  if (!module || index < 0 ||
      index >= static_cast<int>(module->functions.size()))
    return nullptr;
  return module->model.functions[index].name.c_str();
}

FP8RT_API fp8rt_status fp8rt_module_function(fp8rt_module *module,
                                             const char *name,
                                             fp8rt_function **out) {
  return fp8rt::guarded("fp8rt_module_function", [&] {
    if (!out)
      return fp8rt::invalidArgument("out is NULL");
    *out = nullptr;
    if (!module || !name)
      return fp8rt::invalidArgument(module ? "name" : "module", " is NULL");
    int index = module->model.findFunction(name);
    if (index < 0) {
      std::string names;
      for (const fp8rt::FunctionModel &fn : module->model.functions)
        names += (names.empty() ? "" : ", ") + fn.name;
      return fp8rt::invalidArgument(
          "module \"", module->directory, "\" has no function \"", name,
          "\" (its functions: ", names.empty() ? "none" : names, ")");
    }
    *out = module->functions[index].get();
    return fp8rt::Status();
  });
}

FP8RT_API const char *fp8rt_function_name(const fp8rt_function *function) {
  return function ? function->model->name.c_str() : "";
}

FP8RT_API int fp8rt_function_num_arguments(const fp8rt_function *function) {
  return function ? static_cast<int>(function->model->arguments.size()) : 0;
}

FP8RT_API int fp8rt_function_num_results(const fp8rt_function *function) {
  return function ? static_cast<int>(function->model->results.size()) : 0;
}

FP8RT_API fp8rt_status fp8rt_function_argument(const fp8rt_function *function,
                                               int index,
                                               fp8rt_tensor_info *out) {
  return fp8rt::guarded("fp8rt_function_argument", [&] {
    return fp8rt::tensorInfo(function, fp8rt::TensorKind::Argument, index, out);
  });
}

FP8RT_API fp8rt_status fp8rt_function_result(const fp8rt_function *function,
                                             int index,
                                             fp8rt_tensor_info *out) {
  return fp8rt::guarded("fp8rt_function_result", [&] {
    return fp8rt::tensorInfo(function, fp8rt::TensorKind::Result, index, out);
  });
}

FP8RT_API int fp8rt_function_num_symbols(const fp8rt_function *function) {
  return function ? static_cast<int>(function->model->symbols.size()) : 0;
}

FP8RT_API const char *fp8rt_function_symbol_name(const fp8rt_function *function,
                                                 int index) {
  if (!function || index < 0 ||
      index >= static_cast<int>(function->model->symbols.size()))
    return nullptr;
  return function->model->symbols[index].name.c_str();
}

FP8RT_API fp8rt_status fp8rt_function_workspace_bytes(fp8rt_function *function,
                                                      const char *const *names,
                                                      const int64_t *values,
                                                      int num_symbols,
                                                      size_t *out) {
  return fp8rt::withFunction("fp8rt_function_workspace_bytes", function, [&] {
    if (!out)
      return fp8rt::invalidArgument("out is NULL");
    return fp8rt::functionWorkspaceBytes(*function, names, values, num_symbols,
                                         *out);
  });
}

FP8RT_API fp8rt_status fp8rt_function_workspace_bytes_for(
    fp8rt_function *function, const fp8rt_tensor *arguments, int num_arguments,
    size_t *out) {
  return fp8rt::withFunction("fp8rt_function_workspace_bytes_for", function,
                             [&] {
                               if (!out)
                                 return fp8rt::invalidArgument("out is NULL");
                               return fp8rt::functionWorkspaceBytesFor(
                                   *function, arguments, num_arguments, *out);
                             });
}

FP8RT_API fp8rt_status fp8rt_function_call(
    fp8rt_function *function, const fp8rt_tensor *arguments, int num_arguments,
    const fp8rt_tensor *results, int num_results, void *workspace,
    size_t workspace_bytes, void *cu_stream) {
  return fp8rt::withFunction("fp8rt_function_call", function, [&] {
    return fp8rt::callFunction(*function, arguments, num_arguments, results,
                               num_results, workspace, workspace_bytes,
                               static_cast<CUstream>(cu_stream));
  });
}

FP8RT_API fp8rt_status fp8rt_module_set_collectives(
    fp8rt_module *module, const fp8rt_collectives *collectives) {
  return fp8rt::guarded("fp8rt_module_set_collectives", [&] {
    if (!module)
      return fp8rt::invalidArgument("module is NULL");
    module->hasCollectives = collectives != nullptr;
    module->collectives = collectives ? *collectives : fp8rt_collectives{};
    return fp8rt::Status();
  });
}

FP8RT_API fp8rt_status fp8rt_nccl_collectives(void *nccl_comm,
                                              fp8rt_collectives *out) {
  return fp8rt::guarded("fp8rt_nccl_collectives", [&] {
    if (!out)
      return fp8rt::invalidArgument("out is NULL");
    return fp8rt::makeNcclCollectives(nccl_comm, *out);
  });
}

FP8RT_API int fp8rt_function_num_collectives(const fp8rt_function *function) {
  return function ? function->numCollectives : 0;
}

} // extern "C"
