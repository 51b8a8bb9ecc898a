#include "app/report/OffscreenCharts.h"

#include "app/report/ReportCharts.h"

#include <QApplication>

#include <cstdio>
#include <memory>

namespace {

// Qt's offscreen platform warns on stderr about a runtime folder it does not need for drawing files.
void quietHandler(QtMsgType type, const QMessageLogContext&, const QString& message) {
  if (type == QtDebugMsg || type == QtInfoMsg || message.startsWith(QStringLiteral("QStandardPaths:"))) return;
  std::fprintf(stderr, "%s\n", qPrintable(message));
}

}  // namespace

namespace ps::report {

std::vector<bool> drawChartsOffscreen(const std::vector<ReportChart>& charts, const std::string& dir,
                                      std::string& why) {
  // Offscreen whatever display the session has: a report is files, never a window.
  static int argc = 3;
  static char arg0[] = "pipesqueeze", arg1[] = "-platform", arg2[] = "offscreen";
  static char* argv[] = {arg0, arg1, arg2, nullptr};
  const QtMessageHandler previous = qInstallMessageHandler(quietHandler);
  const bool own = QApplication::instance() == nullptr;
  std::unique_ptr<QApplication> app(own ? new QApplication(argc, argv) : nullptr);
  auto drawn = drawCharts(charts, dir);
  app.reset();
  qInstallMessageHandler(previous);
  for (bool d : drawn)
    if (!d) why = "a PNG file could not be written in " + dir + "/charts";
  return drawn;
}

}  // namespace ps::report
