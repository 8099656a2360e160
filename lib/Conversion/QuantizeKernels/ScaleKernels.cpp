//===- ScaleKernels.cpp - Per-tensor scale bookkeeping kernels ------------===//
//
// The rules are the numerics library's (lib/Numerics/Scaling.cpp:
// currentScalingScale, historyAmax, delayedScalingScale, recordAmax,
// rollAmaxHistory), emitted as f32 arithmetic that gives the same bits: RN
// divisions without flush-to-zero, `max.f32` (maxNum: NaN operands ignored,
// as std::fmax) for the history's amax.
//
//===----------------------------------------------------------------------===//

#include "FP8/Conversion/QuantizeKernels/ScaleKernels.h"
#include "FP8/Conversion/KernelSkeleton/KernelBuilder.h"
#include "FP8/Conversion/KernelSkeleton/KernelMetadata.h"
#include "FP8/Conversion/QuantizeKernels/QuantizeKernel.h"
#include "FP8/Numerics/Formats.h"
#include "QuantizeKernelsCommon.h"

#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::detail;
namespace num = ::fp8::numerics;

using Kind = ScaleKernelProblem::Kind;

ScaleKernelProblem ScaleKernelProblem::get(ComputeScaleOp op) {
  // The verifier allows #fp8.current and #fp8.delayed only.
  ScaleKernelProblem p;
  p.elementType = op.getElementType();
  if (auto current = dyn_cast<CurrentScalingAttr>(op.getRecipe())) {
    p.kind = Kind::CurrentScale;
    p.epsilon = current.getEpsilon().convertToFloat();
    p.pow2 = current.getPow2();
    return p;
  }
  auto delayed = cast<DelayedScalingAttr>(op.getRecipe());
  p.kind = Kind::DelayedScale;
  p.historyLength = delayed.getHistory();
  p.mostRecent = delayed.getAlgo() == AmaxComputeAlgo::MostRecent;
  p.margin = delayed.getMargin();
  return p;
}

ScaleKernelProblem ScaleKernelProblem::get(UpdateAmaxHistoryOp op) {
  ScaleKernelProblem p;
  p.kind = Kind::RecordAmax;
  p.historyLength = cast<DelayedScalingAttr>(op.getRecipe()).getHistory();
  return p;
}

std::string mlir::fp8::getScaleKernelName(const ScaleKernelProblem &p) {
  switch (p.kind) {
  case Kind::CurrentScale: {
    std::string name = llvm::formatv("fp8_compute_scale_current_{0}",
                                     getKernelDTypeName(p.elementType));
    if (p.epsilon != 0.f)
      name += llvm::formatv("_eps{0:x}", num::floatBits(p.epsilon)).str();
    if (p.pow2)
      name += "_pow2";
    return name;
  }
  case Kind::DelayedScale:
    return llvm::formatv("fp8_compute_scale_delayed_{0}_h{1}_{2}_m{3}",
                         getKernelDTypeName(p.elementType), p.historyLength,
                         p.mostRecent ? "most_recent" : "max", p.margin);
  case Kind::RecordAmax:
    return llvm::formatv("fp8_update_amax_history_h{0}", p.historyLength);
  }
  llvm_unreachable("unknown scale kernel");
}

/// One f32 per warp for the CTA reduction of the history's amax.
int64_t
mlir::fp8::getScaleKernelSharedMemoryBytes(const ScaleKernelProblem &p) {
  if (p.kind != Kind::DelayedScale || p.mostRecent)
    return 0;
  return 4 * (kDelayedScaleThreads / kWarpThreads);
}

md::KernelMetadata
mlir::fp8::buildScaleKernelMetadata(StringRef name, const ChipInfo &chip,
                                    const ScaleKernelProblem &p) {
  md::KernelKind kind = p.kind == Kind::RecordAmax
                            ? md::KernelKind::UpdateAmaxHistory
                            : md::KernelKind::ComputeScale;
  md::KernelMetadata metadata = makeKernelMetadata(
      name, chip, kind, p.numThreads(), getScaleKernelSharedMemoryBytes(p),
      getFixedGrid({1, 1, 1}));
  std::vector<md::Expr> history = getConstantShape({p.historyLength});
  auto f32Operand = [&](StringRef opName, std::vector<md::Expr> shape,
                        md::OperandRole role) {
    addPointerOperand(metadata, opName, md::DType::F32, std::move(shape), role,
                      4);
  };
  using Role = md::OperandRole;
  if (p.kind == Kind::RecordAmax) {
    f32Operand("amax_history", history, Role::Output);
    f32Operand("amax", {}, Role::Input);
    md::UpdateAmaxHistoryInfo info;
    info.history = p.historyLength;
    info.amaxHistory = "slot 0 becomes max(slot 0, amax), NaN sticky, in place";
    metadata.updateAmaxHistory = info;
    return metadata;
  }
  md::ComputeScaleInfo info;
  info.dtype = getKernelDType(p.elementType);
  if (p.kind == Kind::CurrentScale) {
    f32Operand("amax", {}, Role::Input);
    f32Operand("scale", {}, Role::Output);
    f32Operand("scale_inv", {}, Role::Output);
    info.rule = md::ScaleRule::Current;
    info.epsilon = p.epsilon;
    info.pow2 = p.pow2;
  } else {
    f32Operand("amax_history", history, Role::Output);
    f32Operand("previous_scale", {}, Role::Input);
    f32Operand("scale", {}, Role::Output);
    f32Operand("scale_inv", {}, Role::Output);
    info.rule = md::ScaleRule::Delayed;
    info.history = p.historyLength;
    info.algo = p.mostRecent ? md::AmaxAlgo::MostRecent : md::AmaxAlgo::Max;
    info.margin = p.margin;
    info.amaxHistory = "read, then rolled in place for the next step: new[i] "
                       "= old[i+1], new[L-1] = old[0], new[0] = 0";
  }
  metadata.computeScale = info;
  return metadata;
}

