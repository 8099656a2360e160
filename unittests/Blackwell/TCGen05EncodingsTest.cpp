//===- TCGen05EncodingsTest.cpp - tcgen05 encodings against the PTX ISA ---===//
//
// Every expected value is derived by hand in the comment next to it, from
// the PTX ISA tables (instruction descriptor: 9.7.16.4.2 Tables 42/43;
// shared memory descriptor: 9.7.16.4.1 Table 40; TMEM: 9.7.16.1; data path
// layouts: 9.7.16.10.5) -- never recomputed with the library.
//
//===----------------------------------------------------------------------===//

#include "FP8/Conversion/FP8ToBlackwell/TCGen05Encodings.h"

#include <gtest/gtest.h>

#include <set>

using namespace mlir::fp8::blackwell;

namespace {

//===----------------------------------------------------------------------===//
// Instruction descriptor, kind::f8f6f4 (Table 42)
//===----------------------------------------------------------------------===//

TEST(InstrDescriptorF8F6F4, M128N256E4M3KMajor) {
  F8F6F4InstrDescriptor d;
  d.m = 128;
  d.n = 256;
  // dtype F32 = 1 at [4,6): 1 << 4 = 0x10
  // N >> 3 = 32 at [17,23): 32 << 17 = 0x00400000
  // M >> 4 = 8 at [24,29): 8 << 24 = 0x08000000
  // formats E4M3 = 0, K-major = 0, no negate -> 0x08400010
  EXPECT_EQ(encodeInstrDescriptor(d), std::optional<uint32_t>(0x08400010u));
}

TEST(InstrDescriptorF8F6F4, M64N8MixedFormatsMNMajorA) {
  F8F6F4InstrDescriptor d;
  d.m = 64;
  d.n = 8;
  d.aFormat = Fp8Format::E5M2;
  d.aMajor = OperandMajor::MN;
  // dtype F32: 0x10; atype E5M2 = 1 << 7 = 0x80; transpose A 1 << 15 = 0x8000
  // N >> 3 = 1 << 17 = 0x20000; M >> 4 = 4 << 24 = 0x04000000
  // total 0x04028090
  EXPECT_EQ(encodeInstrDescriptor(d), std::optional<uint32_t>(0x04028090u));
}

TEST(InstrDescriptorF8F6F4, MNMajorBNegateAF16Accumulator) {
  F8F6F4InstrDescriptor d;
  d.m = 128;
  d.n = 16;
  d.bFormat = Fp8Format::E5M2;
  d.bMajor = OperandMajor::MN;
  d.negateA = true;
  d.dFormat = AccumulatorFormat::F16;
  // dtype F16 = 0; btype E5M2 1 << 10 = 0x400; negate A 1 << 13 = 0x2000;
  // transpose B 1 << 16 = 0x10000; N >> 3 = 2 -> 2 << 17 = 0x40000;
  // M >> 4 = 8 -> 0x08000000. Sum 0x08052400.
  EXPECT_EQ(encodeInstrDescriptor(d), std::optional<uint32_t>(0x08052400u));
}

TEST(InstrDescriptorF8F6F4, NegateBBit14) {
  F8F6F4InstrDescriptor d;
  d.m = 64;
  d.n = 64;
  d.negateB = true;
  // 0x10 | 1 << 14 (0x4000) | (64 >> 3 = 8) << 17 (0x100000) | 4 << 24
  // = 0x04104010
  EXPECT_EQ(encodeInstrDescriptor(d), std::optional<uint32_t>(0x04104010u));
}

TEST(InstrDescriptorF8F6F4, CtaGroup2M256) {
  F8F6F4InstrDescriptor d;
  d.ctaGroup = CtaGroup::Two;
  d.m = 256;
  d.n = 256;
  // 0x10 | 32 << 17 (0x400000) | (256 >> 4 = 16) << 24 (0x10000000)
  EXPECT_EQ(encodeInstrDescriptor(d), std::optional<uint32_t>(0x10400010u));
}

TEST(InstrDescriptorF8F6F4, RejectsIllegalShapes) {
  struct Case {
    CtaGroup group;
    int64_t m, n;
    OperandMajor bMajor;
  };
  const Case cases[] = {
      {CtaGroup::One, 256, 128, OperandMajor::K}, // M=256 needs cta_group::2
      {CtaGroup::One, 32, 128, OperandMajor::K},  // M=32 is .ws only
      {CtaGroup::One, 96, 128, OperandMajor::K},  // M not 64/128
      {CtaGroup::Two, 64, 128, OperandMajor::K},  // cta_group::2 M in {128,256}
      {CtaGroup::One, 128, 0, OperandMajor::K},   // N < 8
      {CtaGroup::One, 128, 12, OperandMajor::K},  // N % 8
      {CtaGroup::One, 128, 264, OperandMajor::K}, // N > 256
      {CtaGroup::One, 64, 8, OperandMajor::MN},   // MN-major B needs N % 16
      {CtaGroup::One, 128, 24, OperandMajor::MN}, // ditto
      {CtaGroup::Two, 128, 24, OperandMajor::K},  // cta_group::2 N % 16
  };
  for (const Case &c : cases) {
    F8F6F4InstrDescriptor d;
    d.ctaGroup = c.group;
    d.m = c.m;
    d.n = c.n;
    d.bMajor = c.bMajor;
    std::string error;
    EXPECT_FALSE(encodeInstrDescriptor(d, &error))
        << "M=" << c.m << " N=" << c.n;
    EXPECT_FALSE(error.empty());
  }
}

//===----------------------------------------------------------------------===//
// Instruction descriptor, kind::mxf8f6f4.block_scale (Table 43)
//===----------------------------------------------------------------------===//

TEST(InstrDescriptorBlockScaled, M128N256) {
  BlockScaledInstrDescriptor d;
  d.m = 128;
  d.n = 256;
  // No dtype field: bits [4,6) are B's scale factor ID (0).
  // N >> 3 = 32 -> 32 << 17 = 0x00400000
  // scale type UE8M0 = 1 at bit 23 = 0x00800000
  // M >> 7 = 1 at [27,29) = 0x08000000 (CUTLASS's M >> 4 = 8 at 24 is
  // the same bit)
  EXPECT_EQ(encodeInstrDescriptor(d), std::optional<uint32_t>(0x08C00000u));
}

TEST(InstrDescriptorBlockScaled, ScaleFactorIdsFormatsMajors) {
  BlockScaledInstrDescriptor d;
  d.m = 128;
  d.n = 128;
  d.aFormat = Fp8Format::E5M2;
  d.bMajor = OperandMajor::MN;
  d.aScaleFactorId = 3;
  d.bScaleFactorId = 2;
  // b_sf_id 2 << 4 = 0x20; atype 1 << 7 = 0x80; transpose B 0x10000;
  // N >> 3 = 16 -> 16 << 17 = 0x200000; UE8M0 0x800000; M 0x08000000;
  // a_sf_id 3 << 29 = 0x60000000. Sum 0x68A100A0.
  EXPECT_EQ(encodeInstrDescriptor(d), std::optional<uint32_t>(0x68A100A0u));
  // Re-targeting the IDs clears [29,31) and [4,6):
  // 0x68A100A0 & ~0x60000030 = 0x08A10080, | 1 << 29 = 0x28A10080.
  EXPECT_EQ(withScaleFactorIds(0x68A100A0u, 1, 0),
            std::optional<uint32_t>(0x28A10080u));
  EXPECT_FALSE(withScaleFactorIds(0x68A100A0u, 4, 0));
  EXPECT_FALSE(withScaleFactorIds(0x68A100A0u, 0, 4));
}

TEST(InstrDescriptorBlockScaled, CtaGroup2M256N16) {
  BlockScaledInstrDescriptor d;
  d.ctaGroup = CtaGroup::Two;
  d.m = 256;
  d.n = 16;
  d.aScaleFactorId = 1;
  d.bScaleFactorId = 1;
  // b_sf_id 1 << 4 = 0x10; N 2 << 17 = 0x40000; UE8M0 0x800000;
  // M >> 7 = 2 -> 2 << 27 = 0x10000000; a_sf_id 1 << 29 = 0x20000000.
  // Sum 0x30840010.
  EXPECT_EQ(encodeInstrDescriptor(d), std::optional<uint32_t>(0x30840010u));
}

TEST(InstrDescriptorBlockScaled, CtaGroup2M128) {
  BlockScaledInstrDescriptor d;
  d.ctaGroup = CtaGroup::Two;
  d.m = 128;
  d.n = 32;
  // (32 >> 3 = 4) << 17 = 0x80000; 0x800000; 1 << 27 = 0x08000000
  EXPECT_EQ(encodeInstrDescriptor(d), std::optional<uint32_t>(0x08880000u));
}

TEST(InstrDescriptorBlockScaled, RejectsIllegal) {
  BlockScaledInstrDescriptor d;
  d.m = 64; // Table 39: mxf8f6f4 cta_group::1 is 128xNxK only
  d.n = 64;
  std::string error;
  EXPECT_FALSE(encodeInstrDescriptor(d, &error));
  EXPECT_NE(error.find("M"), std::string::npos);

  d.m = 256; // needs cta_group::2
  EXPECT_FALSE(encodeInstrDescriptor(d));

  d.m = 128;
  d.n = 8;
  d.ctaGroup = CtaGroup::Two; // cta_group::2 N % 16
  EXPECT_FALSE(encodeInstrDescriptor(d));

  d.ctaGroup = CtaGroup::One;
  d.aScaleFactorId = 4; // 2-bit field
  EXPECT_FALSE(encodeInstrDescriptor(d, &error));
  d.aScaleFactorId = 0;
  d.bScaleFactorId = 7;
  EXPECT_FALSE(encodeInstrDescriptor(d));
  d.bScaleFactorId = 0;
  // M = 128, N = 8, cta_group::1 is legal: 1 << 17 | 0x800000 | 1 << 27.
  EXPECT_EQ(encodeInstrDescriptor(d), std::optional<uint32_t>(0x08820000u));
}

//===----------------------------------------------------------------------===//
// Shared memory descriptor (Table 40)
//===----------------------------------------------------------------------===//

TEST(SharedMemoryDescriptor, KMajor128BFields) {
  SharedMemoryDescriptor d;
  d.startAddress = 0x400;
  d.leadingByteOffset = 16;
  d.strideByteOffset = 1024;
  d.swizzle = SwizzleMode::Swizzle128B;
  // start 0x400 >> 4 = 0x40 at [0,14)            -> 0x0000000000000040
  // LBO 16 >> 4 = 1 at [16,30)                   -> 0x0000000000010000
  // SBO 1024 >> 4 = 0x40 at [32,46)              -> 0x0000004000000000
  // fixed 0b001 at [46,49): 1 << 46              -> 0x0000400000000000
  // swizzle 128B = 2 at [61,64): 2 << 61         -> 0x4000000000000000
  EXPECT_EQ(encodeSharedMemoryDescriptor(d),
            std::optional<uint64_t>(0x4000404000010040ull));
}

TEST(SharedMemoryDescriptor, BaseOffsetAndAbsoluteMode) {
  SharedMemoryDescriptor d;
  d.startAddress = 0x10;
  d.leadingByteOffset = 0x800;
  d.strideByteOffset = 128;
  d.baseOffset = 3;
  d.leadingByteOffsetAbsolute = true;
  // start 1; LBO 0x80 << 16 = 0x800000; SBO 8 << 32 = 0x800000000;
  // fixed 1 << 46 = 0x400000000000; base 3 << 49 = 0x6000000000000;
  // LBO mode 1 << 52 = 0x10000000000000; swizzle none = 0.
  // Sum 0x0016400800800001.
  EXPECT_EQ(encodeSharedMemoryDescriptor(d),
            std::optional<uint64_t>(0x0016400800800001ull));
  std::optional<SharedMemoryDescriptor> back =
      decodeSharedMemoryDescriptor(0x0016400800800001ull);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->startAddress, 0x10u);
  EXPECT_EQ(back->leadingByteOffset, 0x800u);
  EXPECT_EQ(back->strideByteOffset, 128u);
  EXPECT_EQ(back->baseOffset, 3);
  EXPECT_TRUE(back->leadingByteOffsetAbsolute);
  EXPECT_EQ(back->swizzle, SwizzleMode::None);
}

