#include "ModuleProgram.h"
#include "Module.h"

#include "Json.h"
#include "Kernel.h"
#include "SchemaReader.h"

#include <map>
#include <set>

namespace fp8rt {

bool isCollective(fp8schema::StepKind kind) {
  return kind == fp8schema::StepKind::AllReduce ||
         kind == fp8schema::StepKind::AllGather ||
         kind == fp8schema::StepKind::ReduceScatter ||
         kind == fp8schema::StepKind::AllSlice;
}

bool needsCollectiveBackend(const FunctionStep &step) {
  return isCollective(step.kind) ||
         (step.kind == fp8schema::StepKind::Copy2d && step.sliced);
}

namespace {

// A tensor's memory: a result that is an argument updated in place is that
// argument.
TensorRef storageOf(TensorRef ref, const std::vector<FunctionTensor> &results) {
  if (ref.kind == TensorKind::Result && results[ref.index].aliasOf >= 0)
    return {TensorKind::Argument, results[ref.index].aliasOf};
  return ref;
}

bool sameTensor(TensorRef a, TensorRef b,
                const std::vector<FunctionTensor> &results) {
  a = storageOf(a, results);
  b = storageOf(b, results);
  return a.kind == b.kind && a.index == b.index;
}

bool sameGroup(const fp8schema::DeviceGroup &a,
               const fp8schema::DeviceGroup &b) {
  return a.grid == b.grid && a.axes == b.axes && a.size == b.size;
}

} // namespace

void markGatherBatches(std::vector<FunctionStep> &steps) {
  auto gather = [&](size_t i) {
    return steps[i].kind == fp8schema::StepKind::AllGather;
  };
  for (size_t first = 0; first < steps.size();) {
    size_t end = first + 1;
    if (gather(first))
      while (end < steps.size() && gather(end) &&
             sameGroup(steps[end].group, steps[first].group))
        ++end;
    if (end - first > 1)
      steps[first].batch = static_cast<int>(end - first);
    first = end;
  }
}

void cutGatherBatches(const FunctionModel &fn, CallPlan &plan) {
  // Whether a and b are one tensor's memory or workspace buffers sharing
  // bytes in this plan.
  auto touch = [&](TensorRef a, TensorRef b) {
    if (sameTensor(a, b, fn.results))
      return true;
    if (a.kind != TensorKind::Buffer || b.kind != TensorKind::Buffer)
      return false;
    int64_t ai = plan.bufferOffsets[a.index], bi = plan.bufferOffsets[b.index];
    return ai < bi + plan.bufferBytes[b.index] &&
           bi < ai + plan.bufferBytes[a.index];
  };
  for (size_t first = 0; first < fn.steps.size(); ++first) {
    size_t end = first + std::max(fn.steps[first].batch, 1);
    size_t keep = first + 1;
    for (; keep < end; ++keep) {
      // The next gather reads no target of the run, writes none of its
      // sources or targets.
      const FunctionStep &next = fn.steps[keep];
      bool independent = true;
      for (size_t k = first; k < keep && independent; ++k)
        independent = !touch(next.source, fn.steps[k].target) &&
                      !touch(next.target, fn.steps[k].target) &&
                      !touch(next.target, fn.steps[k].source);
      if (!independent)
        break;
    }
    plan.steps[first].batch = static_cast<int>(keep - first);
  }
}

const char *tensorKindName(TensorKind kind) {
  switch (kind) {
  case TensorKind::Argument:
    return "argument";
  case TensorKind::Result:
    return "result";
  case TensorKind::Buffer:
    return "buffer";
  case TensorKind::None:
    break;
  }
  return "tensor";
}

std::string FunctionTensor::describeShape() const {
  std::string out = "[";
  for (size_t d = 0; d < shape.size(); ++d)
    out += (d ? ", " : "") + shape[d].str();
  return out + "]";
}

const FunctionTensor &FunctionModel::tensor(TensorRef ref) const {
  switch (ref.kind) {
  case TensorKind::Argument:
    return arguments[ref.index];
  case TensorKind::Result:
    return results[ref.index];
  default:
    return buffers[ref.index];
  }
}

std::string FunctionModel::describe(TensorRef ref) const {
  return strCat(tensorKindName(ref.kind), " '", tensor(ref).name, "'");
}

int FunctionModel::findSymbol(std::string_view symbol) const {
  return findByName(symbols, symbol);
}

int ModuleModel::findFunction(std::string_view function) const {
  return findByName(functions, function);
}

namespace {
using json::Value;
using namespace schema;

#include "ModuleProgramParser.inc"

bool isPowerOfTwo(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

// The alignment kernel operand `k` needs of its address: its own, and 16
// bytes when a tensor map reads it (TMA's global address rule).
int64_t requiredAlignment(const KernelMetadata &meta, int k) {
  int64_t alignment = meta.operands[k].alignmentBytes;
  for (const TensorMapSpec &map : meta.tensorMaps)
    if (map.operand == k && alignment < 16)
      alignment = 16;
  return alignment;
}

// The plain symbols of the kernel's operand shapes, in order: what a launch
// binds (every other symbol of the metadata is one of them).
std::vector<std::string> kernelSymbols(const KernelMetadata &meta) {
  std::vector<std::string> out;
  for (const OperandSpec &op : meta.operands)
    for (const Expr &e : op.shape)
      if (e.isSymbol() &&
          std::find(out.begin(), out.end(), e.name()) == out.end())
        out.push_back(e.name());
  return out;
}

std::string joined(const std::vector<std::string> &names) {
  std::string out;
  for (const std::string &name : names)
    out += (out.empty() ? "" : ", ") + name;
  return out.empty() ? "none" : out;
}

// The checks across the fields of one function.
class FunctionResolver {
public:
  FunctionResolver(SchemaReader &reader, const fp8schema::ModuleProgram &file,
                   size_t index, KernelProvider &kernels, FunctionModel &out)
      : r_(reader), module_(file), file_(file.functions[index]),
        kernels_(kernels), fn_(out), path_(indexPath("functions", index)) {}

  Status resolve() {
    fn_.name = file_.name;
    FP8RT_RETURN_IF_ERROR(resolveTensors());
    FP8RT_RETURN_IF_ERROR(resolveSymbols());
    FP8RT_RETURN_IF_ERROR(resolveShapes());
    FP8RT_RETURN_IF_ERROR(
        checkSymbolsOf(file_.workspaceBytes, at("workspace_bytes")));
    fn_.workspaceBytes = file_.workspaceBytes;
    for (size_t i = 0; i < file_.steps.size(); ++i)
      FP8RT_RETURN_IF_ERROR(resolveStep(i));
    markGatherBatches(fn_.steps);
    return Status();
  }

private:
  SchemaReader &r_;
  const fp8schema::ModuleProgram &module_;
  const fp8schema::Function &file_;
  KernelProvider &kernels_;
  FunctionModel &fn_;
  std::string path_;
  std::map<std::string, TensorRef> names_;

  std::string at(std::string_view field) const {
    return fieldPath(path_, field);
  }

  // Names each tensor, once across arguments, results and buffers.
  Status addName(const std::string &name, TensorRef ref,
                 const std::string &path) {
    auto [it, added] = names_.emplace(name, ref);
    if (!added)
      return r_.errorAtPath(path, "\"", name, "\" also names ",
                            tensorKindName(it->second.kind), " ",
                            it->second.index,
                            " (tensor names are unique in a "
                            "function)");
    return Status();
  }

  template <typename T>
  Status addTensor(const T &file, TensorKind kind, int index,
                   const std::string &path, FunctionTensor &out) {
    out.name = file.name;
    out.dtype = file.dtype;
    out.shape = file.shape;
    out.alignment = file.alignment;
    if (!isPowerOfTwo(out.alignment))
      return r_.errorAtPath(fieldPath(path, "alignment"), out.alignment,
                            " is not a power of two");
    return addName(out.name, {kind, index}, fieldPath(path, "name"));
  }

  Status resolveTensors() {
    size_t n = file_.arguments.size();
    fn_.arguments.resize(n);
    for (size_t i = 0; i < n; ++i) {
      const fp8schema::Argument &a = file_.arguments[i];
      FP8RT_RETURN_IF_ERROR(addTensor(a, TensorKind::Argument, int(i),
                                      indexPath(at("arguments"), i),
                                      fn_.arguments[i]));
      fn_.arguments[i].written = a.writtenOrDefault();
    }
    fn_.results.resize(file_.results.size());
    for (size_t i = 0; i < file_.results.size(); ++i)
      FP8RT_RETURN_IF_ERROR(addTensor(file_.results[i], TensorKind::Result,
                                      int(i), indexPath(at("results"), i),
                                      fn_.results[i]));
    fn_.buffers.resize(file_.buffers.size());
    for (size_t i = 0; i < file_.buffers.size(); ++i) {
      const fp8schema::Buffer &b = file_.buffers[i];
      std::string path = indexPath(at("buffers"), i);
      FP8RT_RETURN_IF_ERROR(
          addTensor(b, TensorKind::Buffer, int(i), path, fn_.buffers[i]));
      fn_.buffers[i].bytes = b.bytes;
      fn_.buffers[i].offset = b.offset;
      if (b.alignment > kWorkspaceAlignment)
        return r_.errorAtPath(fieldPath(path, "alignment"), b.alignment,
                              " is more than the workspace's alignment, ",
                              kWorkspaceAlignment);
    }
    return Status();
  }

  Status resolveSymbols() {
    for (size_t i = 0; i < file_.symbols.size(); ++i) {
      const fp8schema::SymbolBinding &s = file_.symbols[i];
      std::string path = indexPath(at("symbols"), i);
      if (!fp8schema::isSymbolName(s.name))
        return r_.errorAtPath(fieldPath(path, "name"), "\"", s.name,
                              "\" is not a symbol name");
      if (fn_.findSymbol(s.name) >= 0)
        return r_.errorAtPath(fieldPath(path, "name"), "symbol \"", s.name,
                              "\" is bound twice");
      auto it = names_.find(s.argument);
      if (it == names_.end() || it->second.kind != TensorKind::Argument)
        return r_.errorAtPath(fieldPath(path, "argument"), "\"", s.argument,
                              "\" is not an argument");
      const FunctionTensor &arg = fn_.arguments[it->second.index];
      if (s.dim >= static_cast<int64_t>(arg.shape.size()) ||
          !arg.shape[s.dim].isSymbol() || arg.shape[s.dim].name() != s.name)
        return r_.errorAtPath(fieldPath(path, "dim"), "argument '", arg.name,
                              "' ", arg.describeShape(),
                              " does not have symbol \"", s.name, "\" at dim ",
                              s.dim);
      fn_.symbols.push_back({s.name, it->second.index, int(s.dim)});
    }
    return Status();
  }

  Status checkSymbolsOf(const Expr &e, const std::string &path) {
    for (const std::string &symbol : e.symbols())
      if (fn_.findSymbol(symbol) < 0)
        return r_.errorAtPath(path, "\"", e.str(), "\" names \"", symbol,
                              "\", which is not a symbol of the function "
                              "(its symbols: ",
                              joined(symbolNames()), ")");
    return Status();
  }

  std::vector<std::string> symbolNames() const {
    std::vector<std::string> out;
    for (const FunctionSymbol &s : fn_.symbols)
      out.push_back(s.name);
    return out;
  }

  Status resolveShapes() {
    for (size_t i = 0; i < fn_.arguments.size(); ++i) {
      const FunctionTensor &arg = fn_.arguments[i];
      std::string path = fieldPath(indexPath(at("arguments"), i), "shape");
      for (size_t d = 0; d < arg.shape.size(); ++d) {
        // Integers, symbols, or expressions of the symbols (a layout the
        // kernels read, checked once the symbols are bound).
        FP8RT_RETURN_IF_ERROR(checkSymbolsOf(arg.shape[d], indexPath(path, d)));
      }
    }
    for (size_t i = 0; i < fn_.results.size(); ++i)
      FP8RT_RETURN_IF_ERROR(resolveResult(i));
    for (size_t i = 0; i < fn_.buffers.size(); ++i) {
      const FunctionTensor &b = fn_.buffers[i];
      std::string path = indexPath(at("buffers"), i);
      for (size_t d = 0; d < b.shape.size(); ++d)
        FP8RT_RETURN_IF_ERROR(
            checkSymbolsOf(b.shape[d], indexPath(fieldPath(path, "shape"), d)));
      FP8RT_RETURN_IF_ERROR(checkSymbolsOf(b.bytes, fieldPath(path, "bytes")));
      FP8RT_RETURN_IF_ERROR(
          checkSymbolsOf(b.offset, fieldPath(path, "offset")));
    }
    return Status();
  }

  Status resolveResult(size_t i) {
    FunctionTensor &result = fn_.results[i];
    std::string path = indexPath(at("results"), i);
    for (size_t d = 0; d < result.shape.size(); ++d)
      FP8RT_RETURN_IF_ERROR(checkSymbolsOf(
          result.shape[d], indexPath(fieldPath(path, "shape"), d)));
    const std::optional<std::string> &alias = file_.results[i].aliasOf;
    if (!alias)
      return Status();
    auto it = names_.find(*alias);
    if (it == names_.end() || it->second.kind != TensorKind::Argument)
      return r_.errorAtPath(fieldPath(path, "alias_of"), "\"", *alias,
                            "\" is not an argument");
    const FunctionTensor &arg = fn_.arguments[it->second.index];
    if (arg.dtype != result.dtype || arg.shape != result.shape)
      return r_.errorAtPath(fieldPath(path, "alias_of"), "result '",
                            result.name, "' (", dtypeName(result.dtype), " ",
                            result.describeShape(), ") cannot be argument '",
                            arg.name, "' (", dtypeName(arg.dtype), " ",
                            arg.describeShape(), ")");
    result.aliasOf = it->second.index;
    return Status();
  }

  // The tensor a step names.
  Status lookup(const std::string &name, const std::string &path,
                TensorRef &out) {
    auto it = names_.find(name);
    if (it == names_.end())
      return r_.errorAtPath(path, "\"", name,
                            "\" is not an argument, a "
                            "result or a buffer of function ",
                            fn_.name);
    out = it->second;
    const FunctionTensor &t = fn_.tensor(out);
    if (out.kind == TensorKind::Result && t.aliasOf >= 0)
      return r_.errorAtPath(path, "result '", name, "' is argument '",
                            fn_.arguments[t.aliasOf].name,
                            "': steps name the argument");
    return Status();
  }

  void markLive(TensorRef ref, int step) {
    if (ref.kind != TensorKind::Buffer)
      return;
    FunctionTensor &b = fn_.buffers[ref.index];
    if (b.firstStep < 0)
      b.firstStep = step;
    b.lastStep = step;
  }

  // A step that writes argument `ref` needs it marked written (the caller
  // is told which of its tensors change).
  Status checkWritable(TensorRef ref, const std::string &path) {
    if (ref.kind == TensorKind::Argument && !fn_.arguments[ref.index].written)
      return r_.errorAtPath(path, "the step writes argument '",
                            fn_.arguments[ref.index].name,
                            "', which is not marked \"written\"");
    return Status();
  }

  Status resolveStep(size_t i) {
    const fp8schema::Step &s = file_.steps[i];
    std::string path = indexPath(at("steps"), i);
    FunctionStep step;
    step.kind = s.kind;
    if (s.kind == fp8schema::StepKind::Launch) {
      FP8RT_RETURN_IF_ERROR(resolveLaunch(s, path, int(i), step));
    } else if (isCollective(s.kind)) {
      FP8RT_RETURN_IF_ERROR(resolveCollective(s, path, int(i), step));
    } else if (s.kind == fp8schema::StepKind::Copy2d) {
      FP8RT_RETURN_IF_ERROR(resolveCopy2D(s, path, int(i), step));
    } else {
      std::string targetPath = fieldPath(path, "target");
      FP8RT_RETURN_IF_ERROR(lookup(s.target, targetPath, step.target));
      FP8RT_RETURN_IF_ERROR(checkWritable(step.target, targetPath));
      markLive(step.target, int(i));
      step.byte = static_cast<int>(s.byte);
    }
    if (s.kind == fp8schema::StepKind::Copy) {
      FP8RT_RETURN_IF_ERROR(
          lookup(s.source, fieldPath(path, "source"), step.source));
      markLive(step.source, int(i));
    }
    fn_.steps.push_back(std::move(step));
    return Status();
  }

  // A step's source and target: distinct, the target writable. `what`
  // names the step in the message.
  Status resolveEnds(const fp8schema::Step &s, const std::string &sourcePath,
                     const std::string &targetPath, const char *what,
                     FunctionStep &step) {
    FP8RT_RETURN_IF_ERROR(lookup(s.source, sourcePath, step.source));
    FP8RT_RETURN_IF_ERROR(lookup(s.target, targetPath, step.target));
    FP8RT_RETURN_IF_ERROR(checkWritable(step.target, targetPath));
    if (s.source == s.target)
      return r_.errorAtPath(targetPath, "the ", what, " reads and writes '",
                            s.target, "': give it another target");
    return Status();
  }

  // A collective: its tensors (distinct, of its dtype), its count and,
  // for a reduction, a dtype NCCL reduces.
  Status resolveCollective(const fp8schema::Step &s, const std::string &path,
                           int index, FunctionStep &step) {
    std::string sourcePath = fieldPath(path, "source");
    std::string targetPath = fieldPath(path, "target");
    FP8RT_RETURN_IF_ERROR(
        resolveEnds(s, sourcePath, targetPath, "collective", step));
    for (auto [ref, where] : {std::pair(step.source, &sourcePath),
                              std::pair(step.target, &targetPath)})
      if (fn_.tensor(ref).dtype != s.dtype)
        return r_.errorAtPath(*where, fn_.describe(ref), " is ",
                              dtypeName(fn_.tensor(ref).dtype),
                              ", the collective moves ", dtypeName(s.dtype));
    bool reduces = s.kind == fp8schema::StepKind::AllReduce ||
                   s.kind == fp8schema::StepKind::ReduceScatter;
    if (reduces && s.dtype != DType::F32 && s.dtype != DType::BF16 &&
        s.dtype != DType::F16)
      return r_.errorAtPath(fieldPath(path, "dtype"), "a ",
                            fp8schema::stringify(s.kind), " of ",
                            dtypeName(s.dtype),
                            ": reductions take f32, bf16 or f16");
    FP8RT_RETURN_IF_ERROR(checkSymbolsOf(s.count, fieldPath(path, "count")));
    markLive(step.source, index);
    markLive(step.target, index);
    step.dtype = s.dtype;
    step.count = s.count;
    step.reduction = s.reduction;
    step.group = s.group;
    return Status();
  }

  // A strided copy: distinct tensors, its geometry of known symbols (the
  // bytes are checked against the tensors' sizes when the symbols are
  // bound).
  Status resolveCopy2D(const fp8schema::Step &s, const std::string &path,
                       int index, FunctionStep &step) {
    FP8RT_RETURN_IF_ERROR(resolveEnds(s, fieldPath(path, "source"),
                                      fieldPath(path, "target"), "copy",
                                      step));
    const std::pair<const Expr *, Expr *> fields[] = {
        {&s.rows, &step.rows},
        {&s.rowBytes, &step.rowBytes},
        {&s.sourceOffset, &step.sourceOffset},
        {&s.sourcePitch, &step.sourcePitch},
        {&s.targetOffset, &step.targetOffset},
        {&s.targetPitch, &step.targetPitch}};
    for (size_t f = 0; f < 6; ++f) {
      FP8RT_RETURN_IF_ERROR(checkSymbolsOf(
          *fields[f].first, fieldPath(path, kCopy2DFieldNames[f])));
      *fields[f].second = *fields[f].first;
    }
    if (s.sliceGroup) {
      step.sliced = true;
      step.group = *s.sliceGroup;
    }
    markLive(step.source, index);
    markLive(step.target, index);
    return Status();
  }

  Status resolveKernel(const fp8schema::Step &s, const std::string &path,
                       FunctionStep &step) {
    std::string kernelPath = fieldPath(path, "kernel");
    const std::vector<std::string> &names = module_.kernels;
    if (std::find(names.begin(), names.end(), s.kernel) == names.end())
      return r_.errorAtPath(kernelPath, "\"", s.kernel,
                            "\" is not one of the module's kernels");
    Status loaded = kernels_.kernel(s.kernel, step.kernel);
    if (!loaded.ok())
      return loaded.prepend(strCat(fn_.name, ": ", kernelPath, ": "));
    const KernelMetadata &meta = step.kernel->meta;
    if (meta.chip != module_.chip)
      return r_.errorAtPath(kernelPath, "kernel \"", s.kernel, "\" is for ",
                            meta.chip, ", the module for ", module_.chip);
    if (meta.workspaceParam >= 0)
      return r_.errorAtPath(
          kernelPath, "kernel \"", s.kernel,
          "\" has a workspace the runtime owns (a stream-K GEMM), which a "
          "module function cannot give it: compile the function without "
          "stream-K, or launch the kernel on its own (fp8rt_launch)");
    return Status();
  }

  Status resolveLaunch(const fp8schema::Step &s, const std::string &path,
                       int index, FunctionStep &step) {
    FP8RT_RETURN_IF_ERROR(resolveKernel(s, path, step));
    const KernelMetadata &meta = step.kernel->meta;
    step.operands.resize(meta.operands.size());
    for (const auto &[operand, tensor] : s.operands) {
      std::string opPath = fieldPath(fieldPath(path, "operands"), operand);
      int k = meta.findOperand(operand);
      if (k < 0) {
        std::vector<std::string> known;
        for (const OperandSpec &op : meta.operands)
          known.push_back(op.name);
        return r_.errorAtPath(opPath, "kernel \"", meta.name,
                              "\" has no operand \"", operand,
                              "\" (its operands: ", joined(known), ")");
      }
      StepOperand &bound = step.operands[k];
      FP8RT_RETURN_IF_ERROR(lookup(tensor, opPath, bound.tensor));
      bound.alignment = requiredAlignment(meta, k);
      const OperandSpec &spec = meta.operands[k];
      const FunctionTensor &t = fn_.tensor(bound.tensor);
      if (t.dtype != spec.dtype)
        return r_.errorAtPath(opPath, "kernel operand \"", operand, "\" is ",
                              dtypeName(spec.dtype), ", ",
                              fn_.describe(bound.tensor), " ",
                              dtypeName(t.dtype));
      if (t.alignment < bound.alignment)
        return r_.errorAtPath(opPath, "kernel operand \"", operand, "\" needs ",
                              bound.alignment, "-byte alignment, ",
                              fn_.describe(bound.tensor), " guarantees ",
                              t.alignment);
      if (spec.role == OperandRole::Output)
        FP8RT_RETURN_IF_ERROR(checkWritable(bound.tensor, opPath));
      markLive(bound.tensor, index);
    }
    for (size_t k = 0; k < meta.operands.size(); ++k)
      if (step.operands[k].tensor.kind == TensorKind::None &&
          !meta.operands[k].optional)
        return r_.errorAtPath(fieldPath(path, "operands"), "kernel operand \"",
                              meta.operands[k].name, "\" of \"", meta.name,
                              "\" is not bound");
    FP8RT_RETURN_IF_ERROR(checkSharedTensors(step, path));
    return resolveLaunchSymbols(s, path, step);
  }

  // Two operands of a launch bound to one tensor, one of them an output:
  // only an output and the input that the metadata of the kernel and of
  // each of its launch variants lets it update in place (`in_place_of`, C
  // and D of a GEMM adding into C), which the kernel then gets as the same
  // memory. Anything else would fail at every call.
  Status checkSharedTensors(const FunctionStep &step, const std::string &path) {
    const fp8rt_kernel &kernel = *step.kernel;
    const std::vector<OperandSpec> &ops = kernel.meta.operands;
    auto inPlace = [&](const KernelMetadata &meta, size_t out, size_t in) {
      int o = meta.findOperand(ops[out].name);
      int i = meta.findOperand(ops[in].name);
      return o >= 0 && i >= 0 && meta.operands[o].inPlaceOf == i;
    };
    for (size_t a = 0; a < ops.size(); ++a)
      for (size_t b = 0; b < ops.size(); ++b) {
        const TensorRef &ta = step.operands[a].tensor,
                        &tb = step.operands[b].tensor;
        bool bothOutputs = ops[b].role == OperandRole::Output;
        if (a == b || ops[a].role != OperandRole::Output ||
            ta.kind == TensorKind::None || ta.kind != tb.kind ||
            ta.index != tb.index || (bothOutputs && b < a))
          continue;
        bool allowed = inPlace(kernel.meta, a, b);
        for (const std::unique_ptr<fp8rt_kernel> &variant : kernel.variants)
          allowed = allowed && inPlace(variant->meta, a, b);
        if (!allowed)
          return r_.errorAtPath(
              fieldPath(path, "operands"), "kernel operands \"", ops[a].name,
              "\" (an output) and \"", ops[b].name, "\" are both ",
              fn_.describe(ta), ", but \"", kernel.meta.name,
              "\" does not let \"", ops[a].name, "\" update \"", ops[b].name,
              "\" in place (\"in_place_of\" in its metadata and its launch "
              "variants'): bind the output to another tensor");
      }
    return Status();
  }

  Status resolveLaunchSymbols(const fp8schema::Step &s, const std::string &path,
                              FunctionStep &step) {
    std::string symbolsPath = fieldPath(path, "symbols");
    step.kernelSymbols = kernelSymbols(step.kernel->meta);
    for (const std::string &symbol : step.kernelSymbols) {
      auto it = s.symbols.find(symbol);
      if (it == s.symbols.end())
        return r_.errorAtPath(symbolsPath, "no value for symbol \"", symbol,
                              "\" of kernel \"", s.kernel, "\"");
      FP8RT_RETURN_IF_ERROR(
          checkSymbolsOf(it->second, fieldPath(symbolsPath, symbol)));
      step.symbolValues.push_back(it->second);
    }
    for (const auto &entry : s.symbols)
      if (std::find(step.kernelSymbols.begin(), step.kernelSymbols.end(),
                    entry.first) == step.kernelSymbols.end())
        return r_.errorAtPath(
            fieldPath(symbolsPath, entry.first), "\"", entry.first,
            "\" is not a symbol of kernel \"", s.kernel,
            "\" (its symbols: ", joined(step.kernelSymbols), ")");
    return Status();
  }
};

} // namespace

Status readModuleProgram(std::string_view jsonText, std::string_view sourceName,
                         fp8schema::ModuleProgram &out) {
  SchemaReader reader(sourceName);
  return readDocument(jsonText, sourceName, reader, out,
                      parseModuleProgramDocument);
}

Status parseModuleProgram(std::string_view jsonText,
                          std::string_view sourceName, KernelProvider &kernels,
                          ModuleModel &out) {
  SchemaReader reader(sourceName);
  fp8schema::ModuleProgram file;
  FP8RT_RETURN_IF_ERROR(readDocument(jsonText, sourceName, reader, file,
                                     parseModuleProgramDocument));
  out = ModuleModel();
  out.chip = file.chip;
  std::set<std::string> seen;
  for (size_t i = 0; i < file.kernels.size(); ++i)
    if (!seen.insert(file.kernels[i]).second)
      return reader.errorAtPath(indexPath("kernels", i), "kernel \"",
                                file.kernels[i], "\" is listed twice");
  out.kernelNames = file.kernels;
  out.functions.resize(file.functions.size());
  for (size_t i = 0; i < file.functions.size(); ++i) {
    if (out.findFunction(file.functions[i].name) >= 0)
      return reader.errorAtPath(fieldPath(indexPath("functions", i), "name"),
                                "function \"", file.functions[i].name,
                                "\" is defined twice");
    FP8RT_RETURN_IF_ERROR(
        FunctionResolver(reader, file, i, kernels, out.functions[i]).resolve());
  }
  return Status();
}

} // namespace fp8rt
