#pragma once
// The one list of configuration keys: their names, types, defaults and allowed values.
// Validation, defaults, `--set` overrides and the GUI's settings panel all read this table.
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace ps {

struct KeySpec {
  enum class Type { Int, Double, Bool, String, Enum, IntList };
  std::string path;  // dot path; a segment "*" matches any non-negative integer (per-boundary overrides)
  Type type = Type::String;
  nlohmann::json fallback;  // default value; null for wildcard keys (they have no default)
  double min = 0, max = 0;  // for Int, Double, IntList items
  std::vector<std::string> choices;  // for Enum
  std::string help;

  bool matches(const std::string& dotted) const;
  std::string allowed() const;  // "an integer in 1 .. 8", "one of gpipe, 1f1b", ...
};

class ConfigSchema {
 public:
  static const ConfigSchema& instance();
  const std::vector<KeySpec>& keys() const { return keys_; }
  const KeySpec* find(const std::string& dotted) const;  // nullptr when unknown
  std::string closest(const std::string& dotted) const;  // best suggestion for a typo, or ""
  nlohmann::json defaults() const;                       // nested object of every default
  std::string markdown() const;                          // a table of every key, for presets/README.md

 private:
  ConfigSchema();
  std::vector<KeySpec> keys_;
};

}  // namespace ps
