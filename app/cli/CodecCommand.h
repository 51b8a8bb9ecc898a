#pragma once
// pipesqueeze-cli codec: the lab's codecs on tensors saved as .npy, so researchers can hold our codecs against their
// own implementations on their own data.
//   codec list
//   codec encode --method M [--feedback F] [--set OPTION=V]... [--seed S] [--state DIR] IN.npy OUT.bin
//   codec decode [--state DIR] OUT.bin DECODED.npy
#include <CLI/App.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace ps::cli {

struct CodecOptions {
  std::string action;
  std::string method = "none", feedback = "none";
  std::vector<std::string> sets;
  uint64_t seed = 1;
  std::string state, input, output;
};

void addCodecCommand(CLI::App& app, CodecOptions& options);
int runCodec(const CodecOptions& options);

}  // namespace ps::cli
