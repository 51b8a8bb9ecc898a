#include "engine/dist/KeyValueStore.h"

namespace ps::store {

void putU32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = uint8_t(v >> (8 * i));
}

uint32_t getU32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t(p[i]) << (8 * i);
  return v;
}

std::vector<uint8_t> int64Bytes(int64_t v) {
  std::vector<uint8_t> out(8);
  for (int i = 0; i < 8; ++i) out[size_t(i)] = uint8_t(uint64_t(v) >> (8 * i));
  return out;
}

int64_t bytesInt64(const std::vector<uint8_t>& b) {
  if (b.size() != 8)
    throw RendezvousError("the rendezvous store answered " + std::to_string(b.size()) + " bytes for a count");
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t(b[size_t(i)]) << (8 * i);
  return int64_t(v);
}

RequestHeader parseRequestHeader(const uint8_t* bytes, size_t size) {
  if (size < kRequestHeaderBytes)
    throw RendezvousError("a request header of " + std::to_string(size) + " bytes (it has " +
                          std::to_string(kRequestHeaderBytes) + ")");
  RequestHeader h;
  if (bytes[0] < uint8_t(Op::Hello) || bytes[0] > uint8_t(Op::CompareSet))
    throw RendezvousError("an unknown operation " + std::to_string(int(bytes[0])));
  h.op = Op(bytes[0]);
  h.keyBytes = getU32(bytes + 1);
  h.valueBytes = getU32(bytes + 5);
  if (h.keyBytes > kMaxKeyBytes)
    throw RendezvousError("a key of " + std::to_string(h.keyBytes) + " bytes (at most " + std::to_string(kMaxKeyBytes) +
                          ")");
  if (h.valueBytes > kMaxValueBytes)
    throw RendezvousError("a value of " + std::to_string(h.valueBytes) + " bytes (at most " +
                          std::to_string(kMaxValueBytes) + ")");
  const bool keyed = h.op != Op::Hello && h.op != Op::NumKeys;
  if (keyed != (h.keyBytes > 0)) throw RendezvousError(keyed ? "a request without a key" : "a key where none belongs");
  const bool valued = h.op == Op::Hello || h.op == Op::Set || h.op == Op::Add || h.op == Op::CompareSet;
  if (!valued && h.valueBytes > 0) throw RendezvousError("a value where none belongs");
  if (h.op == Op::Add && h.valueBytes != 8)
    throw RendezvousError("an increment of " + std::to_string(h.valueBytes) + " bytes");
  if (h.op == Op::CompareSet && h.valueBytes < 4) throw RendezvousError("a compare-and-set without its expected value");
  if (h.op == Op::Hello && h.valueBytes > 256)
    throw RendezvousError("a token of " + std::to_string(h.valueBytes) + " bytes");
  return h;
}

}  // namespace ps::store
