// Multi-process runs as a user starts them: `pipesqueeze-cli launch` with 2 to 4 processes on loopback (Gloo),
// compared with the in-process pipeline through the run stores they leave.
#include "engine/runs/store/RunStore.h"
#include "engine/runs/trace/StepTimelines.h"
#include "tests/ListeningSockets.h"
#include "tests/app/cli/CliRunner.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

namespace ps::test {
namespace {

namespace fs = std::filesystem;

// A sanitized rank starts LibTorch and tears down its shadow memory several times slower, and CI runs it beside
// other sanitized tests: the timeouts the tests below set, and what they allow on top, stretch by this factor
// there (a ThreadSanitizer rank once missed a 5 s rendezvous, and another took over 2 s to die).
#ifdef PIPESQUEEZE_SANITIZED
constexpr int kSlow = 3;
#else
constexpr int kSlow = 1;
#endif
using nlohmann::json;

std::string freshStore(const std::string& name) {
  const auto path = (fs::temp_directory_path() / ("pipesqueeze-dist-" + std::to_string(::getpid()) + "-" + name +
                                                  ".sqlite")).string();
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(path + suffix);
  return path;
}

std::string preset(const std::string& name) { return std::string(PIPESQUEEZE_SOURCE_DIR) + "/presets/" + name + ".json"; }

struct Run {
  CliResult cli;
  json summary;
  double seconds = 0;
  std::string store;
};

Run cli(const std::string& command, const std::string& presetName, const std::vector<std::string>& sets,
        const std::string& storeName, const std::vector<std::string>& env = {}) {
  Run r;
  r.store = freshStore(storeName);
  std::vector<std::string> args{command, "--preset", preset(presetName), "--store", r.store, "--json"};
  for (const auto& s : sets) args.insert(args.end(), {"--set", s});
  const auto t0 = std::chrono::steady_clock::now();
  r.cli = runCli(args, env);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (r.cli.exitCode == 0) r.summary = json::parse(r.cli.lastLine());
  return r;
}

std::vector<double> series(const std::string& store, const std::string& key) {
  RunStore s(store);
  auto runs = s.listRuns();
  std::vector<double> out;
  if (runs.empty()) return out;
  for (const auto& m : s.metrics(runs.front().id, key))
    if (m.key == key) out.push_back(m.value);
  return out;
}

void expectClose(const std::vector<double>& a, const std::vector<double>& b, double rtol, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  ASSERT_FALSE(a.empty()) << what;
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_NEAR(a[i], b[i], rtol * std::max(1e-3, std::abs(b[i]))) << what << " at step " << i + 1;
}

// A saved step's timeline apart from its measured durations: every lane's work in order (kind, micro-batch,
// message) and every message (link, micro-batch, bytes, the lanes at its ends).
std::vector<std::string> shapeOf(const std::string& store, int64_t step) {
  RunStore s(store);
  const Timeline t = stepTimelines(s, s.listRuns().front().id, step, {}, {}).recorded;
  std::vector<std::string> out;
  for (const auto& lane : t.lanes) {
    out.push_back("lane " + std::to_string(lane.stage) + "/" + std::to_string(lane.replica));
    for (const auto& b : lane.bars)
      if (b.kind != TimelineBar::Idle)
        out.push_back(std::string(barKindName(b.kind)) + " " + std::to_string(b.microbatch) + " " +
                      std::to_string(b.message));
  }
  for (const auto& m : t.messages)
    out.push_back("message " + std::to_string(m.boundary) + (m.forward ? "f" : "b") + std::to_string(m.microbatch) +
                  " " + std::to_string(m.bytes) + "/" + std::to_string(m.dense) + " " + std::to_string(m.from) + ">" +
                  std::to_string(m.to));
  return out;
}

// A saved step's wall-clock timeline, its stages laid on one clock: every message's decode on its receiver begins
// after its encode on the sender ended (to the microsecond the trace keeps, and the clocks' measured agreement).
void expectMessagesAfterTheirSends(const std::string& store, int64_t step) {
  RunStore s(store);
  const Timeline t = stepTimelines(s, s.listRuns().front().id, step, {}, {}).recorded;
  std::map<int, double> encoded, decoded;
  for (const auto& lane : t.lanes) {
    ASSERT_FALSE(lane.wall.empty()) << "step " << step << " kept no wall-clock times";
    for (const auto& b : lane.wall) {
      if (b.kind == TimelineBar::Encode && b.message >= 0) encoded[b.message] = b.end;
      if (b.kind == TimelineBar::Decode && b.message >= 0) decoded[b.message] = b.start;
    }
  }
  ASSERT_EQ(decoded.size(), t.messages.size()) << "step " << step;
  for (const auto& [m, start] : decoded)
    EXPECT_GE(start + 2e-6, encoded.at(m)) << "step " << step << ": message " << m << " decoded before it was sent";
}

// The synthetic smoke task: 60 steps, 2 stages, 4 micro-batches, evaluation every 20 steps.
const std::vector<std::string> kShort = {"train.max_steps=30", "eval.every_steps=10"};

TEST(Distributed, TwoProcessPipelineGivesTheLossesOfTheInProcessPipeline) {
  const auto threads = cli("train", "smoke", kShort, "threads");
  const auto processes = cli("launch", "smoke", kShort, "processes");
  ASSERT_EQ(threads.cli.exitCode, 0) << threads.cli.err;
  ASSERT_EQ(processes.cli.exitCode, 0) << processes.cli.err;
  expectClose(series(processes.store, "train/loss"), series(threads.store, "train/loss"), 1e-5, "train/loss");
  expectClose(series(processes.store, "eval/loss"), series(threads.store, "eval/loss"), 1e-5, "eval/loss");
  // Several processes record what the link model leaves out of their steps: the control round.
  const auto control = series(processes.store, "time/control_s");
  EXPECT_EQ(control.size(), 30u);
  for (double s : control) EXPECT_TRUE(s > 0 && s < 10) << s;
  EXPECT_TRUE(series(threads.store, "time/control_s").empty()) << "one process has no control round";
  // The same payloads crossed the same links, and every step's timeline has the same work and messages in the
  // same order (its durations are measured, so they differ).
  EXPECT_EQ(processes.summary["bytes_wire"], threads.summary["bytes_wire"]);
  for (int64_t step : {1, 15, 30}) EXPECT_EQ(shapeOf(processes.store, step), shapeOf(threads.store, step)) << step;
  // On the wall clock every rank's events lie on rank 0's clock: no message is decoded before its encode ended.
  for (int64_t step : {1, 15, 30}) expectMessagesAfterTheirSends(processes.store, step);
  RunStore s(processes.store);
  const auto run = s.listRuns().front();
  EXPECT_EQ(run.status, "finished");
  bool sawParallel = false;
  for (const auto& e : s.events(run.id))
    if (e.kind == "start") sawParallel = json::parse(e.detail_json)["parallel"]["processes"] == 2;
  EXPECT_TRUE(sawParallel) << "the start event records the processes";
}

// Both transports of the payloads between stages give the losses of one process: a TCP stream per link direction
// (the default, above) and Gloo's point-to-point messages.
TEST(Distributed, PayloadsThroughGlooMessagesGiveTheLossesOfTheStreams) {
  auto gloo = kShort;
  gloo.push_back("parallel.transport=gloo");
  const auto streams = cli("launch", "smoke", kShort, "streams");
  const auto messages = cli("launch", "smoke", gloo, "gloo");
  ASSERT_EQ(streams.cli.exitCode, 0) << streams.cli.err;
  ASSERT_EQ(messages.cli.exitCode, 0) << messages.cli.err;
  expectClose(series(messages.store, "train/loss"), series(streams.store, "train/loss"), 1e-5, "train/loss");
  expectClose(series(messages.store, "eval/loss"), series(streams.store, "eval/loss"), 1e-5, "eval/loss");
  EXPECT_EQ(messages.summary["bytes_wire"], streams.summary["bytes_wire"]);
}

// Across processes the evaluation batches stream through the stages, and a compressed evaluation sends the
// codec's payload instead of its float32 decoding: the figures stay those of one process, batch for batch.
TEST(Distributed, StreamedCompressedEvaluationGivesTheFiguresOfOneProcess) {
  const std::vector<std::string> sets = {"train.max_steps=20",
                                         "eval.every_steps=10",
                                         "eval.batch_size=37",  // several batches, the last one short
                                         "pipeline.stages=3",
                                         "compression.forward.method=topk",
                                         "compression.forward.k=0.25",
                                         "compression.backward.method=quantize",
                                         "compression.backward.bits=4"};
  const auto threads = cli("train", "smoke", sets, "eval-threads");
  const auto processes = cli("launch", "smoke", sets, "eval-processes");
  ASSERT_EQ(threads.cli.exitCode, 0) << threads.cli.err;
  ASSERT_EQ(processes.cli.exitCode, 0) << processes.cli.err;
  for (const std::string key : {"eval/loss", "eval/accuracy"})
    for (const auto& k : {key, key + "_uncompressed"}) {
      const auto reference = series(threads.store, k);
      EXPECT_EQ(reference.size(), 2u) << k;
      expectClose(series(processes.store, k), reference, 1e-5, k);
    }
  // The compressed evaluation is its own figure: TopK 25% on the way forward changes what the last stage sees.
  EXPECT_NE(series(threads.store, "eval/loss"), series(threads.store, "eval/loss_uncompressed"));
}

// Every rank gets the evaluation's figures, so every rank ends at the evaluation that reaches eval.stop_at_accuracy,
// the step one process ends at; a run that ended where it was asked to exits 0. With one pass, only the headline
// evaluation crosses the links.
TEST(Distributed, EveryRankEndsAtTheEvaluationThatReachesATargetAccuracy) {
  const std::vector<std::string> sets = {"train.max_steps=60",         "eval.every_steps=2",
                                         "pipeline.stages=3",          "compression.forward.method=topk",
                                         "compression.forward.k=0.25", "eval.both_passes=false",
                                         "eval.stop_at_accuracy=0.9"};
  const auto threads = cli("train", "smoke", sets, "target-threads");
  const auto processes = cli("launch", "smoke", sets, "target-processes");
  ASSERT_EQ(threads.cli.exitCode, 0) << threads.cli.err;
  ASSERT_EQ(processes.cli.exitCode, 0) << processes.cli.err;
  for (const auto* r : {&threads, &processes}) {
    EXPECT_EQ(r->summary["status"], "stopped");
    EXPECT_LT(r->summary["steps"].get<int64_t>(), 60);
    EXPECT_GE(r->summary["eval_accuracy"].get<double>(), 0.9);
    const auto accuracy = series(r->store, "eval/accuracy");
    ASSERT_GE(accuracy.size(), 2u) << "an evaluation short of the target came first";
    EXPECT_LT(accuracy.front(), 0.9);
    EXPECT_TRUE(series(r->store, "eval/accuracy_uncompressed").empty());
  }
  EXPECT_EQ(processes.summary["steps"], threads.summary["steps"]);
  expectClose(series(processes.store, "eval/accuracy"), series(threads.store, "eval/accuracy"), 1e-5, "accuracy");
}

// A learned bottleneck's halves live in two processes, each trained by its own stage's optimizer: the run is the
// one-process run, its 8-bit codes and their gradients the same bytes, its evaluations (through the codes and as
// float32 codes) the same figures, its reconstruction error the same.
TEST(Distributed, ALearnedBottleneckAcrossProcessesTrainsAsInOneProcess) {
  const std::vector<std::string> sets = {"train.max_steps=20",
                                         "eval.every_steps=10",
                                         "pipeline.stages=3",
                                         "compression.forward.method=bottleneck",
                                         "compression.forward.code_width=4",
                                         "compression.forward.value_bits=8"};
  const auto threads = cli("train", "smoke", sets, "code-threads");
  const auto processes = cli("launch", "smoke", sets, "code-processes");
  ASSERT_EQ(threads.cli.exitCode, 0) << threads.cli.err;
  ASSERT_EQ(processes.cli.exitCode, 0) << processes.cli.err;
  expectClose(series(processes.store, "train/loss"), series(threads.store, "train/loss"), 1e-5, "train/loss");
  for (const std::string k : {"eval/loss", "eval/loss_uncompressed"})
    expectClose(series(processes.store, k), series(threads.store, k), 1e-5, k);
  EXPECT_EQ(processes.summary["bytes_wire"], threads.summary["bytes_wire"]);
  EXPECT_EQ(processes.summary["bytes_raw"], threads.summary["bytes_raw"]);
  EXPECT_GT(threads.summary["bytes_raw"].get<double>(), 3.5 * threads.summary["bytes_wire"].get<double>());
  // Each sending stage measures its reconstruction with the decoder the next process holds (its weights come with
  // every step's reports), so the forward error is the reconstruction's there too, not the codec's error on the code.
  for (const std::string link : {"link0", "link1"}) {
    const auto reconstruction = series(threads.store, link + "/fwd/rel_error");
    EXPECT_NE(reconstruction, series(threads.store, link + "/fwd/rel_error_compensated")) << link;
    expectClose(series(processes.store, link + "/fwd/rel_error"), reconstruction, 1e-4, link + "/fwd/rel_error");
  }
}

// Replicas of stages joined by a learned bottleneck: its halves are weights of their stages like any other, reduced
// between the replicas, so two replicas on half the batch each train as one replica on the whole batch, the
// reconstruction error included (every replica's sums merged).
TEST(Distributed, ABottleneckBetweenReplicatedStagesTrainsAsOneReplicaOnTheDoubledBatch) {
  const std::vector<std::string> sets = {"train.max_steps=20",
                                         "eval.every_steps=10",
                                         "pipeline.stages=2",
                                         "pipeline.microbatches=2",
                                         "compression.forward.method=bottleneck",
                                         "compression.forward.code_width=4"};
  auto replicated = sets;
  replicated.push_back("parallel.replicas=2");
  const auto one = cli("train", "smoke", sets, "code-one-replica");
  const auto two = cli("launch", "smoke", replicated, "code-two-replicas");
  ASSERT_EQ(one.cli.exitCode, 0) << one.cli.err;
  ASSERT_EQ(two.cli.exitCode, 0) << two.cli.err;
  for (const std::string k : {"train/loss", "eval/loss", "eval/loss_uncompressed", "link0/fwd/rel_error"})
    expectClose(series(two.store, k), series(one.store, k), 1e-4, k);
  EXPECT_EQ(series(two.store, "link0/grad/ratio").size(), 20u) << "the replicas exchanged gradients every step";
}

TEST(Distributed, TwoReplicasWithAnIdentityExchangeEqualOneReplicaOnTheDoubledBatch) {
  // One stage, batch 32: two replicas train on 16 samples each and average their gradients.
  const std::vector<std::string> oneStage = {"train.max_steps=30", "eval.every_steps=10", "pipeline.stages=1",
                                             "pipeline.microbatches=2"};
  auto with = [&](std::vector<std::string> extra) {
    auto v = oneStage;
    v.insert(v.end(), extra.begin(), extra.end());
    return v;
  };
  const auto single = cli("train", "smoke", oneStage, "single");
  const auto allReduce = cli("launch", "smoke", with({"parallel.replicas=2"}), "allreduce");
  // The all-gather path with a sparsifier that keeps everything: the same mean, through payloads.
  const auto allGather = cli("launch", "smoke", with({"parallel.replicas=2", "compression.gradients.method=topk",
                                                      "compression.gradients.k=1"}),
                             "allgather");
  for (const auto* r : {&single, &allReduce, &allGather}) ASSERT_EQ(r->cli.exitCode, 0) << r->cli.err;
  const auto reference = series(single.store, "train/loss");
  expectClose(series(allReduce.store, "train/loss"), reference, 1e-4, "all-reduce train/loss");
  expectClose(series(allGather.store, "train/loss"), reference, 1e-4, "all-gather train/loss");
  expectClose(series(allReduce.store, "eval/loss"), series(single.store, "eval/loss"), 1e-4, "eval/loss");
  // The exchange is telemetry like every link: a dense ring all-reduce of the stage's gradients, every step.
  const auto wire = series(allReduce.store, "link0/grad/wire_bytes");
  ASSERT_EQ(wire.size(), 30u);
  EXPECT_GT(wire.front(), 0);
  EXPECT_EQ(series(allReduce.store, "link0/grad/ratio").front(), 1.0);
}

// A run whose values blow up diverges on every rank, as it does in one process: whether the first stage's rank sees
// it first (the others then wait on it, and are stopped) or the replicas' step reports carry error sums that
// overflowed to +inf on the way.
TEST(Distributed, ADivergingRunEndsAsDivergedNotFailed) {
  const std::vector<std::string> blowUp = {"train.max_steps=20", "eval.every_steps=0", "train.optimizer=sgd",
                                           "train.lr=1000"};
  auto with = [&](std::vector<std::string> extra) {
    auto v = blowUp;
    v.insert(v.end(), extra.begin(), extra.end());
    return v;
  };
  const auto stages = cli("launch", "smoke", blowUp, "diverging-stages");
  const auto replicas =
      cli("launch", "smoke",
          with({"parallel.replicas=2", "compression.gradients.method=topk", "compression.gradients.k=0.05"}),
          "diverging-replicas");
  for (const auto* r : {&stages, &replicas}) {
    EXPECT_EQ(r->cli.exitCode, 1) << r->cli.err;  // as a diverged run in one process
    const json summary = json::parse(r->cli.lastLine());
    EXPECT_EQ(summary["status"], "diverged") << summary.dump();
    EXPECT_NE(summary["reason"].get<std::string>().find("lower train.lr"), std::string::npos) << summary.dump();
    EXPECT_LT(summary["steps"].get<int>(), 20);
    EXPECT_EQ(RunStore(r->store).run(summary["run_id"].get<int64_t>())->status, "diverged");
  }
}

TEST(Distributed, TopKSgdOnTwoStagesTimesTwoReplicasSendsAFractionOfTheGradients) {
  const auto r = cli("launch", "smoke",
                     {"train.max_steps=30", "eval.every_steps=0", "parallel.replicas=2",
                      "compression.gradients.method=topk", "compression.gradients.k=0.01",
                      "compression.gradients.feedback=ef"},
                     "topk-sgd");
  ASSERT_EQ(r.cli.exitCode, 0) << r.cli.err;
  EXPECT_EQ(r.summary["status"], "finished");
  for (int stage : {0, 1}) {
    const std::string p = "link" + std::to_string(stage) + "/grad/";
    const auto density = series(r.store, p + "density"), ratio = series(r.store, p + "ratio");
    ASSERT_EQ(density.size(), 30u) << p;
    EXPECT_NEAR(density.back(), 0.01, 0.002) << p;
    EXPECT_GT(ratio.back(), 20.0) << p;  // vs a dense ring all-reduce of float32
    EXPECT_GT(series(r.store, p + "rel_error").back(), 0.0) << p;
  }
  EXPECT_TRUE(std::isfinite(r.summary["train_loss"].get<double>()));
  // Every rank's part of every step was kept: the run re-times to its own emulated time exactly (the replicas'
  // exchanges included), and a slower network takes longer.
  const std::string id = std::to_string(r.summary["run_id"].get<int64_t>());
  const auto own = runCli({"runs", "retime", id, "--store", r.store, "--json"});
  ASSERT_EQ(own.exitCode, 0) << own.err;
  EXPECT_EQ(json::parse(own.lastLine())["emulated_seconds"].get<double>(), r.summary["emulated_seconds"].get<double>());
  const auto slow = runCli({"runs", "retime", id, "--bandwidth", "1", "--store", r.store, "--json"});
  ASSERT_EQ(slow.exitCode, 0) << slow.err;
  EXPECT_GT(json::parse(slow.lastLine())["emulated_seconds"].get<double>(),
            r.summary["emulated_seconds"].get<double>());
}

// Two processes on two GPUs: the payloads between the stages cross through NCCL and give the losses of the same run
// with them through Gloo (the payload bytes are the same either way). Where the machine cannot (no GPU, one GPU for
// both stages), the CLI's refusal is the reason to skip.
TEST(Distributed, PayloadsBetweenGpuStagesThroughNcclGiveTheLossesOfGloo) {
  const std::vector<std::string> gpu = {"train.max_steps=30", "eval.every_steps=10", "pipeline.device=cuda",
                                        "parallel.mode=processes"};
  auto with = [&](const char* backend) {
    auto sets = gpu;
    sets.push_back(std::string("parallel.backend=") + backend);
    return sets;
  };
  const auto nccl = cli("launch", "smoke", with("nccl"), "nccl-links");
  if (nccl.cli.exitCode == 2 &&
      (nccl.cli.err.find("no CUDA device") != std::string::npos ||
       nccl.cli.err.find("would share") != std::string::npos || nccl.cli.err.find("no NCCL") != std::string::npos))
    GTEST_SKIP() << nccl.cli.err.substr(0, nccl.cli.err.find('\n'));
  ASSERT_EQ(nccl.cli.exitCode, 0) << nccl.cli.err;
  const auto gloo = cli("launch", "smoke", with("gloo"), "gloo-links");
  ASSERT_EQ(gloo.cli.exitCode, 0) << gloo.cli.err;
  expectClose(series(nccl.store, "train/loss"), series(gloo.store, "train/loss"), 1e-4, "train/loss");
  expectClose(series(nccl.store, "eval/loss"), series(gloo.store, "eval/loss"), 1e-4, "eval/loss");
  // Link accounting does not depend on the transport.
  for (const char* key : {"link0/fwd/wire_bytes", "link0/bwd/wire_bytes"})
    expectClose(series(nccl.store, key), series(gloo.store, key), 0, key);
}

// Every rank refuses a bad setting at once; their lines must not interleave, and each worker says which rank it is.
TEST(Distributed, ASettingEveryRankRefusesGivesWholeLinesNamingTheRank) {
  const auto r = cli("launch", "smoke", {"parallel.replicas=2", "parallel.backend=nccl"}, "refused");
  EXPECT_EQ(r.cli.exitCode, 2) << r.cli.err;
  std::istringstream lines(r.cli.err);
  int rankZero = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) continue;
    const bool worker =
        line.rfind("rank ", 0) == 0 && line.find(": error: parallel.backend = nccl") != std::string::npos;
    rankZero += line.rfind("error: parallel.backend = nccl", 0) == 0;
    EXPECT_TRUE(worker || line.rfind("error: parallel.backend = nccl", 0) == 0) << "a broken line: " << line;
  }
  EXPECT_EQ(rankZero, 1) << r.cli.err;
}