namespace {
class ScaleKernelEmitter {
public:
  ScaleKernelEmitter(ImplicitLocOpBuilder &b, const ScaleKernelProblem &p)
      : b(b), kb(b), p(p) {}

  void emit(Block &entry);

private:
  ImplicitLocOpBuilder &b;
  KernelBuilder kb;
  const ScaleKernelProblem &p;

  // llvm.intr.maxnum: max.f32 (arith.maxnumf can become a libdevice call).
  Value maxnum(Value x, Value y) { return LLVM::MaxNumOp::create(b, x, y); }
  Value cmpf(arith::CmpFPredicate pred, Value x, Value y) {
    return arith::CmpFOp::create(b, pred, x, y);
  }
  Value select(Value c, Value t, Value f) {
    return arith::SelectOp::create(b, c, t, f);
  }

  void emitCurrentScale(Value amax, Value scale, Value scaleInv);
  void emitDelayedScale(Value history, Value previousScale, Value scale,
                        Value scaleInv);
  void emitRecordAmax(Value history, Value amax);
  /// Rolls `history` in place (every thread of the CTA) and returns this
  /// thread's maxNum over the elements it read and the old slot 0.
  std::pair<Value, Value> emitRollHistory(Value history);
  /// maxNum of `v` over the CTA, valid in thread 0.
  Value emitCtaMaxNum(Value v);
};
} // namespace

void ScaleKernelEmitter::emitCurrentScale(Value amax, Value scale,
                                          Value scaleInv) {
  // The op's amax is any f32 (the folder's rule holds for negative ones).
  auto [s, inv] =
      emitCurrentScalingScale(b, kb.loadF32(amax, kb.i32(0)), p.elementType,
                              p.epsilon, p.pow2, /*amaxMayBeNegative=*/true);
  kb.store(s, scale);
  kb.store(inv, scaleInv);
}

void ScaleKernelEmitter::emitRecordAmax(Value history, Value amax) {
  // recordAmax: NaN if either is NaN, else the larger.
  Value slot = kb.loadF32(history, kb.i32(0));
  Value a = kb.loadF32(amax, kb.i32(0));
  // One statement per op: the IR's order must not depend on the order in
  // which a compiler evaluates function arguments.
  Value larger = select(cmpf(arith::CmpFPredicate::OGT, a, slot), a, slot);
  Value nan =
      arith::BitcastOp::create(b, b.getF32Type(), kb.i32(kF32QuietNaN));
  Value recorded =
      select(cmpf(arith::CmpFPredicate::UNO, slot, a), nan, larger);
  kb.store(recorded, history);
}

std::pair<Value, Value> ScaleKernelEmitter::emitRollHistory(Value history) {
  // Chunks of kDelayedScaleThreads slots in order: chunk k reads slots
  // [256k + 1, 256k + 256], synchronizes, then writes [256k, 256k + 255].
  // A slot is written after every read of it (the reads of chunk k + 1 lie
  // above the writes of chunk k, and chunk k's reads precede chunk k + 1's
  // barrier), so the roll is correct in place.
  int64_t length = p.historyLength;
  Value tid = kb.threadIdX();
  Value oldest = kb.loadF32(history, kb.i32(0));
  int64_t chunks = llvm::divideCeil(length, kDelayedScaleThreads);
  ValueRange loop = kb.forLoop(
      kb.i32(0), kb.i32(chunks), kb.i32(1), {oldest},
      [&](Value chunk, ValueRange carried) -> SmallVector<Value> {
        Value slot =
            kb.add(kb.mul(chunk, kb.i32(kDelayedScaleThreads)), tid);
        Value next = kb.add(slot, kb.i32(1));
        // new[slot] = old[slot + 1], or old[0] for the last slot (and, past
        // the end, a value that changes no maximum).
        auto ifOp = scf::IfOp::create(b, b.getF32Type(),
                                      kb.ult(next, kb.i32(length)),
                                      /*withElseRegion=*/true);
        {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(ifOp.thenBlock());
          scf::YieldOp::create(b, kb.loadF32(history, next));
          b.setInsertionPointToStart(ifOp.elseBlock());
          scf::YieldOp::create(b, oldest);
        }
        Value value = ifOp.getResult(0);
        gpu::BarrierOp::create(b);
        kb.ifThen(kb.ult(slot, kb.i32(length)), [&] {
          Value rolled = select(kb.eq(slot, kb.i32(0)), kb.f32(0.f), value);
          kb.store(rolled, kb.globalElementPtr(history, slot, 4));
        });
        return {maxnum(carried[0], value)};
      });
  return {loop[0], oldest};
}

