#pragma once
// Adaptive compression factors (ALGORITHMS.md, "Adaptive compression"): GraVAC and Accordion as controllers that
// see one observation per step and say when the factor a link sends should change. No torch: the link measures,
// the session applies the decisions between steps, and each change is a "setting" event on the run's timeline.
#include <optional>
#include <string>
#include <vector>

namespace ps {

struct AdaptOptions {
  std::string kind = "none";  // none | gravac | accordion
  double theta_min = 0.1;     // GraVAC's mildest factor (also Accordion's mild factor)
  double theta_max = 1e-4;    // GraVAC's most aggressive factor
  bool exponential = false;   // candidate steps: geometric (x0.5 each) or exponential (the step squares)
  double epsilon = 0.75;      // gain a factor must keep to be sent
  double omega = 0.05;        // GraVAC settles when the two best compression throughputs differ by less
  int window = 25;            // steps per EWMA window and per exploration interval
  double eta = 0.2;           // Accordion: relative change of the gradient norm that marks a critical phase
  double aggressive = 0.01;   // Accordion's aggressive factor (the direction's configured k)
  double alpha = 0.05;        // EWMA weight of the newest gain
};

struct AdaptObservation {
  double gain_min = 1;      // ||D(C_θmin(p))|| / ||p||, on its own error-feedback residual
  double gain_current = 1;  // the same for the factor being explored
  double samples_per_s = 0; // with the step time including link time (emulated)
  double norm = 0;          // the link's tensor norm this step (Accordion)
};

struct AdaptDecision {
  double k = 0.1;     // the factor to send from the next step
  bool dense = false; // GraVAC: neither factor keeps enough of the signal; send uncompressed
  double explore = 0; // GraVAC: the factor the link should measure as "current" from the next step
  std::string reason;
};

class GravacController {
 public:
  explicit GravacController(const AdaptOptions& options);
  // One step's measurements; a decision when what is sent or explored changes.
  std::optional<AdaptDecision> observe(const AdaptObservation& o);
  const std::vector<double>& candidates() const { return candidates_; }
  double exploring() const { return candidates_[index_]; }
  bool settled() const { return settled_; }
  double sending() const { return sendingDense_ ? 1.0 : sending_; }
  const std::vector<double>& throughputs() const { return ct_; }  // CT per explored candidate, in order

 private:
  AdaptDecision decide(std::string reason);

  AdaptOptions o_;
  std::vector<double> candidates_;
  std::vector<double> ct_;
  size_t index_ = 0;
  long step_ = 0, inInterval_ = 0;
  double emaMin_ = -1, emaCur_ = -1, ctSum_ = 0;
  double sending_ = 0;
  bool sendingDense_ = false, settled_ = false;
};

class AccordionController {
 public:
  explicit AccordionController(const AdaptOptions& options);
  std::optional<AdaptDecision> observe(const AdaptObservation& o);
  double sending() const { return sending_; }

 private:
  AdaptOptions o_;
  long inInterval_ = 0;
  double ema_ = -1, previous_ = -1;
  double sending_;
};

}  // namespace ps
