#include "engine/suites/Suite.h"

#include "engine/runs/config/Config.h"
#include "engine/suites/SuiteMetrics.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <set>

namespace ps {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Reads one object's fields, refusing any it does not know, so a typo never silently changes a suite.
class Fields {
 public:
  Fields(const json& j, std::string where, const std::string& source)
      : j_(j), where_(std::move(where)), source_(source) {
    if (!j_.is_object()) fail("must be a JSON object");
  }
  [[noreturn]] void fail(const std::string& what, const std::string& field = "") const {
    throw ConfigError(source_ + ": " + where_ + (field.empty() ? "" : (where_.empty() ? "" : ".") + field) + " " +
                      what);
  }
  const json* find(const std::string& field) {
    seen_.insert(field);
    const auto it = j_.find(field);
    return it == j_.end() ? nullptr : &*it;
  }
  std::string text(const std::string& field, bool required, const std::string& fallback = "") {
    const json* v = find(field);
    if (!v) {
      if (required) fail("is missing (a string)", field);
      return fallback;
    }
    if (!v->is_string()) fail("must be a string, not " + v->dump(), field);
    if (required && v->get<std::string>().empty()) fail("must not be empty", field);
    return v->get<std::string>();
  }
  bool flag(const std::string& field, bool fallback) {
    const json* v = find(field);
    if (!v) return fallback;
    if (!v->is_boolean()) fail("must be true or false, not " + v->dump(), field);
    return v->get<bool>();
  }
  double number(const std::string& field, double fallback) {
    const json* v = find(field);
    if (!v) return fallback;
    if (!v->is_number() || !std::isfinite(v->get<double>())) fail("must be a finite number, not " + v->dump(), field);
    return v->get<double>();
  }
  std::vector<std::string> strings(const std::string& field) {
    const json* v = find(field);
    if (!v) return {};
    if (!v->is_array()) fail("must be a list of strings", field);
    std::vector<std::string> out;
    for (const auto& s : *v) {
      if (!s.is_string()) fail("must be a list of strings, but holds " + s.dump(), field);
      out.push_back(s);
    }
    return out;
  }
  void done() const {
    for (auto it = j_.begin(); it != j_.end(); ++it)
      if (!seen_.count(it.key())) fail("is not a suite field", it.key());
  }
  std::string at(const std::string& field) const { return where_.empty() ? field : where_ + "." + field; }

 private:
  const json& j_;
  std::string where_;
  const std::string& source_;
  std::set<std::string> seen_;
};

void checkSets(const std::vector<std::string>& sets, Fields& f, const std::string& field) {
  for (const auto& s : sets)
    if (s.find('=') == std::string::npos || s.front() == '=')
      f.fail("holds '" + s + "', which is not key=value", field);
}

std::string validName(const std::string& name, Fields& f, const std::string& field) {
  if (name.empty() || name.size() > 40) f.fail("must be 1 to 40 characters", field);
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.')
      f.fail("'" + name + "' may hold only letters, digits, '-', '_' and '.'", field);
  return name;
}

SuiteOperand operand(const json& j, const std::string& where, const std::string& source) {
  SuiteOperand o;
  if (j.is_string()) {
    o.variant = j;
    return o;
  }
  Fields f(j, where, source);
  o.variant = f.text("variant", false);
  o.best = f.strings("best");
  o.metric = f.text("metric", false);
  f.done();
  if (o.variant.empty() == o.best.empty()) f.fail("names either one variant (\"variant\") or several (\"best\")");
  return o;
}

void checkMetric(const std::string& metric, Fields& f, const std::string& field) {
  if (!findSuiteMetric(metric)) f.fail("'" + metric + "' is not a metric; use one of " + suiteMetricNames(), field);
}

}  // namespace

std::string SuiteOperand::describe() const {
  std::string s = variant;
  if (!best.empty()) {
    s = "best of ";
    for (size_t i = 0; i < best.size(); ++i) s += (i ? ", " : "") + best[i];
  }
  return metric.empty() ? s : s + " (" + metric + ")";
}

