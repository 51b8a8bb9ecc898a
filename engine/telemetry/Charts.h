#pragma once
// The charts of a run: one table for the live panel and the compare view (and anything else that charts a run), so
// a metric has one title, unit and scale wherever it is drawn. Torch-free and header-only.
#include "engine/core/Metrics.h"

#include <algorithm>
#include <string>
#include <vector>

namespace ps {

struct ChartSeries {
  std::string key, label;
  bool dashed = false;
};

struct ChartSpec {
  enum class View { Both, Live, Compare };
  enum class Kinds { Any, Classifier, LanguageModel };

  std::string title, unit;
  bool logY = false;
  Kinds kinds = Kinds::Any;
  View view = View::Both;
  // Fixed keys: the live panel draws each; the compare view, one line per run, draws the first the run has.
  std::vector<ChartSeries> series;
  // Per link: the live panel draws `linkLeaf` of every link (and `linkDashed` dashed); the compare view the mean of
  // `linkLeaf` over a run's links. Only links of `directions`; all directions when empty.
  std::string linkLeaf, linkDashed, linkDashedLabel;
  std::vector<Direction> directions;
  bool cumulative = false;  // live: running sums of the series (bytes so far)
  double scale = 1;         // drawn values are the recorded ones times this (seconds drawn as ms: 1000)
  bool pareto = false;      // compare: each run's final eval loss against its wire bytes

  bool live() const { return view != View::Compare; }
  bool compare() const { return view != View::Live; }
  bool shows(TaskKind k) const {
    return kinds == Kinds::Any || (kinds == Kinds::Classifier) == (k == TaskKind::Classifier);
  }
  bool takes(Direction d) const {
    return directions.empty() || std::find(directions.begin(), directions.end(), d) != directions.end();
  }
};

inline const std::vector<ChartSpec>& charts() {
  using K = ChartSpec::Kinds;
  using V = ChartSpec::View;
  namespace m = metric;
  auto error = [](std::string which, Direction d) {
    ChartSpec c{"Compression error, " + which, "‖x̂ − x‖ / ‖x‖"};
    c.linkLeaf = m::leaf::kRelError;
    c.linkDashed = m::leaf::kRelErrorCompensated;
    c.linkDashedLabel = "compensated";
    c.directions = {d};
    return c;
  };
  static const std::vector<ChartSpec> all = [&] {
    std::vector<ChartSpec> c;
    c.push_back({"Loss", "loss"});
    c.back().series = {{m::kTrainLoss, "train"}, {m::kEvalLoss, "eval"},
                       {m::uncompressed(m::kEvalLoss), "eval, uncompressed", true}};
    c.push_back({"Eval loss", "loss", false, K::Any, V::Compare});
    c.back().series = {{m::kEvalLoss, "eval"}};
    c.push_back({"Accuracy", "accuracy", false, K::Classifier});
    c.back().series = {{m::kEvalAccuracy, "eval"}, {m::uncompressed(m::kEvalAccuracy), "eval, uncompressed", true},
                       {m::kTrainAccuracy, "train"}};
    c.push_back({"Perplexity", "perplexity", true, K::LanguageModel});
    c.back().series = {{m::kEvalPerplexity, "eval"},
                       {m::uncompressed(m::kEvalPerplexity), "eval, uncompressed", true}};
    c.push_back({"Bytes per step", "bytes", true});
    c.back().series = {{m::kWireBytes, "all links"}};
    c.back().linkLeaf = m::leaf::kWireBytes;
    c.back().linkDashed = m::leaf::kRawBytes;
    c.back().linkDashedLabel = "raw";
    c.push_back({"Cumulative bytes", "bytes", false, K::Any, V::Live});
    c.back().series = {{m::kWireBytes, "sent on the wire"}, {m::kRawBytes, "raw (float32)", true}};
    c.back().cumulative = true;
    c.push_back(error("forward", Direction::Forward));
    c.push_back(error("backward", Direction::Backward));
    c.push_back(error("replica gradients", Direction::Gradients));
    c.push_back({"Step time split", "ms", false, K::Any, V::Live});
    c.back().series = {{m::kComputeSeconds, "compute"}, {m::kCodecSeconds, "compression"},
                       {m::kLinkSeconds, "link (modelled)"}};
    c.back().scale = 1000;  // a step takes milliseconds: "6" reads better than "6e-3"
    c.push_back({"Step time", "ms"});
    c.back().series = {{m::kStepSeconds, "measured step"},
                       {m::kEmulatedStepSeconds, "emulated at the link's bandwidth"},
                       {m::kControlSeconds, "control round (several processes)"}};
    c.back().scale = 1000;
    c.push_back({"Eval loss vs wire bytes", "eval loss", false, K::Any, V::Compare});
    c.back().pareto = true;
    return c;
  }();
  return all;
}

}  // namespace ps
