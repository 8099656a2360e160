//===- TCGen05.cpp - tcgen05 (sm_100a) MMA and TMEM emission --------------===//

#include "FP8/Conversion/FP8ToBlackwell/TCGen05.h"

#include "llvm/Support/ErrorHandling.h"

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::blackwell;

uint64_t blackwell::expectEncoded(std::optional<uint64_t> value,
                                  llvm::StringRef what) {
  if (!value)
    llvm::report_fatal_error(llvm::Twine("unencodable ") + what +
                             " (the tiling selection should have rejected it)");
  return *value;
}

static NVVM::CTAGroupKind toNVVM(CtaGroup group) {
  return group == CtaGroup::One ? NVVM::CTAGroupKind::CTA_1
                                : NVVM::CTAGroupKind::CTA_2;
}

static NVVM::CTAGroupKindAttr ctaGroupAttr(MLIRContext *ctx,
                                           CtaGroup group = CtaGroup::One) {
  return NVVM::CTAGroupKindAttr::get(ctx, toNVVM(group));
}

void blackwell::emitTmemAlloc(KernelBuilder &kb, Value slot, uint32_t columns,
                              CtaGroup group) {
  ImplicitLocOpBuilder &b = kb.builder();
  NVVM::Tcgen05AllocOp::create(b, slot, kb.i32(columns),
                               ctaGroupAttr(b.getContext(), group));
}

void blackwell::emitTmemRelinquishAllocPermit(KernelBuilder &kb,
                                              CtaGroup group) {
  ImplicitLocOpBuilder &b = kb.builder();
  NVVM::Tcgen05RelinquishAllocPermitOp::create(
      b, ctaGroupAttr(b.getContext(), group));
}

void blackwell::emitTmemDealloc(KernelBuilder &kb, Value base,
                                uint32_t columns, CtaGroup group) {
  ImplicitLocOpBuilder &b = kb.builder();
  NVVM::Tcgen05DeallocOp::create(b, emitTmemAddress(kb, base, {}, {}),
                                 kb.i32(columns),
                                 ctaGroupAttr(b.getContext(), group));
}

Value blackwell::emitTmemAddress(KernelBuilder &kb, Value base, Value lane,
                                 Value column) {
  ImplicitLocOpBuilder &b = kb.builder();
  Value address = base;
  if (lane)
    address = kb.add(address, arith::ShLIOp::create(
                                  b, lane, kb.i32(tmem::kLaneShift)));
  if (column)
    address = kb.add(address, column);
  return LLVM::IntToPtrOp::create(
      b, LLVM::LLVMPointerType::get(b.getContext(), kTensorMemoryAddressSpace),
      address);
}

SmallVector<Value> blackwell::emitTmemLoad32x32b(KernelBuilder &kb,
                                                 Value address,
                                                 int64_t columns) {
  ImplicitLocOpBuilder &b = kb.builder();
  MLIRContext *ctx = b.getContext();
  auto shape =
      NVVM::Tcgen05LdStShapeAttr::get(ctx, NVVM::Tcgen05LdStShape::SHAPE_32X32B);
  Type resultType = columns == 1
                        ? Type(b.getI32Type())
                        : Type(VectorType::get({columns}, b.getI32Type()));
  Value loaded = NVVM::Tcgen05LdOp::create(b, resultType, /*pack=*/UnitAttr(),
                                           shape, address, /*offset=*/Value());
  SmallVector<Value> values;
  if (columns == 1) {
    values.push_back(arith::BitcastOp::create(b, b.getF32Type(), loaded));
    return values;
  }
  Value asF32 = LLVM::BitcastOp::create(
      b, VectorType::get({columns}, b.getF32Type()), loaded);
  for (int64_t i = 0; i < columns; ++i)
    values.push_back(LLVM::ExtractElementOp::create(b, asF32, kb.i32(i)));
  return values;
}

void blackwell::emitTmemWaitLoad(KernelBuilder &kb) {
  ImplicitLocOpBuilder &b = kb.builder();
  NVVM::Tcgen05WaitOp::create(
      b, NVVM::Tcgen05WaitKindAttr::get(b.getContext(),
                                        NVVM::Tcgen05WaitKind::LOAD));
}

