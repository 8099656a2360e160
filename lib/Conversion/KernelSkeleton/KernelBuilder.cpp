//===- KernelBuilder.cpp - Emission helpers for GPU kernels ---------------===//

#include "FP8/Conversion/KernelSkeleton/KernelBuilder.h"

using namespace mlir;
using namespace mlir::fp8;

/// Suspend-time hint of mbarrier.try_wait, in ns: long enough that a
/// waiting warp sleeps instead of spinning on the barrier.
static constexpr int64_t kMBarrierSuspendTimeHintNs = 10000000;

Value KernelBuilder::i32(int64_t v) {
  return arith::ConstantIntOp::create(b, v, 32);
}
Value KernelBuilder::i64(int64_t v) {
  return arith::ConstantIntOp::create(b, v, 64);
}
Value KernelBuilder::f32(float v) {
  return arith::ConstantFloatOp::create(b, b.getF32Type(), APFloat(v));
}
Value KernelBuilder::add(Value x, Value y) { return arith::AddIOp::create(b, x, y); }
Value KernelBuilder::sub(Value x, Value y) { return arith::SubIOp::create(b, x, y); }
Value KernelBuilder::mul(Value x, Value y) { return arith::MulIOp::create(b, x, y); }
Value KernelBuilder::divu(Value x, Value y) { return arith::DivUIOp::create(b, x, y); }
Value KernelBuilder::remu(Value x, Value y) { return arith::RemUIOp::create(b, x, y); }
Value KernelBuilder::minu(Value x, Value y) { return arith::MinUIOp::create(b, x, y); }
Value KernelBuilder::andi(Value x, Value y) { return arith::AndIOp::create(b, x, y); }
Value KernelBuilder::absF32Bits(Value x) {
  return andi(arith::BitcastOp::create(b, b.getI32Type(), x), i32(0x7fffffff));
}
Value KernelBuilder::ceilDiv(Value x, int64_t d) {
  return divu(add(x, i32(d - 1)), i32(d));
}
Value KernelBuilder::ceilDiv(Value x, Value d) {
  return divu(sub(add(x, d), i32(1)), d);
}
Value KernelBuilder::eq(Value x, Value y) {
  return arith::CmpIOp::create(b, arith::CmpIPredicate::eq, x, y);
}
Value KernelBuilder::ult(Value x, Value y) {
  return arith::CmpIOp::create(b, arith::CmpIPredicate::ult, x, y);
}

static Value indexToI32(ImplicitLocOpBuilder &b, Value index) {
  return arith::IndexCastUIOp::create(b, b.getI32Type(), index);
}
Value KernelBuilder::threadIdX() {
  return indexToI32(b, gpu::ThreadIdOp::create(b, gpu::Dimension::x));
}
Value KernelBuilder::blockIdX() {
  return indexToI32(b, gpu::BlockIdOp::create(b, gpu::Dimension::x));
}
Value KernelBuilder::gridDimX() {
  return indexToI32(b, gpu::GridDimOp::create(b, gpu::Dimension::x));
}

Type KernelBuilder::ptrType(AddressSpace space) {
  return LLVM::LLVMPointerType::get(b.getContext(),
                                    static_cast<unsigned>(space));
}

Value KernelBuilder::dynamicSharedMemory() {
  return LLVM::AddressOfOp::create(b, ptrType(AddressSpace::Shared),
                                   kDynamicSharedMemorySymbol);
}

Value KernelBuilder::bytePtr(Value base, Value offset) {
  return LLVM::GEPOp::create(b, base.getType(), b.getI8Type(), base,
                             ValueRange{offset});
}

Value KernelBuilder::sharedAddress(Value sharedPtr) {
  Value asInt = LLVM::PtrToIntOp::create(b, b.getI64Type(), sharedPtr);
  return arith::TruncIOp::create(b, b.getI32Type(), asInt);
}

Value KernelBuilder::load(Type type, Value ptr) {
  return LLVM::LoadOp::create(b, type, ptr);
}
void KernelBuilder::store(Value value, Value ptr) {
  LLVM::StoreOp::create(b, value, ptr);
}

/// The LLVM sync scope NVPTX emits as `.gpu`.
static constexpr StringLiteral kDeviceSyncScope = "device";

