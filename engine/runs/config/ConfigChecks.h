#pragma once
// The rules between a configuration's keys that no single key's range can express: the batch splits into every
// replica's micro-batches, the model has a block for every stage, explicit cuts fit the stages, each compressor's
// options fit its method and direction. Config::fromJson applies them; the messages name the keys and what to do.
#include "engine/runs/config/Config.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ps {

// Throws ConfigError, prefixed with `source` (the file or panel the settings came from), at the first rule broken.
void crossCheck(const Config& c, const std::string& source);

// Whether the codec `o` names is a pair of layers around a boundary (the learned bottleneck), not a codec alone.
bool codesThroughLayers(const CompressionOptions& o);

// Why a run whose compression is `before` cannot take `after` mid-run because of a learned bottleneck ("" when it
// can): its layers are built with the run, so a boundary may not gain one, lose one or change how it starts. Its
// code's width may change (both layers start afresh), within the features each boundary's bottleneck codes
// (`features`, per boundary, 0 where none; empty before the run is built), and the bits its code travels in.
std::string bottleneckChange(const Config::Compression& before, const Config::Compression& after,
                             const std::vector<int64_t>& features);

}  // namespace ps
