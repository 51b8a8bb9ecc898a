#include "engine/pipeline/Link.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>

namespace ps {
namespace {
using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }
}  // namespace

Link::Link(int boundary, LinkModel model, std::unique_ptr<Codec> forward, std::unique_ptr<Codec> backward)
    : boundary_(boundary), model_(model) {
  sides_[0].codec = std::move(forward);
  sides_[1].codec = std::move(backward);
}

double Link::send(Direction d, const torch::Tensor& x, double clock) {
  Side& s = side(d);
  const auto t0 = Clock::now();
  Message m;
  m.payload = s.codec->encode(x);
  const double encode = since(t0);
  if (!s.codec->lossless()) {
    // The error of what the receiver will see, measured on the sender's copy of the payload.
    auto decoded = s.codec->decode(m.payload, x.device());
    s.err_num += (decoded - x).pow(2).sum().item<double>();
    s.err_den += x.pow(2).sum().item<double>();
  }
  const uint64_t bytes = m.payload.size();
  s.raw += uint64_t(x.numel()) * sizeof(float);
  s.wire += bytes;
  s.elements += uint64_t(x.numel());
  s.nonzeros += uint64_t(x.numel());
  s.messages += 1;
  s.encode_s += encode;
  // Emulated network: the link serialises transfers; latency overlaps with the next transfer.
  clock += encode;
  const double transfer = model_.transferSeconds(bytes);
  const double start = std::max(clock, s.busy_until);
  s.busy_until = start + transfer;
  m.emulated_arrival = s.busy_until + model_.latencySeconds();
  s.modelled_s += model_.messageSeconds(bytes);
  if (model_.throttled) {
    const auto now = Clock::now();
    const auto tx = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(transfer));
    const auto lat = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(model_.latencySeconds()));
    s.wall_busy_until = std::max(now, s.wall_busy_until) + tx;
    m.deliver_at = s.wall_busy_until + lat;
  }
  s.channel.push(std::move(m));
  return clock;
}

torch::Tensor Link::receive(Direction d, const torch::Device& device, double& clock) {
  Side& s = side(d);
  Message m = s.channel.pop();
  const auto t0 = Clock::now();
  auto x = s.codec->decode(m.payload, device);
  const double decode = since(t0);
  s.decode_s += decode;
  clock = std::max(clock, m.emulated_arrival) + decode;
  return x;
}

torch::Tensor Link::roundTrip(Direction d, const torch::Tensor& x) {
  Side& s = side(d);
  if (s.codec->lossless()) return x;
  return s.codec->decode(s.codec->encode(x), x.device());
}

LinkTraffic Link::takeTraffic(Direction d) {
  Side& s = side(d);
  LinkTraffic t;
  t.boundary = boundary_;
  t.direction = d;
  t.raw_bytes = s.raw;
  t.wire_bytes = s.wire;
  t.elements = s.elements;
  t.nonzeros = s.nonzeros;
  t.messages = s.messages;
  t.encode_s = s.encode_s;
  t.decode_s = s.decode_s;
  t.modelled_s = s.modelled_s;
  t.rel_error = s.err_den > 0 ? std::sqrt(s.err_num / s.err_den) : 0.0;
  t.rel_error_compensated = t.rel_error;
  t.method = s.codec->describe();
  s.raw = s.wire = s.elements = s.nonzeros = 0;
  s.messages = 0;
  s.encode_s = s.decode_s = s.modelled_s = s.err_num = s.err_den = 0;
  s.busy_until = 0;  // every step's emulated clock starts at 0
  return t;
}

void Link::setCodec(Direction d, std::unique_ptr<Codec> codec) { side(d).codec = std::move(codec); }

bool Link::lossless() const { return sides_[0].codec->lossless() && sides_[1].codec->lossless(); }

void Link::abort() {
  for (auto& s : sides_) s.channel.abort();
}

void Link::reset() {
  for (auto& s : sides_) s.channel.reset();
}

}  // namespace ps
