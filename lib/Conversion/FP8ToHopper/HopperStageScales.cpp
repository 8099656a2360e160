//===- HopperStageScales.cpp - Blockwise scales of a stage ----------------===//

#include "FP8/Conversion/FP8ToHopper/HopperStageScales.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::hopper;

/// The suspend-time hint of the consumers' try_wait (KernelBuilder's).
static constexpr int64_t kMBarrierSuspendTimeHintNs = 10000000;

SmallVector<Value> hopper::emitColumnScaleLoads(KernelBuilder &kb,
                                                Value columnScales,
                                                Value colInFragment,
                                                int64_t firstColumn,
                                                int64_t columns) {
  ImplicitLocOpBuilder &b = kb.builder();
  auto f32x2 = VectorType::get({2}, b.getF32Type());
  SmallVector<Value> scales;
  for (int64_t j = firstColumn / 8; j < (firstColumn + columns) / 8; ++j) {
    Value col = kb.add(kb.i32(8 * j), colInFragment);
    Value pair =
        kb.load(f32x2, kb.bytePtr(columnScales, kb.mul(col, kb.i32(4))));
    for (int e = 0; e < 2; ++e)
      scales.push_back(LLVM::ExtractElementOp::create(b, pair, kb.i32(e)));
  }
  return scales;
}

SmallVector<Value> hopper::emitRowAndClassScaleLoads(KernelBuilder &kb,
                                                     const GemmTiling &t,
                                                     const KernelValues &v,
                                                     Value rowInTile,
                                                     Value stage) {
  ImplicitLocOpBuilder &b = kb.builder();
  Value slot = v.scaleSlot(kb, t, stage);
  SmallVector<Value> scales;
  for (int h = 0; h < 2; ++h)
    scales.push_back(kb.load(
        b.getF32Type(),
        kb.bytePtr(slot, kb.mul(kb.add(rowInTile, kb.i32(8 * h)), kb.i32(4)))));
  Value classScales = kb.bytePtr(slot, 4 * t.tileM);
  for (int64_t c = 0, e = BScaleClasses(t).bounds.size(); c < e; ++c)
    scales.push_back(
        kb.load(b.getF32Type(), kb.bytePtr(classScales, 4 * c)));
  return scales;
}

/// KernelBuilder::mbarrierWait's loop exits on each lane's own try_wait
/// result, which ptxas treats as a divergent loop: one anywhere in the K
/// loop but at the top of its body (or before the K loop) makes ptxas
/// compute the stage offsets, and with them the wgmma descriptors, in
/// vector registers and move each descriptor into uniform registers before
/// its wgmma (32 R2UR per K block at 128x192; bench/NOTES.md, "Scales
/// (blockwise)"). Voted over the warp, the exit is warp-uniform and the
/// descriptors stay in uniform registers.
void hopper::emitWarpUniformMBarrierWait(KernelBuilder &kb, Value barrier,
                                         Value parity) {
  ImplicitLocOpBuilder &b = kb.builder();
  kb.whileLoop(
      /*init=*/{},
      [&](ValueRange) {
        Value done = NVVM::MBarrierTryWaitOp::create(
            b, b.getI1Type(), barrier, parity,
            kb.i32(kMBarrierSuspendTimeHintNs), NVVM::MemScopeKind::CTA,
            /*relaxed=*/false);
        Value everyLane = NVVM::VoteSyncOp::create(
            b, b.getI1Type(), kb.i32(-1), done, NVVM::VoteSyncKind::all);
        return arith::XOrIOp::create(b, everyLane,
                                     arith::ConstantIntOp::create(b, 1, 1));
      },
      [](ValueRange) { return SmallVector<Value>{}; });
}

SmallVector<Value> hopper::emitRowAndClassScalesOfIteration(
    KernelBuilder &kb, const GemmTiling &t, const KernelValues &v,
    Value rowInTile, Value cond, Value iteration, ValueRange otherwise) {
  ImplicitLocOpBuilder &b = kb.builder();
  auto ifOp = scf::IfOp::create(b, otherwise.getTypes(), cond,
                                /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  Value stage = v.ring.stage(kb, iteration);
  emitWarpUniformMBarrierWait(kb, v.ring.fullBarrier(kb, stage),
                              v.ring.consumerParity(kb, iteration));
  scf::YieldOp::create(
      b, emitRowAndClassScaleLoads(kb, t, v, rowInTile, stage));
  b.setInsertionPointToStart(ifOp.elseBlock());
  scf::YieldOp::create(b, otherwise);
  return SmallVector<Value>(ifOp.getResults());
}
