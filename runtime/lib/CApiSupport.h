// What the C entry points share (CApi.cpp, ModuleCApi.cpp): turning a
// Status into an fp8rt_status and the thread-local error message, catching
// every exception at the boundary, and reading files.
#ifndef FP8RT_LIB_CAPISUPPORT_H
#define FP8RT_LIB_CAPISUPPORT_H

#include "Status.h"

#include <exception>
#include <memory>
#include <new>
#include <string>

struct fp8rt_kernel;

namespace fp8rt {

// Sets fp8rt_last_error() to "FUNCTION: message" when `status` failed;
// returns its code.
fp8rt_status report(const char *function, const Status &status);

// Runs `body` and converts any exception (in practice std::bad_alloc) into
// a status, so nothing propagates into C callers.
template <typename Body>
fp8rt_status guarded(const char *function, Body &&body) {
  try {
    return report(function, body());
  } catch (const std::bad_alloc &) {
    return report(function, Status(FP8RT_ERROR_INTERNAL, "out of host memory"));
  } catch (const std::exception &e) {
    return report(function, Status(FP8RT_ERROR_INTERNAL,
                                   strCat("internal error: ", e.what())));
  } catch (...) {
    return report(function, Status(FP8RT_ERROR_INTERNAL,
                                   "internal error: unknown exception"));
  }
}

// The whole file; FP8RT_ERROR_IO naming the path when it cannot be read.
Status readFile(const std::string &path, std::string &out);

// fp8rt_kernel_load: NAME.json, its image and its launch variants.
Status loadKernelFile(const std::string &jsonPath,
                      std::unique_ptr<fp8rt_kernel> &out);

} // namespace fp8rt

#endif // FP8RT_LIB_CAPISUPPORT_H
