//===- TCGen05Encodings.cpp - sm_100a tcgen05 bit encodings ---------------===//
//
// Derivations are in the header next to each declaration; this file only
// checks ranges and assembles fields.
//
//===----------------------------------------------------------------------===//

#include "FP8/Conversion/FP8ToBlackwell/TCGen05Encodings.h"
#include "FP8/Target/Chip.h"

#include "llvm/Support/MathExtras.h"

using namespace mlir::fp8;
using namespace mlir::fp8::blackwell;

namespace {

template <typename T>
std::optional<T> fail(std::string *error, std::string message) {
  if (error)
    *error = std::move(message);
  return std::nullopt;
}


bool isPowerOfTwo(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

/// (x & 0x3FFFF) >> 4 of PTX's matrix-descriptor-encode, for a value already
/// checked to be below 2^18 and 16-byte aligned.
uint64_t encodeField(uint32_t bytes) {
  return (bytes >> smem_desc::kByteOffsetEncodingShift) & smem_desc::kFieldMask;
}

bool isValidSwizzle(uint64_t value) {
  switch (static_cast<SwizzleMode>(value)) {
  case SwizzleMode::None:
  case SwizzleMode::Swizzle128BAtom32B:
  case SwizzleMode::Swizzle128B:
  case SwizzleMode::Swizzle64B:
  case SwizzleMode::Swizzle32B:
    return true;
  }
  return false;
}

/// Number of 16-byte chunk bits the swizzle XORs (Swizzle<b,4,3>).
unsigned swizzleBits(SwizzleMode mode) {
  switch (mode) {
  case SwizzleMode::Swizzle128B:
    return 3;
  case SwizzleMode::Swizzle64B:
    return 2;
  case SwizzleMode::Swizzle32B:
    return 1;
  case SwizzleMode::None:
  case SwizzleMode::Swizzle128BAtom32B:
    return 0;
  }
  return 0;
}

/// Offsets of the tile's two strided directions, shared by the descriptor
/// and start-address computations.
struct TileStrides {
  int64_t span;        ///< S: bytes of one row of a TMA box
  int64_t boxStride;   ///< bytes between consecutive TMA boxes (chunks)
  int64_t groupStride; ///< bytes between consecutive 8-row groups in a box
};

TileStrides tileStrides(const Fp8OperandTile &tile) {
  const int64_t span = swizzleSpanBytes(tile.swizzle);
  const int64_t outer =
      tile.major == OperandMajor::K ? tile.mnExtent : tile.kExtent;
  return {span, outer * span, 8 * span};
}

} // namespace

//===----------------------------------------------------------------------===//
// Instruction descriptors
//===----------------------------------------------------------------------===//

std::string blackwell::checkMmaShape(bool blockScaled, CtaGroup ctaGroup,
                                     int64_t m, int64_t n,
                                     OperandMajor bMajor) {
  const char *kind = blockScaled ? "kind::mxf8f6f4" : "kind::f8f6f4";
  const bool one = ctaGroup == CtaGroup::One;
  const bool mOk = one ? (blockScaled ? m == 128 : (m == 64 || m == 128))
                       : (m == 128 || m == 256);
  if (!mOk)
    return std::string(kind) + (one ? " cta_group::1" : " cta_group::2") +
           " needs M " +
           (one ? (blockScaled ? "= 128" : "in {64, 128}") : "in {128, 256}") +
           ", got " + std::to_string(m);
  int64_t step = one ? 8 : 16;
  if (bMajor == OperandMajor::MN)
    step = 16;
  if (n < step || n > kMaxMmaN || n % step != 0)
    return std::string(kind) + " needs N a multiple of " +
           std::to_string(step) + " in [" + std::to_string(step) + ", " +
           std::to_string(kMaxMmaN) + "]" + (bMajor == OperandMajor::MN ? " (MN-major B)" : "") +
           ", got " + std::to_string(n);
  return {};
}

std::optional<uint32_t>
blackwell::encodeInstrDescriptor(const F8F6F4InstrDescriptor &desc,
                                 std::string *error) {
  using namespace instr_desc;
  std::string shape = checkMmaShape(/*blockScaled=*/false, desc.ctaGroup,
                                    desc.m, desc.n, desc.bMajor);
  if (!shape.empty())
    return fail<uint32_t>(error, shape);
  uint32_t bits = 0;
  // Bits [0,4): dense, no saturation.
  bits |= static_cast<uint32_t>(desc.dFormat) << kDFormatShift;
  bits |= static_cast<uint32_t>(desc.aFormat) << kAFormatShift;
  bits |= static_cast<uint32_t>(desc.bFormat) << kBFormatShift;
  bits |= uint32_t(desc.negateA) << kNegateAShift;
  bits |= uint32_t(desc.negateB) << kNegateBShift;
  bits |= static_cast<uint32_t>(desc.aMajor) << kTransposeAShift;
  bits |= static_cast<uint32_t>(desc.bMajor) << kTransposeBShift;
  bits |= (static_cast<uint32_t>(desc.n >> kNEncodingShift) & kNFieldMask)
          << kNShift;
  bits |= (static_cast<uint32_t>(desc.m >> kMEncodingShift) & kMFieldMask)
          << kMShift;
  // Bits [30,32): max shift 0 (no .ws).
  return bits;
}

std::optional<uint32_t>
blackwell::encodeInstrDescriptor(const BlockScaledInstrDescriptor &desc,
                                 std::string *error) {
  using namespace instr_desc;
  std::string shape = checkMmaShape(/*blockScaled=*/true, desc.ctaGroup,
                                    desc.m, desc.n, desc.bMajor);
  if (!shape.empty())
    return fail<uint32_t>(error, shape);
  if (desc.aScaleFactorId > kScaleFactorIdMask ||
      desc.bScaleFactorId > kScaleFactorIdMask)
    return fail<uint32_t>(error, "scale factor IDs must be in [0, 3], got " +
                                     std::to_string(desc.aScaleFactorId) +
                                     " and " +
                                     std::to_string(desc.bScaleFactorId));
  uint32_t bits = 0;
  // Bits 0-3: reserved / dense.
  bits |= desc.bScaleFactorId << kBScaleFactorIdShift;
  bits |= static_cast<uint32_t>(desc.aFormat) << kAFormatShift;
  bits |= static_cast<uint32_t>(desc.bFormat) << kBFormatShift;
  bits |= uint32_t(desc.negateA) << kNegateAShift;
  bits |= uint32_t(desc.negateB) << kNegateBShift;
  bits |= static_cast<uint32_t>(desc.aMajor) << kTransposeAShift;
  bits |= static_cast<uint32_t>(desc.bMajor) << kTransposeBShift;
  bits |= (static_cast<uint32_t>(desc.n >> kNEncodingShift) & kNFieldMask)
          << kNShift;
  bits |= kScaleTypeUE8M0 << kScaleTypeShift;
  bits |= (static_cast<uint32_t>(desc.m >> kBlockScaledMEncodingShift) &
           kBlockScaledMFieldMask)
          << kBlockScaledMShift;
  bits |= desc.aScaleFactorId << kAScaleFactorIdShift;
  return bits;
}

std::optional<uint32_t> blackwell::withScaleFactorIds(uint32_t descriptor,
                                                      unsigned aId,
                                                      unsigned bId) {
  using namespace instr_desc;
  if (aId > kScaleFactorIdMask || bId > kScaleFactorIdMask)
    return std::nullopt;
  descriptor &= ~((kScaleFactorIdMask << kAScaleFactorIdShift) |
                  (kScaleFactorIdMask << kBScaleFactorIdShift));
  return descriptor | (aId << kAScaleFactorIdShift) |
         (bId << kBScaleFactorIdShift);
}

//===----------------------------------------------------------------------===//
// Shared memory descriptor
//===----------------------------------------------------------------------===//

int64_t blackwell::swizzleSpanBytes(SwizzleMode mode) {
  switch (mode) {
  case SwizzleMode::None:
    return 16;
  case SwizzleMode::Swizzle32B:
    return 32;
  case SwizzleMode::Swizzle64B:
    return 64;
  case SwizzleMode::Swizzle128B:
  case SwizzleMode::Swizzle128BAtom32B:
    return 128;
  }
  return 0;
}

int64_t blackwell::swizzlePatternBytes(SwizzleMode mode) {
  // Eight rows of the span: 8 x 16 = 128 (one core matrix), 256, 512, 1024.
  return 8 * swizzleSpanBytes(mode);
}

uint32_t blackwell::applySwizzle(uint32_t offset, SwizzleMode mode) {
  const unsigned b = swizzleBits(mode);
  const uint32_t mask = (1u << b) - 1;
  return offset ^ (((offset >> 7) & mask) << 4);
}

std::optional<uint64_t>
blackwell::encodeSharedMemoryDescriptor(const SharedMemoryDescriptor &desc,
                                        std::string *error) {
  using namespace smem_desc;
  auto checkBytes = [&](uint32_t value, const char *what) -> std::string {
    if (value % 16 != 0)
      return std::string(what) + " must be 16-byte aligned, got " +
             std::to_string(value);
    if (value >= kEncodableBytes)
      return std::string(what) + " must be below 2^18, got " +
             std::to_string(value);
    return {};
  };
  for (auto [value, what] :
       {std::pair{desc.startAddress, "start address"},
        std::pair{desc.leadingByteOffset, "leading byte offset"},
        std::pair{desc.strideByteOffset, "stride byte offset"}}) {
    std::string message = checkBytes(value, what);
    if (!message.empty())
      return fail<uint64_t>(error, message);
  }
  if (desc.baseOffset > kBaseOffsetMask)
    return fail<uint64_t>(error, "base offset must be in [0, 7], got " +
                                     std::to_string(desc.baseOffset));
  if (!isValidSwizzle(static_cast<uint64_t>(desc.swizzle)))
    return fail<uint64_t>(error, "invalid swizzle mode " +
                                     std::to_string(unsigned(desc.swizzle)));
  uint64_t bits = 0;
  bits |= encodeField(desc.startAddress) << kStartAddressShift;
  bits |= encodeField(desc.leadingByteOffset) << kLeadingByteOffsetShift;
  bits |= encodeField(desc.strideByteOffset) << kStrideByteOffsetShift;
  bits |= kFixedConstantValue << kFixedConstantShift;
  bits |= uint64_t(desc.baseOffset) << kBaseOffsetShift;
  bits |= uint64_t(desc.leadingByteOffsetAbsolute) << kLeadingByteOffsetModeShift;
  bits |= static_cast<uint64_t>(desc.swizzle) << kSwizzleModeShift;
  return bits;
}

std::optional<SharedMemoryDescriptor>
blackwell::decodeSharedMemoryDescriptor(uint64_t bits) {
  using namespace smem_desc;
  if (((bits >> kFixedConstantShift) & 0x7) != kFixedConstantValue)
    return std::nullopt;
  if (((bits >> 53) & 0xFF) != 0 || ((bits >> 14) & 0x3) != 0 ||
      ((bits >> 30) & 0x3) != 0)
    return std::nullopt;
  const uint64_t swizzle = bits >> kSwizzleModeShift;
  if (!isValidSwizzle(swizzle))
    return std::nullopt;
  SharedMemoryDescriptor desc;
  auto field = [&](unsigned shift) {
    return static_cast<uint32_t>(((bits >> shift) & kFieldMask)
                                 << kByteOffsetEncodingShift);
  };
  desc.startAddress = field(kStartAddressShift);
  desc.leadingByteOffset = field(kLeadingByteOffsetShift);
  desc.strideByteOffset = field(kStrideByteOffsetShift);
  desc.baseOffset =
      static_cast<uint8_t>((bits >> kBaseOffsetShift) & kBaseOffsetMask);
  desc.leadingByteOffsetAbsolute = (bits >> kLeadingByteOffsetModeShift) & 1;
  desc.swizzle = static_cast<SwizzleMode>(swizzle);
  return desc;
}

uint8_t blackwell::baseOffsetForPatternStart(uint32_t patternStart) {
  return static_cast<uint8_t>((patternStart >> 7) & 0x7);
}

//===----------------------------------------------------------------------===//
// FP8 operand tiles
//===----------------------------------------------------------------------===//

std::string blackwell::checkFp8OperandTile(const Fp8OperandTile &tile) {
  switch (tile.swizzle) {
  case SwizzleMode::None:
  case SwizzleMode::Swizzle32B:
  case SwizzleMode::Swizzle64B:
  case SwizzleMode::Swizzle128B:
    break;
  case SwizzleMode::Swizzle128BAtom32B:
    return "128B swizzle with 32B atomicity is MN-major only and not "
           "supported for transposed 8-bit operands";
  default:
    return "invalid swizzle mode";
  }
  if (tile.mnExtent <= 0 || tile.kExtent <= 0)
    return "tile extents must be positive";
  const int64_t span = swizzleSpanBytes(tile.swizzle);
  if (tile.kExtent % kMmaK != 0)
    return "tile K extent must be a multiple of 32 (whole MMAs), got " +
           std::to_string(tile.kExtent);
  if (tile.major == OperandMajor::K) {
    if (tile.mnExtent % 8 != 0)
      return "K-major tile MN extent must be a multiple of 8, got " +
             std::to_string(tile.mnExtent);
    if (tile.kExtent % span != 0)
      return "K-major tile K extent must be a multiple of the " +
             std::to_string(span) + "-byte swizzle span";
  } else {
    if (tile.mnExtent % span != 0)
      return "MN-major tile MN extent must be a multiple of the " +
             std::to_string(span) + "-byte swizzle span, got " +
             std::to_string(tile.mnExtent);
  }
  if (tile.mnExtent * tile.kExtent > int64_t(smem_desc::kEncodableBytes))
    return "tile exceeds the 2^18-byte descriptor window";
  return {};
}

int64_t blackwell::fp8TileByteOffset(const Fp8OperandTile &tile, int64_t mn,
                                     int64_t k) {
  const TileStrides s = tileStrides(tile);
  const bool kMajor = tile.major == OperandMajor::K;
  const int64_t inner = kMajor ? k : mn;  // contiguous coordinate
  const int64_t outer = kMajor ? mn : k;  // row inside a box
  const int64_t box = inner / s.span;
  const int64_t linear = outer * s.span + inner % s.span;
  // Each box is pattern-aligned (its size is a multiple of 8 rows x span),
  // so the swizzle applies to the offset inside the box.
  return box * s.boxStride +
         applySwizzle(static_cast<uint32_t>(linear), tile.swizzle);
}

std::optional<Fp8OperandOffsets>
blackwell::getFp8OperandOffsets(const Fp8OperandTile &tile,
                                std::string *error) {
  std::string message = checkFp8OperandTile(tile);
  if (!message.empty())
    return fail<Fp8OperandOffsets>(error, message);
  const TileStrides s = tileStrides(tile);
  const bool swizzled = tile.swizzle != SwizzleMode::None;
  Fp8OperandOffsets offsets{};
  if (tile.major == OperandMajor::K) {
    // SBO: next 8 rows (8 x span: 128 unswizzled, 8 S swizzled).
    offsets.strideByteOffset = static_cast<uint32_t>(s.groupStride);
    // LBO: next 16-byte K chunk = next box when unswizzled; unused ("assumed
    // 1", i.e. 16 bytes) when the 32-byte MMA K fits in a swizzled row.
    offsets.leadingByteOffset =
        swizzled ? 16u : static_cast<uint32_t>(s.boxStride);
  } else if (swizzled) {
    offsets.strideByteOffset = static_cast<uint32_t>(s.groupStride);
    offsets.leadingByteOffset = static_cast<uint32_t>(s.boxStride);
  } else {
    // No swizzle, MN-major: LBO and SBO swap roles.
    offsets.leadingByteOffset = static_cast<uint32_t>(s.groupStride);
    offsets.strideByteOffset = static_cast<uint32_t>(s.boxStride);
  }
  if (offsets.leadingByteOffset >= smem_desc::kEncodableBytes ||
      offsets.strideByteOffset >= smem_desc::kEncodableBytes)
    return fail<Fp8OperandOffsets>(error, "LBO/SBO exceed 2^18 bytes");
  return offsets;
}

std::optional<uint32_t>
blackwell::fp8OperandStartOffset(const Fp8OperandTile &tile, int64_t kStep,
                                 int64_t mnOffset, std::string *error) {
  std::string message = checkFp8OperandTile(tile);
  if (!message.empty())
    return fail<uint32_t>(error, message);
  if (kStep < 0 || (kStep + 1) * kMmaK > tile.kExtent)
    return fail<uint32_t>(error, "k step " + std::to_string(kStep) +
                                     " is outside the tile's K extent " +
                                     std::to_string(tile.kExtent));
  const TileStrides s = tileStrides(tile);
  const int64_t k0 = kStep * kMmaK;
  int64_t offset = 0;
  if (tile.major == OperandMajor::K) {
    if (mnOffset < 0 || mnOffset % 8 != 0 || mnOffset >= tile.mnExtent)
      return fail<uint32_t>(error, "K-major MN offset must be a multiple of "
                                   "8 inside the tile");
    // The box holding k0, plus k0's byte inside the (swizzled) row; rows of
    // 8 at SBO = 8 * span.
    offset = (k0 / s.span) * s.boxStride + k0 % s.span +
             (mnOffset / 8) * s.groupStride;
  } else {
    if (mnOffset < 0 || mnOffset % s.span != 0 || mnOffset >= tile.mnExtent)
      return fail<uint32_t>(error, "MN-major MN offset must be a multiple of "
                                   "the swizzle span inside the tile");
    offset = (k0 / 8) * s.groupStride + (mnOffset / s.span) * s.boxStride;
  }
  return static_cast<uint32_t>(offset);
}

std::optional<SharedMemoryDescriptor>
blackwell::getFp8OperandDescriptor(const Fp8OperandTile &tile,
                                   uint32_t tileBase, int64_t kStep,
                                   int64_t mnOffset, std::string *error) {
  std::optional<Fp8OperandOffsets> offsets = getFp8OperandOffsets(tile, error);
  if (!offsets)
    return std::nullopt;
  if (tileBase % swizzlePatternBytes(tile.swizzle) != 0)
    return fail<SharedMemoryDescriptor>(
        error, "tile base must be aligned to the " +
                   std::to_string(swizzlePatternBytes(tile.swizzle)) +
                   "-byte swizzle pattern");
  std::optional<uint32_t> start =
      fp8OperandStartOffset(tile, kStep, mnOffset, error);
  if (!start)
    return std::nullopt;
  SharedMemoryDescriptor desc;
  desc.startAddress = tileBase + *start;
  desc.leadingByteOffset = offsets->leadingByteOffset;
  desc.strideByteOffset = offsets->strideByteOffset;
  desc.baseOffset = 0;
  desc.swizzle = tile.swizzle;
  if (!encodeSharedMemoryDescriptor(desc, error))
    return std::nullopt;
  return desc;
}

uint32_t blackwell::descriptorElementAddress(const SharedMemoryDescriptor &desc,
                                             OperandMajor major, int64_t mn,
                                             int64_t k) {
  const int64_t span = swizzleSpanBytes(desc.swizzle);
  const bool swizzled = desc.swizzle != SwizzleMode::None;
  const int64_t lbo = desc.leadingByteOffset, sbo = desc.strideByteOffset;
  int64_t address = desc.startAddress;
  if (major == OperandMajor::K) {
    // ((8,m),(T,2)) : ((span, SBO), (1, swizzled ? T : LBO)), T = 16 bytes.
    address += (mn % 8) * span + (mn / 8) * sbo;
    address += swizzled ? k : (k % 16) + (k / 16) * lbo;
  } else if (swizzled) {
    // ((T, S/16, m), (8, k)) : ((1, T, LBO), (span, SBO)).
    address += mn % span + (mn / span) * lbo + (k % 8) * span + (k / 8) * sbo;
  } else {
    // ((T, 1, m), (8, k)) : ((1, T, SBO), (T, LBO)).
    address += mn % 16 + (mn / 16) * sbo + (k % 8) * 16 + (k / 8) * lbo;
  }
  return applySwizzle(static_cast<uint32_t>(address), desc.swizzle);
}

//===----------------------------------------------------------------------===//
// Tensor Memory
//===----------------------------------------------------------------------===//

std::optional<uint32_t> blackwell::tmemAllocationColumns(int64_t required) {
  if (required <= 0 || required > int64_t(tmem::kColumns))
    return std::nullopt;
  uint32_t columns = tmem::kMinAllocationColumns;
  while (columns < required)
    columns *= 2;
  return columns;
}

bool blackwell::isValidTmemAllocation(int64_t columns) {
  return isPowerOfTwo(columns) && columns >= tmem::kMinAllocationColumns &&
         columns <= tmem::kColumns;
}

std::optional<uint32_t> blackwell::tmemAddress(uint32_t lane, uint32_t column) {
  if (lane >= tmem::kLanes || column >= tmem::kColumns)
    return std::nullopt;
  return (lane << tmem::kLaneShift) | column;
}

std::optional<int64_t> blackwell::accumulatorColumns(CtaGroup ctaGroup,
                                                     int64_t m, int64_t n) {
  if (!checkMmaShape(/*blockScaled=*/false, ctaGroup, m, n, OperandMajor::K)
           .empty())
    return std::nullopt;
  if (ctaGroup == CtaGroup::Two && m != 256)
    return std::nullopt; // Layout B (2x2) not modelled
  // One f32 per cell; every layout modelled puts a row's N values in N
  // consecutive columns.
  return n;
}

std::optional<TmemLocation>
blackwell::accumulatorLocation(CtaGroup ctaGroup, int64_t m, int64_t n,
                               int64_t row, int64_t col,
                               uint32_t laneAlignment) {
  if (!accumulatorColumns(ctaGroup, m, n) || row < 0 || row >= m || col < 0 ||
      col >= n)
    return std::nullopt;
  const uint32_t c = static_cast<uint32_t>(col);
  if (ctaGroup == CtaGroup::Two)
    return laneAlignment == 0
               ? std::optional<TmemLocation>(
                     TmemLocation{static_cast<uint32_t>(row % 128), c})
               : std::nullopt;
  if (m == 128)
    return laneAlignment == 0
               ? std::optional<TmemLocation>(
                     TmemLocation{static_cast<uint32_t>(row), c})
               : std::nullopt;
  // Layout F: 16 rows per 32-lane partition.
  if (laneAlignment != 0 && laneAlignment != 16)
    return std::nullopt;
  return TmemLocation{static_cast<uint32_t>(32 * (row / 16) + row % 16) +
                          laneAlignment,
                      c};
}

//===----------------------------------------------------------------------===//
// Scale factors
//===----------------------------------------------------------------------===//

int64_t blackwell::scaleFactorAtomOffset(int64_t mn, int64_t kb) {
  using namespace sf_atom;
  return (mn % kRowsPerLaneGroup) * kRowStrideBytes +
         (mn / kRowsPerLaneGroup) * kRowGroupStrideBytes + kb % kKBlocks;
}

ScaleFactorLayout blackwell::makeScaleFactorLayout(int64_t rows,
                                                   int64_t kBlocks) {
  ScaleFactorLayout layout;
  layout.rows = rows;
  layout.kBlocks = kBlocks;
  layout.paddedRows = llvm::divideCeil(rows, sf_atom::kRows) * sf_atom::kRows;
  layout.paddedKBlocks = llvm::divideCeil(kBlocks, sf_atom::kKBlocks) * sf_atom::kKBlocks;
  return layout;
}

int64_t blackwell::scaleFactorByteOffset(const ScaleFactorLayout &layout,
                                         int64_t mn, int64_t kb) {
  using namespace sf_atom;
  const int64_t atom = (mn / kRows) * layout.atomsAlongK() + kb / kKBlocks;
  return atom * kBytes + scaleFactorAtomOffset(mn % kRows, kb % kKBlocks);
}

ScaleFactorCoord blackwell::scaleFactorCoordAt(const ScaleFactorLayout &layout,
                                               int64_t byteOffset) {
  using namespace sf_atom;
  const int64_t atom = byteOffset / kBytes;
  const int64_t inAtom = byteOffset % kBytes;
  const int64_t rowBlock = atom / layout.atomsAlongK();
  const int64_t kGroup = atom % layout.atomsAlongK();
  const int64_t lane = inAtom / kRowStrideBytes;             // mn % 32
  const int64_t group = (inAtom % kRowStrideBytes) / kRowGroupStrideBytes;
  const int64_t kb = inAtom % kRowGroupStrideBytes;
  return {rowBlock * kRows + group * kRowsPerLaneGroup + lane,
          kGroup * kKBlocks + kb};
}

ScaleFactorSelection blackwell::selectScaleFactor(int64_t kBlock) {
  return {kBlock / sf_atom::kKBlocks,
          static_cast<unsigned>(kBlock % sf_atom::kKBlocks)};
}

int64_t blackwell::scaleFactorColumns(int64_t mn) {
  return llvm::divideCeil(mn, sf_atom::kRows) * sf_atom::kTmemColumnsPerAtom;
}

TmemLocation blackwell::scaleFactorLocation(int64_t mn, uint32_t replica) {
  return {static_cast<uint32_t>(replica * tmem::kLanesPerWarp +
                                mn % sf_atom::kRowsPerLaneGroup),
          static_cast<uint32_t>(mn / sf_atom::kRowsPerLaneGroup)};
}

std::optional<SharedMemoryDescriptor>
blackwell::getScaleFactorCopySourceDescriptor(uint32_t atomAddress,
                                              std::string *error) {
  if (atomAddress % 16 != 0)
    return fail<SharedMemoryDescriptor>(
        error, "scale factor atom must be 16-byte aligned");
  SharedMemoryDescriptor desc;
  desc.startAddress = atomAddress;
  desc.leadingByteOffset = 0;
  desc.strideByteOffset = 8 * sf_atom::kRowStrideBytes; // 128
  desc.swizzle = SwizzleMode::None;
  if (!encodeSharedMemoryDescriptor(desc, error))
    return std::nullopt;
  return desc;
}

std::optional<BlockScaledTmemPlan>
blackwell::planBlockScaledTmem(int64_t n, int64_t stages, std::string *error,
                               int64_t scaleSlots) {
  std::string shape = checkMmaShape(/*blockScaled=*/true, CtaGroup::One, 128,
                                    n, OperandMajor::K);
  if (!shape.empty())
    return fail<BlockScaledTmemPlan>(error, shape);
  if (stages < 1)
    return fail<BlockScaledTmemPlan>(error, "need at least one stage");
  if (scaleSlots < 1 || scaleSlots > tmem::kColumns)
    return fail<BlockScaledTmemPlan>(error, "need at least one scale slot");
  BlockScaledTmemPlan plan{};
  plan.accumulatorColumn = 0;
  plan.accumulatorColumnsPerStage = static_cast<uint32_t>(n);
  plan.scaleSlots = static_cast<uint32_t>(scaleSlots);
  plan.scaleAColumnsPerSlot = static_cast<uint32_t>(scaleFactorColumns(128));
  plan.scaleBColumnsPerSlot = static_cast<uint32_t>(scaleFactorColumns(n));
  plan.scaleAColumn = static_cast<uint32_t>(n * stages);
  plan.scaleBColumn =
      plan.scaleAColumn + plan.scaleSlots * plan.scaleAColumnsPerSlot;
  plan.usedColumns =
      plan.scaleBColumn + plan.scaleSlots * plan.scaleBColumnsPerSlot;
  std::optional<uint32_t> alloc = tmemAllocationColumns(plan.usedColumns);
  if (!alloc)
    return fail<BlockScaledTmemPlan>(
        error, "needs " + std::to_string(plan.usedColumns) +
                   " TMEM columns, more than " +
                   std::to_string(tmem::kColumns));
  plan.allocatedColumns = *alloc;
  return plan;
}
