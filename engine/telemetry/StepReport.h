#pragma once
// What ranks tell each other about a step: link traffic and histograms as JSON sent as CBOR. The bytes come from
// another process and are untrusted: readCbor walks them iteratively (no recursion) and refuses anything too large,
// too deep or malformed before nlohmann's recursive reader sees it, and the field readers check every value
// (finite, non-negative, in range) before it reaches the run's figures. Torch-free.
#include "engine/core/Telemetry.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <stdexcept>
#include <vector>

namespace ps::report {

class ReportError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline constexpr size_t kMaxReportBytes = size_t(16) << 20;
inline constexpr int kMaxReportDepth = 8;
inline constexpr size_t kMaxHistogramBins = 1 << 16;

// Parses CBOR from another process; throws ReportError saying what is wrong.
nlohmann::json readCbor(const std::vector<uint8_t>& bytes, size_t maxBytes = kMaxReportBytes,
                        int maxDepth = kMaxReportDepth);

nlohmann::json toJson(const LinkTraffic& t);
// `stages`: the pipeline's stage count, which bounds the boundaries (and, for replicas' gradients, the stages) a valid
// report can name.
LinkTraffic trafficFromJson(const nlohmann::json& j, int stages);
nlohmann::json toJson(const HistogramRecord& h);
HistogramRecord histogramFromJson(const nlohmann::json& j);

// Field readers for the rest of a report: a finite number (>= 0 unless negative is allowed), a count.
double finite(const nlohmann::json& j, const char* key, bool negative = false);
uint64_t count(const nlohmann::json& j, const char* key);

}  // namespace ps::report
