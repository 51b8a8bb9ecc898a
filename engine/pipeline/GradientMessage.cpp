#include "engine/pipeline/GradientMessage.h"

#include <cstring>

namespace ps {

GradientMessageWriter::GradientMessageWriter() : bytes_(GradientMessage::kHeaderBytes) {}

void GradientMessageWriter::add(const std::vector<uint8_t>& payload) {
  const uint64_t size = payload.size();
  const size_t at = bytes_.size();
  bytes_.resize(at + 8 + payload.size());
  std::memcpy(bytes_.data() + at, &size, 8);
  if (!payload.empty()) std::memcpy(bytes_.data() + at + 8, payload.data(), payload.size());
  ++count_;
}

std::vector<uint8_t> GradientMessageWriter::finish(double clock) {
  std::memcpy(bytes_.data(), &clock, 8);
  std::memcpy(bytes_.data() + 8, &count_, 4);
  std::vector<uint8_t> out(GradientMessage::kHeaderBytes);
  out.swap(bytes_);
  count_ = 0;
  return out;
}

GradientMessage GradientMessage::parse(const std::vector<uint8_t>& bytes, uint32_t expectedTensors) {
  if (bytes.size() < kHeaderBytes)
    throw GradientMessageError("a message of " + std::to_string(bytes.size()) + " bytes, shorter than its " +
                               std::to_string(kHeaderBytes) + "-byte header");
  GradientMessage m;
  uint32_t count = 0;
  std::memcpy(&m.clock, bytes.data(), 8);
  std::memcpy(&count, bytes.data() + 8, 4);
  if (count != expectedTensors)
    throw GradientMessageError(std::to_string(count) + " tensors where " + std::to_string(expectedTensors) +
                               " were expected");
  // Each tensor takes at least its 8-byte length: a count the bytes cannot hold never sizes an allocation.
  if (uint64_t(count) * 8 > bytes.size() - kHeaderBytes)
    throw GradientMessageError(std::to_string(count) + " tensors cannot fit in " + std::to_string(bytes.size()) +
                               " bytes");
  m.tensors.reserve(count);
  size_t offset = kHeaderBytes;
  for (uint32_t i = 0; i < count; ++i) {
    uint64_t size = 0;
    if (bytes.size() - offset < 8)
      throw GradientMessageError("tensor " + std::to_string(i) + " runs past the end of the message");
    std::memcpy(&size, bytes.data() + offset, 8);
    offset += 8;
    if (size > bytes.size() - offset)
      throw GradientMessageError("tensor " + std::to_string(i) + " declares " + std::to_string(size) +
                                 " bytes, only " + std::to_string(bytes.size() - offset) + " follow");
    m.tensors.push_back(Span{bytes.data() + offset, size_t(size)});
    offset += size_t(size);
  }
  if (offset != bytes.size())
    throw GradientMessageError(std::to_string(bytes.size() - offset) + " trailing bytes after the last tensor");
  return m;
}

}  // namespace ps