namespace {

// Refuses a list longer than `most`, with its length, before anything is read from it.
void checkCount(const json& list, size_t most, Fields& f, const std::string& field) {
  if (list.is_array() && list.size() > most)
    f.fail("has " + std::to_string(list.size()) + " entries; a suite may have at most " + std::to_string(most), field);
}

std::vector<uint64_t> readSeeds(const json& seeds, Fields& f) {
  std::vector<uint64_t> out;
  if (!seeds.is_array() || seeds.empty()) f.fail("must be a non-empty list of seeds", "seeds");
  checkCount(seeds, kMaxSuiteSeeds, f, "seeds");
  std::set<uint64_t> seen;
  for (const auto& v : seeds) {
    if (!v.is_number_integer() || v.get<int64_t>() < 0)
      f.fail("must hold whole numbers >= 0, not " + v.dump(), "seeds");
    if (!seen.insert(v.get<uint64_t>()).second)
      f.fail("repeats the seed " + v.dump() + " (one run of a seed would count twice)", "seeds");
    out.push_back(v.get<uint64_t>());
  }
  return out;
}

std::vector<SuiteVariant> readVariants(Fields& f, const std::string& source) {
  const json* variants = f.find("variants");
  if (!variants || !variants->is_array() || variants->empty()) f.fail("must be a non-empty list", "variants");
  checkCount(*variants, kMaxSuiteVariants, f, "variants");
  std::vector<SuiteVariant> out;
  std::set<std::string> names;
  for (size_t i = 0; i < variants->size(); ++i) {
    Fields v((*variants)[i], "variants[" + std::to_string(i) + "]", source);
    SuiteVariant sv;
    sv.name = validName(v.text("name", true), v, "name");
    sv.label = v.text("label", false, sv.name);
    sv.sets = v.strings("set");
    checkSets(sv.sets, v, "set");
    v.done();
    if (!names.insert(sv.name).second) v.fail("repeats the variant name '" + sv.name + "'", "name");
    out.push_back(std::move(sv));
  }
  return out;
}

// Checks that the names a suite's target and rules use are its variants'.
struct VariantNames {
  std::set<std::string> names;
  void known(const std::string& variant, Fields& where, const std::string& field) const {
    if (!names.count(variant)) where.fail("names '" + variant + "', which is not one of the suite's variants", field);
  }
  void side(const SuiteOperand& o, Fields& where, const std::string& field) const {
    if (o.best.empty()) known(o.variant, where, field);
    for (const auto& b : o.best) known(b, where, field + ".best");
    if (!o.metric.empty()) checkMetric(o.metric, where, field + ".metric");
  }
};

SuiteTarget readTarget(const json& target, const std::string& source, const VariantNames& variants) {
  SuiteTarget out;
  Fields t(target, "target", source);
  out.metric = t.text("metric", false, out.metric);
  checkMetric(out.metric, t, "metric");
  if (out.metric.rfind("eval_", 0) != 0) t.fail("must be an evaluation metric (eval_...)", "metric");
  out.fraction = t.number("fraction", out.fraction);
  if (!(out.fraction > 0 && out.fraction <= 1)) t.fail("must be in (0, 1]", "fraction");
  out.of = t.text("of", false);
  if (!out.of.empty()) variants.known(out.of, t, "of");
  t.done();
  return out;
}

SuiteRule readRule(const json& j, const std::string& where, const std::string& source, const VariantNames& variants) {
  Fields r(j, where, source);
  SuiteRule rule;
  rule.text = r.text("text", true);
  rule.paper = r.text("paper", true);
  rule.metric = r.text("metric", true);
  checkMetric(rule.metric, r, "metric");
  rule.op = r.text("op", false, rule.op);
  if (rule.op != ">=" && rule.op != "<=") r.fail("must be \">=\" or \"<=\"", "op");
  rule.scale = r.number("scale", 1);
  rule.offset = r.number("offset", 0);
  const json* lhs = r.find("lhs");
  const json* rhs = r.find("rhs");
  if (!lhs || !rhs) r.fail("needs both sides: lhs and rhs (a variant name, or {\"variant\"|\"best\", \"metric\"})");
  rule.lhs = operand(*lhs, r.at("lhs"), source);
  rule.rhs = operand(*rhs, r.at("rhs"), source);
  variants.side(rule.lhs, r, "lhs");
  variants.side(rule.rhs, r, "rhs");
  r.done();
  return rule;
}

SuitePrepare readPrepare(const json& j, const std::string& where, const std::string& source) {
  Fields p(j, where, source);
  SuitePrepare sp;
  sp.preset = p.text("preset", true);
  sp.sets = p.strings("set");
  checkSets(sp.sets, p, "set");
  sp.quick = p.strings("quick");
  checkSets(sp.quick, p, "quick");
  sp.creates = p.text("creates", true);
  sp.quick_creates = p.text("quick_creates", false);
  // What a prepare step creates stays below the folder the suite runs in: a shared suite file cannot place (and later
  // rename over) a file anywhere else.
  for (const auto& [field, value] : {std::pair{"creates", sp.creates}, std::pair{"quick_creates", sp.quick_creates}}) {
    const fs::path path(value);
    bool climbs = false;
    for (const auto& part : path) climbs = climbs || part == "..";
    if (path.is_absolute() || path.has_root_name() || climbs)
      p.fail("points outside the folder the suite runs in (" + value + "); name a path below it", field);
  }
  p.done();
  return sp;
}

}  // namespace

