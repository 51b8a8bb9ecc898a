// Event kinds: one spelling, read back from their stored names.
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

}  // namespace
}  // namespace ps
