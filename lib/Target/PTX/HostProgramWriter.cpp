//===- HostProgramWriter.cpp - A host function as module.json structs -----===//
//
// The second half of fp8-build-host-program's reading of a function (see
// HostProgramBuilder.h): once every operation is read, the run-time
// symbols get their final names, and the function is written as the
// structs of schema/module.schema.json: its arguments and results in the
// shapes the caller passes them in, the buffers placed in one workspace,
// and the steps.
//
//===----------------------------------------------------------------------===//

#include "HostProgramBuilder.h"

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::host;

bool mlir::fp8::host::hasUnboundSymbol(const std::vector<Expr> &shape) {
  return llvm::any_of(shape, [](const Expr &e) {
    return llvm::any_of(e.symbols(),
                        [](const std::string &s) { return s[0] == '$'; });
  });
}

FailureOr<md::Function> ProgramBuilder::finish() {
  if (!return_)
    return error(func_) << "the function has no 'func.return'";
  // The symbols: each class of extents named after its earliest.
  md::Function out;
  out.name = func_.getName().str();
  // A class of slots is bound by its earliest slot still in an argument's
  // shape; one with none stays unnamed ("$N"), an error if anything uses it.
  std::map<int, int> representative;
  for (size_t s = 0; s < slots_.size(); ++s)
    if (!slots_[s].dead)
      representative.emplace(find(static_cast<int>(s)), static_cast<int>(s));
  for (size_t s = 0; s < slots_.size(); ++s) {
    auto rep = representative.find(find(static_cast<int>(s)));
    if (rep == representative.end())
      continue;
    const Slot &slot = slots_[rep->second];
    const std::string &name = tensors_[slot.argument].name;
    std::string symbol = name + "_" + std::to_string(slot.dim);
    finalNames_["$" + std::to_string(s)] = Expr::symbol(symbol);
    if (rep->second == static_cast<int>(s))
      out.symbols.push_back({symbol, name, slot.dim});
  }
  for (size_t i = 0; i < func_.getNumArguments(); ++i) {
    const Tensor &t = tensors_[i];
    FailureOr<std::vector<Expr>> shape = boundaryShape(static_cast<int>(i));
    if (failed(shape))
      return failure();
    md::Argument arg;
    arg.name = t.name;
    arg.dtype = t.dtype;
    arg.shape = *shape;
    arg.alignment = t.alignment;
    if (t.written)
      arg.written = true;
    out.arguments.push_back(std::move(arg));
  }
  if (failed(readResults(out)))
    return failure();
  rewriteTransposedGathers();
  hoistGathers();
  if (failed(checkCollectiveLayouts()))
    return failure();
  if (failed(placeBuffers(out)))
    return failure();
  for (const Step &step : steps_)
    out.steps.push_back(writeStep(step));
  if (failed(checkSymbolsBound(out)))
    return failure();
  return out;
}

/// Every extent of the program is an expression of symbols some argument
/// binds.
LogicalResult ProgramBuilder::checkSymbolsBound(const md::Function &out) {
  std::vector<std::pair<std::string, const Expr *>> uses;
  auto add = [&](const std::string &what, const std::vector<Expr> &shape) {
    for (const Expr &e : shape)
      uses.push_back({what, &e});
  };
  for (const md::Argument &a : out.arguments)
    add("argument '" + a.name + "'", a.shape);
  for (const md::Result &r : out.results)
    add("result '" + r.name + "'", r.shape);
  for (const md::Buffer &b : out.buffers) {
    add("buffer '" + b.name + "'", b.shape);
    uses.push_back({"buffer '" + b.name + "'", &b.bytes});
  }
  for (const md::Step &step : out.steps)
    for (const auto &[symbol, value] : step.symbols)
      uses.push_back({"kernel symbol " + symbol + " of a launch", &value});
  for (const auto &[what, e] : uses)
    for (const std::string &symbol : e->symbols())
      if (symbol[0] == '$')
        return error(func_) << what << " has an extent (" << shown(*e)
                            << ") that only an argument passed in a kernel "
                               "layout gave: no argument binds it";
  return success();
}

