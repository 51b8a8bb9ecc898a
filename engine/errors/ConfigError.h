#pragma once
#include <stdexcept>
#include <string>

namespace ps {
// A configuration the user can fix: the message names the key, the value and what is allowed.
class ConfigError : public std::runtime_error {
 public:
  explicit ConfigError(const std::string& what) : std::runtime_error(what) {}
};
}  // namespace ps
