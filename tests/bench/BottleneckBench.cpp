// What a learned bottleneck costs on a pipeline boundary against the codecs that pick or round values, at matched wire
// bytes, all measured in one run against sending the activation and its gradient as float32. One boundary's forward
// message and the backward message for it: the bottleneck's projection to the code, its value coding, the projection
// back and both layers' backward products; every other method encodes and decodes the activation and its gradient.
//   bench_bottleneck [--shapes 16x64x7x7,32x256x8x8] [--reps R] [--rounds R]
// The first shape is a micro-batch at a boundary of fashion-mnist-4stage, the second of fashion-mnist-gpu-resnet.
#include "engine/compress/Codec.h"
#include "engine/models/CodeBottleneck.h"
#include "engine/session/Threads.h"
#include "tests/bench/BenchArgs.h"
#include "tests/bench/BenchTiming.h"

#include <torch/torch.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <sstream>

namespace {

using namespace ps;
std::vector<int64_t> parseShape(const std::string& text) {
  std::vector<int64_t> shape;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, 'x');) shape.push_back(std::stoll(part));
  if (shape.size() != 4 || std::any_of(shape.begin(), shape.end(), [](int64_t d) { return d < 1; }))
    throw std::invalid_argument("a shape is rows x channels x height x width, such as 16x64x7x7; got " + text);
  return shape;
}

CompressionOptions options(const std::string& method, const std::function<void(CompressionOptions&)>& set = {}) {
  CompressionOptions o;
  o.method = method;
  if (set) set(o);
  return o;
}

struct Case {
  std::string label;
  std::function<uint64_t()> once;  // one forward and one backward message; returns their wire bytes
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Codec time of a learned bottleneck against TopK, quantization and PowerSGD at matched bytes"};
  std::vector<std::string> shapes{"16x64x7x7", "32x256x8x8"};
  int reps = 50, rounds = 3;
  app.add_option("--shapes", shapes, "micro-batch activations at a boundary, rows x channels x height x width")
      ->delimiter(',')
      ->capture_default_str();
  bench::addCount(app, "--reps", reps, "calls per measurement (their median is kept)");
  bench::addCount(app, "--rounds", rounds, "rounds over every case, each keeping its best median");
  bench::parse(app, argc, argv);
  at::set_num_threads(configureThreads(1, 1));  // one thread, as a stage worker of a deep pipeline computes
  torch::NoGradGuard outside;

  for (const auto& text : shapes) {
    std::vector<int64_t> shape;
    try {
      shape = parseShape(text);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "bench_bottleneck: %s\n", e.what());
      return 2;
    }
    torch::manual_seed(1);
    const auto x = torch::randn(shape).relu(), g = torch::randn(shape) * 1e-3;
    const int64_t channels = shape[1];
    std::vector<Case> cases;
    auto coded = [&](const std::string& label, const CompressionOptions& o) {
      auto forward = std::shared_ptr<Codec>(makeCodec(o)), backward = std::shared_ptr<Codec>(makeCodec(o));
      cases.push_back({label, [=] {
                         const Payload a = forward->encode(x), b = backward->encode(g);
                         forward->decode(a, torch::kCPU);
                         backward->decode(b, torch::kCPU);
                         return uint64_t(a.size() + b.size());
                       }});
    };
    auto bottleneck = [&](int64_t width) {
      std::vector<int64_t> sample(shape.begin() + 1, shape.end());
      const auto o = options("bottleneck", [&](auto& c) { c.extra["code_width"] = width; });
      auto b = makeBottleneck(o, 0, sample, 1);
      auto codec = std::shared_ptr<Codec>(makeCodec(o)), plain = std::shared_ptr<Codec>(makeCodec("none"));
      char label[64];
      std::snprintf(label, sizeof label, "bottleneck width %lld", (long long)width);
      cases.push_back({label, [=] {
                         torch::AutoGradMode on(true);
                         auto input = x.detach().requires_grad_(true);
                         auto code = b->encoder->forward(input);
                         const Payload a = codec->encode(code.detach());
                         auto received = codec->decode(a, torch::kCPU).requires_grad_(true);
                         b->decoder->forward(received).backward(g);
                         const Payload back = plain->encode(received.grad());
                         code.backward(plain->decode(back, torch::kCPU));
                         return uint64_t(a.size() + back.size());
                       }});
    };
    coded("float32", options("none"));
    bottleneck(std::max<int64_t>(1, channels * 3 / 32));
    bottleneck(std::max<int64_t>(1, channels / 32));
    coded("TopK 7.5%", options("topk", [](auto& c) { c.k = 0.075; }));
    coded("TopK 2.5%", options("topk", [](auto& c) { c.k = 0.025; }));
    coded("PowerSGD rank 1", options("powersgd", [](auto& c) { c.extra["rank"] = 1; }));
    coded("quantize 4-bit", options("quantize", [](auto& c) { c.bits = 4; }));
    coded("quantize 8-bit", options("quantize", [](auto& c) { c.bits = 8; }));

    std::vector<double> ms(cases.size(), 1e300);
    std::vector<uint64_t> bytes(cases.size());
    for (int round = 0; round < rounds; ++round)
      for (size_t i = 0; i < cases.size(); ++i)
        ms[i] = std::min(ms[i], bench::medianMs(reps, [&] { bytes[i] = cases[i].once(); }));
    std::printf("\nboundary %s (a forward and a backward message; float32 %.2f MB)\n", text.c_str(), bytes[0] / 1e6);
    std::printf("%-22s %12s %10s %10s %12s\n", "method", "wire bytes", "x fewer", "ms", "x float32");
    for (size_t i = 0; i < cases.size(); ++i)
      std::printf("%-22s %12llu %10.1f %10.3f %12.2f\n", cases[i].label.c_str(), (unsigned long long)bytes[i],
                  double(bytes[0]) / double(bytes[i]), ms[i], ms[i] / ms[0]);
  }
  return 0;
}