/// The returned values: allocations (the caller's results) or arguments
/// (updated in place: the result aliases the argument).
LogicalResult ProgramBuilder::readResults(md::Function &out) {
  std::set<std::string> names;
  for (const Tensor &t : tensors_)
    if (t.isArgument)
      names.insert(t.name);
  for (auto [i, value] : llvm::enumerate(return_.getOperands())) {
    FailureOr<std::string> name =
        nameOf(func_.getResultAttrDict(i), "result", i);
    if (failed(name))
      return failure();
    if (!names.insert(*name).second)
      return error(return_) << "result " << i << " is named '" << *name
                            << "', as another argument or result is";
    auto it = tensorOf_.find(value);
    if (it == tensorOf_.end())
      return error(return_)
             << "result " << i << " is not an argument or an allocation";
    Tensor &t = tensors_[it->second];
    FailureOr<std::vector<Expr>> shape = boundaryShape(it->second);
    if (failed(shape))
      return failure();
    md::Result result;
    result.name = *name;
    result.dtype = t.dtype;
    result.shape = *shape;
    result.alignment = t.alignment;
    if (t.isArgument) {
      result.aliasOf = t.name;
    } else if (t.result >= 0) {
      return error(return_) << "results " << t.result << " and " << i
                            << " are the same allocation";
    } else {
      t.result = static_cast<int>(i);
      t.name = *name;
    }
    out.results.push_back(std::move(result));
  }
  return success();
}

/// The shape the caller passes an argument or a result in: its type's, or
/// the layout its kernels read or write it in where that is larger (scales
/// in a padded layout) or has the same rank and bytes but other extents
/// (1x128 scales MN-major: `[ceil(K/128), M]` for a `[M, ceil(K/128)]`
/// type), which every such kernel operand must agree on. The bytes in
/// memory are then those of the shape the caller is told.
FailureOr<std::vector<Expr>> ProgramBuilder::boundaryShape(int index) {
  const Tensor &t = tensors_[index];
  std::vector<Expr> logical = final(t.shape);
  FailureOr<Expr> own = byteSize(logical, dtypeBytes(t.dtype));
  if (failed(own))
    return error(func_) << "'" << t.name << "' overflows its byte size";
  const Binding *padded = nullptr;
  for (const Binding &binding : bindings_) {
    Expr bytes = final(binding.bytes);
    std::vector<Expr> layout = final(binding.shape);
    bool permuted = layout.size() == logical.size() && layout != logical;
    if (binding.tensor != index || (bytes == *own && !permuted) ||
        (bytes.isConstant() && own->isConstant() &&
         bytes.value() < own->value()))
      continue;
    if (padded && final(padded->shape) != final(binding.shape))
      return error(binding.launch)
             << "kernel operand '" << binding.operand << "' takes '" << t.name
             << "' as " << describe(final(binding.shape)) << ", another as "
             << describe(final(padded->shape));
    padded = &binding;
  }
  if (!padded)
    return logical;
  std::vector<Expr> shape = final(padded->shape);
  auto symbolic = [](const Expr &e) { return !e.isConstant(); };
  if (t.isArgument &&
      (llvm::any_of(logical, symbolic) || llvm::any_of(shape, symbolic)))
    return error(padded->launch)
           << "kernel operand '" << padded->operand << "' reads argument '"
           << t.name << "' " << describe(logical) << " as " << describe(shape)
           << ", a larger layout: an argument in such a layout needs static "
              "extents";
  return shape;
}

/// A buffer's bytes: those of its type, or more when a kernel operand bound
/// to it is padded beyond them.
FailureOr<Expr> ProgramBuilder::bufferBytes(const Tensor &t) {
  FailureOr<Expr> own = byteSize(final(t.shape), dtypeBytes(t.dtype));
  if (failed(own))
    return error(t.alloc) << "the allocation overflows its byte size";
  std::vector<Expr> sizes = {*own};
  for (const Binding &binding : bindings_)
    if (&tensors_[binding.tensor] == &t &&
        llvm::find(sizes, final(binding.bytes)) == sizes.end())
      sizes.push_back(final(binding.bytes));
  if (sizes.size() == 1)
    return sizes[0];
  if (llvm::all_of(sizes, [](const Expr &e) { return e.isConstant(); }))
    return *llvm::max_element(sizes, [](const Expr &a, const Expr &b) {
      return a.value() < b.value();
    });
  // The kernels' size, over that of the type (whose extents may be those
  // of an argument now passed in a kernel layout).
  if (sizes.size() == 2 || (sizes.size() == 3 && hasUnboundSymbol({*own})))
    return sizes[1];
  return error(t.alloc) << "kernels read or write the allocation as "
                        << sizes[1].str() << " and as " << sizes[2].str()
                        << " bytes";
}