TEST(SharedMemoryDescriptor, SwizzleModeValues) {
  // Only the fixed bit 46 besides the mode: 0x0000400000000000 |
  //   mode << 61: 32B 6 -> 0xC000..., 64B 4 -> 0x8000..., 128B-atom-32B 1 ->
  //   0x2000..., none 0.
  const std::pair<SwizzleMode, uint64_t> cases[] = {
      {SwizzleMode::None, 0x0000400000000000ull},
      {SwizzleMode::Swizzle128BAtom32B, 0x2000400000000000ull},
      {SwizzleMode::Swizzle128B, 0x4000400000000000ull},
      {SwizzleMode::Swizzle64B, 0x8000400000000000ull},
      {SwizzleMode::Swizzle32B, 0xC000400000000000ull},
  };
  for (auto [mode, expected] : cases) {
    SharedMemoryDescriptor d;
    d.swizzle = mode;
    EXPECT_EQ(encodeSharedMemoryDescriptor(d), std::optional<uint64_t>(expected));
  }
  // Spans and pattern boundaries (Table 41 / Table 53).
  EXPECT_EQ(swizzleSpanBytes(SwizzleMode::None), 16);
  EXPECT_EQ(swizzleSpanBytes(SwizzleMode::Swizzle32B), 32);
  EXPECT_EQ(swizzlePatternBytes(SwizzleMode::Swizzle128B), 1024);
  EXPECT_EQ(swizzlePatternBytes(SwizzleMode::Swizzle64B), 512);
  EXPECT_EQ(swizzlePatternBytes(SwizzleMode::Swizzle32B), 256);
  // base offset = (pattern start >> 7) & 7: 0x1180 -> 0x23 & 7 = 3.
  EXPECT_EQ(baseOffsetForPatternStart(0x1180), 3);
  EXPECT_EQ(baseOffsetForPatternStart(0x2000), 0);
}