TEST(Distributed, AKilledRankEndsTheOthersWithinTheTimeoutAndTheStoreStaysReadable) {
  const int timeout = 5 * kSlow;
  const auto r = cli("launch", "smoke",
                     {"pipeline.stages=3", "train.max_steps=200", "parallel.timeout_s=" + std::to_string(timeout)},
                     "killed", {"PIPESQUEEZE_FAULT=2:20:kill"});
  EXPECT_EQ(r.cli.exitCode, 1) << r.cli.err;
  EXPECT_LT(r.seconds, timeout + 20.0 * kSlow) << "the others stop within the timeout (plus start-up and diagnosis)";
  EXPECT_NE(r.cli.err.find("rank 2 (stage 2, replica 0) stopped responding"), std::string::npos) << r.cli.err;
  RunStore s(r.store);
  const auto runs = s.listRuns();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].status, "failed");
  EXPECT_NE(runs[0].status_reason.find("rank 2 (stage 2, replica 0)"), std::string::npos) << runs[0].status_reason;
  EXPECT_EQ(s.metrics(runs[0].id, "train/loss").size(), 19u) << "every step before the failure is kept";
  EXPECT_EQ(s.integrityCheck(), "ok");
}

bool alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), {});
  const auto close = text.rfind(')');
  return close != std::string::npos && text.size() > close + 2 && text[close + 2] != 'Z';
}

