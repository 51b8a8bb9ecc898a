#pragma once
#include <stdexcept>
#include <string>

namespace ps {
// The run's own numbers stopped being finite (an activation, a gradient, a loss): the run diverged. Not a fault of
// the code or of a peer, so it is recorded as the run's status "diverged", never as a malformed message. Senders
// raise it before encoding, which is why every decoder may treat a non-finite value as a malformed payload.
class DivergedError : public std::runtime_error {
 public:
  static constexpr const char* kPrefix = "diverged: ";
  explicit DivergedError(const std::string& what) : std::runtime_error(kPrefix + what) {}
};
}  // namespace ps
