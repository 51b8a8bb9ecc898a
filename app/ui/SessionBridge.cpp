#include "app/ui/SessionBridge.h"
#include "engine/core/RunSummary.h"

#include "engine/runs/config/Config.h"
#include "engine/runs/store/RunStore.h"
#include "engine/session/Session.h"

#include <QMetaObject>
#include <QPointer>

#include <chrono>

namespace ps::ui {

void registerTelemetryTypes() {
  qRegisterMetaType<ps::StepRecord>();
  qRegisterMetaType<ps::EvalRecord>();
  qRegisterMetaType<ps::HistogramRecord>();
  qRegisterMetaType<ps::EventRecord>();
  qRegisterMetaType<ps::StatusRecord>();
  qRegisterMetaType<ps::ProgressRecord>();
}

// Runs on the telemetry bus's dispatcher thread. Signals of an object living in the GUI thread, emitted from
// here, are queued: the values are copied into the event and handled by the GUI thread.
class SessionBridge::Sink final : public TelemetrySink {
 public:
  explicit Sink(SessionBridge* bridge) : bridge_(bridge) {}
  void consume(const Telemetry& item) override {
    if (auto s = std::get_if<StepRecord>(&item))
      Q_EMIT bridge_->stepArrived(*s);
    else if (auto e = std::get_if<EvalRecord>(&item))
      Q_EMIT bridge_->evalArrived(*e);
    else if (auto h = std::get_if<HistogramRecord>(&item))
      Q_EMIT bridge_->histogramArrived(*h);
    else if (auto pr = std::get_if<ProgressRecord>(&item))
      Q_EMIT bridge_->progressArrived(*pr);
    else if (auto ev = std::get_if<EventRecord>(&item)) {
      EventRecord copy = *ev;
      QMetaObject::invokeMethod(
          bridge_, [b = bridge_, copy] { b->onEvent(copy); }, Qt::QueuedConnection);
    } else if (auto st = std::get_if<StatusRecord>(&item)) {
      StatusRecord copy = *st;
      QMetaObject::invokeMethod(
          bridge_, [b = bridge_, copy] { b->onStatus(copy); }, Qt::QueuedConnection);
    }
  }

 private:
  SessionBridge* bridge_;  // outlives the sink: the bridge joins the session's thread before it goes
};

SessionBridge::SessionBridge(QString storePath, QObject* parent) : QObject(parent), storePath_(std::move(storePath)) {
  registerTelemetryTypes();
}

SessionBridge::~SessionBridge() {
  if (session_) {
    session_->requestStop();
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(3);
    while (threadDone_ && !*threadDone_ && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (threadDone_ && !*threadDone_) session_->abortLaunchedRanks();
  }
  join();
}

void SessionBridge::join() {
  if (thread_.joinable()) thread_.join();
  session_.reset();  // drains the bus: every queued record has been handed over
}

bool SessionBridge::setStorePath(const QString& path) {
  if (running()) return false;
  storePath_ = path;
  return true;
}

QString SessionBridge::start(const nlohmann::json& config) {
  if (running()) return tr("A run is in progress: stop it before starting another.");
  try {
    Config validated = Config::fromJson(config, "the settings panel");
    auto store = std::make_shared<RunStore>(storePath_.toStdString());
    store->reapOrphans();
    session_ = std::make_unique<Session>(validated, store);
    config_ = validated.json;
  } catch (const std::exception& e) {
    session_.reset();
    return QString::fromStdString(e.what());
  }
  session_->telemetry().addSink(std::make_shared<Sink>(this));
  runId_ = 0;
  paused_ = false;
  Session* session = session_.get();
  threadDone_ = std::make_shared<std::atomic<bool>>(false);
  thread_ = std::thread([this, session, done = threadDone_] {
    QString status, reason;
    bool started = true;
    try {
      const nlohmann::json summary = session->run();
      status = QString::fromStdString(summary.value(summary_key::kStatus, std::string(run_status::kFailed)));
      reason = QString::fromStdString(summary.value(summary_key::kReason, std::string()));
    } catch (const std::exception& e) {  // bad data or configuration found while preparing: nothing recorded
      status = QString::fromLatin1(run_status::kFailed);
      reason = QString::fromStdString(e.what());
      started = false;
    } catch (...) {  // nothing may leave a thread: std::terminate would take the window and its unsaved state
      status = QString::fromLatin1(run_status::kFailed);
      reason = QStringLiteral("the run ended with an error that is not a std::exception");
      started = false;
    }
    *done = true;
    QMetaObject::invokeMethod(
        this, [this, status, reason, started] { onThreadDone(status, reason, started); }, Qt::QueuedConnection);
  });
  return {};
}

void SessionBridge::onThreadDone(const QString& status, const QString& reason, bool started) {
  join();
  if (started)
    Q_EMIT runEnded(status, reason);
  else
    Q_EMIT startFailed(reason);
}

void SessionBridge::onStatus(const StatusRecord& status) {
  if (status.status == run_status::kRunning) {
    runId_ = status.run_id;
    Q_EMIT runStarted(runId_);
  }
}

void SessionBridge::onEvent(const EventRecord& event) {
  if (event.type() == EventKind::Setting && event.detail.contains("key")) {
    try {
      setConfigValue(config_, event.detail["key"].get<std::string>(), event.detail["to"]);
    } catch (const std::exception&) {
      // The session validated it already; a mismatch here only affects the displayed settings.
    }
  } else if (event.type() == EventKind::Pause) {
    paused_ = true;
  } else if (event.type() == EventKind::Resume) {
    paused_ = false;
  }
  Q_EMIT eventArrived(event);
}

void SessionBridge::pause() {
  if (session_) session_->post(Command::pause());
}
void SessionBridge::resume() {
  if (session_) session_->post(Command::resume());
}
void SessionBridge::stop() {
  if (session_) session_->requestStop();
}

QString SessionBridge::set(const QString& key, const nlohmann::json& value) {
  if (!session_ || !running()) return tr("No run in progress: the change applies to the next run.");
  try {
    session_->post(Command::set(key.toStdString(), value));
  } catch (const std::exception& e) {
    return QString::fromStdString(e.what());
  }
  return {};
}

}  // namespace ps::ui