TEST(SharedMemoryDescriptor, RejectsOutOfRange) {
  SharedMemoryDescriptor d;
  d.startAddress = 8; // not 16-byte aligned
  EXPECT_FALSE(encodeSharedMemoryDescriptor(d));
  d.startAddress = 1u << 18; // beyond the 14-bit field of addr >> 4
  EXPECT_FALSE(encodeSharedMemoryDescriptor(d));
  d.startAddress = 0;
  d.leadingByteOffset = 1u << 18;
  EXPECT_FALSE(encodeSharedMemoryDescriptor(d));
  d.leadingByteOffset = 0;
  d.strideByteOffset = 24;
  EXPECT_FALSE(encodeSharedMemoryDescriptor(d));
  d.strideByteOffset = 0;
  d.baseOffset = 8;
  EXPECT_FALSE(encodeSharedMemoryDescriptor(d));
  d.baseOffset = 0;
  d.swizzle = static_cast<SwizzleMode>(3); // 3, 5, 7 are invalid
  std::string error;
  EXPECT_FALSE(encodeSharedMemoryDescriptor(d, &error));
  EXPECT_FALSE(error.empty());
  // Decoding rejects a descriptor without the fixed 0b001 at [46,49).
  EXPECT_FALSE(decodeSharedMemoryDescriptor(0x4000004000010040ull));
  EXPECT_FALSE(decodeSharedMemoryDescriptor(0x6000400000000000ull)); // mode 3
}

//===----------------------------------------------------------------------===//
// FP8 operand tiles
//===----------------------------------------------------------------------===//

