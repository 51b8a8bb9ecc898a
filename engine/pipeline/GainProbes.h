#pragma once
// Adaptive compression's measurements on the sending side of a link or a gradient exchange
// (engine/compress/Adaptive.h). GraVAC: every message is also compressed with θ_min and with the explored factor,
// each on its own error-feedback residual, and the kept fraction of the signal is reported. Accordion: the norm of
// what is sent. Touched by one thread at a time (the sender), reconfigured between steps.
#include "engine/compress/Compensation.h"
#include "engine/telemetry/Telemetry.h"

#include <memory>

namespace ps {

class GainProbes {
 public:
  // `base` is the sparsifier being adapted (the sender may be sending dense at the moment); 0 turns probes off.
  void configure(const CompressionOptions& base, CodecContext context, const AqsgdOptions& aqsgd, double thetaMin,
                 double thetaCurrent);
  void measureNorm(bool on) { measureNorm_ = on; }
  bool measuringNorm() const { return measureNorm_; }
  void measure(const torch::Tensor& x, const MessageMeta& meta);
  // Fills gain_min, gain_current and norm of `t` with what was measured since the last call, and starts over.
  void report(LinkTraffic& t);

 private:
  std::unique_ptr<Compensator> min_, current_;
  double keptMin_ = 0, totalMin_ = 0, keptCurrent_ = 0, totalCurrent_ = 0;
  std::string method_;
  double k_[2] = {0, 0};
  bool measureNorm_ = false;
  double normSquared_ = 0;
};

}  // namespace ps