// A launcher killed with SIGKILL cannot clean up: its ranks must not live on until their timeout (here 60 s), and
// no configuration file may stay behind in TMPDIR.
TEST(Distributed, RanksDieWithinTwoSecondsOfAKilledLauncherAndLeaveNoFile) {
  const auto tmp = fs::temp_directory_path() / ("pipesqueeze-dist-tmp-" + std::to_string(::getpid()));
  fs::create_directories(tmp);
  const auto store = freshStore("orphans");
  CliProcess launcher({"launch", "--preset", preset("smoke"), "--store", store, "--set", "pipeline.stages=3", "--set",
                       "train.max_steps=100000", "--set", "parallel.timeout_s=60"},
                      {"TMPDIR=" + tmp.string()});
  std::vector<pid_t> ranks;
  for (int i = 0; i < 200 && ranks.size() < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ranks = childrenOf(launcher.pid());
  }
  ASSERT_EQ(ranks.size(), 2u) << "the launcher did not start its two ranks";
  std::this_thread::sleep_for(std::chrono::seconds(2));  // training
  EXPECT_TRUE(fs::is_empty(tmp)) << "a launch file was written to TMPDIR";
  launcher.signal(SIGKILL);
  launcher.wait();
  const auto killed = std::chrono::steady_clock::now();
  for (pid_t rank : ranks) {
    while (alive(rank) && std::chrono::steady_clock::now() - killed < std::chrono::seconds(2 * kSlow))
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_FALSE(alive(rank)) << "rank process " << rank << " outlived its launcher by " << 2 * kSlow << " s";
    if (alive(rank)) ::kill(rank, SIGKILL);
  }
  EXPECT_TRUE(fs::is_empty(tmp));
  fs::remove_all(tmp);
}

