#include "engine/dist/Framing.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace ps {

void checkHeader(const WireHeader& h, uint64_t limit) {
  if (h.magic != WireHeader::kMagic || h.reserved != 0)
    throw FrameError("a message with a bad header (not a PipeSqueeze peer or a different version)");
  if (h.bytes > limit)
    throw FrameError("a message announcing " + std::to_string(h.bytes) + " bytes, above the " +
                     std::to_string(limit) + " this receiver accepts");
}

WireHeader parseHeader(const uint8_t* data, size_t size, uint64_t limit) {
  if (size != sizeof(WireHeader))
    throw FrameError("a header of " + std::to_string(size) + " bytes, not " + std::to_string(sizeof(WireHeader)));
  WireHeader h;
  std::memcpy(&h, data, sizeof h);
  checkHeader(h, limit);
  return h;
}

std::vector<std::pair<uint64_t, size_t>> chunksOf(uint64_t total) {
  std::vector<std::pair<uint64_t, size_t>> chunks;
  for (uint64_t at = 0; at < total; at += kChunkBytes) chunks.emplace_back(at, size_t(std::min(kChunkBytes, total - at)));
  return chunks;
}

std::vector<uint8_t> receiveChunked(uint64_t total, const std::function<void(uint8_t*, size_t)>& receiveChunk) {
  std::vector<uint8_t> bytes;
  for (const auto& [at, size] : chunksOf(total)) {
    bytes.resize(size_t(at) + size);  // geometric growth: amortised copies, never ahead of what arrived by > 2x
    receiveChunk(bytes.data() + at, size);
  }
  return bytes;
}

}  // namespace ps
