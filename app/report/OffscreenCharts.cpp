#include "app/report/OffscreenCharts.h"

#include "app/report/ReportCharts.h"

#include <QApplication>

#include <cstdio>
#include <memory>

namespace ps::report {
namespace {

// Qt's offscreen platform warns on stderr about a runtime folder it does not need for drawing files.
void quietHandler(QtMsgType type, const QMessageLogContext&, const QString& message) {
  if (type == QtDebugMsg || type == QtInfoMsg || message.startsWith(QStringLiteral("QStandardPaths:"))) return;
  std::fprintf(stderr, "%s\n", qPrintable(message));
}

}  // namespace

std::string writeReportOffscreen(const SuiteResults& results, const std::string& dir, std::vector<bool>* drawn) {
  if (QApplication::instance()) return writeReport(results, dir, drawn);
  // Offscreen whatever display the session has: a report is files, never a window. QApplication keeps argc and
  // argv (and takes arguments out of them), so they live as long as it does.
  qputenv("QT_QPA_PLATFORM", "offscreen");
  const QtMessageHandler previous = qInstallMessageHandler(quietHandler);
  char name[] = "pipesqueeze";
  char* argv[] = {name, nullptr};
  int argc = 1;
  std::string path;
  {
    QApplication app(argc, argv);
    path = writeReport(results, dir, drawn);
  }
  qInstallMessageHandler(previous);
  return path;
}

}  // namespace ps::report
