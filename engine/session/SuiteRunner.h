#pragma once
// Runs a suite: every planned run (SuitePlan.h) that the store does not already hold as a finished (or diverged) run
// of the same configuration made by the same code (CodeVersion.h), one after the other, in this process (multi-process
// variants start their own ranks). A grid can therefore be completed over several sittings: what is done stays done,
// and what other code did is not taken for this code's result unless asked (reuseAnyVersion). Runs go into the normal
// store, tagged with the suite, the variant and the seed.
#include "engine/session/Session.h"
#include "engine/suites/SuitePlan.h"

#include <atomic>
#include <functional>
#include <memory>

namespace ps {

struct SuiteRunEvent {
  enum class Kind { Prepare, Start, Skip, Finish } kind = Kind::Start;
  int index = 0, total = 0;  // position in the plan, from 1
  std::string variant;       // empty for a prepare step
  uint64_t seed = 0;
  int64_t run_id = 0;          // Skip: the run reused; Finish: the new run
  std::string status, reason;  // Start: why a stored run of these settings was not reused, if one was found
  double seconds = 0;
  nlohmann::json summary;
};

struct SuiteOutcome {
  int ran = 0, skipped = 0, unsuccessful = 0;  // unsuccessful: failed or stopped runs
  bool cancelled = false;
};

class SuiteRunner {
 public:
  explicit SuiteRunner(std::shared_ptr<RunStore> store) : store_(std::move(store)) {}
  using Listener = std::function<void(const SuiteRunEvent&)>;
  // `onSession` sees every session before it runs (to attach telemetry sinks).
  SuiteOutcome run(const Suite& suite, int seeds, const SuiteScale& scale, const Listener& listener,
                   const std::function<void(Session&)>& onSession = {});
  // From any thread or a signal handler: the current run stops at its next step and no other starts.
  void cancel() { cancelled_.store(true); }
  bool cancelled() const { return cancelled_.load(); }
  // Also reuse finished runs of the same settings made by other code.
  void reuseAnyVersion(bool on) { anyVersion_ = on; }

 private:
  nlohmann::json runOne(const nlohmann::json& config, const std::function<void(Session&)>& onSession);
  // Runs the suite's prepare steps whose output is missing (throws ConfigError when one ends without it).
  void prepare(const Suite& suite, bool quick, const Listener& notify, const std::function<void(Session&)>& onSession);
  // True (and `e` a Skip event) when the store holds a finished run of these settings; otherwise `e.reason` says
  // when a run of other code has them.
  bool reuse(const PlannedRun& p, SuiteRunEvent& e);

  std::shared_ptr<RunStore> store_;
  std::atomic<bool> cancelled_{false};
  bool anyVersion_ = false;
};

}  // namespace ps