void blackwell::emitFenceBeforeThreadSync(KernelBuilder &kb) {
  ImplicitLocOpBuilder &b = kb.builder();
  NVVM::Tcgen05FenceOp::create(
      b, NVVM::Tcgen05FenceKindAttr::get(
             b.getContext(), NVVM::Tcgen05FenceKind::BEFORE_THREAD_SYNC));
}

void blackwell::emitFenceAfterThreadSync(KernelBuilder &kb) {
  ImplicitLocOpBuilder &b = kb.builder();
  NVVM::Tcgen05FenceOp::create(
      b, NVVM::Tcgen05FenceKindAttr::get(
             b.getContext(), NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC));
}

uint64_t blackwell::getOperandDescriptorConstantBits(const Fp8OperandTile &tile) {
  std::optional<SharedMemoryDescriptor> desc =
      getFp8OperandDescriptor(tile, /*tileBase=*/0, /*kStep=*/0,
                              /*mnOffset=*/0);
  if (!desc)
    llvm::report_fatal_error("unencodable FP8 operand tile");
  desc->startAddress = 0;
  return expectEncoded(encodeSharedMemoryDescriptor(*desc),
                       "shared memory descriptor");
}

uint32_t blackwell::getOperandStartOffset(const Fp8OperandTile &tile,
                                          int64_t kStep) {
  return static_cast<uint32_t>(expectEncoded(
      fp8OperandStartOffset(tile, kStep, /*mnOffset=*/0), "operand offset"));
}

Value blackwell::emitOperandDescriptor(KernelBuilder &kb, Value tileAddress,
                                       const Fp8OperandTile &tile,
                                       int64_t kStep) {
  ImplicitLocOpBuilder &b = kb.builder();
  uint32_t offset = getOperandStartOffset(tile, kStep);
  Value address = offset ? kb.add(tileAddress, kb.i32(offset)) : tileAddress;
  // Start address field: (address & 0x3FFFF) >> 4 in bits [0, 14).
  Value field = arith::AndIOp::create(
      b,
      arith::ShRUIOp::create(b, address,
                             kb.i32(smem_desc::kByteOffsetEncodingShift)),
      kb.i32(static_cast<int64_t>(smem_desc::kFieldMask)));
  Value wide = arith::ExtUIOp::create(b, b.getI64Type(), field);
  return arith::OrIOp::create(
      b, wide,
      kb.i64(static_cast<int64_t>(getOperandDescriptorConstantBits(tile))));
}

void blackwell::emitMmaF8F6F4(KernelBuilder &kb, Value d, Value aDescriptor,
                              Value bDescriptor, uint32_t instrDescriptor,
                              Value enableInputD, CtaGroup group) {
  ImplicitLocOpBuilder &b = kb.builder();
  MLIRContext *ctx = b.getContext();
  NVVM::Tcgen05MMAOp::create(
      b, NVVM::Tcgen05MMAKindAttr::get(ctx, NVVM::Tcgen05MMAKind::F8F6F4),
      ctaGroupAttr(ctx, group),
      NVVM::Tcgen05MMACollectorOpAttr::get(
          ctx, NVVM::Tcgen05MMACollectorOp::DISCARD),
      /*aShift=*/UnitAttr(), d, aDescriptor, bDescriptor,
      kb.i32(static_cast<int32_t>(instrDescriptor)), enableInputD,
      /*scaleInputD=*/Value(), /*disableOutputLane=*/Value());
}

void blackwell::emitMmaBlockScaled(KernelBuilder &kb, Value d,
                                   Value aDescriptor, Value bDescriptor,
                                   uint32_t instrDescriptor,
                                   Value enableInputD, Value scaleA,
                                   Value scaleB) {
  ImplicitLocOpBuilder &b = kb.builder();
  NVVM::Tcgen05MMABlockScaleOp::create(
      b, NVVM::MMABlockScaleKind::MXF8F6F4, NVVM::CTAGroupKind::CTA_1,
      NVVM::Tcgen05MMABlockScale::BLOCK32,
      NVVM::Tcgen05MMACollectorOp::DISCARD, d, aDescriptor, bDescriptor,
      kb.i32(static_cast<int32_t>(instrDescriptor)), enableInputD, scaleA,
      scaleB);
}

