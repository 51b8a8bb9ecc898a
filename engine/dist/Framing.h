#pragma once
// How a point-to-point message travels between two ranks: a 32-byte header (magic, body size, the emulated clock
// stamp, a throttled link's delivery time), then the body in chunks of at most kChunkBytes, each its own transport
// message. The receiver checks the header before anything else and grows its buffer only as chunks arrive, so a
// peer that announces 16 GiB and sends 32 bytes costs the receiver one chunk, not 16 GiB of zeros.
// Torch-free: the header checks and the chunked receive are unit-tested and fuzzed without a transport.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <vector>

namespace ps {

class FrameError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct WireHeader {
  static constexpr uint32_t kMagic = 0x47534d50;  // "PMSG"
  uint32_t magic = kMagic;
  uint32_t reserved = 0;
  uint64_t bytes = 0;
  double stamp = 0;
  int64_t deliver_ns = 0;  // throttled links: steady clock (system-wide on one host) before which not to use it
};
static_assert(sizeof(WireHeader) == 32, "the header is 32 bytes on the wire");

constexpr uint64_t kChunkBytes = uint64_t(16) << 20;

// Throws FrameError when the header is not ours or announces more than `limit` bytes.
void checkHeader(const WireHeader& h, uint64_t limit);
// Reads a header from raw bytes (exactly 32) and checks it.
WireHeader parseHeader(const uint8_t* data, size_t size, uint64_t limit);

// The chunks a body of `total` bytes travels in: (offset, size) pairs, in order.
std::vector<std::pair<uint64_t, size_t>> chunksOf(uint64_t total);
// Receives a body of `total` bytes: receiveChunk(destination, size) fills each chunk in turn (throwing when the peer
// fails); memory grows with what arrived, never ahead of it by more than a chunk.
std::vector<uint8_t> receiveChunked(uint64_t total, const std::function<void(uint8_t*, size_t)>& receiveChunk);

// Several parts as one message (a gather's result as rank 0 sends it to every rank): the part count, each part's
// size, then the parts. unpackParts throws FrameError unless the bytes hold exactly `count` parts of at most `limit`
// bytes each and nothing else.
std::vector<uint8_t> packParts(const std::vector<std::vector<uint8_t>>& parts);
std::vector<std::vector<uint8_t>> unpackParts(const std::vector<uint8_t>& bytes, size_t count, uint64_t limit);

}  // namespace ps
