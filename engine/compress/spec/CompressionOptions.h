#pragma once
// The options of one compressed direction: codec, error compensation and adaptive factor. Plain data that
// round-trips through JSON (the config keys compression.<direction>.<option>), shared by the torch-free config and
// run store and by the codecs, which no longer need the whole run configuration.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <string>

namespace ps {

// One direction's compressor and error compensation (docs/algorithms.md). Round-trips through JSON.
struct CompressionOptions {
  // The defaults are the catalogue's (engine/compress/spec/Catalogue.cpp, sharedOptions), read by the constructor.
  std::string method = "none";   // a codec of the catalogue (pipesqueeze-cli codec list): none, topk, powersgd, ...
  double k;                      // fraction kept by a sparsifier
  int bits;                      // 1..8, or 16 for an fp16 cast
  std::string rounding, scale, range;
  int64_t bucket;
  int levels;                    // QSGD
  int value_bits;                // a sparsifier's values: 32 float32, 16 fp16, 1..8 quantized again
  bool trim, scaled;
  double sample;                 // sampled threshold
  std::string feedback = "none"; // a compensation of the catalogue: none ef ef21 diana randdiana aqsgd
  double alpha, p;
  std::string adapt = "none";    // a controller of the catalogue: none gravac accordion
  double theta_min, theta_max, epsilon, omega, eta;
  std::string adapt_policy;
  int64_t window;
  // Options of codecs added since (engine/compress/CodecList.h), by name: what a direction's JSON gave; the
  // catalogue's default for the rest.
  std::map<std::string, nlohmann::json> extra;

  CompressionOptions();

  // Calls visit(name, field) for each option with a field above, in the order of the fields: the one list of them
  // that the constructor, toJson and fromJson read.
  template <class Self, class Visit>
  static void eachField(Self& o, Visit&& visit) {
    visit("method", o.method), visit("k", o.k), visit("bits", o.bits), visit("rounding", o.rounding);
    visit("scale", o.scale), visit("range", o.range), visit("bucket", o.bucket), visit("levels", o.levels);
    visit("value_bits", o.value_bits), visit("trim", o.trim), visit("scaled", o.scaled), visit("sample", o.sample);
    visit("feedback", o.feedback), visit("alpha", o.alpha), visit("p", o.p), visit("adapt", o.adapt);
    visit("theta_min", o.theta_min), visit("theta_max", o.theta_max), visit("epsilon", o.epsilon);
    visit("omega", o.omega), visit("eta", o.eta), visit("adapt_policy", o.adapt_policy), visit("window", o.window);
  }
  // Whether `name` is one of the fields above (the catalogue's other options live in `extra`).
  static bool hasField(const std::string& name);

  // The value of one of `extra`'s options (the catalogue's default where none was given).
  const nlohmann::json& value(const std::string& option) const;
  // The codec sends a subset of the elements (the catalogue's word for `method`).
  bool sparse() const;
  // The catalogue's words for `adapt`: the sender keeps the controller's own compressors (GraVAC); the link measures
  // the norm of what crossed for it (Accordion). False for none.
  bool adaptsWithOwnCompressors() const;
  bool adaptsOnNorm() const;
  // Its ends keep state between messages that a change of options may drop: a compensation's, or the residuals of
  // a controller's own compressors.
  bool holdsState() const { return feedback != "none" || adaptsWithOwnCompressors(); }
  // Whether a direction changing from `before` to these options keeps its compensation state (EF's residual, EF21's
  // estimate, DIANA's shift, AQ-SGD's buffers) at both ends: the same compensation and controller, and a codec of the
  // same family (sparsifiers, or dense codecs), so the state means what it meant. A change of K, bits, rounding or
  // value bits keeps it; a controller with compressors of its own (GraVAC) keeps its residuals itself.
  bool keepsCompensationOf(const CompressionOptions& before) const;
  nlohmann::json toJson() const;
  // Reads the keys present in `j` over `base` (a boundary override over its direction).
  static CompressionOptions fromJson(const nlohmann::json& j, CompressionOptions base);
  static CompressionOptions fromJson(const nlohmann::json& j);
  bool operator==(const CompressionOptions& o) const { return toJson() == o.toJson(); }
  bool operator!=(const CompressionOptions& o) const { return !(*this == o); }
};
inline CompressionOptions CompressionOptions::fromJson(const nlohmann::json& j) { return fromJson(j, CompressionOptions()); }

// Why a direction's compensation state was dropped when its compressor changed to the one `now` describes: the
// reason its reset event gives, wherever the direction is (a link, the gradient exchange).
inline std::string compressorChangedReset(const std::string& now) {
  return "compensation state reset: the compressor changed to " + now;
}

// What is wrong with `options` under the controller its `adapt` names, "" when nothing is (or when that name is not
// a controller: the schema says so); `where` names the direction in the message. The controllers' own checks
// (engine/compress/ControllerList.h).
std::string checkController(const CompressionOptions& options, const std::string& where);

}  // namespace ps
