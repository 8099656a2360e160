//===- QuantizeScales.cpp - Amax reductions and scale rules ---------------===//
//
// Every rule below is the numerics library's (lib/Numerics), emitted as GPU
// arithmetic that gives the same bits: RN f32 divisions, no FMA contraction
// (there is no add to contract), no flush-to-zero, amax as the unsigned
// maximum of |x|'s bits (exact, and NaN-propagating since every NaN's bits
// exceed inf's).
//
// This file: the maxima of |x| over a warp, a block and the CTA, and the
// scale of each recipe computed from them (per tensor, per block, per
// column block), stored where the GEMMs read it.
//
//===----------------------------------------------------------------------===//

#include "FP8/Numerics/Formats.h"
#include "FP8/Numerics/Scaling.h"
#include "QuantizeEmitter.h"

#include <cfloat>

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::detail;

namespace num = ::fp8::numerics;

Value QuantizeKernelEmitter::shuffleMax(Value v, ArrayRef<int64_t> offsets) {
  for (int64_t offset : offsets)
    v = umax(v, shuffleXor(v, offset));
  return v;
}

Value QuantizeKernelEmitter::ctaMax(Value v) {
  v = shuffleMax(v, {16, 8, 4, 2, 1});
  // After the transpose tile: one u32 per warp.
  Value scratch = kb.bytePtr(kb.dynamicSharedMemory(),
                             getQuantizeSharedMemoryBytes(p) - kReductionBytes);
  Value lane = kb.remu(tid, kb.i32(32));
  Value warp = kb.divu(tid, kb.i32(32));
  kb.ifThen(kb.eq(lane, kb.i32(0)),
            [&] { kb.store(v, kb.bytePtr(scratch, kb.mul(warp, kb.i32(4)))); });
  gpu::BarrierOp::create(b);
  Value result = kb.load(i32(), scratch);
  for (int64_t w = 1; w < kWarps; ++w)
    result = umax(result, kb.load(i32(), kb.bytePtr(scratch, 4 * w)));
  return result;
}

Value QuantizeKernelEmitter::blockAbsMax(ArrayRef<Value> values) {
  // Same scale as the unsigned maximum of |x|'s bits: the maxima agree
  // where nothing is NaN, and are both NaN otherwise. (|x| by its bits:
  // convert-gpu-to-nvvm sends llvm.fabs to libdevice.)
  auto abs = [&](Value v) { return fromBits(absBits(v)); };
  Value m = abs(values[0]);
  for (Value v : values.drop_front())
    m = fmaxNaN(m, abs(v));
  return m;
}

/// encodeUe8m0RoundUp (lib/Numerics/Formats.cpp) in integer arithmetic.
Value QuantizeKernelEmitter::ue8m0RoundUp(Value y) {
  if (p.hardwareUe8m0) {
    // sm_100a: cvt.rp.satfinite.ue8m0x2.f32 (PTX ISA 9.7.9.21), the
    // instruction the software form below reproduces.
    Value pair = NVVM::ConvertF32x2ToF8x2Op::create(
        b, b.getI16Type(), y, y, NVVM::FPRoundingMode::RP,
        NVVM::SaturationMode::SATFINITE, /*relu=*/false,
        Float8E8M0FNUType::get(b.getContext()));
    return arith::ExtUIOp::create(
        b, i32(), arith::TruncIOp::create(b, b.getI8Type(), pair));
  }
  Value absY = absBits(y);
  Value exponent = shr(absY, kb.i32(23));
  Value mantissa = kb.andi(absY, kb.i32(kF32MantMask));
  Value nonzeroMantissa = cmpi(arith::CmpIPredicate::ne, mantissa, kb.i32(0));
  Value roundsUp =
      kb.andi(nonzeroMantissa, kb.ult(exponent, kb.i32(kUe8m0MaxFinite)));
  Value normal = select(roundsUp, kb.add(exponent, kb.i32(1)), exponent);
  // Subnormals: (0, 2^-127] -> 0, (2^-127, 2^-126) -> 1.
  Value subnormal = arith::ExtUIOp::create(
      b, i32(), cmpi(arith::CmpIPredicate::ugt, mantissa, kb.i32(0x400000)));
  Value code = select(kb.eq(exponent, kb.i32(0)), subnormal, normal);
  code = select(kb.eq(absY, kb.i32(kF32Inf)), kb.i32(kUe8m0MaxFinite), code);
  return select(cmpi(arith::CmpIPredicate::ugt, absY, kb.i32(kF32Inf)),
                kb.i32(kUe8m0NaN), code);
}

