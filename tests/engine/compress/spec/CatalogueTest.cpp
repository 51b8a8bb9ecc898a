// The compression catalogue: the one list of codecs, compensations, controllers and their options that the config
// schema, presets, the app's editor and the engine's registry read.
#include "engine/compress/ControllerList.h"
#include "engine/compress/spec/Catalogue.h"
#include "engine/compress/spec/CompressionOptions.h"
#include "engine/runs/config/Config.h"
#include "engine/errors/ConfigError.h"
#include "engine/runs/config/ConfigSchema.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <type_traits>

namespace ps {
namespace {

TEST(Catalogue, ControllersComeFromTheirListWithWhatTheSenderMustDoForThem) {
  // One entry per controller: the catalogue, the option checks and the sender's duties all read it, so nothing
  // elsewhere compares the controller's name.
  EXPECT_EQ(catalogue::names(catalogue::controllers()), (std::vector<std::string>{"none", "gravac", "accordion"}));
  CompressionOptions o;
  o.method = "topk";
  EXPECT_FALSE(o.adaptsWithOwnCompressors());
  EXPECT_FALSE(o.adaptsOnNorm());
  o.adapt = "gravac";
  EXPECT_TRUE(o.adaptsWithOwnCompressors());
  EXPECT_FALSE(o.adaptsOnNorm());
  o.adapt = "accordion";
  EXPECT_FALSE(o.adaptsWithOwnCompressors());
  EXPECT_TRUE(o.adaptsOnNorm());
  o.adapt = "no-such-controller";
  EXPECT_FALSE(o.adaptsWithOwnCompressors());
  EXPECT_EQ(checkController(o, "compression.forward"), "");
}

TEST(Catalogue, AControllerChecksTheOptionsItNeeds) {
  CompressionOptions o;
  o.method = "topk";
  o.adapt = "gravac";
  o.theta_min = 0.01;
  o.theta_max = 0.1;
  EXPECT_NE(checkController(o, "compression.forward").find("compression.forward.theta_max must be below"),
            std::string::npos);
  o.theta_max = 0.001;
  EXPECT_EQ(checkController(o, "compression.forward"), "");
  o.feedback = "diana";
  EXPECT_NE(checkController(o, "compression.forward").find("use feedback ef"), std::string::npos);
  o.adapt = "accordion";  // Accordion rebuilds one compressor: any compensation goes
  EXPECT_EQ(checkController(o, "compression.forward"), "");
  // Through the config: the error names the source and the key.
  nlohmann::json j = {{"compression", {{"backward", {{"method", "topk"}, {"adapt", "gravac"},
                                                      {"theta_min", 0.01}, {"theta_max", 0.5}}}}}};
  try {
    Config::fromJson(j, "test.json");
    FAIL() << "an inverted GraVAC range was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("test.json: compression.backward.theta_max must be below"), std::string::npos)
        << e.what();
  }
}

TEST(Catalogue, EveryOptionAMethodReadsExistsAndNamesAreUnique) {
  std::set<std::string> options;
  for (const auto& o : catalogue::options()) {
    EXPECT_TRUE(options.insert(o.name).second) << o.name << " twice";
    EXPECT_FALSE(o.label.empty()) << o.name;
    EXPECT_FALSE(o.help.empty()) << o.name;
    EXPECT_EQ(o.check(o.fallback), "") << o.name << "'s default is outside its own range";
  }
  for (const auto* list : {&catalogue::codecs(), &catalogue::compensations(), &catalogue::controllers()}) {
    std::set<std::string> names;
    for (const auto& m : *list) {
      EXPECT_TRUE(names.insert(m.name).second) << m.name << " twice";
      for (const auto& o : m.options) EXPECT_TRUE(catalogue::option(o)) << m.name << " reads unknown " << o;
    }
    EXPECT_TRUE(names.count("none")) << "every list starts from doing nothing";
  }
  EXPECT_TRUE(catalogue::codec("topk")->sparse);
  EXPECT_FALSE(catalogue::codec("quantize")->sparse);
  EXPECT_TRUE(catalogue::compensation("aqsgd")->forwardOnly);
}

TEST(Catalogue, OptionChecksNameWhatIsWrong) {
  const OptionSpec* bits = catalogue::option("bits");
  ASSERT_TRUE(bits);
  EXPECT_EQ(bits->check(4), "");
  EXPECT_NE(bits->check(4.5), "");
  EXPECT_NE(bits->check(0), "");
  EXPECT_NE(bits->check("eight"), "");
  const OptionSpec* rounding = catalogue::option("rounding");
  EXPECT_EQ(rounding->check("stochastic"), "");
  EXPECT_NE(rounding->check("up"), "");
  EXPECT_EQ(rounding->allowed(), "one of nearest, stochastic");
}

TEST(Catalogue, TheSchemaHasAKeyForEveryOptionOfEveryDirection) {
  const auto& schema = ConfigSchema::instance();
  for (const char* dir : {"forward", "backward", "gradients"}) {
    const std::string prefix = std::string("compression.") + dir + ".";
    for (const auto& o : catalogue::options()) EXPECT_TRUE(schema.find(prefix + o.name)) << prefix << o.name;
    const KeySpec* method = schema.find(prefix + "method");
    ASSERT_TRUE(method);
    EXPECT_EQ(method->choices, catalogue::names(catalogue::codecs()));
    EXPECT_EQ(schema.find(prefix + "feedback")->choices, catalogue::names(catalogue::compensations()));
    EXPECT_EQ(schema.find(prefix + "adapt")->choices, catalogue::names(catalogue::controllers()));
  }
  EXPECT_TRUE(schema.find("compression.boundaries.2.forward.bits"));
}

TEST(Catalogue, OptionsWithoutAFieldRoundTripThroughJson) {
  CompressionOptions o;
  EXPECT_THROW(o.value("no_such_option"), std::invalid_argument);
  // Every catalogue option is written out, so a stored config says what every option was.
  const auto j = o.toJson();
  for (const auto& spec : catalogue::options()) EXPECT_TRUE(j.contains(spec.name)) << spec.name;
  EXPECT_EQ(CompressionOptions::fromJson(j), o);
}

// The defaults are written once, in the catalogue: a fresh CompressionOptions holds them, and every field is read
// and written under the name it has in the catalogue.
TEST(Catalogue, OptionFieldsTakeTheCataloguesDefaultsAndRoundTripByName) {
  const nlohmann::json defaults = CompressionOptions().toJson();
  for (const auto& spec : catalogue::options()) EXPECT_EQ(defaults.at(spec.name), spec.fallback) << spec.name;
  EXPECT_EQ(defaults.at("method"), "none");
  EXPECT_EQ(defaults.at("feedback"), "none");
  EXPECT_EQ(defaults.at("adapt"), "none");

  int fields = 0;
  CompressionOptions o;
  CompressionOptions::eachField(o, [&](const char* name, auto& field) {
    ++fields;
    EXPECT_TRUE(CompressionOptions::hasField(name)) << name;
    const OptionSpec* spec = catalogue::option(name);
    EXPECT_TRUE(spec || std::string(name) == "method" || std::string(name) == "feedback" ||
                std::string(name) == "adapt")
        << name << " is a field but not a catalogue option";
    // A value other than the default, given by name, lands in this field and nowhere else.
    nlohmann::json changed = defaults;
    using T = std::decay_t<decltype(field)>;
    T other{};
    if constexpr (std::is_same_v<T, std::string>)
      other = spec && spec->choices.size() > 1 ? spec->choices.back() : std::string("topk");
    else if constexpr (std::is_same_v<T, bool>)
      other = !field;
    else
      other = T(spec ? spec->min : 0) == field ? T(spec->max) : T(spec ? spec->min : 0);
    changed[name] = other;
    const CompressionOptions back = CompressionOptions::fromJson(changed);
    EXPECT_EQ(back.toJson(), changed) << name;
  });
  EXPECT_EQ(fields, 23);
  EXPECT_FALSE(CompressionOptions::hasField("rank"));  // an option of PowerSGD's own, kept in `extra`
}

TEST(Catalogue, AdaptingANonSparsifierNamesTheSparsifiers) {
  nlohmann::json j = {{"compression", {{"forward", {{"method", "quantize"}, {"adapt", "gravac"}}}}}};
  try {
    Config::fromJson(j, "test");
    FAIL() << "adaptive K on a quantizer was accepted";
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    for (const auto& m : catalogue::codecs())
      if (m.sparse) EXPECT_NE(what.find(m.name), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace ps
