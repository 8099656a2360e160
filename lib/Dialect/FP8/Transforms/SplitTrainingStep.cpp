//===- SplitTrainingStep.cpp - A training step as forward and backward ----===//
//
// Outlines each function marked `fp8.split_backward` into `@NAME_forward`
// and `@NAME_backward`: the backward is every op that depends on an output
// gradient (an argument marked `fp8.grad_output`), the forward the rest;
// the forward values the backward reads become forward results and backward
// arguments, named after what they hold (see the pass description).
//
//===----------------------------------------------------------------------===//

#include "FP8/Dialect/FP8/IR/FP8Ops.h"
#include "FP8/Dialect/FP8/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8SPLITTRAININGSTEP
#include "FP8/Dialect/FP8/Transforms/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;

namespace {
/// Which ops of a training step run in the backward, and what crosses over.
struct StepPartition {
  /// Ops without operands or effects (constants, static empty tensors):
  /// recreated in each function that uses them rather than passed.
  SmallVector<Operation *> shared;
  SmallVector<Operation *> forward, backward;
  /// Values that depend on an output gradient.
  DenseSet<Value> backwardValues;
  /// Forward values the backward reads, in the order they are defined.
  SetVector<Value> saved;
};

/// The signature of one outlined function: original arguments (by index)
/// and values passed in, the values it returns, with their attributes.
struct OutlinedSignature {
  SmallVector<unsigned> originalArgs;
  SmallVector<Value> savedArgs;
  SmallVector<Value> results;
  SmallVector<DictionaryAttr> resultAttrs;
};
} // namespace

/// Values `op` reads: its operands and what its regions use from above.
static SetVector<Value> getUsedValues(Operation *op) {
  SetVector<Value> used(op->operand_begin(), op->operand_end());
  getUsedValuesDefinedAbove(op->getRegions(), used);
  return used;
}

static bool isShared(Operation *op) {
  return op->getNumOperands() == 0 && op->getNumRegions() == 0 &&
         isMemoryEffectFree(op);
}

static StepPartition partition(func::FuncOp function) {
  StepPartition p;
  Block &body = function.getBody().front();
  for (BlockArgument arg : body.getArguments())
    if (function.getArgAttr(arg.getArgNumber(), kGradOutputAttrName))
      p.backwardValues.insert(arg);
  for (Operation &op : body.without_terminator()) {
    if (isShared(&op)) {
      p.shared.push_back(&op);
      continue;
    }
    SetVector<Value> used = getUsedValues(&op);
    if (llvm::none_of(used,
                      [&](Value v) { return p.backwardValues.contains(v); })) {
      p.forward.push_back(&op);
      continue;
    }
    p.backward.push_back(&op);
    p.backwardValues.insert(op.getResults().begin(), op.getResults().end());
    for (Value v : used)
      if (Operation *def = v.getDefiningOp();
          def && def->getBlock() == &body && !isShared(def) &&
          !p.backwardValues.contains(v))
        p.saved.insert(v);
  }
  // In definition order.
  SmallVector<Value> saved = p.saved.takeVector();
  llvm::sort(saved, [](Value a, Value b) {
    Operation *x = a.getDefiningOp(), *y = b.getDefiningOp();
    if (x != y)
      return x->isBeforeInBlock(y);
    return cast<OpResult>(a).getResultNumber() <
           cast<OpResult>(b).getResultNumber();
  });
  p.saved.insert(saved.begin(), saved.end());
  return p;
}

/// The name of forward value `v` that the backward reads: `<tensor>_<output>`
/// for an output of a quantization that names its tensor (fp8.name, set by
/// fp8-expand-linear), `saved<i>` otherwise; unique in `taken`.
static std::string getSavedName(Value v, unsigned index,
                                DenseMap<Operation *, std::string> &tensorNames,
                                llvm::StringSet<> &taken) {
  std::string name = "saved" + std::to_string(index);
  if (auto quantize = v.getDefiningOp<QuantizeOp>()) {
    if (auto tensor = quantize->getAttrOfType<StringAttr>(kNameAttrName)) {
      // One base name per quantization: "x", then "x_1" for another X.
      std::string &base = tensorNames[quantize];
      if (base.empty()) {
        auto used = [&](StringRef candidate) {
          return llvm::any_of(tensorNames, [&](const auto &entry) {
            return entry.second == candidate && entry.first != quantize;
          });
        };
        base = tensor.str();
        for (unsigned n = 1; used(base); ++n)
          base = tensor.str() + "_" + std::to_string(n);
      }
      StringRef output = v == quantize.getRowwise() ? "rowwise"
                         : v == quantize.getRowwiseScaleInv()
                             ? "rowwise_scale_inv"
                         : v == quantize.getColumnwise() ? "columnwise"
                         : v == quantize.getColumnwiseScaleInv()
                             ? "columnwise_scale_inv"
                             : "amax";
      name = base + "_" + output.str();
    }
  }
  std::string unique = name;
  for (unsigned n = 1; taken.contains(unique); ++n)
    unique = name + "_" + std::to_string(n);
  taken.insert(unique);
  return unique;
}