/// mxScaleExponent's OCP rule: floor(log2 amax) - emax_elem, clamped.
Value QuantizeKernelEmitter::ue8m0Ocp(Value amaxBits) {
  Value exponent = shr(amaxBits, kb.i32(23));
  Value mantissa = kb.andi(amaxBits, kb.i32(kF32MantMask));
  // Subnormal amax: floor(log2) = msb(mantissa) - 149.
  Value clz = LLVM::CountLeadingZerosOp::create(b, i32(), mantissa,
                                                b.getBoolAttr(false));
  Value subnormalLog2 = kb.sub(kb.i32(31 - 149), clz);
  Value log2 = select(kb.eq(exponent, kb.i32(0)), subnormalLog2,
                      kb.sub(exponent, kb.i32(127)));
  int64_t emax =
      num::maxExponent(isa<Float8E5M2Type>(p.elementType) ? num::Format::E5M2
                                                          : num::Format::E4M3);
  Value e = kb.sub(log2, kb.i32(emax));
  e = arith::MaxSIOp::create(b, e, kb.i32(-127));
  e = arith::MinSIOp::create(b, e, kb.i32(127));
  Value code = kb.add(e, kb.i32(127));
  code = select(kb.eq(amaxBits, kb.i32(0)), kb.i32(0), code);
  code =
      select(kb.eq(amaxBits, kb.i32(kF32Inf)), kb.i32(kUe8m0MaxFinite), code);
  return select(cmpi(arith::CmpIPredicate::ugt, amaxBits, kb.i32(kF32Inf)),
                kb.i32(kUe8m0NaN), code);
}

/// currentScalingScale / blockwiseScale / mxScaleExponent of a block whose
/// amax has the (sign-free) bits `amaxBits`. Every multiplier but a given
/// scale's is positive and finite, or NaN (an MX block with a NaN).
BlockScale QuantizeKernelEmitter::computeScale(Value amaxBits) {
  using Rule = QuantizeProblem::Rule;
  num::Format format = isa<Float8E5M2Type>(p.elementType) ? num::Format::E5M2
                                                          : num::Format::E4M3;
  Value one = kb.f32(1.f);
  auto currentRule = [&](Value amax, float epsilon, bool pow2) {
    auto [scale, scaleInv] =
        emitCurrentScalingScale(b, amax, p.elementType, epsilon, pow2);
    return BlockScale{scale, scaleInv};
  };
  auto clamp = [&](Value amax) {
    if (p.amaxClamp == 0.f)
      return amax;
    return select(arith::CmpFOp::create(b, arith::CmpFPredicate::OLT, amax,
                                        kb.f32(p.amaxClamp)),
                  kb.f32(p.amaxClamp), amax);
  };
  auto mxCode = [&](Value code) {
    // mxQuantizeMultiplier: 2^(127 - e), exact; 0xFF -> NaN.
    Value multBits = select(kb.eq(code, kb.i32(kUe8m0NaN)),
                            kb.i32(kF32QuietNaN), emitPowerOfTwoInverse(kb, code));
    return BlockScale{fromBits(multBits),
                      arith::TruncIOp::create(b, b.getI8Type(), code)};
  };

  Value amax = fromBits(amaxBits);
  switch (p.rule) {
  case Rule::Tensor:
    llvm_unreachable("per-tensor scales come from tensorScale()");
  case Rule::Current:
    return currentRule(amax, p.epsilon, p.pow2);
  case Rule::BlockwisePow2: {
    BlockScale scale = currentRule(clamp(amax), 0.f, /*pow2=*/true);
    // As MX scales: the UE8M0 code of the power of two is its biased
    // exponent field (scale_inv is positive and finite; 2^-127, the
    // subnormal, has field 0, UE8M0's 2^-127).
    if (p.mxScales)
      scale.stored = arith::TruncIOp::create(
          b, b.getI8Type(), shr(bits(scale.stored), kb.i32(23)));
    return scale;
  }
  case Rule::BlockwiseF32: {
    Value clamped = clamp(amax);
    Value cBits = bits(clamped);
    Value scaleInv = divf(clamped, kb.f32(num::maxFinite(num::Format::E4M3)));
    Value usable =
        kb.andi(kb.andi(cmpi(arith::CmpIPredicate::ne, cBits, kb.i32(0)),
                        kb.ult(cBits, kb.i32(kF32Inf))),
                cmpi(arith::CmpIPredicate::ne, bits(scaleInv), kb.i32(0)));
    Value scale = emitFiniteOrMax(kb, divf(one, scaleInv));
    return BlockScale{select(usable, scale, one),
                      select(usable, scaleInv, one)};
  }
  case Rule::MXRoundUp: {
    uint32_t rcp = format == num::Format::E4M3 ? num::kRcpE4M3MaxBits
                                               : num::kRcpE5M2MaxBits;
    Value y = arith::MulFOp::create(b, amax, fromBits(kb.i32(rcp)));
    return mxCode(ue8m0RoundUp(y));
  }
  case Rule::MXOcp:
    return mxCode(ue8m0Ocp(amaxBits));
  }
  llvm_unreachable("unknown rule");
}