TEST(Distributed, ASingleHostRunListensOnLoopbackOnly) {
  // What `ss -ltnp` shows for the launcher and its ranks while they train: the rendezvous store and Gloo's
  // listeners, every one of them on loopback (c10d's TCPStore listened on every interface).
  const auto store = freshStore("listeners");
  CliProcess launcher({"launch", "--preset", preset("smoke"), "--store", store, "--set", "pipeline.stages=3", "--set",
                       "train.max_steps=100000", "--set", "parallel.timeout_s=60"});
  std::vector<pid_t> ranks;
  for (int i = 0; i < 200 && ranks.size() < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ranks = childrenOf(launcher.pid());
  }
  ASSERT_EQ(ranks.size(), 2u) << "the launcher did not start its two ranks";
  std::vector<pid_t> all = ranks;
  all.push_back(launcher.pid());
  std::set<int> ports;
  // Sampled through the rendezvous and the first steps: the store lives all run, Gloo's listeners while the ranks
  // connect (their number depends on timing, so it is not asserted).
  for (int i = 0; i < 100; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    for (const auto& l : test::listenersOf(all)) {
      EXPECT_TRUE(l.loopback()) << "a rank listens on " << l.text();
      ports.insert(l.port);
    }
  }
  EXPECT_FALSE(ports.empty()) << "no listener seen at all: not even the rendezvous store";
  launcher.signal(SIGINT);
  EXPECT_EQ(launcher.wait().exitCode, 1) << "a stopped run exits with 1";
}

