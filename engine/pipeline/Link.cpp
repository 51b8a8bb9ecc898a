#include "engine/pipeline/Link.h"

#include "engine/core/Metrics.h"

#include "engine/tensors/Histogram.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>

namespace ps {
namespace {
using Clock = TraceClock;
}  // namespace

Link::Link(int boundary, LinkModel model, const Settings& settings)
    : boundary_(boundary), model_(model), settings_(settings) {
  build(Direction::Forward, settings.forward);
  build(Direction::Backward, settings.backward);
  for (auto& s : sides_) s.plain = makeCodec("none");
}

CodecContext Link::contextOf(Direction d) const {
  CodecContext c = settings_.context;
  c.boundary = boundary_;
  c.direction = int(d);
  return c;
}

void Link::build(Direction d, const CompressionOptions& options) {
  Side& s = side(d);
  const CodecContext c = contextOf(d);
  s.options = options;
  s.sender = std::make_unique<Compensator>(options, c, settings_.aqsgd);
  s.receiver = std::make_unique<Compensator>(options, c, settings_.aqsgd);
  s.sender->setResidence(s.hostOnly ? Codec::Residence::Host : Codec::Residence::Device);
  s.report.deferred = settings_.deferReads;
  s.adaptive = makeAdaptiveSender(options, c);
  if (s.adaptive) s.options.k = s.adaptive->sentK();
  buildEval(d);
}

void Link::buildEval(Direction d) {
  CodecContext c = contextOf(d);
  c.seed ^= 0xE7A1ULL;  // evaluation draws its own random numbers
  side(d).eval = makeCodec(side(d).options, c);
}

bool Link::setOptions(Direction d, const CompressionOptions& options) {
  Side& s = side(d);
  if (options.keepsCompensationOf(s.options)) {
    s.sender->retarget(options);
    s.receiver->retarget(options);
    s.options = options;
    buildEval(d);
    return false;
  }
  const bool stateful = s.options.holdsState();
  build(d, options);
  return stateful;
}

void Link::connectRemote(Direction d, std::shared_ptr<RemoteEnd> end) {
  Side& s = side(d);
  s.hostOnly = end && !end->takesTails();
  s.remote = end != nullptr;
  s.sender->setResidence(s.hostOnly ? Codec::Residence::Host : Codec::Residence::Device);
  s.channel.setRemote(std::move(end));
}

void Link::applyDecision(Direction d, const AdaptDecision& decision) {
  Side& s = side(d);
  if (!s.adaptive)
    throw std::logic_error("a payload selection for a link direction whose controller has no compressors of its own");
  s.adaptive->apply(decision);
  s.options.k = s.adaptive->sentK();
  buildEval(d);  // compressed evaluation goes through the factor sent
}

std::string Link::operation(Direction d, const char* what) const {
  return "link " + std::to_string(boundary_) + (d == Direction::Forward ? " forward: " : " backward: ") + what;
}

double Link::send(Direction d, const torch::Tensor& x, double clock, const MessageMeta& meta,
                  std::vector<TraceEvent>* trace) {
  Side& s = side(d);
  if (settings_.streamCheck) StageStream::require(senderOf(d), operation(d, "send"));
  if (histogramBins_ > 0 && !s.histogram)
    s.histogram = histogramOf({x}, histogramBins_,
                              metric::linkKey(boundary_, d, metric::leaf::kValues), histogramStep_);
  if (int(s.samples.size()) < samplesWanted_) s.samples.push_back(x.detach().to(torch::kCPU, torch::kFloat).clone());
  const TraceStopwatch t0;
  Message m;
  // The compensator measures the error of what the receiver will use on its copy of the payload.
  m.payload = s.adaptive ? s.adaptive->send(x, meta, s.report) : s.sender->send(x, meta, s.report);
  if (!s.report.reset.empty()) {
    s.resets.push_back(std::move(s.report.reset));
    s.report.reset.clear();
  }
  if (s.measureNorm) addFigures(s, {{x.square().sum(), {}, {}}});
  // After everything that made the payload (and the figures read from it) was queued on the stage's stream.
  if (const StageStream* stage = StageStream::current()) m.fence = stage->fence();
  const double encode = t0.seconds();
  const uint64_t bytes = m.payload.size();
  const uint64_t raw = uint64_t(double(x.numel()) * rawScale_ + 0.5) * sizeof(float);
  s.raw += raw;
  s.wire += bytes;
  s.elements += uint64_t(x.numel());
  s.messages += 1;
  s.encode_s += encode;
  // Emulated network: the wire (this direction's own, or its sending stage's interface) serialises transfers.
  if (trace)
    trace->push_back({d == Direction::Forward ? TraceEvent::SendForward : TraceEvent::SendBackward, encode, 0, bytes,
                      TraceEvent::Unknown, raw});
  clock += encode;
  Egress& wire = model_.shared_egress && s.stageEgress ? *s.stageEgress : s.own;
  m.emulated_arrival = model_.queue(clock, bytes, wire.busy_until);
  s.modelled_s += model_.messageSeconds(bytes);
  if (model_.throttled) {
    const auto now = Clock::now();
    const auto tx =
        std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(model_.transferSeconds(bytes)));
    const auto lat = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(model_.latencySeconds()));
    wire.wall_busy_until = std::max(now, wire.wall_busy_until) + tx;
    m.deliver_at = wire.wall_busy_until + lat;
  }
  s.channel.push(std::move(m));
  return clock;
}

