#include "engine/telemetry/MetricTitles.h"

#include "engine/core/Metrics.h"

#include <cctype>
#include <map>

namespace ps {
namespace {

// "rel_error_compensated" -> "rel error compensated"
std::string words(std::string s) {
  for (char& c : s)
    if (c == '_' || c == '/') c = ' ';
  return s;
}

std::string capitalised(std::string s) {
  if (!s.empty()) s[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
  return s;
}

const std::map<std::string, std::string>& runTitles() {
  static const std::map<std::string, std::string> titles{
      {metric::kTrainLoss, "Training loss"},
      {metric::kTrainAccuracy, "Training accuracy (batch)"},
      {metric::kTrainLr, "Learning rate"},
      {metric::kTrainEpoch, "Epoch"},
      {metric::kEvalLoss, "Evaluation loss"},
      {metric::kEvalAccuracy, "Evaluation accuracy"},
      {metric::kEvalPerplexity, "Evaluation perplexity"},
      {metric::kStepSeconds, "Step time (wall)"},
      {metric::kComputeSeconds, "Compute time per step"},
      {metric::kCodecSeconds, "Codec time per step"},
      {metric::kLinkSeconds, "Modelled link time per step"},
      {metric::kEmulatedStepSeconds, "Emulated step time"},
      {metric::kControlSeconds, "Control round time per step"},
      {metric::kRawBytes, "Raw bytes per step"},
      {metric::kWireBytes, "Wire bytes per step"},
  };
  return titles;
}

const std::map<std::string, std::string>& leafTitles() {
  static const std::map<std::string, std::string> titles{
      {metric::leaf::kRawBytes, "raw bytes"},
      {metric::leaf::kWireBytes, "wire bytes"},
      {metric::leaf::kRatio, "compression ratio"},
      {metric::leaf::kBitsPerElement, "bits per element"},
      {metric::leaf::kDensity, "density (share of values sent)"},
      {metric::leaf::kRelError, "relative error"},
      {metric::leaf::kRelErrorCompensated, "relative error of the compensated input"},
      {metric::leaf::kCodecSeconds, "codec time"},
      {metric::leaf::kModelledSeconds, "modelled link time"},
      {"k", "K (share of values kept)"},
  };
  return titles;
}

}  // namespace

std::string metricTitle(const std::string& key) {
  const auto& runs = runTitles();
  if (auto it = runs.find(key); it != runs.end()) return it->second;
  const std::string plain = metric::kUncompressedSuffix;
  if (key.size() > plain.size() && key.compare(key.size() - plain.size(), plain.size(), plain) == 0)
    if (auto it = runs.find(key.substr(0, key.size() - plain.size())); it != runs.end())
      return it->second + " (uncompressed)";
  if (const auto link = metric::parseLinkKey(key)) {
    const auto leaf = leafTitles().find(link->leaf);
    const std::string what = leaf != leafTitles().end() ? leaf->second : words(link->leaf);
    const std::string n = std::to_string(link->boundary);
    switch (link->direction) {
      case Direction::Forward:
        return "Link " + n + " forward activations: " + what;
      case Direction::Backward:
        return "Link " + n + " backward gradients: " + what;
      case Direction::Gradients:
        return "Stage " + n + " replica gradients: " + what;
    }
  }
  return capitalised(words(key));
}

}  // namespace ps