TEST(Fp8OperandTile, TmaSwizzlePlacement) {
  // K-major 128B, row r at r * 128, 16-byte chunk c -> c ^ (r % 8).
  Fp8OperandTile k128{OperandMajor::K, SwizzleMode::Swizzle128B, 128, 128};
  EXPECT_EQ(fp8TileByteOffset(k128, 1, 0), 144);  // 128 + (0 ^ 1) * 16
  EXPECT_EQ(fp8TileByteOffset(k128, 7, 16), 992); // 7 * 128 + (1 ^ 7) * 16
  EXPECT_EQ(fp8TileByteOffset(k128, 8, 0), 1024); // next pattern, row 0
  EXPECT_EQ(fp8TileByteOffset(k128, 3, 37), 3 * 128 + (2 ^ 3) * 16 + 5);
  // K-major 64B: rows of 64 bytes; chunk bits [4,6) ^= address bits [7,9).
  Fp8OperandTile k64{OperandMajor::K, SwizzleMode::Swizzle64B, 128, 128};
  EXPECT_EQ(fp8TileByteOffset(k64, 1, 0), 64);   // 64: bits 7-8 = 0
  EXPECT_EQ(fp8TileByteOffset(k64, 2, 0), 144);  // 128 -> chunk 0 ^ 1
  // k = 64 is the second TMA box: 128 rows x 64 bytes = 8192 further.
  EXPECT_EQ(fp8TileByteOffset(k64, 0, 64), 8192);
  // K-major 32B: bit 4 ^= bit 7.
  Fp8OperandTile k32{OperandMajor::K, SwizzleMode::Swizzle32B, 128, 128};
  EXPECT_EQ(fp8TileByteOffset(k32, 4, 0), 144);  // 128 -> chunk 0 ^ 1
  EXPECT_EQ(fp8TileByteOffset(k32, 3, 16), 112); // 96 + 16, bit 7 = 0
  // MN-major None: rows of 16 MN elements per K; next 16 MN -> next box.
  Fp8OperandTile mnNone{OperandMajor::MN, SwizzleMode::None, 128, 64};
  EXPECT_EQ(fp8TileByteOffset(mnNone, 17, 2), 64 * 16 + 2 * 16 + 1);
}

TEST(Fp8OperandTile, KMajorOffsets) {
  // 128B: SBO = 8 rows x 128 B = 1024; LBO unused -> 16 (field 1).
  Fp8OperandTile t{OperandMajor::K, SwizzleMode::Swizzle128B, 128, 128};
  std::optional<Fp8OperandOffsets> o = getFp8OperandOffsets(t);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->strideByteOffset, 1024u);
  EXPECT_EQ(o->leadingByteOffset, 16u);
  // k steps advance 32 bytes inside the 128-byte row: 0, 32, 64, 96.
  for (int64_t s = 0; s < 4; ++s)
    EXPECT_EQ(fp8OperandStartOffset(t, s, 0), std::optional<uint32_t>(32 * s));
  // MN offset 64 rows = 8 groups of 8 x SBO 1024 = 8192.
  EXPECT_EQ(fp8OperandStartOffset(t, 0, 64), std::optional<uint32_t>(8192));

  // 64B: SBO = 8 x 64 = 512; boxes of 64 K: 128 x 64 = 8192 apart.
  t.swizzle = SwizzleMode::Swizzle64B;
  o = getFp8OperandOffsets(t);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->strideByteOffset, 512u);
  EXPECT_EQ(o->leadingByteOffset, 16u);
  EXPECT_EQ(fp8OperandStartOffset(t, 1, 0), std::optional<uint32_t>(32));
  EXPECT_EQ(fp8OperandStartOffset(t, 2, 0), std::optional<uint32_t>(8192));
  EXPECT_EQ(fp8OperandStartOffset(t, 3, 0), std::optional<uint32_t>(8224));

  // 32B: SBO = 256; each k step is its own box of 128 x 32 = 4096 bytes.
  t.swizzle = SwizzleMode::Swizzle32B;
  o = getFp8OperandOffsets(t);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->strideByteOffset, 256u);
  EXPECT_EQ(fp8OperandStartOffset(t, 3, 0), std::optional<uint32_t>(12288));

  // None: core matrices 8 x 16 B contiguous -> SBO 128; next 16-byte K
  // chunk = next box of 128 x 16 = 2048 -> LBO 2048; k step s starts at
  // box 2 s = 4096 s.
  t.swizzle = SwizzleMode::None;
  o = getFp8OperandOffsets(t);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->strideByteOffset, 128u);
  EXPECT_EQ(o->leadingByteOffset, 2048u);
  EXPECT_EQ(fp8OperandStartOffset(t, 1, 0), std::optional<uint32_t>(4096));
  EXPECT_EQ(fp8OperandStartOffset(t, 0, 8), std::optional<uint32_t>(128));
}

