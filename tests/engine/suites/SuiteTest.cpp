#include "engine/errors/ConfigError.h"
#include "engine/suites/Suite.h"
#include "engine/suites/SuitePlan.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace ps {
namespace {

using nlohmann::json;

json minimal() {
  return {{"title", "t"},
          {"claim", "c"},
          {"citation", "someone, 2024"},
          {"scale", "tiny"},
          {"base", "smoke"},
          {"variants", {{{"name", "dense"}}, {{"name", "topk"}, {"set", {"compression.forward.method=topk"}}}}},
          {"rules", {{{"text", "x"}, {"paper", "y"}, {"metric", "eval_accuracy"}, {"lhs", "topk"}, {"rhs", "dense"}}}}};
}

// The error names the suite file and the field, and says what is wrong.
void expectRejected(const json& j, const std::vector<std::string>& words) {
  try {
    Suite::fromJson(j, "bad", "suites/bad.json");
    FAIL() << "accepted " << j.dump();
  } catch (const ConfigError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("suites/bad.json"), std::string::npos) << m;
    for (const auto& w : words) EXPECT_NE(m.find(w), std::string::npos) << "'" << w << "' not in: " << m;
  }
}

TEST(Suite, EveryBundledSuiteLoadsAndPlansValidConfigurations) {
  const auto files = suiteFiles();
  ASSERT_GE(files.size(), 10u);
  for (const auto& f : files) {
    SCOPED_TRACE(f);
    const Suite s = Suite::load(f);
    // Every scale the suite offers: as written, --quick, and --gpu with and without --quick where it has GPU settings.
    std::vector<SuiteScale> scales = {SuiteScale{}, SuiteScale{true}};
    if (!s.gpu.empty()) scales.insert(scales.end(), {SuiteScale{false, true}, SuiteScale{true, true}});
    for (const SuiteScale& scale : scales) {
      const auto plan = planSuite(s, 2, scale);
      EXPECT_EQ(plan.size(), 2 * s.variants.size());
      for (const auto& p : plan) {
        EXPECT_EQ(p.config["train"]["seed"], p.seed);
        EXPECT_NE(p.config["run"]["tags"].get<std::string>().find("suite:" + s.name), std::string::npos);
      }
    }
    for (const auto& step : s.prepare) EXPECT_NO_THROW(planPrepare(s, step, true));
  }
}

TEST(Suite, BadSuitesAreRejectedNamingTheFileAndTheField) {
  json j = minimal();
  j.erase("claim");
  expectRejected(j, {"claim", "missing"});
  j = minimal();
  j["claims"] = "typo";
  expectRejected(j, {"claims", "not a suite field"});
  j = minimal();
  j["variants"][1]["name"] = "dense";
  expectRejected(j, {"variants[1].name", "repeats"});
  j = minimal();
  j["variants"][1]["set"] = {"compression.forward.method"};
  expectRejected(j, {"variants[1].set", "key=value"});
  j = minimal();
  j["rules"][0]["rhs"] = "sparse";
  expectRejected(j, {"rules[0].rhs", "'sparse'", "not one of the suite's variants"});
  j = minimal();
  j["rules"][0]["metric"] = "accuracy";
  expectRejected(j, {"rules[0].metric", "'accuracy' is not a metric", "eval_accuracy"});
  j = minimal();
  j["rules"][0]["op"] = ">";
  expectRejected(j, {"rules[0].op"});
  j = minimal();
  j["rules"][0]["lhs"] = {{"variant", "topk"}, {"best", {"dense"}}};
  expectRejected(j, {"rules[0].lhs", "either one variant"});
  j = minimal();
  j["seeds"] = {1, -2};
  expectRejected(j, {"seeds", "whole numbers"});
  j = minimal();
  j["target"] = {{"fraction", 1.5}};
  expectRejected(j, {"target.fraction", "(0, 1]"});
  j = minimal();
  j["rules"] = json::array();
  expectRejected(j, {"rules", "non-empty"});
  j = minimal();
  j["seeds"] = {1, 2, 1};
  expectRejected(j, {"seeds", "repeats the seed 1"});
  j = minimal();
  j["rules"][0]["lhs"] = "";
  expectRejected(j, {"rules[0].lhs", "names ''"});
  try {
    Suite::fromJson(minimal(), "bad,name", "suites/bad,name.json");  // the name goes into tags and folders
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("may hold only"), std::string::npos) << e.what();
  }
  expectRejected(json::array(), {"JSON object"});
}

