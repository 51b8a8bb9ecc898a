// PlotWidget's context menu: the per-chart actions a user expects (save just this chart, log y, reset zoom).
#include "app/ui/charts/PlotWidget.h"

#include <QContextMenuEvent>
#include <QFileDialog>
#include <QMenu>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QToolTip>

#include <cmath>

namespace ps::ui {

QString chartFileStem(const QString& title) {
  QString stem = title.toLower();
  stem.replace(QRegularExpression(QStringLiteral("[^a-z0-9]+")), QStringLiteral("-"));
  while (stem.startsWith(QLatin1Char('-'))) stem.remove(0, 1);
  while (stem.endsWith(QLatin1Char('-'))) stem.chop(1);
  return stem.isEmpty() ? QStringLiteral("chart") : stem;
}

void PlotWidget::contextMenuEvent(QContextMenuEvent* event) {
  QMenu menu(this);
  QAction* save = menu.addAction(tr("Save Chart as PNG…"));
  QAction* log = menu.addAction(tr("Logarithmic y"));
  log->setCheckable(true);
  log->setChecked(logY());
  QAction* reset = menu.addAction(tr("Reset Zoom"));
  reset->setEnabled(xRange().has_value());
  QAction* chosen = menu.exec(event->globalPos());
  if (chosen == save) {
    const QString suggested = QStandardPaths::writableLocation(QStandardPaths::PicturesLocation) + QLatin1Char('/') +
                              chartFileStem(title()) + ".png";
    const QString path = QFileDialog::getSaveFileName(this, tr("Save chart"), suggested, tr("PNG images (*.png)"));
    if (!path.isEmpty() && !exportPng(path))
      QToolTip::showText(event->globalPos(), tr("Could not write %1: check the folder's permissions.").arg(path), this);
  } else if (chosen == log) {
    setLogY(log->isChecked());
  } else if (chosen == reset) {
    setXRange(std::nullopt);
    Q_EMIT xRangeChanged(std::nan(""), std::nan(""));  // linked charts reset too
  }
}

}  // namespace ps::ui
