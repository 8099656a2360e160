//===- KernelBuilder.h - Emission helpers for GPU kernels -------*- C++ -*-===//
//
// Small helpers over upstream GPU/NVVM/SCF/arith/LLVM ops that every kernel
// of this project uses: constants and index math on i32, the dynamic shared
// memory window, mbarrier rings, TMA loads, structured control flow. They
// emit IR; they make no decisions.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_CONVERSION_KERNELSKELETON_KERNELBUILDER_H
#define FP8_CONVERSION_KERNELSKELETON_KERNELBUILDER_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace mlir::fp8 {

/// NVVM address spaces (PTX ISA 6.4 "State spaces"; LLVM NVPTX numbering).
enum class AddressSpace : unsigned {
  Generic = 0,
  Global = 1,
  Shared = 3,
  SharedCluster = 7,
};

/// Name of the extern shared array whose address is the start of the
/// kernel's dynamic shared memory.
inline constexpr llvm::StringLiteral kDynamicSharedMemorySymbol =
    "__dynamic_smem";
/// Threads of a warp and of a warpgroup (4 warps: what wgmma and the
/// tcgen05 epilogue loads work on).
inline constexpr int64_t kWarpThreads = 32;
inline constexpr int64_t kWarpgroupThreads = 128;
/// Bytes of one row of a 128-byte swizzled tile (TMA's SWIZZLE_128B and
/// the MMAs' 128-byte swizzle mode): the span the swizzle permutes 16-byte
/// chunks in, 128 FP8 elements of a K-major tile, one TMA box's inner
/// extent.
inline constexpr int64_t kSwizzle128BRowBytes = 128;

/// Alignment of the dynamic shared memory window: 128-byte swizzled TMA
/// tiles and wgmma descriptors need 1024-byte aligned bases.
inline constexpr int64_t kDynamicSharedMemoryAlignment = 1024;

/// Declares the extern shared array of the kernels' dynamic shared memory in
/// `module` (once).
void ensureDynamicSharedMemory(OpBuilder &builder, Location loc,
                               gpu::GPUModuleOp module);

/// Creates kernel `name` at the end of `module`, taking `numPointers`
/// global pointers, with at most `threads` threads per CTA (`nvvm.maxntid`)
/// and access to the dynamic shared memory. The caller emits its body at
/// the start of the entry block. `trailingArgs`: scalar parameters after
/// the pointers (e.g. an i32 run-time extent).
gpu::GPUFuncOp createPointerKernel(OpBuilder &builder, Location loc,
                                   gpu::GPUModuleOp module, StringRef name,
                                   int64_t numPointers, int64_t threads,
                                   TypeRange trailingArgs = {});

/// Emission helpers around an ImplicitLocOpBuilder, kept at i32 for index
/// arithmetic (what the hardware registers hold).
class KernelBuilder {
public:
  explicit KernelBuilder(ImplicitLocOpBuilder &b) : b(b) {}

  ImplicitLocOpBuilder &builder() { return b; }

  // Constants and i32 arithmetic.
  Value i32(int64_t v);
  Value i64(int64_t v);
  Value f32(float v);
  Value add(Value x, Value y);
  Value sub(Value x, Value y);
  Value mul(Value x, Value y);
  Value divu(Value x, Value y);
  Value remu(Value x, Value y);
  Value minu(Value x, Value y);
  Value ceilDiv(Value x, int64_t d);
  Value ceilDiv(Value x, Value d);
  Value eq(Value x, Value y);
  Value ult(Value x, Value y);
  Value andi(Value x, Value y);
  /// |x| of an f32 as its i32 bit pattern (sign cleared): non-negative
  /// floats order as these integers, NaN above inf.
  Value absF32Bits(Value x);

  // Thread geometry, as i32.
  Value threadIdX();
  Value blockIdX();
  Value gridDimX();

