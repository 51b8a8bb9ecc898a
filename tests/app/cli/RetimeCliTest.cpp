// `pipesqueeze-cli runs retime`: a saved run's emulated time at another network, from the step traces it stored.
#include "tests/app/cli/CliRunner.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>

namespace ps::test {
namespace {

using nlohmann::json;

std::string retimeStore(const std::string& name) {
  return freshStoreIn("pipesqueeze-retime-test", name);
}

const std::string kSmokePreset = std::string(PIPESQUEEZE_SOURCE_DIR) + "/presets/smoke.json";

// A run whose steps are mostly link time: 1 KiB activations per micro-batch at a few Mbit/s.
json trainAt(const std::string& store, double mbps) {
  auto r = runCli({"train", "--preset", kSmokePreset, "--store", store, "--json", "--set",
                   "link.bandwidth_mbps=" + json(mbps).dump(), "--set", "train.max_steps=40"});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  return r.exitCode == 0 ? json::parse(r.lastLine()) : json();
}

// Re-timing to an ideal link with no latency leaves a run's measured compute.
const std::vector<std::string> kFreeLink{"--bandwidth", "1e9", "--latency", "0", "--framing", "none"};

TEST(RetimeCli, ARunRetimedToItsOwnNetworkGivesItsRecordedTimeAndToAnotherOneARunThere) {
  const auto store = retimeStore("retime");
  const auto retime = [&](const std::string& run, std::vector<std::string> network) {
    std::vector<std::string> args{"runs", "retime", run, "--store", store, "--json"};
    args.insert(args.end(), network.begin(), network.end());
    const auto r = runCli(args);
    EXPECT_EQ(r.exitCode, 0) << r.err;
    return r.exitCode == 0 ? json::parse(r.lastLine()) : json::object();
  };
  const auto seconds = [](const json& retimed) { return retimed.value("emulated_seconds", -1.0); };
  const json slow = trainAt(store, 1);
  const json fast = trainAt(store, 4);
  ASSERT_FALSE(slow.is_null());
  ASSERT_FALSE(fast.is_null());
  const std::string id = std::to_string(slow["run_id"].get<int64_t>());

  auto own = runCli({"runs", "retime", id, "--store", store, "--json"});
  ASSERT_EQ(own.exitCode, 0) << own.err;
  const json o = json::parse(own.lastLine());
  EXPECT_EQ(o["emulated_seconds"].get<double>(), slow["emulated_seconds"].get<double>()) << "not to the bit";
  EXPECT_EQ(o["recorded_emulated_seconds"], o["emulated_seconds"]);
  EXPECT_TRUE(o["bandwidth_mbps"].is_null());
  EXPECT_EQ(o["steps"], 40);
  ASSERT_EQ(o["evaluations"].size(), 2u);  // steps 20 and 40 (the last step's, which is also the final one)
  EXPECT_EQ(o["evaluations"][0]["step"], 20);
  EXPECT_TRUE(o["evaluations"][0]["values"].contains("eval/accuracy"));
  ASSERT_EQ(o["epochs"].size(), 2u);  // 1024 samples in batches of 32: epoch 0 is steps 1-32
  EXPECT_EQ(o["epochs"][1]["epoch"], 1);
  EXPECT_NEAR(o["epochs"][0]["seconds"].get<double>() + o["epochs"][1]["seconds"].get<double>(),
              o["emulated_seconds"].get<double>(), 1e-9);
  // Steps 33-40 against steps 1-32, counting what the links add to each epoch's compute: that is the same every
  // step, where compute measured on a loaded machine is not.
  const json computeOnly = retime(id, kFreeLink);
  ASSERT_EQ(computeOnly["epochs"].size(), 2u);
  const auto linkSeconds = [&](int epoch) {
    return o["epochs"][epoch]["seconds"].get<double>() - computeOnly["epochs"][epoch]["seconds"].get<double>();
  };
  EXPECT_NEAR(linkSeconds(1) / linkSeconds(0), 8.0 / 32, 0.03);

  // The 1 Mbit/s run re-timed to 4 Mbit/s is the run trained at 4 Mbit/s, but for its measured compute: what the
  // links add to each run's own compute (its steps re-timed to a free link) is the same. Compared whole, the two
  // runs' compute, measured on a loaded machine under a sanitizer, moved them apart by more than the links' share.
  const std::string fastId = std::to_string(fast["run_id"].get<int64_t>());
  const double retimed = seconds(retime(id, {"--bandwidth", "4"}));
  const double linksRetimed = retimed - seconds(computeOnly);
  const double linksTrained = fast["emulated_seconds"].get<double>() - seconds(retime(fastId, kFreeLink));
  EXPECT_GT(linksTrained, 0.0);
  EXPECT_NEAR(linksRetimed, linksTrained, 0.05 * linksTrained);
  EXPECT_LT(retimed, 0.5 * o["emulated_seconds"].get<double>());
  auto later = runCli({"runs", "retime", id, "--latency", "20", "--store", store, "--json"});
  ASSERT_EQ(later.exitCode, 0) << later.err;
  EXPECT_GT(json::parse(later.lastLine())["emulated_seconds"].get<double>(),
            o["emulated_seconds"].get<double>() + 40 * 0.02);

  auto text = runCli({"runs", "retime", id, "--bandwidth", "4", "--latency", "1", "--store", store});
  ASSERT_EQ(text.exitCode, 0) << text.err;
  EXPECT_NE(text.out.find("at 4.0 Mbit/s, 1.0 ms latency"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("evaluation after step 20 at "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("epoch 0: "), std::string::npos) << text.out;

  // The run was trained with TCP framing (the default); on an ideal link the same steps take less time, as a run
  // trained there does.
  auto ideal = runCli({"runs", "retime", id, "--framing", "none", "--store", store, "--json"});
  ASSERT_EQ(ideal.exitCode, 0) << ideal.err;
  const json i = json::parse(ideal.lastLine());
  EXPECT_EQ(i["framing"], "none");
  EXPECT_LT(i["emulated_seconds"].get<double>(), 0.97 * o["emulated_seconds"].get<double>());
  EXPECT_GT(i["emulated_seconds"].get<double>(), 0.9 * o["emulated_seconds"].get<double>());
  auto idealText = runCli({"runs", "retime", id, "--framing", "none", "--store", store});
  EXPECT_NE(idealText.out.find(" on an ideal link: "), std::string::npos) << idealText.out;
}

// One interface per stage (link.egress = stage): a middle stage's activations and gradients queue for the same
// bandwidth, so a link-bound 3-stage run takes longer than with a wire per link direction; re-timing either run to
// the other egress gives the other run, and each to its own network gives its recorded time to the bit.
TEST(RetimeCli, AStageWithOneInterfaceIsTimedAndRetimedAsOne) {
  const auto store = retimeStore("egress");
  auto train = [&](const std::string& egress) {
    // 0.25 Mbit/s: link time so far above compute that two runs' measured compute (on a loaded machine) cannot
    // move the comparison between them.
    auto r = runCli({"train", "--preset", kSmokePreset, "--store", store, "--json", "--set", "link.bandwidth_mbps=0.25",
                     "--set", "train.max_steps=30", "--set", "pipeline.stages=3", "--set", "link.egress=" + egress});
    EXPECT_EQ(r.exitCode, 0) << r.err;
    return r.exitCode == 0 ? json::parse(r.lastLine()) : json();
  };
  const json wires = train("link"), shared = train("stage");
  ASSERT_FALSE(wires.is_null());
  ASSERT_FALSE(shared.is_null());
  const double w = wires["emulated_seconds"].get<double>(), s = shared["emulated_seconds"].get<double>();
  EXPECT_GT(s, 1.1 * w) << "the middle stage's two directions share its bandwidth";
  auto retime = [&](const json& run, std::vector<std::string> extra) {
    std::vector<std::string> args{"runs",    "retime", std::to_string(run["run_id"].get<int64_t>()),
                                  "--store", store,    "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = runCli(args);
    EXPECT_EQ(r.exitCode, 0) << r.err;
    return r.exitCode == 0 ? json::parse(r.lastLine()) : json();
  };
  EXPECT_EQ(retime(shared, {})["emulated_seconds"].get<double>(), s) << "not to the bit";
  EXPECT_EQ(retime(wires, {})["emulated_seconds"].get<double>(), w) << "not to the bit";
  const json asWires = retime(shared, {"--egress", "link"});
  EXPECT_EQ(asWires["egress"], "link");
  EXPECT_NEAR(asWires["emulated_seconds"].get<double>(), w, 0.05 * w);
  EXPECT_NEAR(retime(wires, {"--egress", "stage"})["emulated_seconds"].get<double>(), s, 0.05 * s);
  const auto text =
      runCli({"runs", "retime", std::to_string(wires["run_id"].get<int64_t>()), "--egress", "stage", "--store", store});
  EXPECT_NE(text.out.find(" one interface per stage: "), std::string::npos) << text.out;
}

TEST(RetimeCli, BadArgumentsAreRefusedNamingWhatIsWrong) {
  const auto store = retimeStore("bad");
  const json run = trainAt(store, 100);
  ASSERT_FALSE(run.is_null());
  const std::string id = std::to_string(run["run_id"].get<int64_t>());
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"--bandwidth", "0"}, "the bandwidth must be a positive number of Mbit/s"},
      {{"--bandwidth", "-3"}, "the bandwidth must be a positive number of Mbit/s"},
      {{"--latency", "-1"}, "the latency must be a number of milliseconds, 0 or more"},
      {{"--bandwidth", "fast"}, "--bandwidth"},
      {{"--framing", "udp"}, "--framing"},
      {{"--egress", "nic"}, "--egress"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args{"runs", "retime", id, "--store", store};
    args.insert(args.end(), c.args.begin(), c.args.end());
    const auto r = runCli(args);
    EXPECT_NE(r.exitCode, 0) << c.args[1];
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
  }
  auto noId = runCli({"runs", "retime", "--store", store});
  EXPECT_NE(noId.err.find("runs retime needs a run id"), std::string::npos) << noId.err;
  auto unknown = runCli({"runs", "retime", "999", "--store", store});
  EXPECT_NE(unknown.err.find("no run with id 999"), std::string::npos) << unknown.err;
  auto elsewhere = runCli({"runs", "show", id, "--bandwidth", "10", "--store", store});
  EXPECT_NE(elsewhere.err.find("--bandwidth, --latency, --framing and --egress are for runs retime"), std::string::npos)
      << elsewhere.err;
}

}  // namespace
}  // namespace ps::test