// A few megabytes of JSON cannot ask for millions of runs: the seeds, variants and rules are counted before they
// are read (the number in the message), a thousand distinct seeds are checked in linear time, and the planned grid
// has a limit whatever --seeds asks for.
TEST(Suite, AnOversizedGridIsRefusedWithItsSize) {
  json j = minimal();
  j["seeds"] = json::array();
  for (int i = 0; i < 1000000; ++i) j["seeds"].push_back(i);
  expectRejected(j, {"seeds", "1000000 entries", "at most 1000"});
  j["seeds"] = json::array();
  for (int i = 0; i < 1000; ++i) j["seeds"].push_back(i * 7);
  EXPECT_EQ(Suite::fromJson(j, "ok", "x").seeds.size(), 1000u);
  j["seeds"].push_back(7);
  expectRejected(j, {"seeds", "1001 entries"});
  j["seeds"].erase(j["seeds"].size() - 1);
  j["seeds"][999] = 7;
  expectRejected(j, {"repeats the seed 7"});

  j = minimal();
  json variants = json::array();
  for (int i = 0; i < 300000; ++i) variants.push_back({{"name", "v" + std::to_string(i)}});
  j["variants"] = variants;
  expectRejected(j, {"variants", "300000 entries", "at most 1000"});

  j = minimal();
  j["variants"] = json::array();
  for (int i = 0; i < 1000; ++i) j["variants"].push_back({{"name", "v" + std::to_string(i)}});
  j["rules"] = {{{"text", "x"}, {"paper", "y"}, {"metric", "eval_accuracy"}, {"lhs", "v1"}, {"rhs", "v0"}}};
  const Suite wide = Suite::fromJson(j, "wide", "suites/wide.json");
  try {
    planSuite(wide, 1000, SuiteScale{});
    FAIL() << "a million runs planned";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("1000000 runs"), std::string::npos) << e.what();
  }
  EXPECT_THROW(planSuite(Suite::fromJson(minimal(), "s", "x"), 1000000, SuiteScale{}), ConfigError);
}

// A shared suite file cannot make its prepare step create a file, or its runs save checkpoints, outside the folder it
// runs in.
TEST(Suite, NothingASuiteWritesLeavesItsFolder) {
  json j = minimal();
  j["prepare"] = {{{"preset", "smoke"}, {"creates", "/etc/passwd"}}};
  expectRejected(j, {"prepare[0]", "creates", "points outside"});
  j["prepare"] = {{{"preset", "smoke"}, {"creates", "ok.pt"}, {"quick_creates", "../../x.pt"}}};
  expectRejected(j, {"quick_creates", "points outside"});
  j = minimal();
  j["variants"][1]["set"] = {"run.checkpoint_dir=/tmp/elsewhere"};
  try {
    planSuite(Suite::fromJson(j, "bad", "suites/bad.json"), 1, SuiteScale{});
    FAIL() << "a suite's set moved the checkpoint out";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("run.checkpoint_dir"), std::string::npos) << e.what();
  }
}

TEST(Suite, AConfigurationErrorNamesTheSuiteAndTheVariant) {
  json j = minimal();
  j["variants"][1]["set"] = {"compression.forward.k=7"};
  const Suite s = Suite::fromJson(j, "bad", "suites/bad.json");
  try {
    planSuite(s, 1, SuiteScale{});
    FAIL();
  } catch (const ConfigError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("variant topk"), std::string::npos) << m;
    EXPECT_NE(m.find("compression.forward.k"), std::string::npos) << m;
  }
  j = minimal();
  j["base"] = "no-such-preset";
  EXPECT_THROW(planSuite(Suite::fromJson(j, "bad", "x"), 1, SuiteScale{}), ConfigError);
}

TEST(Suite, PlansSeedBySeedWithTheOverridesInOrder) {
  json j = minimal();
  j["set"] = {"train.max_steps=40", "compression.forward.k=0.5"};
  j["quick"] = {"train.max_steps=7"};
  j["variants"][1]["set"] = {"compression.forward.method=topk", "compression.forward.k=0.25"};
  j["seeds"] = {5, 9};
  const Suite s = Suite::fromJson(j, "ok", "suites/ok.json");
  const auto plan = planSuite(s, 3, SuiteScale{true});
  ASSERT_EQ(plan.size(), 6u);
  EXPECT_EQ(plan[0].variant, "dense");
  EXPECT_EQ(plan[1].variant, "topk");
  EXPECT_EQ(plan[0].seed, 5u);
  EXPECT_EQ(plan[2].seed, 9u);
  EXPECT_EQ(plan[4].seed, 10u) << "more seeds than listed continue after the largest";
  EXPECT_EQ(plan[0].config["train"]["max_steps"], 7) << "quick comes after the suite's own overrides";
  EXPECT_EQ(plan[1].config["compression"]["forward"]["k"], 0.25) << "the variant's come last";
  EXPECT_EQ(plan[0].config["compression"]["forward"]["k"], 0.5);
  // Name, tags and notes are not part of a run's identity; everything else is.
  json renamed = plan[0].config;
  renamed["run"]["name"] = "something else";
  EXPECT_EQ(configIdentity(renamed), plan[0].identity);
  EXPECT_NE(plan[0].identity, planSuite(s, 1, SuiteScale{})[0].identity) << "quick runs are other runs";
}

