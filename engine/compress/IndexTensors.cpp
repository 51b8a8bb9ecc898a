#include "engine/compress/IndexTensors.h"

#include "engine/compress/Payload.h"
#include "engine/tensors/DeviceChecks.h"

#include <torch/torch.h>

#include <algorithm>
#include <string>

namespace ps {
namespace {

using kernels::IndexFormat;

// Powers of `base` for digits 0..count-1, as an int64 row on `like`'s device.
torch::Tensor powersOf(int64_t base, int64_t count, const torch::Tensor& like) {
  return torch::pow(torch::full({count}, base, like.options().dtype(torch::kInt64)),
                    torch::arange(count, like.options().dtype(torch::kInt64)));
}

// Digit j of x in `base` (x >= 0), for every x and j: [k, digits].
torch::Tensor digits(const torch::Tensor& x, int64_t base, int64_t count) {
  return torch::remainder(torch::div(x.unsqueeze(1), powersOf(base, count, x).unsqueeze(0), "floor"), base);
}

void expectBytes(const torch::Tensor& payload, uint64_t bytes, const char* format) {
  if (uint64_t(payload.numel()) != bytes)
    throw PayloadError(std::string(format) + " index block of " + std::to_string(payload.numel()) + " bytes where " +
                       std::to_string(bytes) + " were expected");
}

}  // namespace

IndexTensorBlock encodeIndexTensor(const torch::Tensor& idx, uint64_t n) {
  const auto i64 = idx.options().dtype(torch::kInt64);
  const int64_t k = idx.numel();
  // The gaps idx[j] - idx[j-1] with idx[-1] = -1, and their LEB128 lengths (1 to 5 bytes).
  const auto gaps = k ? idx - torch::cat({torch::full({1}, -1, i64), idx.narrow(0, 0, k - 1)}) : idx;
  auto lengths = torch::ones_like(gaps);
  for (int64_t bits = 7; bits <= 28; bits += 7) lengths += gaps.ge(int64_t(1) << bits).to(torch::kInt64);
  const size_t varint = k ? size_t(lengths.sum().item<int64_t>()) : 0;
  size_t size = 0;
  IndexTensorBlock b;
  b.format = kernels::cheapest(size_t(k), size_t(n), varint, &size);
  switch (b.format) {
    case IndexFormat::Absolute32:  // each index's four bytes, low first
      b.payload = digits(idx, 256, 4).reshape({-1}).to(torch::kUInt8);
      break;
    case IndexFormat::Bitmap: {  // the bits of one byte are distinct, so adding them sets them
      auto bytes = torch::zeros({int64_t((n + 7) / 8)}, idx.options().dtype(torch::kInt32));
      bytes.index_add_(0, torch::div(idx, 8, "floor"), torch::pow(2, torch::remainder(idx, 8)).to(torch::kInt32));
      b.payload = bytes.to(torch::kUInt8);
      break;
    }
    case IndexFormat::DeltaVarint: {  // every gap's five 7-bit groups, the continuation bit on all but its last
      const auto j = torch::arange(5, i64).unsqueeze(0);
      const auto len = lengths.unsqueeze(1);
      const auto groups = digits(gaps, 128, 5) + j.lt(len - 1).to(torch::kInt64) * 128;
      b.payload = groups.masked_select(j.lt(len)).to(torch::kUInt8);
      break;
    }
  }
  return b;
}

namespace {

// An untrusted block's positions are used before its checks are read (engine/tensors/DeviceChecks.h: a stage on a
// GPU reads them once a step), so every step below keeps them inside [0, n) and the gathers inside their tensors
// whatever the bytes say: a malformed block makes a wrong tensor, never a read out of bounds, and its failed check
// refuses the step before anything learns from it.

[[noreturn]] void refuse(const std::string& why) {
  throw PayloadError(why);
}

// Strictly ascending and below n, as decodeIndices requires of bytes; returned kept inside [0, n).
torch::Tensor ascendingBelow(torch::Tensor idx, uint64_t n) {
  const int64_t k = idx.numel();
  if (k == 0) return idx;
  const auto bad = (idx.narrow(0, 1, k - 1) <= idx.narrow(0, 0, k - 1))
                       .any()
                       .logical_or(idx[k - 1] >= int64_t(n))
                       .logical_or(idx[0] < 0);
  requireOnDevice(bad.logical_not(), [n] { refuse("indices are not strictly ascending below " + std::to_string(n)); });
  return idx.clamp(0, int64_t(n) - 1);
}

// Where each marked element (mask, 0 or 1) falls among the first k marked ones: positions[j] is the index of the j-th,
// without a count read back first (nonzero's); marks beyond the k-th are written to a slot that is dropped. In chunks,
// so that the scan's temporaries stay a few hundred MB whatever the length (a bitmap has a byte a bit here).
torch::Tensor markedPositions(const torch::Tensor& mask, uint64_t k) {
  const auto i64 = mask.options().dtype(torch::kInt64);
  auto positions = torch::zeros({int64_t(k) + 1}, i64);
  auto before = torch::zeros({}, i64);  // marks in the chunks already done
  const int64_t n = mask.numel(), chunk = int64_t(1) << 24;
  for (int64_t at = 0; at < n; at += chunk) {
    const int64_t length = std::min(chunk, n - at);
    const auto marked = mask.narrow(0, at, length).to(torch::kBool);
    const auto rank = marked.cumsum(0, torch::kInt64) + (before - 1);
    const auto slot = torch::where(marked.logical_and(rank.lt(int64_t(k))), rank, torch::full({}, int64_t(k), i64));
    positions.scatter_(0, slot, torch::arange(at, at + length, i64));
    before = before + marked.sum(torch::kInt64);
  }
  return positions.narrow(0, 0, int64_t(k));
}

}  // namespace

torch::Tensor decodeIndexTensor(IndexFormat format, const torch::Tensor& payload, uint64_t k, uint64_t n) {
  // Host facts first: then every position below can be kept inside [0, n).
  if (k > n) refuse(std::to_string(k) + " indices into " + std::to_string(n) + " elements");
  switch (format) {
    case IndexFormat::Absolute32: {
      expectBytes(payload, 4 * k, "an absolute");
      const auto bytes = payload.to(torch::kInt64);
      return ascendingBelow((bytes.view({int64_t(k), 4}) * powersOf(256, 4, bytes).unsqueeze(0)).sum(1), n);
    }
    case IndexFormat::Bitmap: {
      expectBytes(payload, (n + 7) / 8, "a bitmap");
      // One byte a bit, in uint8 throughout: a bitmap is chosen for dense selections of large tensors.
      const auto bits =
          torch::bitwise_and(torch::bitwise_right_shift(payload.unsqueeze(1), torch::arange(8, payload.options())), 1)
              .reshape({-1});
      const auto inside = bits.narrow(0, 0, int64_t(n));
      if (bits.numel() > int64_t(n))
        requireOnDevice(bits.narrow(0, int64_t(n), bits.numel() - int64_t(n)).any().logical_not(),
                        [n] { refuse("a bitmap with bits set beyond its " + std::to_string(n) + " elements"); });
      const auto set = inside.sum(torch::kInt64);
      requireOnDevice(set.eq(int64_t(k)), [set, k] {
        refuse("a bitmap of " + std::to_string(set.item<int64_t>()) + " positions where " + std::to_string(k) +
               " were expected");
      });
      return markedPositions(inside, k);  // ascending and below n by construction
    }
    case IndexFormat::DeltaVarint: {
      const auto bytes = payload.to(torch::kInt64);  // at most five a gap
      const int64_t m = bytes.numel();
      if (k == 0) {
        if (m != 0) refuse("a varint index block of " + std::to_string(m) + " bytes where no index was expected");
        return torch::empty({0}, bytes.options());
      }
      if (m == 0) refuse("an empty varint index block where " + std::to_string(k) + " gaps were expected");
      const auto last = bytes.lt(128);  // each gap's last byte
      const auto ends = last.sum(torch::kInt64);
      requireOnDevice(ends.eq(int64_t(k)).logical_and(last[m - 1]), [ends, k] {
        refuse("a varint index block of " + std::to_string(ends.item<int64_t>()) + " gaps where " + std::to_string(k) +
               " were expected, or one that ends inside a gap");
      });
      // Each byte's gap and place within it: gap g owns the bytes after its predecessor's last byte up to its own.
      const auto gap = (last.to(torch::kInt64).cumsum(0) - last.to(torch::kInt64)).clamp_max(int64_t(k) - 1);
      const auto endAt = markedPositions(last, k);
      const auto starts = torch::cat({torch::zeros({1}, endAt.options()), endAt.narrow(0, 0, int64_t(k) - 1) + 1});
      const auto place = torch::arange(m, bytes.options()) - starts.index_select(0, gap);
      // At most five bytes, minimal (no zero last byte after others), every gap at least 1: then ascending.
      requireOnDevice(place.gt(4)
                          .any()
                          .logical_or(place.lt(0).any())
                          .logical_or(last.logical_and(place.gt(0)).logical_and(bytes.eq(0)).any())
                          .logical_not(),
                      [] { refuse("a varint longer than five bytes or not minimal"); });
      const auto values = torch::remainder(bytes, 128) * torch::pow(128, place.clamp(0, 4));
      const auto gaps = torch::zeros({int64_t(k)}, bytes.options()).index_add_(0, gap, values);
      requireOnDevice(gaps.min().ge(1), [] { refuse("a gap of 0 between indices"); });
      return ascendingBelow(gaps.cumsum(0) - 1, n);
    }
  }
  refuse("unknown index format " + std::to_string(int(format)));
}

}  // namespace ps