Value ScaleKernelEmitter::emitCtaMaxNum(Value v) {
  for (int32_t offset : {16, 8, 4, 2, 1}) {
    auto shuffle = gpu::ShuffleOp::create(b, v, offset, kWarpThreads,
                                          gpu::ShuffleMode::XOR);
    v = maxnum(v, shuffle.getShuffleResult());
  }
  Value tid = kb.threadIdX();
  Value scratch = kb.dynamicSharedMemory();
  kb.ifThen(kb.eq(kb.remu(tid, kb.i32(kWarpThreads)), kb.i32(0)), [&] {
    kb.store(v, kb.bytePtr(scratch, kb.mul(kb.divu(tid, kb.i32(kWarpThreads)),
                                           kb.i32(4))));
  });
  gpu::BarrierOp::create(b);
  Value result = kb.load(b.getF32Type(), scratch);
  for (int64_t w = 1; w < kDelayedScaleThreads / kWarpThreads; ++w)
    result = maxnum(result, kb.load(b.getF32Type(), kb.bytePtr(scratch, 4 * w)));
  return result;
}

void ScaleKernelEmitter::emitDelayedScale(Value history, Value previousScale,
                                          Value scale, Value scaleInv) {
  auto [threadMax, oldest] = emitRollHistory(history);
  // historyAmax: slot 0 (most_recent) or maxNum over the history.
  Value amax = p.mostRecent ? oldest : emitCtaMaxNum(threadMax);
  kb.ifThen(kb.eq(kb.threadIdX(), kb.i32(0)), [&] {
    // delayedScalingScale: fp8_max * 2^-margin (exact, folded here) over a
    // finite, positive amax, else the previous scale; inf -> FLT_MAX.
    num::Format format = isa<Float8E5M2Type>(p.elementType)
                             ? num::Format::E5M2
                             : num::Format::E4M3;
    float scaledMax =
        std::ldexp(num::maxFinite(format), -static_cast<int>(p.margin));
    Value finite = kb.ult(kb.absF32Bits(amax), kb.i32(kF32Inf));
    Value positive = cmpf(arith::CmpFPredicate::OGT, amax, kb.f32(0.f));
    Value usable = kb.andi(finite, positive);
    Value fresh = arith::DivFOp::create(b, kb.f32(scaledMax), amax);
    Value previous = kb.loadF32(previousScale, kb.i32(0));
    Value s = select(usable, fresh, previous);
    s = emitFiniteOrFltMax(b, s);
    kb.store(s, scale);
    kb.store(arith::DivFOp::create(b, kb.f32(1.f), s), scaleInv);
  });
}

void ScaleKernelEmitter::emit(Block &entry) {
  auto arg = [&](unsigned i) { return entry.getArgument(i); };
  switch (p.kind) {
  case Kind::CurrentScale:
    emitCurrentScale(arg(0), arg(1), arg(2));
    break;
  case Kind::DelayedScale:
    emitDelayedScale(arg(0), arg(1), arg(2), arg(3));
    break;
  case Kind::RecordAmax:
    emitRecordAmax(arg(0), arg(1));
    break;
  }
  gpu::ReturnOp::create(b);
}

gpu::GPUFuncOp mlir::fp8::buildScaleKernel(OpBuilder &builder, Location loc,
                                           gpu::GPUModuleOp module,
                                           StringRef name,
                                           const ScaleKernelProblem &p) {
  int64_t numPointers = p.kind == Kind::CurrentScale   ? 3
                        : p.kind == Kind::DelayedScale ? 4
                                                       : 2;
  gpu::GPUFuncOp func = createPointerKernel(builder, loc, module, name,
                                            numPointers, p.numThreads());
  OpBuilder::InsertionGuard guard(builder);
  Block &entry = func.getBody().front();
  builder.setInsertionPointToStart(&entry);
  ImplicitLocOpBuilder b(loc, builder);
  ScaleKernelEmitter(b, p).emit(entry);
  return func;
}