TEST(Distributed, AHungRankIsDeclaredFailedAfterTheTimeout) {
  const int timeout = 4 * kSlow;
  const auto r = cli("launch", "smoke",
                     {"pipeline.stages=3", "train.max_steps=200", "parallel.timeout_s=" + std::to_string(timeout)},
                     "hung", {"PIPESQUEEZE_FAULT=1:15:hang"});
  EXPECT_EQ(r.cli.exitCode, 1) << r.cli.err;
  EXPECT_GT(r.seconds, double(timeout)) << "a silent rank is given the whole timeout";
  EXPECT_LT(r.seconds, timeout + 20.0 * kSlow);
  RunStore s(r.store);
  const auto runs = s.listRuns();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].status, "failed");
  EXPECT_NE(runs[0].status_reason.find("rank 1 (stage 1, replica 0) stopped responding"), std::string::npos)
      << runs[0].status_reason;
}

TEST(Distributed, ASecondInterruptExitsAtOnceWhileARankHangs) {
  // The first Ctrl-C asks for a clean stop, which needs every rank at the next step; a hung rank never gets there,
  // so only the cluster timeout (60 s here) would end the run. The second Ctrl-C means "now".
  const auto store = freshStore("second-interrupt");
  const auto t0 = std::chrono::steady_clock::now();
  CliProcess p({"launch", "--preset", preset("smoke"), "--store", store, "--set", "pipeline.stages=2", "--set",
                "train.max_steps=1000", "--set", "parallel.timeout_s=60"},
               {"PIPESQUEEZE_FAULT=1:3:hang"});
  waitForSteps(store, 1);
  std::this_thread::sleep_for(std::chrono::seconds(2));  // rank 1 is stopped at step 3 by now; rank 0 waits on it
  p.signal(SIGINT);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  p.signal(SIGINT);
  const auto r = p.wait();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.exitCode, 128 + SIGINT) << "the second interrupt ends the launcher by the signal\n" << r.err;
  EXPECT_LT(seconds, 30.0) << "not after the 60 s timeout";
  EXPECT_EQ(RunStore(store).integrityCheck(), "ok");
}

