#include "engine/core/CodeVersion.h"

#include "GeneratedCodeVersion.h"

namespace ps {

const char* codeVersion() { return PIPESQUEEZE_CODE_VERSION; }

}  // namespace ps