// --gpu adds the suite's GPU settings after its own and before --quick's, and its runs are other runs, tagged so.
TEST(Suite, TheGpuScaleAddsItsSettingsBeforeQuicksAndIsRefusedWhereASuiteHasNone) {
  json j = minimal();
  j["set"] = {"train.max_steps=40", "train.batch_size=32"};
  j["gpu"] = {"train.batch_size=64", "train.max_steps=400"};
  j["quick"] = {"train.max_steps=7"};
  const Suite s = Suite::fromJson(j, "ok", "suites/ok.json");
  ASSERT_EQ(s.gpu.size(), 2u);
  const auto gpu = planSuite(s, 1, SuiteScale{false, true});
  EXPECT_EQ(gpu[0].config["train"]["batch_size"], 64);
  EXPECT_EQ(gpu[0].config["train"]["max_steps"], 400);
  EXPECT_EQ(gpu[0].config["run"]["tags"], "suite:ok,variant:dense,seed:1,gpu");
  EXPECT_NE(gpu[0].config["run"]["name"].get<std::string>().find("gpu"), std::string::npos);
  const auto both = planSuite(s, 1, SuiteScale{true, true});
  EXPECT_EQ(both[0].config["train"]["batch_size"], 64);
  EXPECT_EQ(both[0].config["train"]["max_steps"], 7) << "quick comes after the GPU settings";
  EXPECT_EQ(both[0].config["run"]["tags"], "suite:ok,variant:dense,seed:1,gpu,quick");
  EXPECT_NE(gpu[0].identity, planSuite(s, 1, SuiteScale{})[0].identity) << "GPU runs are other runs";
  EXPECT_EQ(planSuite(s, 1, SuiteScale{true})[0].config["run"]["tags"], "suite:ok,variant:dense,seed:1,quick")
      << "the tags of runs at the other scales are as they were";
  // A suite without GPU settings says so instead of running its CPU scale under the GPU's name.
  try {
    planSuite(Suite::fromJson(minimal(), "plain", "suites/plain.json"), 1, SuiteScale{false, true});
    FAIL() << "--gpu was accepted by a suite without GPU settings";
  } catch (const ConfigError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("suite plain"), std::string::npos) << m;
    EXPECT_NE(m.find("no GPU scale"), std::string::npos) << m;
    EXPECT_NE(m.find("without --gpu"), std::string::npos) << m;
  }
  // The GPU settings are checked like the others (a misspelt key when planned, naming it), and cannot go with
  // prepare steps (CPU-scale checkpoints).
  j["gpu"] = {"model.widht=64"};
  EXPECT_THROW(planSuite(Suite::fromJson(j, "bad", "suites/bad.json"), 1, SuiteScale{false, true}), ConfigError);
  j["gpu"] = {"model.width"};
  expectRejected(j, {"gpu", "not key=value"});
  j["gpu"] = {"model.width=64"};
  j["prepare"] = {{{"preset", "smoke"}, {"creates", "x.pt"}}};
  expectRejected(j, {"gpu", "prepare steps"});
}

TEST(Suite, IdentityIgnoresKeysAtTheirDefaultSoOlderStoredRunsAreFound) {
  const Suite s = Suite::fromJson(minimal(), "ok", "suites/ok.json");
  const json planned = planSuite(s, 1, SuiteScale{})[0].config;
  // A run stored before an option existed has no such key; the planned configuration holds its default.
  json older = planned;
  ASSERT_TRUE(older["compression"]["forward"].contains("rank"));
  older["compression"]["forward"].erase("rank");
  older["compression"]["forward"].erase("min_size");
  EXPECT_EQ(configIdentity(older), configIdentity(planned));
  // Any setting away from its default still tells runs apart, also when it is set back to a default elsewhere.
  json other = planned;
  other["compression"]["forward"]["rank"] = planned["compression"]["forward"]["rank"].get<int>() + 1;
  EXPECT_NE(configIdentity(other), configIdentity(planned));
  json otherSeed = planned;
  otherSeed["train"]["seed"] = planned["train"]["seed"].get<int>() + 1;
  EXPECT_NE(configIdentity(otherSeed), configIdentity(planned));
}

TEST(Suite, ResolvesByNameOrPathAndListsWhatItTried) {
  EXPECT_NO_THROW(resolveSuite("smoke"));
  EXPECT_NO_THROW(resolveSuite("smoke.json"));
  try {
    resolveSuite("nope");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("suite list"), std::string::npos);
  }
}

}  // namespace
}  // namespace ps
