#include "engine/runs/store/RunFilter.h"

#include "engine/compress/spec/Catalogue.h"
#include "engine/core/RunSummary.h"
#include "engine/runs/config/BoundedJson.h"
#include "engine/runs/config/Config.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

namespace ps {
namespace {

using nlohmann::json;

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return s;
}

void addNumber(RunFacts& f, const std::string& field, double value) {
  if (!std::isfinite(value)) return;
  auto& values = f.numbers[field];
  if (std::find(values.begin(), values.end(), value) == values.end()) values.push_back(value);
}

// One compressed direction's settings, under its own names (fwd, fwd_k) and the shared ones (method, k).
void addDirection(RunFacts& f, const std::string& dir, const CompressionOptions& o) {
  for (const std::string& field : {std::string("method"), dir}) f.addText(field, o.method);
  f.addText("feedback", o.feedback);
  f.addText("adapt", o.adapt);
  const MethodSpec* codec = catalogue::codec(o.method);
  if (codec && codec->sparse)
    for (const std::string& field : {std::string("k"), dir + "_k"}) addNumber(f, field, o.k);
  if (codec && codec->reads("bits")) addNumber(f, "bits", o.bits);
}

// The configuration as the run started; an old or foreign config that no longer validates adds nothing.
void addSettings(RunFacts& f, const std::string& configJson) {
  Config c;
  try {
    c = Config::fromJson(parseJson(configJson, "the run's stored config"), "the run's stored config");
  } catch (const std::exception&) {
    return;
  }
  f.addText("task", c.task);
  f.addText("schedule", c.pipeline.schedule);
  addNumber(f, "stages", double(c.pipeline.stages));
  addNumber(f, "microbatches", double(c.pipeline.microbatches));
  addNumber(f, "replicas", double(c.parallel.replicas));
  addNumber(f, "lr", c.train.lr);
  addNumber(f, "seed", double(c.train.seed));
  addNumber(f, "bandwidth", c.link.bandwidth_mbps);
  addNumber(f, "latency", c.link.latency_ms);
  // The directions' settings as the runs table shows them (a single-stage run has them too, unused), then any
  // boundary's own.
  addDirection(f, "fwd", c.compression.forward);
  addDirection(f, "bwd", c.compression.backward);
  for (const auto& o : c.compression.boundary_forward) addDirection(f, "fwd", o);
  for (const auto& o : c.compression.boundary_backward) addDirection(f, "bwd", o);
  if (c.parallel.replicas > 1) addDirection(f, "grad", c.compression.gradients);
}

void addSummary(RunFacts& f, const std::string& summaryJson) {
  const json j = parseJsonOrDiscarded(summaryJson.empty() ? "{}" : summaryJson);  // stored bytes: bounded
  if (!j.is_object()) return;
  const RunSummary s = RunSummary::fromJson(j);
  auto add = [&](const char* field, const auto& value) {
    if (value) addNumber(f, field, double(*value));
  };
  add("steps", s.steps);
  add("loss", s.eval.loss);
  add("train_loss", s.train_loss);
  add("accuracy", s.eval.accuracy);
  add("perplexity", s.eval.perplexity);
  add("wire", s.bytes_wire);
  add("raw", s.bytes_raw);
  add("wall", s.wall_seconds);
  add("emulated", s.emulated_seconds);
  add("ratio", s.compressionRatio());
}

bool isFieldName(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::islower(c) || c == '_'; });
}

const RunFilterField* field(const std::string& name) {
  for (const auto& f : RunFilter::fields())
    if (f.name == name) return &f;
  return nullptr;
}

std::string fieldNames() {
  std::string out;
  for (const auto& f : RunFilter::fields()) out += (out.empty() ? "" : ", ") + f.name;
  return out;
}

// Fields that are fractions, written as the app shows them too: accuracy>=85%, k<5%.
bool takesPercent(const std::string& name) {
  return name == "accuracy" || name == "k" || name == "fwd_k" || name == "bwd_k" || name == "grad_k";
}

// Tags the claim suites write as prefix:value, which a filter may name as if the prefix were a field: suite:smoke.
bool isTagPrefix(const std::string& name) {
  return name == "suite" || name == "variant";
}