BlockScale QuantizeKernelEmitter::tensorScale() {
  Value value = kb.load(f32(), scaleOrAmax);
  if (p.scaleSource == QuantizeScaleSource::FromAmax)
    return computeScale(absBits(value));
  return BlockScale{value, divf(kb.f32(1.f), value)};
}

void QuantizeKernelEmitter::storeBlockScale(const OutputTile &out,
                                            Value segment, Value stored,
                                            Value isStoringLane) {
  Value rowOffset = out.transposed
                        ? kb.add(kb.mul(shr(segment, kb.i32(2)), kb.i32(64)),
                                 kb.andi(segment, kb.i32(3)))
                        : kb.mul(segment, kb.i32(kRowStep));
  Value rowInOut = kb.add(out.rowBase, rowOffset);
  if (p.hasMXScaleLayout()) {
    // Byte (r % 32) * 16 + (r % 128) / 32 * 4 + kb % 4 of atom
    // (r / 128, kb / 4), atoms K-fastest; padding rows/blocks of an atom
    // are written too (they lie inside the scale tensor). A 1x128 tile's
    // code fills the four bytes of its row in the atom.
    Value outColTiles =
        ShapedType::isDynamic(out.cols)
            ? numRowTiles()
            : kb.i32(llvm::divideCeil(out.cols, kQuantizeTileCols));
    Value atom = kb.add(kb.mul(out.rowTile, outColTiles), out.colTile);
    Value block = p.mxScales ? Value() : kb.divu(chunk, kb.i32(4));
    Value offset = atomByteOffset(atom, rowInOut, block);
    auto store = [&] {
      kb.store(p.mxScales ? repeatedCode(stored) : stored,
               kb.bytePtr(out.scales, offset));
    };
    if (isStoringLane)
      kb.ifThen(isStoringLane, store);
    else
      store();
    return;
  }
  // 1x128: MN-major [ceil(cols/128), roundup(rows, 4)].
  Value row = kb.add(kb.mul(out.rowTile, kb.i32(kQuantizeTileRows)), rowInOut);
  Value paddedRows =
      p.dynamicRows && !out.transposed
          ? kb.andi(kb.add(out.numRows, kb.i32(kMNMajorScaleAlignment - 1)),
                    kb.i32(-kMNMajorScaleAlignment))
          : kb.i32(llvm::alignTo(out.rows, kMNMajorScaleAlignment));
  Value index = kb.add(kb.mul(out.colTile, paddedRows), row);
  Value valid = kb.ult(row, out.numRows);
  if (isStoringLane)
    valid = kb.andi(valid, isStoringLane);
  kb.ifThen(valid, [&] {
    kb.store(stored, kb.globalElementPtr(out.scales, index, 4));
  });
}

