#include "app/ui/runs/Units.h"

#include <cmath>

namespace ps::ui {

QString humanBytes(double b) {
  static const char* units[] = {"B", "KB", "MB", "GB", "TB", "PB"};
  int u = 0;
  while (std::abs(b) >= 1000 && u < 5) b /= 1000, ++u;
  return QString::number(b, 'f', u == 0 ? 0 : 1) + QLatin1Char(' ') + QLatin1String(units[u]);
}

QString humanDuration(double s) {
  if (s < 60) return QString::number(s, 'f', 1) + QStringLiteral(" s");
  const qint64 t = qint64(std::llround(s));
  if (t < 3600) return QStringLiteral("%1 m %2 s").arg(t / 60).arg(t % 60, 2, 10, QLatin1Char('0'));
  return QStringLiteral("%1 h %2 m").arg(t / 3600).arg((t % 3600) / 60, 2, 10, QLatin1Char('0'));
}

}  // namespace ps::ui
