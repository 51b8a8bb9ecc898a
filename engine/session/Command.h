#pragma once
// What the outside world can ask of a running session. Commands queue up and take effect at the next step
// boundary, so a worker never sees a half-changed setting.
#include <nlohmann/json.hpp>

#include <string>

namespace ps {

struct Command {
  enum class Kind { Pause, Resume, Stop, Set };
  Kind kind = Kind::Stop;
  std::string key;  // Set: a config key that may change mid-run (link.*, compression.*, train.lr)
  nlohmann::json value;

  static Command pause() { return {Kind::Pause, {}, {}}; }
  static Command resume() { return {Kind::Resume, {}, {}}; }
  static Command stop() { return {Kind::Stop, {}, {}}; }
  static Command set(std::string key, nlohmann::json value) { return {Kind::Set, std::move(key), std::move(value)}; }
};

// True for keys a running session can change (the rest shape the model or the data and need a new run).
bool changeableMidRun(const std::string& key);

}  // namespace ps
