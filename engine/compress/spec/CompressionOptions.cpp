#include "engine/compress/spec/CompressionOptions.h"

#include "engine/compress/spec/Catalogue.h"

#include <algorithm>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace ps {
CompressionOptions::CompressionOptions() {
  eachField(*this, [](const char* name, auto& field) {
    if (const OptionSpec* spec = catalogue::option(name)) field = spec->fallback.get<std::decay_t<decltype(field)>>();
  });
}

bool CompressionOptions::hasField(const std::string& name) {
  static const std::vector<std::string> fields = [] {
    std::vector<std::string> names;
    CompressionOptions o;
    eachField(o, [&](const char* f, const auto&) { names.emplace_back(f); });
    return names;
  }();
  return std::find(fields.begin(), fields.end(), name) != fields.end();
}

bool CompressionOptions::sparse() const {
  const MethodSpec* m = catalogue::codec(method);
  return m && m->sparse;
}

bool CompressionOptions::adaptsWithOwnCompressors() const {
  const MethodSpec* m = catalogue::controller(adapt);
  return m && m->ownCompressors;
}

bool CompressionOptions::keepsCompensationOf(const CompressionOptions& before) const {
  if (feedback != before.feedback || adapt != before.adapt || adaptsWithOwnCompressors()) return false;
  const MethodSpec* now = catalogue::codec(method);
  const MethodSpec* was = catalogue::codec(before.method);
  return now && was && now->sparse == was->sparse;
}

bool CompressionOptions::adaptsOnNorm() const {
  const MethodSpec* m = catalogue::controller(adapt);
  return m && m->measuresNorm;
}

const nlohmann::json& CompressionOptions::value(const std::string& option) const {
  auto it = extra.find(option);
  if (it != extra.end()) return it->second;
  const OptionSpec* spec = catalogue::option(option);
  if (!spec) throw std::invalid_argument("no compression option is called '" + option + "'");
  return spec->fallback;
}

nlohmann::json CompressionOptions::toJson() const {
  nlohmann::json j = nlohmann::json::object();
  eachField(*this, [&](const char* name, const auto& field) { j[name] = field; });
  for (const auto& o : catalogue::options())
    if (!hasField(o.name)) j[o.name] = value(o.name);
  return j;
}

CompressionOptions CompressionOptions::fromJson(const nlohmann::json& j, CompressionOptions o) {
  eachField(o, [&](const char* name, auto& field) { field = j.value(name, field); });
  for (const auto& spec : catalogue::options())
    if (!hasField(spec.name) && j.contains(spec.name)) o.extra[spec.name] = j.at(spec.name);
  return o;
}

}  // namespace ps
