// CompareView's exports: every chart as PNG, SVG or PDF, and the CSV of the visible range.
#include "app/ui/runs/CompareView.h"

#include <QDir>
#include <QFileDialog>

namespace ps::ui {

int CompareView::exportAll(const QString& dir, ChartFormat format) {
  if (!QDir().mkpath(dir)) return 0;
  int written = 0;
  for (size_t i = 0; i < plots_.size(); ++i) {
    const QString name = chartFileStem(charts_[i].title) + QLatin1Char('.') + chartSuffix(format);
    if (plots_[i]->exportChart(QDir(dir).filePath(name), format)) ++written;
  }
  return written;
}

QString CompareView::exportVisibleCsv(const QString& path) const {
  std::vector<CsvChart> charts;
  for (size_t i = 0; i < charts_.size(); ++i) charts.push_back({&charts_[i], plots_[i]->xRange()});
  return writeVisibleCsv(path, charts, visibleRuns(), options_.axis);
}

void CompareView::exportAllDialog(ChartFormat format) {
  const QString dir =
      QFileDialog::getExistingDirectory(this, tr("Export every chart as %1").arg(chartSuffix(format).toUpper()));
  if (dir.isEmpty()) return;
  const int n = exportAll(dir, format);
  if (n < int(plots_.size()))
    Q_EMIT errorOccurred(tr("Only %1 of %2 charts could be written to %3; choose a folder you can write to.")
                             .arg(n)
                             .arg(plots_.size())
                             .arg(dir));
  else
    Q_EMIT statusMessage(tr("%1 charts exported to %2").arg(n).arg(dir));
}

void CompareView::exportVisibleCsvDialog() {
  const QString path = QFileDialog::getSaveFileName(this, tr("Export the visible range as CSV"),
                                                    QStringLiteral("compare.csv"), tr("CSV files (*.csv)"));
  const QString error = path.isEmpty() ? QString() : exportVisibleCsv(path);
  if (!error.isEmpty())
    Q_EMIT errorOccurred(error);
  else if (!path.isEmpty())
    Q_EMIT statusMessage(tr("Visible range exported to %1").arg(path));
}

}  // namespace ps::ui
