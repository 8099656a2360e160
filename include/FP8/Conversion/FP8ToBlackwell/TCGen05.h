//===- TCGen05.h - tcgen05 (sm_100a) MMA and TMEM emission ------*- C++ -*-===//
//
// IR emission for the Blackwell tensor core: Tensor Memory allocation and
// loads, shared-memory matrix descriptors of FP8 operand tiles, the
// single-thread `tcgen05.mma` and its completion (`tcgen05.commit`). The
// bit encodings all come from TCGen05Encodings.h; this file only turns them
// into constants and combines them with run-time addresses.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_CONVERSION_FP8TOBLACKWELL_TCGEN05_H
#define FP8_CONVERSION_FP8TOBLACKWELL_TCGEN05_H

#include "FP8/Conversion/FP8ToBlackwell/TCGen05Encodings.h"
#include "FP8/Conversion/KernelSkeleton/KernelBuilder.h"

namespace mlir::fp8::blackwell {

/// NVPTX address space of Tensor Memory (`!llvm.ptr<6>`).
inline constexpr unsigned kTensorMemoryAddressSpace = 6;

/// The encoding's value, or a fatal error naming `what`: the kernel
/// builders call the encodings only with configurations the tiling
/// selection validated, so a failure here is a compiler bug.
uint64_t expectEncoded(std::optional<uint64_t> value, llvm::StringRef what);

// -- Tensor Memory --------------------------------------------------------

/// `tcgen05.alloc.cta_group::1` of `columns` (a legal allocation) writing
/// the TMEM address to the shared-memory word `slot`; warp-wide.
void emitTmemAlloc(KernelBuilder &kb, Value slot, uint32_t columns,
                   CtaGroup group = CtaGroup::One);
/// `tcgen05.relinquish_alloc_permit.cta_group::1`; warp-wide.
void emitTmemRelinquishAllocPermit(KernelBuilder &kb,
                                   CtaGroup group = CtaGroup::One);
/// `tcgen05.dealloc.cta_group::1` of the allocation at `base` (i32);
/// warp-wide, by the warp that allocated.
void emitTmemDealloc(KernelBuilder &kb, Value base, uint32_t columns,
                     CtaGroup group = CtaGroup::One);
// With CtaGroup::Two (`.cta_group::2`) one warp of each CTA of the pair
// executes the op: the pair allocates the same columns in both CTAs.

/// The TMEM address `base + (lane << 16) + column` (i32 values; `lane` may
/// be null for 0) as the `!llvm.ptr<6>` the tcgen05 ops take.
Value emitTmemAddress(KernelBuilder &kb, Value base, Value lane, Value column);

/// `tcgen05.ld.sync.aligned.32x32b.x<columns>.b32`: thread t of the warp
/// reads `columns` consecutive 32-bit cells of TMEM lane (lane of `address`)
/// + t, returned as f32 values. Asynchronous until emitTmemWaitLoad().
SmallVector<Value> emitTmemLoad32x32b(KernelBuilder &kb, Value address,
                                      int64_t columns);
/// `tcgen05.wait::ld`: this thread's prior tcgen05.ld are complete.
void emitTmemWaitLoad(KernelBuilder &kb);

/// `tcgen05.fence::before_thread_sync` / `::after_thread_sync`
/// (PTX ISA 9.7.16.6.4): order asynchronous tcgen05 operations across an
/// execution barrier (mbarrier wait/arrive, bar.sync).
void emitFenceBeforeThreadSync(KernelBuilder &kb);
void emitFenceAfterThreadSync(KernelBuilder &kb);

// -- MMA -------------------------------------------------------------------

/// Everything of an operand descriptor of `tile` except its start address
/// (LBO, SBO, fixed bits, base offset 0, swizzle).
uint64_t getOperandDescriptorConstantBits(const Fp8OperandTile &tile);
/// Byte offset from the tile base of MMA K step `kStep`'s operand.
uint32_t getOperandStartOffset(const Fp8OperandTile &tile, int64_t kStep);

/// The 64-bit descriptor of `tile` at shared address `tileAddress` (i32,
/// aligned to the swizzle pattern) for K step `kStep`.
Value emitOperandDescriptor(KernelBuilder &kb, Value tileAddress,
                            const Fp8OperandTile &tile, int64_t kStep);

/// `tcgen05.mma.cta_group::1.kind::f8f6f4 [d], aDesc, bDesc, idesc,
/// enableInputD` (issued by one thread).
void emitMmaF8F6F4(KernelBuilder &kb, Value d, Value aDescriptor,
                   Value bDescriptor, uint32_t instrDescriptor,
                   Value enableInputD, CtaGroup group = CtaGroup::One);
// CtaGroup::Two: issued by the pair's leader CTA; A and B descriptors name
// the same shared offsets in both CTAs (each holds half of M and of N).

/// `tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.block32 [d], aDesc,
/// bDesc, idesc, [scaleA], [scaleB], enableInputD` (issued by one thread):
/// `scaleA`/`scaleB` are the TMEM addresses of the operands' scale
/// factors, `instrDescriptor` carries the scale factor IDs.
void emitMmaBlockScaled(KernelBuilder &kb, Value d, Value aDescriptor,
                        Value bDescriptor, uint32_t instrDescriptor,
                        Value enableInputD, Value scaleA, Value scaleB);

// -- Block scale factors ----------------------------------------------------

/// `tcgen05.cp.cta_group::1.32x128b.warpx4 [tmemAddress], desc`: copies the
/// 512-byte scale-factor atom at shared address `atomAddress` (i32, 16-byte
/// aligned) into 4 columns of lanes 0-31 at `tmemAddress` (lane 0) and
/// replicates it into the other three lane quarters. Asynchronous; issued by
/// one thread; ordered before that thread's later tcgen05.mma.cta_group::1
/// (a pipelined pair, PTX ISA 9.7.16.6.2) and tracked by its tcgen05.commit.
void emitScaleFactorCopy(KernelBuilder &kb, Value tmemAddress,
                         Value atomAddress);

/// A TMA tile load (`cp.async.bulk.tensor.<coordinates.size()>d`) of the
/// box at `coordinates` (innermost first, i32) of `tensorMap` into `dst`
/// (shared), completing on `barrier`.
void emitTmaLoad(KernelBuilder &kb, Value dst, Value tensorMap,
                 ValueRange coordinates, Value barrier,
                 CtaGroup group = CtaGroup::One);
/// With CtaGroup::Two (`.cta_group::2`), `barrier` may be in the peer CTA
/// of the pair (see emitPeerBarrier).
/// The mbarrier at `barrier`'s offset in CTA `rank` of the cluster, as the
/// shared-space pointer a `.cta_group::2` TMA load takes (the 32-bit
/// shared::cluster address `mapa` returns; PTX ISA 9.7.9.25.5.1).
Value emitPeerBarrier(KernelBuilder &kb, Value barrier, Value rank);

/// `tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64`:
/// `barrier` receives one arrival once every prior tcgen05 async operation
/// of this thread has completed.
void emitCommit(KernelBuilder &kb, Value barrier);
/// `tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster
/// .multicast::cluster.b64 [barrier], ctaMask`: the barrier at `barrier`'s
/// offset in every CTA of `ctaMask` receives one arrival.
void emitCommitMulticast(KernelBuilder &kb, Value barrier, uint16_t ctaMask);

/// `elect.sync` over the full warp: true on one lane.
Value emitElectOne(KernelBuilder &kb);

} // namespace mlir::fp8::blackwell

#endif // FP8_CONVERSION_FP8TOBLACKWELL_TCGEN05_H
