// Metric keys, the link-key format and the chart table: what the store sink writes is what the charts read.
#include "engine/core/Metrics.h"
#include "engine/telemetry/Charts.h"
#include "engine/telemetry/MetricTitles.h"
#include "engine/telemetry/StepMetrics.h"

#include <gtest/gtest.h>

#include <set>

namespace ps {
namespace {

// Every key has a title a person reads: no slashes or underscores, the link and direction in words.
TEST(Metrics, EveryKeyHasAReadableTitle) {
  EXPECT_EQ(metricTitle("train/loss"), "Training loss");
  EXPECT_EQ(metricTitle("eval/accuracy_uncompressed"), "Evaluation accuracy (uncompressed)");
  EXPECT_EQ(metricTitle("link0/fwd/wire_bytes"), "Link 0 forward activations: wire bytes");
  EXPECT_EQ(metricTitle("link2/bwd/rel_error"), "Link 2 backward gradients: relative error");
  EXPECT_EQ(metricTitle("link1/grad/ratio"), "Stage 1 replica gradients: compression ratio");
  EXPECT_EQ(metricTitle("link0/fwd/adapt_gain"), "Link 0 forward activations: adapt gain");
  EXPECT_EQ(metricTitle("adapt/some_measure"), "Adapt some measure");
  for (const ChartSpec& spec : charts())
    for (const ChartSeries& s : spec.series) {
      const std::string t = metricTitle(s.key);
      EXPECT_EQ(t.find_first_of("/_"), std::string::npos) << s.key << " -> " << t;
    }
  for (const char* leaf : {"raw_bytes", "wire_bytes", "ratio", "bits_per_element", "density", "rel_error",
                           "rel_error_compensated", "codec_s", "modelled_s", "k"}) {
    const std::string t = metricTitle(metric::linkKey(3, Direction::Forward, leaf));
    EXPECT_EQ(t.find_first_of("/_"), std::string::npos) << leaf << " -> " << t;
  }
}

TEST(Metrics, LinkKeysRoundTripAndOtherKeysAreNotLinks) {
  for (Direction d : {Direction::Forward, Direction::Backward, Direction::Gradients})
    for (int b : {0, 7, 123}) {
      const auto parsed = metric::parseLinkKey(metric::linkKey(b, d, "rel_error_compensated"));
      ASSERT_TRUE(parsed);
      EXPECT_EQ(parsed->boundary, b);
      EXPECT_EQ(parsed->direction, d);
      EXPECT_EQ(parsed->leaf, "rel_error_compensated");
    }
  EXPECT_EQ(metric::linkName(2, Direction::Backward), "link2/bwd");
  for (const char* other : {"train/loss", "link/fwd/x", "linkx/fwd/x", "link1/sideways/x", "link1/fwd/", "link1/fwd",
                            "link12345/fwd/x", "bytes/wire", ""})
    EXPECT_FALSE(metric::parseLinkKey(other)) << other;
}

TEST(Metrics, EveryTaskHasAKind) {
  EXPECT_EQ(taskKind("brown_lm"), TaskKind::LanguageModel);
  EXPECT_EQ(taskKind("fashion_mnist"), TaskKind::Classifier);
  EXPECT_FALSE(taskKind("imagenet"));
}

// Every key a chart of the table names is one the run store is given, so no chart waits for a key nobody writes.
TEST(Metrics, TheChartTableReadsOnlyKeysTheStoreSinkWrites) {
  StepRecord step;
  step.accuracy = 0.5;
  step.control_s = 0.01;  // a step of a multi-process run, which writes every key a chart can read
  for (Direction d : {Direction::Forward, Direction::Backward, Direction::Gradients}) {
    LinkTraffic l;
    l.direction = d;
    step.links.push_back(l);
  }
  std::vector<MetricPoint> points;
  stepMetrics(step, points);
  for (bool compressed : {true, false}) {
    EvalRecord e;
    e.compressed = compressed;
    e.accuracy = 0.5;
    e.perplexity = 3;
    evalMetrics(e, points);
  }
  std::set<std::string> keys, leaves;
  for (const auto& p : points) {
    keys.insert(p.key);
    if (auto link = metric::parseLinkKey(p.key)) leaves.insert(link->leaf);
  }
  std::set<std::string> titles;
  for (const ChartSpec& c : charts()) {
    EXPECT_TRUE(titles.insert(c.title).second) << c.title << " twice";
    EXPECT_TRUE(c.live() || c.compare()) << c.title;
    for (const auto& s : c.series) EXPECT_TRUE(keys.count(s.key)) << c.title << ": " << s.key;
    if (!c.linkLeaf.empty()) EXPECT_TRUE(leaves.count(c.linkLeaf)) << c.title << ": " << c.linkLeaf;
    if (!c.linkDashed.empty()) EXPECT_TRUE(leaves.count(c.linkDashed)) << c.title << ": " << c.linkDashed;
    EXPECT_TRUE(!c.series.empty() || !c.linkLeaf.empty() || c.pareto) << c.title << " draws nothing";
  }
  // One process has no control round, and writes no figure for it.
  std::vector<MetricPoint> single;
  stepMetrics(StepRecord{}, single);
  for (const auto& p : single) EXPECT_NE(p.key, metric::kControlSeconds);
}

}  // namespace
}  // namespace ps