torch::Tensor Link::receive(Direction d, const torch::Device& device, double& clock, const MessageMeta& meta,
                            std::vector<TraceEvent>* trace) {
  Side& s = side(d);
  if (settings_.streamCheck) StageStream::require(receiverOf(d), operation(d, "receive"));
  Message m = s.channel.pop(meta.shape ? maxPayloadBytes(*meta.shape) : UINT64_MAX);
  if (const StageStream* stage = StageStream::current()) stage->wait(m.fence, {m.payload.tail});
  if (settings_.streamCheck && !s.remote) checkFence(d, m.fence);
  const TraceStopwatch t0;
  auto x = s.receiver->receive(m.payload, device, meta);
  const double decode = t0.seconds();
  s.decode_s += decode;
  if (trace)
    trace->push_back({d == Direction::Forward ? TraceEvent::ReceiveForward : TraceEvent::ReceiveBackward, decode});
  if (histogramBins_ > 0 && !s.decoded)
    s.decoded = histogramOf({x}, histogramBins_,
                            metric::linkKey(boundary_, d, metric::leaf::kDecoded), histogramStep_);
  clock = std::max(clock, m.emulated_arrival) + decode;
  return x;
}

torch::Tensor Link::roundTrip(Direction d, const torch::Tensor& x) {
  Side& s = side(d);
  if (s.eval->lossless()) return x;
  return s.eval->decode(s.eval->encode(x), x.device());
}

void Link::sendEvaluation(Direction d, const torch::Tensor& x, bool compressed) {
  Side& s = side(d);
  Message m;
  m.payload = (compressed ? *s.eval : *s.plain).encode(x);
  s.channel.push(std::move(m));
}

torch::Tensor Link::receiveEvaluation(Direction d, const torch::Device& device, const std::vector<int64_t>& shape,
                                      bool compressed) {
  Side& s = side(d);
  const Message m = s.channel.pop(maxPayloadBytes(shape));
  return (compressed ? *s.eval : *s.plain).decode(m.payload, device, &shape);
}

void Link::armHistograms(int bins, int64_t step) {
  histogramBins_ = bins;
  histogramStep_ = step;
}

std::vector<HistogramRecord> Link::takeHistograms() {
  std::vector<HistogramRecord> out;
  for (auto& s : sides_)
    for (auto* h : {&s.histogram, &s.decoded})
      if (*h) {
        out.push_back(std::move(**h));
        h->reset();
      }
  histogramBins_ = 0;
  return out;
}

void Link::armSamples(int messages) {
  samplesWanted_ = std::max(0, messages);
}

std::vector<torch::Tensor> Link::takeSamples(Direction d) {
  std::vector<torch::Tensor> out = std::move(side(d).samples);
  side(d).samples.clear();
  return out;
}

