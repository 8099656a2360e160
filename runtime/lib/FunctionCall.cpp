// A call of a module function: the caller's tensors checked in the user's
// terms (which argument, which dim, what was expected), the symbols bound
// from the argument shapes, the buffers placed in the caller's workspace,
// then the steps run on the caller's stream.
//
// Everything that follows from the symbols' values alone (shapes, sizes,
// buffer offsets, each launch's operand shapes, and the checks of the
// program against them) is a CallPlan, kept per function for its last
// kCallPlans configurations. A call with a known configuration checks only
// the caller's tensors (dtypes, extents, strides, alignment, overlaps) and
// the workspace, then launches each kernel through the memoized path of
// fp8rt_launch_ordered.
#include "Module.h"

#include "Collectives.h"
#include "CudaDriver.h"

#include "fp8schema/Copy2DGeometry.h"
#include <algorithm>
#include <cstring>

namespace fp8rt {
namespace {

std::string symbolsText(const FunctionModel &fn,
                        const std::vector<int64_t> &values) {
  std::string out;
  for (size_t i = 0; i < fn.symbols.size() && i < values.size(); ++i)
    out +=
        strCat(out.empty() ? "" : ", ", fn.symbols[i].name, " = ", values[i]);
  return out;
}

// `count` elements of `dtype`, or false on overflow.
bool byteSize(const std::vector<int64_t> &shape, DType dtype, int64_t &out) {
  out = dtypeSize(dtype);
  for (int64_t extent : shape)
    if (__builtin_mul_overflow(out, extent, &out))
      return false;
  return true;
}

// The caller's tensors of one call, in function order (reused per thread,
// so a call allocates nothing).
struct CallScratch {
  std::vector<const fp8rt_tensor *> arguments, results;
  std::vector<int64_t> symbols;
  std::vector<fp8rt_tensor> operands;
};

CallScratch &scratch() {
  thread_local CallScratch s;
  return s;
}

std::string namesOf(const std::vector<FunctionTensor> &tensors) {
  std::string out;
  for (const FunctionTensor &t : tensors)
    out += (out.empty() ? "" : ", ") + t.name;
  return out.empty() ? "none" : out;
}

// Matches the caller's tensors to `specs`: by position when no tensor is
// named, else by name. A result that is an argument may be left out.
Status gather(const FunctionModel &fn, const char *what,
              const std::vector<FunctionTensor> &specs,
              const fp8rt_tensor *given, int count,
              std::vector<const fp8rt_tensor *> &out) {
  if (count < 0)
    return invalidArgument("the number of ", what, "s is negative");
  if (count > 0 && !given)
    return invalidArgument(count, " ", what, "s but the array is NULL");
  out.assign(specs.size(), nullptr);
  bool named = count > 0 && given[0].name;
  for (int i = 0; i < count; ++i)
    if ((given[i].name != nullptr) != named)
      return invalidArgument("name every ", what, " or none (", what, " ",
                             named ? i : 0, " has no name)");
  if (!named) {
    if (count != static_cast<int>(specs.size()))
      return invalidArgument(fn.name, " has ", specs.size(), " ", what, "s (",
                             namesOf(specs), "), got ", count);
    for (int i = 0; i < count; ++i)
      out[i] = &given[i];
  }
  for (int i = 0; named && i < count; ++i) {
    size_t j = 0;
    while (j < specs.size() && specs[j].name != given[i].name)
      ++j;
    if (j == specs.size())
      return invalidArgument(
          "'", given[i].name, "' is not ", what[0] == 'a' ? "an " : "a ", what,
          " of ", fn.name, " (its ", what, "s: ", namesOf(specs), ")");
    if (out[j])
      return invalidArgument(what, " '", specs[j].name, "' is given twice");
    out[j] = &given[i];
  }
  for (size_t j = 0; j < specs.size(); ++j)
    if (!out[j] && specs[j].aliasOf < 0)
      return invalidArgument(what, " '", specs[j].name, "' is missing");
  return Status();
}

Status checkDtypeAndRank(const char *what, const FunctionTensor &spec,
                         const fp8rt_tensor &t) {
  if (!t.data)
    return invalidArgument(what, " '", spec.name, "': data is NULL");
  DType dtype;
  if (!dtypeFromC(t.dtype, dtype))
    return invalidArgument(what, " '", spec.name, "': dtype ",
                           static_cast<int>(t.dtype), " is not an fp8rt_dtype");
  if (dtype != spec.dtype)
    return invalidArgument(what, " '", spec.name, "': dtype ", dtypeName(dtype),
                           ", expected ", dtypeName(spec.dtype));
  if (t.rank != static_cast<int>(spec.shape.size()))
    return invalidArgument(what, " '", spec.name, "': rank ", t.rank,
                           ", expected ", spec.shape.size(), " (shape ",
                           spec.describeShape(), ")");
  return Status();
}

// Binds the symbols from the arguments' shapes and checks every argument
// extent against its integer or symbol.
Status bindSymbols(const fp8rt_function &fn,
                   const std::vector<const fp8rt_tensor *> &args,
                   std::vector<int64_t> &values) {
  const FunctionModel &model = *fn.model;
  values.assign(model.symbols.size(), 0);
  for (size_t s = 0; s < model.symbols.size(); ++s) {
    const FunctionSymbol &symbol = model.symbols[s];
    values[s] = args[symbol.argument]->shape[symbol.dim];
    if (values[s] < 1)
      return invalidArgument("argument '",
                             model.arguments[symbol.argument].name, "': dim ",
                             symbol.dim, " (", symbol.name, ") is ", values[s],
                             ", expected at least 1");
  }
  for (size_t i = 0; i < args.size(); ++i) {
    const FunctionTensor &spec = model.arguments[i];
    for (size_t d = 0; d < spec.shape.size(); ++d) {
      int64_t extent = args[i]->shape[d];
      int s = fn.argumentSymbols[i][d];
      // An integer, or an expression of symbols bound by other arguments
      // (scales in the padded layout of the kernels that read them).
      int64_t expected = 0;
      std::string error;
      if (s < 0 && !spec.shape[d].evaluate(
                       [&](const std::string &name, int64_t &v) {
                         int k = model.findSymbol(name);
                         if (k >= 0)
                           v = values[k];
                         return k >= 0;
                       },
                       expected, error))
        return invalidArgument("argument '", spec.name, "': dim ", d, " = ",
                               spec.shape[d].str(), ": ", error);
      if (s < 0 && extent != expected)
        return invalidArgument("argument '", spec.name, "': dim ", d, " is ",
                               extent, ", expected ", expected, " (shape ",
                               spec.describeShape(), ", got ",
                               list(args[i]->shape, args[i]->rank), ")");
      if (s >= 0 && extent != values[s]) {
        const FunctionSymbol &symbol = model.symbols[s];
        return invalidArgument("argument '", spec.name, "': dim ", d, " is ",
                               extent, ", but symbol ", symbol.name, " is ",
                               values[s], " (dim ", symbol.dim,
                               " of argument '",
                               model.arguments[symbol.argument].name, "')");
      }
    }
  }
  return Status();
}

Status checkDense(const char *what, const FunctionTensor &spec,
                  const fp8rt_tensor &t) {
  bool allZero = true;
  for (int d = 0; d < t.rank; ++d)
    allZero = allZero && t.strides[d] == 0;
  if (allZero)
    return Status();
  int64_t dense[FP8RT_MAX_RANK] = {};
  int64_t expected = 1;
  bool ok = true;
  for (int d = t.rank - 1; d >= 0; --d) {
    dense[d] = expected;
    ok = ok && (t.shape[d] == 1 || t.strides[d] == expected);
    expected *= t.shape[d];
  }
  if (ok)
    return Status();
  return invalidArgument(
      what, " '", spec.name, "': strides ", list(t.strides, t.rank),
      " are not the dense row-major strides ", list(dense, t.rank),
      " of shape ", list(t.shape, t.rank));
}

Status checkAlignment(const char *what, const FunctionTensor &spec,
                      const void *data) {
  auto address = reinterpret_cast<uintptr_t>(data);
  if (address % static_cast<uintptr_t>(spec.alignment) == 0)
    return Status();
  return invalidArgument(what, " '", spec.name, "': address ", hex(address),
                         " is not ", spec.alignment, "-byte aligned");
}

//===----------------------------------------------------------------------===//
// Plans
//===----------------------------------------------------------------------===//

class Planner {
public:
  Planner(const fp8rt_function &fn, const std::vector<int64_t> &values,
          CallPlan &plan)
      : fn_(*fn.model), source_(fn.module->source), values_(values),
        plan_(plan) {}

