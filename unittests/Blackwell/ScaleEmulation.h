//===- ScaleEmulation.h - Host model of the sm_100a scale path --*- C++ -*-===//
//
// A host emulation of how MXFP8 scale factors travel on sm_100a, built only
// from the encodings of TCGen05Encodings.h, so that their composition can be
// checked against the numerics reference without a Blackwell GPU:
//
//   [rows, K/32] UE8M0 (fp8::numerics::quantize, Granularity::mx(32))
//     -> global memory in the 128x4 atom layout (layoutScaleFactors)
//     -> one 512-byte atom per (128 rows, k-group) loaded to shared memory
//     -> tcgen05.cp.cta_group::1.32x128b.warpx4 into TMEM, read through its
//        encoded shared memory descriptor (TensorMemoryModel::copy32x128bWarpx4)
//     -> each tcgen05.mma.kind::mxf8f6f4.block_scale reads, per row, the byte
//        its encoded instruction descriptor's scale factor ID selects.
//
// Also the blockwise-to-MX mapping of docs/design.md ("Blockwise to
// MX on Blackwell"): power-of-two 1x128 / 128x128 scales become UE8M0 codes
// on the MX [rows, K/32] grid without touching the FP8 data.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_UNITTESTS_BLACKWELL_SCALEEMULATION_H
#define FP8_UNITTESTS_BLACKWELL_SCALEEMULATION_H

#include "FP8/Conversion/FP8ToBlackwell/TCGen05Encodings.h"
#include "FP8/Numerics/Reference.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir::fp8::blackwell::emulation {

/// Global-memory image of a [rows, kBlocks] row-major UE8M0 matrix in the
/// atom layout of makeScaleFactorLayout(rows, kBlocks); padding bytes hold
/// `padding` (0 = 2^-127, what a zero-filling TMA load would give).
std::vector<uint8_t> layoutScaleFactors(const uint8_t *ue8m0, int64_t rows,
                                        int64_t kBlocks, uint8_t padding = 0);

/// The TMEM of one CTA: 128 lanes x 512 columns of 32-bit cells, bytes
/// little-endian within a cell (scale factor ID i = bits [8i, 8i+8)).
class TensorMemoryModel {
public:
  TensorMemoryModel();

  uint32_t cell(uint32_t lane, uint32_t column) const;
  uint8_t byte(uint32_t lane, uint32_t column, unsigned byteIndex) const;

  /// tcgen05.cp.cta_group::1.32x128b.warpx4 [tmemAddress], sourceDescriptor:
  /// the 32 x 128-bit source matrix is read from `sharedMemory` (indexed by
  /// shared::cta address) through the decoded descriptor as the K-major,
  /// no-swizzle canonical layout (row r at start + (r % 8) * 16 +
  /// (r / 8) * SBO); row r, 32-bit word w goes to lane 32 q + r, column
  /// (address column) + w, for every lane partition q. Returns false (and
  /// sets `error`) for a bad descriptor or address.
  bool copy32x128bWarpx4(uint32_t tmemAddress, uint64_t sourceDescriptor,
                         const std::vector<uint8_t> &sharedMemory,
                         std::string *error = nullptr);

private:
  std::vector<uint32_t> cells;
};

/// What an emulated block-scaled GEMM computed and which scale every element
/// was multiplied by.
struct EmulatedBlockScaledGemm {
  /// out[m][n] = sum_k (q_a * q_b) * (scale_a * scale_b) in f64, accumulated
  /// in ascending k (what the reference does), row-major M x N.
  std::vector<double> out;
  /// UE8M0 code the MMA applied to A element (m, k) (M x K) and to B
  /// element (n, k) (N x K).
  std::vector<uint8_t> aScaleUsed;
  std::vector<uint8_t> bScaleUsed;
  /// Number of (row, MMA) scale reads whose four TMEM lane-partition copies
  /// disagreed (must be 0: tcgen05.cp .warpx4 replicates).
  int64_t replicaMismatches = 0;
};

/// Emulates a persistent block-scaled GEMM over output tiles of 128 x
/// `tileN` (tileN in {32, 64, 128, 256}; cta_group::1 M = 128 MMAs of
/// N = tileN): per tile, per k-group of 4 K blocks, the A atom and the B
/// atom(s) are "TMA-loaded" (512 contiguous bytes each) into a shared
/// memory image and tcgen05.cp'ed to the columns of planBlockScaledTmem;
/// then per K block one MMA whose instruction descriptor carries the scale
/// factor IDs of selectScaleFactor. A is M x K and B is N x K, both
/// K-major FP8 codes; the scale images come from layoutScaleFactors with
/// kBlocks = ceil(K / 32). Nullopt (with `error`) on invalid arguments.
std::optional<EmulatedBlockScaledGemm> emulateBlockScaledGemm(
    const uint8_t *aData, ::fp8::numerics::Format aFormat,
    const uint8_t *bData, ::fp8::numerics::Format bFormat, int64_t m,
    int64_t n, int64_t k, const std::vector<uint8_t> &aScaleImage,
    const std::vector<uint8_t> &bScaleImage, int64_t tileN,
    std::string *error = nullptr);

/// UE8M0 code of a power-of-two f32 scale_inv 2^e, e in [-127, 127]
/// (2^-127 is the f32 subnormal 0x00400000); nullopt for anything else
/// (not a power of two, zero, negative, inf, NaN, out of range).
std::optional<uint8_t> powerOfTwoToUe8m0(float scaleInv);

/// The MX [rows, ceil(cols / 32)] UE8M0 grid equivalent to a blockwise
/// tensor's scales: a 1 x 128 (or 128 x 128) tile's scale_inv is copied to
/// the four 1 x 32 blocks it covers in each of its rows. Nullopt (with
/// `error`) unless `q` has Tile granularity with tile columns a multiple of
/// 32 and every scale_inv is a power of two (f32 blockwise scales cannot be
/// expressed; the compiler must rescale on CUDA cores or reject).
std::optional<std::vector<uint8_t>>
blockwiseScalesToMx(const ::fp8::numerics::QuantizedTensor &q,
                    std::string *error = nullptr);

/// The host conversion the sm_100a blockwise-as-MX kernels document (kernel
/// metadata: gemm.scale_layout = "mx_atom_128x4_ue8m0", gemm.scale_conversion):
/// a blockwise operand's f32 scale_inv grid, in fp8.scaled_matmul's layout
/// ([ceil(rows / tileRows), ceil(cols / tileCols)] row-major: [M, ceil(K/128)]
/// for 1x128 activations, [ceil(N/128), ceil(K/128)] for 128x128 weights),
/// becomes the bytes the kernel's a_scale_inv / b_scale_inv takes: the
/// [ceil(rows/128), ceil(cols/128), 512] UE8M0 atom image of
/// layoutScaleFactors (padding 0) over the MX grid of blockwiseScalesToMx.
/// The four bytes of every 128-K group of a row are equal. UE8M0
/// (f8E8M0FNU) grids convert through numerics::decodeUe8m0 first. Nullopt
/// (with `error`) for a tile shape blockwiseScalesToMx rejects or any scale
/// that is not a power of two in [2^-127, 2^127].
std::optional<std::vector<uint8_t>>
blockwiseScalesToMxAtoms(const float *scaleInv, int64_t rows, int64_t cols,
                         int64_t tileRows, int64_t tileCols,
                         std::string *error = nullptr);

} // namespace mlir::fp8::blackwell::emulation

#endif // FP8_UNITTESTS_BLACKWELL_SCALEEMULATION_H