LinkTraffic Link::takeTraffic(Direction d) {
  Side& s = side(d);
  LinkTraffic t;
  t.boundary = boundary_;
  t.direction = d;
  t.raw_bytes = s.raw;
  t.wire_bytes = s.wire;
  t.elements = s.elements;
  t.nonzeros = s.report.values;
  t.messages = s.messages;
  t.encode_s = s.encode_s;
  t.decode_s = s.decode_s;
  t.modelled_s = s.modelled_s;
  settleFigures(s);
  if (s.reconstructionRef > 0) {
    t.setErrorSums(s.reconstructionErr, s.reconstructionRef, s.report.err_num, s.report.err_den);
    s.reconstructionErr = s.reconstructionRef = 0;
  } else {
    t.setErrorSums(s.report.err_num, s.report.err_den, s.report.comp_num, s.report.comp_den);
  }
  t.method = describe(d);
  if (s.adaptive) s.adaptive->report(t);
  if (s.measureNorm) t.measures[adapt_measure::kSquaredNorm] = s.normSquared;
  s.normSquared = 0;
  t.resets = std::move(s.resets);
  s.resets.clear();
  s.raw = s.wire = s.elements = 0;
  s.messages = 0;
  s.encode_s = s.decode_s = s.modelled_s = 0;
  s.report = SendReport{};
  s.report.deferred = settings_.deferReads;
  s.own.busy_until = 0;  // every step's emulated clock starts at 0
  if (s.stageEgress) s.stageEgress->busy_until = 0;
  return t;
}

void Link::checkFence(Direction d, const Fence& fence) const {
  if (fence.producer != senderOf(d))
    throw StreamDisciplineError(
        operation(d, "receive") + ": the message carries " +
        (fence.producer < 0 ? std::string("no fence") : "the fence of stage " + std::to_string(fence.producer)) +
        ", not one of stage " + std::to_string(senderOf(d)) + "'s stream; its sender did not mark when it was ready");
  if (fence.waited_by != receiverOf(d))
    throw StreamDisciplineError(operation(d, "receive") + ": stage " + std::to_string(receiverOf(d)) +
                                "'s stream did not wait for the message's fence before reading it");
}

void Link::addReconstruction(Direction d, const torch::Tensor& errSq, const torch::Tensor& refSq) {
  addFigures(side(d), {{{}, errSq, refSq}});
}

void Link::addFigures(Side& s, const std::array<torch::Tensor, 3>& figures) {
  if (!settings_.deferReads) {
    double* into[3] = {&s.normSquared, &s.reconstructionErr, &s.reconstructionRef};
    for (size_t i = 0; i < 3; ++i)
      if (figures[i].defined()) *into[i] += figures[i].item<double>();
    return;
  }
  torch::Tensor row;
  for (size_t i = 0; i < 3; ++i)
    if (figures[i].defined()) {
      if (!row.defined()) row = torch::zeros({3}, figures[i].options().dtype(torch::kDouble));
      row[int64_t(i)] = figures[i].to(torch::kDouble);
    }
  if (!row.defined()) return;
  if (s.pending.defined())
    s.pending.add_(row);
  else
    s.pending = row;
}

void Link::settleFigures(Side& s) {
  torch::Tensor& report = s.report.pending;
  if (report.defined() && s.pending.defined() && report.device() == s.pending.device()) {
    // Both in one transfer: the report's five sums, then the side's three.
    const torch::Tensor host = torch::cat({report, s.pending}).to(torch::kCPU);
    report = host.narrow(0, 0, 5);
    s.pending = host.narrow(0, 5, 3);
  }
  settle(s.report);
  if (!s.pending.defined()) return;
  const torch::Tensor host = s.pending.to(torch::kCPU).contiguous();
  s.pending = torch::Tensor();
  const double* v = host.data_ptr<double>();
  s.normSquared += v[0], s.reconstructionErr += v[1], s.reconstructionRef += v[2];
}

bool Link::lossless() const { return sides_[0].eval->lossless() && sides_[1].eval->lossless(); }

void Link::abort() {
  for (auto& s : sides_) s.channel.abort();
}

void Link::reset() {
  for (auto& s : sides_) s.channel.reset();
}

}  // namespace ps