/// A 1 x blockCols block is 4 (1x32) or 16 (1x128) lanes of each of the 8
/// segments. Rather than every lane computing the scales of all 8 blocks
/// it takes part in, the lanes of a block exchange partial maxima so that
/// each lane ends up with the whole maxima of 8 / lanes-per-block blocks
/// (a transposing butterfly: at each step a lane keeps the half of its
/// partial maxima whose segments match its lane bit and sends the other
/// half), computes those blocks' scales and stores them, then every lane
/// fetches its segments' multipliers with one shuffle each.
SegmentMultipliers
QuantizeKernelEmitter::blockMultipliers(ArrayRef<Value> segments,
                                        const OutputTile &out) {
  int64_t lanesPerBlock = p.blockCols / kVector;
  SmallVector<Value> slots;
  for (int64_t s = 0; s < kSegments; ++s)
    slots.push_back(blockAbsMax(segments.slice(s * kVector, kVector)));
  // (lane offset, slot count kept) of each halving step; lanes differing
  // only in `duplicateLanes` end up with the same blocks.
  SmallVector<std::pair<int64_t, int64_t>> halvings;
  int64_t duplicateLanes = 0;
  for (int64_t offset = lanesPerBlock / 2; offset >= 1; offset /= 2) {
    if (slots.size() == 1) {
      slots[0] = fmaxNaN(slots[0], shuffleXor(slots[0], offset));
      duplicateLanes |= offset;
      continue;
    }
    int64_t half = slots.size() / 2;
    Value upper = cmpi(arith::CmpIPredicate::ne, kb.andi(lane, kb.i32(offset)),
                       kb.i32(0));
    SmallVector<Value> kept;
    for (int64_t t = 0; t < half; ++t) {
      Value send = select(upper, slots[t], slots[t + half]);
      Value keep = select(upper, slots[t + half], slots[t]);
      kept.push_back(fmaxNaN(keep, shuffleXor(send, offset)));
    }
    halvings.push_back({offset, half});
    slots = std::move(kept);
  }

  // Slot t of a lane holds the block of segment t + sum(half * lane bit).
  Value segmentBase = kb.i32(0);
  for (auto [offset, half] : halvings)
    segmentBase = kb.add(segmentBase,
                         select(cmpi(arith::CmpIPredicate::ne,
                                     kb.andi(lane, kb.i32(offset)), kb.i32(0)),
                                kb.i32(half), kb.i32(0)));
  Value isStoringLane =
      duplicateLanes ? kb.eq(kb.andi(lane, kb.i32(duplicateLanes)), kb.i32(0))
                     : Value();
  SegmentMultipliers multipliers;
  for (auto [t, maximum] : llvm::enumerate(slots)) {
    BlockScale scale = computeScale(bits(maximum));
    multipliers.slots.push_back(scale.multiplier);
    storeBlockScale(out, kb.add(segmentBase, kb.i32(t)), scale.stored,
                    isStoringLane);
  }
  multipliers.blockFirstLane =
      kb.andi(lane, kb.i32(~(lanesPerBlock - 1) & (kWarpThreads - 1)));
  for (int64_t s = 0; s < kSegments; ++s) {
    int64_t t = s % static_cast<int64_t>(slots.size());
    int64_t owner = 0;
    for (auto [offset, half] : halvings)
      if ((s - t) & half)
        owner |= offset;
    multipliers.slot.push_back(t);
    multipliers.owner.push_back(owner);
  }
  return multipliers;
}

