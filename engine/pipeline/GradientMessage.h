#pragma once
// What one replica sends its peers in a compressed gradient exchange: its emulated clock, then one length-prefixed
// codec payload per parameter tensor, in parameter order.
//
//   f64 clock | u32 tensors | tensors x (u64 length | length bytes)      (little-endian, as the host writes it)
//
// The bytes come from another process: parse() checks the tensor count against the one the receiver expects and
// every length against the bytes present before it hands out a single span. Torch-free, so a fuzzer drives it.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace ps {

class GradientMessageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class GradientMessageWriter {
 public:
  GradientMessageWriter();
  void add(const std::vector<uint8_t>& payload);
  // Stamps the clock and the tensor count; the writer is empty afterwards.
  std::vector<uint8_t> finish(double clock);

 private:
  std::vector<uint8_t> bytes_;
  uint32_t count_ = 0;
};

struct GradientMessage {
  struct Span {
    const uint8_t* data = nullptr;
    size_t size = 0;
  };
  double clock = 0;          // may be anything a peer wrote: callers check finiteness where they use it
  std::vector<Span> tensors;  // into the parsed bytes, which must outlive the message

  static constexpr size_t kHeaderBytes = 12;
  // Throws GradientMessageError naming what is wrong.
  static GradientMessage parse(const std::vector<uint8_t>& bytes, uint32_t expectedTensors);
  // The largest message a replica can send for `elements` gradient values in `tensors` tensors: no codec needs more
  // than float32 values with 32-bit indices plus 4 KiB of headers per tensor.
  static uint64_t maxBytes(uint64_t elements, uint32_t tensors) {
    return 8 * elements + 4096 * (uint64_t(tensors) + 1);
  }
};

}  // namespace ps
