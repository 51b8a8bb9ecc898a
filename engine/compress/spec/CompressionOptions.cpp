#include "engine/compress/spec/CompressionOptions.h"

#include "engine/compress/spec/Catalogue.h"

#include <algorithm>
#include <stdexcept>

namespace ps {
namespace {

// The options CompressionOptions has fields for; the catalogue's others live in `extra`.
bool hasField(const std::string& name) {
  static const char* const fields[] = {"method",    "k",         "bits",         "rounding", "scale",   "bucket",
                                       "range",     "levels",    "value_bits",   "trim",     "scaled",  "sample",
                                       "feedback",  "alpha",     "p",            "adapt",    "theta_min",
                                       "theta_max", "adapt_policy", "epsilon",   "omega",    "window",  "eta"};
  return std::any_of(std::begin(fields), std::end(fields), [&](const char* f) { return name == f; });
}

}  // namespace

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
  nlohmann::json j = {{"method", method}, {"k", k},       {"bits", bits},       {"rounding", rounding},     {"scale", scale},
          {"bucket", bucket}, {"range", range}, {"levels", levels}, {"value_bits", value_bits}, {"trim", trim},
          {"scaled", scaled}, {"sample", sample}, {"feedback", feedback}, {"alpha", alpha},     {"p", p},
          {"adapt", adapt},   {"theta_min", theta_min}, {"theta_max", theta_max}, {"adapt_policy", adapt_policy},
          {"epsilon", epsilon}, {"omega", omega}, {"window", window}, {"eta", eta}};
  for (const auto& o : catalogue::options())
    if (!hasField(o.name)) j[o.name] = value(o.name);
  return j;
}

CompressionOptions CompressionOptions::fromJson(const nlohmann::json& j, CompressionOptions o) {
  o.method = j.value("method", o.method);
  o.k = j.value("k", o.k);
  o.bits = j.value("bits", o.bits);
  o.rounding = j.value("rounding", o.rounding);
  o.scale = j.value("scale", o.scale);
  o.bucket = j.value("bucket", o.bucket);
  o.range = j.value("range", o.range);
  o.levels = j.value("levels", o.levels);
  o.value_bits = j.value("value_bits", o.value_bits);
  o.trim = j.value("trim", o.trim);
  o.scaled = j.value("scaled", o.scaled);
  o.sample = j.value("sample", o.sample);
  o.feedback = j.value("feedback", o.feedback);
  o.alpha = j.value("alpha", o.alpha);
  o.p = j.value("p", o.p);
  o.adapt = j.value("adapt", o.adapt);
  o.theta_min = j.value("theta_min", o.theta_min);
  o.theta_max = j.value("theta_max", o.theta_max);
  o.adapt_policy = j.value("adapt_policy", o.adapt_policy);
  o.epsilon = j.value("epsilon", o.epsilon);
  o.omega = j.value("omega", o.omega);
  o.window = j.value("window", o.window);
  o.eta = j.value("eta", o.eta);
  for (const auto& spec : catalogue::options())
    if (!hasField(spec.name) && j.contains(spec.name)) o.extra[spec.name] = j.at(spec.name);
  return o;
}

}  // namespace ps
