// `pipesqueeze-cli runs breakeven`: real runs re-timed over a range of bandwidths, as a table and as JSON.
#include "tests/app/cli/CliRunner.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace ps::test {
namespace {

using nlohmann::json;

const std::string kSmokePreset = std::string(PIPESQUEEZE_SOURCE_DIR) + "/presets/smoke.json";

TEST(BreakevenCli, EachBandwidthsWinnerIsTheFastestRunAndBadRequestsSayWhy) {
  const auto store = freshStoreIn("pipesqueeze-breakeven-test", "map");
  for (const std::string method : {"none", "quantize"}) {
    auto r = runCli({"train", "--preset", kSmokePreset, "--store", store, "--set", "train.max_steps=40", "--set",
                     "link.bandwidth_mbps=1", "--set", "compression.forward.method=" + method, "--set",
                     "compression.backward.method=" + method, "--set", "compression.forward.bits=4", "--set",
                     "compression.backward.bits=4"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
  }
  auto r = runCli({"runs", "breakeven", "1", "2", "--store", store, "--bandwidths", "0.1,1,10,1000", "--latency", "0",
                   "--target-fraction", "0.9", "--json"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const json j = json::parse(r.lastLine());
  EXPECT_EQ(j["metric"], "eval/accuracy");
  EXPECT_EQ(j["bandwidths_mbps"], json::array({0.1, 1, 10, 1000}));
  ASSERT_EQ(j["runs"].size(), 2u);
  EXPECT_TRUE(j["runs"][0]["uncompressed"].get<bool>());
  EXPECT_FALSE(j["runs"][1]["uncompressed"].get<bool>());
  ASSERT_TRUE(j["runs"][0]["seconds"][0].is_number()) << "the run the target is set from reaches it";
  for (size_t b = 0; b < 4; ++b) {
    std::optional<double> best;
    json winner = nullptr;
    for (const auto& run : j["runs"]) {
      const json& s = run["seconds"][b];
      if (b > 0 && s.is_number())  // a slower link never reaches the target sooner
        EXPECT_LE(s.get<double>(), run["seconds"][b - 1].get<double>() + 1e-9);
      if (s.is_number() && (!best || s.get<double>() < *best)) best = s.get<double>(), winner = run["run_id"];
    }
    EXPECT_EQ(j["winners"][b]["winner"], winner) << j["winners"][b];
  }
  ASSERT_EQ(j["pairs"].size(), 1u);
  EXPECT_EQ(j["pairs"][0]["summary"].get<std::string>().rfind("run 2 ", 0), 0u) << j["pairs"][0];

  auto table = runCli({"runs", "breakeven", "1", "2", "--store", store, "--bandwidths", "1,1000"});
  ASSERT_EQ(table.exitCode, 0) << table.err;
  EXPECT_NE(table.out.find("fastest"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("run 1: smoke"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("(uncompressed)"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("98% of the uncompressed run 1's final eval/accuracy"), std::string::npos) << table.out;

  const auto error = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"runs", "breakeven", "1", "2", "--store", store});
    auto e = runCli(args);
    EXPECT_NE(e.exitCode, 0);
    return e.err;
  };
  EXPECT_NE(error({"--bandwidths", "1,x"}).find("'x' is not one"), std::string::npos);
  EXPECT_NE(error({"--bandwidth", "10"}).find("bandwidths are --bandwidths"), std::string::npos);
  EXPECT_NE(error({"--target", "85"}).find("give a fraction, 0.85 for 85%"), std::string::npos);
  EXPECT_NE(error({"--target", "0.8", "--target-fraction", "0.9"}).find("not both"), std::string::npos);
  EXPECT_NE(error({"three"}).find("'three' is not one"), std::string::npos);
  auto misplaced = runCli({"runs", "retime", "1", "--store", store, "--target", "0.8"});
  EXPECT_NE(misplaced.err.find("are for runs breakeven"), std::string::npos) << misplaced.err;
}

}  // namespace
}  // namespace ps::test
