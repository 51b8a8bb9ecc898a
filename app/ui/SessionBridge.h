#pragma once
// ps::ui::SessionBridge: the GUI's handle on one training session. The session runs on its own thread; its
// telemetry arrives here as queued signals carrying value structs, so no engine thread ever touches a widget,
// and commands go back through the session's queue, applied at the next step boundary.
//
// With the Reproduce dialog (which runs a suite's sessions), the only GUI code that includes LibTorch headers (through
// Session.h); app/ui/runs and app/ui/charts never do.
#include "app/ui/TelemetryTypes.h"

#include <QObject>
#include <QString>

#include <atomic>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

namespace ps {
class Session;
class RunStore;
}  // namespace ps

namespace ps::ui {

class SessionBridge : public QObject {
  Q_OBJECT
 public:
  // Runs are recorded in the store at `storePath`.
  explicit SessionBridge(QString storePath, QObject* parent = nullptr);
  // Stops a running session and waits for it; ranks of a multi-process run that do not stop within a few seconds
  // are killed, so closing the window never waits for parallel.timeout_s.
  ~SessionBridge() override;

  bool running() const { return thread_.joinable(); }
  // Where the next run is recorded. Refused (false) while a run is going: it keeps writing where it started.
  bool setStorePath(const QString& path);
  const QString& storePath() const { return storePath_; }
  bool paused() const { return paused_; }
  qint64 runId() const { return runId_; }
  // The settings in force: the config the run started with, plus every change the session applied since.
  const nlohmann::json& config() const { return config_; }

  // Validates `config` and starts it on a background thread. Returns an error to show (empty: started).
  QString start(const nlohmann::json& config);
  void pause();
  void resume();
  void stop();
  // Asks the session to change a setting at its next step. Returns an error to show (empty: queued).
  QString set(const QString& key, const nlohmann::json& value);

 Q_SIGNALS:
  void runStarted(qint64 runId);
  void stepArrived(const ps::StepRecord& step);
  void evalArrived(const ps::EvalRecord& eval);
  void histogramArrived(const ps::HistogramRecord& histogram);
  void eventArrived(const ps::EventRecord& event);
  // An evaluation pass began or went on (not stored; its EvalRecord follows when it ends).
  void progressArrived(const ps::ProgressRecord& progress);
  // The run ended (finished, stopped, diverged or failed) and its thread is gone; summary as the CLI prints it.
  void runEnded(const QString& status, const QString& reason);
  // The run could not start: configuration or data problems, with what to do.
  void startFailed(const QString& message);

 private:
  class Sink;
  void onStatus(const ps::StatusRecord& status);
  void onEvent(const ps::EventRecord& event);
  void onThreadDone(const QString& status, const QString& reason, bool started);
  void join();

  QString storePath_;
  std::unique_ptr<Session> session_;
  std::thread thread_;
  std::shared_ptr<std::atomic<bool>> threadDone_;  // set by the thread as it ends (the destructor waits on it)
  nlohmann::json config_ = nlohmann::json::object();
  qint64 runId_ = 0;
  bool paused_ = false;
};

}  // namespace ps::ui
