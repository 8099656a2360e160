//===- BlackwellGemm.cpp - Warp-specialized FP8 GEMM for sm_100a ----------===//
//
// The kernel's composition: its function and shared-memory plan, the
// barriers, the Tensor Memory allocation and the CTA pair's cluster, then
// the warp roles (BlackwellMainloop, BlackwellEpilogue). The layout is in
// BlackwellKernel.h; the tiling in BlackwellTiling.cpp.
//
//===----------------------------------------------------------------------===//

#include "FP8/Conversion/FP8ToBlackwell/BlackwellGemm.h"
#include "FP8/Conversion/FP8ToBlackwell/BlackwellEpilogue.h"
#include "FP8/Conversion/FP8ToBlackwell/BlackwellKernel.h"
#include "FP8/Conversion/FP8ToBlackwell/BlackwellMainloop.h"
#include "FP8/Conversion/FP8ToBlackwell/TCGen05.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::blackwell;

gpu::GPUFuncOp blackwell::buildGemmKernel(OpBuilder &builder, Location loc,
                                          gpu::GPUModuleOp module,
                                          StringRef name,
                                          const BlackwellGemm &g,
                                          const GemmTiling &t) {
  const GemmProblem &p = g.problem;
  ensureDynamicSharedMemory(builder, loc, module);
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(module.getBody());
  ImplicitLocOpBuilder b(loc, builder);
  KernelBuilder kb(b);

  KernelValues v{};
  auto func = createGemmKernelFunc(b, loc, name, p, t, kNumThreads, v);
  bool pair = isCtaPair(t);
  CtaGroup group = getCtaGroup(t);

  v.tid = kb.threadIdX();
  v.warp = kb.divu(v.tid, kb.i32(kWarpThreads));
  v.smem = kb.dynamicSharedMemory();
  // Shared memory: stages, staging buffer, MX scale atoms, ring barriers,
  // accumulator barriers, TMEM address slot.
  int64_t offset = t.stages * getCtaStageBytes(t);
  v.epilogueBuffer = kb.bytePtr(v.smem, offset);
  offset += getCtaEpilogueBytes(t);
  v.scaleBuffer = kb.bytePtr(v.smem, offset);
  offset += t.stages * getScaleStageBytes(g, t);
  v.ring = PipelineRing(kb.bytePtr(v.smem, offset), t.stages);
  offset += PipelineRing::barrierBytes(t.stages);
  v.accFullBase = kb.bytePtr(v.smem, offset);
  offset += 8 * kAccumulatorStages;
  v.accEmptyBase = kb.bytePtr(v.smem, offset);
  offset += 8 * kAccumulatorStages;
  v.tmemSlot = kb.bytePtr(v.smem, offset);
  int64_t tmemColumnsOrZero = getTmemColumns(g, t);
  uint32_t tmemColumns = static_cast<uint32_t>(expectEncoded(
      tmemColumnsOrZero ? std::optional<uint64_t>(tmemColumnsOrZero)
                        : std::nullopt,
      "TMEM allocation"));
  int64_t accStages = getAccumulatorStages(g, t);

  kb.ifThen(kb.eq(v.tid, kb.i32(0)), [&] {
    // Full: the producer's expect_tx arrival; empty: one tcgen05.commit.
    v.ring.init(kb, /*producerArrivals=*/1, /*consumerArrivals=*/1);
    for (int64_t s = 0; s < accStages; ++s) {
      kb.mbarrierInit(kb.bytePtr(v.accFullBase, 8 * s), 1);
      // The pair's leader waits for both CTAs' epilogues.
      kb.mbarrierInit(kb.bytePtr(v.accEmptyBase, 8 * s),
                      kEpilogueThreads * t.clusterM);
    }
    kb.prefetchTensorMap(v.tmaA);
    kb.prefetchTensorMap(v.tmaB);
    if (v.tmaD)
      kb.prefetchTensorMap(v.tmaD);
    if (t.scaleTensorMaps) {
      kb.prefetchTensorMap(v.aScaleInv);
      kb.prefetchTensorMap(v.bScaleInv);
    }
  });
  Value isMmaWarp = kb.eq(v.warp, kb.i32(kMmaWarp));
  // cta_group::2: the MMA warps of both CTAs allocate together (the same
  // columns in both Tensor Memories).
  kb.ifThen(isMmaWarp, [&] {
    emitTmemAlloc(kb, v.tmemSlot, tmemColumns, group);
    emitTmemRelinquishAllocPermit(kb, group);
  });
  // The TMEM address (and the barriers) are visible to every thread after
  // the barrier; the fences order the allocation around it.
  emitFenceBeforeThreadSync(kb);
  if (pair) {
    // The peer's TMA loads, commits and arrivals reach this CTA's
    // barriers: they must be initialized cluster-wide first.
    kb.ifThen(kb.eq(v.tid, kb.i32(0)), [&] { kb.fenceMBarrierInitCluster(); });
    kb.clusterSync();
    v.clusterRank = kb.clusterCtaRank();
    v.firstUnit = kb.divu(kb.blockIdX(), kb.i32(t.clusterM));
    v.unitStride = kb.divu(kb.gridDimX(), kb.i32(t.clusterM));
  } else {
    gpu::BarrierOp::create(b);
  }
  emitFenceAfterThreadSync(kb);
  Value tmemBase = kb.load(b.getI32Type(), v.tmemSlot);

  v.numMTiles = kb.ceilDiv(v.m, t.tileM);
  v.numTiles = kb.mul(v.numMTiles, kb.i32(t.numNTiles(p.n)));

  // Nothing above touches global memory (programmatic launch).
  kb.gridDependencySync();

  Value isEpilogue = arith::CmpIOp::create(
      b, arith::CmpIPredicate::uge, v.tid,
      kb.i32(kFirstEpilogueWarpgroup * kWarpgroupThreads));
  auto roles = scf::IfOp::create(b, isEpilogue, /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard roleGuard(b);
    b.setInsertionPoint(roles.thenBlock()->getTerminator());
    emitEpilogue(kb, g, t, v, tmemBase);
    b.setInsertionPoint(roles.elseBlock()->getTerminator());
    kb.ifThen(kb.eq(v.warp, kb.i32(kProducerWarp)),
              [&] { emitProducer(kb, g, t, v); });
    // The pair's leader issues every MMA (cta_group::2).
    Value isIssuerWarp = isMmaWarp;
    if (pair)
      isIssuerWarp = kb.andi(isMmaWarp, kb.eq(v.clusterRank, kb.i32(0)));
    kb.ifThen(isIssuerWarp, [&] { emitMmaIssuer(kb, g, t, v, tmemBase); });
  }
  // Every TMEM read and MMA is done before the allocating warp frees it
  // (with a pair: in both CTAs, whose warps free together; neither CTA
  // leaves while its peer may still signal its barriers).
  emitFenceBeforeThreadSync(kb);
  if (pair)
    kb.clusterSync();
  else
    gpu::BarrierOp::create(b);
  kb.ifThen(isMmaWarp, [&] {
    emitFenceAfterThreadSync(kb);
    emitTmemDealloc(kb, tmemBase, tmemColumns, group);
  });
  gpu::ReturnOp::create(b);
  return func;
}
