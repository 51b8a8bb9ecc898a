// Step reports from other ranks are untrusted bytes: bounded before parsing, every field checked.
#include "engine/telemetry/StepReport.h"

#include <gtest/gtest.h>

#include <cmath>

namespace ps {
namespace {

using nlohmann::json;
using report::ReportError;

TEST(StepReport, TrafficAndHistogramsRoundTrip) {
  LinkTraffic t;
  t.boundary = 1;
  t.direction = Direction::Backward;
  t.raw_bytes = 4000, t.wire_bytes = 500, t.elements = 1000, t.nonzeros = 100, t.messages = 2;
  t.encode_s = 0.01, t.decode_s = 0.002, t.modelled_s = 0.3;
  t.setErrorSums(1, 4, 0.5, 4);
  t.method = "topk 10%";
  t.resets = {"shape changed"};
  const auto bytes = json::to_cbor(report::toJson(t));
  const LinkTraffic back = report::trafficFromJson(report::readCbor(bytes), 4);
  EXPECT_EQ(back.boundary, 1);
  EXPECT_EQ(back.direction, Direction::Backward);
  EXPECT_EQ(back.wire_bytes, 500u);
  EXPECT_DOUBLE_EQ(back.rel_error, 0.5);
  EXPECT_EQ(back.resets, t.resets);
  HistogramRecord h{7, "link0/fwd/values", -1, 1, {1, 2, 3}};
  const HistogramRecord hb = report::histogramFromJson(report::readCbor(json::to_cbor(report::toJson(h))));
  EXPECT_EQ(hb.counts, h.counts);
  EXPECT_EQ(hb.name, h.name);
}

TEST(StepReport, HostileBytesAreRefusedWithoutRecursionOrHugeAllocations) {
  // 1 MB of 0x81 (an array holding an array holding ...) crashed every rank in the recursive reader.
  EXPECT_THROW(report::readCbor(std::vector<uint8_t>(1 << 20, 0x81)), ReportError);
  EXPECT_THROW(report::readCbor(std::vector<uint8_t>(1 << 20, 0x9F)), ReportError);  // indefinite arrays
  // A few bytes declaring 2^32 items, a string longer than the report, trailing bytes, a stray break.
  EXPECT_THROW(report::readCbor({0x9B, 0, 0, 0, 1, 0, 0, 0, 0, 0x01}), ReportError);
  EXPECT_THROW(report::readCbor({0x7A, 0xFF, 0xFF, 0xFF, 0xFF, 'a'}), ReportError);
  EXPECT_THROW(report::readCbor({0x01, 0x02}), ReportError);
  EXPECT_THROW(report::readCbor({0xFF}), ReportError);
  EXPECT_THROW(report::readCbor({}), ReportError);
  EXPECT_THROW(report::readCbor(std::vector<uint8_t>(report::kMaxReportBytes + 1, 0)), ReportError);
  // Nesting up to the bound is fine; one more level is not.
  json nested = 1;
  for (int i = 0; i < report::kMaxReportDepth; ++i) nested = json::array({nested});
  EXPECT_NO_THROW(report::readCbor(json::to_cbor(nested)));
  EXPECT_THROW(report::readCbor(json::to_cbor(json::array({nested}))), ReportError);
  // Indefinite containers as another encoder may write them.
  EXPECT_EQ(report::readCbor({0x9F, 0x01, 0x02, 0xFF}), json::array({1, 2}));
  EXPECT_EQ(report::readCbor({0xBF, 0x61, 'a', 0x01, 0xFF}), json({{"a", 1}}));
}

TEST(StepReport, EveryFieldIsChecked) {
  LinkTraffic t;
  t.boundary = 0;
  const json good = report::toJson(t);
  EXPECT_NO_THROW(report::trafficFromJson(good, 2));
  auto with = [&](const char* key, json value) {
    json j = good;
    j[key] = std::move(value);
    return j;
  };
  EXPECT_THROW(report::trafficFromJson(with("b", 5), 2), ReportError);   // no such boundary
  EXPECT_THROW(report::trafficFromJson(with("b", -1), 2), ReportError);
  EXPECT_THROW(report::trafficFromJson(with("d", 3), 2), ReportError);
  EXPECT_THROW(report::trafficFromJson(with("raw", -5), 2), ReportError);  // counts are non-negative integers
  EXPECT_THROW(report::trafficFromJson(with("wire", 1.5), 2), ReportError);
  EXPECT_THROW(report::trafficFromJson(with("msgs", uint64_t(1) << 40), 2), ReportError);
  EXPECT_THROW(report::trafficFromJson(with("enc", -1.0), 2), ReportError);  // times finite and >= 0
  EXPECT_THROW(report::trafficFromJson(with("mod", std::nan("")), 2), ReportError);
  // Sums of squares overflow to +inf on a diverging run, which its rank reports as it is; NaN or below 0 never.
  EXPECT_EQ(report::trafficFromJson(with("esq", INFINITY), 2).err_sq, INFINITY);
  EXPECT_EQ(report::trafficFromJson(with("m", {{"sq_norm", INFINITY}}), 2).measures.at("sq_norm"), INFINITY);
  EXPECT_THROW(report::trafficFromJson(with("esq", std::nan("")), 2), ReportError);
  EXPECT_THROW(report::trafficFromJson(with("rcsq", -INFINITY), 2), ReportError);
  EXPECT_THROW(report::trafficFromJson(with("m", {{"sq_norm", std::nan("")}}), 2), ReportError);
  EXPECT_THROW(report::trafficFromJson(with("method", 3), 2), ReportError);
  EXPECT_THROW(report::trafficFromJson(with("resets", "x"), 2), ReportError);
  // Measurements: a few, by short names, finite and non-negative; none when nothing adapts the direction.
  EXPECT_NO_THROW(report::trafficFromJson(with("m", json::object()), 2));
  EXPECT_THROW(report::trafficFromJson(with("m", json::array()), 2), ReportError);
  EXPECT_THROW(report::trafficFromJson(with("m", {{"gravac_raw", -1.0}}), 2), ReportError);
  EXPECT_THROW(report::trafficFromJson(with("m", {{"gravac_raw", "1"}}), 2), ReportError);
  EXPECT_THROW(report::trafficFromJson(with("m", {{std::string(65, 'x'), 1.0}}), 2), ReportError);
  json many = json::object();
  for (int i = 0; i < 17; ++i) many["m" + std::to_string(i)] = 1.0;
  EXPECT_THROW(report::trafficFromJson(with("m", many), 2), ReportError);
  // The replicas' gradients are named by their stage: stage 1 of 2 exists, boundary 1 of 2 stages does not.
  json grads = with("d", 2);
  grads["b"] = 1;
  EXPECT_NO_THROW(report::trafficFromJson(grads, 2));
  EXPECT_THROW(report::trafficFromJson(with("b", 1), 2), ReportError);
  HistogramRecord h{1, "grad/stage0", 0, 1, {1}};
  json bad = report::toJson(h);
  bad["counts"] = json::array({-1});
  EXPECT_THROW(report::histogramFromJson(bad), ReportError);
  bad = report::toJson(h);
  bad["lo"] = 2;
  EXPECT_THROW(report::histogramFromJson(bad), ReportError);
}

}  // namespace
}  // namespace ps
