#include "engine/telemetry/StepReport.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace ps::report {
namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::string& what) { throw ReportError(what); }

// Checks that `bytes` is one well-formed CBOR item nested at most `maxDepth` deep, without recursion: a stack of
// how many items each open container still holds (-1: indefinite, ended by a break byte).
class CborChecker {
 public:
  CborChecker(const std::vector<uint8_t>& bytes, int maxDepth) : bytes_(bytes), maxDepth_(maxDepth) {}

  void check() {
    do step();
    while (!open_.empty());
    if (at_ != bytes_.size()) fail(std::to_string(bytes_.size() - at_) + " bytes follow the report");
  }

 private:
  // Reads one initial byte and its argument: a whole scalar, a string, or the start or end of a container.
  void step() {
    if (at_ >= bytes_.size()) fail("CBOR runs past the end of the report");
    const uint8_t initial = bytes_[at_++];
    const uint8_t major = initial >> 5, info = initial & 31;
    if (initial == 0xFF) {  // break: ends the innermost indefinite container
      if (open_.empty() || open_.back() != -1) fail("a CBOR break outside an indefinite container");
      open_.pop_back();
      ended();
      return;
    }
    if (info == 31) {
      if (major == 2 || major == 3) fail("indefinite CBOR strings are not used in reports");
      if (major != 4 && major != 5) fail("CBOR major type " + std::to_string(major) + " cannot be indefinite");
      enter(-1);
      return;
    }
    const uint64_t arg = argument(info);
    switch (major) {
      case 0: case 1: ended(); break;
      case 2: case 3:
        if (arg > bytes_.size() - at_) fail("a CBOR string is longer than the report");
        at_ += size_t(arg);
        ended();
        break;
      case 4: case 5: container(major == 5 ? 2 * arg : arg, arg); break;
      case 6: break;  // a tag: the item that follows is what counts
      case 7:
        if (info <= 27) ended();
        else fail("CBOR simple value " + std::to_string(info) + " is not used in reports");
        break;
    }
  }

  uint64_t argument(uint8_t info) {
    if (info < 24) return info;
    const size_t width = info == 24 ? 1 : info == 25 ? 2 : info == 26 ? 4 : info == 27 ? 8 : 0;
    if (width == 0) fail("CBOR additional information " + std::to_string(info) + " is reserved");
    if (bytes_.size() - at_ < width) fail("CBOR runs past the end of the report");
    uint64_t v = 0;
    for (size_t i = 0; i < width; ++i) v = (v << 8) | bytes_[at_++];
    return v;
  }

  // A definite array or map of `items` items (a map's pairs count twice); `declared` is the count as written.
  void container(uint64_t items, uint64_t declared) {
    const size_t n = bytes_.size();
    if (declared > n || items > n - at_) fail("a CBOR container declares more items than the report has bytes");
    if (items == 0) ended();
    else enter(int64_t(items));
  }

  void enter(int64_t items) {
    if (int(open_.size()) >= maxDepth_) fail("the report nests deeper than " + std::to_string(maxDepth_) + " levels");
    open_.push_back(items);
  }

  // One item has ended: it counts against the container it is in.
  void ended() {
    while (!open_.empty() && open_.back() > 0 && --open_.back() == 0) open_.pop_back();
  }

  const std::vector<uint8_t>& bytes_;
  const int maxDepth_;
  std::vector<int64_t> open_;
  size_t at_ = 0;
};

void checkCbor(const std::vector<uint8_t>& bytes, int maxDepth) { CborChecker(bytes, maxDepth).check(); }

}  // namespace

json readCbor(const std::vector<uint8_t>& bytes, size_t maxBytes, int maxDepth) {
  if (bytes.size() > maxBytes)
    fail("the report has " + std::to_string(bytes.size()) + " bytes, more than the " + std::to_string(maxBytes) +
         " a report can have");
  checkCbor(bytes, maxDepth);
  try {
    return json::from_cbor(bytes);
  } catch (const json::exception& e) {
    fail(std::string("the report is not valid CBOR (") + e.what() + ")");
  }
}

// A step report names a few measurements per link direction; anything near this is not one.
constexpr size_t kMostMeasures = 16;

double finite(const json& j, const char* key, bool negative) {
  const json& v = j.at(key);
  if (!v.is_number()) fail(std::string(key) + " is not a number");
  const double d = v.get<double>();
  if (!std::isfinite(d) || (!negative && d < 0)) fail(std::string(key) + " = " + std::to_string(d) + " is not allowed");
  return d;
}

