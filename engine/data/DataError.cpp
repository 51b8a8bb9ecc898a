#include "engine/data/DataError.h"

namespace ps::data {

DataError::DataError(const std::string& message) : std::runtime_error(message) {}

// Out of line so the vtable is emitted in exactly one translation unit.
DataError::~DataError() = default;

}  // namespace ps::data
