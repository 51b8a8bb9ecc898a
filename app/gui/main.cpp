// pipesqueeze: the desktop lab. With no arguments it opens on the last (or the default) preset, ready to start;
// `pipesqueeze --preset FILE --start` opens a preset and starts it at once.
#include "app/ui/MainWindow.h"
#include "app/ui/SessionBridge.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QMessageBox>
#include <QTimer>

#include <cstdio>

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setApplicationName(QStringLiteral("pipesqueeze"));
  QApplication::setOrganizationName(QStringLiteral("PipeSqueeze"));
  QApplication::setApplicationDisplayName(QStringLiteral("PipeSqueeze"));
  QApplication::setApplicationVersion(QStringLiteral(PIPESQUEEZE_VERSION));
  QApplication::setDesktopFileName(QStringLiteral("pipesqueeze"));
  QApplication::setWindowIcon(QIcon(QStringLiteral(":/icons/pipesqueeze.svg")));

  QCommandLineParser cli;
  cli.setApplicationDescription(QStringLiteral("PipeSqueeze: communication compression in pipeline-parallel training"));
  cli.addHelpOption();
  cli.addVersionOption();
  const QCommandLineOption preset(QStringLiteral("preset"), QStringLiteral("Open this preset file."), QStringLiteral("FILE"));
  const QCommandLineOption start(QStringLiteral("start"), QStringLiteral("Start the preset at once."));
  const QCommandLineOption store(QStringLiteral("store"), QStringLiteral("Run store file (default: XDG data folder)."),
                                 QStringLiteral("FILE"));
  const QCommandLineOption quitAfter(QStringLiteral("quit-when-done"),
                                     QStringLiteral("Quit when the started run ends (scripted demos)."));
  cli.addOptions({preset, start, store, quitAfter});
  cli.process(app);

  ps::ui::MainWindowOptions options;
  options.storePath = cli.value(store);
  options.presetPath = cli.value(preset);
  std::unique_ptr<ps::ui::MainWindow> window;
  try {
    window = std::make_unique<ps::ui::MainWindow>(options);
  } catch (const std::exception& e) {
    const QString message = QString::fromUtf8(e.what());
    std::fprintf(stderr, "pipesqueeze: %s\n", e.what());
    QMessageBox::critical(nullptr, QStringLiteral("PipeSqueeze"),
                          QStringLiteral("PipeSqueeze could not open its run store:\n%1").arg(message));
    return 2;
  }
  window->show();
  if (!window->startupError().isEmpty()) {
    std::fprintf(stderr, "pipesqueeze: %s\n", qPrintable(window->startupError()));
    if (cli.isSet(quitAfter)) return 2;
    // Shown once the window is up, so it is a dialog in front of it rather than a line in the status bar.
    QTimer::singleShot(0, window.get(), [&] {
      QMessageBox::warning(window.get(), QStringLiteral("PipeSqueeze"),
                           QStringLiteral("%1\n\nThe default preset is loaded instead.").arg(window->startupError()));
    });
  } else if (cli.isSet(start)) {
    QTimer::singleShot(0, window.get(), [&] {
      const QString error = window->startRun();
      if (error.isEmpty()) return;
      std::fprintf(stderr, "pipesqueeze: %s\n", qPrintable(error));
      if (cli.isSet(quitAfter)) QApplication::exit(2);
    });
  }
  // Scripted use: quit when the run ends, with the CLI's exit codes (0 finished, 1 anything else).
  if (cli.isSet(quitAfter)) {
    // Closing the window stops the run; the app quits when the run has ended, with the run's exit code.
    QApplication::setQuitOnLastWindowClosed(false);
    QObject::connect(&app, &QGuiApplication::lastWindowClosed, &app, [&] {
      if (!window->bridge()->running()) QApplication::exit(1);
    });
    QObject::connect(window->bridge(), &ps::ui::SessionBridge::runEnded, &app,
                     [](const QString& status) { QApplication::exit(status == QLatin1String("finished") ? 0 : 1); });
    QObject::connect(window->bridge(), &ps::ui::SessionBridge::startFailed, &app, [](const QString& message) {
      std::fprintf(stderr, "pipesqueeze: %s\n", qPrintable(message));
      QApplication::exit(2);
    });
  }
  return app.exec();
}