namespace {

// A sum of squares or a measurement made of one (a squared norm): >= 0, and +inf where it overflowed, which a
// diverging run's last steps do before its values stop being finite; the rank that made it reports it as it is, as a
// single process keeps it. NaN is refused.
double squares(const json& j, const char* key) {
  const json& v = j.at(key);
  if (!v.is_number()) fail(std::string(key) + " is not a number");
  const double d = v.get<double>();
  if (!(d >= 0)) fail(std::string(key) + " = " + std::to_string(d) + " is not allowed");
  return d;
}

}  // namespace

uint64_t count(const json& j, const char* key) {
  const json& v = j.at(key);
  if (!v.is_number_integer() || (!v.is_number_unsigned() && v.get<int64_t>() < 0))
    fail(std::string(key) + " is not a non-negative integer");
  return v.get<uint64_t>();
}

json toJson(const LinkTraffic& t) {
  return {{"b", t.boundary},         {"d", int(t.direction)},     {"raw", t.raw_bytes},
          {"wire", t.wire_bytes},    {"n", t.elements},           {"nz", t.nonzeros},
          {"msgs", t.messages},      {"enc", t.encode_s},         {"dec", t.decode_s},
          {"mod", t.modelled_s},     {"esq", t.err_sq},           {"rsq", t.ref_sq},
          {"ecsq", t.err_sq_compensated},                         {"rcsq", t.ref_sq_compensated},
          {"m", t.measures},
          {"method", t.method},      {"resets", t.resets}};
}

LinkTraffic trafficFromJson(const json& j, int stages) {
  LinkTraffic t;
  const uint64_t b = count(j, "b"), d = count(j, "d");
  if (d > 2) fail("direction " + std::to_string(d) + " does not exist");
  // A boundary lies between two stages; the replicas' gradients (direction 2) are named by their stage.
  const uint64_t limit = d == 2 ? uint64_t(std::max(stages, 0)) : uint64_t(std::max(stages - 1, 0));
  if (b >= limit) fail("boundary " + std::to_string(b) + " does not exist");
  t.boundary = int(b);
  t.direction = Direction(d);
  t.raw_bytes = count(j, "raw");
  t.wire_bytes = count(j, "wire");
  t.elements = count(j, "n");
  t.nonzeros = count(j, "nz");
  const uint64_t messages = count(j, "msgs");
  if (messages > 0xffffffffULL) fail("msgs is out of range");
  t.messages = uint32_t(messages);
  t.encode_s = finite(j, "enc");
  t.decode_s = finite(j, "dec");
  t.modelled_s = finite(j, "mod");
  t.setErrorSums(squares(j, "esq"), squares(j, "rsq"), squares(j, "ecsq"), squares(j, "rcsq"));  // errors follow
  const json& measures = j.at("m");
  if (!measures.is_object() || measures.size() > kMostMeasures) fail("m is not a short object of measurements");
  for (auto it = measures.begin(); it != measures.end(); ++it) {
    if (it.key().size() > 64) fail("a measurement's name is longer than 64 characters");
    t.measures[it.key()] = squares(measures, it.key().c_str());
  }
  const json& method = j.at("method");
  const json& resets = j.at("resets");
  if (!method.is_string() || method.get_ref<const std::string&>().size() > 256) fail("method is not a short string");
  t.method = method.get<std::string>();
  if (!resets.is_array() || resets.size() > 1024) fail("resets is not a short list");
  for (const auto& r : resets) {
    if (!r.is_string()) fail("a reset reason is not a string");
    t.resets.push_back(r.get<std::string>());
  }
  return t;
}

json toJson(const HistogramRecord& h) {
  return {{"step", h.step}, {"name", h.name}, {"lo", h.lo}, {"hi", h.hi}, {"counts", h.counts}};
}

HistogramRecord histogramFromJson(const json& j) {
  HistogramRecord h;
  h.step = int64_t(count(j, "step"));
  const json& name = j.at("name");
  if (!name.is_string() || name.get_ref<const std::string&>().size() > 256) fail("a histogram name is not a short string");
  h.name = name.get<std::string>();
  h.lo = finite(j, "lo", true);
  h.hi = finite(j, "hi", true);
  if (h.hi < h.lo) fail("a histogram's range is reversed");
  const json& counts = j.at("counts");
  if (!counts.is_array() || counts.size() > kMaxHistogramBins) fail("histogram counts are not a list of bins");
  for (const auto& c : counts) {
    if (!c.is_number() || !std::isfinite(c.get<double>()) || c.get<double>() < 0) fail("a histogram count is invalid");
    h.counts.push_back(c.get<float>());
  }
  return h;
}

}  // namespace ps::report
