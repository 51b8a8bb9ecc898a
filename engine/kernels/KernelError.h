#pragma once
// The one exception every kernel throws: invalid arguments (null pointers, out-of-range bit widths, k > n) and
// malformed input bytes (the decoders read untrusted payloads). Kernels never read or write out of bounds instead.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace ps::kernels {

class KernelError : public std::runtime_error {
 public:
  explicit KernelError(const std::string& what) : std::runtime_error("kernel error: " + what) {}
};

// Element counts are limited so that every index fits a uint32_t and every delta gap (first gap from -1) does too.
inline constexpr size_t kMaxElements = 0xFFFFFFFFu;

// Throws KernelError(what) unless `ok`.
inline void require(bool ok, const char* what) {
  if (!ok) throw KernelError(what);
}

}  // namespace ps::kernels