// "50M" -> 5e7, "85%" -> 0.85 (fractions only); throws FilterError otherwise.
double parseNumber(const std::string& term, const std::string& name, const std::string& text) {
  std::string digits = text;
  double scale = 1;
  if (!digits.empty()) {
    const char last = digits.back();
    const bool percent = last == '%';
    if (percent && !takesPercent(name))
      throw FilterError("filter term '" + term + "': only accuracy and K take a %; write " + name +
                        " as a plain number");
    scale = percent ? 0.01 : last == 'k' ? 1e3 : last == 'M' ? 1e6 : last == 'G' ? 1e9 : 1;
    if (scale != 1) digits.pop_back();
  }
  char* end = nullptr;
  const double v = digits.empty() ? NAN : std::strtod(digits.c_str(), &end);
  if (digits.empty() || end != digits.c_str() + digits.size() || !std::isfinite(v))
    throw FilterError("filter term '" + term + "': '" + text + "' is not a number (" + name +
                      " is a number; suffixes k, M, G" + (takesPercent(name) ? ", or %" : "") + ")");
  return v * scale;
}

// The words of a filter: spaces separate them, double quotes keep spaces inside one (and are removed).
std::vector<std::pair<std::string, bool>> splitWords(const std::string& text) {
  std::vector<std::pair<std::string, bool>> words;
  std::string word;
  bool inQuotes = false, any = false, startedQuoted = false;
  for (char c : text) {
    if (c == '"') {
      if (!any) startedQuoted = true;
      inQuotes = !inQuotes;
      any = true;
    } else if (std::isspace(static_cast<unsigned char>(c)) && !inQuotes) {
      if (any) words.emplace_back(word, startedQuoted);
      word.clear();
      any = startedQuoted = false;
    } else {
      word += c;
      any = true;
    }
  }
  if (inQuotes) throw FilterError("the filter has an unclosed double quote; close it or remove it");
  if (any) words.emplace_back(word, startedQuoted);
  return words;
}

}  // namespace

RunFacts RunFacts::of(const RunInfo& info) {
  RunFacts f;
  addNumber(f, "id", double(info.id));
  f.addText("name", info.name);
  f.addText("status", info.status);
  f.addText("notes", info.notes);
  f.addText("created", info.created);
  f.addText("version", info.code_version);
  for (const auto& tag : splitTags(info.tags)) f.addText("tag", tag);
  addSettings(f, info.config_json);
  addSummary(f, info.summary_json);
  return f;
}

void RunFacts::addText(const std::string& field, const std::string& value) {
  if (value.empty()) return;
  auto& values = text[field];
  if (std::find(values.begin(), values.end(), value) != values.end()) return;
  values.push_back(value);
  static const char* const searched[] = {"name", "tag", "notes", "status", "method"};
  for (const char* s : searched)
    if (field == s) words += lower(value) + "\n";
}

const std::vector<RunFilterField>& RunFilter::fields() {
  static const std::vector<RunFilterField> list = {
      {"id", true, "the run's id"},
      {"name", false, "the run's name"},
      {"status", false, "running, finished, stopped, diverged or failed"},
      {"tag", false, "one of the run's tags; a suite's tags also as suite:NAME and variant:NAME"},
      {"notes", false, "the run's notes"},
      {"created", false, "when it started, as 2026-11-26T10:00:00Z (created:2026-11 for a month)"},
      {"version", false, "the code version that ran it"},
      {"task", false, "fashion_mnist, brown_lm, synthetic"},
      {"schedule", false, "the pipeline schedule"},
      {"method", false, "any direction's compressor (forward, backward, replicas' gradients)"},
      {"fwd", false, "a forward (activation) compressor"},
      {"bwd", false, "a backward (activation gradient) compressor"},
      {"grad", false, "the replicas' gradient compressor (runs with replicas)"},
      {"feedback", false, "any direction's error compensation"},
      {"adapt", false, "any direction's adaptive controller"},
      {"k", true, "any sparsifying direction's K, a fraction kept (0.05) or a percentage (5%)"},
      {"fwd_k", true, "a forward sparsifier's K (0.05 or 5%)"},
      {"bwd_k", true, "a backward sparsifier's K (0.05 or 5%)"},
      {"grad_k", true, "the replicas' gradient sparsifier's K (0.05 or 5%)"},
      {"bits", true, "any quantizing direction's bits"},
      {"stages", true, "pipeline stages"},
      {"microbatches", true, "micro-batches per step"},
      {"replicas", true, "data-parallel replicas"},
      {"lr", true, "learning rate"},
      {"seed", true, "training seed"},
      {"bandwidth", true, "link bandwidth, Mbit/s"},
      {"latency", true, "link latency, ms"},
      {"steps", true, "steps trained"},
      {"accuracy", true, "final evaluation accuracy, a fraction (0.85) or a percentage (85%)"},
      {"perplexity", true, "final evaluation perplexity"},
      {"loss", true, "final evaluation loss"},
      {"train_loss", true, "mean training loss of the last steps"},
      {"wire", true, "bytes sent over the links"},
      {"raw", true, "bytes before compression"},
      {"ratio", true, "raw over wire bytes"},
      {"wall", true, "wall time, seconds"},
      {"emulated", true, "emulated time, seconds"}};
  return list;
}