TEST(Fp8OperandTile, MNMajorOffsets) {
  // 128B, N = 256, K = 128: boxes of 128 N x 128 K rows = 16384 bytes.
  // SBO = next 8 K rows = 8 x 128 = 1024; LBO = next 128 N = 16384.
  Fp8OperandTile t{OperandMajor::MN, SwizzleMode::Swizzle128B, 256, 128};
  std::optional<Fp8OperandOffsets> o = getFp8OperandOffsets(t);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->strideByteOffset, 1024u);
  EXPECT_EQ(o->leadingByteOffset, 16384u);
  // k step 1 = K rows 32..63 = 4 groups of 8 x 1024 = 4096.
  EXPECT_EQ(fp8OperandStartOffset(t, 1, 0), std::optional<uint32_t>(4096));
  EXPECT_EQ(fp8OperandStartOffset(t, 0, 128), std::optional<uint32_t>(16384));

  // 64B, N = 128: LBO = 128 K x 64 = 8192, SBO = 512; k step 1 = 4 x 512.
  t = {OperandMajor::MN, SwizzleMode::Swizzle64B, 128, 128};
  o = getFp8OperandOffsets(t);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->leadingByteOffset, 8192u);
  EXPECT_EQ(o->strideByteOffset, 512u);
  EXPECT_EQ(fp8OperandStartOffset(t, 1, 0), std::optional<uint32_t>(2048));

  // 32B: LBO = 128 x 32 = 4096, SBO = 256; k step 1 = 4 x 256.
  t.swizzle = SwizzleMode::Swizzle32B;
  o = getFp8OperandOffsets(t);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->leadingByteOffset, 4096u);
  EXPECT_EQ(o->strideByteOffset, 256u);
  EXPECT_EQ(fp8OperandStartOffset(t, 1, 0), std::optional<uint32_t>(1024));

  // None: LBO = next 8 K rows = 8 x 16 = 128; SBO = next 16 MN elements =
  // next box of 128 K x 16 = 2048 (the two swap roles, PTX 9.7.16.4.1).
  t.swizzle = SwizzleMode::None;
  o = getFp8OperandOffsets(t);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->leadingByteOffset, 128u);
  EXPECT_EQ(o->strideByteOffset, 2048u);
  EXPECT_EQ(fp8OperandStartOffset(t, 1, 0), std::optional<uint32_t>(512));
  EXPECT_EQ(fp8OperandStartOffset(t, 0, 16), std::optional<uint32_t>(2048));
}

TEST(Fp8OperandTile, WholeDescriptors) {
  // K-major 128B tile at 0x1000, k step 1: start 0x1020 >> 4 = 0x102;
  // LBO field 1 -> 0x10000; SBO 1024 -> 0x40 << 32; fixed 1 << 46;
  // 128B 2 << 61 -> 0x4000404000010102.
  Fp8OperandTile t{OperandMajor::K, SwizzleMode::Swizzle128B, 128, 128};
  std::optional<SharedMemoryDescriptor> d =
      getFp8OperandDescriptor(t, 0x1000, 1, 0);
  ASSERT_TRUE(d);
  EXPECT_EQ(encodeSharedMemoryDescriptor(*d),
            std::optional<uint64_t>(0x4000404000010102ull));
  // MN-major 128B, N = 256, K = 128 at 0, k step 2: start 8192 >> 4 =
  // 0x200; LBO 16384 >> 4 = 0x400 -> 0x400 << 16 = 0x4000000; SBO 0x40 << 32.
  t = {OperandMajor::MN, SwizzleMode::Swizzle128B, 256, 128};
  d = getFp8OperandDescriptor(t, 0, 2, 0);
  ASSERT_TRUE(d);
  EXPECT_EQ(encodeSharedMemoryDescriptor(*d),
            std::optional<uint64_t>(0x4000404004000200ull));
  // A 128B tile must start on a 1024-byte boundary (base offset 0).
  std::string error;
  EXPECT_FALSE(getFp8OperandDescriptor(t, 512, 0, 0, &error));
  EXPECT_FALSE(error.empty());
}

TEST(Fp8OperandTile, RejectsUnsupportedTiles) {
  const Fp8OperandTile bad[] = {
      {OperandMajor::MN, SwizzleMode::Swizzle128BAtom32B, 128, 128},
      {OperandMajor::K, SwizzleMode::Swizzle128B, 12, 128},  // MN % 8
      {OperandMajor::K, SwizzleMode::Swizzle64B, 128, 96},   // K % 64
      {OperandMajor::K, SwizzleMode::None, 128, 48},         // K % 32
      {OperandMajor::MN, SwizzleMode::None, 8, 128},         // MN % 16
      {OperandMajor::MN, SwizzleMode::Swizzle128B, 64, 128}, // MN % 128
      {OperandMajor::K, SwizzleMode::Swizzle128B, 4096, 128}, // > 2^18 bytes
  };
  for (const Fp8OperandTile &t : bad) {
    EXPECT_FALSE(checkFp8OperandTile(t).empty());
    EXPECT_FALSE(getFp8OperandOffsets(t));
  }
  Fp8OperandTile ok{OperandMajor::K, SwizzleMode::Swizzle128B, 128, 128};
  EXPECT_FALSE(fp8OperandStartOffset(ok, 4, 0)); // K 128..159 outside
  EXPECT_FALSE(fp8OperandStartOffset(ok, -1, 0));
  EXPECT_FALSE(fp8OperandStartOffset(ok, 0, 4)); // MN offset % 8
}

