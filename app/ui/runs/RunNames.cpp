#include "app/ui/runs/RunNames.h"

#include "app/ui/runs/SettingsDiffModel.h"

#include <QStringList>

#include <set>
#include <string>

namespace ps::ui {

namespace {

constexpr int kMostSettings = 3;  // settings named in a display name before "+N"

QString fallbackName(const RunSeries& run) {
  const QString id = QStringLiteral("#%1").arg(run.info.id);
  return run.info.name.empty() ? id : id + QLatin1Char(' ') + QString::fromStdString(run.info.name);
}

// The value of a "prefix:value" tag ("variant:topk-ef" -> "topk-ef"), or empty.
QString tagValue(const RunSeries& run, const std::string& prefix) {
  for (const std::string& tag : splitTags(run.info.tags))
    if (tag.size() > prefix.size() && tag.compare(0, prefix.size(), prefix) == 0)
      return QString::fromStdString(tag.substr(prefix.size()));
  return QString();
}

// What a run is, as labelled facets in the order a name lists them: suite, variant, seed, then every setting.
struct Facets {
  std::vector<std::pair<QString, QString>> identity;  // (facet, its text in a name)
  std::map<QString, QString> settings;                // flattened config key -> value text
};

Facets facetsOf(const RunSeries& run) {
  Facets f;
  const QString suite = tagValue(run, "suite:"), variant = tagValue(run, "variant:");
  if (!suite.isEmpty()) f.identity.push_back({QStringLiteral("suite"), suite});
  if (!variant.isEmpty()) f.identity.push_back({QStringLiteral("variant"), variant});
  if (run.config.is_object() && run.config.contains("train") && run.config["train"].contains("seed"))
    f.identity.push_back({QStringLiteral("seed"), QStringLiteral("seed %1").arg(settingText(
                                                      QStringLiteral("train.seed"), run.config["train"]["seed"]))});
  for (auto& [key, value] : SettingsDiffModel::flatten(run.config))
    if (!key.startsWith(QLatin1String("run.")) && key != QLatin1String("train.seed")) f.settings[key] = value;
  return f;
}

QString facet(const std::vector<std::pair<QString, QString>>& identity, const QString& name) {
  for (const auto& [n, text] : identity)
    if (n == name) return text;
  return QString();
}

}  // namespace

RunNames displayNames(const std::vector<const RunSeries*>& runs) {
  RunNames names;
  std::vector<Facets> facets;
  bool allSuiteRuns = !runs.empty();
  for (const RunSeries* r : runs) {
    facets.push_back(facetsOf(*r));
    allSuiteRuns = allSuiteRuns && !facet(facets.back().identity, QStringLiteral("variant")).isEmpty();
  }
  // Facets and settings whose values are not the same for every run.
  const auto differs = [&](const auto& valueOf) {
    std::set<QString> seen;
    for (const Facets& f : facets) seen.insert(valueOf(f));
    return seen.size() > 1;
  };
  std::vector<QString> identity;
  for (const char* name : {"suite", "variant", "seed"})
    if (differs([&](const Facets& f) { return facet(f.identity, QString::fromLatin1(name)); }))
      identity.push_back(QString::fromLatin1(name));
  std::vector<QString> settings;
  if (!allSuiteRuns) {  // a suite run's variant already says how its settings differ
    std::set<QString> keys;
    for (const Facets& f : facets)
      for (const auto& entry : f.settings) keys.insert(entry.first);
    for (const QString& key : keys)
      if (differs([&](const Facets& f) {
            const auto it = f.settings.find(key);
            return it == f.settings.end() ? QStringLiteral("\x01") : it->second;
          }))
        settings.push_back(key);
  }
  for (size_t i = 0; i < runs.size(); ++i) {
    QStringList parts, groupParts, settingParts;  // a group's name leaves out the seed
    for (const QString& name : identity)
      if (const QString text = facet(facets[i].identity, name); !text.isEmpty()) {
        parts << text;
        if (name != QLatin1String("seed")) groupParts << text;
      }
    int named = 0;
    for (const QString& key : settings) {
      const auto it = facets[i].settings.find(key);
      if (it == facets[i].settings.end()) continue;
      if (named++ < kMostSettings) settingParts << compactKey(key) + QLatin1Char(' ') + it->second;
    }
    if (named > kMostSettings) settingParts << QStringLiteral("+%1").arg(named - kMostSettings);
    parts << settingParts;
    groupParts << settingParts;
    const qint64 id = runs[i]->info.id;
    const auto join = [&](const QStringList& p) {
      return p.isEmpty() ? fallbackName(*runs[i]) : QStringLiteral("#%1 · ").arg(id) + p.join(QStringLiteral(" · "));
    };
    names.runs[id] = join(parts);
    names.groups[id] = join(groupParts);
  }
  return names;
}

QString RunNames::of(const RunSeries& run) const {
  const auto it = runs.find(run.info.id);
  return it != runs.end() ? it->second : fallbackName(run);
}

QString RunNames::groupOf(const RunSeries& run) const {
  const auto it = groups.find(run.info.id);
  return it != groups.end() ? it->second : fallbackName(run);
}

}  // namespace ps::ui
