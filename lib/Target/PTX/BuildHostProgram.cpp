//===- BuildHostProgram.cpp - The host program of each public function ----===//
//
// fp8-build-host-program: reads each public host function of the lowered
// module (allocations, kernel launcher calls, fills, the sizes they use and
// the return) into the structs of schema/module.schema.json and attaches
// them to the module as `fp8.host_program`, which fp8-compile writes as
// module.json for the runtime.
//
//===----------------------------------------------------------------------===//

#include "HostProgramBuilder.h"

#include "FP8/Dialect/FP8/IR/FP8Dialect.h"
#include "FP8/Dialect/FP8/IR/FP8Target.h"
#include "FP8/Target/PTX/Passes.h"
#include "FP8/Target/SchemaWriter.h"
#include "fp8schema/Copy2DGeometry.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/CheckedArithmetic.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8BUILDHOSTPROGRAM
#include "FP8/Target/PTX/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::host;

#include "ModuleProgramWriter.inc"

//===----------------------------------------------------------------------===//
// The walk of the function
//===----------------------------------------------------------------------===//

LogicalResult ProgramBuilder::readSignature() {
  FunctionType type = func_.getFunctionType();
  std::set<std::string> names;
  for (auto [i, input] : llvm::enumerate(type.getInputs())) {
    Tensor t;
    t.isArgument = true;
    FailureOr<DType> dtype = checkType(input, func_, "argument " + Twine(i));
    FailureOr<std::string> name = nameOf(func_.getArgAttrDict(i), "arg", i);
    if (failed(dtype) || failed(name))
      return failure();
    t.dtype = *dtype;
    t.name = *name;
    t.alignment = dtypeBytes(t.dtype);
    auto memref = cast<MemRefType>(input);
    for (auto [d, extent] : llvm::enumerate(memref.getShape())) {
      if (!ShapedType::isDynamic(extent)) {
        t.shape.push_back(Expr::constant(extent));
        continue;
      }
      int slot = static_cast<int>(slots_.size());
      slots_.push_back({static_cast<int>(i), static_cast<int>(d), slot});
      std::string provisional = "$" + std::to_string(slot);
      t.shape.push_back(Expr::symbol(provisional));
      displayNames_[provisional] =
          Expr::symbol(*name + "_" + std::to_string(d));
    }
    tensorOf_[func_.getArgument(i)] = static_cast<int>(tensors_.size());
    tensors_.push_back(std::move(t));
    names.insert(*name);
  }
  if (names.size() != tensors_.size())
    return error(func_) << "two arguments have the same name";
  for (auto [i, output] : llvm::enumerate(type.getResults()))
    if (failed(checkType(output, func_, "result " + Twine(i))))
      return failure();
  return success();
}

LogicalResult ProgramBuilder::visit(Operation *op) {
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](memref::AllocOp alloc) { return visitAlloc(alloc); })
      .Case([&](memref::DimOp dim) { return visitDim(dim); })
      .Case<arith::AddIOp, arith::MulIOp, arith::CeilDivUIOp,
            arith::CeilDivSIOp>(
          [&](Operation *op) { return visitIndexArith(op); })
      .Case([&](arith::ConstantOp constant) {
        // Sizes and fill values; anything else is used by nothing here.
        if (auto value = dyn_cast<IntegerAttr>(constant.getValue());
            value && constant.getType().isIndex())
          sizes_[constant] = Expr::constant(value.getInt());
        return success();
      })
      .Case([&](linalg::FillOp fill) { return visitFill(fill); })
      .Case([&](memref::CopyOp copy) { return visitCopy(copy); })
      .Case([&](func::CallOp call) { return visitCall(call); })
      .Case([&](memref::DeallocOp dealloc) {
        auto it = tensorOf_.find(dealloc.getMemref());
        if (it == tensorOf_.end() || tensors_[it->second].isArgument)
          return LogicalResult(error(op) << "deallocates what it did not "
                                            "allocate");
        return success();
      })
      .Case([&](func::ReturnOp ret) {
        return_ = ret;
        return success();
      })
      .Default([&](Operation *op) {
        return error(op) << "'" << op->getName()
                         << "' has no kernel: a host program runs kernel "
                            "launches, fills and allocations only";
      });
}

