#include "app/cli/CodecCommand.h"
#include "app/cli/CodecState.h"
#include "engine/core/AtomicFile.h"

#include "engine/compress/Compensation.h"
#include "engine/compress/spec/Catalogue.h"
#include "engine/data/Npy.h"
#include "engine/runs/config/BoundedJson.h"

#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

namespace ps::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The direction's options as JSON from --method, --feedback and --set OPTION=V, each checked against the catalogue.
json optionsJson(const CodecOptions& c) {
  if (!catalogue::codec(c.method)) {
    std::string known;
    for (const auto& n : catalogue::names(catalogue::codecs())) known += (known.empty() ? "" : ", ") + n;
    badInput("--method " + c.method + " is not a codec; use one of " + known);
  }
  const MethodSpec* feedback = catalogue::compensation(c.feedback);
  if (!feedback || feedback->forwardOnly) {
    std::string known;
    for (const auto& m : catalogue::compensations())
      if (!m.forwardOnly) known += (known.empty() ? "" : ", ") + m.name;
    badInput("--feedback " + c.feedback + " is not available here; use one of " + known +
             (feedback ? " (AQ-SGD needs a training run's sample ids)" : ""));
  }
  json j = {{"method", c.method}, {"feedback", c.feedback}};
  for (const auto& s : c.sets) {
    const size_t eq = s.find('=');
    if (eq == std::string::npos || eq == 0) badInput("--set " + s + ": write OPTION=VALUE, for example --set k=0.1");
    const std::string name = s.substr(0, eq), text = s.substr(eq + 1);
    const OptionSpec* spec = catalogue::option(name);
    if (!spec) {
      std::string known;
      for (const auto& o : catalogue::options()) known += (known.empty() ? "" : ", ") + o.name;
      badInput("--set " + name + ": no codec option has that name; options are " + known);
    }
    json v = json::parse(text, nullptr, false);
    if (v.is_discarded() || (spec->type == OptionSpec::Type::Choice && !v.is_string())) v = text;
    const std::string wrong = spec->check(v);
    if (!wrong.empty()) badInput("--set " + name + "=" + text + " " + wrong + ": it must be " + spec->allowed());
    j[name] = v;
  }
  return j;
}

CodecContext contextOf(uint64_t seed) {
  CodecContext c;
  c.seed = seed;
  return c;
}

NpyArray arrayOf(const torch::Tensor& x) {
  auto c = x.detach().to(torch::kCPU, torch::kFloat32).contiguous();
  NpyArray a;
  a.shape = c.sizes().vec();
  a.values.assign(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
  return a;
}

double ratioOf(double raw, double wire) { return wire > 0 ? raw / wire : 0; }

int encode(const CodecOptions& c) {
  const json options = optionsJson(c);
  const CompressionOptions o = CompressionOptions::fromJson(options);
  const NpyArray input = readNpy(c.input);
  const auto x = tensorOf(input);
  if (x.numel() == 0)
    badInput(c.input + ": the tensor is empty (shape " + shapeText(x.sizes().vec()) +
             "); every codec encodes at least one element");
  checkFinite(c.input, x);
  const json config = {{"options", o.toJson()}, {"seed", c.seed}, {"shape", x.sizes().vec()}};
  const size_t seen = openState(c.state, config);
  Compensator sender(o, contextOf(c.seed), {});
  replaySender(c.state, config, seen, sender);
  SendReport report;
  const Payload p = sender.send(x, {}, report);
  writeBin(c.output, {{"options", config["options"]}, {"seed", c.seed}, {"message", seen}}, p);
  if (!c.state.empty()) writeNpy(numbered(c.state, "input", seen, ".npy"), input);
  const double raw = double(x.numel()) * 4;
  json out = {{"method", o.method},
              {"codec", sender.describe()},
              {"shape", x.sizes().vec()},
              {"message", seen},
              {"raw_bytes", raw},
              {"wire_bytes", p.size()},
              {"ratio", ratioOf(raw, double(p.size()))},
              {"density", x.numel() ? double(report.values) / double(x.numel()) : 0.0},
              {"rel_error", report.err_den > 0 ? std::sqrt(report.err_num / report.err_den) : 0.0}};
  std::cout << out.dump() << "\n";
  return 0;
}

int decode(const CodecOptions& c) {
  auto [header, payload] = readBin(c.input, c.maxElements);
  // The declared shape, checked against the bound before anything is decoded or allocated.
  const HeadedPayload declared(payload);
  if (declared.header.numel() > c.maxElements)
    badInput(c.input + ": the payload declares a tensor of " + std::to_string(declared.header.numel()) + " elements " +
             shapeText(declared.header.shape) + ", more than --max-elements " + std::to_string(c.maxElements) +
             "; raise it if the tensor is meant to be that large");
  for (const auto& [name, value] : header["options"].items()) {  // untrusted: every value is checked first
    const OptionSpec* spec = catalogue::option(name);
    const bool chooser = name == "method" || name == "feedback" || name == "adapt";
    if ((chooser && !value.is_string()) || (!chooser && (!spec || !spec->check(value).empty())))
      badInput(c.input + ": option " + name + " = " + value.dump() + " is not valid; the file is damaged");
  }
  const CompressionOptions o = CompressionOptions::fromJson(header["options"]);
  if (!catalogue::codec(o.method) || !catalogue::compensation(o.feedback))
    badInput(c.input + ": codec " + o.method + " with " + o.feedback + " is unknown to this build");
  const uint64_t seed = header["seed"].get<uint64_t>();
  const json config = {{"options", o.toJson()}, {"seed", seed}, {"shape", declared.header.shape}};
  const size_t seen = openState(c.state, config);
  Compensator receiver(o, contextOf(seed), {});
  replayReceiver(c.state, config, seen, c.maxElements, receiver);
  const auto y = receiver.receive(payload, torch::kCPU, {});
  writeNpy(c.output, arrayOf(y));
  if (!c.state.empty()) writeBin(numbered(c.state, "payload", seen, ".bin"), header, payload);
  std::cout << json{{"method", o.method}, {"shape", y.sizes().vec()}, {"message", seen}, {"wire_bytes", payload.size()}}.dump()
            << "\n";
  return 0;
}

}  // namespace