Value KernelBuilder::loadAcquireGpu(Value ptr) {
  return LLVM::LoadOp::create(b, b.getI32Type(), ptr, /*alignment=*/4,
                              /*isVolatile=*/false, /*isNonTemporal=*/false,
                              /*isInvariant=*/false, /*isInvariantGroup=*/false,
                              LLVM::AtomicOrdering::acquire, kDeviceSyncScope);
}
void KernelBuilder::storeRelaxedGpu(Value value, Value ptr) {
  LLVM::StoreOp::create(b, value, ptr, /*alignment=*/4, /*isVolatile=*/false,
                        /*isNonTemporal=*/false, /*isInvariantGroup=*/false,
                        LLVM::AtomicOrdering::monotonic, kDeviceSyncScope);
}
void KernelBuilder::fenceAcqRelGpu() {
  LLVM::FenceOp::create(b, LLVM::AtomicOrdering::acq_rel, kDeviceSyncScope);
}

Value KernelBuilder::globalElementPtr(Value base, Value index,
                                      int64_t elementBytes) {
  Value wide = index.getType().isInteger(64)
                   ? index
                   : arith::ExtUIOp::create(b, b.getI64Type(), index);
  return bytePtr(base, arith::MulIOp::create(b, wide, i64(elementBytes)));
}

Value KernelBuilder::loadF32(Value base, Value index) {
  return load(b.getF32Type(), globalElementPtr(base, index, 4));
}

void mlir::fp8::ensureDynamicSharedMemory(OpBuilder &builder, Location loc,
                                          gpu::GPUModuleOp module) {
  if (module.lookupSymbol(kDynamicSharedMemorySymbol))
    return;
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(module.getBody());
  auto type = LLVM::LLVMArrayType::get(builder.getI8Type(), 0);
  LLVM::GlobalOp::create(builder, loc, type, /*isConstant=*/false,
                         LLVM::Linkage::External, kDynamicSharedMemorySymbol,
                         Attribute(), kDynamicSharedMemoryAlignment,
                         static_cast<unsigned>(AddressSpace::Shared));
}

gpu::GPUFuncOp mlir::fp8::createPointerKernel(OpBuilder &builder, Location loc,
                                              gpu::GPUModuleOp module,
                                              StringRef name,
                                              int64_t numPointers,
                                              int64_t threads,
                                              TypeRange trailingArgs) {
  OpBuilder::InsertionGuard guard(builder);
  ensureDynamicSharedMemory(builder, loc, module);
  builder.setInsertionPointToEnd(module.getBody());
  Type global = LLVM::LLVMPointerType::get(
      builder.getContext(), static_cast<unsigned>(AddressSpace::Global));
  SmallVector<Type> argTypes(numPointers, global);
  llvm::append_range(argTypes, trailingArgs);
  auto func = gpu::GPUFuncOp::create(builder, loc, name,
                                     builder.getFunctionType(argTypes, {}));
  func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(),
                builder.getUnitAttr());
  func->setAttr(NVVM::NVVMDialect::getMaxntidAttrName(),
                builder.getDenseI32ArrayAttr(
                    {static_cast<int32_t>(threads), 1, 1}));
  return func;
}

void KernelBuilder::mbarrierInit(Value barrier, int64_t arrivals) {
  NVVM::MBarrierInitOp::create(b, barrier, i32(arrivals), /*predicate=*/Value());
}

void KernelBuilder::mbarrierArriveExpectTx(Value barrier, int64_t bytes) {
  mbarrierArriveExpectTx(barrier, i32(bytes));
}

void KernelBuilder::mbarrierArriveExpectTx(Value barrier, Value bytes) {
  NVVM::MBarrierArriveExpectTxOp::create(b, /*res=*/Type(), barrier, bytes,
                                         NVVM::MemScopeKind::CTA,
                                         /*relaxed=*/false,
                                         /*predicate=*/Value());
}

void KernelBuilder::mbarrierArrive(Value barrier) {
  NVVM::MBarrierArriveOp::create(b, /*res=*/Type(), barrier, /*count=*/Value(),
                                 NVVM::MemScopeKind::CTA, /*relaxed=*/false);
}

void KernelBuilder::mbarrierWait(Value barrier, Value parity) {
  NVVM::MBarrierTryWaitParityOp::create(b, barrier, parity,
                                        i32(kMBarrierSuspendTimeHintNs));
}

void KernelBuilder::mbarrierArriveCluster(Value barrier) {
  NVVM::MBarrierArriveOp::create(b, /*res=*/Type(), barrier, /*count=*/Value(),
                                 NVVM::MemScopeKind::CLUSTER,
                                 /*relaxed=*/false);
}

