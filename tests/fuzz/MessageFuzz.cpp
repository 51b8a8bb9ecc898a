// libFuzzer target for what ranks send each other besides payloads: the point-to-point frame header, the list of
// gathered parts rank 0 sends down, the gradient exchange's message, the CBOR step reports and the step traces in
// them (decoded, then replayed as a stored run's would be). Whatever the bytes, each parser returns or throws its own
// error.
//   build/fuzz/fuzz_messages -max_total_time=60 tests/fuzz/corpus/messages
#include "engine/core/StepTrace.h"
#include "engine/dist/Framing.h"
#include "engine/pipeline/GradientMessage.h"
#include "engine/telemetry/StepReport.h"

#include <cstdint>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  if (data[0] == 0xff) {  // a gathered list: the part count from the second byte, the limit from the bytes present
    if (size < 2) return 0;
    try {
      ps::unpackParts(std::vector<uint8_t>(data + 2, data + size), data[1] % 9, size);
    } catch (const ps::FrameError&) {
    }
    return 0;
  }
  const std::vector<uint8_t> bytes(data + 1, data + size);
  switch (data[0] % 4) {
    case 0:
      try {
        ps::parseHeader(bytes.data(), bytes.size(), uint64_t(1) << 34);
      } catch (const ps::FrameError&) {
      }
      break;
    case 1:
      try {  // the expected tensor count from the first byte: any count the receiver could hold
        ps::GradientMessage::parse(bytes, data[0] / 4);
      } catch (const ps::GradientMessageError&) {
      }
      break;
    case 2:
      try {  // a whole trace as the store keeps it, or one rank's lane; either replayed for two networks
        ps::StepTrace t;
        if (data[0] & 4)
          t = ps::decodeTrace(bytes.data(), bytes.size(), 1 << 12);
        else
          t.lanes.push_back(ps::decodeLane(bytes.data(), bytes.size(), 1 << 12));
        ps::replay(t);
        ps::replay(t, ps::LinkModel{1, 5});
      } catch (const ps::TraceError&) {
      }
      break;
    default:
      try {
        const auto j = ps::report::readCbor(bytes);
        if (j.is_object() && j.contains("links") && j["links"].is_array())
          for (const auto& l : j["links"]) ps::report::trafficFromJson(l, 8);
        if (j.is_object() && j.contains("histograms") && j["histograms"].is_array())
          for (const auto& h : j["histograms"]) ps::report::histogramFromJson(h);
      } catch (const ps::report::ReportError&) {
      } catch (const nlohmann::json::exception&) {
      }
  }
  return 0;
}
