#pragma once
// Adaptive compression in a session: the registered controllers (engine/compress/ControllerList.h: GraVAC, Accordion),
// one per link direction that asks for one, fed after every step and applied between steps. Each change of the factor a
// link sends is a "setting" event of the run (source: the controller's name, with the reason), so charts mark it like a
// manual change; a decision that keeps the factor sent (GraVAC exploring or settling) is an "adapt" event. A factor
// change is written as the boundary's own key, compression.boundaries.N.<direction>.k. GraVAC's decisions select a
// payload of the sender's two persistent compressors (no state is dropped); Accordion's rebuild the compressor. The
// weight gradients of data-parallel replicas have one controller for the whole model (compression.gradients.k), fed
// with the sums over every stage's exchange; every rank runs the same controllers on the same merged step result, so
// all ranks decide the same.
#include "engine/compress/Adaptive.h"
#include "engine/pipeline/Pipeline.h"
#include "engine/runs/config/Config.h"
#include "engine/telemetry/TelemetryBus.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace ps {

class AdaptiveControl {
 public:
  // How decisions reach the run. `setK(key, k, source)` makes a controller's factor the run's setting (the session
  // is the one writer of its settings); `retarget(boundary, direction, step, wall)` gives a link direction the
  // options now configured, reporting a reset of its state as an event.
  struct RunHooks {
    std::function<void(const std::string& key, double k, const std::string& source)> setK;
    std::function<void(int boundary, Direction d, int64_t step, double wall)> retarget;
  };
  // `settings` is the run's configuration, read at every decision (the session replaces it in place).
  AdaptiveControl(const Config& settings, Pipeline& pipeline, TelemetryBus& bus, RunHooks hooks);

  // Whether a change of this compression option changes what the controllers do: which controller, the codec or K
  // they adapt, or an option any controller reads (the catalogue's lists). Such a change calls setup() again.
  static bool reconfiguredBy(const std::string& option);
  // One controller per link direction whose options ask for one (the ones before are dropped); the decisions they
  // start with apply at once. Throws ConfigError for options a controller refuses.
  void setup(int64_t step, double wall);
  // Feeds a finished step to the controllers; their decisions apply before the next step.
  void observe(const StepRecord& rec);

 private:
  // A decision of the direction's controller: a selection among the sender's payloads for a controller with
  // compressors of its own (GraVAC), otherwise a new K for the direction (its compressor is rebuilt: Accordion).
  void apply(int boundary, Direction d, const AdaptDecision& decision, int64_t step, double wall);
  void applySelection(int boundary, Direction d, const AdaptDecision& decision, const std::string& source,
                      int64_t step, double wall);
  // The config key of the factor sent and its event ("setting" when it changed, "adapt" otherwise); true if changed.
  bool recordK(int boundary, Direction d, double k, const std::string& source, const std::string& reason,
               nlohmann::json detail, int64_t step, double wall);

  const Config& settings_;
  Pipeline& pipeline_;
  TelemetryBus& bus_;
  RunHooks hooks_;
  struct Adapter {
    int boundary;
    Direction direction;
    std::unique_ptr<AdaptiveController> controller;
  };
  std::vector<Adapter> adapters_;  // boundary -1 with direction Gradients: the replicas' weight gradients
};

}  // namespace ps