  // Memory.
  Type ptrType(AddressSpace space);
  /// The start of dynamic shared memory (`!llvm.ptr<3>`).
  Value dynamicSharedMemory();
  /// `base + offset` bytes (`offset` an i32 or i64 value).
  Value bytePtr(Value base, Value offset);
  Value bytePtr(Value base, int64_t offset) { return bytePtr(base, i64(offset)); }
  /// The 32-bit shared-window address of a shared pointer (what wgmma
  /// descriptors encode).
  Value sharedAddress(Value sharedPtr);
  Value load(Type type, Value ptr);
  void store(Value value, Value ptr);
  /// `base + index * elementBytes` for a global pointer, with 64-bit math.
  Value globalElementPtr(Value base, Value index, int64_t elementBytes);
  /// The f32 at `base[index]` in global memory.
  Value loadF32(Value base, Value index);
  /// GPU-scope synchronization through global memory (PTX memory model,
  /// ISA 8): `ld.acquire.gpu` of an i32, `st.relaxed.gpu` of an i32 and
  /// `fence.acq_rel.gpu`, as LLVM atomics with the "device" sync scope.
  Value loadAcquireGpu(Value ptr);
  void storeRelaxedGpu(Value value, Value ptr);
  void fenceAcqRelGpu();

  // mbarrier (PTX ISA 9.7.13.15).
  void mbarrierInit(Value barrier, int64_t arrivals);
  void mbarrierArriveExpectTx(Value barrier, int64_t bytes);
  void mbarrierArriveExpectTx(Value barrier, Value bytes);
  void mbarrierArrive(Value barrier);
  /// Blocks until the phase of `barrier` with parity `parity` completed.
  void mbarrierWait(Value barrier, Value parity);
  /// An arrival with release semantics at cluster scope, on a barrier of
  /// any CTA of the cluster (`barrier` from mapToClusterRank).
  void mbarrierArriveCluster(Value barrier);
  /// Waits for the phase of parity `parity` with acquire semantics at
  /// cluster scope: what other CTAs wrote before their cluster-scope
  /// arrivals (mbarrierArriveCluster) is visible after it.
  void mbarrierWaitCluster(Value barrier, Value parity);

  /// An asynchronous copy of `bytes` (4, 8 or 16) from `src` (global) to
  /// `dst` (shared) that the thread does not wait for (`cp.async`, PTX ISA
  /// 9.7.9.25.3).
  void cpAsync(Value dst, Value src, int64_t bytes);
  /// One arrival on `barrier` once this thread's earlier cp.async copies
  /// have landed; counted in the barrier's expected arrivals (`.noinc`).
  void cpAsyncArriveOn(Value barrier);

  /// A 2-D TMA tile load (`cp.async.bulk.tensor.2d`) of the box at
  /// (`inner`, `outer`) of the tensor map `tensorMap` (generic pointer to a
  /// CUtensorMap) into `dst` (shared), completing on `barrier`.
  /// With `multicastMask` (i16), the box lands at the same shared offset in
  /// every CTA of the cluster whose bit is set, completing on each one's
  /// barrier at the same offset.
  void tmaLoad2d(Value dst, Value tensorMap, Value inner, Value outer,
                 Value barrier, Value multicastMask = Value()) {
    tmaLoad(dst, tensorMap, {inner, outer}, barrier, multicastMask);
  }
  /// The same with one coordinate per dimension of the tensor map,
  /// innermost first.
  void tmaLoad(Value dst, Value tensorMap, ValueRange coordinates,
               Value barrier, Value multicastMask = Value());
  /// A 2-D TMA tile store of the shared box at `src` to (`inner`, `outer`) of
  /// `tensorMap`; out-of-bounds parts of the box are not written.
  void tmaStore2d(Value tensorMap, Value src, Value inner, Value outer);
  /// Closes the current group of bulk stores of this thread.
  void bulkCommitGroup();
  /// Waits until at most `pending` bulk store groups of this thread are in
  /// flight (`readOnly`: until they have read their shared memory).
  void bulkWaitGroup(int64_t pending, bool readOnly);
  /// Orders this thread's generic-proxy shared-memory writes before later
  /// async-proxy (TMA, wgmma) accesses (PTX ISA 9.7.13.4.11).
  void fenceProxyAsyncShared();
  /// `bar.sync id, threads`: a barrier among a subset of the CTA's warps.
  void namedBarrier(int64_t id, int64_t threads);
  void namedBarrier(Value id, int64_t threads);
  /// `bar.arrive id, threads`: arrives on the barrier without waiting (the
  /// other participants `bar.sync`).
  void namedBarrierArrive(Value id, int64_t threads);
  /// `bar.warp.sync` of the whole warp (also orders the lanes' memory
  /// accesses before what any lane does after it).
  void syncWarp();
  /// `elect.sync`: true in one lane of the (converged) warp. Unlike a lane
  /// index test it keeps no register live.
  Value electOneLane();
  /// Prefetches a tensor map into the constant cache.
  void prefetchTensorMap(Value tensorMap);
  /// `griddepcontrol.wait` then `griddepcontrol.launch_dependents`: waits
  /// until the grid before this one in the stream is complete and its
  /// writes are visible, then lets the grid after it launch. With
  /// programmatic stream serialization a kernel may start before the grid
  /// before it ends: nothing ahead of this point may touch global memory.
  void gridDependencySync();

