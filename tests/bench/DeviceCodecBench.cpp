// Codecs on a GPU: encoding a CUDA tensor where it lives (only the payload crosses PCIe) against the path it replaces
// (copy the tensor to the host, encode there), and decoding on the receiving GPU (the compact form goes up, the tensor
// is rebuilt there) against decoding on the host and copying the dense tensor up. Both paths are timed in the same
// run on the same data; the ratio is host path / device path. A second table times a message between two GPU stages of
// one process, encode plus decode on the receiver (the second GPU when there is one): the payload's bulk kept on the
// device and copied device to device (Codec::Residence::Device) against the payload assembled on the host and read
// from there. Prints why and exits 0 where no GPU is usable.
//
//   bench_device_codecs [--sizes 1,16,64] (2^20 floats, as bench_cuda_kernels) [--reps 7]
#include "engine/compress/Codec.h"
#include "engine/compress/TensorKernels.h"
#include "tests/bench/BenchArgs.h"
#include "tests/bench/BenchTiming.h"

#include <torch/cuda.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

using namespace ps;

namespace {

void synchronizeAll() {  // a message may end on another GPU
  for (int d = 0; d < int(torch::cuda::device_count()); ++d) torch::cuda::synchronize(d);
}

double medianMs(int reps, const std::function<void()>& f) {
  return ps::bench::medianMs(reps, f, synchronizeAll);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int64_t> sizes{1, 16, 64};
  int reps = 7;
  CLI::App app{"Codecs on a CUDA tensor: encoding and decoding on the device against the host path"};
  ps::bench::addSizes(app, sizes, "Mi floats");
  ps::bench::addCount(app, "--reps", reps, "timings per case (the median counts)");
  ps::bench::parse(app, argc, argv);
  if (!torch::cuda::is_available()) {
    std::printf("bench_device_codecs: this LibTorch sees no CUDA device; nothing to measure here\n");
    return 0;
  }
  std::string why;
  if (!TensorKernels::usable(torch::zeros({1}, torch::kCUDA), &why)) {
    std::printf("bench_device_codecs: codecs cannot run on this GPU (%s)\n", why.c_str());
    return 0;
  }
  struct Case {
    const char* name;
    std::function<void(CompressionOptions&)> set;
  };
  const std::vector<Case> cases{
      {"topk 1%", [](auto& o) { o.method = "topk", o.k = 0.01; }},
      {"gaussiank 1%", [](auto& o) { o.method = "gaussiank", o.k = 0.01; }},
      {"sampledk 1%", [](auto& o) { o.method = "sampledk", o.k = 0.01; }},
      {"randk 1%", [](auto& o) { o.method = "randk", o.k = 0.01; }},
      {"quantize 8-bit", [](auto& o) { o.method = "quantize", o.bits = 8; }},
      {"quantize 4-bit", [](auto& o) { o.method = "quantize", o.bits = 4; }},
  };
  std::printf("median of %d; host path = copy to the host + CPU codec (encode), CPU decode + copy up (decode)\n", reps);
  std::printf("%-16s %10s %12s %12s %7s %12s %12s %7s\n", "codec", "elements", "enc dev ms", "enc host ms", "ratio",
              "dec dev ms", "dec host ms", "ratio");
  for (int64_t millions : sizes) {
    const int64_t n = millions << 20;
    torch::manual_seed(1);
    const auto x = torch::randn({n}, torch::kCUDA);
    for (const auto& c : cases) {
      CompressionOptions o;
      c.set(o);
      auto device = makeCodec(o), host = makeCodec(o);
      Payload p;
      const double encDev = medianMs(reps, [&] { p = device->encode(x); });
      const double encHost = medianMs(reps, [&] { host->encode(x.to(torch::kCPU)); });
      torch::Tensor out;
      const double decDev = medianMs(reps, [&] { out = device->decode(p, torch::kCUDA); });
      const double decHost = medianMs(reps, [&] { out = host->decode(p, torch::kCPU).to(torch::kCUDA); });
      std::printf("%-16s %10lld %12.3f %12.3f %6.1fx %12.3f %12.3f %6.1fx\n", c.name, (long long)n, encDev, encHost,
                  encHost / encDev, decDev, decHost, decHost / decDev);
      std::fflush(stdout);
    }
  }

  const int gpus = int(torch::cuda::device_count());
  const torch::Device receiver(torch::kCUDA, gpus >= 2 ? 1 : 0);
  const std::vector<Case> messages{
      {"none", [](auto& o) { o.method = "none"; }},
      {"fp16", [](auto& o) { o.method = "fp16"; }},
      {"quantize 4-bit", [](auto& o) { o.method = "quantize", o.bits = 4; }},
      {"topk 1%", [](auto& o) { o.method = "topk", o.k = 0.01; }},
      {"gaussiank 1%", [](auto& o) { o.method = "gaussiank", o.k = 0.01; }},
      {"topk 10% fp16", [](auto& o) { o.method = "topk", o.k = 0.1, o.value_bits = 16; }},
  };
  std::printf("\nGPU stage to GPU stage in one process (cuda:0 -> %s), encode + decode, median of %d\n",
              receiver.str().c_str(), reps);
  std::printf("%-16s %10s %12s %12s %7s\n", "codec", "elements", "on device ms", "via host ms", "ratio");
  for (int64_t millions : sizes) {
    const int64_t n = millions << 20;
    torch::manual_seed(2);
    const auto x = torch::randn({n}, torch::kCUDA);
    for (const auto& c : messages) {
      CompressionOptions o;
      c.set(o);
      auto kept = makeCodec(o), host = makeCodec(o), reader = makeCodec(o);
      kept->setResidence(Codec::Residence::Device);
      torch::Tensor out;
      const double onDevice = medianMs(reps, [&] { out = reader->decode(kept->encode(x), receiver); });
      const double viaHost = medianMs(reps, [&] { out = reader->decode(host->encode(x), receiver); });
      std::printf("%-16s %10lld %12.3f %12.3f %6.1fx\n", c.name, (long long)n, onDevice, viaHost, viaHost / onDevice);
      std::fflush(stdout);
    }
  }
  return 0;
}
