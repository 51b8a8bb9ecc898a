#include "engine/suites/SuiteRunner.h"

#include "engine/runs/CodeVersion.h"
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
    // The run writes its checkpoint beside the target and it is renamed only once the run finished: a stopped or
    // failed prepare run never leaves a half-trained file that later suites would take for the real one.
    const std::string partial = std::filesystem::absolute(creates).string() + ".partial";
    nlohmann::json config = planPrepare(suite, step, quick);
    config["run"]["checkpoint_file"] = partial;
    const auto t0 = Clock::now();
    e.summary = runOne(config, onSession);
    e.kind = SuiteRunEvent::Kind::Finish;
    e.run_id = e.summary.value("run_id", int64_t(0));
    e.status = e.summary.value("status", std::string());
    e.reason = e.summary.value("reason", std::string());
    e.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    std::error_code ec;
    if (e.status == "finished" && std::filesystem::exists(partial)) std::filesystem::rename(partial, creates, ec);
    else std::filesystem::remove(partial, ec);
    notify(e);
    if (cancelled()) break;
    if (e.status != "finished" || !std::filesystem::exists(creates))
      throw ConfigError(suite.path + ": the prepare step " + step.preset + " ended " + e.status +
                        (e.reason.empty() ? "" : " (" + e.reason + ")") + " without creating " + creates +
                        (ec ? " (" + ec.message() + ")" : ""));
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
    // Re-read every time: another process may have finished it meanwhile.
    const std::string version = codeVersion();
    const auto done = finishedRunsByIdentity(*store_, anyVersion_ ? nullptr : &version);
    if (const auto it = done.find(p.identity); it != done.end()) {
      e.kind = SuiteRunEvent::Kind::Skip;
      e.run_id = it->second.id;
      e.status = it->second.status;
      ++out.skipped;
      notify(e);
      continue;
    }
    e.kind = SuiteRunEvent::Kind::Start;
    if (!anyVersion_) {
      const auto any = finishedRunsByIdentity(*store_);
      if (const auto other = any.find(p.identity); other != any.end())
        e.reason = "run " + std::to_string(other->second.id) + " has these settings but was made by code " +
                   other->second.code_version + ", not " + version + "; --any-version would reuse it";
    }
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
