#include "engine/kernels/Qsgd.h"

#include "engine/kernels/BitPack.h"
#include "engine/kernels/BlockSum.h"
#include "engine/kernels/GroupStats.h"
#include "engine/kernels/KernelError.h"
#include "engine/kernels/Parallel.h"
#include "engine/kernels/Random.h"
#include "engine/kernels/Simd.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <string>

namespace ps::kernels {

namespace {

constexpr size_t kTile = 1024;  // uniforms drawn per tile, on the stack

PS_SIMD_CLONES double squareSum(const float* x, size_t b, size_t e) {
  return blockSum(x, b, e, [](float v) { return double(v) * double(v); });
}

// Codes of [r.begin, r.end) (r.begin a multiple of 8), tile by tile and bucket segment by segment, each tile
// packed once its codes are in.
PS_SIMD_CLONES void encodeRange(const float* x, size_t n, size_t bucket, int levels, int bits, uint64_t hseed,
                                const float* norms, Range r, uint8_t* packed) {
  uint32_t u[kTile];
  uint8_t buf[kTile];
  const float s = float(levels);
  for (size_t tile = r.begin; tile < r.end; tile += kTile) {
    const size_t te = std::min(tile + kTile, r.end);
    uniforms24(tile, te, hseed, u);
    for (size_t i = tile; i < te;) {
      const size_t g = i / bucket, e = std::min(te, groupEnd(n, bucket, g));
      const double norm = norms[g];
      const float unit = norm > 0 && std::isfinite(norm) ? float(double(levels) / norm) : 0.f;
      for (size_t j = i; j < e; ++j) {
        float l = std::fabs(x[j]) * unit;
        l = l > 0.f ? l : 0.f;  // NaN -> 0
        l = l < s ? l : s;      // |x| <= norm in exact arithmetic; rounding may not agree
        const int32_t f = int32_t(l);
        const int32_t threshold = int32_t((l - float(f)) * 16777216.f);  // fraction in units of 2^-24, exact
        const int32_t xi = f + int32_t(int32_t(u[j - tile]) < threshold);
        buf[j - tile] = uint8_t(levels + (x[j] < 0.f ? -xi : xi));
      }
      i = e;
    }
    packCodes(buf, te - tile, bits, packed + tile / 8 * size_t(bits));
  }
}

// Values of [r.begin, r.end) (r.begin a multiple of 8); returns 1 when a code is above 2s.
PS_SIMD_CLONES uint32_t decodeRange(const uint8_t* packed, size_t n, size_t bucket, int levels, int bits,
                                    const float* norms, Range r, float* out) {
  uint8_t buf[kTile];
  uint32_t bad = 0;
  const float s = float(levels);
  const uint32_t top = uint32_t(2 * levels);
  for (size_t tile = r.begin; tile < r.end; tile += kTile) {
    const size_t te = std::min(tile + kTile, r.end);
    unpackCodes(packed + tile / 8 * size_t(bits), te - tile, bits, buf);
    for (size_t i = tile; i < te;) {
      const size_t g = i / bucket, e = std::min(te, groupEnd(n, bucket, g));
      const float unit = norms[g] / s;  // norm * (level / s) without the product norm * level leaving float's range
      for (size_t j = i; j < e; ++j) {
        const uint8_t c = buf[j - tile];
        bad |= uint32_t(c > top);
        out[j] = unit * float(int32_t(c) - levels);
      }
      i = e;
    }
  }
  return bad;
}

void checkArgs(size_t bucket, int levels, const char* who) {
  if (bucket == 0) throw KernelError(std::string(who) + ": bucket must be >= 1");
  if (levels < 1 || levels > 127) throw KernelError(std::string(who) + ": levels must be in 1..127");
}

}  // namespace

int qsgdBits(int levels) {
  checkArgs(1, levels, "qsgdBits");
  int bits = 1;
  while ((1 << bits) < 2 * levels + 1) ++bits;
  return bits;
}

void qsgdEncode(const float* x, size_t n, size_t bucket, int levels, uint64_t seed, float* norms, uint8_t* packed,
                int threads) {
  checkArgs(bucket, levels, "qsgdEncode");
  if (n == 0) return;
  require(x && norms && packed, "qsgdEncode: null pointer");
  const int bits = qsgdBits(levels);
  const size_t buckets = groupCount(n, bucket);
  const int nt = resolveThreads(threads, n);
#pragma omp parallel for num_threads(nt) schedule(static)
  for (int64_t g = 0; g < int64_t(buckets); ++g)
    // A norm beyond float's range (finite values near FLT_MAX) saturates: the payload stays finite, those
    // elements clamp to the top level.
    norms[g] = float(std::min(std::sqrt(squareSum(x, size_t(g) * bucket, groupEnd(n, bucket, size_t(g)))), double(FLT_MAX)));
  const uint64_t hseed = splitmix64(seed);
#pragma omp parallel for num_threads(nt) schedule(static, 1)
  for (int t = 0; t < nt; ++t) {
    const Range r = chunkOf(n, nt, t, 8);  // whole bytes of codes; pairs share a uniform draw
    if (r.size()) encodeRange(x, n, bucket, levels, bits, hseed, norms, r, packed);
  }
}

void qsgdDecode(const uint8_t* packed, size_t inBytes, size_t n, size_t bucket, int levels, const float* norms,
                float* out, int threads) {
  checkArgs(bucket, levels, "qsgdDecode");
  if (n == 0) return;
  require(packed && norms && out, "qsgdDecode: null pointer");
  const int bits = qsgdBits(levels);
  checkPackedCodes(packed, inBytes, n, bits, "qsgdDecode");
  const int nt = resolveThreads(threads, n);
  uint32_t bad = 0;
#pragma omp parallel for num_threads(nt) schedule(static, 1) reduction(| : bad)
  for (int t = 0; t < nt; ++t)
    bad |= decodeRange(packed, n, bucket, levels, bits, norms, chunkOf(n, nt, t, 8), out);
  if (bad) throw KernelError("qsgdDecode: a code is above 2s");
}

}  // namespace ps::kernels
