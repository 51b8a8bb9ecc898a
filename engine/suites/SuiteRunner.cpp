#include "engine/suites/SuiteRunner.h"

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

SuiteOutcome SuiteRunner::run(const Suite& suite, int seeds, bool quick, const Listener& listener,
                              const std::function<void(Session&)>& onSession) {
  const auto plan = planSuite(suite, seeds, quick);  // every configuration is checked before anything runs
  SuiteOutcome out;
  auto notify = [&](const SuiteRunEvent& e) {
    if (listener) listener(e);
  };
  using Clock = std::chrono::steady_clock;
  for (const auto& step : suite.prepare) {
    if (cancelled()) break;
    const std::string& creates = step.output(quick);
    if (std::filesystem::exists(creates)) continue;
    SuiteRunEvent e;
    e.kind = SuiteRunEvent::Kind::Prepare;
    e.reason = step.preset + " creates " + creates;
    notify(e);
    const auto t0 = Clock::now();
    e.summary = runOne(planPrepare(suite, step, quick), onSession);
    e.kind = SuiteRunEvent::Kind::Finish;
    e.run_id = e.summary.value("run_id", int64_t(0));
    e.status = e.summary.value("status", std::string());
    e.reason = e.summary.value("reason", std::string());
    e.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    notify(e);
    if (e.status != "finished" || !std::filesystem::exists(creates))
      throw ConfigError(suite.path + ": the prepare step " + step.preset + " ended " + e.status +
                        (e.reason.empty() ? "" : " (" + e.reason + ")") + " without creating " + creates);
  }
  int index = 0;
  for (const auto& p : plan) {
    ++index;
    if (cancelled()) break;
    SuiteRunEvent e;
    e.index = index;
    e.total = int(plan.size());
    e.variant = p.variant;
    e.seed = p.seed;
    const auto done = finishedRunsByIdentity(*store_);  // re-read: another process may have finished it meanwhile
    if (const auto it = done.find(p.identity); it != done.end()) {
      e.kind = SuiteRunEvent::Kind::Skip;
      e.run_id = it->second.id;
      e.status = it->second.status;
      ++out.skipped;
      notify(e);
      continue;
    }
    e.kind = SuiteRunEvent::Kind::Start;
    notify(e);
    const auto t0 = Clock::now();
    e.summary = runOne(p.config, onSession);
    e.kind = SuiteRunEvent::Kind::Finish;
    e.run_id = e.summary.value("run_id", int64_t(0));
    e.status = e.summary.value("status", std::string());
    e.reason = e.summary.value("reason", std::string());
    e.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    ++out.ran;
    if (e.status != "finished" && e.status != "diverged") ++out.unsuccessful;
    notify(e);
  }
  out.cancelled = cancelled();
  return out;
}

}  // namespace ps
