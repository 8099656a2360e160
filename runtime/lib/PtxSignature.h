// Reads the parameter list of a PTX `.entry` so that a kernel whose metadata
// disagrees with its PTX (count, sizes or alignment of the parameters) is
// rejected at load instead of corrupting memory at launch.
#ifndef FP8RT_LIB_PTXSIGNATURE_H
#define FP8RT_LIB_PTXSIGNATURE_H

#include "KernelMetadata.h"
#include "Status.h"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace fp8rt {

struct PtxParam {
  std::string declaration; // as written, normalised spacing: ".param .u64 p"
  size_t size = 0;         // bytes
  size_t alignment = 0;    // bytes (.align before the type, else the type's)
};

// Finds `.entry ENTRY(...)` in `ptx` (comments are skipped) and returns its
// parameters. Fails (FP8RT_ERROR_INVALID_METADATA) when there is no such
// entry or a parameter cannot be read.
Status parsePtxEntryParams(std::string_view ptx, std::string_view entry,
                           std::vector<PtxParam> &out);

// Checks that the PTX entry takes exactly the metadata's params: same count;
// pointers, global tensor maps and i64 as 8 bytes, i32 as 4 bytes, and
// grid_constant tensor maps as 128 bytes with 64-byte alignment.
Status checkPtxMatchesMetadata(std::string_view ptx, const KernelMetadata &meta,
                               std::string_view sourceName);

} // namespace fp8rt

#endif // FP8RT_LIB_PTXSIGNATURE_H