  Status plan() {
    plan_.symbols = values_;
    FP8RT_RETURN_IF_ERROR(planResults());
    FP8RT_RETURN_IF_ERROR(
        evaluate(fn_.workspaceBytes, "workspace_bytes", plan_.workspaceBytes));
    FP8RT_RETURN_IF_ERROR(planBuffers());
    for (size_t i = 0; i < fn_.steps.size(); ++i)
      FP8RT_RETURN_IF_ERROR(planStep(i));
    cutGatherBatches(fn_, plan_);
    return Status();
  }

private:
  const FunctionModel &fn_;
  const std::string &source_;
  const std::vector<int64_t> &values_;
  CallPlan &plan_;
  std::vector<int64_t> argumentBytes_;

  Status evaluate(const Expr &e, const std::string &what, int64_t &out) const {
    auto lookup = [&](const std::string &name, int64_t &v) {
      int s = fn_.findSymbol(name);
      if (s >= 0)
        v = values_[s];
      return s >= 0;
    };
    std::string error;
    if (e.evaluate(lookup, out, error))
      return Status();
    return invalidArgument(what, " = ", e.str(), ": ", error, " (",
                           symbolsText(fn_, values_), ")");
  }

  // A problem of the program for these symbol values.
  template <typename... Pieces>
  Status invalidProgram(const Pieces &...pieces) const {
    return invalidMetadata(source_, ": ", pieces..., " (",
                           symbolsText(fn_, values_), ")");
  }

