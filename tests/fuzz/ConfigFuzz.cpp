// libFuzzer target for the JSON the lab reads from files: presets and stored configs (bounded parse, then the full
// schema and cross checks) and claim suites. A bad document is a ConfigError naming the file; never a crash.
//   build/fuzz/fuzz_config -max_total_time=60 -dict=tests/fuzz/json.dict tests/fuzz/corpus/config
#include "engine/runs/config/BoundedJson.h"
#include "engine/runs/config/Config.h"
#include "engine/errors/ConfigError.h"
#include "engine/suites/Suite.h"

#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto j = ps::parseJson(text, "fuzz.json");
    try {
      ps::Config::fromJson(j, "fuzz.json");
    } catch (const ps::ConfigError&) {
    }
    ps::Suite::fromJson(j, "fuzz", "fuzz.json");
  } catch (const ps::ConfigError&) {
  }
  return 0;
}
