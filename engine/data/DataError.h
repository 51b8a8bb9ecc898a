#pragma once

#include <stdexcept>
#include <string>

namespace ps::data {

// Thrown by every reader in ps::data. The message always names the offending
// file or folder and says what the user can do about it.
class DataError : public std::runtime_error {
 public:
  explicit DataError(const std::string& message);
  ~DataError() override;
};

}  // namespace ps::data