// The descriptor's canonical-layout reading (PTX 9.7.16.4.1 / CUTLASS
// make_umma_desc) must find every element exactly where the TMA box model
// stored it, for each major and swizzle, every k step and MN sub-tile.
TEST(Fp8OperandTile, DescriptorReadsWhatTmaWrote) {
  const SwizzleMode swizzles[] = {SwizzleMode::None, SwizzleMode::Swizzle32B,
                                  SwizzleMode::Swizzle64B,
                                  SwizzleMode::Swizzle128B};
  const uint32_t base = 0x2000;
  for (OperandMajor major : {OperandMajor::K, OperandMajor::MN})
    for (SwizzleMode swizzle : swizzles) {
      const Fp8OperandTile tile{major, swizzle, 256, 128};
      SCOPED_TRACE(testing::Message()
                   << "major " << int(major) << " swizzle " << int(swizzle));
      // The TMA model is a bijection onto [0, 256 * 128).
      std::set<int64_t> seen;
      for (int64_t mn = 0; mn < tile.mnExtent; ++mn)
        for (int64_t k = 0; k < tile.kExtent; ++k)
          seen.insert(fp8TileByteOffset(tile, mn, k));
      ASSERT_EQ(int64_t(seen.size()), tile.mnExtent * tile.kExtent);
      ASSERT_EQ(*seen.rbegin(), tile.mnExtent * tile.kExtent - 1);
      // Two MMAs of N = 128 along MN, four k steps.
      for (int64_t mnOffset : {0, 128})
        for (int64_t step = 0; step < 4; ++step) {
          std::optional<SharedMemoryDescriptor> d =
              getFp8OperandDescriptor(tile, base, step, mnOffset);
          ASSERT_TRUE(d);
          int64_t mismatches = 0;
          for (int64_t mn = 0; mn < 128; ++mn)
            for (int64_t k = 0; k < kMmaK; ++k)
              mismatches += descriptorElementAddress(*d, major, mn, k) !=
                            base + fp8TileByteOffset(tile, mnOffset + mn,
                                                     step * kMmaK + k);
          EXPECT_EQ(mismatches, 0) << "mnOffset " << mnOffset << " step " << step;
        }
    }
}

//===----------------------------------------------------------------------===//
// Tensor Memory
//===----------------------------------------------------------------------===//

TEST(TensorMemory, AllocationRule) {
  // Power of two >= 32 and <= 512 (9.7.16.1.2).
  EXPECT_EQ(tmemAllocationColumns(1), std::optional<uint32_t>(32));
  EXPECT_EQ(tmemAllocationColumns(32), std::optional<uint32_t>(32));
  EXPECT_EQ(tmemAllocationColumns(33), std::optional<uint32_t>(64));
  EXPECT_EQ(tmemAllocationColumns(200), std::optional<uint32_t>(256));
  EXPECT_EQ(tmemAllocationColumns(512), std::optional<uint32_t>(512));
  EXPECT_FALSE(tmemAllocationColumns(513));
  EXPECT_FALSE(tmemAllocationColumns(0));
  EXPECT_TRUE(isValidTmemAllocation(32));
  EXPECT_TRUE(isValidTmemAllocation(128));
  EXPECT_TRUE(isValidTmemAllocation(512));
  EXPECT_FALSE(isValidTmemAllocation(16));
  EXPECT_FALSE(isValidTmemAllocation(48));
  EXPECT_FALSE(isValidTmemAllocation(1024));
  EXPECT_FALSE(isValidTmemAllocation(0));
}

TEST(TensorMemory, Addresses) {
  // lane << 16 | column: 5 << 16 = 0x50000, | 17 = 0x50011.
  EXPECT_EQ(tmemAddress(5, 17), std::optional<uint32_t>(0x00050011u));
  EXPECT_EQ(tmemAddress(127, 511), std::optional<uint32_t>(0x007F01FFu));
  EXPECT_EQ(tmemAddress(0, 0), std::optional<uint32_t>(0u));
  EXPECT_FALSE(tmemAddress(128, 0));
  EXPECT_FALSE(tmemAddress(0, 512));
}

TEST(TensorMemory, AccumulatorColumnsAndLanes) {
  EXPECT_EQ(accumulatorColumns(CtaGroup::One, 128, 256), 256);
  EXPECT_EQ(accumulatorColumns(CtaGroup::One, 64, 8), 8);
  EXPECT_EQ(accumulatorColumns(CtaGroup::Two, 256, 256), 256);
  EXPECT_FALSE(accumulatorColumns(CtaGroup::Two, 128, 128)); // Layout B
  EXPECT_FALSE(accumulatorColumns(CtaGroup::One, 256, 128));
  EXPECT_FALSE(accumulatorColumns(CtaGroup::One, 128, 12));

  // Layout D: row -> lane.
  EXPECT_EQ(accumulatorLocation(CtaGroup::One, 128, 64, 77, 5),
            std::optional<TmemLocation>(TmemLocation{77, 5}));
  // Layout F (M = 64): 16 rows per 32-lane partition.
  //   row 15 -> lane 15; row 16 -> 32; row 47 -> 2 * 32 + 15 = 79;
  //   row 63 -> 96 + 15 = 111; with alignment 16: 63 -> 127, 16 -> 48.
  const std::pair<int64_t, uint32_t> layoutF[] = {
      {0, 0}, {15, 15}, {16, 32}, {47, 79}, {63, 111}};
  for (auto [row, lane] : layoutF)
    EXPECT_EQ(accumulatorLocation(CtaGroup::One, 64, 32, row, 3),
              std::optional<TmemLocation>(TmemLocation{lane, 3}));
  EXPECT_EQ(accumulatorLocation(CtaGroup::One, 64, 32, 63, 0, 16),
            std::optional<TmemLocation>(TmemLocation{127, 0}));
  EXPECT_EQ(accumulatorLocation(CtaGroup::One, 64, 32, 16, 0, 16),
            std::optional<TmemLocation>(TmemLocation{48, 0}));
  EXPECT_FALSE(accumulatorLocation(CtaGroup::One, 64, 32, 0, 0, 8));
  EXPECT_FALSE(accumulatorLocation(CtaGroup::One, 128, 32, 0, 0, 16));
  EXPECT_FALSE(accumulatorLocation(CtaGroup::One, 64, 32, 64, 0));
  // Layout A: row 200 of M = 256 lives in CTA 1, lane 72.
  EXPECT_EQ(accumulatorLocation(CtaGroup::Two, 256, 64, 200, 9),
            std::optional<TmemLocation>(TmemLocation{72, 9}));
}

