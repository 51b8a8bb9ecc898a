// The suites' summary metrics are the keys of a run's summary: a suite that names one reads what the session wrote.
#include "engine/core/RunSummary.h"
#include "engine/suites/SuiteMetrics.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace ps {
namespace {

TEST(SuiteMetrics, EverySummaryMetricIsAKeyTheSessionWrites) {
  RunSummary classifier;
  RunSummary lm;
  lm.classifier = false;
  const auto a = classifier.toJson(), b = lm.toJson();
  // Computed from the run's steps and evaluations, not read from its summary.
  const std::set<std::string> computed = {"codec_ms_per_step", "time_to_target", "bytes_to_target"};
  for (const auto& m : suiteMetrics()) {
    if (computed.count(m.name)) continue;
    EXPECT_TRUE(a.contains(m.name) || b.contains(m.name)) << m.name << " is no key of a run's summary";
  }
}

}  // namespace
}  // namespace ps