void KernelBuilder::mbarrierWaitCluster(Value barrier, Value parity) {
  whileLoop(
      {},
      [&](ValueRange) {
        Value done = NVVM::MBarrierTryWaitOp::create(
            b, b.getI1Type(), barrier, parity,
            i32(kMBarrierSuspendTimeHintNs), NVVM::MemScopeKind::CLUSTER,
            /*relaxed=*/false);
        return arith::XOrIOp::create(
                   b, done, arith::ConstantIntOp::create(b, 1, 1))
            .getResult();
      },
      [](ValueRange) { return SmallVector<Value>{}; });
}

void KernelBuilder::cpAsync(Value dst, Value src, int64_t bytes) {
  // .ca: 4- and 8-byte copies take no other cache operator.
  NVVM::CpAsyncOp::create(b, dst, src, static_cast<uint32_t>(bytes),
                          NVVM::LoadCacheModifierKind::CA,
                          /*cpSize=*/Value());
}

void KernelBuilder::cpAsyncArriveOn(Value barrier) {
  NVVM::CpAsyncMBarrierArriveOp::create(b, barrier, /*noinc=*/true);
}

void KernelBuilder::tmaLoad(Value dst, Value tensorMap, ValueRange coordinates,
                            Value barrier, Value multicastMask) {
  // The `.shared::cluster` form takes a shared::cluster address; a CTA's own
  // shared address is a valid one (PTX ISA 9.7.9.25.5.1).
  Value clusterDst = LLVM::AddrSpaceCastOp::create(
      b, ptrType(AddressSpace::SharedCluster), dst);
  NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
      b, clusterDst, tensorMap, coordinates, barrier,
      /*im2colOffsets=*/ValueRange{}, multicastMask,
      /*l2CacheHint=*/Value(), NVVM::TMALoadMode::TILE, /*isCTAOnly=*/false,
      /*group=*/NVVM::CTAGroupKindAttr(), /*predicate=*/Value());
}

void KernelBuilder::tmaStore2d(Value tensorMap, Value src, Value inner,
                               Value outer) {
  NVVM::CpAsyncBulkTensorSharedCTAToGlobalOp::create(
      b, tensorMap, src, ValueRange{inner, outer}, /*l2CacheHint=*/Value(),
      NVVM::TMAStoreMode::TILE, /*predicate=*/Value());
}

void KernelBuilder::bulkCommitGroup() { NVVM::CpAsyncBulkCommitGroupOp::create(b); }

void KernelBuilder::bulkWaitGroup(int64_t pending, bool readOnly) {
  NVVM::CpAsyncBulkWaitGroupOp::create(b, static_cast<uint32_t>(pending),
                                       readOnly ? b.getUnitAttr() : UnitAttr());
}

void KernelBuilder::fenceProxyAsyncShared() {
  NVVM::FenceProxyOp::create(
      b, NVVM::ProxyKind::async_shared,
      NVVM::SharedSpaceAttr::get(b.getContext(), NVVM::SharedSpace::shared_cta));
}

void KernelBuilder::namedBarrier(int64_t id, int64_t threads) {
  namedBarrier(i32(id), threads);
}

void KernelBuilder::namedBarrier(Value id, int64_t threads) {
  NVVM::BarrierOp::create(b, /*res=*/Type(), id, i32(threads),
                          /*reductionOp=*/NVVM::BarrierReductionAttr(),
                          /*reductionPredicate=*/Value());
}

void KernelBuilder::namedBarrierArrive(Value id, int64_t threads) {
  NVVM::BarrierArriveOp::create(b, id, i32(threads));
}

void KernelBuilder::syncWarp() {
  NVVM::SyncWarpOp::create(b, i32(-1));
}

Value KernelBuilder::electOneLane() {
  return NVVM::ElectSyncOp::create(b, b.getI1Type(), /*membermask=*/Value());
}

void KernelBuilder::prefetchTensorMap(Value tensorMap) {
  NVVM::PrefetchOp::create(b, /*cacheLevel=*/NVVM::PrefetchCacheLevelAttr(),
                           /*evictPriority=*/NVVM::CacheEvictionPriorityAttr(),
                           tensorMap, /*predicate=*/Value(),
                           /*tensormap=*/b.getUnitAttr());
}

void KernelBuilder::gridDependencySync() {
  NVVM::GriddepcontrolOp::create(b, NVVM::GridDepActionKind::wait);
  NVVM::GriddepcontrolOp::create(b, NVVM::GridDepActionKind::launch_dependents);
}

