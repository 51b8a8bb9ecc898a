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
  // decode: the most elements the decoded tensor may have (a payload of a few hundred bytes can declare 2^31; a
  // receiver in a run knows the shape it waits for, a standalone decode only this bound).
  int64_t maxElements = int64_t(1) << 26;  // 64 Mi elements: 256 MiB of float32
};

void addCodecCommand(CLI::App& app, CodecOptions& options);
int runCodec(const CodecOptions& options);

}  // namespace ps::cli
