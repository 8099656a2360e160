//===- ScaleEmulation.cpp - Host model of the sm_100a scale path ----------===//

#include "ScaleEmulation.h"

#include "FP8/Numerics/Formats.h"

#include <algorithm>
#include "llvm/Support/MathExtras.h"

using namespace mlir::fp8::blackwell;
using namespace mlir::fp8::blackwell::emulation;
namespace numerics = ::fp8::numerics;

namespace {

template <typename T>
std::optional<T> fail(std::string *error, std::string message) {
  if (error)
    *error = std::move(message);
  return std::nullopt;
}


/// Shared-memory addresses of the emulated scale staging buffers: one A atom
/// and up to two B atoms (tileN <= 256), each 512 bytes.
constexpr uint32_t kSmemScaleA = 0x000;
constexpr uint32_t kSmemScaleB = 0x200;
constexpr uint32_t kSmemBytes = 0x600;

/// The two scale factor IDs a block-scaled instruction descriptor carries
/// (Table 43: A at [29,31), B at [4,6)).
std::pair<unsigned, unsigned> scaleFactorIdsOf(uint32_t descriptor) {
  using namespace instr_desc;
  return {(descriptor >> kAScaleFactorIdShift) & kScaleFactorIdMask,
          (descriptor >> kBScaleFactorIdShift) & kScaleFactorIdMask};
}

} // namespace

std::vector<uint8_t> emulation::layoutScaleFactors(const uint8_t *ue8m0,
                                                   int64_t rows,
                                                   int64_t kBlocks,
                                                   uint8_t padding) {
  const ScaleFactorLayout layout = makeScaleFactorLayout(rows, kBlocks);
  std::vector<uint8_t> image(static_cast<size_t>(layout.sizeBytes()), padding);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t kb = 0; kb < kBlocks; ++kb)
      image[scaleFactorByteOffset(layout, r, kb)] = ue8m0[r * kBlocks + kb];
  return image;
}

TensorMemoryModel::TensorMemoryModel()
    : cells(size_t(tmem::kLanes) * tmem::kColumns, 0) {}

uint32_t TensorMemoryModel::cell(uint32_t lane, uint32_t column) const {
  return cells[size_t(lane) * tmem::kColumns + column];
}

uint8_t TensorMemoryModel::byte(uint32_t lane, uint32_t column,
                                unsigned byteIndex) const {
  return static_cast<uint8_t>(cell(lane, column) >> (8 * byteIndex));
}

bool TensorMemoryModel::copy32x128bWarpx4(
    uint32_t tmemAddress, uint64_t sourceDescriptor,
    const std::vector<uint8_t> &sharedMemory, std::string *error) {
  std::optional<SharedMemoryDescriptor> desc =
      decodeSharedMemoryDescriptor(sourceDescriptor);
  if (!desc || desc->swizzle != SwizzleMode::None) {
    if (error)
      *error = "tcgen05.cp source descriptor is invalid or swizzled";
    return false;
  }
  const uint32_t lane0 = tmemAddress >> tmem::kLaneShift;
  const uint32_t column0 = tmemAddress & tmem::kColumnMask;
  // .warpx4 writes all four 32-lane partitions: the address names lane 0.
  if (lane0 != 0 || column0 + sf_atom::kTmemColumnsPerAtom > tmem::kColumns) {
    if (error)
      *error = "tcgen05.cp.32x128b.warpx4 destination out of range";
    return false;
  }
  for (uint32_t r = 0; r < 32; ++r) {
    const size_t rowAddress =
        desc->startAddress + (r % 8) * 16 + (r / 8) * desc->strideByteOffset;
    if (rowAddress + 16 > sharedMemory.size()) {
      if (error)
        *error = "tcgen05.cp source row outside shared memory";
      return false;
    }
    for (uint32_t w = 0; w < 4; ++w) {
      uint32_t word = 0;
      for (uint32_t b = 0; b < 4; ++b)
        word |= uint32_t(sharedMemory[rowAddress + 4 * w + b]) << (8 * b);
      for (uint32_t q = 0; q < sf_atom::kTmemReplicas; ++q)
        cells[size_t(q * tmem::kLanesPerWarp + r) * tmem::kColumns + column0 +
              w] = word;
    }
  }
  return true;
}