LogicalResult ProgramBuilder::visitAlloc(memref::AllocOp alloc) {
  Tensor t;
  FailureOr<DType> dtype = checkType(alloc.getType(), alloc, "the allocation");
  if (failed(dtype))
    return failure();
  t.dtype = *dtype;
  t.alignment = dtypeBytes(t.dtype);
  t.alloc = alloc;
  auto sizes = alloc.getDynamicSizes().begin();
  for (int64_t extent : alloc.getType().getShape()) {
    if (!ShapedType::isDynamic(extent)) {
      t.shape.push_back(Expr::constant(extent));
      continue;
    }
    auto size = sizes_.find(*sizes++);
    if (size == sizes_.end())
      return error(alloc) << "a size of the allocation is not computed from "
                             "the arguments' extents";
    t.shape.push_back(size->second);
  }
  tensorOf_[alloc] = static_cast<int>(tensors_.size());
  tensors_.push_back(std::move(t));
  return success();
}

LogicalResult ProgramBuilder::visitDim(memref::DimOp dim) {
  auto tensor = tensorOf_.find(dim.getSource());
  std::optional<int64_t> index = dim.getConstantIndex();
  if (tensor == tensorOf_.end() || !index)
    return error(dim) << "'memref.dim' of something other than an argument "
                         "or an allocation, or at a run-time index";
  const Tensor &t = tensors_[tensor->second];
  if (*index < 0 || *index >= static_cast<int64_t>(t.shape.size()))
    return error(dim) << "'memref.dim' index " << *index << " out of range";
  sizes_[dim] = t.shape[*index];
  return success();
}

LogicalResult ProgramBuilder::visitIndexArith(Operation *op) {
  auto lhs = sizes_.find(op->getOperand(0));
  auto rhs = sizes_.find(op->getOperand(1));
  if (!op->getResult(0).getType().isIndex() || lhs == sizes_.end() ||
      rhs == sizes_.end())
    return error(op) << "'" << op->getName()
                     << "' is not a size computed from the arguments' "
                        "extents (index values of +, *, ceildiv)";
  FailureOr<Expr> e =
      isa<arith::AddIOp>(op)   ? addExprs(lhs->second, rhs->second)
      : isa<arith::MulIOp>(op) ? mulExprs(lhs->second, rhs->second)
                               : ceilDivExprs(lhs->second, rhs->second);
  if (failed(e))
    return error(op) << "'" << op->getName() << "' of " << shown(lhs->second)
                     << " and " << shown(rhs->second)
                     << " overflows or divides by less than 1";
  sizes_[op->getResult(0)] = *e;
  return success();
}

LogicalResult ProgramBuilder::visitFill(linalg::FillOp fill) {
  auto target = tensorOf_.find(fill.getOutputs()[0]);
  if (!fill.hasPureBufferSemantics() || target == tensorOf_.end())
    return error(fill) << "'linalg.fill' of something other than an "
                          "argument or an allocation";
  Attribute value;
  if (!matchPattern(fill.getInputs()[0], m_Constant(&value)))
    return error(fill) << "'linalg.fill' of a run-time value";
  APInt bits;
  if (auto f = dyn_cast<FloatAttr>(value))
    bits = f.getValue().bitcastToAPInt();
  else if (auto i = dyn_cast<IntegerAttr>(value))
    bits = i.getValue();
  Type element =
      cast<MemRefType>(fill.getOutputs()[0].getType()).getElementType();
  unsigned width = element.getIntOrFloatBitWidth();
  bool bytes = bits.getBitWidth() == width && width % 8 == 0;
  for (unsigned b = 8; bytes && b < width; b += 8)
    bytes =
        bits.extractBitsAsZExtValue(8, b) == bits.extractBitsAsZExtValue(8, 0);
  if (!bytes)
    return error(fill) << "'linalg.fill' with " << value
                       << ", whose bytes differ: the runtime fills with one "
                          "byte value";
  Step step;
  step.kind = md::StepKind::Fill;
  step.target = target->second;
  step.byte = static_cast<int>(bits.extractBitsAsZExtValue(8, 0));
  use(step.target, static_cast<int>(steps_.size()), /*writes=*/true);
  steps_.push_back(std::move(step));
  return success();
}

