//===- TCGen05Encodings.h - sm_100a tcgen05 bit encodings -------*- C++ -*-===//
//
// The Blackwell (sm_100a) MMA as data: the 32-bit instruction descriptors of
// `tcgen05.mma.cta_group::{1,2}.kind::f8f6f4` and
// `.kind::mxf8f6f4.block_scale`, the 64-bit shared-memory matrix descriptor
// and the FP8 operand tiles it describes, Tensor Memory (TMEM) addressing and
// allocation, and the 128x4 UE8M0 scale-factor atom. Pure functions, no MLIR
// IR: the sm_100a lowering calls them and emits the constants.
//
// Every field comes from the PTX ISA (section numbers of PTX ISA 8.7/8.8,
// chapter 9.7.16 "TensorCore 5th Generation Family Instructions"); where
// CUTLASS (cute/arch/mma_sm100_desc.hpp) differs, that is noted by the field.
// Functions that can be handed an illegal value return std::optional and,
// when `error` is non-null, say why.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_CONVERSION_FP8TOBLACKWELL_TCGEN05ENCODINGS_H
#define FP8_CONVERSION_FP8TOBLACKWELL_TCGEN05ENCODINGS_H

#include "FP8/Target/Chip.h"

#include <cstdint>
#include <optional>
#include <string>