  Status shapeOf(const FunctionTensor &t, const std::string &what,
                 std::vector<int64_t> &shape, int64_t &bytes) const {
    shape.resize(t.shape.size());
    for (size_t d = 0; d < t.shape.size(); ++d) {
      FP8RT_RETURN_IF_ERROR(
          evaluate(t.shape[d], strCat(what, " dim ", d), shape[d]));
      if (shape[d] < 1)
        return invalidArgument(what, " dim ", d, " = ", t.shape[d].str(),
                               " is ", shape[d], " (",
                               symbolsText(fn_, values_), ")");
    }
    if (!byteSize(shape, t.dtype, bytes))
      return invalidArgument(what, " ", t.describeShape(),
                             " overflows its byte size (",
                             symbolsText(fn_, values_), ")");
    return Status();
  }

  Status planResults() {
    std::vector<int64_t> shape;
    for (const FunctionTensor &arg : fn_.arguments) {
      argumentBytes_.push_back(0);
      FP8RT_RETURN_IF_ERROR(shapeOf(arg, strCat("argument '", arg.name, "'"),
                                    shape, argumentBytes_.back()));
    }
    for (const FunctionTensor &result : fn_.results) {
      plan_.resultBytes.push_back(0);
      FP8RT_RETURN_IF_ERROR(shapeOf(result,
                                    strCat("result '", result.name, "'"), shape,
                                    plan_.resultBytes.back()));
      plan_.resultShapes.push_back(shape);
    }
    return Status();
  }

  Status planBuffers() {
    size_t n = fn_.buffers.size();
    plan_.bufferOffsets.resize(n);
    plan_.bufferBytes.resize(n);
    for (size_t i = 0; i < n; ++i) {
      const FunctionTensor &b = fn_.buffers[i];
      std::string what = strCat("buffer '", b.name, "'");
      FP8RT_RETURN_IF_ERROR(
          evaluate(b.offset, what + " offset", plan_.bufferOffsets[i]));
      FP8RT_RETURN_IF_ERROR(
          evaluate(b.bytes, what + " bytes", plan_.bufferBytes[i]));
      int64_t offset = plan_.bufferOffsets[i], bytes = plan_.bufferBytes[i];
      if (offset % b.alignment != 0)
        return invalidProgram(fn_.name, ": ", what, " is at offset ", offset,
                              ", not a multiple of its alignment ",
                              b.alignment);
      if (offset < 0 || bytes < 0 || offset > plan_.workspaceBytes ||
          bytes > plan_.workspaceBytes - offset)
        return invalidProgram(
            fn_.name, ": ", what, " (", bytes, " bytes at offset ", offset,
            ") ends beyond the workspace of ", plan_.workspaceBytes, " bytes");
    }
    // Buffers that are live at the same step must not share bytes.
    for (size_t i = 0; i < n; ++i)
      for (size_t j = i + 1; j < n; ++j) {
        const FunctionTensor &a = fn_.buffers[i], &b = fn_.buffers[j];
        bool live = a.firstStep >= 0 && b.firstStep >= 0 &&
                    a.firstStep <= b.lastStep && b.firstStep <= a.lastStep;
        int64_t ai = plan_.bufferOffsets[i], bi = plan_.bufferOffsets[j];
        bool overlap =
            ai < bi + plan_.bufferBytes[j] && bi < ai + plan_.bufferBytes[i];
        if (live && overlap)
          return invalidProgram(fn_.name, ": buffers '", a.name, "' and '",
                                b.name,
                                "' share workspace bytes while both "
                                "are live");
      }
    return Status();
  }

