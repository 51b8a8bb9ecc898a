#include "engine/core/Telemetry.h"
#include "engine/core/RunSummary.h"

namespace ps {
namespace {

struct Named {
  EventKind kind;
  const char* name;
};
constexpr Named kNames[] = {{EventKind::Start, "start"},
                            {EventKind::Pause, "pause"},
                            {EventKind::Resume, "resume"},
                            {EventKind::Setting, "setting"},
                            {EventKind::Reset, "reset"},
                            {EventKind::Adapt, "adapt"},
                            {EventKind::Checkpoint, "checkpoint"},
                            {EventKind::End, run_status::kFinished},
                            {EventKind::End, run_status::kStopped},
                            {EventKind::End, run_status::kDiverged},
                            {EventKind::End, run_status::kFailed}};

}  // namespace

const char* eventName(EventKind kind) {
  for (const auto& n : kNames)
    if (n.kind == kind) return n.name;
  return "unknown";
}

EventKind eventKindOf(const std::string& name) {
  for (const auto& n : kNames)
    if (name == n.name) return n.kind;
  return EventKind::Unknown;
}

}  // namespace ps