/// `attrs` with `fp8.name` set to `name` unless it has one.
static DictionaryAttr withName(DictionaryAttr attrs, StringRef name) {
  NamedAttrList list(attrs);
  if (!list.get(kNameAttrName))
    list.set(kNameAttrName, StringAttr::get(attrs.getContext(), name));
  return list.getDictionary(attrs.getContext());
}

static DictionaryAttr getArgAttrs(func::FuncOp function, unsigned i) {
  DictionaryAttr attrs = function.getArgAttrDict(i);
  return attrs ? attrs : DictionaryAttr::get(function.getContext());
}

/// Creates `name` before `original` with the signature `sig`, its body the
/// clones of `shared` (those it uses) and `ops`, returning `sig.results`.
static func::FuncOp outline(func::FuncOp original, StringRef name,
                            const OutlinedSignature &sig,
                            ArrayRef<StringAttr> savedNames,
                            ArrayRef<Operation *> shared,
                            ArrayRef<Operation *> ops) {
  MLIRContext *ctx = original.getContext();
  Block &body = original.getBody().front();
  SmallVector<Type> argTypes, resultTypes;
  SmallVector<Attribute> argAttrs, resultAttrs;
  for (unsigned i : sig.originalArgs) {
    argTypes.push_back(body.getArgument(i).getType());
    argAttrs.push_back(
        withName(getArgAttrs(original, i), "arg" + std::to_string(i)));
  }
  for (auto [v, savedName] : llvm::zip_equal(sig.savedArgs, savedNames)) {
    argTypes.push_back(v.getType());
    argAttrs.push_back(DictionaryAttr::get(
        ctx, {NamedAttribute(StringAttr::get(ctx, kNameAttrName), savedName)}));
  }
  for (auto [v, attrs] : llvm::zip_equal(sig.results, sig.resultAttrs)) {
    resultTypes.push_back(v.getType());
    resultAttrs.push_back(attrs);
  }

  OpBuilder b(original);
  auto function = func::FuncOp::create(b, original.getLoc(), name,
                                       b.getFunctionType(argTypes, resultTypes));
  function.setVisibility(original.getVisibility());
  // The original's own attributes (not its signature's, nor the mark).
  for (NamedAttribute attr : original->getDiscardableAttrs())
    if (attr.getName() != kSplitBackwardAttrName)
      function->setAttr(attr.getName(), attr.getValue());
  function.setAllArgAttrs(argAttrs);
  function.setAllResultAttrs(resultAttrs);

  Block *entry = function.addEntryBlock();
  IRMapping map;
  for (auto [i, index] : llvm::enumerate(sig.originalArgs))
    map.map(body.getArgument(index), entry->getArgument(i));
  for (auto [i, v] : llvm::enumerate(sig.savedArgs))
    map.map(v, entry->getArgument(sig.originalArgs.size() + i));
  b.setInsertionPointToStart(entry);
  DenseSet<Operation *> cloned(ops.begin(), ops.end());
  auto usedHere = [&](Operation *op) {
    return llvm::any_of(op->getUsers(), [&](Operation *user) {
      Operation *top = body.findAncestorOpInBlock(*user);
      return cloned.contains(top) ||
             (isa<func::ReturnOp>(top) &&
              llvm::any_of(sig.results, [&](Value v) {
                return v.getDefiningOp() == op;
              }));
    });
  };
  for (Operation *op : shared)
    if (usedHere(op))
      b.clone(*op, map);
  for (Operation *op : ops)
    b.clone(*op, map);
  SmallVector<Value> results = llvm::map_to_vector(
      sig.results, [&](Value v) { return map.lookupOrDefault(v); });
  func::ReturnOp::create(b, original.getLoc(), results);
  return function;
}