/// Places the buffers in order of first use, each at a multiple of 256
/// bytes, reusing the place of a buffer no longer live when its size allows
/// it (the same expression, or constants no larger).
LogicalResult ProgramBuilder::placeBuffers(md::Function &out) {
  std::vector<int> order;
  for (size_t i = 0; i < tensors_.size(); ++i)
    if (!tensors_[i].isArgument && tensors_[i].result < 0 &&
        tensors_[i].firstStep >= 0)
      order.push_back(static_cast<int>(i));
  llvm::stable_sort(order, [&](int a, int b) {
    return tensors_[a].firstStep < tensors_[b].firstStep;
  });
  struct Place {
    Expr offset, bytes;
    int busyUntil;
  };
  std::vector<Place> places;
  std::optional<Expr> symbolicEnd; // the workspace so far: symbolicEnd +
  int64_t constantEnd = 0;         // constantEnd
  std::set<std::string> names;
  for (const md::Argument &arg : out.arguments)
    names.insert(arg.name);
  for (const md::Result &result : out.results)
    names.insert(result.name);
  for (int index : order) {
    Tensor &t = tensors_[index];
    FailureOr<Expr> bytes = bufferBytes(t);
    if (failed(bytes))
      return failure();
    Place *place = nullptr;
    for (Place &p : places)
      if (!place && p.busyUntil < t.firstStep &&
          (p.bytes == *bytes || (p.bytes.isConstant() && bytes->isConstant() &&
                                 bytes->value() <= p.bytes.value())))
        place = &p;
    if (!place) {
      FailureOr<Expr> offset =
          symbolicEnd ? addExprs(*symbolicEnd, Expr::constant(constantEnd))
                      : FailureOr<Expr>(Expr::constant(constantEnd));
      FailureOr<Expr> rounded =
          roundUpExprs(*bytes, Expr::constant(kBufferAlignment));
      if (failed(offset) || failed(rounded))
        return error(t.alloc) << "the workspace size overflows";
      if (rounded->isConstant())
        constantEnd += rounded->value();
      else
        symbolicEnd =
            symbolicEnd ? *addExprs(*symbolicEnd, *rounded) : *rounded;
      places.push_back({*offset, *bytes, -1});
      place = &places.back();
    }
    place->busyUntil = t.lastStep;
    for (int n = static_cast<int>(out.buffers.size()); t.name.empty(); ++n)
      if (!names.count("buffer" + std::to_string(n)))
        t.name = "buffer" + std::to_string(n);
    names.insert(t.name);
    md::Buffer buffer;
    buffer.name = t.name;
    buffer.dtype = t.dtype;
    buffer.shape = final(t.shape);
    // Extents only an argument's type gave (replaced by a kernel layout):
    // the buffer's shape is the layout its first kernel writes it in.
    for (const Binding &binding : bindings_)
      if (binding.tensor == index && hasUnboundSymbol(buffer.shape)) {
        buffer.shape = final(binding.shape);
        break;
      }
    buffer.bytes = *bytes;
    buffer.alignment = kBufferAlignment;
    buffer.offset = place->offset;
    out.buffers.push_back(std::move(buffer));
  }
  FailureOr<Expr> end =
      symbolicEnd ? addExprs(*symbolicEnd, Expr::constant(constantEnd))
                  : FailureOr<Expr>(Expr::constant(constantEnd));
  if (failed(end))
    return error(func_) << "the workspace size overflows";
  out.workspaceBytes = *end;
  return success();
}

md::Step ProgramBuilder::writeStep(const Step &step) {
  md::Step written;
  written.kind = step.kind;
  if (step.kind == md::StepKind::Fill)
    written.byte = step.byte;
  if (step.kind == md::StepKind::Copy || isCollective(step.kind) ||
      step.kind == md::StepKind::Copy2d)
    written.source = tensors_[step.source].name;
  if (step.kind == md::StepKind::Copy2d) {
    written.target = tensors_[step.target].name;
    written.rows = step.rows;
    written.rowBytes = step.rowBytes;
    written.sourceOffset = step.sourceOffset;
    written.sourcePitch = step.sourcePitch;
    written.targetOffset = step.targetOffset;
    written.targetPitch = step.targetPitch;
    written.sliceGroup = step.sliceGroup;
    return written;
  }
  if (isCollective(step.kind)) {
    written.target = tensors_[step.target].name;
    if (step.kind == md::StepKind::AllReduce ||
        step.kind == md::StepKind::ReduceScatter)
      written.reduction = step.reduction;
    written.dtype = tensors_[step.source].dtype;
    written.count = final(step.count);
    written.group = step.group;
    return written;
  }
  if (step.kind != md::StepKind::Launch) {
    written.target = tensors_[step.target].name;
    return written;
  }
  written.kernel = step.kernel;
  for (size_t k = 0; k < step.operands.size(); ++k)
    written.operands[step.operandNames[k]] = tensors_[step.operands[k]].name;
  for (const auto &[symbol, value] : step.symbols)
    written.symbols[symbol] = final(value);
  return written;
}
