// What measuring a message's error costs the sender: its figures (||used - x||^2, ||x||^2, the codec's own error and
// input, ||used|| for GraVAC) read one by one, each a wait for the device (the baseline), against their sums read in
// one transfer (measureSent, what the compensator does). Both are timed in the same run on the same tensors, on the
// CPU and on every visible GPU; the ratio is one-by-one / one read. For scale, the third column times a whole send
// (TopK 1% with error feedback) of the same tensor.
//
//   bench_error_sums [--sizes 4,64,1024] (Ki floats) [--reps 21]
#include "engine/compress/Compensation.h"
#include "tests/bench/BenchArgs.h"
#include "tests/bench/BenchTiming.h"

#include <torch/cuda.h>
#include <torch/torch.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <vector>

using namespace ps;

namespace {

double medianUs(int reps, const std::function<void()>& f, bool cuda) {
  return 1000 *
         ps::bench::medianMs(reps, f, cuda ? std::function<void()>([] { torch::cuda::synchronize(); }) : nullptr);
}

// The baseline: every figure read as soon as it is computed.
void oneByOne(const torch::Tensor& x, const SentTensors& s, SendReport& r) {
  auto sq = [](const torch::Tensor& t) { return t.pow(2).sum().item<double>(); };
  r.err_den += sq(x);
  r.comp_num += sq(s.codecOutput - s.codecInput), r.comp_den += sq(s.codecInput);
  r.err_num += sq(s.used - x);
  r.out_norm += std::sqrt(sq(s.used));
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int64_t> sizes{4, 64, 1024};
  int reps = 21;
  CLI::App app{"A message's error figures read one by one against one read of their sums"};
  ps::bench::addSizes(app, sizes, "Ki floats");
  ps::bench::addCount(app, "--reps", reps, "timings per case (the median counts)");
  ps::bench::parse(app, argc, argv);

  std::vector<torch::Device> devices{torch::kCPU};
  for (int d = 0; d < int(torch::cuda::device_count()); ++d) devices.emplace_back(torch::kCUDA, d);
  if (devices.size() == 1) std::printf("(this LibTorch sees no CUDA device: the CPU only)\n");
  std::printf("%-8s %10s %14s %12s %8s %14s\n", "device", "Ki floats", "one by one us", "one read us", "ratio",
              "whole send us");
  for (const auto& device : devices) {
    const bool cuda = device.is_cuda();
    for (int64_t kib : sizes) {
      torch::manual_seed(1);
      const auto opts = torch::TensorOptions(torch::kFloat32).device(device);
      const auto x = torch::randn({kib * 1024}, opts);
      const SentTensors sent{x + 0.1 * torch::randn_like(x), x + torch::randn_like(x), x + torch::randn_like(x)};
      SendReport a, b;
      const double separate = medianUs(
          reps, [&] { oneByOne(x, sent, a); }, cuda);
      const double together = medianUs(
          reps, [&] { measureSent(x, sent, true, b); }, cuda);
      CompressionOptions o;
      o.method = "topk";
      o.k = 0.01;
      o.feedback = "ef";
      Compensator sender(o, {}, {});
      const double send = medianUs(
          reps,
          [&] {
            SendReport r;
            sender.send(x, {}, r);
          },
          cuda);
      std::printf("%-8s %10lld %14.1f %12.1f %7.2fx %14.1f\n", device.str().c_str(), (long long)kib, separate, together,
                  separate / together, send);
    }
  }
  return 0;
}
