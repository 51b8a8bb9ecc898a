#include "engine/compress/spec/Catalogue.h"

#include "engine/compress/CodecList.h"
#include "engine/compress/CompensationList.h"
#include "engine/compress/ControllerList.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace ps {
namespace {

using Type = OptionSpec::Type;
using Control = OptionSpec::Control;

std::string number(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

const MethodSpec* find(const std::vector<MethodSpec>& methods, const std::string& name) {
  for (const auto& m : methods)
    if (m.name == name) return &m;
  return nullptr;
}

std::vector<OptionSpec> makeShared() {
  OptionSpec k = realOption("k", 0.1, 1e-6, 1, "K", "fraction of the elements a sparsifier keeps");
  k.control = Control::LogSlider;
  return {
      k,
      intOption("bits", 8, 1, 16, "Bits", "quantization bits (1..8; 16 means an fp16 cast)", Control::BitsSlider),
      choiceOption("rounding", "nearest", {"nearest", "stochastic"}, "Rounding",
                   "nearest, or stochastic (unbiased) rounding of quantized values"),
      choiceOption("scale", "bucket", {"tensor", "channel", "bucket"}, "Scale groups", "quantization scale groups"),
      intOption("bucket", 512, 8, 1 << 24, "Bucket", "values per scale bucket (quantize, QSGD, quantized values)"),
      choiceOption("range", "maxabs", {"maxabs", "minmax"}, "Range", "symmetric max-abs or asymmetric min-max"),
      intOption("levels", 16, 1, 127, "Levels", "QSGD levels s"),
      intOption("value_bits", 32, 1, 32, "Value bits",
                "bits of a sparsifier's values or a bottleneck's code (32: float32, 16: fp16, 1..8: quantized again)"),
      boolOption("trim", false, "Trim", "GaussianK: trim the survivors to exactly k"),
      boolOption("scaled", false, "Scaled", "RandK: scale the kept values by n/k (unbiased)"),
      realOption("sample", 0.01, 1e-4, 1, "Sample", "sampled threshold: fraction of the elements sampled"),
      [] {
        OptionSpec a = realOption("alpha", 0, 0, 1, "Shift step α",
                                  "DIANA shift step (0: 1/(omega+1) where omega is known, else 1)");
        a.atMinimum = "auto: 1/(ω+1)";
        return a;
      }(),
      realOption("p", 0.1, 0, 1, "Dense probability p", "Rand-DIANA: probability of sending uncompressed"),
      realOption("theta_min", 0.1, 1e-6, 1, "Mildest factor",
                 "adaptive K: the mildest factor (Accordion's mild factor)"),
      realOption("theta_max", 1e-4, 1e-6, 1, "Strongest factor", "GraVAC: the most aggressive factor"),
      choiceOption("adapt_policy", "geometric", {"geometric", "exponential"}, "Candidates",
                   "GraVAC candidates: x0.5 each (geometric) or a step that squares each time (exponential)"),
      realOption("epsilon", 0.75, 0, 1, "Gain ε", "GraVAC: gain a factor must keep to be sent"),
      realOption("omega", 0.05, 0, 1, "Settle ω", "GraVAC: settle when the two best throughputs differ by less"),
      intOption("window", 25, 1, 100000, "Window", "adaptive K: steps per EWMA window and exploration interval"),
      realOption("eta", 0.2, 0, 10, "Critical η", "Accordion: relative gradient-norm change marking a critical phase"),
  };
}

std::vector<OptionSpec> makeOptions() {
  std::vector<OptionSpec> all = catalogue::sharedOptions();
  for (const auto* list : {&catalogue::codecs(), &catalogue::compensations(), &catalogue::controllers()})
    for (const auto& m : *list)
      for (const auto& o : m.own)
        if (std::none_of(all.begin(), all.end(), [&](const OptionSpec& a) { return a.name == o.name; })) all.push_back(o);
  return all;
}

}  // namespace

MethodSpec methodSpec(std::string name, std::string label, std::string help, std::vector<std::string> options) {
  MethodSpec m;
  m.name = std::move(name);
  m.label = std::move(label);
  m.help = std::move(help);
  m.options = std::move(options);
  return m;
}

bool MethodSpec::reads(const std::string& option) const {
  return std::find(options.begin(), options.end(), option) != options.end();
}

std::string OptionSpec::allowed() const {
  switch (type) {
    case Type::Int: return "an integer in " + number(min) + " .. " + number(max);
    case Type::Double: return "a number in " + number(min) + " .. " + number(max);
    case Type::Bool: return "true or false";
    case Type::Choice: {
      std::string s = "one of ";
      for (size_t i = 0; i < choices.size(); ++i) s += (i ? ", " : "") + choices[i];
      return s;
    }
  }
  return "";
}

std::string OptionSpec::check(const nlohmann::json& v) const {
  switch (type) {
    case Type::Int:
      if (!v.is_number_integer() && !(v.is_number_float() && std::floor(v.get<double>()) == v.get<double>()))
        return "is not an integer";
      [[fallthrough]];
    case Type::Double: {
      if (!v.is_number()) return "is not a number";
      const double d = v.get<double>();
      if (!std::isfinite(d) || d < min || d > max) return "is out of range";
      return "";
    }
    case Type::Bool: return v.is_boolean() ? "" : "is not true or false";
    case Type::Choice:
      if (!v.is_string() || std::find(choices.begin(), choices.end(), v.get<std::string>()) == choices.end())
        return "is not a known choice";
      return "";
  }
  return "";
}

OptionSpec intOption(std::string name, long long fallback, double min, double max, std::string label, std::string help,
                     OptionSpec::Control control) {
  return {std::move(name), Type::Int, nlohmann::json(fallback), min, max, {}, std::move(label), std::move(help), control};
}
OptionSpec realOption(std::string name, double fallback, double min, double max, std::string label, std::string help) {
  return {std::move(name), Type::Double, nlohmann::json(fallback), min, max, {}, std::move(label), std::move(help),
          Control::Spin};
}
OptionSpec boolOption(std::string name, bool fallback, std::string label, std::string help) {
  return {std::move(name), Type::Bool, nlohmann::json(fallback), 0, 0, {}, std::move(label), std::move(help),
          Control::Check};
}
OptionSpec choiceOption(std::string name, std::string fallback, std::vector<std::string> choices, std::string label,
                        std::string help) {
  return {std::move(name), Type::Choice, nlohmann::json(std::move(fallback)), 0, 0, std::move(choices),
          std::move(label), std::move(help), Control::Combo};
}

namespace catalogue {

const std::vector<OptionSpec>& sharedOptions() {
  static const std::vector<OptionSpec> shared = makeShared();
  return shared;
}

const std::vector<OptionSpec>& options() {
  static const std::vector<OptionSpec> all = makeOptions();
  return all;
}

const OptionSpec* option(const std::string& name) {
  for (const auto& o : options())
    if (o.name == name) return &o;
  return nullptr;
}

const std::vector<MethodSpec>& codecs() {
  static const std::vector<MethodSpec> list = CodecList::specs();
  return list;
}
const std::vector<MethodSpec>& compensations() {
  static const std::vector<MethodSpec> list = CompensationList::specs();
  return list;
}
const std::vector<MethodSpec>& controllers() {
  static const std::vector<MethodSpec> list = ControllerList::specs();
  return list;
}
const MethodSpec* codec(const std::string& name) { return find(codecs(), name); }
const MethodSpec* compensation(const std::string& name) { return find(compensations(), name); }
const MethodSpec* controller(const std::string& name) { return find(controllers(), name); }

std::vector<std::string> names(const std::vector<MethodSpec>& methods) {
  std::vector<std::string> out;
  for (const auto& m : methods) out.push_back(m.name);
  return out;
}

bool optionApplies(const std::string& option, const std::string& method, const std::string& feedback,
                   const std::string& adapt, int valueBits) {
  const MethodSpec* c = codec(method);
  const MethodSpec* f = compensation(feedback);
  const MethodSpec* a = c && c->sparse ? controller(adapt) : nullptr;
  const bool idle = c && valueBits > kMostRequantizedBits &&
                    std::find(c->requantizing.begin(), c->requantizing.end(), option) != c->requantizing.end();
  return (c && c->reads(option) && !idle) || (f && f->reads(option)) || (a && a->reads(option));
}

}  // namespace catalogue
}  // namespace ps
