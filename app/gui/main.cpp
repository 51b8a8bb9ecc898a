// pipesqueeze: the desktop lab. With no arguments it opens on the last (or the default) preset, ready to start;
// `pipesqueeze FILE.json` (or `--preset FILE|NAME`) opens a preset, and `--start` starts it at once.
#include "app/ui/MainWindow.h"
#include "app/ui/SessionBridge.h"
#include "engine/core/RunSummary.h"
#include "engine/errors/ConfigError.h"
#include "engine/runs/config/PresetSearch.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QFileInfo>
#include <QMessageBox>
#include <QTimer>

#include <cstdio>
#include <optional>

namespace {

struct GuiOptions {
  ps::ui::MainWindowOptions window;
  bool start = false, quitWhenDone = false;
};

void fail(const QString& message) {
  std::fprintf(stderr, "pipesqueeze: %s\n", qPrintable(message));
}

// The command line; nothing when it is wrong (the reason is printed, the exit code is 2).
std::optional<GuiOptions> parseCommandLine(const QApplication& app) {
  QCommandLineParser cli;
  cli.setApplicationDescription(QStringLiteral("PipeSqueeze: communication compression in pipeline-parallel training"));
  cli.addHelpOption();
  cli.addVersionOption();
  cli.addPositionalArgument(QStringLiteral("FILE"), QStringLiteral("A preset file to open (as --preset does)."),
                            QStringLiteral("[FILE]"));
  const QCommandLineOption preset(QStringLiteral("preset"),
                                  QStringLiteral("Open this preset: a file, or a name as pipesqueeze-cli finds it."),
                                  QStringLiteral("FILE|NAME"));
  const QCommandLineOption start(QStringLiteral("start"), QStringLiteral("Start the preset at once."));
  const QCommandLineOption store(QStringLiteral("store"), QStringLiteral("Run store file (default: XDG data folder)."),
                                 QStringLiteral("FILE"));
  const QCommandLineOption readOnly(
      QStringLiteral("read-only"), QStringLiteral("View the run store without writing to it (no run can be started)."));
  const QCommandLineOption quitAfter(QStringLiteral("quit-when-done"),
                                     QStringLiteral("Quit when the started run ends (scripted demos)."));
  cli.addOptions({preset, start, store, readOnly, quitAfter});
  cli.process(app);

  GuiOptions o;
  o.window.storePath = cli.value(store);
  o.window.readOnlyStore = cli.isSet(readOnly);
  o.window.presetPath = cli.value(preset);
  o.start = cli.isSet(start);
  o.quitWhenDone = cli.isSet(quitAfter);
  const QStringList files = cli.positionalArguments();
  if (files.size() > 1) {
    fail(QStringLiteral("one preset file at a time, got %1: %2").arg(files.size()).arg(files.join(QLatin1Char(' '))));
    return std::nullopt;
  }
  if (!files.isEmpty() && !o.window.presetPath.isEmpty()) {
    fail(QStringLiteral("a preset given twice (%1 and --preset %2); give one").arg(files[0], o.window.presetPath));
    return std::nullopt;
  }
  if (!files.isEmpty()) o.window.presetPath = files[0];
  if (!o.window.presetPath.isEmpty() && !QFileInfo(o.window.presetPath).isFile()) {
    // A name is looked up where the CLI looks. What is found by neither way is left as given: the window reports it
    // as it reports any preset it cannot open (a dialog when shown, exit 2 when scripted).
    try {
      o.window.presetPath = QString::fromStdString(ps::resolvePreset(o.window.presetPath.toStdString()));
    } catch (const ps::ConfigError&) {
    }
  }
  return o;
}

// Scripted use: quit when the run ends, with the CLI's exit codes (0 finished, 1 anything else, 2 not started).
// Closing the window stops the run; the app quits when the run has ended.
void quitWhenRunEnds(QApplication& app, ps::ui::MainWindow* window) {
  QApplication::setQuitOnLastWindowClosed(false);
  QObject::connect(&app, &QGuiApplication::lastWindowClosed, &app, [window] {
    if (!window->bridge()->running()) QApplication::exit(1);
  });
  QObject::connect(window->bridge(), &ps::ui::SessionBridge::runEnded, &app, [](const QString& status) {
    QApplication::exit(status == QLatin1String(ps::run_status::kFinished) ? 0 : 1);
  });
  QObject::connect(window->bridge(), &ps::ui::SessionBridge::startFailed, &app, [](const QString& message) {
    fail(message);
    QApplication::exit(2);
  });
}

}  // namespace

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setApplicationName(QStringLiteral("pipesqueeze"));
  QApplication::setOrganizationName(QStringLiteral("PipeSqueeze"));
  QApplication::setApplicationDisplayName(QStringLiteral("PipeSqueeze"));
  QApplication::setApplicationVersion(QStringLiteral(PIPESQUEEZE_VERSION));
  QApplication::setDesktopFileName(QStringLiteral("pipesqueeze"));
  QApplication::setWindowIcon(QIcon(QStringLiteral(":/icons/pipesqueeze.svg")));

  const std::optional<GuiOptions> options = parseCommandLine(app);
  if (!options) return 2;
  std::unique_ptr<ps::ui::MainWindow> window;
  try {
    window = std::make_unique<ps::ui::MainWindow>(options->window);
  } catch (const std::exception& e) {
    const QString message = QString::fromUtf8(e.what());
    fail(message);
    QMessageBox::critical(nullptr, QStringLiteral("PipeSqueeze"),
                          QStringLiteral("PipeSqueeze could not open its run store:\n%1").arg(message));
    return 2;
  }
  window->show();
  if (!window->startupError().isEmpty()) {
    fail(window->startupError());
    if (options->quitWhenDone) return 2;
    // Shown once the window is up, so it is a dialog in front of it rather than a line in the status bar.
    QTimer::singleShot(0, window.get(), [&] {
      QMessageBox::warning(window.get(), QStringLiteral("PipeSqueeze"),
                           QStringLiteral("%1\n\nThe default preset is loaded instead.").arg(window->startupError()));
    });
  } else if (options->start) {
    QTimer::singleShot(0, window.get(), [&] {
      const QString error = window->startRun();
      if (error.isEmpty()) return;
      fail(error);
      if (options->quitWhenDone) QApplication::exit(2);
    });
  }
  if (options->quitWhenDone) quitWhenRunEnds(app, window.get());
  return app.exec();
}
