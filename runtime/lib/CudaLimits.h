// CUDA's launch limits that fp8rt checks kernel metadata and launches
// against (CUDA C++ Programming Guide, "Technical Specifications per
// Compute Capability"; the same for compute capabilities 9.0 and 10.0).
#ifndef FP8RT_LIB_CUDALIMITS_H
#define FP8RT_LIB_CUDALIMITS_H

#include <stdint.h>

namespace fp8rt {

/// Grid: x < 2^31, y and z <= 65535.
inline constexpr int64_t kMaxGridDimX = INT32_MAX;
inline constexpr int64_t kMaxGridDimYZ = 65535;
/// Block: at most 1024 threads, z <= 64.
inline constexpr int64_t kMaxThreadsPerBlock = 1024;
inline constexpr int64_t kMaxBlockDimZ = 64;
/// Blocks per thread-block cluster (the non-portable maximum).
inline constexpr int64_t kMaxClusterBlocks = 16;
/// Dynamic shared memory a kernel may use without raising
/// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES.
inline constexpr int64_t kDefaultDynamicSharedMemoryBytes = 48 * 1024;

} // namespace fp8rt

#endif // FP8RT_LIB_CUDALIMITS_H
