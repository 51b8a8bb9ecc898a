#pragma once
// The rules between a configuration's keys that no single key's range can express: the batch splits into every
// replica's micro-batches, the model has a block for every stage, explicit cuts fit the stages, each compressor's
// options fit its method and direction. Config::fromJson applies them; the messages name the keys and what to do.
#include "engine/runs/config/Config.h"

#include <string>

namespace ps {

// Throws ConfigError, prefixed with `source` (the file or panel the settings came from), at the first rule broken.
void crossCheck(const Config& c, const std::string& source);

}  // namespace ps