std::optional<EmulatedBlockScaledGemm> emulation::emulateBlockScaledGemm(
    const uint8_t *aData, numerics::Format aFormat, const uint8_t *bData,
    numerics::Format bFormat, int64_t m, int64_t n, int64_t k,
    const std::vector<uint8_t> &aScaleImage,
    const std::vector<uint8_t> &bScaleImage, int64_t tileN,
    std::string *error) {
  if (m <= 0 || n <= 0 || k <= 0)
    return fail<EmulatedBlockScaledGemm>(error, "empty GEMM");
  if (tileN != 32 && tileN != 64 && tileN != 128 && tileN != 256)
    return fail<EmulatedBlockScaledGemm>(error, "tileN must be 32/64/128/256");
  const int64_t kBlocks = llvm::divideCeil(k, kScaleBlockK);
  const ScaleFactorLayout aLayout = makeScaleFactorLayout(m, kBlocks);
  const ScaleFactorLayout bLayout = makeScaleFactorLayout(n, kBlocks);
  if (int64_t(aScaleImage.size()) != aLayout.sizeBytes() ||
      int64_t(bScaleImage.size()) != bLayout.sizeBytes())
    return fail<EmulatedBlockScaledGemm>(error,
                                         "scale images do not match M/N/K");
  std::optional<BlockScaledTmemPlan> plan =
      planBlockScaledTmem(tileN, /*stages=*/1, error);
  if (!plan)
    return std::nullopt;
  const auto toFormat = [](numerics::Format f) {
    return f == numerics::Format::E4M3 ? Fp8Format::E4M3 : Fp8Format::E5M2;
  };

  EmulatedBlockScaledGemm result;
  result.out.assign(size_t(m * n), 0.0);
  result.aScaleUsed.assign(size_t(m * k), 0);
  result.bScaleUsed.assign(size_t(n * k), 0);
  std::vector<uint8_t> smem(kSmemBytes, 0);
  const int64_t bAtomsPerTile = llvm::divideCeil(tileN, sf_atom::kRows);
  constexpr int64_t tileM = 128;

  for (int64_t m0 = 0; m0 < m; m0 += tileM) {
    for (int64_t n0 = 0; n0 < n; n0 += tileN) {
      TensorMemoryModel tmemModel;
      // The B scale address given to the MMA: the atom's columns plus the
      // tile's 32-row group inside the atom (tileN < 128).
      const uint32_t sfbMmaColumn =
          plan->scaleBColumn +
          static_cast<uint32_t>((n0 % sf_atom::kRows) / 32);
      for (int64_t g = 0; g < aLayout.atomsAlongK(); ++g) {
        // "TMA": one contiguous 512-byte atom per 128 rows of this k-group.
        auto loadAtom = [&](const std::vector<uint8_t> &image,
                            const ScaleFactorLayout &layout, int64_t row0,
                            uint32_t smemAddress) {
          const int64_t offset = scaleFactorByteOffset(layout, row0, g * 4);
          std::copy_n(image.begin() + offset, sf_atom::kBytes,
                      smem.begin() + smemAddress);
        };
        auto copyToTmem = [&](uint32_t smemAddress, uint32_t column) {
          std::optional<SharedMemoryDescriptor> source =
              getScaleFactorCopySourceDescriptor(smemAddress, error);
          std::optional<uint64_t> bits =
              source ? encodeSharedMemoryDescriptor(*source, error)
                     : std::nullopt;
          std::optional<uint32_t> address = tmemAddress(0, column);
          return bits && address &&
                 tmemModel.copy32x128bWarpx4(*address, *bits, smem, error);
        };
        loadAtom(aScaleImage, aLayout, m0, kSmemScaleA);
        if (!copyToTmem(kSmemScaleA, plan->scaleAColumn))
          return std::nullopt;
        for (int64_t i = 0; i < bAtomsPerTile; ++i) {
          const int64_t row0 = (n0 / sf_atom::kRows + i) * sf_atom::kRows;
          if (row0 >= bLayout.paddedRows)
            break;
          const uint32_t smemAddress =
              kSmemScaleB + static_cast<uint32_t>(i * sf_atom::kBytes);
          loadAtom(bScaleImage, bLayout, row0, smemAddress);
          if (!copyToTmem(smemAddress,
                          plan->scaleBColumn +
                              static_cast<uint32_t>(
                                  i * sf_atom::kTmemColumnsPerAtom)))
            return std::nullopt;
        }

        for (int64_t j = 0; j < sf_atom::kKBlocks; ++j) {
          const int64_t kb = g * sf_atom::kKBlocks + j;
          if (kb >= kBlocks)
            break;
          const ScaleFactorSelection selection = selectScaleFactor(kb);
          BlockScaledInstrDescriptor instr;
          instr.m = tileM;
          instr.n = tileN;
          instr.aFormat = toFormat(aFormat);
          instr.bFormat = toFormat(bFormat);
          instr.aScaleFactorId = selection.scaleFactorId;
          instr.bScaleFactorId = selection.scaleFactorId;
          std::optional<uint32_t> idesc = encodeInstrDescriptor(instr, error);
          if (!idesc)
            return std::nullopt;
          // The MMA sees only the encoded descriptor and TMEM addresses.
          const auto [aId, bId] = scaleFactorIdsOf(*idesc);

          auto readScale = [&](int64_t row, uint32_t baseColumn, unsigned id,
                               uint32_t preferredReplica) {
            const TmemLocation at = scaleFactorLocation(row, preferredReplica);
            const uint8_t value = tmemModel.byte(at.lane, baseColumn + at.column, id);
            for (uint32_t q = 0; q < sf_atom::kTmemReplicas; ++q) {
              const TmemLocation copy = scaleFactorLocation(row, q);
              if (tmemModel.byte(copy.lane, baseColumn + copy.column, id) !=
                  value)
                ++result.replicaMismatches;
            }
            return value;
          };

          const int64_t kBegin = kb * kScaleBlockK;
          const int64_t kEnd = std::min(k, kBegin + kScaleBlockK);
          const int64_t mEnd = std::min(m, m0 + tileM);
          const int64_t nEnd = std::min(n, n0 + tileN);
          std::vector<uint8_t> aScale(static_cast<size_t>(tileM));
          std::vector<uint8_t> bScale(static_cast<size_t>(tileN));
          for (int64_t r = m0; r < mEnd; ++r)
            // Layout D: D row r - m0 is in lane r - m0, i.e. lane partition
            // (r - m0) / 32, which reads its own replica.
            aScale[r - m0] = readScale(r - m0, plan->scaleAColumn, aId,
                                       static_cast<uint32_t>((r - m0) / 32));
          for (int64_t c = n0; c < nEnd; ++c)
            bScale[c - n0] = readScale(c - n0, sfbMmaColumn, bId, 0);

          for (int64_t r = m0; r < mEnd; ++r) {
            const double sa = numerics::decodeUe8m0(aScale[r - m0]);
            for (int64_t kk = kBegin; kk < kEnd; ++kk)
              result.aScaleUsed[r * k + kk] = aScale[r - m0];
            for (int64_t c = n0; c < nEnd; ++c) {
              const double sb = numerics::decodeUe8m0(bScale[c - n0]);
              double &acc = result.out[r * n + c];
              for (int64_t kk = kBegin; kk < kEnd; ++kk) {
                const double qa = numerics::decode(aFormat, aData[r * k + kk]);
                const double qb = numerics::decode(bFormat, bData[c * k + kk]);
                acc += (qa * qb) * (sa * sb);
              }
            }
          }
          for (int64_t c = n0; c < nEnd; ++c)
            for (int64_t kk = kBegin; kk < kEnd; ++kk)
              result.bScaleUsed[c * k + kk] = bScale[c - n0];
        }
      }
    }
  }
  return result;
}