LogicalResult ProgramBuilder::visitCopy(memref::CopyOp copy) {
  auto source = tensorOf_.find(copy.getSource());
  auto target = tensorOf_.find(copy.getTarget());
  if (source == tensorOf_.end() || target == tensorOf_.end())
    return error(copy) << "'memref.copy' of something other than arguments "
                          "and allocations";
  Step step;
  step.kind = md::StepKind::Copy;
  step.source = source->second;
  step.target = target->second;
  int index = static_cast<int>(steps_.size());
  use(step.source, index, /*writes=*/false);
  use(step.target, index, /*writes=*/true);
  steps_.push_back(std::move(step));
  return success();
}

void ProgramBuilder::use(int tensor, int step, bool writes) {
  Tensor &t = tensors_[tensor];
  if (t.firstStep < 0)
    t.firstStep = step;
  t.lastStep = step;
  t.written = t.written || writes;
}

LogicalResult ProgramBuilder::visitCall(func::CallOp call) {
  auto launcher = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
      call, call.getCalleeAttr());
  if (auto info = launcher ? launcher->getAttrOfType<DictionaryAttr>(
                                 kCollectiveAttrName)
                           : DictionaryAttr()) {
    auto kind = info.getAs<StringAttr>("kind");
    if (kind && kind.getValue() == "copy2d")
      return visitCopy2D(call, info);
    return visitCollective(call, info);
  }
  auto kernelRef =
      launcher ? launcher->getAttrOfType<SymbolRefAttr>(kLauncherKernelAttrName)
               : SymbolRefAttr();
  if (!kernelRef)
    return error(call) << "'func.call' of @" << call.getCallee()
                       << ", which is not a kernel launcher (a declaration "
                          "with '"
                       << kLauncherKernelAttrName << "')";
  auto kernel = SymbolTable::lookupNearestSymbolFrom<gpu::GPUFuncOp>(
      func_->getParentOp(), kernelRef);
  if (!kernel)
    return error(call) << "launcher @" << call.getCallee() << " names "
                       << kernelRef << ", which is not a kernel of the module";
  auto cached = kernels_.find(kernel);
  if (cached == kernels_.end()) {
    FailureOr<KernelDesc> desc = readKernelDesc(kernel);
    if (failed(desc))
      return failure();
    cached = kernels_.try_emplace(kernel, std::move(*desc)).first;
  }
  const KernelDesc &desc = cached->second;
  if (call.getNumResults() != 0 ||
      call.getNumOperands() != desc.operands.size())
    return error(call) << "@" << call.getCallee() << " takes "
                       << call.getNumOperands() << " operands and returns "
                       << call.getNumResults() << " values, but kernel @"
                       << desc.name << " has " << desc.operands.size()
                       << " operands (a launcher takes them in order and "
                          "returns nothing)";
  Step step;
  step.kernel = desc.name;
  int index = static_cast<int>(steps_.size());
  for (unsigned k = 0; k < desc.operands.size(); ++k) {
    int tensor;
    if (failed(checkOperand(call, launcher, desc.operands[k], k, tensor)))
      return failure();
    step.operands.push_back(tensor);
    step.operandNames.push_back(desc.operands[k].name);
  }
  for (unsigned k = 0; k < desc.operands.size(); ++k)
    if (failed(passInKernelLayout(desc.operands[k], step.operands[k])))
      return failure();
  if (failed(bindSymbols(call, desc, step.symbols)) ||
      failed(finishKernelLayouts(call, step)))
    return failure();
  for (unsigned k = 0; k < desc.operands.size(); ++k) {
    const KernelOperand &operand = desc.operands[k];
    std::vector<Expr> shape;
    for (const Expr &e : operand.shape) {
      FailureOr<Expr> extent = substitute(e, step.symbols);
      if (failed(extent))
        return error(call) << "kernel operand '" << operand.name
                           << "': its extent " << shown(e) << " overflows";
      shape.push_back(*extent);
    }
    FailureOr<Expr> bytes = byteSize(shape, dtypeBytes(operand.dtype));
    if (failed(bytes))
      return error(call) << "kernel operand '" << operand.name
                         << "' overflows its byte size";
    bindings_.push_back({step.operands[k], shape, *bytes, call, operand.name});
    Tensor &t = tensors_[step.operands[k]];
    t.alignment = std::max(t.alignment, operand.alignment);
    use(step.operands[k], index, operand.output);
  }
  steps_.push_back(std::move(step));
  return success();
}

