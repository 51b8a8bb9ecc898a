#include "engine/kernels/Indices.h"

#include "engine/kernels/KernelError.h"
#include "engine/kernels/Parallel.h"

#include <algorithm>
#include <vector>

// Decoding side of the index formats (Indices.h). Every byte here comes from another process: each decoder checks
// count and every index against the bytes present and against the caller's k and n before it writes.
namespace ps::kernels {

namespace {

// Little-endian 64-bit load (bit b of the word is bit b%8 of byte b/8, matching the bitmap's bit order).
inline uint64_t load64(const uint8_t* p) {
  uint64_t w = 0;
  for (int b = 0; b < 8; ++b) w |= uint64_t(p[b]) << (8 * b);
  return w;
}

size_t decodeAbsolute(const uint8_t* p, size_t len, size_t k, size_t n, uint32_t* idx) {
  if (len != 4 * k) throw KernelError("decodeIndices: absolute payload is not 4k bytes");
  uint64_t prev = 0;
  for (size_t j = 0; j < k; ++j) {
    const uint32_t v = uint32_t(p[4 * j]) | uint32_t(p[4 * j + 1]) << 8 | uint32_t(p[4 * j + 2]) << 16 |
                       uint32_t(p[4 * j + 3]) << 24;
    if (v >= n) throw KernelError("decodeIndices: index >= n");
    if (j > 0 && v <= prev) throw KernelError("decodeIndices: indices not strictly ascending");
    idx[j] = v;
    prev = v;
  }
  return len;
}

// Eight one-byte varints (no continuation bit, no zero byte) in the word w.
inline bool eightShort(uint64_t w) {
  return (w & 0x8080808080808080ull) == 0 && ((w - 0x0101010101010101ull) & ~w & 0x8080808080808080ull) == 0;
}

// One varint gap from p[pos, end), advancing pos: what is wrong with it (nullptr when nothing is). A gap must be
// minimal, at most 5 bytes, below 2^32 and not 0 (indices strictly ascend). Every decoder path reads through this.
inline const char* readGap(const uint8_t* p, size_t& pos, size_t end, uint64_t* gap) {
  uint64_t g = 0;
  for (int shift = 0;; shift += 7) {
    if (shift == 35) return "decodeIndices: varint longer than 5 bytes";
    if (pos >= end) return "decodeIndices: truncated varint";
    const uint8_t byte = p[pos++];
    g |= uint64_t(byte & 0x7fu) << shift;
    if (!(byte & 0x80u)) {
      if (byte == 0 && shift > 0) return "decodeIndices: non-minimal varint";
      break;
    }
  }
  if (g > 0xffffffffull) return "decodeIndices: varint overflows 32 bits";
  if (g == 0) return "decodeIndices: indices not strictly ascending (zero gap)";
  *gap = g;
  return nullptr;
}

size_t decodeVarintSequential(const uint8_t* p, size_t len, size_t k, size_t n, uint32_t* idx) {
  size_t pos = 0;
  int64_t prev = -1;
  for (size_t j = 0; j < k; ++j) {
    // Fast path: eight one-byte varints (no continuation bit, no zero byte) in a row.
    if (j + 8 <= k && pos + 8 <= len) {
      const uint64_t w = load64(p + pos);
      if (eightShort(w)) {
        for (int b = 0; b < 8; ++b) {
          prev += int64_t((w >> (8 * b)) & 0x7fu);
          idx[j + size_t(b)] = uint32_t(prev);  // checked below: prev only grows, the last is the largest
        }
        if (uint64_t(prev) >= n) throw KernelError("decodeIndices: index >= n");
        pos += 8, j += 7;
        continue;
      }
    }
    uint64_t gap = 0;
    if (const char* error = readGap(p, pos, len, &gap)) throw KernelError(error);
    const uint64_t v = uint64_t(prev + int64_t(gap));  // prev >= -1, gap < 2^32: no overflow
    if (v >= n) throw KernelError("decodeIndices: index >= n");
    idx[j] = uint32_t(v);
    prev = int64_t(v);
  }
  if (pos != len) throw KernelError("decodeIndices: trailing bytes after the varints");
  return len;
}

// Pass 1 of the chunked decoder over the bytes [b, e), which start at a varint boundary: how many varints, the sum
// of their gaps, and the first thing wrong with them (nullptr when nothing is). Eight one-byte varints cost one
// word test and a byte sum.
struct VarintRun {
  size_t count = 0;
  uint64_t sum = 0;
  const char* error = nullptr;
};

VarintRun scanVarintRun(const uint8_t* p, size_t b, size_t e) {
  VarintRun r;
  size_t pos = b;
  while (pos < e) {
    if (pos + 8 <= e) {
      const uint64_t w = load64(p + pos);
      if (eightShort(w)) {
        const uint64_t pairs = (w & 0x00ff00ff00ff00ffull) + ((w >> 8) & 0x00ff00ff00ff00ffull);
        r.sum += (pairs * 0x0001000100010001ull) >> 48;  // four 16-bit lanes of at most 254 each
        r.count += 8, pos += 8;
        continue;
      }
    }
    uint64_t gap = 0;
    if ((r.error = readGap(p, pos, e, &gap))) return r;
    r.sum += gap, ++r.count;
  }
  return r;
}

// Pass 2: the `count` indices of bytes [b, e) (validated by pass 1), the first one gap after `prev`.
void writeVarintRun(const uint8_t* p, size_t b, size_t e, int64_t prev, uint32_t* idx, size_t count) {
  size_t pos = b, j = 0;
  while (j < count && pos < e) {
    if (j + 8 <= count && pos + 8 <= e) {
      const uint64_t w = load64(p + pos);
      if (eightShort(w)) {
        for (int i = 0; i < 8; ++i) idx[j + size_t(i)] = uint32_t(prev += int64_t((w >> (8 * i)) & 0x7fu));
        j += 8, pos += 8;
        continue;
      }
    }
    uint64_t gap = 0;
    readGap(p, pos, e, &gap);  // valid: pass 1 read the same bytes
    idx[j++] = uint32_t(prev += int64_t(gap));
  }
}

// Large payloads decode on every thread in two passes: the bytes are cut at varint boundaries (a varint starts
// after a byte without the continuation bit), pass 1 counts and sums each cut's gaps and validates them, and pass
// 2 writes each cut's indices from the running sum before it. It accepts exactly what the one-pass decoder
// accepts: every varint valid, k of them using every byte, the last index below n (gaps are >= 1, so the others are
// too and the list is strictly ascending).
size_t decodeVarint(const uint8_t* p, size_t len, size_t k, size_t n, uint32_t* idx) {
  const int parts = threadsForWork(k, kIndicesPerThread);
  if (parts == 1) return decodeVarintSequential(p, len, k, n, idx);
  const size_t P = static_cast<size_t>(parts);
  std::vector<size_t> cut(P + 1, len);
  cut[0] = 0;
  for (size_t t = 1; t < P; ++t) {
    size_t c = std::max(len * t / P, cut[t - 1]);
    while (c < len && c > 0 && (p[c - 1] & 0x80u)) ++c;
    cut[t] = c;
  }
  std::vector<VarintRun> runs(P);
#pragma omp parallel for num_threads(parts) schedule(static, 1)
  for (int t = 0; t < parts; ++t) runs[size_t(t)] = scanVarintRun(p, cut[size_t(t)], cut[size_t(t) + 1]);
  size_t count = 0;
  uint64_t sum = 0;
  for (const VarintRun& r : runs) {
    if (r.error) throw KernelError(r.error);
    count += r.count, sum += r.sum;
  }
  if (count < k) throw KernelError("decodeIndices: truncated varint");
  if (count > k) throw KernelError("decodeIndices: trailing bytes after the varints");
  if (sum == 0 || sum - 1 >= n) throw KernelError("decodeIndices: index >= n");  // the last index is sum - 1
  std::vector<size_t> first(P, 0);
  std::vector<int64_t> prev(P, -1);
  for (size_t t = 1; t < P; ++t) {
    first[t] = first[t - 1] + runs[t - 1].count;
    prev[t] = prev[t - 1] + int64_t(runs[t - 1].sum);
  }
#pragma omp parallel for num_threads(parts) schedule(static, 1)
  for (int t = 0; t < parts; ++t) {
    const size_t u = size_t(t);
    writeVarintRun(p, cut[u], cut[u + 1], prev[u], idx + first[u], runs[u].count);
  }
  return len;
}

size_t decodeBitmap(const uint8_t* p, size_t len, size_t k, size_t n, uint32_t* idx) {
  if (len != (n + 7) / 8) throw KernelError("decodeIndices: bitmap payload is not n/8 bytes (rounded up)");
  if ((n & 7) && (p[len - 1] >> (n & 7))) throw KernelError("decodeIndices: bitmap padding bits set");
  size_t count = 0, i = 0;
  for (; i + 8 <= len; i += 8) count += size_t(__builtin_popcountll(load64(p + i)));
  for (; i < len; ++i) count += size_t(__builtin_popcount(p[i]));
  if (count != k) throw KernelError("decodeIndices: bitmap popcount != k");
  setBitPositions(p, n, idx);  // popcount == k, and the padding bits are 0
  return len;
}

}  // namespace

size_t decodeIndices(const uint8_t* data, size_t size, size_t k, size_t n, uint32_t* idx) {
  require(n <= kMaxElements, "decodeIndices: n exceeds 2^32 - 1");
  require(k <= n, "decodeIndices: k > n");
  require(k == 0 || idx, "decodeIndices: null output");
  if (size == 0 || !data) throw KernelError("decodeIndices: no format byte");
  const uint8_t* p = data + 1;
  const size_t len = size - 1;
  switch (data[0]) {
    case uint8_t(IndexFormat::Absolute32): return 1 + decodeAbsolute(p, len, k, n, idx);
    case uint8_t(IndexFormat::DeltaVarint): return 1 + decodeVarint(p, len, k, n, idx);
    case uint8_t(IndexFormat::Bitmap): return 1 + decodeBitmap(p, len, k, n, idx);
    default: throw KernelError("decodeIndices: unknown format byte");
  }
}

size_t setBitPositions(const uint8_t* bits, size_t n, uint32_t* out) {
  size_t j = 0, i = 0;
  for (; i + 64 <= n; i += 64) {
    uint64_t w = load64(bits + i / 8);
    while (w) {
      out[j++] = uint32_t(i + size_t(__builtin_ctzll(w)));
      w &= w - 1;
    }
  }
  for (; i < n; ++i)
    if (bits[i >> 3] >> (i & 7) & 1u) out[j++] = uint32_t(i);
  return j;
}

}  // namespace ps::kernels
