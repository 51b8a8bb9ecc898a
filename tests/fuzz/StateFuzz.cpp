// libFuzzer target for the `codec --state` folder as `pipesqueeze-cli codec` reads it back: its configuration
// (codec.json) and the first message it replays, an input (.npy, the sender's folder) or a payload (.bin, the
// receiver's). Whatever the files hold, reading the folder either replays the message into the compensation or
// refuses the folder as bad input (ConfigError, NpyError, PayloadError) naming the file; it never crashes, reads out
// of bounds or allocates for a size only a file declares.
//   input: flags (1 byte: bit 0 a valid codec.json, bit 1 the receiver's folder) | codec (1 byte) | compensation
//          (1 byte) | u16 length of the codec.json text | that text (unless bit 0) | the message file
//   build/fuzz/fuzz_state -max_total_time=60 -malloc_limit_mb=1024 tests/fuzz/corpus/state
#include "app/cli/CodecState.h"
#include "engine/compress/Compensation.h"
#include "engine/compress/spec/Catalogue.h"
#include "engine/data/Npy.h"
#include "engine/errors/ConfigError.h"

#include <stdlib.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string& folder() {
  static const std::string dir = [] {
    std::string tmpl = (fs::temp_directory_path() / "fuzz-state-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) abort();
    return tmpl;
  }();
  return dir;
}

void put(const std::string& path, const uint8_t* data, size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), std::streamsize(size));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 5) return 0;
  const bool validConfig = data[0] & 1, receiver = data[0] & 2;
  const auto& codecs = ps::catalogue::codecs();
  std::vector<std::string> compensations;
  for (const auto& m : ps::catalogue::compensations())
    if (!m.forwardOnly) compensations.push_back(m.name);
  ps::CompressionOptions o;
  o.method = codecs[data[1] % codecs.size()].name;
  o.feedback = compensations[data[2] % compensations.size()];
  const json config = {{"options", o.toJson()}, {"seed", 7}, {"shape", {4, 6}}};
  uint16_t length = 0;
  std::memcpy(&length, data + 3, 2);
  size_t at = 5;
  const std::string dir = folder();
  for (const auto& entry : fs::directory_iterator(dir)) fs::remove_all(entry.path());
  const std::string configFile = (fs::path(dir) / "codec.json").string();
  if (validConfig) {
    const std::string text = config.dump(2) + "\n";
    put(configFile, reinterpret_cast<const uint8_t*>(text.data()), text.size());
  } else {
    const size_t n = std::min<size_t>(length, size - at);
    put(configFile, data + at, n);
    at += n;
  }
  put(ps::cli::numbered(dir, receiver ? "payload" : "input", 0, receiver ? ".bin" : ".npy"), data + at, size - at);
  try {
    const size_t count = ps::cli::openState(dir, config);
    ps::CodecContext context;
    context.seed = 7;
    ps::Compensator c(o, context, {});
    if (receiver) {
      ps::cli::replayReceiver(dir, config, count, int64_t(1) << 16, c);
    } else {
      ps::cli::replaySender(dir, config, count, c);
    }
  } catch (const ps::ConfigError&) {
  } catch (const ps::NpyError&) {
  } catch (const ps::PayloadError&) {
  }
  return 0;
}
