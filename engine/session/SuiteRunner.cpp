#include "engine/session/SuiteRunner.h"
#include "engine/core/RunSummary.h"

#include "engine/core/CodeVersion.h"
#include "engine/suites/SuiteResults.h"

#include <chrono>
#include <filesystem>

namespace ps {

nlohmann::json SuiteRunner::runOne(const nlohmann::json& config, const std::function<void(Session&)>& onSession) {
  Session session(Config::fromJson(config, "suite"), store_);
  session.stopWhen(&cancelled_);
  if (onSession) onSession(session);
  return session.run();
}

namespace {

using Clock = std::chrono::steady_clock;

// A run's Finish event, from its summary.
void fillFinish(SuiteRunEvent& e, nlohmann::json summary, Clock::time_point started) {
  e.kind = SuiteRunEvent::Kind::Finish;
  e.summary = std::move(summary);
  e.run_id = e.summary.value(summary_key::kRunId, int64_t(0));
  e.status = e.summary.value(summary_key::kStatus, std::string());
  e.reason = e.summary.value(summary_key::kReason, std::string());
  e.seconds = std::chrono::duration<double>(Clock::now() - started).count();
}

}  // namespace

void SuiteRunner::prepare(const Suite& suite, bool quick, const Listener& notify,
                          const std::function<void(Session&)>& onSession) {
  for (const auto& step : suite.prepare) {
    if (cancelled()) return;
    const std::string& creates = step.output(quick);
    if (std::filesystem::exists(creates)) continue;
    SuiteRunEvent e;
    e.kind = SuiteRunEvent::Kind::Prepare;
    e.reason = step.preset + " creates " + creates;
    notify(e);
    // The run writes its checkpoint beside the target and it is renamed only once the run finished: a stopped or
    // failed prepare run never leaves a half-trained file that later suites would take for the real one.
    const std::string partial = std::filesystem::absolute(creates).string() + ".partial";
    nlohmann::json config = planPrepare(suite, step, quick);
    config["run"]["checkpoint_file"] = partial;
    const auto t0 = Clock::now();
    fillFinish(e, runOne(config, onSession), t0);
    std::error_code ec;
    if (e.status == run_status::kFinished && std::filesystem::exists(partial))
      std::filesystem::rename(partial, creates, ec);
    else
      std::filesystem::remove(partial, ec);
    notify(e);
    if (cancelled()) return;
    if (e.status != run_status::kFinished || !std::filesystem::exists(creates))
      throw ConfigError(suite.path + ": the prepare step " + step.preset + " ended " + e.status +
                        (e.reason.empty() ? "" : " (" + e.reason + ")") + " without creating " + creates +
                        (ec ? " (" + ec.message() + ")" : ""));
  }
}

bool SuiteRunner::reuse(const PlannedRun& p, SuiteRunEvent& e) {
  // Re-read every time: another process may have finished it meanwhile.
  const std::string version = codeVersion();
  const auto done = finishedRunsByIdentity(*store_, anyVersion_ ? nullptr : &version);
  if (const auto it = done.find(p.identity); it != done.end()) {
    e.kind = SuiteRunEvent::Kind::Skip;
    e.run_id = it->second.id;
    e.status = it->second.status;
    return true;
  }
  if (!anyVersion_) {
    const auto any = finishedRunsByIdentity(*store_);
    if (const auto other = any.find(p.identity); other != any.end())
      e.reason = "run " + std::to_string(other->second.id) + " has these settings but was made by code " +
                 other->second.code_version + ", not " + version + "; --any-version would reuse it";
  }
  return false;
}

SuiteOutcome SuiteRunner::run(const Suite& suite, int seeds, const SuiteScale& scale, const Listener& listener,
                              const std::function<void(Session&)>& onSession) {
  const auto plan = planSuite(suite, seeds, scale);  // every configuration is checked before anything runs
  const Listener notify = [&](const SuiteRunEvent& e) {
    if (listener) listener(e);
  };
  prepare(suite, scale.quick, notify, onSession);
  SuiteOutcome out;
  for (size_t i = 0; i < plan.size() && !cancelled(); ++i) {
    const PlannedRun& p = plan[i];
    SuiteRunEvent e;
    e.index = int(i + 1);
    e.total = int(plan.size());
    e.variant = p.variant;
    e.seed = p.seed;
    if (reuse(p, e)) {
      ++out.skipped;
      notify(e);
      continue;
    }
    e.kind = SuiteRunEvent::Kind::Start;
    notify(e);
    const auto t0 = Clock::now();
    fillFinish(e, runOne(p.config, onSession), t0);
    ++out.ran;
    if (!run_status::isResult(e.status)) ++out.unsuccessful;
    notify(e);
  }
  out.cancelled = cancelled();
  return out;
}

}  // namespace ps