  int64_t bytesOf(TensorRef ref) const {
    switch (ref.kind) {
    case TensorKind::Argument:
      return argumentBytes_[ref.index];
    case TensorKind::Result:
      return plan_.resultBytes[ref.index];
    default:
      return plan_.bufferBytes[ref.index];
    }
  }

  // A collective's count, and its tensors' bytes against it: one piece
  // each (all_reduce), or one piece and the group's pieces.
  Status planCollective(size_t i, CallPlan::Step &planned) {
    const FunctionStep &step = fn_.steps[i];
    std::string where =
        strCat(fn_.name, " step ", i, " (", describeCollective(step), ")");
    int64_t count = 0, piece = 0, whole = 0;
    FP8RT_RETURN_IF_ERROR(evaluate(step.count, where + " count", count));
    bool pieceIsSource = step.kind == fp8schema::StepKind::AllReduce ||
                         step.kind == fp8schema::StepKind::AllGather;
    TensorRef pieceRef = pieceIsSource ? step.source : step.target;
    TensorRef wholeRef = pieceIsSource ? step.target : step.source;
    int64_t pieces =
        step.kind == fp8schema::StepKind::AllReduce ? 1 : step.group.size;
    if (count < 1 || !byteSize({count}, step.dtype, piece) ||
        !byteSize({count, pieces}, step.dtype, whole))
      return invalidProgram(where, ": count ", count,
                            " is below 1 or overflows");
    if (bytesOf(pieceRef) != piece || bytesOf(wholeRef) != whole)
      return invalidProgram(where, ": ", count, " elements per device, but ",
                            fn_.describe(pieceRef), " has ",
                            bytesOf(pieceRef), " bytes and ",
                            fn_.describe(wholeRef), " ", bytesOf(wholeRef));
    planned.count = static_cast<size_t>(count);
    plan_.steps.push_back(std::move(planned));
    return Status();
  }

  // A strided copy's geometry: every row (of a slice: at every rank's
  // offset) inside its tensors, rows no wider than the pitches.
  Status planCopy2D(size_t i, CallPlan::Step &planned) {
    const FunctionStep &step = fn_.steps[i];
    std::string where = strCat(fn_.name, " step ", i, " (copy2d of ",
                               fn_.describe(step.source), " into ",
                               fn_.describe(step.target), ")");
    int64_t v[6];
    const Expr *fields[] = {&step.rows,         &step.rowBytes,
                            &step.sourceOffset, &step.sourcePitch,
                            &step.targetOffset, &step.targetPitch};
    for (int f = 0; f < 6; ++f) {
      const char *name = kCopy2DFieldNames[f];
      FP8RT_RETURN_IF_ERROR(
          evaluate(*fields[f], strCat(where, " ", name), v[f]));
      if (v[f] < 0)
        return invalidProgram(where, ": ", name, " is ", v[f]);
    }
    int64_t rows = v[0], row = v[1];
    auto fits = [&](int64_t offset, int64_t pitch, int64_t lastRank,
                    TensorRef ref) {
      return fp8schema::copy2dFits(rows, row, offset, pitch, lastRank,
                                   bytesOf(ref));
    };
    int64_t lastRank = step.sliced ? step.group.size - 1 : 0;
    if (!fits(v[2], v[3], lastRank, step.source) ||
        !fits(v[4], v[5], 0, step.target))
      return invalidProgram(
          where, ": ", rows, " rows of ", row, " bytes (source offset ", v[2],
          step.sliced ? " + rank * row_bytes" : "", ", pitch ", v[3],
          "; target offset ", v[4], ", pitch ", v[5], ") do not fit ",
          fn_.describe(step.source), " (", bytesOf(step.source), " bytes) and ",
          fn_.describe(step.target), " (", bytesOf(step.target), " bytes)");
    planned.copy2d = Copy2DPlan{size_t(v[0]), size_t(v[1]), size_t(v[2]),
                                size_t(v[3]), size_t(v[4]), size_t(v[5])};
    plan_.steps.push_back(std::move(planned));
    return Status();
  }

