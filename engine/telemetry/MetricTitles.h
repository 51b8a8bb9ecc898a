#pragma once
// What a recorded metric is called where people read it: "link0/fwd/wire_bytes" is "Link 0 forward activations:
// wire bytes", "eval/accuracy_uncompressed" is "Evaluation accuracy (uncompressed)". Names the lab does not know are
// made readable from their parts, so every recorded key has a title.
#include <string>

namespace ps {

std::string metricTitle(const std::string& key);

}  // namespace ps