RunFilter::Term RunFilter::parseTerm(const std::string& word, bool quoted) {
  Term t;
  std::string body = word;
  if (!quoted && body.size() > 1 && body[0] == '-') {
    t.negated = true;
    body.erase(0, 1);
  }
  const size_t at = quoted ? std::string::npos : body.find_first_of(":=!<>");
  if (at == std::string::npos || at == 0 || !isFieldName(body.substr(0, at))) {
    t.value = lower(body);
    return t;
  }
  t.field = body.substr(0, at);
  static const std::pair<const char*, Op> ops[] = {
      {"<=", Op::LessEqual}, {">=", Op::GreaterEqual}, {"!=", Op::NotEqual}, {"<", Op::Less},
      {">", Op::Greater},    {"=", Op::Equal},         {":", Op::Contains}};
  std::string rest = body.substr(at);
  bool found = false;
  for (const auto& [symbol, op] : ops)
    if (rest.rfind(symbol, 0) == 0) {
      t.op = op;
      rest.erase(0, std::string(symbol).size());
      found = true;
      break;
    }
  if (found && t.op == Op::Contains && !field(t.field) && isTagPrefix(t.field) && !rest.empty()) {
    t.value = lower(t.field + ":" + rest);  // suite:smoke is the tag "suite:smoke"
    t.field = "tag";
    return t;
  }
  const RunFilterField* f = field(t.field);
  if (!f)
    throw FilterError("filter term '" + word + "': no field '" + t.field + "'; fields: " + fieldNames() +
                      " (a tag with a colon: tag:\"" + t.field + ":...\")");
  if (!found) throw FilterError("filter term '" + word + "': write " + t.field + ":value, =, !=, <, <=, > or >=");
  if (rest.empty())
    throw FilterError("filter term '" + word + "': no value after the operator; quote a value with spaces");
  const bool ordering = t.op == Op::Less || t.op == Op::LessEqual || t.op == Op::Greater || t.op == Op::GreaterEqual;
  t.numeric = f->number;
  if (t.numeric) {
    t.number = parseNumber(word, t.field, rest);
  } else if (ordering) {
    throw FilterError("filter term '" + word + "': " + t.field + " is text; compare it with :, = or !=");
  }
  t.value = lower(rest);
  return t;
}

RunFilter RunFilter::parse(const std::string& text) {
  RunFilter filter;
  for (const auto& [word, quoted] : splitWords(text)) filter.terms_.push_back(parseTerm(word, quoted));
  return filter;
}

bool RunFilter::holds(const Term& t, const RunFacts& run) {
  if (t.op == Op::Word) return run.words.find(t.value) != std::string::npos;
  if (t.numeric) {
    const auto it = run.numbers.find(t.field);
    if (it == run.numbers.end()) return false;
    return std::any_of(it->second.begin(), it->second.end(), [&](double v) {
      switch (t.op) {
        case Op::Contains:
        case Op::Equal:
          return std::abs(v - t.number) <= 1e-9 * std::max(1.0, std::abs(t.number));
        case Op::NotEqual:
          return std::abs(v - t.number) > 1e-9 * std::max(1.0, std::abs(t.number));
        case Op::Less:
          return v < t.number;
        case Op::LessEqual:
          return v <= t.number;
        case Op::Greater:
          return v > t.number;
        case Op::GreaterEqual:
          return v >= t.number;
        default:
          return false;
      }
    });
  }
  const auto it = run.text.find(t.field);
  if (it == run.text.end()) return false;
  const bool exact = t.op == Op::Equal || t.op == Op::NotEqual || t.field == "status" || t.field == "tag";
  return std::any_of(it->second.begin(), it->second.end(), [&](const std::string& value) {
    const std::string v = lower(value);
    const bool same = exact ? v == t.value : v.find(t.value) != std::string::npos;
    return t.op == Op::NotEqual ? !same : same;
  });
}

bool RunFilter::matches(const RunFacts& run) const {
  for (const Term& t : terms_)
    if (holds(t, run) == t.negated) return false;
  return true;
}

}  // namespace ps
