#pragma once
// The sending end of a link direction (or a gradient exchange) whose adaptive controller keeps compressors of its
// own (MethodSpec::ownCompressors; GraVAC's two persistent compressors are one). The controller's registry entry
// makes it (ControllerList.h: makeSender), so a link or an exchange never names a controller: it asks for a sender,
// sends through it when there is one, and hands it the controller's decisions between steps.
#include "engine/compress/Adaptive.h"
#include "engine/compress/Compensation.h"
#include "engine/core/Telemetry.h"

#include <memory>
#include <string>

namespace ps {

class AdaptiveSender {
 public:
  virtual ~AdaptiveSender() = default;
  // Between steps: what the controller decided (whose payload goes out, what is explored). Keeps every residual.
  virtual void apply(const AdaptDecision& decision) = 0;
  // The factor of what is sent (1 when dense): what the direction's `k` reads while the controller adapts it.
  virtual double sentK() const = 0;
  // Sender thread: the payload for `x`, with its error and values added to `report`.
  virtual Payload send(const torch::Tensor& x, const MessageMeta& meta, SendReport& report) = 0;
  // Adds the controller's measurements since the last call to `t` and starts over.
  virtual void report(LinkTraffic& t) = 0;
  virtual std::string describe() const = 0;
};

// The sender of the controller `options.adapt` names; nullptr when that controller has no compressors of its own
// (the direction's Compensator sends).
std::unique_ptr<AdaptiveSender> makeAdaptiveSender(const CompressionOptions& options, const CodecContext& context);

}  // namespace ps
