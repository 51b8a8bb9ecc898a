// Event kinds: one spelling, read back from their stored names.
#include "engine/core/Metrics.h"
#include "engine/core/Telemetry.h"

#include <gtest/gtest.h>

namespace ps {
namespace {

TEST(EventKinds, EveryKindReadsBackFromItsName) {
  for (EventKind k : {EventKind::Start, EventKind::Pause, EventKind::Resume, EventKind::Setting, EventKind::Reset,
                      EventKind::Adapt, EventKind::Checkpoint, EventKind::End})
    EXPECT_EQ(eventKindOf(eventName(k)), k) << eventName(k);
}

TEST(EventKinds, TheStoredNamesAreTheOnesOlderRunsHold) {
  EXPECT_STREQ(eventName(EventKind::Setting), "setting");
  EXPECT_STREQ(eventName(EventKind::Reset), "reset");
  EXPECT_EQ(eventKindOf("pause"), EventKind::Pause);
  EXPECT_EQ(eventKindOf("adapt"), EventKind::Adapt);
  // A run ends with an event named after its status.
  for (const char* status : {"finished", "stopped", "diverged", "failed"}) EXPECT_EQ(eventKindOf(status), EventKind::End);
  EXPECT_EQ(eventKindOf("something-newer"), EventKind::Unknown);
  EventRecord e;
  e.kind = "resume";
  EXPECT_EQ(e.type(), EventKind::Resume);
}

// A stage's gradient histogram is named in one place and read back by the stage it is of; other names, and names
// that only start alike, are not a stage's.
TEST(HistogramNames, AStagesGradientHistogramReadsBackItsStage) {
  for (int stage : {0, 3, 12}) EXPECT_EQ(metric::gradHistogramStage(metric::gradHistogramName(stage)), stage);
  for (const char* other : {"grad/stage", "grad/stagex", "grad/stage1a", "grad/stage-1", "link0/fwd/values",
                            "grad/stage99999999999"})
    EXPECT_FALSE(metric::gradHistogramStage(other).has_value()) << other;
}

}  // namespace
}  // namespace ps
