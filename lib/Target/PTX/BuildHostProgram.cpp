//===- BuildHostProgram.cpp - The host program of each public function ----===//
//
// fp8-build-host-program: reads each public host function of the lowered
// module (allocations, kernel launcher calls, fills, the sizes they use and
// the return) into the structs of schema/module.schema.json and attaches
// them to the module as `fp8.host_program`, which fp8-compile writes as
// module.json for the runtime.
//
//===----------------------------------------------------------------------===//

#include "HostProgramSupport.h"

#include "FP8/Dialect/FP8/IR/FP8Dialect.h"
#include "FP8/Dialect/FP8/IR/FP8Target.h"
#include "FP8/Target/PTX/Passes.h"
#include "FP8/Target/SchemaWriter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/TypeSwitch.h"

#include <set>

#include "fp8schema/ModuleProgram.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8BUILDHOSTPROGRAM
#include "FP8/Target/PTX/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::host;
namespace md = fp8schema;

#include "ModuleProgramWriter.inc"

namespace {

/// The attribute fp8-lower-* put on a launcher declaration: the kernel it
/// launches.
constexpr llvm::StringLiteral kLauncherKernelAttrName = "fp8.kernel";
/// The attribute naming an argument or a result.
constexpr llvm::StringLiteral kNameAttrName = "fp8.name";
/// How a launcher argument is used (one-shot bufferization's attribute).
constexpr llvm::StringLiteral kAccessAttrName = "bufferization.access";
/// Where buffers start in the workspace (the runtime's kWorkspaceAlignment).
constexpr int64_t kBufferAlignment = 256;
/// The runtime's FP8RT_MAX_RANK.
constexpr int64_t kMaxRank = 4;

/// An argument or an allocation of the function.
struct Tensor {
  bool isArgument = false;
  std::string name; // arguments (allocations are named when placed)
  DType dtype = DType::E4M3;
  std::vector<Expr> shape;
  int64_t alignment = 1;
  bool written = false; // arguments
  bool inKernelLayout = false; // arguments passed in a kernel's layout
  bool layoutKernelSymbols = false; // its shape still names kernel symbols
  // Allocations:
  Operation *alloc = nullptr;
  int result = -1; // the result it is, or -1 (a buffer)
  int firstStep = -1, lastStep = -1;
};

/// A kernel operand's bytes as a launch reads or writes them, to compare
/// with the tensor bound to it once the symbols are final.
struct Binding {
  int tensor;
  std::vector<Expr> shape;
  Expr bytes;
  Operation *launch;
  std::string operand;
};

struct Step {
  md::StepKind kind = md::StepKind::Launch;
  std::string kernel;
  std::vector<int> operands; // per kernel operand: a tensor
  std::vector<std::string> operandNames;
  std::map<std::string, Expr> symbols;
  int target = -1; // fill, copy
  int source = -1; // copy
  int byte = 0;    // fill
};

/// The kernels launched, read once.
using KernelDescs = llvm::DenseMap<Operation *, KernelDesc>;

class ProgramBuilder {
public:
  ProgramBuilder(func::FuncOp func, KernelDescs &kernels)
      : func_(func), kernels_(kernels) {}

  FailureOr<md::Function> build() {
    if (!func_.getBody().hasOneBlock())
      return error(func_) << "the function has several blocks: a host "
                             "program is a sequence of steps";
    if (failed(readSignature()))
      return failure();
    for (Operation &op : func_.getBody().front())
      if (failed(visit(&op)))
        return failure();
    return finish();
  }

private:
  func::FuncOp func_;
  KernelDescs &kernels_;
  std::vector<Tensor> tensors_;
  llvm::DenseMap<Value, int> tensorOf_;
  llvm::DenseMap<Value, Expr> sizes_; // index values
  // Run-time symbols: one per dynamic argument extent, "$N" in expressions
  // until final; a launch that binds one kernel symbol to two of them
  // unites them (union-find, the earliest extent represents).
  struct Slot {
    int argument, dim, parent;
    bool dead = false; // of an argument's type, replaced by a kernel layout
  };
  std::vector<Slot> slots_;
  std::vector<Step> steps_;
  std::vector<Binding> bindings_;
  func::ReturnOp return_;
  // "$N" -> the symbol of extent N's argument ("x_0"), for messages, and
  // -> its class's symbol once every launch is read.
  std::map<std::string, Expr> displayNames_, finalNames_;

