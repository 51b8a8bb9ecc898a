// Compression kernels against a memcpy of the same data, in one run.
//   bench_kernels [--threads T] [--sizes 1,16,64] [--reps R]
// For each n (millions of random normal floats): best of R runs (after one warm-up) of every kernel, in ms and as a
// ratio to memcpy of n floats (single-threaded libc memcpy: the cost of touching the data once). Prints a table and
// one JSON object on the last line. Targets (README's speed notes): exact TopK at a few memcpy-times, GaussianK
// + gather within 4x, 8-bit quantize + pack + unpack within 3x.
#include "engine/kernels/Half.h"
#include "engine/kernels/Quantize.h"
#include "engine/kernels/Threshold.h"
#include "engine/kernels/TopK.h"
#include "tests/bench/BenchArgs.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace ps::kernels;
using Clock = std::chrono::steady_clock;

double bestMs(int reps, const std::function<void()>& f) {
  f();  // warm-up: page faults, caches, thread pool
  double best = 1e300;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = Clock::now();
    f();
    best = std::min(best, std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  return best;
}

std::vector<float> normalData(size_t n) {
  std::vector<float> x(n);
#pragma omp parallel
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    std::mt19937_64 g(1000 + uint64_t(t));
    std::normal_distribution<float> d;
    for (size_t i = n * size_t(t) / size_t(nt); i < n * size_t(t + 1) / size_t(nt); ++i) x[i] = d(g);
  }
  return x;
}

volatile size_t gSink;  // keeps results alive

}  // namespace

int main(int argc, char** argv) {
  int threads = 2, reps = 5;
  std::vector<size_t> sizesM = {1, 16, 64};
  CLI::App app{"The raw kernels against memcpy and std::nth_element"};
  ps::bench::addCount(app, "--threads", threads, "OpenMP threads");
  ps::bench::addSizes(app, sizesM, "Mi floats");
  ps::bench::addCount(app, "--reps", reps, "timings per case");
  ps::bench::parse(app, argc, argv);

  struct Row {
    std::string op;
    size_t n;
    double ms, ratio;
  };
  std::vector<Row> rows;
  std::vector<std::string> ops;
  for (size_t m : sizesM) {
    const size_t n = m << 20;
    std::printf("n = %zuM: generating data...\n", m);
    std::fflush(stdout);
    const std::vector<float> x = normalData(n);
    std::vector<float> buf(n);
    const size_t k1 = n / 100, k10 = n / 10;
    std::vector<uint32_t> idx(2 * k10);
    std::vector<float> val(2 * k10);
    const size_t group = 512, G = groupCount(n, group);
    std::vector<float> scales(G);
    std::vector<uint8_t> codes(packedBytes(n, 8));
    std::vector<uint16_t> half(n);

    std::vector<std::pair<std::string, std::function<void()>>> cases = {
        {"memcpy", [&] { std::memcpy(buf.data(), x.data(), 4 * n); }},
        {"topkSelect K=1%", [&] { gSink = topkSelect(x.data(), n, k1, idx.data(), val.data(), threads); }},
        {"topkSelect K=10%", [&] { gSink = topkSelect(x.data(), n, k10, idx.data(), val.data(), threads); }},
        {"kthLargestAbs K=1%", [&] { gSink = size_t(kthLargestAbs(x.data(), n, k1, threads)); }},
        {"std::nth_element |x| (1 thread)",
         [&] {
           for (size_t i = 0; i < n; ++i) buf[i] = std::fabs(x[i]);
           std::nth_element(buf.begin(), buf.begin() + ptrdiff_t(k1), buf.end(), std::greater<float>());
           gSink = size_t(buf[k1]);
         }},
        {"gaussianK+gather K=1%",
         [&] {
           size_t c;
           const float t = gaussianThreshold(x.data(), n, 0.01, &c, threads);
           gSink = gatherAbove(x.data(), n, t, idx.data(), val.data(), 2 * k1, threads);
         }},
        {"gaussianK+gather K=10%",
         [&] {
           size_t c;
           const float t = gaussianThreshold(x.data(), n, 0.10, &c, threads);
           gSink = gatherAbove(x.data(), n, t, idx.data(), val.data(), 2 * k10, threads);
         }},
        {"q8/512 scale+pack+unpack",
         [&] {
           groupMaxAbs(x.data(), n, group, scales.data(), threads);
           quantizePackSymmetric(x.data(), n, 8, group, scales.data(), Rounding::Nearest, 0, codes.data(), threads);
           unpackDequantizeSymmetric(codes.data(), codes.size(), n, 8, group, scales.data(), buf.data(), threads);
         }},
        {"q4/512 scale+pack+unpack",
         [&] {
           groupMaxAbs(x.data(), n, group, scales.data(), threads);
           quantizePackSymmetric(x.data(), n, 4, group, scales.data(), Rounding::Nearest, 0, codes.data(), threads);
           unpackDequantizeSymmetric(codes.data(), packedBytes(n, 4), n, 4, group, scales.data(), buf.data(),
                                     threads);
         }},
        {"q8/512 stochastic s+p+u",
         [&] {
           groupMaxAbs(x.data(), n, group, scales.data(), threads);
           quantizePackSymmetric(x.data(), n, 8, group, scales.data(), Rounding::Stochastic, 7, codes.data(),
                                 threads);
           unpackDequantizeSymmetric(codes.data(), codes.size(), n, 8, group, scales.data(), buf.data(), threads);
         }},
        {"fp16 to+from",
         [&] {
           floatToHalf(x.data(), n, half.data(), threads);
           halfToFloat(half.data(), n, buf.data(), threads);
         }},
        {"bf16 to+from",
         [&] {
           floatToBf16(x.data(), n, half.data(), threads);
           bf16ToFloat(half.data(), n, buf.data(), threads);
         }},
    };
    double base = 0;
    for (auto& [name, f] : cases) {
      const double ms = bestMs(reps, f);
      if (name == "memcpy") base = ms;
      rows.push_back({name, n, ms, ms / base});
      if (std::find(ops.begin(), ops.end(), name) == ops.end()) ops.push_back(name);
      std::printf("  %-34s %9.2f ms  %6.2fx memcpy\n", name.c_str(), ms, ms / base);
      std::fflush(stdout);
    }
  }

  std::printf("\n%-34s", "kernel (threads = ");
  std::printf("%d)", threads);
  for (size_t m : sizesM) std::printf(" | %6zuM: ms   x memcpy", m);
  std::printf("\n");
  for (const auto& op : ops) {
    std::printf("%-37s", op.c_str());
    for (size_t m : sizesM)
      for (const Row& r : rows)
        if (r.op == op && r.n == (m << 20)) std::printf(" | %12.2f %9.2f", r.ms, r.ratio);
    std::printf("\n");
  }
  std::printf("{\"bench\":\"kernels\",\"threads\":%d,\"reps\":%d,\"results\":[", threads, reps);
  for (size_t i = 0; i < rows.size(); ++i)
    std::printf("%s{\"op\":\"%s\",\"n\":%zu,\"ms\":%.4f,\"x_memcpy\":%.4f}", i ? "," : "", rows[i].op.c_str(),
                rows[i].n, rows[i].ms, rows[i].ratio);
  std::printf("]}\n");
  return 0;
}