TEST(TensorMemory, BlockScaledPlan) {
  // N = 256, 1 stage: acc [0,256), SFA [256,260), SFB 2 atoms [260,268)
  // -> 268 used -> 512 allocated.
  std::optional<BlockScaledTmemPlan> p = planBlockScaledTmem(256, 1);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->scaleAColumn, 256u);
  EXPECT_EQ(p->scaleBColumn, 260u);
  EXPECT_EQ(p->usedColumns, 268u);
  EXPECT_EQ(p->allocatedColumns, 512u);
  // N = 128, 1 stage: SFA 128, SFB 132, used 136 -> 256.
  p = planBlockScaledTmem(128, 1);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->scaleAColumn, 128u);
  EXPECT_EQ(p->scaleBColumn, 132u);
  EXPECT_EQ(p->allocatedColumns, 256u);
  // N = 64: 64 + 4 + 4 (one atom even for 64 rows) = 72 -> 128.
  p = planBlockScaledTmem(64, 1);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->usedColumns, 72u);
  EXPECT_EQ(p->allocatedColumns, 128u);
  // N = 256 x 2 stages = 512 + 12 > 512.
  std::string error;
  EXPECT_FALSE(planBlockScaledTmem(256, 2, &error));
  EXPECT_FALSE(error.empty());
}

TEST(TensorMemory, BlockScaledPlanWithScaleSlots) {
  // One slot per pipeline stage (the MXFP8 kernel). N = 256, 1 accumulator,
  // 3 slots: SFA slots [256,268) 4 apart, SFB slots [268,292) 8 apart.
  std::optional<BlockScaledTmemPlan> p =
      planBlockScaledTmem(256, 1, nullptr, /*scaleSlots=*/3);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->scaleSlots, 3u);
  EXPECT_EQ(p->scaleAColumn, 256u);
  EXPECT_EQ(p->scaleAColumnsPerSlot, 4u);
  EXPECT_EQ(p->scaleBColumn, 268u);
  EXPECT_EQ(p->scaleBColumnsPerSlot, 8u);
  EXPECT_EQ(p->usedColumns, 292u);
  EXPECT_EQ(p->allocatedColumns, 512u);
  // N = 128, 2 accumulators, 5 slots: 256 + 5 * 4 + 5 * 4 = 296 -> 512.
  p = planBlockScaledTmem(128, 2, nullptr, 5);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->scaleBColumn, 276u);
  EXPECT_EQ(p->usedColumns, 296u);
  // Every slot's start is a multiple of 4 columns (one atom).
  EXPECT_EQ(p->scaleAColumn % 4, 0u);
  EXPECT_EQ(p->scaleBColumn % 4, 0u);
  // N = 224 x 2 accumulators + 5 slots of 4 + 8 = 508 fits; 6 slots do not.
  EXPECT_TRUE(planBlockScaledTmem(224, 2, nullptr, 5));
  EXPECT_FALSE(planBlockScaledTmem(224, 2, nullptr, 6));
  EXPECT_FALSE(planBlockScaledTmem(128, 1, nullptr, 0));
}

// The MXFP8 kernel reads the atom-tiled scales through a 3-D tensor map
// (dims [128, 4 * atomsAlongK, rows / 128], strides [128, 512 *
// atomsAlongK] bytes) with boxes of [128, 4, atoms] at (0, 4 g, i): the box
// must start exactly at atom (i, g) and hold the atoms of rows 128 i ..
// contiguously, each the 512 bytes scaleFactorByteOffset puts there.
TEST(ScaleFactorAtom, TensorMapViewOfTheAtomLayout) {
  ScaleFactorLayout layout = makeScaleFactorLayout(/*rows=*/300,
                                                   /*kBlocks=*/40);
  ASSERT_EQ(layout.atomsAlongK(), 10);
  const int64_t rowStride = 128, atomRowStride = 512 * layout.atomsAlongK();
  for (int64_t i = 0; i < layout.paddedRows / 128; ++i)
    for (int64_t g = 0; g < layout.atomsAlongK(); ++g)
      for (int64_t mn = 0; mn < 128; ++mn)
        for (int64_t kb = 0; kb < 4; ++kb) {
          // Element (x, y, z) of the view is at x + y * 128 + z * stride.
          int64_t inAtom = scaleFactorAtomOffset(mn, kb);
          int64_t view = inAtom % 128 + (4 * g + inAtom / 128) * rowStride +
                         i * atomRowStride;
          EXPECT_EQ(view, scaleFactorByteOffset(layout, 128 * i + mn,
                                                4 * g + kb));
        }
}

//===----------------------------------------------------------------------===//
// Scale factor atom
//===----------------------------------------------------------------------===//

TEST(ScaleFactorAtom, ByteOffsetsInsideOneAtom) {
  // (mn % 32) * 16 + (mn / 32) * 4 + kb % 4
  EXPECT_EQ(scaleFactorAtomOffset(0, 0), 0);
  EXPECT_EQ(scaleFactorAtomOffset(31, 0), 496);  // 31 * 16
  EXPECT_EQ(scaleFactorAtomOffset(32, 0), 4);    // 0 * 16 + 1 * 4
  EXPECT_EQ(scaleFactorAtomOffset(33, 2), 22);   // 16 + 4 + 2
  EXPECT_EQ(scaleFactorAtomOffset(64, 1), 9);    // 0 + 2 * 4 + 1
  EXPECT_EQ(scaleFactorAtomOffset(31, 3), 499);  // 496 + 3
  EXPECT_EQ(scaleFactorAtomOffset(127, 3), 511); // 31 * 16 + 3 * 4 + 3
  EXPECT_EQ(scaleFactorAtomOffset(0, 3), 3);
  // All 512 (mn, kb) of one atom hit distinct bytes.
  std::set<int64_t> seen;
  for (int64_t mn = 0; mn < 128; ++mn)
    for (int64_t kb = 0; kb < 4; ++kb)
      seen.insert(scaleFactorAtomOffset(mn, kb));
  EXPECT_EQ(seen.size(), 512u);
}