  InFlightDiagnostic error(Operation *op) {
    return op->emitError() << "host program of @" << func_.getName() << ": ";
  }

  int find(int slot) {
    while (slots_[slot].parent != slot)
      slot = slots_[slot].parent = slots_[slots_[slot].parent].parent;
    return slot;
  }

  /// The type of a tensor the runtime passes: a memref of rank 0..4 with
  /// the identity layout and a runtime dtype.
  FailureOr<DType> checkType(Type type, Operation *op, const Twine &what) {
    auto memref = dyn_cast<MemRefType>(type);
    FailureOr<DType> dtype = memref ? getRuntimeDType(memref.getElementType())
                                    : FailureOr<DType>(failure());
    if (memref && succeeded(dtype) && memref.getLayout().isIdentity() &&
        memref.getRank() <= kMaxRank && !memref.getMemorySpace())
      return dtype;
    return error(op) << what << " has type " << type
                     << ": the runtime takes dense row-major memrefs of rank "
                        "0 to 4 of f8E4M3FN, f8E5M2, f8E8M0FNU, bf16, f16 or "
                        "f32";
  }

  FailureOr<std::string> nameOf(DictionaryAttr attrs, StringRef fallback,
                                unsigned index) {
    auto name = attrs ? attrs.getAs<StringAttr>(kNameAttrName) : StringAttr();
    if (!name)
      return (fallback + Twine(index)).str();
    if (!md::isSymbolName(name.getValue()))
      return error(func_) << kNameAttrName << " \"" << name.getValue()
                          << "\" of " << fallback << " " << index
                          << " is not an identifier";
    return name.str();
  }

  LogicalResult readSignature();
  LogicalResult visit(Operation *op);
  LogicalResult visitAlloc(memref::AllocOp alloc);
  LogicalResult visitDim(memref::DimOp dim);
  LogicalResult visitIndexArith(Operation *op);
  LogicalResult visitFill(linalg::FillOp fill);
  LogicalResult visitCopy(memref::CopyOp copy);
  LogicalResult visitCall(func::CallOp call);
  LogicalResult passInKernelLayout(const KernelOperand &operand, int index);
  LogicalResult finishKernelLayouts(func::CallOp call, const Step &step);
  LogicalResult checkSymbolsBound(const md::Function &out);
  LogicalResult bindSymbols(func::CallOp call, const KernelDesc &kernel,
                            std::map<std::string, Expr> &symbols);
  LogicalResult checkOperand(func::CallOp call, func::FuncOp launcher,
                             const KernelOperand &operand, unsigned k,
                             int &tensor);
  void use(int tensor, int step, bool writes);
  FailureOr<md::Function> finish();
  LogicalResult readResults(md::Function &out);
  FailureOr<std::vector<Expr>> boundaryShape(int index);
  FailureOr<Expr> bufferBytes(const Tensor &t);
  LogicalResult placeBuffers(md::Function &out);
  md::Step writeStep(const Step &step);

  static std::string describe(const std::vector<Expr> &shape) {
    std::string out = "[";
    for (const Expr &e : shape)
      out += (out.size() > 1 ? ", " : "") + e.str();
    return out + "]";
  }

  /// `e` as messages show it: "x_0" rather than "$0".
  std::string shown(const Expr &e) {
    FailureOr<Expr> renamed = substitute(e, displayNames_);
    return succeeded(renamed) ? renamed->str() : e.str();
  }

  Expr final(const Expr &e) {
    FailureOr<Expr> renamed = substitute(e, finalNames_);
    return succeeded(renamed) ? *renamed : e;
  }
  std::vector<Expr> final(const std::vector<Expr> &shape) {
    std::vector<Expr> out;
    for (const Expr &e : shape)
      out.push_back(final(e));
    return out;
  }
};

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

/// Whether `shape` names a symbol no argument binds (a slot of an argument
/// whose type was replaced by a kernel layout).
static bool hasUnboundSymbol(const std::vector<Expr> &shape) {
  return llvm::any_of(shape, [](const Expr &e) {
    return llvm::any_of(e.symbols(),
                        [](const std::string &s) { return s[0] == '$'; });
  });
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
  if (step.kind == md::StepKind::Copy)
    written.source = tensors_[step.source].name;
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