  // Thread-block clusters (PTX ISA 9.7.13.2, 9.7.9.21).
  /// This CTA's rank in its cluster.
  Value clusterCtaRank();
  /// `barrier.cluster.arrive` + `wait`: every thread of every CTA of the
  /// cluster (also orders shared-memory accesses across the cluster).
  void clusterSync();
  /// Makes mbarrier initialization visible to the cluster's other CTAs.
  void fenceMBarrierInitCluster();
  /// The shared::cluster address of `sharedPtr`'s offset in CTA `rank`.
  Value mapToClusterRank(Value sharedPtr, Value rank);

  // Control flow.
  void ifThen(Value cond, function_ref<void()> thenBody);
  /// An scf.for over i32 [lb, ub) carrying `init`; `body` gets the
  /// induction variable and the carried values and returns the next ones.
  ValueRange forLoop(Value lb, Value ub, Value step, ValueRange init,
                     function_ref<SmallVector<Value>(Value, ValueRange)> body);
  /// An scf.while carrying `init`: runs `body` (carried values -> next
  /// ones) while `cond` (carried values -> i1) holds.
  ValueRange whileLoop(ValueRange init,
                       function_ref<Value(ValueRange)> cond,
                       function_ref<SmallVector<Value>(ValueRange)> body);

private:
  ImplicitLocOpBuilder &b;
};

/// A ring of `stages` shared-memory buffers guarded by "full" barriers
/// (producer -> consumers: data landed, with TMA transaction counts) and
/// "empty" barriers (consumers -> producer: buffer free). Iteration `i` uses
/// stage `i % stages` in round `i / stages`; the parity of the round picks
/// the barrier phase.
class PipelineRing {
public:
  PipelineRing() = default;
  PipelineRing(Value barrierBase, int64_t stages)
      : barrierBase(barrierBase), stages(stages) {}

  /// Bytes of shared memory the barriers take.
  static int64_t barrierBytes(int64_t stages) { return 2 * 8 * stages; }

  /// Initializes all barriers (call from one thread, then synchronize).
  void init(KernelBuilder &kb, int64_t producerArrivals,
            int64_t consumerArrivals) const;

  Value stage(KernelBuilder &kb, Value iteration) const;
  /// The stage and consumer parity of the iteration after the one in
  /// `stage` with `parity`, without dividing by the stage count.
  std::pair<Value, Value> advance(KernelBuilder &kb, Value stage,
                                  Value parity) const;
  Value fullBarrier(KernelBuilder &kb, Value stage) const;
  Value emptyBarrier(KernelBuilder &kb, Value stage) const;
  /// Parity consumers wait on for `iteration`'s full barrier.
  Value consumerParity(KernelBuilder &kb, Value iteration) const;
  /// Parity the producer waits on for `iteration`'s empty barrier: the
  /// first round passes at once (the buffers start free).
  Value producerParity(KernelBuilder &kb, Value iteration) const;

private:
  Value barrierBase;
  int64_t stages = 0;
};

} // namespace mlir::fp8

#endif // FP8_CONVERSION_KERNELSKELETON_KERNELBUILDER_H
