#include "engine/compress/Payload.h"

#include <algorithm>
#include <cstring>

namespace ps {

void Payload::gather() {
  if (!tail.defined()) return;
  const auto host = tail.to(torch::kCPU).contiguous();
  const size_t n = size_t(host.numel()), at = bytes.size();
  bytes.resize(at + n);
  if (n) std::memcpy(bytes.data() + at, host.data_ptr<uint8_t>(), n);
  tail = torch::Tensor();
}

uint64_t maxPayloadBytes(const std::vector<int64_t>& shape) {
  uint64_t n = 1;
  for (int64_t d : shape) n *= uint64_t(std::max<int64_t>(d, 0));
  return 8 + 8 * shape.size() + 16 * n + 4096;
}

std::string shapeText(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

int64_t PayloadHeader::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

void PayloadHeader::writeTo(std::vector<uint8_t>& out) const {
  out.insert(out.end(), kMagic, kMagic + 4);
  out.push_back(kVersion);
  out.push_back(static_cast<uint8_t>(codec));
  out.push_back(static_cast<uint8_t>(shape.size()));
  out.push_back(0);  // reserved
  for (int64_t d : shape) {
    uint8_t le[8];
    for (int i = 0; i < 8; ++i) le[i] = static_cast<uint8_t>(static_cast<uint64_t>(d) >> (8 * i));
    out.insert(out.end(), le, le + 8);
  }
}

PayloadHeader PayloadHeader::read(const std::vector<uint8_t>& bytes, size_t& offset) {
  if (bytes.size() < 8) throw PayloadError("only " + std::to_string(bytes.size()) + " bytes, a header needs 8");
  if (std::memcmp(bytes.data(), kMagic, 4) != 0) throw PayloadError("bad magic, not a PipeSqueeze payload");
  if (bytes[4] != kVersion)
    throw PayloadError("version " + std::to_string(bytes[4]) + ", this build reads version " +
                       std::to_string(kVersion) + "; run the same PipeSqueeze version on every rank");
  PayloadHeader h;
  h.codec = static_cast<CodecId>(bytes[5]);
  const size_t ndim = bytes[6];
  if (ndim > kMaxDims) throw PayloadError(std::to_string(ndim) + " dimensions, at most 8 are allowed");
  if (bytes.size() < 8 + 8 * ndim) throw PayloadError("header truncated");
  int64_t n = 1;
  for (size_t i = 0; i < ndim; ++i) {
    uint64_t d = 0;
    for (int b = 0; b < 8; ++b) d |= uint64_t(bytes[8 + 8 * i + b]) << (8 * b);
    if (d == 0 || d > uint64_t(kMaxElements) || uint64_t(n) * d > uint64_t(kMaxElements))
      throw PayloadError("dimension " + std::to_string(i) + " has an impossible size " + std::to_string(d));
    n *= int64_t(d);
    h.shape.push_back(int64_t(d));
  }
  offset = 8 + 8 * ndim;
  return h;
}

}  // namespace ps
