#include "app/ui/charts/ExportSettings.h"

#include <QDir>
#include <QFileInfo>
#include <QSettings>
#include <QStandardPaths>

#include <algorithm>

namespace ps::ui::exports {

namespace {
QString key(const QString& kind) {
  return QStringLiteral("exports/folder/") + kind;
}
}  // namespace

QString folder(const QString& kind) {
  const QString saved = QSettings().value(key(kind)).toString();
  if (!saved.isEmpty() && QFileInfo(saved).isDir()) return saved;
  const auto where =
      kind == QLatin1String("charts") ? QStandardPaths::PicturesLocation : QStandardPaths::DocumentsLocation;
  const QString standard = QStandardPaths::writableLocation(where);
  return standard.isEmpty() ? QDir::homePath() : standard;
}

void rememberFolder(const QString& kind, const QString& path) {
  if (path.isEmpty()) return;
  const QFileInfo info(path);
  QSettings().setValue(key(kind), info.isDir() ? info.absoluteFilePath() : info.absolutePath());
}

QString suggestedPath(const QString& kind, const QString& name) {
  return QDir(folder(kind)).filePath(name);
}

int pngScale() {
  return std::clamp(QSettings().value(QStringLiteral("exports/pngScale"), 2).toInt(), 1, 3);
}

void setPngScale(int scale) {
  QSettings().setValue(QStringLiteral("exports/pngScale"), std::clamp(scale, 1, 3));
}

}  // namespace ps::ui::exports