/// A call of a collective's declaration (fp8-lower-collectives): its
/// input and output, the elements of one device's piece and the group.
LogicalResult ProgramBuilder::visitCollective(func::CallOp call,
                                              DictionaryAttr info) {
  auto kind = info.getAs<StringAttr>("kind");
  auto grid = info.getAs<FlatSymbolRefAttr>("grid");
  auto axes = info.getAs<DenseI64ArrayAttr>("grid_axes");
  auto size = info.getAs<IntegerAttr>("group_size");
  auto reduction = info.getAs<StringAttr>("reduction");
  Step step;
  bool valid = kind && grid && axes && size && size.getInt() >= 1 &&
               md::parseEnum(kind.getValue(), step.kind) &&
               isCollective(step.kind) && call.getNumOperands() == 2 &&
               (!reduction || md::parseEnum(reduction.getValue(),
                                            step.reduction));
  if (!valid)
    return error(call) << "@" << call.getCallee() << " has a malformed '"
                       << kCollectiveAttrName << "': " << info;
  auto source = tensorOf_.find(call.getOperand(0));
  auto target = tensorOf_.find(call.getOperand(1));
  if (source == tensorOf_.end() || target == tensorOf_.end())
    return error(call) << "the collective's operands are not arguments or "
                          "allocations of the function";
  step.source = source->second;
  step.target = target->second;
  step.op = call;
  if (tensors_[step.source].dtype != tensors_[step.target].dtype)
    return error(call) << "the collective's input and output have different "
                          "element types";
  // One device's piece: the input of an all-reduce or all-gather, the
  // output of a reduce-scatter or a slice.
  bool pieceIsSource = step.kind == md::StepKind::AllReduce ||
                       step.kind == md::StepKind::AllGather;
  FailureOr<Expr> count = byteSize(
      tensors_[pieceIsSource ? step.source : step.target].shape, 1);
  if (failed(count))
    return error(call) << "the collective's element count overflows";
  step.count = *count;
  step.group.grid = grid.getValue().str();
  step.group.axes.assign(axes.asArrayRef().begin(), axes.asArrayRef().end());
  step.group.size = size.getInt();
  int index = static_cast<int>(steps_.size());
  use(step.source, index, /*writes=*/false);
  use(step.target, index, /*writes=*/true);
  steps_.push_back(std::move(step));
  return success();
}

/// A group's fields `<prefix>grid`, `<prefix>grid_axes` and
/// `<prefix>group_size` of a collective's declaration, or nullopt when
/// malformed.
static std::optional<md::DeviceGroup> readGroup(DictionaryAttr info,
                                                StringRef prefix) {
  auto grid = info.getAs<FlatSymbolRefAttr>((prefix + "grid").str());
  auto axes = info.getAs<DenseI64ArrayAttr>((prefix + "grid_axes").str());
  auto size = info.getAs<IntegerAttr>((prefix + "group_size").str());
  if (!grid || !axes || !size || size.getInt() < 1)
    return std::nullopt;
  md::DeviceGroup group;
  group.grid = grid.getValue().str();
  group.axes.assign(axes.asArrayRef().begin(), axes.asArrayRef().end());
  group.size = size.getInt();
  return group;
}