void addCodecCommand(CLI::App& app, CodecOptions& o) {
  auto* codec = app.add_subcommand("codec", "The lab's codecs on tensors saved as NumPy .npy files");
  codec->require_subcommand(1);
  codec->add_subcommand("list", "Codecs, compensations and their options (JSON)")->callback([&o] { o.action = "list"; });
  auto* enc = codec->add_subcommand("encode", "Encode IN.npy into OUT.bin; prints wire bytes, ratio, density, error");
  enc->add_option("--method", o.method, "codec (see codec list)")->required();
  enc->add_option("--feedback", o.feedback, "error compensation: none, ef, ef21, diana, randdiana");
  enc->add_option("--set", o.sets, "OPTION=VALUE, by the codec's option names (k=0.1, bits=4, rank=8)");
  enc->add_option("--seed", o.seed, "seed of the codec's random streams (both ends derive theirs from it)");
  enc->add_option("--state", o.state, "folder that carries the compensation's state over a sequence of calls");
  enc->add_option("input", o.input, "tensor to encode (.npy, float32 or float64, any shape)")->required();
  enc->add_option("output", o.output, "encoded file")->required();
  enc->callback([&o] { o.action = "encode"; });
  auto* dec = codec->add_subcommand("decode", "Decode OUT.bin (from codec encode) into DECODED.npy");
  dec->add_option("--state", o.state, "the receiver's folder over a sequence of calls (not the sender's)");
  dec->add_option("input", o.input, "encoded file")->required();
  dec->add_option("output", o.output, "decoded tensor (.npy, float32)")->required();
  dec->add_option("--max-elements", o.maxElements,
                  "refuse payloads declaring a tensor of more elements (default 2^26: 256 MiB of float32)")
      ->check(CLI::Range(int64_t(1), PayloadHeader::kMaxElements));
  dec->callback([&o] { o.action = "decode"; });
}

int runCodec(const CodecOptions& o) {
  try {
    if (o.action == "encode") return encode(o);
    if (o.action == "decode") return decode(o);
    json out = json::object();
    auto methods = [](const std::vector<MethodSpec>& list) {
      json a = json::array();
      for (const auto& m : list) a.push_back({{"name", m.name}, {"label", m.label}, {"help", m.help}, {"options", m.options}});
      return a;
    };
    out["codecs"] = methods(catalogue::codecs());
    out["compensations"] = methods(catalogue::compensations());
    for (const auto& s : catalogue::options())
      out["options"][s.name] = {{"default", s.fallback}, {"allowed", s.allowed()}, {"help", s.help}};
    std::cout << out.dump(2) << "\n";
    return 0;
  } catch (const NpyError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  } catch (const PayloadError& e) {
    std::cerr << "error: " << o.input << ": " << e.what() << "\n";
    return 2;
  }
}

}  // namespace ps::cli