TEST(Distributed, GravacMovesTheReplicasGradientFactorAndSettles) {
  // Small windows so the exploration ends within the run.
  const auto r = cli("launch", "smoke",
                     {"pipeline.stages=1", "pipeline.microbatches=1", "train.max_steps=60", "eval.every_steps=0",
                      "parallel.replicas=2", "compression.gradients.method=topk", "compression.gradients.feedback=ef",
                      "compression.gradients.adapt=gravac", "compression.gradients.theta_min=0.2",
                      "compression.gradients.theta_max=0.01", "compression.gradients.window=5",
                      "compression.gradients.epsilon=0.5"},
                     "gravac");
  ASSERT_EQ(r.cli.exitCode, 0) << r.cli.err;
  RunStore s(r.store);
  const auto run = s.listRuns().front();
  int changes = 0;
  bool settled = false;
  for (const auto& e : s.events(run.id)) {
    const auto d = json::parse(e.detail_json);
    if (d.value("key", "") != "compression.gradients.k" || d.value("source", "") != "gravac") continue;
    if (e.kind == "setting") ++changes;
    settled = settled || d.value("reason", "").find("settled") != std::string::npos;
  }
  EXPECT_GE(changes, 2) << "GraVAC starts at theta_min and moves from there";
  EXPECT_TRUE(settled);
  // What was sent follows the factor: the density of the last step is a candidate, not the start value.
  const auto density = series(r.store, "link0/grad/density");
  ASSERT_EQ(density.size(), 60u);
  EXPECT_GT(density.front(), 0.15);
}