void QuantizeKernelEmitter::storeColumnMaxima(ArrayRef<Value> values) {
  int64_t blocks = getColumnBlocksPerTile(p);
  int64_t iPerBlock = kRowsPerThread / blocks;
  Value smem = columnScratch();
  Value warp = kb.divu(tid, kb.i32(kWarpThreads));
  auto i32x8 = VectorType::get({kVector}, i32());

  // Each warp's column maxima of its two rows per i (lanes l, l ^ 16
  //    share the chunk), u32 [blocks][warps][128].
  for (int64_t blk = 0; blk < blocks; ++blk) {
    Value partial = LLVM::PoisonOp::create(b, i32x8);
    for (int64_t j = 0; j < kVector; ++j) {
      Value m = absBits(values[blk * iPerBlock * kVector + j]);
      for (int64_t i = blk * iPerBlock + 1; i < (blk + 1) * iPerBlock; ++i)
        m = umax(m, absBits(values[i * kVector + j]));
      partial = LLVM::InsertElementOp::create(b, partial, shuffleMax(m, {16}),
                                              kb.i32(j));
    }
    Value offset = kb.mul(kb.add(kb.mul(kb.add(kb.i32(blk * kWarps), warp),
                                        kb.i32(kQuantizeTileCols)),
                                 kb.mul(chunk, kb.i32(kVector))),
                          kb.i32(4));
    kb.ifThen(kb.ult(lane, kb.i32(kChunksPerRow)), [&] {
      LLVM::StoreOp::create(b, partial, kb.bytePtr(smem, offset),
                            /*alignment=*/16);
    });
  }
}

Value QuantizeKernelEmitter::storeColumnBlockScales() {
  int64_t blocks = getColumnBlocksPerTile(p);
  Value smem = columnScratch();
  int64_t partialBytes = blocks * kWarps * kQuantizeTileCols * 4;
  gpu::BarrierOp::create(b);

  // One thread per (block, column): the block's amax over the warps, its
  //    scale (scale_inv to global memory, the multiplier to shared memory).
  Value multipliers = kb.bytePtr(smem, partialBytes);
  int64_t pairs = blocks * kQuantizeTileCols;
  for (int64_t first = 0; first < pairs; first += kQuantizeThreads) {
    Value pair = kb.add(tid, kb.i32(first));
    kb.ifThen(kb.ult(pair, kb.i32(pairs)), [&] {
      Value blk = kb.divu(pair, kb.i32(kQuantizeTileCols));
      Value c = kb.remu(pair, kb.i32(kQuantizeTileCols));
      Value m;
      for (int64_t w = 0; w < kWarps; ++w) {
        Value index =
            kb.add(kb.mul(kb.add(kb.mul(blk, kb.i32(kWarps)), kb.i32(w)),
                          kb.i32(kQuantizeTileCols)),
                   c);
        Value v = kb.load(i32(), kb.bytePtr(smem, kb.mul(index, kb.i32(4))));
        m = m ? umax(m, v) : v;
      }
      BlockScale scale = computeScale(m);
      kb.store(scale.multiplier,
               kb.bytePtr(multipliers, kb.mul(pair, kb.i32(4))));
      // The columnwise scales are those of x^T, whichever way its data is
      // stored: x's column colTile * 128 + c is x^T's row.
      Value col = kb.add(kb.mul(colTile, kb.i32(kQuantizeTileCols)), c);
      if (p.hasMXScaleLayout()) {
        // Byte (c % 32) * 16 + (c / 32) * 4 + blk of atom (colTile, rowTile);
        // a 128x1 block's code (mxScales) fills the four bytes of c.
        Value atom = kb.add(kb.mul(colTile, numRowTiles()), rowTile);
        Value offset = atomByteOffset(atom, c, p.mxScales ? Value() : blk);
        kb.store(p.mxScales ? repeatedCode(scale.stored) : scale.stored,
                 kb.bytePtr(columnwiseScale, offset));
      } else {
        // 128x1: MN-major [ceil(R/128), roundup(C, 4)].
        Value index = kb.add(
            kb.mul(rowTile,
                   kb.i32(llvm::alignTo(p.cols, kMNMajorScaleAlignment))),
            col);
        kb.ifThen(kb.ult(col, kb.i32(p.cols)), [&] {
          kb.store(scale.stored,
                   kb.globalElementPtr(columnwiseScale, index, 4));
        });
      }
    });
  }
  gpu::BarrierOp::create(b);
  return multipliers;
}
