// Encode + decode time of every codec against torch::topk, torch::kthvalue and a memcpy of the same tensor,
// all timed in one run. bench_compress [--sizes 1,16,64] (millions of floats) [--reps R] [--rounds R]
// [--only SUBSTRING] (--only keeps the codecs whose label contains SUBSTRING, for profiling one of them; --rounds,
// default 2, times every case once per round and keeps its best)
#include "engine/compress/Codec.h"
#include "engine/compress/spec/Catalogue.h"
#include "engine/session/Threads.h"
#include "tests/bench/BenchArgs.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>

namespace {

using namespace ps;
using Clock = std::chrono::steady_clock;

// Best of at least `reps` timed calls after a warm-up; short calls get more repetitions (up to 2000, about 250 ms
// of calls), so sub-millisecond cases at 1M floats are not one scheduler hiccup away from a different ratio. On this
// 2-vCPU VM a process sometimes runs a few hundred ms slow at first (both OpenMP threads on one vCPU until the
// scheduler spreads them); 50 ms of calls could fall entirely inside that and report a ratio 1.5x too high.
template <typename F>
double best(int reps, F&& f) {
  const auto w0 = Clock::now();
  f();  // warm-up
  const double warm = std::chrono::duration<double>(Clock::now() - w0).count();
  reps = std::max(reps, std::min(2000, int(0.25 / std::max(warm, 1e-6))));
  double b = 1e300;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = Clock::now();
    f();
    b = std::min(b, std::chrono::duration<double>(Clock::now() - t0).count());
  }
  return b * 1e3;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int64_t> sizes{1, 16, 64};
  int reps = 3, rounds = 2;
  std::string only;
  CLI::App app{"Encode + decode of every codec against torch::topk, torch::kthvalue and a memcpy"};
  ps::bench::addSizes(app, sizes, "millions of floats");
  ps::bench::addCount(app, "--reps", reps, "calls per timing");
  ps::bench::addCount(app, "--rounds", rounds, "rounds; each case keeps its best");
  app.add_option("--only", only, "only the codecs whose label contains this text");
  ps::bench::parse(app, argc, argv);
  configureThreads(0, 1);
  nlohmann::json out = nlohmann::json::array();
  for (int64_t millions : sizes) {
    const int64_t n = millions * 1000000;
    torch::manual_seed(1);
    auto x = torch::randn({n});
    // Codecs see it as a 1000-row matrix: the same bytes for every codec that flattens, a shape for PowerSGD.
    const auto matrix = x.view({1000, n / 1000});
    auto copy = torch::empty_like(x);
    auto copyOnce = [&] { std::memcpy(copy.data_ptr<float>(), x.data_ptr<float>(), size_t(n) * 4); };
    double memcpyMs = best(reps, copyOnce);
    double topk[2];
    for (int i = 0; i < 2; ++i) {
      const int64_t k = int64_t((i ? 0.1 : 0.01) * double(n));
      topk[i] = best(std::max(1, reps / 2), [&] { auto r = x.abs().topk(k); });
    }
    const double kth = best(std::max(1, reps / 2), [&] { auto r = x.abs().neg().kthvalue(int64_t(0.01 * double(n))); });
    struct Case {
      std::string label;
      CompressionOptions o;
      int topkRef;  // which torch::topk to compare with, -1 none
    };
    std::vector<Case> cases;
    auto add = [&](std::string label, std::function<void(CompressionOptions&)> f, int ref = -1) {
      CompressionOptions o;
      f(o);
      if (label.find(only) != std::string::npos) cases.push_back({std::move(label), o, ref});
    };
    add("none (float32)", [](auto& o) { o.method = "none"; });
    add("fp16", [](auto& o) { o.method = "fp16"; });
    add("bf16", [](auto& o) { o.method = "bf16"; });
    add("quantize 8-bit bucket 512", [](auto& o) { o.method = "quantize", o.bits = 8; });
    add("quantize 4-bit bucket 512", [](auto& o) { o.method = "quantize", o.bits = 4; });
    add("quantize 2-bit stochastic", [](auto& o) { o.method = "quantize", o.bits = 2, o.rounding = "stochastic"; });
    add("qsgd s=16", [](auto& o) { o.method = "qsgd"; });
    add("sign", [](auto& o) { o.method = "sign"; });
    add("topk 1%", [](auto& o) { o.method = "topk", o.k = 0.01; }, 0);
    add("topk 10%", [](auto& o) { o.method = "topk", o.k = 0.1; }, 1);
    add("topk 10% + 8-bit values", [](auto& o) { o.method = "topk", o.k = 0.1, o.value_bits = 8; }, 1);
    add("gaussiank 1%", [](auto& o) { o.method = "gaussiank", o.k = 0.01; }, 0);
    add("gaussiank 10%", [](auto& o) { o.method = "gaussiank", o.k = 0.1; }, 1);
    add("sampledk 1%", [](auto& o) { o.method = "sampledk", o.k = 0.01; }, 0);
    add("randk 1%", [](auto& o) { o.method = "randk", o.k = 0.01; }, 0);
    add("powersgd rank 4", [](auto& o) { o.method = "powersgd", o.extra["rank"] = 4; });
    // Every other codec of the catalogue at its defaults, so a new codec is timed without editing this file.
    for (const auto& spec : catalogue::codecs()) {
      const bool covered = std::any_of(cases.begin(), cases.end(), [&](const Case& c) { return c.o.method == spec.name; });
      if (!covered) add(spec.name + " (defaults)", [&](auto& o) { o.method = spec.name; });
    }
    // Every codec (and the memcpy) is timed once per round and keeps its best: a slow spell of the machine then
    // has to hit the same case in every round to move its figure.
    std::vector<std::unique_ptr<Codec>> codecs;
    std::vector<Payload> payloads(cases.size());
    std::vector<double> ms(cases.size(), 1e300);
    for (const auto& c : cases) codecs.push_back(makeCodec(c.o));
    for (int round = 0; round < rounds; ++round) {
      if (round) memcpyMs = std::min(memcpyMs, best(reps, copyOnce));
      for (size_t j = 0; j < cases.size(); ++j) {
        Payload& p = payloads[j];
        Codec& codec = *codecs[j];
        ms[j] = std::min(ms[j], best(reps, [&] { p = codec.encode(matrix); codec.decode(p, torch::kCPU); }));
      }
    }
    std::printf("\n%lld M floats (%.0f MB): memcpy %.2f ms\n", (long long)millions, n * 4 / 1e6, memcpyMs);
    std::printf("%-34s %10s %10s %12s %10s\n", "codec", "ms", "x memcpy", "x torch.topk", "ratio");
    nlohmann::json row = {{"millions", millions}, {"memcpy_ms", memcpyMs}, {"torch_kthvalue_ms", kth}};
    for (int i = 0; i < 2; ++i) {
      const std::string pct = i ? "10" : "1";
      row["torch_topk_" + pct + "pct_ms"] = topk[i];
      std::printf("%-34s %10.2f %10.2f %12s\n", ("torch::topk K=" + pct + "%").c_str(), topk[i], topk[i] / memcpyMs,
                  "1.00");
    }
    std::printf("%-34s %10.2f %10.2f\n", "torch::kthvalue K=1%", kth, kth / memcpyMs);
    for (size_t j = 0; j < cases.size(); ++j) {
      const Case& c = cases[j];
      const double ratio = double(n) * 4 / double(payloads[j].size());
      std::string vsTopk = c.topkRef >= 0 ? std::to_string(topk[c.topkRef] / ms[j]).substr(0, 6) + "x" : "";
      std::printf("%-34s %10.2f %10.2f %12s %9.1fx\n", c.label.c_str(), ms[j], ms[j] / memcpyMs, vsTopk.c_str(), ratio);
      row[c.label] = {{"ms", ms[j]}, {"x_memcpy", ms[j] / memcpyMs}, {"compression_ratio", ratio}};
      if (c.topkRef >= 0) row[c.label]["speedup_vs_torch_topk"] = topk[c.topkRef] / ms[j];
    }
    out.push_back(row);
  }
  std::printf("%s\n", out.dump().c_str());
  return 0;
}
