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
  std::string method = "none";   // a codec of the catalogue (pipesqueeze-cli codec list): none, topk, powersgd, ...
  double k = 0.1;                // fraction kept by a sparsifier
  int bits = 8;                  // 1..8, or 16 for an fp16 cast
  std::string rounding = "nearest", scale = "bucket", range = "maxabs";
  int64_t bucket = 512;
  int levels = 16;               // QSGD
  int value_bits = 32;           // a sparsifier's values: 32 float32, 16 fp16, 1..8 quantized again
  bool trim = false, scaled = false;
  double sample = 0.01;          // sampled threshold
  std::string feedback = "none"; // none ef ef21 diana randdiana aqsgd
  double alpha = 0, p = 0.1;
  std::string adapt = "none";          // none gravac accordion (engine/compress/ControllerList.h)
  double theta_min = 0.1, theta_max = 1e-4, epsilon = 0.75, omega = 0.05, eta = 0.2;
  std::string adapt_policy = "geometric";
  int64_t window = 25;
  // Options of codecs added since (engine/compress/CodecList.h), by name: what a direction's JSON gave; the
  // catalogue's default for the rest.
  std::map<std::string, nlohmann::json> extra;

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

// What is wrong with `options` under the controller its `adapt` names, "" when nothing is (or when that name is not
// a controller: the schema says so); `where` names the direction in the message. The controllers' own checks
// (engine/compress/ControllerList.h).
std::string checkController(const CompressionOptions& options, const std::string& where);

}  // namespace ps