/// A call of a strided copy's declaration (fp8-lower-collectives: the
/// pieces of a collective along an inner dimension): its geometry in bytes,
/// checked against both tensors' sizes.
LogicalResult ProgramBuilder::visitCopy2D(func::CallOp call,
                                          DictionaryAttr info) {
  auto field = [&](StringRef name) -> std::optional<int64_t> {
    auto value = info.getAs<IntegerAttr>(name);
    if (!value || value.getInt() < 0)
      return std::nullopt;
    return value.getInt();
  };
  std::optional<int64_t> rows = field("rows"), row = field("row_elements"),
                         sourceOffset = field("source_offset"),
                         sourcePitch = field("source_pitch"),
                         targetOffset = field("target_offset"),
                         targetPitch = field("target_pitch");
  Step step;
  step.kind = md::StepKind::Copy2d;
  bool slice = static_cast<bool>(info.get("slice_grid"));
  if (slice)
    step.sliceGroup = readGroup(info, "slice_");
  auto source = tensorOf_.find(call.getOperand(0));
  auto target = tensorOf_.find(call.getOperand(1));
  if (!rows || !row || !sourceOffset || !sourcePitch || !targetOffset ||
      !targetPitch || (slice && !step.sliceGroup) ||
      call.getNumOperands() != 2 || source == tensorOf_.end() ||
      target == tensorOf_.end())
    return error(call) << "@" << call.getCallee() << " is a malformed strided "
                       << "copy: " << info;
  step.source = source->second;
  step.target = target->second;
  const Tensor &from = tensors_[step.source], &to = tensors_[step.target];
  if (from.dtype != to.dtype)
    return error(call) << "the strided copy's input and output have "
                          "different element types";
  // Every row (of a slice: at every rank's offset) inside its tensor.
  auto fits = [&](int64_t offset, int64_t pitch, int64_t lastRank,
                  const Tensor &t) {
    std::optional<int64_t> elements = 1;
    for (const Expr &e : t.shape)
      elements = elements && e.isConstant()
                     ? llvm::checkedMul(*elements, e.value())
                     : std::nullopt;
    return elements && fp8schema::copy2dFits(*rows, *row, offset, pitch,
                                             lastRank, *elements);
  };
  int64_t lastRank = slice ? step.sliceGroup->size - 1 : 0;
  if (!fits(*sourceOffset, *sourcePitch, lastRank, from) ||
      !fits(*targetOffset, *targetPitch, 0, to))
    return error(call) << "the strided copy " << info << " does not fit "
                       << describe(from.shape) << " and "
                       << describe(to.shape);
  int64_t bytes = dtypeBytes(from.dtype);
  Expr *out[] = {&step.rows, &step.rowBytes, &step.sourceOffset,
                 &step.sourcePitch, &step.targetOffset, &step.targetPitch};
  int64_t values[] = {*rows, *row, *sourceOffset, *sourcePitch, *targetOffset,
                      *targetPitch};
  for (auto [e, value] : llvm::zip(out, values)) {
    std::optional<int64_t> scaled =
        e == &step.rows ? value : llvm::checkedMul(value, bytes);
    if (!scaled)
      return error(call) << "the strided copy's byte sizes overflow";
    *e = Expr::constant(*scaled);
  }
  int index = static_cast<int>(steps_.size());
  use(step.source, index, /*writes=*/false);
  use(step.target, index, /*writes=*/true);
  steps_.push_back(std::move(step));
  return success();
}

/// A collective moves the elements of its tensors' types; a tensor a kernel
/// reads or writes in another layout (padded or MN-major scales) would be
/// moved in the wrong order, except for the steps that move them in the
/// kernels' layout (rewriteTransposedGathers).
LogicalResult ProgramBuilder::checkCollectiveLayouts() {
  for (const Step &step : steps_) {
    if ((!isCollective(step.kind) && step.kind != md::StepKind::Copy2d) ||
        step.kernelLayout)
      continue;
    for (int index : {step.source, step.target}) {
      const Tensor &t = tensors_[index];
      for (const Binding &binding : bindings_) {
        if (binding.tensor != index || final(binding.shape) == final(t.shape))
          continue;
        auto diag = error(binding.launch);
        diag << "kernel operand '" << binding.operand << "' takes "
             << describe(final(t.shape)) << " as "
             << describe(final(binding.shape))
             << ", a layout of its own, but the " << md::stringify(step.kind)
             << " step moves it in the order of its type: gather or scatter "
                "tensors the kernels read in their type's layout";
        if (t.dtype == DType::UE8M0 && binding.shape.size() == 3)
          diag << " (MX scale-factor atoms hold 128 rows by 4 scale "
                  "columns, interleaved: a gather keeps them when every "
                  "device's rows, along the rows, or scale columns, along "
                  "the columns, are a multiple of 128, or of 4; pad the "
                  "tensor to a multiple of 128 times the devices)";
        return diag;
      }
    }
  }
  return success();
}