TEST(Distributed, BadLaunchesAreRefusedWithTheFix) {
  auto r = runCli({"launch", "--preset", preset("smoke"), "--nproc", "3", "--store", freshStore("bad")});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("--nproc 3 but the run has pipeline.stages = 2 x parallel.replicas = 1 = 2 workers"),
            std::string::npos)
      << r.err;
  r = runCli({"train", "--preset", preset("smoke"), "--set", "parallel.replicas=3", "--store", freshStore("bad")});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("train.batch_size = 32 does not split evenly over parallel.replicas = 3"), std::string::npos)
      << r.err;
  r = runCli({"train", "--preset", preset("smoke"), "--store", freshStore("bad")}, {"RANK=1"});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("RANK and WORLD_SIZE must be set together"), std::string::npos) << r.err;
  r = runCli({"train", "--preset", preset("smoke"), "--store", freshStore("bad")}, {"RANK=0", "WORLD_SIZE=3"});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("WORLD_SIZE = 3 but the run has pipeline.stages = 2 x parallel.replicas = 1"), std::string::npos)
      << r.err;
  // A --bind that is not this machine's is named at once, not after a connection timeout.
  r = runCli({"train", "--preset", preset("smoke"), "--store", freshStore("bad"), "--bind", "192.0.2.77"},
             {"RANK=0", "WORLD_SIZE=2"});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("--bind 192.0.2.77 is not an address of this machine"), std::string::npos) << r.err;
  // `launch` inside an srun job step would start ranks a second time.
  r = runCli({"launch", "--preset", preset("smoke"), "--store", freshStore("bad")},
             {"SLURM_STEP_NUM_TASKS=2", "SLURM_PROCID=0", "SLURM_STEP_NODELIST=localhost"});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("SLURM_PROCID/SLURM_STEP_NUM_TASKS are set; use `train` under an external launcher"),
            std::string::npos)
      << r.err;
}

