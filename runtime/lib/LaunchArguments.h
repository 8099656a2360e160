// Launch-time validation and planning, with no driver calls: binds the
// caller's operands to the metadata (symbols such as M from the shapes),
// checks every TMA requirement, and computes the grid and the kernel
// parameter buffer. Launch.cpp runs this before it touches the driver.
#ifndef FP8RT_LIB_LAUNCHARGUMENTS_H
#define FP8RT_LIB_LAUNCHARGUMENTS_H

#include "KernelMetadata.h"
#include "Status.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace fp8rt {

struct BoundOperand {
  bool present = false; // false: an optional operand left out or NULL
  CUdeviceptr address = 0;
  std::vector<int64_t> shape;
  int64_t sizeBytes = 0;
};

// The exact arguments of one cuTensorMapEncodeTiled call.
struct ResolvedTensorMap {
  CUtensorMapDataType dataType = CU_TENSOR_MAP_DATA_TYPE_UINT8;
  cuuint32_t rank = 0;
  void *address = nullptr;
  cuuint64_t dims[kMaxTensorMapRank] = {};
  cuuint64_t stridesBytes[kMaxTensorMapRank - 1] = {};
  cuuint32_t box[kMaxTensorMapRank] = {};
  cuuint32_t elementStrides[kMaxTensorMapRank] = {};
  CUtensorMapInterleave interleave = CU_TENSOR_MAP_INTERLEAVE_NONE;
  CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;
  CUtensorMapL2promotion l2Promotion = CU_TENSOR_MAP_L2_PROMOTION_NONE;
  CUtensorMapFloatOOBfill oobFill = CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;

  bool operator==(const ResolvedTensorMap &other) const;
  bool operator!=(const ResolvedTensorMap &other) const {
    return !(*this == other);
  }
  // Equal in everything but the global address.
  bool sameExceptAddress(const ResolvedTensorMap &other) const;
  std::string describe() const; // for error messages
};

struct LaunchArguments {
  std::vector<BoundOperand> operands; // in metadata order
  // Bound symbols in binding order: (symbol, value).
  std::vector<std::pair<std::string, int64_t>> symbols;
  // In metadata order; filled for the maps some param passes.
  std::vector<ResolvedTensorMap> tensorMaps;
  // Per param: the value of i32/i64 params (0 for other kinds).
  std::vector<int64_t> scalarValues;
  int64_t problemM = 0, problemN = 0; // persistent/tiles grids
  // A [G, M, N] grid operand (persistent grids): G sets of M x N tiles.
  int64_t problemBatch = 1;

  const int64_t *findSymbol(const std::string &symbol) const;
};

// Validates the caller's operands against the metadata and resolves
// everything a launch needs that does not come from the driver.
Status bindLaunchArguments(const KernelMetadata &meta,
                           const fp8rt_tensor *operands, int numOperands,
                           LaunchArguments &out);

// The checks of bindLaunchArguments that depend on the operands' addresses
// (not on their dtypes, shapes or strides), on `args` as bound: every
// present operand's address meets its alignment, every tensor map's
// operand is 16-byte aligned, and no output overlaps another operand. fp8rt_launch_ordered runs them on each launch
// whose addresses differ from the validated ones, so any new
// address-dependent check of the binder belongs here too.
Status checkOperandAddresses(const KernelMetadata &meta,
                             const LaunchArguments &args);

struct GridDims {
  uint32_t x = 1, y = 1, z = 1;
};

// The clusters of S CTAs, one CTA per SM, that a device runs at once, by S
// (cuOccupancyMaxActiveClusters); 0 where the driver was not asked, and
// selectLaunchVariant counts fp8schema::residentClusters instead.
struct ResidentClusters {
  static constexpr int64_t kMaxSize = 8;
  int counts[kMaxSize + 1] = {};
};

// The launch variant to run an M x N problem with on `numSMs` SMs: the
// index in `candidates` (persistent grids) of the least
// fp8schema::launchCost (waves of tiles over the CTAs the grid can hold,
// stream-K and K-split waves, times tile elements over throughput); ties go
// to the earlier candidate (the primary kernel first).
size_t
selectLaunchVariant(const std::vector<const KernelMetadata *> &candidates,
                    int64_t m, int64_t n, int numSMs,
                    const ResidentClusters &resident = {});

// The launch variant of a masked grouped GEMM ("variant_choice":
// "expected_m") for `groups` groups of about `expectedM` valid rows of N
// columns on `numSMs` SMs, DeepGEMM's rule for its masked kernels: over
// the G x ceil(expectedM / tile M) x ceil(N / tile N) tiles of each
// candidate (persistent grids), the fewest waves (tiles over the CTAs the
// grid can hold); of those, the most tiles in the last wave (fewest idle
// SMs); then the smaller tile (as many tiles, less padding); then the
// wider tile N (fewer padding rows). Ties (equal tiles) go to the earlier
// candidate (the primary kernel first). The tile throughputs are not used.
size_t selectExpectedMVariant(
    const std::vector<const KernelMetadata *> &candidates, int64_t expectedM,
    int64_t n, int64_t groups, int numSMs);

// The launch grid (see README.md): `numSMs` is only used by persistent
// grids. Every dim is rounded up to a multiple of the cluster dim.
Status computeGrid(const KernelMetadata &meta, const LaunchArguments &args,
                   int numSMs, GridDims &out);

// Writes all params into `buffer` (meta.paramBufferSize bytes, 64-byte
// aligned), each at its metadata offset; padding is zeroed.
// encodedMaps: per metadata tensor map (entries of unused maps are ignored).
// deviceAddresses: per param, the device address passed for tensor maps
// passed "global" (of the CUtensorMap) and for the workspace (ignored for
// other params).
void packParams(const KernelMetadata &meta, const LaunchArguments &args,
                const CUtensorMap *encodedMaps,
                const CUdeviceptr *deviceAddresses, unsigned char *buffer);

} // namespace fp8rt

#endif // FP8RT_LIB_LAUNCHARGUMENTS_H
