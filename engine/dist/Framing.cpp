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

std::vector<uint8_t> packParts(const std::vector<std::vector<uint8_t>>& parts) {
  std::vector<uint8_t> out(4 + 8 * parts.size());
  const uint32_t count = uint32_t(parts.size());
  std::memcpy(out.data(), &count, 4);
  for (size_t i = 0; i < parts.size(); ++i) {
    const uint64_t size = parts[i].size();
    std::memcpy(out.data() + 4 + 8 * i, &size, 8);
  }
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

std::vector<std::vector<uint8_t>> unpackParts(const std::vector<uint8_t>& bytes, size_t count, uint64_t limit) {
  const uint64_t header = 4 + 8 * uint64_t(count);
  uint32_t declared = 0;
  if (bytes.size() >= 4) std::memcpy(&declared, bytes.data(), 4);
  if (declared != count)
    throw FrameError("a list of " + std::to_string(declared) + " parts where " + std::to_string(count) +
                     " were expected");
  if (bytes.size() < header)
    throw FrameError("a list of " + std::to_string(count) + " parts in " + std::to_string(bytes.size()) +
                     " bytes, too few for their sizes");
  auto parts = std::vector<std::vector<uint8_t>>(count);
  uint64_t at = header;
  for (size_t i = 0; i < count; ++i) {
    uint64_t size = 0;
    std::memcpy(&size, bytes.data() + 4 + 8 * i, 8);
    if (size > limit || size > bytes.size() - at)
      throw FrameError("a list whose part " + std::to_string(i) + " claims " + std::to_string(size) +
                       " bytes (at most " + std::to_string(limit) + ", and " + std::to_string(bytes.size() - at) +
                       " left)");
    parts[i].assign(bytes.begin() + int64_t(at), bytes.begin() + int64_t(at + size));
    at += size;
  }
  if (at != bytes.size())
    throw FrameError("a list with " + std::to_string(bytes.size() - at) + " bytes left over");
  return parts;
}

}  // namespace ps
