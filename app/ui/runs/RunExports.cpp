#include "app/ui/runs/RunExports.h"
#include "engine/runs/trace/StepTimelines.h"
#include "engine/runs/config/BoundedJson.h"
#include "engine/runs/store/RunCsv.h"
#include "engine/tensorboard/TensorBoardExport.h"

#include <QSaveFile>

#include <nlohmann/json.hpp>
#include <sstream>

namespace ps::ui {

namespace {

// Writes atomically (a half-written file never replaces a good one).
QString writeFile(const QString& path, const std::string& bytes) {
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly))
    return QStringLiteral("Could not write %1: %2. Choose a folder you can write to.").arg(path, file.errorString());
  file.write(bytes.data(), qint64(bytes.size()));
  if (!file.commit())
    return QStringLiteral("Could not write %1: %2. Check the free space and permissions.")
        .arg(path, file.errorString());
  return QString();
}

QString storeError(int64_t runId, const std::exception& e) {
  return QStringLiteral("Could not read run %1: %2").arg(runId).arg(QString::fromStdString(e.what()));
}

}  // namespace

QString exportRunCsv(const RunStore& store, int64_t runId, const QString& path) {
  std::ostringstream out;
  try {
    writeRunCsv(store, runId, out);
  } catch (const std::exception& e) {
    return storeError(runId, e);
  }
  return writeFile(path, out.str());
}

QString exportRunTrace(const RunStore& store, int64_t runId, const QString& path) {
  std::ostringstream out;
  try {
    writeChromeTrace(store, runId, TraceExport{}, out);
  } catch (const TraceError& e) {
    return QStringLiteral("Run %1 has no timeline to export: %2").arg(runId).arg(QString::fromStdString(e.what()));
  } catch (const std::exception& e) {
    return storeError(runId, e);
  }
  return writeFile(path, out.str());
}

QString exportRunConfig(const RunStore& store, int64_t runId, const QString& path) {
  std::string configText;
  try {
    auto info = store.run(runId);
    if (!info) return QStringLiteral("Run %1 is no longer in the store; refresh the runs table.").arg(runId);
    configText = info->config_json;
  } catch (const std::exception& e) {
    return storeError(runId, e);
  }
  const auto config = parseJsonOrDiscarded(configText);
  if (config.is_discarded() || !config.is_object())
    return QStringLiteral("Run %1 has no readable config in the store, so there is nothing to export.").arg(runId);
  return writeFile(path, config.dump(2) + "\n");
}

QString exportRunsTensorBoard(const RunStore& store, const QList<qint64>& runIds, const QString& dir) {
  QStringList errors;
  for (qint64 id : runIds) {
    try {
      tensorboard::exportRun(store, id, dir.toStdString());
    } catch (const std::exception& e) {
      errors << QStringLiteral("Run %1: %2").arg(id).arg(QString::fromStdString(e.what()));
    }
  }
  return errors.join(QLatin1Char('\n'));
}

}  // namespace ps::ui