void blackwell::emitScaleFactorCopy(KernelBuilder &kb, Value tmemAddress,
                                    Value atomAddress) {
  ImplicitLocOpBuilder &b = kb.builder();
  // Everything but the start address is constant (no swizzle, SBO 128).
  std::optional<SharedMemoryDescriptor> desc =
      getScaleFactorCopySourceDescriptor(/*atomAddress=*/0);
  if (!desc)
    llvm::report_fatal_error("unencodable scale factor copy descriptor");
  uint64_t constantBits =
      expectEncoded(encodeSharedMemoryDescriptor(*desc), "tcgen05.cp source");
  Value field = arith::AndIOp::create(
      b,
      arith::ShRUIOp::create(b, atomAddress,
                             kb.i32(smem_desc::kByteOffsetEncodingShift)),
      kb.i32(static_cast<int64_t>(smem_desc::kFieldMask)));
  Value descriptor = arith::OrIOp::create(
      b, arith::ExtUIOp::create(b, b.getI64Type(), field),
      kb.i64(static_cast<int64_t>(constantBits)));
  NVVM::Tcgen05CpOp::create(b, NVVM::Tcgen05CpShape::SHAPE_32x128b,
                            NVVM::CTAGroupKind::CTA_1,
                            NVVM::Tcgen05CpMulticast::WARPX4,
                            /*srcFormat=*/NVVM::Tcgen05CpSrcFormatAttr(),
                            tmemAddress, descriptor);
}

void blackwell::emitTmaLoad(KernelBuilder &kb, Value dst, Value tensorMap,
                            ValueRange coordinates, Value barrier,
                            CtaGroup group) {
  ImplicitLocOpBuilder &b = kb.builder();
  // As KernelBuilder::tmaLoad2d: the .shared::cluster form takes this CTA's
  // shared address as a shared::cluster one.
  Value clusterDst = LLVM::AddrSpaceCastOp::create(
      b, kb.ptrType(AddressSpace::SharedCluster), dst);
  NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
      b, clusterDst, tensorMap, coordinates, barrier,
      /*im2colOffsets=*/ValueRange{}, /*multicastMask=*/Value(),
      /*l2CacheHint=*/Value(), NVVM::TMALoadMode::TILE, /*isCTAOnly=*/false,
      /*group=*/group == CtaGroup::One
          ? NVVM::CTAGroupKindAttr()
          : ctaGroupAttr(b.getContext(), group),
      /*predicate=*/Value());
}

Value blackwell::emitPeerBarrier(KernelBuilder &kb, Value barrier, Value rank) {
  ImplicitLocOpBuilder &b = kb.builder();
  // The shared::cluster address bits reinterpreted as a shared pointer: the
  // instruction takes a 32-bit shared address operand, and with
  // .cta_group::2 that may name the peer CTA's barrier.
  Value cluster = kb.mapToClusterRank(barrier, rank);
  Value bits = LLVM::PtrToIntOp::create(b, b.getI32Type(), cluster);
  return LLVM::IntToPtrOp::create(b, kb.ptrType(AddressSpace::Shared), bits);
}

void blackwell::emitCommit(KernelBuilder &kb, Value barrier) {
  ImplicitLocOpBuilder &b = kb.builder();
  NVVM::Tcgen05CommitOp::create(b, barrier, /*multicastMask=*/Value(),
                                ctaGroupAttr(b.getContext()));
}

void blackwell::emitCommitMulticast(KernelBuilder &kb, Value barrier,
                                    uint16_t ctaMask) {
  ImplicitLocOpBuilder &b = kb.builder();
  Value mask = arith::ConstantIntOp::create(b, ctaMask, 16);
  NVVM::Tcgen05CommitOp::create(b, barrier, mask,
                                ctaGroupAttr(b.getContext(), CtaGroup::Two));
}

Value blackwell::emitElectOne(KernelBuilder &kb) {
  ImplicitLocOpBuilder &b = kb.builder();
  return NVVM::ElectSyncOp::create(b, b.getI1Type(), /*membermask=*/Value());
}