LogicalResult ProgramBuilder::checkOperand(func::CallOp call,
                                           func::FuncOp launcher,
                                           const KernelOperand &operand,
                                           unsigned k, int &tensor) {
  Value value = call.getOperand(k);
  auto it = tensorOf_.find(value);
  if (it == tensorOf_.end())
    return error(call) << "kernel operand '" << operand.name
                       << "' is not an argument or an allocation of the "
                          "function";
  tensor = it->second;
  if (tensors_[tensor].dtype != operand.dtype)
    return error(call) << "kernel operand '" << operand.name << "' is "
                       << md::stringify(operand.dtype) << ", but "
                       << value.getType() << " is passed";
  auto access = launcher.getArgAttrOfType<StringAttr>(k, kAccessAttrName);
  if (access && (access.getValue() == "read") == operand.output)
    return error(call) << "launcher argument " << k << " is marked " << access
                       << " but kernel operand '" << operand.name << "' is an "
                       << (operand.output ? "output" : "input");
  return success();
}

/// Whether a tensor of `shape` is in kernel operand `operand`'s layout:
/// the same rank (or the same after dropping extents of 1) with the same
/// constant extents, and no padded extent (`roundup(M, 4)`) where the type
/// has a run-time one.
static bool isInLayout(const KernelOperand &operand,
                       const std::vector<Expr> &shape) {
  FailureOr<std::vector<Expr>> extents = getLayoutExtents(operand, shape);
  // MX atoms of `[R, C]` scales: a layout of their own.
  if (failed(extents) || (extents->size() != shape.size() &&
                          operand.shape.size() == 3))
    return false;
  for (auto [k, e] : llvm::zip(operand.shape, *extents)) {
    if (k.isConstant() && (!e.isConstant() || e.value() != k.value()))
      return false;
    if (!k.isConstant() && !k.isSymbol() && !e.isConstant())
      return false;
  }
  return true;
}

/// An argument with run-time extents that a kernel reads in another layout
/// than its type's (1x128 scales MN-major `[ceil(K/128), roundup(M, 4)]`
/// for `?xG`, MX scales as atoms) is passed in the kernel's layout: its shape
/// becomes the layout, each plain kernel symbol a symbol of the argument's
/// (bound from it at a call), each other extent an expression
/// finishKernelLayouts fills in.
LogicalResult ProgramBuilder::passInKernelLayout(const KernelOperand &operand,
                                                 int index) {
  Tensor &t = tensors_[index];
  // Static extents keep the type's shape (boundaryShape takes the layout's
  // when it is larger): a split step's backward takes what its forward
  // returned.
  bool dynamic = llvm::any_of(t.shape, [](const Expr &e) {
    return !e.isConstant();
  });
  if (!t.isArgument || !dynamic || t.inKernelLayout ||
      isInLayout(operand, t.shape))
    return success();
  for (Slot &slot : slots_)
    if (slot.argument == index)
      slot.dead = true;
  t.shape.clear();
  for (auto [d, e] : llvm::enumerate(operand.shape)) {
    if (!e.isSymbol()) {
      t.shape.push_back(e);
      continue;
    }
    int slot = static_cast<int>(slots_.size());
    slots_.push_back({index, static_cast<int>(d), slot});
    std::string provisional = "$" + std::to_string(slot);
    t.shape.push_back(Expr::symbol(provisional));
    displayNames_[provisional] =
        Expr::symbol(t.name + "_" + std::to_string(d));
  }
  t.inKernelLayout = true;
  t.layoutKernelSymbols = true;
  return success();
}