Value KernelBuilder::clusterCtaRank() {
  return NVVM::ClusterId::create(b, b.getI32Type());
}

void KernelBuilder::clusterSync() {
  NVVM::ClusterArriveOp::create(b, /*aligned=*/b.getUnitAttr());
  NVVM::ClusterWaitOp::create(b, /*aligned=*/b.getUnitAttr());
}

void KernelBuilder::fenceMBarrierInitCluster() {
  NVVM::FenceMbarrierInitOp::create(b);
}

Value KernelBuilder::mapToClusterRank(Value sharedPtr, Value rank) {
  return NVVM::MapaOp::create(b, ptrType(AddressSpace::SharedCluster),
                              sharedPtr, rank);
}

void KernelBuilder::ifThen(Value cond, function_ref<void()> thenBody) {
  auto ifOp = scf::IfOp::create(b, cond, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
  thenBody();
}

ValueRange
KernelBuilder::forLoop(Value lb, Value ub, Value step, ValueRange init,
                       function_ref<SmallVector<Value>(Value, ValueRange)> body) {
  auto forOp = scf::ForOp::create(b, lb, ub, step, init);
  {
    OpBuilder::InsertionGuard guard(b);
    Block *block = forOp.getBody();
    if (!block->empty() && isa<scf::YieldOp>(block->back()))
      block->back().erase();
    b.setInsertionPointToEnd(block);
    SmallVector<Value> next =
        body(forOp.getInductionVar(), forOp.getRegionIterArgs());
    scf::YieldOp::create(b, next);
  }
  return forOp.getResults();
}

ValueRange
KernelBuilder::whileLoop(ValueRange init, function_ref<Value(ValueRange)> cond,
                         function_ref<SmallVector<Value>(ValueRange)> body) {
  SmallVector<Location> locs(init.size(), b.getLoc());
  auto whileOp = scf::WhileOp::create(b, init.getTypes(), init);
  OpBuilder::InsertionGuard guard(b);
  Block *before =
      b.createBlock(&whileOp.getBefore(), {}, init.getTypes(), locs);
  scf::ConditionOp::create(b, cond(before->getArguments()),
                           before->getArguments());
  Block *after = b.createBlock(&whileOp.getAfter(), {}, init.getTypes(), locs);
  scf::YieldOp::create(b, body(after->getArguments()));
  return whileOp.getResults();
}

//===----------------------------------------------------------------------===//
// PipelineRing
//===----------------------------------------------------------------------===//

void PipelineRing::init(KernelBuilder &kb, int64_t producerArrivals,
                        int64_t consumerArrivals) const {
  for (int64_t s = 0; s < stages; ++s) {
    kb.mbarrierInit(kb.bytePtr(barrierBase, 8 * s), producerArrivals);
    kb.mbarrierInit(kb.bytePtr(barrierBase, 8 * (stages + s)), consumerArrivals);
  }
}

Value PipelineRing::stage(KernelBuilder &kb, Value iteration) const {
  return kb.remu(iteration, kb.i32(stages));
}

std::pair<Value, Value> PipelineRing::advance(KernelBuilder &kb, Value stage,
                                             Value parity) const {
  ImplicitLocOpBuilder &b = kb.builder();
  Value wraps = kb.eq(stage, kb.i32(stages - 1));
  Value next =
      arith::SelectOp::create(b, wraps, kb.i32(0), kb.add(stage, kb.i32(1)));
  Value flipped = arith::XOrIOp::create(b, parity, kb.i32(1));
  return {next, arith::SelectOp::create(b, wraps, flipped, parity)};
}

Value PipelineRing::fullBarrier(KernelBuilder &kb, Value stage) const {
  return kb.bytePtr(barrierBase, kb.mul(stage, kb.i32(8)));
}

Value PipelineRing::emptyBarrier(KernelBuilder &kb, Value stage) const {
  return kb.bytePtr(barrierBase, kb.add(kb.mul(stage, kb.i32(8)),
                                        kb.i32(8 * stages)));
}

Value PipelineRing::consumerParity(KernelBuilder &kb, Value iteration) const {
  return kb.andi(kb.divu(iteration, kb.i32(stages)), kb.i32(1));
}

Value PipelineRing::producerParity(KernelBuilder &kb, Value iteration) const {
  Value round = kb.divu(iteration, kb.i32(stages));
  return kb.andi(kb.add(round, kb.i32(1)), kb.i32(1));
}
