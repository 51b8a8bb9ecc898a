#pragma once
// The bytes that cross a link. Every payload starts with a small header so the receiver can check what it got
// before touching the body: payloads from another process are untrusted input.
#include <torch/types.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace ps {

class PayloadError : public std::runtime_error {
 public:
  explicit PayloadError(const std::string& what) : std::runtime_error("malformed payload: " + what) {}
};

// The codec a payload's header names: the payload id of its catalogue entry (MethodSpec::payload, written in the
// entry's spec and nowhere else; payloadOf<Entry>() reads it). 0 is no codec's.
enum class CodecId : uint8_t {};

struct PayloadHeader {
  static constexpr uint8_t kMagic[4] = {'P', 'S', 'Q', 'Z'};
  static constexpr uint8_t kVersion = 1;
  static constexpr size_t kMaxDims = 8;
  static constexpr int64_t kMaxElements = int64_t(1) << 31;  // 8 GiB of float32: a hostile shape cannot ask for more

  CodecId codec{};
  std::vector<int64_t> shape;

  int64_t numel() const;
  void writeTo(std::vector<uint8_t>& out) const;  // appends
  // Parses and validates; returns the offset of the body.
  static PayloadHeader read(const std::vector<uint8_t>& bytes, size_t& offset);
};

// The most bytes any codec's payload takes for a tensor of this shape (its header, then at most 16 bytes per element
// and 4 KiB of codec headers): a receiver that knows the shape refuses larger messages before receiving them.
uint64_t maxPayloadBytes(const std::vector<int64_t>& shape);

// "[64, 128]": a shape in error messages.
std::string shapeText(const std::vector<int64_t>& shape);

struct Payload {
  std::vector<uint8_t> bytes;
  // The payload's last bytes, left on the device that encoded them (uint8, contiguous), or undefined. Only a codec
  // told that its payloads stay in this process (Codec::Residence) leaves them there, so a payload between two GPU
  // stages of one process moves device to device: the receiver copies the tail to its own device and decodes it
  // there. `bytes` followed by the tail are exactly the bytes the host path writes.
  torch::Tensor tail;
  uint64_t values = 0;  // how many values the bytes carry (density); set by the encoder, not sent
  size_t size() const { return bytes.size() + (tail.defined() ? size_t(tail.numel()) : 0); }
  // Appends the tail to `bytes` (a copy to the host) and drops it: what a payload leaving the process needs.
  void gather();
};

// A payload with its header read: a receiver that must know which codec wrote it (a compensator: its codec, or the
// identity for a tensor sent whole) reads the header once, and the decoder goes on from the body.
struct HeadedPayload {
  explicit HeadedPayload(const Payload& p) : payload(p) { header = PayloadHeader::read(p.bytes, body); }
  HeadedPayload(const Payload& p, const HeadedPayload& readAs) : payload(p), header(readAs.header), body(readAs.body) {}
  const Payload& payload;
  PayloadHeader header;
  size_t body = 0;  // where the body starts in payload.bytes
};

}  // namespace ps