/// Splits `function`; fails after a diagnostic on it.
static LogicalResult splitTrainingStep(func::FuncOp function) {
  if (function.isExternal() || !function.getBody().hasOneBlock())
    return function.emitOpError()
           << "with " << kSplitBackwardAttrName
           << " must have a body of one block to split into forward and "
              "backward";
  WalkResult layers = function.walk([&](Operation *op) {
    if (!isa<LinearOp, LinearBackwardOp>(op))
      return WalkResult::advance();
    op->emitOpError() << "is not expanded: run fp8-expand-linear before "
                         "fp8-split-training-step";
    return WalkResult::interrupt();
  });
  if (layers.wasInterrupted())
    return failure();

  StepPartition p = partition(function);
  Block &body = function.getBody().front();
  if (p.backward.empty())
    return function.emitOpError()
           << "with " << kSplitBackwardAttrName
           << " has no backward: no op depends on an output gradient (an "
              "argument marked "
           << kGradOutputAttrName
           << ", as fp8-expand-linear marks those of fp8.linear_backward)";

  // Original results to the function that computes them; arguments to those
  // that read them.
  OutlinedSignature fwd, bwd;
  auto returnOp = cast<func::ReturnOp>(body.getTerminator());
  for (auto [i, v] : llvm::enumerate(returnOp.getOperands())) {
    OutlinedSignature &sig = p.backwardValues.contains(v) ? bwd : fwd;
    sig.results.push_back(v);
    DictionaryAttr attrs = function.getResultAttrDict(i);
    sig.resultAttrs.push_back(
        withName(attrs ? attrs : DictionaryAttr::get(function.getContext()),
                 "result" + std::to_string(i)));
  }
  auto readers = [&](ArrayRef<Operation *> ops, const OutlinedSignature &sig) {
    DenseSet<Value> used(sig.results.begin(), sig.results.end());
    for (Operation *op : ops)
      for (Value v : getUsedValues(op))
        used.insert(v);
    return used;
  };
  DenseSet<Value> fwdUses = readers(p.forward, fwd);
  DenseSet<Value> bwdUses = readers(p.backward, bwd);
  for (BlockArgument arg : body.getArguments()) {
    if (fwdUses.contains(arg))
      fwd.originalArgs.push_back(arg.getArgNumber());
    if (bwdUses.contains(arg))
      bwd.originalArgs.push_back(arg.getArgNumber());
  }

  // What the backward keeps from the forward, named after what it holds
  // (and unlike the names the function already gives).
  DenseMap<Operation *, std::string> tensorNames;
  llvm::StringSet<> taken;
  auto takeName = [&](DictionaryAttr attrs) {
    if (auto name = attrs ? attrs.getAs<StringAttr>(kNameAttrName) : nullptr)
      taken.insert(name.getValue());
  };
  for (unsigned i = 0, e = function.getNumArguments(); i < e; ++i)
    takeName(function.getArgAttrDict(i));
  for (unsigned i = 0, e = function.getNumResults(); i < e; ++i)
    takeName(function.getResultAttrDict(i));
  SmallVector<StringAttr> savedNames;
  for (auto [i, v] : llvm::enumerate(p.saved)) {
    savedNames.push_back(StringAttr::get(
        function.getContext(), getSavedName(v, i, tensorNames, taken)));
    fwd.results.push_back(v);
    fwd.resultAttrs.push_back(DictionaryAttr::get(
        function.getContext(),
        {NamedAttribute(StringAttr::get(function.getContext(), kNameAttrName),
                        savedNames.back())}));
    bwd.savedArgs.push_back(v);
  }

  std::string forwardName = (function.getSymName() + "_forward").str();
  std::string backwardName = (function.getSymName() + "_backward").str();
  SymbolTable symbols(function->getParentOp());
  for (StringRef name : {StringRef(forwardName), StringRef(backwardName)})
    if (symbols.lookup(name))
      return function.emitOpError()
             << "cannot be split: its forward or backward name @" << name
             << " is taken";
  func::FuncOp forward =
      outline(function, forwardName, fwd, {}, p.shared, p.forward);
  func::FuncOp backward =
      outline(function, backwardName, bwd, savedNames, p.shared, p.backward);
  symbols.insert(forward);
  symbols.insert(backward);
  function.erase();
  return success();
}

namespace {
struct SplitTrainingStepPass
    : public fp8::impl::FP8SplitTrainingStepBase<SplitTrainingStepPass> {
  void runOnOperation() override {
    SmallVector<func::FuncOp> steps;
    getOperation().walk([&](func::FuncOp function) {
      if (function->hasAttr(kSplitBackwardAttrName))
        steps.push_back(function);
    });
    bool failed = false;
    for (func::FuncOp function : steps)
      failed |= mlir::failed(splitTrainingStep(function));
    if (failed)
      signalPassFailure();
  }
};
} // namespace
