// `pipesqueeze-cli plan`: a preset planned for a network, from its own profile and the store's finished runs.
#include "tests/app/cli/CliRunner.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <set>

namespace ps::test {
namespace {

using nlohmann::json;

const std::string kSmoke = std::string(PIPESQUEEZE_SOURCE_DIR) + "/presets/smoke.json";

std::string planStore(const std::string& name) {
  return freshStoreIn("pipesqueeze-plan-test", name);
}

json plan(const std::string& store, std::vector<std::string> extra) {
  std::vector<std::string> args{"plan",    "--preset", kSmoke,      "--store", store,
                                "--steps", "4",        "--samples", "2",       "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto r = runCli(args);
  EXPECT_EQ(r.exitCode, 0) << r.err;
  return r.exitCode == 0 ? json::parse(r.lastLine()) : json();
}

// With no run in the store every setting stands on its error alone: on a slow link each direction takes a codec
// within the error budget, and the written preset trains.
TEST(PlanCli, ASlowLinkIsPlannedFromErrorsAloneAndThePlannedPresetTrains) {
  const auto store = planStore("empty");
  const auto out = (std::filesystem::path(store).parent_path() / "planned.json").string();
  std::filesystem::remove(out);
  const json p = plan(store, {"--bandwidth", "1", "--latency", "0.5", "-o", out});
  ASSERT_FALSE(p.is_null());
  ASSERT_EQ(p["directions"].size(), 2u);
  for (const auto& d : p["directions"]) {
    EXPECT_NE(d["setting"], "none") << "at 1 Mbit/s every direction compresses: " << d.dump();
    EXPECT_EQ(d["evidence"], "error only");
    EXPECT_LE(d["relative_error"].get<double>(), 0.1);
    // What it was chosen from: the whole grid, PowerSGD's ranks included, each with its verdict.
    std::set<std::string> settings;
    for (const auto& c : d["considered"]) {
      settings.insert(c["setting"].get<std::string>());
      const auto verdict = c["verdict"].get<std::string>();
      if (c["setting"].get<std::string>().find("aqsgd") != std::string::npos)
        EXPECT_EQ(verdict, "no run vouches for it") << "AQ-SGD's error in a short run is a floor: " << c.dump();
      else
        EXPECT_EQ(verdict, c["relative_error"].get<double>() <= 0.1 ? "offered" : "over the error budget") << c.dump();
    }
    for (const char* s : {"none", "quantize bits=8", "topk k=0.1", "powersgd rank=1", "powersgd rank=4"})
      EXPECT_EQ(settings.count(s), 1u) << s;
    EXPECT_EQ(settings.count("powersgd rank=1 feedback=\"ef\""), d["direction"] == "boundary 0 bwd" ? 1u : 0u)
        << "error feedback on gradients only";
    EXPECT_EQ(settings.count("quantize bits=4 feedback=\"aqsgd\""), d["direction"] == "boundary 0 fwd" ? 1u : 0u)
        << "AQ-SGD on activations only";
    EXPECT_EQ(settings.count(d["setting"].get<std::string>()), 1u);
  }
  EXPECT_LT(p["time_to_target_vs_dense"].get<double>(), 0.8);
  // No later than the best uniform setting, but for a tie the model cannot decide (then the plan rests less on error).
  EXPECT_EQ(p["tie_tolerance"].get<double>(), 0.03);
  EXPECT_LE(p["time_to_target_vs_best_uniform"].get<double>(), 1.03 + 1e-9);
  EXPECT_GE(p["fastest_vs_plan"].get<double>(), 1 / 1.03 - 1e-9);
  EXPECT_LE(p["fastest_vs_plan"].get<double>(), 1.0 + 1e-9);
  EXPECT_TRUE(p["optimal"].get<bool>());
  ASSERT_TRUE(std::filesystem::exists(out));
  std::ifstream file(out);
  const json written = json::parse(file);
  for (const auto& d : p["directions"]) {
    const bool forward = d["direction"] == "boundary 0 fwd";
    const json& setting = written["compression"]["boundaries"]["0"][forward ? "forward" : "backward"];
    EXPECT_EQ(d["setting"].get<std::string>().rfind(setting["method"].get<std::string>(), 0), 0u) << setting;
  }
  const auto trained = runCli({"train", "--preset", out, "--store", store, "--json", "--set", "train.max_steps=3"});
  ASSERT_EQ(trained.exitCode, 0) << trained.err;
  EXPECT_EQ(json::parse(trained.lastLine())["status"], "finished");
  const auto again = runCli({"plan", "--preset", kSmoke, "--store", store, "--steps", "2", "-o", out});
  EXPECT_EQ(again.exitCode, 2);
  EXPECT_NE(again.err.find("exists"), std::string::npos) << again.err;
}

// A setting that finished runs of the same training vouch for is credited with them, and only it, even where its
// error is over the budget; one whose runs never reached the target is not used at all. Here TopK 10% on the
// activations reaches the dense run's accuracy and TopK 1% stops at 41%.
TEST(PlanCli, RunsOfTheSameTrainingAreTheEvidenceForTheirSettingOnly) {
  const auto store = planStore("evidence");
  for (const std::vector<std::string> sets : {std::vector<std::string>{},
                                              {"compression.forward.method=topk", "compression.forward.k=0.01"},
                                              {"compression.forward.method=topk", "compression.forward.k=0.1"}}) {
    std::vector<std::string> args{"train", "--preset", kSmoke, "--store", store, "--json"};
    for (const auto& s : sets) args.push_back("--set"), args.push_back(s);
    const auto r = runCli(args);
    ASSERT_EQ(r.exitCode, 0) << r.err;
  }
  // An error budget no TopK meets, a wire slow enough that the smallest message wins.
  const json p = plan(store, {"--bandwidth", "0.1", "--error-budget", "0.01", "--accuracy-budget", "5"});
  ASSERT_FALSE(p.is_null());
  const json& forward = p["directions"][0];
  EXPECT_EQ(forward["direction"], "boundary 0 fwd");
  EXPECT_EQ(forward["setting"], "topk k=0.1") << p.dump();
  EXPECT_EQ(forward["evidence"], json::array({3})) << "run 3 trained it";
  const json& backward = p["directions"][1];
  EXPECT_EQ(backward["evidence"], "error only") << "no run compressed the gradients: " << p.dump();
  EXPECT_LE(backward["relative_error"].get<double>(), 0.01);
}

// AQ-SGD rests on runs only, and its first epoch, which fills its buffers, sends float32: with a dense run and a
// 4-bit AQ-SGD run of 8-step epochs in the store and no error budget to speak of, the activations take AQ-SGD,
// costed as float32 for the share of its steps to the target spent in that epoch.
TEST(PlanCli, AqsgdIsPlannedFromItsRunsWithItsFloat32EpochCounted) {
  const auto store = planStore("aqsgd");
  const std::vector<std::string> small{"--set", "data.synthetic_samples=256"};
  for (const std::vector<std::string> sets :
       {std::vector<std::string>{},
        {"--set", "compression.forward.method=quantize", "--set", "compression.forward.bits=4", "--set",
         "compression.forward.feedback=aqsgd"}}) {
    std::vector<std::string> args{"train", "--preset", kSmoke, "--store", store, "--json"};
    args.insert(args.end(), small.begin(), small.end());
    args.insert(args.end(), sets.begin(), sets.end());
    const auto r = runCli(args);
    ASSERT_EQ(r.exitCode, 0) << r.err;
  }
  std::vector<std::string> extra{"--bandwidth", "0.1", "--error-budget", "0.000001", "--accuracy-budget", "50"};
  extra.insert(extra.end(), small.begin(), small.end());
  const json p = plan(store, extra);
  ASSERT_FALSE(p.is_null());
  const json& forward = p["directions"][0];
  EXPECT_EQ(forward["direction"], "boundary 0 fwd");
  EXPECT_EQ(forward["setting"], "quantize bits=4 feedback=\"aqsgd\"") << p.dump();
  EXPECT_EQ(forward["evidence"], json::array({2})) << "run 2 trained it";
  const double share = forward["float32_share"].get<double>();
  EXPECT_GT(share, 0.0) << "its first epoch sends float32";
  EXPECT_LT(share, 1.0) << "and the runs went on past it to the target";
  EXPECT_LT(p["step_s"].get<double>(), p["dense_step_s"].get<double>());
  for (const auto& c : forward["considered"])
    if (c["setting"] == "quantize bits=2 feedback=\"aqsgd\"") EXPECT_EQ(c["verdict"], "no run vouches for it");
  const auto text =
      runCli({"plan", "--preset", kSmoke, "--store", store, "--steps", "4", "--samples", "2", "--bandwidth", "0.1",
              "--error-budget", "0.000001", "--accuracy-budget", "50", "--set", "data.synthetic_samples=256"});
  ASSERT_EQ(text.exitCode, 0) << text.err;
  EXPECT_NE(text.out.find("% of its steps"), std::string::npos) << text.out;
}

TEST(PlanCli, BadRequestsAreRefusedNamingWhatIsWrong) {
  const auto store = planStore("bad");
  const auto one = runCli({"plan", "--preset", kSmoke, "--store", store, "--set", "pipeline.stages=1"});
  EXPECT_EQ(one.exitCode, 2);
  EXPECT_NE(one.err.find("one stage"), std::string::npos) << one.err;
  const auto budget = runCli({"plan", "--preset", kSmoke, "--error-budget", "2"});
  EXPECT_NE(budget.exitCode, 0);
  EXPECT_NE(budget.err.find("--error-budget"), std::string::npos) << budget.err;
  const auto ties = runCli({"plan", "--preset", kSmoke, "--tie-tolerance", "0.9"});
  EXPECT_NE(ties.exitCode, 0);
  EXPECT_NE(ties.err.find("--tie-tolerance"), std::string::npos) << ties.err;
  const auto network = runCli({"plan", "--preset", kSmoke, "--bandwidth", "0"});
  EXPECT_NE(network.exitCode, 0);
  EXPECT_NE(network.err.find("--bandwidth"), std::string::npos) << network.err;
}

}  // namespace
}  // namespace ps::test
