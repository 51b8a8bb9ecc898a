#pragma once
#include <stdexcept>
#include <string>

namespace ps {
// Anything that goes wrong with the run store. The message names the store file and says
// what the user can do about it (move a damaged file aside, upgrade, close another writer...).
class StoreError : public std::runtime_error {
 public:
  explicit StoreError(const std::string& what);
  ~StoreError() override;
};
}  // namespace ps