// A rank that never comes is a failed run (exit 1) after the run's timeout, said as such: not bad input (exit 2), and
// not blamed on --bind, which was checked before anything connected.
TEST(Distributed, ARankThatNeverComesIsAFailedRunNotBadInput) {
  const std::string port = std::to_string(test::freeLoopbackPort());
  const auto r =
      runCli({"train", "--preset", preset("smoke"), "--store", freshStore("alone"), "--set", "parallel.timeout_s=4"},
             {"RANK=0", "WORLD_SIZE=2", "MASTER_ADDR=127.0.0.1", "MASTER_PORT=" + port});
  EXPECT_EQ(r.exitCode, 1) << r.err;
  EXPECT_EQ(r.err.find("--bind"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("ranks were started"), std::string::npos) << r.err;
}

// `srun pipesqueeze-cli train ...`: two tasks of a Slurm job step on this machine meet through Slurm's variables
// alone and give the in-process run's losses.
TEST(Distributed, ASlurmJobStepRunsFromSlurmsVariables) {
  const auto threads = cli("train", "smoke", kShort, "slurm-threads");
  ASSERT_EQ(threads.cli.exitCode, 0) << threads.cli.err;
  const std::string store = freshStore("slurm");
  const std::string port = std::to_string(test::freeLoopbackPort());
  std::vector<std::unique_ptr<CliProcess>> tasks;
  for (int task : {0, 1}) {
    std::vector<std::string> args{"train", "--preset", preset("smoke"), "--store", store, "--json"};
    for (const auto& s : kShort) args.insert(args.end(), {"--set", s});
    tasks.push_back(std::make_unique<CliProcess>(
        args, std::vector<std::string>{"SLURM_STEP_NUM_TASKS=2", "SLURM_PROCID=" + std::to_string(task),
                                       "SLURM_LOCALID=" + std::to_string(task), "SLURM_STEP_NODELIST=localhost",
                                       "SLURM_STEP_TASKS_PER_NODE=2", "MASTER_PORT=" + port}));
  }
  const auto first = tasks[0]->wait();
  const auto second = tasks[1]->wait();
  ASSERT_EQ(first.exitCode, 0) << first.err;
  ASSERT_EQ(second.exitCode, 0) << second.err;
  expectClose(series(store, "train/loss"), series(threads.store, "train/loss"), 1e-5, "train/loss");
}

}  // namespace
}  // namespace ps::test
