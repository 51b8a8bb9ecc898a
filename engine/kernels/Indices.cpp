#include "engine/kernels/Indices.h"

#include "engine/kernels/KernelError.h"
#include "engine/kernels/Parallel.h"
#include "engine/kernels/Simd.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

// Encoding side of the index formats (Indices.h): sizing, choosing and writing a list, and scattering a decoded
// list back into a dense buffer. The decoders, which read untrusted bytes, are in IndexDecode.cpp.
namespace ps::kernels {

namespace {

// Branch-free, so loops over it vectorise.
inline uint32_t varintBytes(uint32_t v) {
  return 1 + uint32_t(v >= (1u << 7)) + uint32_t(v >= (1u << 14)) + uint32_t(v >= (1u << 21)) +
         uint32_t(v >= (1u << 28));
}

void checkArgs(const uint32_t* idx, size_t k, size_t n) {
  require(n <= kMaxElements, "encodeIndices: n exceeds 2^32 - 1");
  require(k <= n, "encodeIndices: k > n");
  require(k == 0 || idx, "encodeIndices: null indices");
}

// The DeltaVarint sizes of the gaps in [b, e) (the first gap from idx[b - 1], or from -1 at b = 0), with flags for
// every violation. Branch-free over the indices, so the compiler vectorises it (8 lanes in the AVX2 clone); the
// caller raises the error once, after the pass. A plain aggregate, zeroed by value-initialisation: clang 19 emits no
// definition of an implicit constructor that only a target_clones function calls, and the link fails.
struct VarintScan {
  size_t bytes;
  uint32_t outOfRange, descending;
};

PS_SIMD_CLONES VarintScan scanVarints(const uint32_t* idx, size_t b, size_t e, uint32_t N) {
  VarintScan s{};
  if (b == e) return s;
  size_t j = b;
  if (b == 0) {
    s.outOfRange = idx[0] >= N;
    s.bytes = varintBytes(idx[0] + 1);  // the first gap is from -1; idx[0] + 1 wraps only when idx[0] >= n
    j = 1;
  }
  // Blocks of 4096 with 32-bit counters (at most 5 bytes per gap) keep the inner loop in one vector width.
  for (; j < e; j += 4096) {
    const size_t f = std::min(e, j + 4096);
    uint32_t blockBytes = 0, over = 0, down = 0;
    for (size_t i = j; i < f; ++i) {
      const uint32_t v = idx[i], u = idx[i - 1];
      over |= uint32_t(v >= N);
      down |= uint32_t(v <= u);
      blockBytes += varintBytes(v - u);
    }
    s.bytes += blockBytes;
    s.outOfRange |= over, s.descending |= down;
  }
  return s;
}

// Validates the input and returns the DeltaVarint payload size; with `chunkBytes`, also each of `parts` chunks'
// share (chunkOf(k, parts, t)), for a parallel write.
size_t checkedVarintSize(const uint32_t* idx, size_t k, size_t n, int parts = 1, size_t* chunkBytes = nullptr) {
  checkArgs(idx, k, n);
  if (k == 0) return 0;
  const uint32_t N = uint32_t(n);  // n <= 2^32 - 1 (checkArgs)
  std::vector<VarintScan> scans(static_cast<size_t>(parts));
  if (parts == 1) {
    scans[0] = scanVarints(idx, 0, k, N);
  } else {
#pragma omp parallel for num_threads(parts) schedule(static, 1)
    for (int t = 0; t < parts; ++t) {
      const Range r = chunkOf(k, parts, t);
      scans[size_t(t)] = scanVarints(idx, r.begin, r.end, N);
    }
  }
  size_t bytes = 0;
  uint32_t outOfRange = 0, descending = 0;
  for (int t = 0; t < parts; ++t) {
    const VarintScan& s = scans[size_t(t)];
    bytes += s.bytes, outOfRange |= s.outOfRange, descending |= s.descending;
    if (chunkBytes) chunkBytes[t] = s.bytes;
  }
  if (outOfRange) throw KernelError("encodeIndices: index >= n");
  if (descending) throw KernelError("encodeIndices: indices not strictly ascending");
  return bytes;
}

// The varints of the gaps in [b, e) (the first from idx[b - 1], or from -1 at b = 0), written from p.
PS_SIMD_CLONES void writeVarints(const uint32_t* idx, size_t b, size_t e, uint8_t* p) {
  uint32_t prev = b == 0 ? uint32_t(-1) : idx[b - 1];
  size_t j = b;
  while (j < e) {
    // Dense selections have gaps below 128 almost everywhere: eight one-byte varints at a time.
    if (j + 8 <= e) {
      uint32_t gap[8], any = 0;
      for (int i = 0; i < 8; ++i) {
        gap[i] = idx[j + size_t(i)] - (i ? idx[j + size_t(i) - 1] : prev);
        any |= gap[i];
      }
      if (any < 0x80u) {
        for (int i = 0; i < 8; ++i) p[i] = uint8_t(gap[i]);
        p += 8, j += 8, prev = idx[j - 1];
        continue;
      }
    }
    uint32_t gap = idx[j] - prev;  // mod 2^32: idx[0] + 1 for the first
    prev = idx[j++];
    while (gap >= 0x80u) {
      *p++ = uint8_t(gap | 0x80u);
      gap >>= 7;
    }
    *p++ = uint8_t(gap);
  }
}

size_t payloadSize(IndexFormat f, size_t k, size_t n, size_t varint) {
  switch (f) {
    case IndexFormat::Absolute32: return 4 * k;
    case IndexFormat::DeltaVarint: return varint;
    case IndexFormat::Bitmap: return (n + 7) / 8;
  }
  throw KernelError("encodeIndices: unknown format");
}

void writePayload(IndexFormat f, const uint32_t* idx, size_t k, size_t n, uint8_t* p) {
  switch (f) {
    case IndexFormat::Absolute32:
      for (size_t j = 0; j < k; ++j) {
        const uint32_t v = idx[j];
        p[4 * j] = uint8_t(v), p[4 * j + 1] = uint8_t(v >> 8), p[4 * j + 2] = uint8_t(v >> 16),
                  p[4 * j + 3] = uint8_t(v >> 24);
      }
      return;
    case IndexFormat::DeltaVarint:
      writeVarints(idx, 0, k, p);
      return;
    case IndexFormat::Bitmap:
      std::memset(p, 0, (n + 7) / 8);
      for (size_t j = 0; j < k; ++j) p[idx[j] >> 3] |= uint8_t(1u << (idx[j] & 7));
      return;
  }
}

}  // namespace

IndexFormat cheapest(size_t k, size_t n, size_t varint, size_t* payload) {
  const size_t abs = 4 * k, bitmap = (n + 7) / 8;
  IndexFormat f = IndexFormat::Absolute32;
  size_t best = abs;
  if (bitmap < best) f = IndexFormat::Bitmap, best = bitmap;
  if (varint < best) f = IndexFormat::DeltaVarint, best = varint;
  *payload = best;
  return f;
}

size_t encodedIndexBytes(const uint32_t* idx, size_t k, size_t n, IndexFormat* best) {
  size_t payload;
  const IndexFormat f = cheapest(k, n, checkedVarintSize(idx, k, n), &payload);
  if (best) *best = f;
  return 1 + payload;
}

size_t encodeIndicesAs(IndexFormat format, const uint32_t* idx, size_t k, size_t n, std::vector<uint8_t>& out) {
  const size_t varint = checkedVarintSize(idx, k, n);
  const size_t bytes = 1 + payloadSize(format, k, n, varint);
  const size_t at = out.size();
  out.resize(at + bytes);
  out[at] = uint8_t(format);
  writePayload(format, idx, k, n, out.data() + at + 1);
  return bytes;
}

size_t encodeIndices(const uint32_t* idx, size_t k, size_t n, std::vector<uint8_t>& out) {
  // Large lists are sized and written in chunks on several threads: each chunk's varints start where the sizes
  // before it end, so the bytes are those of the one-thread pass.
  const int parts = threadsForWork(k, kIndicesPerThread);
  std::vector<size_t> chunkBytes(static_cast<size_t>(parts));
  size_t payload;
  const IndexFormat f = cheapest(k, n, checkedVarintSize(idx, k, n, parts, chunkBytes.data()), &payload);
  const size_t at = out.size();
  out.resize(at + 1 + payload);
  out[at] = uint8_t(f);
  uint8_t* p = out.data() + at + 1;
  if (f != IndexFormat::DeltaVarint || parts == 1) {
    writePayload(f, idx, k, n, p);
    return 1 + payload;
  }
  std::vector<size_t> offset(static_cast<size_t>(parts), 0);
  for (int t = 1; t < parts; ++t) offset[size_t(t)] = offset[size_t(t) - 1] + chunkBytes[size_t(t) - 1];
#pragma omp parallel for num_threads(parts) schedule(static, 1)
  for (int t = 0; t < parts; ++t) {
    const Range r = chunkOf(k, parts, t);
    writeVarints(idx, r.begin, r.end, p + offset[size_t(t)]);
  }
  return 1 + payload;
}

void scatterSorted(const uint32_t* idx, const float* values, size_t k, float* out, size_t n, int threads) {
  if (k > 0 && (!idx || !values)) throw KernelError("scatterSorted: null input");
  if (n > 0 && !out) throw KernelError("scatterSorted: null output");
  // Each thread owns a chunk of the output and the slice of indices that falls in it, and zero-fills the chunk a
  // cache-sized block at a time, dropping the block's values in while the lines are hot. The indices are
  // validated on the way: every slice strictly ascending inside its chunk and the slices tiling [0, k) exactly
  // means the whole list is strictly ascending and below n. A bad index is never written outside its chunk.
  constexpr size_t kBlock = 4096;  // floats: 16 KiB
  const int nt = resolveThreads(threads, n);
  const size_t parts = static_cast<size_t>(nt);
  std::vector<size_t> first(parts), last(parts);
  std::vector<uint8_t> ok(parts, 1);
#pragma omp parallel for num_threads(nt) schedule(static, 1)
  for (int t = 0; t < nt; ++t) {
    const Range r = chunkOf(n, nt, t, 16);  // 64-byte aligned chunk edges: no cache line shared by two threads
    size_t j = size_t(std::lower_bound(idx, idx + k, uint32_t(r.begin)) - idx);
    first[size_t(t)] = j;
    int64_t prev = int64_t(r.begin) - 1;
    for (size_t b = r.begin; b < r.end; b += kBlock) {
      const size_t e = std::min(b + kBlock, r.end);
      std::memset(out + b, 0, (e - b) * sizeof(float));
      for (; j < k && idx[j] < e; ++j) {
        if (int64_t(idx[j]) <= prev) {
          ok[size_t(t)] = 0;
          break;
        }
        prev = idx[j];
        out[idx[j]] = values[j];
      }
      if (!ok[size_t(t)]) break;
    }
    last[size_t(t)] = j;
  }
  bool valid = first[0] == 0 && last[size_t(nt) - 1] == k;  // nt >= 1
  for (int t = 0; t < nt && valid; ++t) valid = ok[size_t(t)] && (t == 0 || first[size_t(t)] == last[size_t(t) - 1]);
  if (!valid) throw KernelError("scatterSorted: indices must be strictly ascending and below " + std::to_string(n));
}

}  // namespace ps::kernels