std::optional<uint8_t> emulation::powerOfTwoToUe8m0(float scaleInv) {
  const uint32_t bits = numerics::floatBits(scaleInv);
  const uint32_t exponent = (bits >> 23) & 0xFF;
  const uint32_t mantissa = bits & 0x7FFFFF;
  if (bits >> 31 || exponent == 0xFF)
    return std::nullopt;
  if (exponent == 0) // only the subnormal 2^-127 is a UE8M0 value (code 0)
    return mantissa == 0x400000 ? std::optional<uint8_t>(0) : std::nullopt;
  if (mantissa != 0)
    return std::nullopt;
  // 2^(exponent - 127) has UE8M0 code (exponent - 127) + 127.
  return static_cast<uint8_t>(exponent);
}

std::optional<std::vector<uint8_t>>
emulation::blockwiseScalesToMx(const numerics::QuantizedTensor &q,
                               std::string *error) {
  if (q.granularity.kind != numerics::Granularity::Tile ||
      q.granularity.tileCols <= 0 || q.granularity.tileCols % kScaleBlockK != 0)
    return fail<std::vector<uint8_t>>(
        error, "blockwise-to-MX needs Tile granularity with tile columns a "
               "multiple of 32");
  const int64_t kBlocks = llvm::divideCeil(q.cols, kScaleBlockK);
  std::vector<uint8_t> mx(size_t(q.rows * kBlocks));
  for (int64_t r = 0; r < q.rows; ++r)
    for (int64_t kb = 0; kb < kBlocks; ++kb) {
      const float scaleInv = q.scaleInvAt(r, kb * kScaleBlockK);
      std::optional<uint8_t> code = powerOfTwoToUe8m0(scaleInv);
      if (!code)
        return fail<std::vector<uint8_t>>(
            error, "scale_inv " + std::to_string(scaleInv) + " of row " +
                       std::to_string(r) +
                       " is not a power of two in [2^-127, 2^127]: the data "
                       "would need requantization");
      mx[r * kBlocks + kb] = *code;
    }
  return mx;
}

std::optional<std::vector<uint8_t>> emulation::blockwiseScalesToMxAtoms(
    const float *scaleInv, int64_t rows, int64_t cols, int64_t tileRows,
    int64_t tileCols, std::string *error) {
  if (rows <= 0 || cols <= 0 || tileRows <= 0 || tileCols <= 0)
    return fail<std::vector<uint8_t>>(error, "empty operand or tile");
  // The scale grid viewed as a blockwise tensor (no data needed).
  numerics::QuantizedTensor q;
  q.rows = rows;
  q.cols = cols;
  q.granularity = numerics::Granularity::tile(tileRows, tileCols);
  q.scaleRows = llvm::divideCeil(rows, tileRows);
  q.scaleCols = llvm::divideCeil(cols, tileCols);
  q.scaleInv.assign(scaleInv, scaleInv + q.scaleRows * q.scaleCols);
  std::optional<std::vector<uint8_t>> mx = blockwiseScalesToMx(q, error);
  if (!mx)
    return std::nullopt;
  return layoutScaleFactors(mx->data(), rows, llvm::divideCeil(cols, kScaleBlockK));
}
