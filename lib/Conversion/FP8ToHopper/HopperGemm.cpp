//===- HopperGemm.cpp - Warp-specialized FP8 GEMM for sm_90a --------------===//
//
// The kernel's composition: its function and shared-memory plan, the
// barriers, the cluster and the stream-K schedule, then the warpgroup roles
// (HopperMainloop) over the work the scheduler gives (HopperScheduler).
// The layout is in HopperKernel.h; the tiling in HopperTiling.cpp.
//
//===----------------------------------------------------------------------===//

#include "FP8/Conversion/FP8ToHopper/HopperGemm.h"
#include "FP8/Conversion/FP8ToHopper/HopperKernel.h"
#include "FP8/Conversion/FP8ToHopper/HopperMainloop.h"
#include "FP8/Conversion/FP8ToHopper/HopperScheduler.h"
#include "FP8/Conversion/FP8ToHopper/HopperSwapAB.h"
#include "FP8/Conversion/KernelSkeleton/GemmOutputQuantization.h"

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::hopper;

/// Arrivals that fill a stage (its full barrier's count): the TMA thread's
/// (with the transaction bytes), and its cp.async copies' of 128x128 B
/// scales (emitScaleCopies).
static int64_t getProducerArrivals(const GemmProblem &p, const GemmTiling &t) {
  return t.stageScaleBytes && !p.hasBlockwiseColumnScales() ? 2 : 1;
}

/// Arrivals that free a stage (its empty barrier's count): one per warp of
/// the consumers of its tile in the cluster's CTAs, or one per consumer
/// thread when the stage has a scale slot (each thread's arrival releases
/// its own reads of it).
static int64_t getConsumerArrivals(const GemmTiling &t) {
  int64_t perWarpgroup =
      t.stageScaleBytes ? kWarpgroupThreads : kWarpgroupThreads / kWarpThreads;
  return getConsumersPerTile(t) * perWarpgroup * getClusterSize(t);
}

gpu::GPUFuncOp hopper::buildGemmKernel(OpBuilder &builder, Location loc,
                                       gpu::GPUModuleOp module, StringRef name,
                                       const GemmProblem &p,
                                       const GemmTiling &t) {
  ensureDynamicSharedMemory(builder, loc, module);
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(module.getBody());
  ImplicitLocOpBuilder b(loc, builder);
  KernelBuilder kb(b);

  KernelValues v{};
  auto func = createGemmKernelFunc(b, loc, name, p, t, getNumThreads(t), v);

  v.tid = kb.threadIdX();
  v.smem = kb.dynamicSharedMemory();
  // Shared memory: the stage ring, the output staging buffer, the barriers.
  v.epilogueBuffer = kb.bytePtr(v.smem, t.stages * getStageBytes(t));
  int64_t scaleSlotsOffset = t.stages * getStageBytes(t) + getEpilogueBytes(t);
  v.scaleSlots = kb.bytePtr(v.smem, scaleSlotsOffset);
  v.ring = PipelineRing(
      kb.bytePtr(v.smem, scaleSlotsOffset + t.stages * t.stageScaleBytes),
      t.stages);
  if (t.splitK > 1)
    v.splitK = kb.bytePtr(v.smem, getSplitKOffset(t));
  kb.ifThen(kb.eq(v.tid, kb.i32(0)), [&] {
    v.ring.init(kb,
                /*producerArrivals=*/getProducerArrivals(p, t),
                /*consumerArrivals=*/getConsumerArrivals(t));
    if (v.splitK)
      initSplitKBarriers(kb, t, v);
    kb.prefetchTensorMap(v.tmaA);
    kb.prefetchTensorMap(v.tmaB);
    if (v.tmaD)
      kb.prefetchTensorMap(v.tmaD);
  });
  if (t.clusterCtas() > 1) {
    // The peer CTA multicasts into this CTA's stages and arrives on its
    // barriers (a K-split cluster's CTAs arrive on each other's split-K
    // barriers): they must be initialized cluster-wide first.
    kb.ifThen(kb.eq(v.tid, kb.i32(0)), [&] { kb.fenceMBarrierInitCluster(); });
    kb.clusterSync();
    v.clusterRank = kb.clusterCtaRank();
    v.firstUnit = kb.divu(kb.blockIdX(), kb.i32(t.clusterCtas()));
    v.unitStride = kb.divu(kb.gridDimX(), kb.i32(t.clusterCtas()));
  } else {
    gpu::BarrierOp::create(b);
    v.clusterRank = kb.i32(0);
    v.firstUnit = kb.blockIdX();
    v.unitStride = kb.gridDimX();
  }
  if (!p.isMasked()) {
    Value numMTiles = kb.ceilDiv(v.m, t.tileM);
    // k_grouped: G groups of M rows each, every tile walked
    // (emitKGroupedTile).
    if (p.isKGrouped()) {
      v.groupM = v.m;
      numMTiles = kb.mul(numMTiles, kb.i32(p.numGroups));
    }
    v.numMUnits =
        t.clusterM > 1 ? kb.ceilDiv(numMTiles, t.clusterM) : numMTiles;
    v.numUnits = kb.mul(v.numMUnits, kb.i32(getNumNUnits(p, t)));
  }
  if (t.streamK) {
    assert(!p.isGrouped() && "grouped GEMMs walk whole tiles");
    v.streamKSchedule = kb.bytePtr(v.smem, getStreamKScheduleOffset(t));
    kb.ifThen(kb.eq(v.tid, kb.i32(0)),
              [&] { emitStreamKSchedule(kb, p, t, v); });
    gpu::BarrierOp::create(b);
  }

  // Nothing above touches global memory (programmatic launch): the prologue
  // may overlap the end of the grid before it in the stream.
  kb.gridDependencySync();

  // A per-tensor FP8 D's scale_inv, written once.
  if (p.outQuantization == OutputQuantization::Tensor)
    kb.ifThen(kb.andi(kb.eq(v.tid, kb.i32(0)), kb.eq(kb.blockIdX(), kb.i32(0))),
              [&] { emitResultScaleInvStore(kb, v); });
  if (p.isMasked()) {
    // m_masked: G groups of M rows each, of which the units with valid rows
    // are walked (emitMaskedUnitCount); the counts are the grid before's.
    v.groupM = v.m;
    v.numUnits =
        emitMaskedUnitCount(kb, v.groupIndex, v.groupM, p.numGroups,
                            t.tileM * t.clusterM, getNumNUnits(p, t));
  }

  Value isProducer =
      kb.eq(kb.divu(v.tid, kb.i32(kWarpgroupThreads)), kb.i32(0));
  auto roles = scf::IfOp::create(b, isProducer, /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard roleGuard(b);
    b.setInsertionPoint(roles.thenBlock()->getTerminator());
    emitProducer(kb, p, t, v);
    b.setInsertionPoint(roles.elseBlock()->getTerminator());
    emitConsumer(kb, p, t, v);
  }
  // Neither CTA of a cluster may exit while the other can still multicast
  // into its shared memory or arrive on its barriers.
  if (t.clusterCtas() > 1)
    kb.clusterSync();
  gpu::ReturnOp::create(b);
  return func;
}
