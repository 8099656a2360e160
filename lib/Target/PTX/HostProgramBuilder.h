//===- HostProgramBuilder.h - One function's host program -------*- C++ -*-===//
//
// The reader of one public host function of fp8-build-host-program
// (BuildHostProgram.cpp): the walk of its operations and the binding of its
// kernels' symbols (BuildHostProgram.cpp), then the function written as
// the structs of schema/module.schema.json: results, the workspace buffers
// and the steps (HostProgramWriter.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef FP8_LIB_TARGET_PTX_HOSTPROGRAMBUILDER_H
#define FP8_LIB_TARGET_PTX_HOSTPROGRAMBUILDER_H

#include "HostProgramSupport.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

#include "fp8schema/ModuleProgram.h"

#include <map>
#include <string>
#include <vector>

namespace mlir::fp8::host {

namespace md = fp8schema;

/// The attribute fp8-lower-* put on a launcher declaration: the kernel it
/// launches.
inline constexpr llvm::StringLiteral kLauncherKernelAttrName = "fp8.kernel";
/// The attribute fp8-lower-collectives puts on a collective's declaration:
/// what it does (kind, grid, grid_axes, group_size, reduction; for a
/// strided copy, kind "copy2d", its rows, offsets and pitches in elements
/// and, for a slice, slice_grid, slice_grid_axes, slice_group_size).
inline constexpr llvm::StringLiteral kCollectiveAttrName = "fp8.collective";
/// The attribute naming an argument or a result.
inline constexpr llvm::StringLiteral kNameAttrName = "fp8.name";
/// How a launcher argument is used (one-shot bufferization's attribute).
inline constexpr llvm::StringLiteral kAccessAttrName = "bufferization.access";
/// Where buffers start in the workspace (the runtime's kWorkspaceAlignment).
inline constexpr int64_t kBufferAlignment = 256;
/// The runtime's FP8RT_MAX_RANK.
inline constexpr int64_t kMaxRank = 4;

/// An argument or an allocation of the function.
struct Tensor {
  bool isArgument = false;
  std::string name; // arguments (allocations are named when placed)
  DType dtype = DType::E4M3;
  std::vector<Expr> shape;
  int64_t alignment = 1;
  bool written = false;             // arguments
  bool inKernelLayout = false;      // arguments passed in a kernel's layout
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
  // Collectives (source, target):
  md::Reduction reduction = md::Reduction::Sum;
  Expr count; // elements of one device's piece
  md::DeviceGroup group;
  // copy2d (source, target), in bytes:
  Expr rows, rowBytes, sourceOffset, sourcePitch, targetOffset, targetPitch;
  std::optional<md::DeviceGroup> sliceGroup;
  // Moves its tensors in the kernels' layout, not their types' order (a
  // transposed gather and its copies: rewriteTransposedGathers).
  bool kernelLayout = false;
  Operation *op = nullptr;   // the call (collectives), for messages
};

/// Whether a step kind is a collective across devices.
inline bool isCollective(md::StepKind kind) {
  return kind == md::StepKind::AllReduce || kind == md::StepKind::AllGather ||
         kind == md::StepKind::ReduceScatter ||
         kind == md::StepKind::AllSlice;
}

/// The kernels launched, read once.
using KernelDescs = llvm::DenseMap<Operation *, KernelDesc>;
/// Whether `shape` names a symbol no argument binds (a slot of an argument
/// whose type was replaced by a kernel layout).
bool hasUnboundSymbol(const std::vector<Expr> &shape);

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
  LogicalResult visitCollective(func::CallOp call, DictionaryAttr info);
  LogicalResult visitCopy2D(func::CallOp call, DictionaryAttr info);
  // HostProgramGathers.cpp: the gathers of tensors every kernel reads
  // transposed, rewritten to move them in that layout.
  void rewriteTransposedGathers();
  bool gatherTransposed(size_t index);
  int columnGatherTarget(size_t index) const;
  bool gatherTransposedColumns(size_t index);
  bool gatherAtomRows(size_t index);
  bool gatherAtomColumns(size_t index);
  void hoistGathers();
  bool hoistGather(size_t index);
  LogicalResult checkCollectiveLayouts();
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

} // namespace mlir::fp8::host

#endif // FP8_LIB_TARGET_PTX_HOSTPROGRAMBUILDER_H