  Status planStep(size_t i) {
    const FunctionStep &step = fn_.steps[i];
    CallPlan::Step planned;
    if (isCollective(step.kind))
      return planCollective(i, planned);
    if (step.kind == fp8schema::StepKind::Copy2d)
      return planCopy2D(i, planned);
    if (step.kind != fp8schema::StepKind::Launch) {
      planned.bytes = static_cast<size_t>(bytesOf(step.target));
      if (step.kind == fp8schema::StepKind::Copy &&
          bytesOf(step.source) != bytesOf(step.target))
        return invalidProgram(
            fn_.name, " step ", i, " copies ", fn_.describe(step.source), " (",
            bytesOf(step.source), " bytes) into ", fn_.describe(step.target),
            " (", bytesOf(step.target), " bytes)");
      plan_.steps.push_back(std::move(planned));
      return Status();
    }
    const KernelMetadata &meta = step.kernel->meta;
    std::string where =
        strCat(fn_.name, " step ", i, " (kernel \"", meta.name, "\")");
    std::vector<int64_t> symbols(step.symbolValues.size());
    for (size_t s = 0; s < symbols.size(); ++s)
      FP8RT_RETURN_IF_ERROR(evaluate(
          step.symbolValues[s],
          strCat(where, " symbol ", step.kernelSymbols[s]), symbols[s]));
    auto lookup = [&](const std::string &name, int64_t &v) {
      for (size_t s = 0; s < symbols.size(); ++s)
        if (step.kernelSymbols[s] == name)
          return v = symbols[s], true;
      return false;
    };
    planned.operands.resize(meta.operands.size());
    for (size_t k = 0; k < meta.operands.size(); ++k) {
      const OperandSpec &spec = meta.operands[k];
      fp8rt_tensor &op = planned.operands[k];
      op = fp8rt_tensor();
      op.dtype = static_cast<fp8rt_dtype>(spec.dtype);
      op.rank = static_cast<int>(spec.shape.size());
      std::vector<int64_t> shape(spec.shape.size());
      for (size_t d = 0; d < shape.size(); ++d) {
        std::string error;
        if (!spec.shape[d].evaluate(lookup, shape[d], error))
          return invalidProgram(where, ": operand '", spec.name, "' dim ", d,
                                ": ", error);
        op.shape[d] = shape[d];
      }
      TensorRef bound = step.operands[k].tensor;
      if (bound.kind == TensorKind::None)
        continue;
      int64_t bytes = 0;
      if (!byteSize(shape, spec.dtype, bytes) || bytes > bytesOf(bound))
        return invalidProgram(
            where, ": operand '", spec.name, "' ", list(op.shape, op.rank), " ",
            dtypeName(spec.dtype), " does not fit ", fn_.describe(bound), " (",
            bytesOf(bound), " bytes)");
    }
    plan_.steps.push_back(std::move(planned));
    return Status();
  }
};

// The plan for these symbol values: found (and made the most recent), or
// made (evicting the least recently used beyond kCallPlans).
Status planFor(fp8rt_function &fn, const std::vector<int64_t> &values,
               std::shared_ptr<const CallPlan> &out) {
  std::lock_guard<std::mutex> lock(fn.mutex);
  auto &plans = fn.plans;
  for (size_t i = 0; i < plans.size(); ++i)
    if (plans[i]->symbols == values) {
      std::rotate(plans.begin(), plans.begin() + i, plans.begin() + i + 1);
      out = plans.front();
      return Status();
    }
  auto plan = std::make_shared<CallPlan>();
  FP8RT_RETURN_IF_ERROR(Planner(fn, values, *plan).plan());
  if (plans.size() >= kCallPlans)
    plans.pop_back();
  plans.insert(plans.begin(), std::move(plan));
  out = plans.front();
  return Status();
}

// Checks the arguments without their addresses and binds the symbols.
Status bindArguments(fp8rt_function &fn, const fp8rt_tensor *arguments,
                     int numArguments, CallScratch &s) {
  const FunctionModel &model = *fn.model;
  FP8RT_RETURN_IF_ERROR(gather(model, "argument", model.arguments, arguments,
                               numArguments, s.arguments));
  for (size_t i = 0; i < s.arguments.size(); ++i)
    FP8RT_RETURN_IF_ERROR(
        checkDtypeAndRank("argument", model.arguments[i], *s.arguments[i]));
  return bindSymbols(fn, s.arguments, s.symbols);
}

} // namespace

Status functionWorkspaceBytes(fp8rt_function &fn, const char *const *names,
                              const int64_t *values, int count, size_t &out) {
  const FunctionModel &model = *fn.model;
  if (count < 0 || (count > 0 && (!names || !values)))
    return invalidArgument("symbols: a negative count or a NULL array");
  std::vector<int64_t> bound(model.symbols.size(), 0);
  std::vector<bool> given(model.symbols.size(), false);
  for (int i = 0; i < count; ++i) {
    int s = names[i] ? model.findSymbol(names[i]) : -1;
    if (s < 0) {
      std::string known;
      for (const FunctionSymbol &symbol : model.symbols)
        known += (known.empty() ? "" : ", ") + symbol.name;
      return invalidArgument("'", names[i], "' is not a symbol of ", model.name,
                             " (its symbols: ", known.empty() ? "none" : known,
                             ")");
    }
    if (given[s])
      return invalidArgument("symbol ", model.symbols[s].name,
                             " is given twice");
    if (values[i] < 1)
      return invalidArgument("symbol ", model.symbols[s].name, " is ",
                             values[i], ", expected at least 1");
    given[s] = true;
    bound[s] = values[i];
  }
  for (size_t s = 0; s < given.size(); ++s)
    if (!given[s])
      return invalidArgument("symbol ", model.symbols[s].name, " (dim ",
                             model.symbols[s].dim, " of argument '",
                             model.arguments[model.symbols[s].argument].name,
                             "') has no value");
  std::shared_ptr<const CallPlan> plan;
  FP8RT_RETURN_IF_ERROR(planFor(fn, bound, plan));
  out = static_cast<size_t>(plan->workspaceBytes);
  return Status();
}

Status functionWorkspaceBytesFor(fp8rt_function &fn,
                                 const fp8rt_tensor *arguments,
                                 int numArguments, size_t &out) {
  CallScratch &s = scratch();
  FP8RT_RETURN_IF_ERROR(bindArguments(fn, arguments, numArguments, s));
  std::shared_ptr<const CallPlan> plan;
  FP8RT_RETURN_IF_ERROR(planFor(fn, s.symbols, plan));
  out = static_cast<size_t>(plan->workspaceBytes);
  return Status();
}

namespace {

// The results (their shapes from the plan), the strides and addresses of
// every tensor, and that nothing the call writes overlaps anything else.
Status checkCallTensors(const FunctionModel &model, const CallPlan &plan,
                        CallScratch &s) {
  for (size_t i = 0; i < model.arguments.size(); ++i) {
    FP8RT_RETURN_IF_ERROR(
        checkDense("argument", model.arguments[i], *s.arguments[i]));
    FP8RT_RETURN_IF_ERROR(
        checkAlignment("argument", model.arguments[i], s.arguments[i]->data));
  }
  for (size_t i = 0; i < model.results.size(); ++i) {
    const FunctionTensor &spec = model.results[i];
    const fp8rt_tensor *t = s.results[i];
    if (spec.aliasOf >= 0) {
      const fp8rt_tensor &arg = *s.arguments[spec.aliasOf];
      if (t && t->data &&
          (t->data != arg.data || t->dtype != arg.dtype ||
           t->rank != arg.rank ||
           !std::equal(t->shape, t->shape + t->rank, arg.shape)))
        return invalidArgument(
            "result '", spec.name, "' is argument '",
            model.arguments[spec.aliasOf].name,
            "', updated in place: pass that argument's tensor (its address, "
            "dtype and shape) or nothing");
      s.results[i] = nullptr; // the argument's tensor
      continue;
    }
    FP8RT_RETURN_IF_ERROR(checkDtypeAndRank("result", spec, *t));
    const std::vector<int64_t> &shape = plan.resultShapes[i];
    if (!std::equal(shape.begin(), shape.end(), t->shape))
      return invalidArgument("result '", spec.name, "': shape ",
                             list(t->shape, t->rank), ", expected ",
                             list(shape.data(), t->rank), " (",
                             spec.describeShape(), ")");
    FP8RT_RETURN_IF_ERROR(checkDense("result", spec, *t));
    FP8RT_RETURN_IF_ERROR(checkAlignment("result", spec, t->data));
  }
  return Status();
}

struct Extent {
  uintptr_t begin = 0, end = 0;
  bool overlaps(const Extent &o) const {
    return begin < o.end && o.begin < end;
  }
};

Status checkOverlaps(const FunctionModel &model, const CallPlan &plan,
                     const CallScratch &s, void *workspace) {
  auto extentOf = [](const void *data, int64_t bytes) {
    auto begin = reinterpret_cast<uintptr_t>(data);
    return Extent{begin, begin + static_cast<uintptr_t>(bytes)};
  };
  Extent ws = extentOf(workspace, workspace ? plan.workspaceBytes : 0);
  size_t numArgs = model.arguments.size();
  for (size_t i = 0; i < numArgs + model.results.size(); ++i) {
    bool isResult = i >= numArgs;
    size_t index = isResult ? i - numArgs : i;
    const fp8rt_tensor *t = isResult ? s.results[index] : s.arguments[index];
    if (!t || (!isResult && !model.arguments[index].written))
      continue; // nothing the call writes
    const FunctionTensor &spec =
        isResult ? model.results[index] : model.arguments[index];
    const char *what = isResult ? "result" : "argument";
    int64_t bytes = 0;
    byteSize(std::vector<int64_t>(t->shape, t->shape + t->rank), spec.dtype,
             bytes);
    Extent mine = extentOf(t->data, bytes);
    if (mine.overlaps(ws))
      return invalidArgument(what, " '", spec.name, "' overlaps the workspace");
    for (size_t j = 0; j < numArgs + model.results.size(); ++j) {
      bool otherResult = j >= numArgs;
      size_t other = otherResult ? j - numArgs : j;
      const fp8rt_tensor *u =
          otherResult ? s.results[other] : s.arguments[other];
      if (j == i || !u)
        continue;
      const FunctionTensor &otherSpec =
          otherResult ? model.results[other] : model.arguments[other];
      int64_t otherBytes = 0;
      byteSize(std::vector<int64_t>(u->shape, u->shape + u->rank),
               otherSpec.dtype, otherBytes);
      if (mine.overlaps(extentOf(u->data, otherBytes)))
        return invalidArgument(what, " '", spec.name, "' overlaps ",
                               otherResult ? "result" : "argument", " '",
                               otherSpec.name, "', which the call ",
                               otherResult ? "also writes" : "reads");
    }
  }
  return Status();
}

Status checkWorkspace(const CallPlan &plan, void *workspace,
                      size_t workspaceBytes, const CallScratch &s,
                      const FunctionModel &model) {
  if (plan.workspaceBytes == 0)
    return Status();
  if (!workspace || workspaceBytes < static_cast<size_t>(plan.workspaceBytes))
    return invalidArgument("workspace: ", workspace ? workspaceBytes : 0,
                           " bytes given, the call needs ", plan.workspaceBytes,
                           " (", symbolsText(model, s.symbols), ")");
  auto address = reinterpret_cast<uintptr_t>(workspace);
  if (address % kWorkspaceAlignment != 0)
    return invalidArgument("workspace: address ", hex(address), " is not ",
                           kWorkspaceAlignment, "-byte aligned");
  return Status();
}

void *addressOf(TensorRef ref, const CallPlan &plan, const CallScratch &s,
                const FunctionModel &model, void *workspace) {
  switch (ref.kind) {
  case TensorKind::Argument:
    return s.arguments[ref.index]->data;
  case TensorKind::Result: {
    const fp8rt_tensor *t = s.results[ref.index];
    return t ? t->data : s.arguments[model.results[ref.index].aliasOf]->data;
  }
  case TensorKind::Buffer:
    return static_cast<char *>(workspace) + plan.bufferOffsets[ref.index];
  case TensorKind::None:
    break;
  }
  return nullptr;
}

// A fill or a copy: a driver call on the stream.
Status runMemoryStep(const DriverApi &api, const FunctionStep &step,
                     size_t bytes, CUdeviceptr target, CUdeviceptr source,
                     CUstream stream) {
  if (step.kind == fp8schema::StepKind::Copy)
    return checkCuda(api, api.memcpyDtoDAsync(target, source, bytes, stream),
                     "cuMemcpyDtoDAsync");
  return checkCuda(api,
                   api.memsetD8Async(target,
                                     static_cast<unsigned char>(step.byte),
                                     bytes, stream),
                   "cuMemsetD8Async");
}

std::string describeStep(const FunctionModel &model, size_t i) {
  const FunctionStep &step = model.steps[i];
  switch (step.kind) {
  case fp8schema::StepKind::Launch:
    return strCat("step ", i, " (kernel \"", step.kernel->meta.name, "\"): ");
  case fp8schema::StepKind::Copy:
    return strCat("step ", i, " (copy into ", model.describe(step.target),
                  "): ");
  case fp8schema::StepKind::Fill:
    return strCat("step ", i, " (fill ", model.describe(step.target), "): ");
  case fp8schema::StepKind::Copy2d:
    return strCat("step ", i, " (copy2d of ", model.describe(step.source),
                  " into ", model.describe(step.target), "): ");
  default:
    break;
  }
  return strCat("step ", i, " (", describeCollective(step), " of ",
                model.describe(step.source), " into ",
                model.describe(step.target), "): ");
}

Status runSteps(const fp8rt_function &fn, const CallPlan &plan, CallScratch &s,
                void *workspace, CUstream stream) {
  const FunctionModel &model = *fn.model;
  const DriverApi *api = nullptr;
  if (fn.hasMemorySteps) {
    CUcontext context = nullptr;
    FP8RT_RETURN_IF_ERROR(acquireDriver(api));
    FP8RT_RETURN_IF_ERROR(currentOrPrimaryContext(*api, context));
  }
  auto address = [&](TensorRef ref) {
    return addressOf(ref, plan, s, model, workspace);
  };
  const fp8rt_collectives &backend = fn.module->collectives;
  auto run = [&](size_t i) {
    const FunctionStep &step = model.steps[i];
    const CallPlan::Step &planned = plan.steps[i];
    Status status;
    if (isCollective(step.kind)) {
      status =
          runCollective(backend, api, step, planned.count, address(step.source),
                        address(step.target), stream);
    } else if (step.kind == fp8schema::StepKind::Copy2d) {
      status = runCopy2D(backend, *api, step, planned.copy2d,
                         address(step.source), address(step.target), stream);
    } else if (step.kind != fp8schema::StepKind::Launch) {
      auto at = [&](TensorRef r) {
        return reinterpret_cast<CUdeviceptr>(address(r));
      };
      bool copy = step.kind == fp8schema::StepKind::Copy;
      status = runMemoryStep(*api, step, planned.bytes, at(step.target),
                             copy ? at(step.source) : 0, stream);
    } else {
      s.operands.assign(planned.operands.begin(), planned.operands.end());
      for (size_t k = 0; k < step.operands.size(); ++k)
        s.operands[k].data = address(step.operands[k].tensor);
      status = launchKernelOrdered(*step.kernel, s.operands.data(),
                                   static_cast<int>(s.operands.size()), stream);
    }
    return status.ok() ? status : status.prepend(describeStep(model, i));
  };
  // A batch of all-gathers (cutGatherBatches) runs as one group of the
  // backend, closed even when one of them failed.
  for (size_t i = 0, end; i < model.steps.size(); i = end) {
    end = i + std::max(plan.steps[i].batch, 1);
    bool grouped = end > i + 1 && groupsCollectives(backend);
    Status status = grouped ? startCollectiveGroup(backend) : Status();
    if (!status.ok())
      return status.prepend(describeStep(model, i));
    for (size_t k = i; k < end && status.ok(); ++k)
      status = run(k);
    Status closed = grouped ? endCollectiveGroup(backend) : Status();
    FP8RT_RETURN_IF_ERROR(status);
    if (!closed.ok())
      return closed.prepend(describeStep(model, end - 1));
  }
  return Status();
}

} // namespace

Status callFunction(fp8rt_function &fn, const fp8rt_tensor *arguments,
                    int numArguments, const fp8rt_tensor *results,
                    int numResults, void *workspace, size_t workspaceBytes,
                    CUstream stream) {
  const FunctionModel &model = *fn.model;
  CallScratch &s = scratch();
  FP8RT_RETURN_IF_ERROR(bindArguments(fn, arguments, numArguments, s));
  FP8RT_RETURN_IF_ERROR(
      gather(model, "result", model.results, results, numResults, s.results));
  std::shared_ptr<const CallPlan> plan;
  FP8RT_RETURN_IF_ERROR(planFor(fn, s.symbols, plan));
  FP8RT_RETURN_IF_ERROR(checkCallTensors(model, *plan, s));
  FP8RT_RETURN_IF_ERROR(
      checkWorkspace(*plan, workspace, workspaceBytes, s, model));
  FP8RT_RETURN_IF_ERROR(checkOverlaps(model, *plan, s, workspace));
  if (fn.numCollectives > 0)
    FP8RT_RETURN_IF_ERROR(checkCollectiveBackend(
        model, fn.module->hasCollectives, fn.module->collectives));
  return runSteps(fn, *plan, s, workspace, stream);
}

} // namespace fp8rt