namespace mlir::fp8::blackwell {

//===----------------------------------------------------------------------===//
// Operand formats, majors, CTA groups
//===----------------------------------------------------------------------===//

/// atype/btype codes of kind::f8f6f4 and kind::mxf8f6f4 (PTX ISA 9.7.16.4.2,
/// Tables 42/43: E4M3 = 0, E5M2 = 1; E2M3 = 3, E3M2 = 4, E2M1 = 5 are the
/// sub-byte formats this project does not use).
enum class Fp8Format : uint8_t { E4M3 = 0, E5M2 = 1 };

/// dtype of kind::f8f6f4 (Table 42: F16 = 0, F32 = 1). Block-scaled kinds
/// always accumulate in f32 and have no dtype field.
enum class AccumulatorFormat : uint8_t { F16 = 0, F32 = 1 };

/// "Transpose A/B Matrix" bits (Table 42): 0 = no transpose = K-major,
/// 1 = transpose = MN-major (PTX ISA 9.7.16.10.6). 8-bit operands may be
/// either, which is what lets NN/NT GEMMs run without a transposing copy.
enum class OperandMajor : uint8_t { K = 0, MN = 1 };

enum class CtaGroup : uint8_t { One = 1, Two = 2 };

/// K of one 8-bit dense tcgen05.mma (Table 39: K = 32 for f8f6f4/mxf8f6f4).
inline constexpr int64_t kMmaK = 32;
/// Elements per MX scale block (kind::mxf8f6f4 is scale_vec::1X / block32:
/// one UE8M0 per 32 K elements, i.e. exactly one per MMA).
inline constexpr int64_t kScaleBlockK = kMXScaleBlock;

//===----------------------------------------------------------------------===//
// Instruction descriptor (PTX ISA 9.7.16.4.2 "Instruction descriptor")
//===----------------------------------------------------------------------===//

namespace instr_desc {
// -- Table 42, kind::f8f6f4 (shared with tf32/f16/i8) --
/// Bits [0,2): sparsity selector (sparse only; always 0 here).
inline constexpr unsigned kSparsitySelectorShift = 0;
/// Bit 2: sparsity, dense = 0 (both tables).
inline constexpr unsigned kSparsityShift = 2;
/// Bit 3: saturate, integer kinds only (0 for f8f6f4).
inline constexpr unsigned kSaturateShift = 3;
/// Bits [4,6): dtype (F16 = 0, F32 = 1) for kind::f8f6f4.
inline constexpr unsigned kDFormatShift = 4;
/// Bits [7,10) atype and [10,13) btype (both tables).
inline constexpr unsigned kAFormatShift = 7;
inline constexpr unsigned kBFormatShift = 10;
/// Bits 13/14: negate A/B (both tables).
inline constexpr unsigned kNegateAShift = 13;
inline constexpr unsigned kNegateBShift = 14;
/// Bits 15/16: transpose A/B, i.e. MN-major (both tables).
inline constexpr unsigned kTransposeAShift = 15;
inline constexpr unsigned kTransposeBShift = 16;
/// Bits [17,23): N >> 3 (both tables).
inline constexpr unsigned kNShift = 17;
inline constexpr unsigned kNEncodingShift = 3;
inline constexpr uint32_t kNFieldMask = 0x3F;
/// Bits [24,29): M >> 4 (Table 42 only).
inline constexpr unsigned kMShift = 24;
inline constexpr unsigned kMEncodingShift = 4;
inline constexpr uint32_t kMFieldMask = 0x1F;
/// Bits [30,32): maximum shift of B reuse in `.ws` (0 = none; not used here).
inline constexpr unsigned kMaxShiftShift = 30;

// -- Table 43, kind::mxf8f6f4 (block_scale) --
/// Bits [4,6): Matrix B scale factor data ID (replaces dtype).
inline constexpr unsigned kBScaleFactorIdShift = 4;
/// Bit 23: scale matrix type for both scale_A and scale_B, UE8M0 = 1.
inline constexpr unsigned kScaleTypeShift = 23;
inline constexpr uint32_t kScaleTypeUE8M0 = 1;
/// Bits [27,29): M >> 7; bits [24,27) are reserved (0). CUTLASS gives
/// "[24,29) M >> 4" (InstrDescriptorBlockScaled::m_dim_): the same
/// bits for every legal block-scaled M (128 -> 8 << 24 == 1 << 27, 256 ->
/// 16 << 24 == 2 << 27), but M >> 4 would let M = 64 set reserved bit 26;
/// PTX's form makes M = 64 unencodable, matching Table 39 (no M = 64).
inline constexpr unsigned kBlockScaledMShift = 27;
inline constexpr unsigned kBlockScaledMEncodingShift = 7;
inline constexpr uint32_t kBlockScaledMFieldMask = 0x3;
/// Bits [29,31): Matrix A scale factor data ID. Bit 31 reserved.
inline constexpr unsigned kAScaleFactorIdShift = 29;
inline constexpr uint32_t kScaleFactorIdMask = 0x3;
} // namespace instr_desc

/// Empty when M x N x 32 is a legal dense, non-.ws tcgen05.mma shape for
/// 8-bit operands (PTX ISA 9.7.16.2.1, Table 39), otherwise the reason:
///  - f8f6f4, cta_group::1: M in {64, 128}; N in [8, 256], N % 8 == 0.
///  - f8f6f4, cta_group::2: M in {128, 256}; N in [16, 256], N % 16 == 0.
///  - mxf8f6f4, cta_group::1: M = 128; N in [8, 256], N % 8 == 0.
///  - mxf8f6f4, cta_group::2: M in {128, 256}; N in [16, 256], N % 16 == 0
///    (CUTLASS's SM100_MMA_MXF8F6F4_2x1SM_SS accepts only M = 256; PTX lists
///    both).
///  - MN-major B needs N % 16 == 0: Table 39 lists "N steps of 8 OR steps
///    of 16" for f8f6f4 cta_group::1, and the MN-major swizzle atom of an
///    8-bit operand is at least 16 elements wide along N (Table 53: 1x8
///    128-bit elements), so N = 8 cannot be described (CUTLASS
///    SM100_MMA_F8F6F4_SS requires the same). An "N % 16 for M = 128" rule
///    is the TMEM-A (.ts) form's, not the shared-memory form's.
std::string checkMmaShape(bool blockScaled, CtaGroup ctaGroup, int64_t m,
                          int64_t n, OperandMajor bMajor);

/// `tcgen05.mma.cta_group::G.kind::f8f6f4` (dense, no .ws).
struct F8F6F4InstrDescriptor {
  CtaGroup ctaGroup = CtaGroup::One;
  int64_t m = 128;
  int64_t n = 128;
  Fp8Format aFormat = Fp8Format::E4M3;
  Fp8Format bFormat = Fp8Format::E4M3;
  OperandMajor aMajor = OperandMajor::K;
  OperandMajor bMajor = OperandMajor::K;
  bool negateA = false;
  bool negateB = false;
  AccumulatorFormat dFormat = AccumulatorFormat::F32;
};

/// `tcgen05.mma.cta_group::G.kind::mxf8f6f4.block_scale.block32` (dense).
struct BlockScaledInstrDescriptor {
  CtaGroup ctaGroup = CtaGroup::One;
  int64_t m = 128;
  int64_t n = 128;
  Fp8Format aFormat = Fp8Format::E4M3;
  Fp8Format bFormat = Fp8Format::E4M3;
  OperandMajor aMajor = OperandMajor::K;
  OperandMajor bMajor = OperandMajor::K;
  bool negateA = false;
  bool negateB = false;
  /// Byte of the 32-bit TMEM scale word the MMA reads for A / B (0..3,
  /// PTX ISA 9.7.16.10.7.2-3); see selectScaleFactor().
  unsigned aScaleFactorId = 0;
  unsigned bScaleFactorId = 0;
};

std::optional<uint32_t>
encodeInstrDescriptor(const F8F6F4InstrDescriptor &desc,
                      std::string *error = nullptr);
std::optional<uint32_t>
encodeInstrDescriptor(const BlockScaledInstrDescriptor &desc,
                      std::string *error = nullptr);

/// A block-scaled descriptor with its two scale factor IDs replaced (what a
/// K loop patches per MMA); nullopt when an ID is > 3.
std::optional<uint32_t> withScaleFactorIds(uint32_t blockScaledDescriptor,
                                           unsigned aScaleFactorId,
                                           unsigned bScaleFactorId);

//===----------------------------------------------------------------------===//
// Shared memory descriptor (PTX ISA 9.7.16.4.1, Table 40)
//===----------------------------------------------------------------------===//

namespace smem_desc {
/// Bits [0,14): matrix start address, (addr & 0x3FFFF) >> 4.
inline constexpr unsigned kStartAddressShift = 0;
/// Bits [16,30): leading dimension byte offset (LBO) >> 4.
inline constexpr unsigned kLeadingByteOffsetShift = 16;
/// Bits [32,46): stride dimension byte offset (SBO) >> 4.
inline constexpr unsigned kStrideByteOffsetShift = 32;
/// The three 14-bit fields hold (x & 0x3FFFF) >> 4: byte values below
/// 2^18 and multiples of 16.
inline constexpr uint64_t kFieldMask = 0x3FFF;
inline constexpr unsigned kByteOffsetEncodingShift = 4;
inline constexpr uint32_t kEncodableBytes = 1u << 18;
/// Bits [46,49): fixed constant 0b001 (the "version" CUTLASS sets to 1 for
/// Blackwell, its 2-bit version_ field [46,48) = 0b01: same value; bit 48
/// must stay 0). wgmma (sm_90a) has no such field.
inline constexpr unsigned kFixedConstantShift = 46;
inline constexpr uint64_t kFixedConstantValue = 0b001;
/// Bits [49,52): matrix base offset (0 when the swizzle pattern starts on its
/// repeating boundary, Table 41).
inline constexpr unsigned kBaseOffsetShift = 49;
inline constexpr uint64_t kBaseOffsetMask = 0x7;
/// Bit 52: leading dimension stride mode, 0 = byte offset relative,
/// 1 = byte address absolute. Bits [53,61) are fixed 0.
inline constexpr unsigned kLeadingByteOffsetModeShift = 52;
/// Bits [61,64): swizzling mode (values in SwizzleMode).
inline constexpr unsigned kSwizzleModeShift = 61;
} // namespace smem_desc

/// Table 40 swizzling modes. NOTE: these differ from wgmma's 2-bit field at
/// [62,64) (128B = 1, 64B = 2, 32B = 3); 3, 5 and 7 are invalid.
enum class SwizzleMode : uint8_t {
  None = 0,
  Swizzle128BAtom32B = 1, ///< 128-byte swizzle with 32-byte atomicity
  Swizzle128B = 2,
  Swizzle64B = 4,
  Swizzle32B = 6,
};

/// Bytes of one swizzled row along the contiguous dimension (the TMA box's
/// inner extent): 128/64/32; 16 (one core-matrix row) for None.
int64_t swizzleSpanBytes(SwizzleMode mode);

/// Start of the repeating pattern (Table 41): 1024 (128B), 512 (64B),
/// 256 (32B); 128 for None (one 8x16-byte core matrix).
int64_t swizzlePatternBytes(SwizzleMode mode);

/// The shared-memory address bits the swizzle permutes, relative to a
/// pattern-aligned base: 16-byte chunk bits [4, 4+b) XOR row bits [7, 7+b),
/// b = 3 (128B), 2 (64B), 1 (32B), 0 (None). This is also what TMA writes
/// (CU_TENSOR_MAP_SWIZZLE_{32,64,128}B).
uint32_t applySwizzle(uint32_t offset, SwizzleMode mode);

struct SharedMemoryDescriptor {
  uint32_t startAddress = 0;      ///< shared::cta byte address
  uint32_t leadingByteOffset = 0; ///< LBO in bytes
  uint32_t strideByteOffset = 0;  ///< SBO in bytes
  uint8_t baseOffset = 0;
  bool leadingByteOffsetAbsolute = false;
  SwizzleMode swizzle = SwizzleMode::None;
};

/// Rejects: addresses/offsets not 16-byte aligned or >= 2^18, base offset
/// > 7, an invalid swizzle value.
std::optional<uint64_t>
encodeSharedMemoryDescriptor(const SharedMemoryDescriptor &desc,
                             std::string *error = nullptr);

/// The fields back from a descriptor (for the emulator and diagnostics);
/// nullopt when the fixed bits are wrong or the swizzle value is invalid.
std::optional<SharedMemoryDescriptor> decodeSharedMemoryDescriptor(uint64_t bits);

/// Base offset for a pattern that starts at `patternStart` (Table 41 note):
/// (patternStart >> 7) & 7.
uint8_t baseOffsetForPatternStart(uint32_t patternStart);

//===----------------------------------------------------------------------===//
// FP8 operand tiles in shared memory (PTX ISA 9.7.16.10.6 "Shared Memory
// Layout and Swizzling", and the LBO/SBO definitions of 9.7.16.4.1)
//===----------------------------------------------------------------------===//

/// One operand tile (A: mn = M, B: mn = N) of 1-byte elements as TMA stores
/// it: the contiguous dimension (K for K-major, MN for MN-major) is cut into
/// chunks of S = swizzleSpanBytes(swizzle) bytes (one TMA box each); a chunk
/// is `outer` rows of S bytes (outer = the other extent), swizzled per
/// applySwizzle in 8-row groups; chunk j starts at j * outer * S. The tile's
/// base must be aligned to swizzlePatternBytes (base offset 0).
struct Fp8OperandTile {
  OperandMajor major = OperandMajor::K;
  SwizzleMode swizzle = SwizzleMode::Swizzle128B;
  int64_t mnExtent = 128;
  int64_t kExtent = 128;
};

/// Empty when the tile can feed tcgen05.mma: swizzle is None/32B/64B/128B
/// (128B-with-32B-atomicity is MN-major only and not supported for
/// transposed 8-bit operands, 9.7.16.4.2 note); K-major: mn % 8 == 0 and
/// k % S == 0; MN-major: mn % S == 0 and k % 8 == 0; k % 32 == 0 (whole
/// MMAs); the tile fits the 2^18-byte descriptor window.
std::string checkFp8OperandTile(const Fp8OperandTile &tile);

/// Byte offset from the tile base where TMA puts element (mn, k), swizzle
/// included (the storage convention above).
int64_t fp8TileByteOffset(const Fp8OperandTile &tile, int64_t mn, int64_t k);

/// LBO and SBO of the tile (bytes). Canonical layouts in 16-byte units
/// T = 16 FP8 elements (CUTLASS's make_umma_desc comment and PTX 9.7.16.4.1):
///  K-major,  None:    ((8,m),(T,2)):((1T,SBO),(1,LBO))
///             -> SBO = 128 (8-row core matrices are contiguous 8 x 16 B),
///                LBO = mn * 16 (next 16-byte K chunk = next TMA box).
///  K-major,  S-swizzle: ((8,m),(T,2)):((S/16 T,SBO),(1,T))
///             -> SBO = 8 * S (next 8-row group), LBO unused ("assumed 1"):
///                encoded as 16 (field value 1).
///  MN-major, None:    ((T,1,m),(8,k)):((1,T,SBO),(1T,LBO))
///             -> LBO = 128 (next 8 K rows), SBO = k * 16 (next 16 MN
///                elements = next TMA box).
///  MN-major, S-swizzle: ((T,S/16,m),(8,k)):((1,T,LBO),(S/16 T,SBO))
///             -> SBO = 8 * S (next 8 K rows), LBO = k * S (next S MN
///                elements = next TMA box).
struct Fp8OperandOffsets {
  uint32_t leadingByteOffset;
  uint32_t strideByteOffset;
};
std::optional<Fp8OperandOffsets>
getFp8OperandOffsets(const Fp8OperandTile &tile, std::string *error = nullptr);

/// Start-address advance (bytes from the tile base) of the MMA that consumes
/// K elements [32 * kStep, 32 * kStep + 32) and MN elements from `mnOffset`
/// (0 unless one tile feeds several MMAs along MN; mnOffset % 8 == 0 for
/// K-major, % S for MN-major):
///  K-major swizzled: chunk (32 kStep / S) * mn * S + (32 kStep % S) (the
///    hardware swizzles the summed address, as wgmma does) + (mnOffset/8) SBO;
///  K-major None: 2 kStep * LBO + (mnOffset / 8) * SBO;
///  MN-major: (32 kStep / 8) * (8-row group stride) + (mnOffset / S) * (box
///    stride).
std::optional<uint32_t> fp8OperandStartOffset(const Fp8OperandTile &tile,
                                              int64_t kStep, int64_t mnOffset,
                                              std::string *error = nullptr);

/// The whole descriptor of that MMA operand for a tile at `tileBase`
/// (shared::cta address aligned to swizzlePatternBytes).
std::optional<SharedMemoryDescriptor>
getFp8OperandDescriptor(const Fp8OperandTile &tile, uint32_t tileBase,
                        int64_t kStep, int64_t mnOffset,
                        std::string *error = nullptr);

/// How the tensor core reads element (mn, k) (k < 32) of an operand through
/// a descriptor: the canonical layout of the descriptor's swizzle and major,
/// swizzle applied to the address (base offset 0 assumed). Used by the tests
/// and the emulator to check fp8OperandStartOffset/getFp8OperandOffsets
/// against fp8TileByteOffset.
uint32_t descriptorElementAddress(const SharedMemoryDescriptor &desc,
                                  OperandMajor major, int64_t mn, int64_t k);

//===----------------------------------------------------------------------===//
// Tensor Memory (PTX ISA 9.7.16.1)
//===----------------------------------------------------------------------===//

namespace tmem {
/// 128 lanes x 512 columns of 32-bit cells per CTA (9.7.16.1).
inline constexpr uint32_t kLanes = 128;
inline constexpr uint32_t kColumns = 512;
/// Address: lane in bits [31:16], column in [15:0] (9.7.16.1.1).
inline constexpr unsigned kLaneShift = 16;
inline constexpr uint32_t kColumnMask = 0xFFFF;
/// Allocation unit 32 columns, a power of two (9.7.16.1.2).
inline constexpr uint32_t kMinAllocationColumns = 32;
/// Lanes one warp of a warpgroup may tcgen05.ld/st: warp w owns
/// [32 w, 32 w + 32) (9.7.16.8.1).
inline constexpr uint32_t kLanesPerWarp = 32;
} // namespace tmem

/// Columns for tcgen05.alloc holding at least `requiredColumns`: the
/// smallest power of two >= max(32, requiredColumns); nullopt above 512 or
/// for a non-positive request.
std::optional<uint32_t> tmemAllocationColumns(int64_t requiredColumns);
/// Whether `columns` is a legal tcgen05.alloc size (power of two in
/// [32, 512]).
bool isValidTmemAllocation(int64_t columns);

std::optional<uint32_t> tmemAddress(uint32_t lane, uint32_t column);

struct TmemLocation {
  uint32_t lane;
  uint32_t column;
  bool operator==(const TmemLocation &o) const {
    return lane == o.lane && column == o.column;
  }
};

/// Columns of an M x N f32 accumulator (one 32-bit cell per element) in
/// each CTA: N for cta_group::1 M = 128 (Layout D, 4x1 datapath) and M = 64
/// (Layout F, half the lanes), and for cta_group::2 M = 256 (Layout A,
/// 128 rows per CTA). cta_group::2 M = 128 (Layout B, 2x2) is not modelled.
std::optional<int64_t> accumulatorColumns(CtaGroup ctaGroup, int64_t m,
                                          int64_t n);

/// TMEM cell of accumulator element (row, col), relative to the
/// accumulator's address (9.7.16.10.5):
///  Layout D (cta_group::1, M = 128): lane row, column col.
///  Layout F (cta_group::1, M = 64): lane 32 (row / 16) + row % 16 +
///    laneAlignment (0 or 16: the other half may hold a second M = 64
///    accumulator in the same columns), column col.
///  Layout A (cta_group::2, M = 256): CTA row / 128 holds it at lane
///    row % 128, column col (the CTA is not part of the result).
std::optional<TmemLocation> accumulatorLocation(CtaGroup ctaGroup, int64_t m,
                                                int64_t n, int64_t row,
                                                int64_t col,
                                                uint32_t laneAlignment = 0);

//===----------------------------------------------------------------------===//
// Block scale factors: the 128 x 4 UE8M0 atom (CUTLASS
// Sm1xxBlockScaledBasicChunk, cuBLAS/TE "swizzled" layout) and where
// tcgen05.cp puts it in TMEM (PTX ISA 9.7.16.10.7, 9.7.16.9 tcgen05.cp)
//===----------------------------------------------------------------------===//

namespace sf_atom {
/// One atom (kMXAtom* in FP8/Target/Chip.h): 128 MN rows x 4 K blocks =
/// 512 bytes, viewed as 32 rows of 16 bytes: byte (mn % 32) * 16 +
/// (mn / 32) * 4 + kb % 4.
inline constexpr int64_t kRows = kMXAtomRows;
inline constexpr int64_t kKBlocks = kMXAtomK / kMXScaleBlock;
inline constexpr int64_t kBytes = kMXAtomBytes;
inline constexpr int64_t kRowsPerLaneGroup = 32;
inline constexpr int64_t kRowStrideBytes = 16;   ///< mn % 32
inline constexpr int64_t kRowGroupStrideBytes = 4; ///< mn / 32
/// tcgen05.cp.32x128b.warpx4 copies one atom (32 rows x 128 bits) into 4
/// TMEM columns of lanes 0-31 and replicates it into lanes 32-63, 64-95 and
/// 96-127 (9.7.16.10.7: "Scale factors ... need to be duplicated to all 32
/// lane partitions").
inline constexpr uint32_t kTmemColumnsPerAtom = 4;
inline constexpr uint32_t kTmemReplicas = 4;
} // namespace sf_atom

/// Byte of (mn, kb) inside one atom; mn < 128, kb < 4.
int64_t scaleFactorAtomOffset(int64_t mn, int64_t kb);

/// A [rows, kBlocks] UE8M0 scale matrix (kBlocks = ceil(K / 32)) stored as
/// atoms: rows padded to a multiple of 128, kBlocks to a multiple of 4,
/// atoms tiled K-fastest (atom (i, g) at ((i * paddedKBlocks / 4) + g) *
/// 512): the 4 K-blocks of one k-group of 128 MN rows are one contiguous
/// 512-byte TMA load.
struct ScaleFactorLayout {
  int64_t rows = 0;
  int64_t kBlocks = 0;
  int64_t paddedRows = 0;
  int64_t paddedKBlocks = 0;
  int64_t sizeBytes() const { return paddedRows * paddedKBlocks; }
  int64_t atomsAlongK() const { return paddedKBlocks / sf_atom::kKBlocks; }
};
ScaleFactorLayout makeScaleFactorLayout(int64_t rows, int64_t kBlocks);

/// Byte offset of (mn, kb) in the whole atom-tiled tensor (mn <
/// paddedRows, kb < paddedKBlocks).
int64_t scaleFactorByteOffset(const ScaleFactorLayout &layout, int64_t mn,
                              int64_t kb);

struct ScaleFactorCoord {
  int64_t mn;
  int64_t kb;
  bool operator==(const ScaleFactorCoord &o) const {
    return mn == o.mn && kb == o.kb;
  }
};
/// Inverse of scaleFactorByteOffset (the coordinate may be padding:
/// mn >= rows or kb >= kBlocks).
ScaleFactorCoord scaleFactorCoordAt(const ScaleFactorLayout &layout,
                                    int64_t byteOffset);

/// Which atom copy and which byte the MMA over K block `kBlock` (K elements
/// [32 kBlock, 32 kBlock + 32)) must use: the atom of k-group kBlock / 4
/// (its TMEM columns go in the MMA's scale address) and scale factor ID
/// kBlock % 4 (the byte of each 32-bit cell).
struct ScaleFactorSelection {
  int64_t kGroup;
  unsigned scaleFactorId;
};
ScaleFactorSelection selectScaleFactor(int64_t kBlock);

/// TMEM columns one operand's scales occupy for MMAs of MN extent `mn`:
/// 4 per (started) 128 rows.
int64_t scaleFactorColumns(int64_t mn);

/// Cell holding the scale of MN row `mn` (relative to the scale address
/// given to the MMA), in lane partition `replica` (0..3): lane
/// 32 * replica + mn % 32, column mn / 32; the byte is the scale factor ID.
/// (CUTLASS tmem_sf_frg ScaleFactorDuplicated4by1: ((32, MN/32), 4) :
/// ((1 lane, 1 column), 32 lanes); PTX Figures 231/240 are images.)
TmemLocation scaleFactorLocation(int64_t mn, uint32_t replica);

/// Shared memory descriptor of the tcgen05.cp.32x128b source: one atom at
/// `atomAddress` seen as the K-major no-swizzle canonical layout of 32 rows
/// x 16 bytes: rows 16 bytes apart inside an 8-row core matrix, SBO = 128
/// to the next 8 rows, LBO unused (one 16-byte column; encoded 0).
std::optional<SharedMemoryDescriptor>
getScaleFactorCopySourceDescriptor(uint32_t atomAddress,
                                   std::string *error = nullptr);

/// TMEM plan of one block-scaled output tile (cta_group::1, M = 128):
/// `stages` accumulators of N columns at column 0, then `scaleSlots` A
/// scale slots (4 columns each), then `scaleSlots` B scale slots
/// (scaleFactorColumns(N) each); the allocation is the next legal power of
/// two. Slot s of A is at scaleAColumn + s * scaleAColumnsPerSlot (B
/// likewise). A kernel gives each shared-memory pipeline stage its own slot:
/// tcgen05.mma -> tcgen05.cp is not a pipelined pair (PTX ISA 9.7.16.6.2),
/// so a slot may only be overwritten once the MMAs that read it are known
/// complete (the stage's empty barrier).
struct BlockScaledTmemPlan {
  uint32_t accumulatorColumn;
  uint32_t accumulatorColumnsPerStage;
  uint32_t scaleAColumn;
  uint32_t scaleBColumn;
  uint32_t scaleAColumnsPerSlot;
  uint32_t scaleBColumnsPerSlot;
  uint32_t scaleSlots;
  uint32_t usedColumns;
  uint32_t allocatedColumns;
};
std::optional<BlockScaledTmemPlan>
planBlockScaledTmem(int64_t n, int64_t stages, std::string *error = nullptr,
                    int64_t scaleSlots = 1);

} // namespace mlir::fp8::blackwell

#endif // FP8_CONVERSION_FP8TOBLACKWELL_TCGEN05ENCODINGS_H