/// The extents of the arguments passed in this launch's kernel layouts, as
/// expressions of the function's symbols.
LogicalResult ProgramBuilder::finishKernelLayouts(func::CallOp call,
                                                  const Step &step) {
  for (int index : step.operands) {
    Tensor &t = tensors_[index];
    if (!t.layoutKernelSymbols)
      continue;
    for (Expr &e : t.shape) {
      FailureOr<Expr> extent = substitute(e, step.symbols);
      bool bound = succeeded(extent) &&
                   llvm::all_of(extent->symbols(), [](const std::string &s) {
                     return s[0] == '$';
                   });
      if (!bound)
        return error(call) << "argument '" << t.name
                           << "' is read in the kernel layout "
                           << describe(t.shape)
                           << ", whose extent " << e.str()
                           << " no other operand gives";
      e = *extent;
    }
    t.layoutKernelSymbols = false;
  }
  return success();
}

/// Each symbol of the kernel gets the extent of the first operand that
/// binds it; a later operand must have the same extent (two argument
/// symbols become one). An operand whose kernel layout has another rank
/// than its type binds along the type's extents other than 1 (row scales:
/// `[M]` for `?x1`), or, for MX atoms, their rows ceil(R / 128) from the
/// scales' R; otherwise it binds nothing (its bytes are compared once the
/// symbols are known).
LogicalResult
ProgramBuilder::bindSymbols(func::CallOp call, const KernelDesc &kernel,
                            std::map<std::string, Expr> &symbols) {
  for (unsigned k = 0; k < kernel.operands.size(); ++k) {
    const KernelOperand &operand = kernel.operands[k];
    int index = tensorOf_.lookup(call.getOperand(k));
    const Tensor &t = tensors_[index];
    FailureOr<std::vector<Expr>> layout = getLayoutExtents(operand, t.shape);
    // A buffer an earlier launch wrote in a kernel layout of this rank is in
    // that layout.
    for (const Binding &written : bindings_)
      if (written.tensor == index && !t.isArgument &&
          written.shape.size() == operand.shape.size() &&
          written.shape != t.shape)
        layout = written.shape;
    if (failed(layout))
      continue;
    const std::vector<Expr> &extents = *layout;
    for (auto [d, e] : llvm::enumerate(operand.shape)) {
      if (!e.isSymbol())
        continue;
      auto [it, added] = symbols.emplace(e.name(), extents[d]);
      const Expr &bound = it->second, &extent = extents[d];
      if (added || bound == extent)
        continue;
      if (bound.isSymbol() && extent.isSymbol() && bound.name()[0] == '$' &&
          extent.name()[0] == '$') {
        int a = find(std::stoi(bound.name().substr(1)));
        int b = find(std::stoi(extent.name().substr(1)));
        slots_[std::max(a, b)].parent = std::min(a, b);
        continue;
      }
      return error(call) << "kernel symbol " << e.name() << " is "
                         << shown(bound) << " by one operand but "
                         << shown(extent) << " by '" << operand.name << "'";
    }
  }
  for (const std::string &symbol : kernel.symbols)
    if (!symbols.count(symbol))
      return error(call) << "kernel symbol " << symbol << " of @"
                         << kernel.name
                         << " is not bound: no operand of its rank passes a "
                            "tensor whose extent gives it";
  return success();
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

namespace {
struct FP8BuildHostProgramPass
    : public fp8::impl::FP8BuildHostProgramBase<FP8BuildHostProgramPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    TargetAttr target = lookupTarget(module);
    if (!target) {
      module.emitError() << "no fp8.target on the module: run "
                            "fp8-attach-target{chip=...} (fp8-to-ptx does) "
                            "first";
      return signalPassFailure();
    }
    md::ModuleProgram program;
    program.chip = target.getChip().str();
    for (auto kernels : module.getOps<gpu::GPUModuleOp>())
      for (auto kernel : kernels.getOps<gpu::GPUFuncOp>())
        if (kernel.isKernel())
          program.kernels.push_back(kernel.getName().str());
    bool failed = reportFP8OpsOutsidePrograms(module);
    KernelDescs descs;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isDeclaration() || !func.isPublic())
        continue;
      FailureOr<md::Function> fn = ProgramBuilder(func, descs).build();
      if (mlir::failed(fn)) {
        failed = true;
        continue;
      }
      program.functions.push_back(std::move(*fn));
    }
    if (failed)
      return signalPassFailure();
    Builder b(&getContext());
    module->setAttr(kHostProgramAttrName, writeModuleProgram(b, program));
  }
};

} // namespace
