#pragma once
// The files `pipesqueeze-cli codec` writes and reads back: OUT.bin (a header naming the options, then the payload as
// it would cross a link) and the --state folder that carries a compensation over a sequence of calls. Everything read
// back is untrusted: a file of a kind or size it cannot be, a header that does not parse, a message of another shape
// than the folder records is refused as bad input (ConfigError) naming the file.
#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "engine/compress/Payload.h"

namespace at {
class Tensor;
}
namespace ps {
class Compensator;
struct NpyArray;
}  // namespace ps

namespace ps::cli {

constexpr uint32_t kMaxCodecHeader = 1 << 16;

// Bad input to the codec command (exit 2), `what` naming the file or option and the fix.
[[noreturn]] void badInput(const std::string& what);

// The folder's configuration (options, seed and the tensors' shape) is written on first use and must match on every
// later one; returns how many messages the folder holds. An empty `dir` is no folder (0).
size_t openState(const std::string& dir, const nlohmann::json& config);
// Rebuilds a compensation's state by replaying the folder's first `count` inputs (sender) or payloads (receiver),
// each checked against the folder's shape.
void replaySender(const std::string& dir, const nlohmann::json& config, size_t count, Compensator& sender);
void replayReceiver(const std::string& dir, const nlohmann::json& config, size_t count, int64_t maxElements,
                    Compensator& receiver);
// A float32 tensor of the array's shape and values.
at::Tensor tensorOf(const NpyArray& a);
// Refuses (as bad input naming `file`) a tensor holding an inf or a NaN, which no codec encodes.
void checkFinite(const std::string& file, const at::Tensor& x);
// "DIR/input-000003.npy"
std::string numbered(const std::string& dir, const char* stem, size_t i, const char* ext);

void writeBin(const std::string& path, const nlohmann::json& header, const Payload& p);
// Size-checked against a payload of at most `maxElements` before it is read whole.
std::pair<nlohmann::json, Payload> readBin(const std::string& path, int64_t maxElements);

}  // namespace ps::cli
