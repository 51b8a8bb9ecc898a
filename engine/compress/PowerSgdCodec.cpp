#include "engine/compress/PowerSgdCodec.h"

#include "engine/compress/Codec.h"
#include "engine/compress/LowRank.h"
#include "engine/kernels/GroupStats.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace ps {
namespace {

// Body: u8 r, then either (r = 0) the float32 values as they are, or the factors P (n x r) and Q (m x r),
// row-major float32, so that the tensor viewed as n x m is P Q^T.
class PowerSgdCodec final : public Codec {
 public:
  PowerSgdCodec(const CompressionOptions& o, const CodecContext& c)
      : Codec(payloadOf<PowerSgdEntry>()),
        rank_(o.value("rank").get<int64_t>()),
        minSize_(o.value("min_size").get<int64_t>()),
        stream_(c.stream()) {
    if (rank_ < 1 || rank_ > kMaxRank) throw ConfigError("powersgd rank must be 1..64, got " + std::to_string(rank_));
  }
  std::string describe() const override { return "powersgd rank " + std::to_string(rank_); }

 private:
  static constexpr int64_t kMaxRank = 64;

  void encodeBody(const torch::Tensor& x, Payload& p, ByteWriter& w) override {
    const int64_t numel = x.numel(), n = rows(x.sizes().vec()), m = n ? numel / n : 0;
    const int64_t r = std::min({rank_, n, m});
    if (numel < minSize_ || !worthIt(r, n, m)) {
      w.put<uint8_t>(0);
      std::memcpy(w.grow(size_t(numel) * 4), x.data_ptr<float>(), size_t(numel) * 4);
      return;
    }
    w.put<uint8_t>(uint8_t(r));
    const torch::Tensor M = x.view({n, m});
    torch::Tensor P = torch::mm(M, warmStart(m, r));  // one power-iteration step from the last message's Q
    lowrank::orthonormalizeColumns(P);
    q_ = torch::mm(M.t(), P).contiguous();  // sent, and the next message's start
    std::memcpy(w.grow(size_t(n * r) * 4), P.data_ptr<float>(), size_t(n * r) * 4);
    std::memcpy(w.grow(size_t(m * r) * 4), q_.data_ptr<float>(), size_t(m * r) * 4);
    p.values = uint64_t(r * (n + m));
    if (!kernels::allFinite(q_.data_ptr<float>(), size_t(m * r))) q_ = torch::Tensor();  // start afresh next time
  }

  torch::Tensor decodeBody(const PayloadHeader& h, ByteReader& in, const torch::Device&) override {
    const int64_t numel = h.numel(), n = rows(h.shape), m = n ? numel / n : 0;
    const int64_t r = in.get<uint8_t>("rank");
    if (r == 0) {
      const uint8_t* values = in.take(size_t(numel) * 4, "values");
      auto out = outputTensor(h.shape);
      std::memcpy(out.data_ptr<float>(), values, size_t(numel) * 4);
      return out;
    }
    if (r > kMaxRank || r > std::min(n, m) || !worthIt(r, n, m))
      throw PayloadError("rank " + std::to_string(r) + " cannot come from a PowerSGD encoder for a " +
                         std::to_string(n) + " x " + std::to_string(m) + " matrix");
    // Both factors are checked against the bytes present before the output is allocated.
    const uint8_t* pBytes = in.take(size_t(n * r) * 4, "factor P");
    const uint8_t* qBytes = in.take(size_t(m * r) * 4, "factor Q");
    auto P = torch::empty({n, r}), Q = torch::empty({m, r});
    std::memcpy(P.data_ptr<float>(), pBytes, size_t(n * r) * 4);
    std::memcpy(Q.data_ptr<float>(), qBytes, size_t(m * r) * 4);
    if (!kernels::allFinite(P.data_ptr<float>(), size_t(n * r)) || !kernels::allFinite(Q.data_ptr<float>(), size_t(m * r)))
      throw PayloadError("a PowerSGD factor holds a value that is not finite");
    auto out = outputTensor(h.shape);
    auto matrix = out.view({n, m});
    torch::mm_out(matrix, P, Q.t());
    return out;
  }

  // Rows of the matrix view: the first dimension (a batch, or a layer's outputs); a scalar is 1 x 1.
  static int64_t rows(const std::vector<int64_t>& shape) { return shape.empty() ? 1 : shape[0]; }
  // The factors must be smaller than the matrix.
  static bool worthIt(int64_t r, int64_t n, int64_t m) { return r >= 1 && r * (n + m) < n * m; }

  // Q of the last message when its shape fits, else standard normal values from this codec's seeded stream; a
  // column of Q that is zero (nothing of M lay along it) is drawn afresh, or P would keep it at zero for good.
  const torch::Tensor& warmStart(int64_t m, int64_t r) {
    const bool fits = q_.defined() && q_.size(0) == m && q_.size(1) == r;
    if (!fits) q_ = torch::zeros({m, r});
    const auto peaks = q_.abs().amax(0);
    for (int64_t c = 0; c < r; ++c)
      if (peaks[c].item<float>() == 0) drawColumn(c);
    return q_;
  }

  void drawColumn(int64_t c) {  // the same draws on every machine
    lowrank::drawNormalColumn(q_, c, stream_ ^ (0x5eed0000ULL + draws_++));
  }

  int64_t rank_, minSize_;
  uint64_t stream_, draws_ = 0;
  torch::Tensor q_;  // [m, r]
};

}  // namespace

std::unique_ptr<Codec> PowerSgdEntry::make(const CompressionOptions& options, const CodecContext& context) {
  return std::make_unique<PowerSgdCodec>(options, context);
}

}  // namespace ps
