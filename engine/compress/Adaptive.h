#pragma once
// Adaptive compression factors: GraVAC and Accordion as controllers that see one observation per step and say
// when what a link sends should change. No torch: the sender measures (engine/compress/GravacCompressors.h), the
// session applies the decisions between steps, and each change is a "setting" event on the run's timeline.
//
// GraVAC, as its authors implement it: two persistent compressors, one at theta_min and one at the candidate under
// exploration ("current"), each with its own error-feedback residual, both compressing every message; what is sent
// is one of their two payloads, or the uncompressed tensor. The gain of a compressor is
// EWMA(sum ||D(C(p))||) / EWMA(sum ||g||), the norm of what it would send over the norm of the raw tensor, each
// smoothed on its own. The compression throughput of a factor is the samples per second measured in the steps that
// sent it, times its gain; a candidate never sent during its interval has no throughput and cannot win.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ps {

struct AdaptOptions {
  std::string kind = "none";  // a controller's name (engine/compress/ControllerList.h)
  double theta_min = 0.1;     // GraVAC's mildest factor (also Accordion's mild factor)
  double theta_max = 1e-4;    // GraVAC's most aggressive factor
  bool exponential = false;   // candidate steps: geometric (x0.5 each) or exponential (the step squares)
  double epsilon = 0.75;      // gain a factor must keep to be sent
  double omega = 0.05;        // GraVAC settles when the two best compression throughputs differ by less
  int window = 25;            // steps per EWMA window and per exploration interval
  double eta = 0.2;           // Accordion: relative change of the gradient norm that marks a critical phase
  double aggressive = 0.01;   // Accordion's aggressive factor (the direction's configured k)
  double alpha = 0.05;        // EWMA weight of the newest value
};

// The measurements controllers read, by name: each a sum over a step's messages, taken by the sender
// (LinkTraffic::measures).
namespace adapt_measure {
inline constexpr const char* kGravacRaw = "gravac_raw";          // GraVAC: ||g||, the tensor before compensation
inline constexpr const char* kGravacMin = "gravac_min";          // ||D(C(p))|| of the theta_min compressor, p its
                                                                  // residual-corrected input
inline constexpr const char* kGravacCurrent = "gravac_current";  // the same for the compressor at the candidate
inline constexpr const char* kSquaredNorm = "squared_norm";      // Accordion: ||x||^2 of what crossed
}  // namespace adapt_measure

// One step's measurements of an adapted link direction (or of every stage's gradient exchange together).
struct AdaptObservation {
  double samples_per_s = 0;                // with the step time including link time (emulated)
  std::map<std::string, double> measures;  // by the names above
  double measure(const char* name) const {
    const auto it = measures.find(name);
    return it == measures.end() ? 0.0 : it->second;
  }
};

// Which of GraVAC's payloads a link sends.
enum class GravacSend { ThetaMin, Current, Dense };

struct AdaptDecision {
  double k = 0.1;                          // the factor sent from the next step (1 when dense)
  GravacSend send = GravacSend::ThetaMin;  // GraVAC: whose payload that is
  double explore = 0;                      // GraVAC: the factor of the "current" compressor from the next step
  std::string reason;
  bool dense() const { return send == GravacSend::Dense; }
};

// A controller of one link direction (or of the replicas' gradients), registered in engine/compress/ControllerList.h.
// How its decisions reach the sender follows from its catalogue entry: a controller with compressors of its own
// (MethodSpec::ownCompressors) selects among their payloads; any other sets the direction's K.
class AdaptiveController {
 public:
  virtual ~AdaptiveController() = default;
  // What holds before the first observation, where the controller decides it (GraVAC starts at theta_min).
  virtual std::optional<AdaptDecision> start() const { return std::nullopt; }
  // One step's measurements; a decision when what is sent changes (or, for GraVAC, what is explored).
  virtual std::optional<AdaptDecision> observe(const AdaptObservation& o) = 0;
};

// The controller `options.kind` names; nullptr for "none" (and for a name no entry has: the schema refuses those).
std::unique_ptr<AdaptiveController> makeController(const AdaptOptions& options);

class GravacController : public AdaptiveController {
 public:
  explicit GravacController(const AdaptOptions& options);
  std::optional<AdaptDecision> start() const override;
  // One step's measurements; a decision when what is sent or explored changes, or when the search settles.
  std::optional<AdaptDecision> observe(const AdaptObservation& o) override;
  const std::vector<double>& candidates() const { return candidates_; }
  double exploring() const { return candidates_[index_]; }
  bool settled() const { return settled_; }
  GravacSend sends() const { return send_; }
  double sending() const;  // the factor sent (1 when dense)
  // Compression throughput per candidate, in candidate order; empty where it was never measured (not yet explored,
  // or never sent during its interval).
  const std::vector<std::optional<double>>& throughputs() const { return ct_; }
  double gainMin() const;      // -1 until measured
  double gainCurrent() const;  // -1 until the current candidate has a measurement

 private:
  struct Candidate {
    double throughputSum = 0;  // samples per second, summed over the steps that sent this factor
    long sent = 0;             // those steps
    double emaSent = -1;       // its compressor's EWMA of sum ||D(C(p))||, kept when exploration moves on
  };
  void credit(double samplesPerSecond);
  bool endInterval(std::string& why);  // true when the search settled
  void measure(size_t candidate);      // CT of a candidate from its throughput and gain
  AdaptDecision decision(std::string reason) const;

  AdaptOptions o_;
  std::vector<double> candidates_;
  std::vector<Candidate> state_;
  std::vector<std::optional<double>> ct_;
  size_t index_ = 0;
  long step_ = 0, inInterval_ = 0;
  double emaRaw_ = -1, emaMin_ = -1, emaCur_ = -1;
  GravacSend send_ = GravacSend::ThetaMin;
  bool settled_ = false;
};

class AccordionController : public AdaptiveController {
 public:
  explicit AccordionController(const AdaptOptions& options);
  std::optional<AdaptDecision> observe(const AdaptObservation& o) override;
  double sending() const { return sending_; }

 private:
  AdaptOptions o_;
  long inInterval_ = 0;
  double ema_ = -1, previous_ = -1;
  double sending_;
};

}  // namespace ps
