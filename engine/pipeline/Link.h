#pragma once
// One stage boundary: carries activations forward and activation gradients backward as encoded payloads,
// counts raw and wire bytes, measures codec time and compression error, and models the network's time.
#include "engine/compress/Codec.h"
#include "engine/pipeline/Channel.h"
#include "engine/pipeline/LinkModel.h"
#include "engine/telemetry/Telemetry.h"

#include <array>
#include <memory>

namespace ps {

class Link {
 public:
  Link(int boundary, LinkModel model, std::unique_ptr<Codec> forward, std::unique_ptr<Codec> backward);

  // Sender thread. `clock` is the sender's emulated time when the tensor is ready; returns it after encoding.
  double send(Direction d, const torch::Tensor& x, double clock);
  // Receiver thread. Advances `clock` to the arrival time plus decode time.
  torch::Tensor receive(Direction d, const torch::Device& device, double& clock);
  // Evaluation through the codec: no statistics, no state.
  torch::Tensor roundTrip(Direction d, const torch::Tensor& x);

  // Between steps only (no worker is running).
  LinkTraffic takeTraffic(Direction d);
  void setCodec(Direction d, std::unique_ptr<Codec> codec);
  const Codec& codec(Direction d) const { return *side(d).codec; }
  void setModel(const LinkModel& model) { model_ = model; }
  const LinkModel& model() const { return model_; }
  int boundary() const { return boundary_; }
  bool lossless() const;

  void abort();  // wakes waiting receivers with PipelineAborted
  void reset();  // between steps: drop queued messages, clear the abort

 private:
  struct Side {
    std::unique_ptr<Codec> codec;
    Channel channel;
    // Written by the sender thread only.
    uint64_t raw = 0, wire = 0, elements = 0, nonzeros = 0;
    uint32_t messages = 0;
    double encode_s = 0, modelled_s = 0, err_num = 0, err_den = 0;
    double busy_until = 0;  // emulated time the link is free again
    std::chrono::steady_clock::time_point wall_busy_until{};
    // Written by the receiver thread only.
    double decode_s = 0;
  };
  Side& side(Direction d) { return sides_[static_cast<int>(d)]; }
  const Side& side(Direction d) const { return sides_[static_cast<int>(d)]; }

  int boundary_;
  LinkModel model_;
  std::array<Side, 2> sides_;
};

}  // namespace ps
