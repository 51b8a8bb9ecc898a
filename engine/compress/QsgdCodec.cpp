#include "engine/compress/QsgdCodec.h"

#include "engine/compress/Codec.h"
#include "engine/kernels/BitPack.h"
#include "engine/kernels/Qsgd.h"
#include "engine/kernels/Random.h"

#include <torch/torch.h>

#include <cmath>
#include <cstring>
#include <vector>

namespace ps {
namespace {

// Body: u8 s, u32 bucket, a float32 norm per bucket, then the packed signed level codes.
class QsgdCodec final : public Codec {
 public:
  QsgdCodec(const CompressionOptions& o, const CodecContext& c);
  std::string describe() const override { return "qsgd s=" + std::to_string(levels_); }
  double omega(c10::IntArrayRef shape) const override;

 private:
  void encodeBody(const torch::Tensor& x, Payload& p, ByteWriter& w) override;
  torch::Tensor decodeBody(const PayloadHeader& h, ByteReader& r, const torch::Device& device) override;
  int levels_;
  int64_t bucket_;
  uint64_t stream_, messages_ = 0;
  std::vector<float> norms_;  // reused between messages
};

QsgdCodec::QsgdCodec(const CompressionOptions& o, const CodecContext& c)
    : Codec(payloadOf<QsgdEntry>()), levels_(o.levels), bucket_(o.bucket), stream_(c.stream()) {}

double QsgdCodec::omega(c10::IntArrayRef shape) const {
  // The supremum of E|Q(x) - x|^2 / |x|^2 over a bucket of d values. With u = s|x_i| / |x| (so sum u² = s²) the
  // variance is |x|²/s² sum h(u_i), h(u) = frac(u)(1 - frac(u)); h's concave envelope in u² is sqrt(v) - v up to
  // v = 1/4 and 1/4 beyond, so by Jensen the sum is at most d times it at u² = s²/d. For s <= sqrt(d)/2 every
  // u_i = s / sqrt(d) attains it (sqrt(d)/s - 1, tighter than Alistarh et al.'s min(d/s², sqrt(d)/s)); above, d/(4s²).
  const double d = double(std::min<int64_t>(c10::multiply_integers(shape), bucket_)), s = double(levels_);
  return s * s <= d / 4 ? std::sqrt(d) / s - 1 : d / (4 * s * s);
}

void QsgdCodec::encodeBody(const torch::Tensor& x, Payload&, ByteWriter& w) {
  const uint64_t n = uint64_t(x.numel()), bucket = uint64_t(std::max<int64_t>(1, bucket_));
  const int bits = kernels::qsgdBits(levels_);
  w.put<uint8_t>(uint8_t(levels_));
  w.put<uint32_t>(uint32_t(bucket));
  const uint64_t buckets = (n + bucket - 1) / bucket;
  const uint64_t seed = kernels::splitmix64(stream_ + messages_++);
  norms_.resize(buckets);
  uint8_t* block = w.grow(buckets * 4 + kernels::packedBytes(n, bits));  // norms, then the packed codes
  kernels::qsgdEncode(x.data_ptr<float>(), n, bucket, levels_, seed, norms_.data(), block + buckets * 4);
  if (buckets) std::memcpy(block, norms_.data(), buckets * 4);  // the payload's bytes carry no float alignment
}

torch::Tensor QsgdCodec::decodeBody(const PayloadHeader& h, ByteReader& r, const torch::Device&) {
  const int s = r.get<uint8_t>("levels");
  const uint64_t bucket = r.get<uint32_t>("bucket");
  const uint64_t n = uint64_t(h.numel());
  if (s < 1 || s > 127 || bucket == 0) throw PayloadError("QSGD levels or bucket out of range");
  const int bits = kernels::qsgdBits(s);
  const uint64_t buckets = (n + bucket - 1) / bucket;
  if (buckets > r.remaining() / 4) throw PayloadError("more QSGD buckets than bytes");
  norms_.resize(buckets);
  std::memcpy(norms_.data(), r.take(buckets * 4, "norms"), buckets * 4);
  for (float norm : norms_)
    if (!std::isfinite(norm) || norm < 0) throw PayloadError("a QSGD norm is not a finite non-negative number");
  const size_t packed = kernels::packedBytes(n, bits);
  const uint8_t* codes = r.take(packed, "codes");
  auto out = outputTensor(h.shape);
  kernels::qsgdDecode(codes, packed, n, bucket, s, norms_.data(), out.data_ptr<float>());
  return out;
}

}  // namespace

std::unique_ptr<Codec> QsgdEntry::make(const CompressionOptions& o, const CodecContext& c) {
  return std::make_unique<QsgdCodec>(o, c);
}

}  // namespace ps
