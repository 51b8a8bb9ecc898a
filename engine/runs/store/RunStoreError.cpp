#include "engine/runs/store/RunStoreError.h"

namespace ps {

StoreError::StoreError(const std::string& what) : std::runtime_error(what) {}

// Out of line so the vtable is emitted in exactly one translation unit.
StoreError::~StoreError() = default;

}  // namespace ps
