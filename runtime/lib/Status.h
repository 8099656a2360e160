// Internal error plumbing: every internal function that can fail returns a
// Status (code + message); the C entry points turn it into an fp8rt_status
// and the thread-local fp8rt_last_error() message. No exceptions are used
// for errors.
#ifndef FP8RT_LIB_STATUS_H
#define FP8RT_LIB_STATUS_H

#include "fp8rt/fp8rt.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace fp8rt {

class [[nodiscard]] Status {
public:
  Status() = default; // success
  Status(fp8rt_status code, std::string message)
      : code_(code), message_(std::move(message)) {}

  bool ok() const { return code_ == FP8RT_SUCCESS; }
  fp8rt_status code() const { return code_; }
  const std::string &message() const { return message_; }

  // Prefixes the message with context ("operand 'a': ...").
  Status &prepend(std::string_view prefix) {
    message_.insert(0, prefix);
    return *this;
  }

private:
  fp8rt_status code_ = FP8RT_SUCCESS;
  std::string message_;
};

// Concatenates strings and integers. Integers go through std::to_string so
// messages do not depend on the global C++ locale.
namespace detail {
inline void appendPiece(std::string &out, std::string_view piece) {
  out.append(piece.data(), piece.size());
}
inline void appendPiece(std::string &out, const char *piece) {
  out.append(piece ? piece : "(null)");
}
inline void appendPiece(std::string &out, char piece) { out.push_back(piece); }
template <typename Int,
          typename = std::enable_if_t<std::is_integral_v<Int> &&
                                      !std::is_same_v<Int, char> &&
                                      !std::is_same_v<Int, bool>>>
void appendPiece(std::string &out, Int value) {
  out += std::to_string(value);
}
} // namespace detail

template <typename... Pieces> std::string strCat(const Pieces &...pieces) {
  std::string out;
  (detail::appendPiece(out, pieces), ...);
  return out;
}

// "0x1f00": an address in messages.
inline std::string hex(uint64_t value) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  do {
    out.insert(out.begin(), digits[value & 15]);
    value >>= 4;
  } while (value);
  return "0x" + out;
}

// "[1, 2, 3]": a shape or strides in messages.
template <typename T> std::string list(const T *values, size_t count) {
  std::string out = "[";
  for (size_t i = 0; i < count; ++i)
    out += (i ? ", " : "") + std::to_string(values[i]);
  return out + "]";
}

template <typename... Pieces> Status invalidArgument(const Pieces &...pieces) {
  return Status(FP8RT_ERROR_INVALID_ARGUMENT, strCat(pieces...));
}
template <typename... Pieces> Status invalidMetadata(const Pieces &...pieces) {
  return Status(FP8RT_ERROR_INVALID_METADATA, strCat(pieces...));
}

} // namespace fp8rt

// Returns early from the enclosing function when `expr` yields an error.
#define FP8RT_RETURN_IF_ERROR(expr)                                            \
  do {                                                                         \
    ::fp8rt::Status fp8rtStatus_ = (expr);                                     \
    if (!fp8rtStatus_.ok())                                                    \
      return fp8rtStatus_;                                                     \
  } while (0)

#endif // FP8RT_LIB_STATUS_H