TEST(ScaleFactorAtom, WholeTensorLayoutAndInverse) {
  // 200 rows x 10 K blocks -> padded 256 x 12: 2 x 3 atoms, 3072 bytes.
  const ScaleFactorLayout l = makeScaleFactorLayout(200, 10);
  EXPECT_EQ(l.paddedRows, 256);
  EXPECT_EQ(l.paddedKBlocks, 12);
  EXPECT_EQ(l.sizeBytes(), 3072);
  EXPECT_EQ(l.atomsAlongK(), 3);
  // Atoms K-fastest: atom (row block i, k-group g) = i * 3 + g.
  EXPECT_EQ(scaleFactorByteOffset(l, 0, 3), 3);       // atom 0, kb 3
  EXPECT_EQ(scaleFactorByteOffset(l, 0, 4), 512);     // atom 1 (k=4 corner)
  EXPECT_EQ(scaleFactorByteOffset(l, 32, 4), 516);    // atom 1 + 4
  EXPECT_EQ(scaleFactorByteOffset(l, 31, 4), 512 + 496);
  EXPECT_EQ(scaleFactorByteOffset(l, 127, 11), 1535); // atom 2 = 1024 + 511
  EXPECT_EQ(scaleFactorByteOffset(l, 128, 0), 1536);  // atom 3
  // (199, 9): atom 1 * 3 + 2 = 5 -> 2560; row 71: 7 * 16 + 2 * 4 + 1 = 121.
  EXPECT_EQ(scaleFactorByteOffset(l, 199, 9), 2681);
  EXPECT_EQ(scaleFactorCoordAt(l, 2681), (ScaleFactorCoord{199, 9}));
  EXPECT_EQ(scaleFactorCoordAt(l, 516), (ScaleFactorCoord{32, 4}));
  EXPECT_EQ(scaleFactorCoordAt(l, 1535), (ScaleFactorCoord{127, 11}));
  // Inverse over every byte, padding included.
  for (int64_t b = 0; b < l.sizeBytes(); ++b) {
    const ScaleFactorCoord c = scaleFactorCoordAt(l, b);
    ASSERT_LT(c.mn, l.paddedRows);
    ASSERT_LT(c.kb, l.paddedKBlocks);
    ASSERT_EQ(scaleFactorByteOffset(l, c.mn, c.kb), b) << b;
  }
}

TEST(ScaleFactorAtom, SelectionAndTmemPlacement) {
  // k block 0..3 -> k-group 0, IDs 0..3; block 4 -> group 1, ID 0.
  EXPECT_EQ(selectScaleFactor(0).kGroup, 0);
  EXPECT_EQ(selectScaleFactor(0).scaleFactorId, 0u);
  EXPECT_EQ(selectScaleFactor(3).scaleFactorId, 3u);
  EXPECT_EQ(selectScaleFactor(4).kGroup, 1);
  EXPECT_EQ(selectScaleFactor(4).scaleFactorId, 0u);
  EXPECT_EQ(selectScaleFactor(9).kGroup, 2);
  EXPECT_EQ(selectScaleFactor(9).scaleFactorId, 1u);
  // Columns: 4 per started 128 rows.
  EXPECT_EQ(scaleFactorColumns(32), 4);
  EXPECT_EQ(scaleFactorColumns(128), 4);
  EXPECT_EQ(scaleFactorColumns(129), 8);
  EXPECT_EQ(scaleFactorColumns(256), 8);
  // Row 37 in lane partition 2: lane 64 + 5 = 69, column 37 / 32 = 1.
  EXPECT_EQ(scaleFactorLocation(37, 2), (TmemLocation{69, 1}));
  EXPECT_EQ(scaleFactorLocation(127, 3), (TmemLocation{127, 3}));
  EXPECT_EQ(scaleFactorLocation(31, 0), (TmemLocation{31, 0}));
  EXPECT_EQ(scaleFactorLocation(32, 0), (TmemLocation{0, 1}));
  // Row 200 (second atom of N = 256): lane 8, column 6 = atom 1's 4 + 2.
  EXPECT_EQ(scaleFactorLocation(200, 0), (TmemLocation{8, 6}));
}

TEST(ScaleFactorAtom, CopySourceDescriptor) {
  // Atom at 0x200: start 0x20; LBO 0; SBO 128 >> 4 = 8 -> 8 << 32 =
  // 0x800000000; fixed 1 << 46; no swizzle -> 0x0000400800000020.
  std::optional<SharedMemoryDescriptor> d =
      getScaleFactorCopySourceDescriptor(0x200);
  ASSERT_TRUE(d);
  EXPECT_EQ(encodeSharedMemoryDescriptor(*d),
            std::optional<uint64_t>(0x0000400800000020ull));
  EXPECT_FALSE(getScaleFactorCopySourceDescriptor(0x208));
}

} // namespace