Suite Suite::fromJson(const json& j, const std::string& name, const std::string& source) {
  Suite s;
  Fields f(j, "", source);
  s.name = validName(name, f, "(the file's name)");  // it goes into tags and folder names
  s.title = f.text("title", true);
  s.claim = f.text("claim", true);
  s.citation = f.text("citation", true);
  s.scale = f.text("scale", true);
  s.notes = f.text("notes", false);
  s.timed = f.flag("timed", false);
  s.base = f.text("base", true);
  s.sets = f.strings("set");
  checkSets(s.sets, f, "set");
  s.quick = f.strings("quick");
  checkSets(s.quick, f, "quick");
  s.gpu = f.strings("gpu");
  checkSets(s.gpu, f, "gpu");
  s.curve = f.text("curve", false, s.curve);
  if (s.curve.rfind("eval/", 0) != 0) f.fail("must name an evaluation metric such as eval/accuracy", "curve");
  if (const json* seeds = f.find("seeds")) s.seeds = readSeeds(*seeds, f);
  s.variants = readVariants(f, source);
  VariantNames variants;
  for (const auto& v : s.variants) variants.names.insert(v.name);
  if (const json* target = f.find("target")) s.target = readTarget(*target, source, variants);
  const json* rules = f.find("rules");
  if (!rules || !rules->is_array() || rules->empty()) f.fail("must be a non-empty list", "rules");
  checkCount(*rules, kMaxSuiteRules, f, "rules");
  for (size_t i = 0; i < rules->size(); ++i)
    s.rules.push_back(readRule((*rules)[i], "rules[" + std::to_string(i) + "]", source, variants));
  if (const json* prepare = f.find("prepare")) {
    if (!prepare->is_array()) f.fail("must be a list", "prepare");
    for (size_t i = 0; i < prepare->size(); ++i)
      s.prepare.push_back(readPrepare((*prepare)[i], "prepare[" + std::to_string(i) + "]", source));
    // A prepare step runs at the CPU scale: runs at --gpu's would start from a checkpoint of another model.
    if (!s.prepare.empty() && !s.gpu.empty())
      f.fail(
          "cannot go with prepare steps: the runs they prepare are at the CPU scale, and --gpu's models would not "
          "load their checkpoints; drop the gpu list or the prepare steps",
          "gpu");
  }
  f.done();
  return s;
}

Suite Suite::load(const std::string& path) {
  const json j = readJsonFile(path);  // ConfigError naming the file when unreadable or not JSON
  Suite s = fromJson(j, fs::path(path).stem().string(), path);
  s.path = path;
  return s;
}

const SuiteVariant& Suite::variant(const std::string& name) const {
  for (const auto& v : variants)
    if (v.name == name) return v;
  throw ConfigError(path + ": no variant '" + name + "'");
}

std::vector<uint64_t> Suite::seedList(int count) const {
  std::vector<uint64_t> out(seeds.begin(), seeds.begin() + std::min<size_t>(seeds.size(), size_t(std::max(count, 0))));
  uint64_t next = *std::max_element(seeds.begin(), seeds.end()) + 1;
  while (int(out.size()) < count) out.push_back(next++);
  return out;
}

std::vector<std::string> suiteFiles() {
  std::vector<std::string> out;
  for (const PresetFile& f : listPresets("suites"))
    if (!f.shadowed) out.push_back(f.path);
  return out;
}

std::string resolveSuite(const std::string& nameOrPath) {
  return resolveJsonFile(nameOrPath, presetFolders("suites"), "suite", "pipesqueeze-cli suite list shows them");
}

}  // namespace ps
