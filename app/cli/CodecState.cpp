#include "app/cli/CodecState.h"

#include "engine/compress/Compensation.h"
#include "engine/core/AtomicFile.h"
#include "engine/data/Npy.h"
#include "engine/errors/ConfigError.h"
#include "engine/runs/config/BoundedJson.h"

#include <torch/torch.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace ps::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// OUT.bin: "PSQCODEC", u32 LE length of a JSON object {method, feedback, options, seed, message}, the object, then
// the payload exactly as it would cross a link. The file is untrusted when read back.
constexpr char kMagic[8] = {'P', 'S', 'Q', 'C', 'O', 'D', 'E', 'C'};
constexpr uint32_t kMaxHeader = kMaxCodecHeader;

// A --state folder holds the configuration (options, seed and the tensors' shape) and the messages seen so far; the
// compensation's state is rebuilt by replaying them (codecs and compensations are deterministic given their seed), so
// nothing in it can go stale. Its files are untrusted: each must be a regular file of a bounded size, and every message
// replayed must have the folder's shape (checkShape).
void checkShape(const std::string& file, const std::vector<int64_t>& shape, const json& config) {
  if (json(shape) != config.at("shape"))
    badInput(file + " holds a tensor of shape " + shapeText(shape) + ", but the --state folder's messages have shape " +
             config.at("shape").dump() + "; the folder was altered: use a fresh one");
}

}  // namespace

void badInput(const std::string& what) {
  throw ConfigError(what);
}

torch::Tensor tensorOf(const NpyArray& a) {
  auto t = torch::empty(a.shape, torch::kFloat32);
  if (!a.values.empty()) std::memcpy(t.data_ptr<float>(), a.values.data(), a.values.size() * 4);
  return t;
}

void checkFinite(const std::string& file, const at::Tensor& x) {
  if (!torch::isfinite(x).all().item<bool>())
    badInput(file + ": holds values that are not finite (inf or NaN); a codec encodes finite values only");
}

std::string numbered(const std::string& dir, const char* stem, size_t i, const char* ext) {
  char name[64];
  std::snprintf(name, sizeof name, "%s-%06zu%s", stem, i, ext);
  return (fs::path(dir) / name).string();
}

size_t openState(const std::string& dir, const json& config) {
  if (dir.empty()) return 0;
  fs::create_directories(dir);
  const fs::path file = fs::path(dir) / "codec.json";
  if (fs::exists(file)) {
    std::error_code ec;
    if (!fs::is_regular_file(file, ec) || fs::file_size(file, ec) > kMaxHeader || ec)
      badInput(file.string() +
               " is not the folder's configuration (a regular file of at most 64 KiB); use a fresh "
               "--state folder");
    std::ifstream in(file);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const json stored = parseJson(text, file.string());
    if (stored != config) {
      std::string differ;
      for (const auto& patch : json::diff(stored, config))
        differ += (differ.empty() ? "" : ", ") + patch.value("path", "");
      badInput("--state " + dir + " holds the state of another configuration (" + differ +
               " differ); use a fresh folder for another configuration");
    }
  } else {
    try {
      AtomicFile::write(file.string(), config.dump(2) + "\n");
    } catch (const std::runtime_error& e) {
      badInput(e.what());
    }
  }
  size_t n = 0;
  while (fs::exists(numbered(dir, "input", n, ".npy")) || fs::exists(numbered(dir, "payload", n, ".bin"))) ++n;
  return n;
}

void writeBin(const std::string& path, const json& header, const Payload& p) {
  const std::string text = header.dump();
  AtomicFile file(path);  // a file replaced whole; a pipe or device written through; a link to a file refused
  std::ostream& out = file.stream();
  const uint32_t length = uint32_t(text.size());
  out.write(kMagic, 8);
  for (int i = 0; i < 4; ++i) out.put(char((length >> (8 * i)) & 0xff));
  out.write(text.data(), std::streamsize(text.size()));
  out.write(reinterpret_cast<const char*>(p.bytes.data()), std::streamsize(p.bytes.size()));
  try {
    file.commit();
  } catch (const std::runtime_error& e) {
    badInput(e.what());
  }
}

// An encoded file is read whole, so its size is checked first: a regular file no larger than the biggest payload a
// tensor of `maxElements` can have (a device or a pipe could be endless).
std::pair<json, Payload> readBin(const std::string& path, int64_t maxElements) {
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (ec || !fs::exists(status)) badInput(path + ": cannot open the file; check the path");
  if (!fs::is_regular_file(status)) badInput(path + ": not a regular file; give the file codec encode wrote");
  const uint64_t size = fs::file_size(path, ec);
  const uint64_t most = kMaxHeader + 12 + maxPayloadBytes({maxElements});
  if (ec || size > most)
    badInput(path + ": " + std::to_string(size) + " bytes, more than a payload of at most " +
             std::to_string(maxElements) + " elements takes (" + std::to_string(most) +
             "); raise --max-elements if it is meant");
  std::ifstream in(path, std::ios::binary);
  if (!in) badInput(path + ": cannot open the file; check the path");
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() < 12 || std::memcmp(bytes.data(), kMagic, 8) != 0)
    badInput(path + ": not a file written by pipesqueeze-cli codec encode");
  uint32_t length = 0;
  for (int i = 0; i < 4; ++i) length |= uint32_t(static_cast<unsigned char>(bytes[size_t(8 + i)])) << (8 * i);
  if (length > kMaxHeader || 12 + uint64_t(length) > bytes.size()) badInput(path + ": the header length is impossible");
  json header = parseJson(bytes.substr(12, length), path);
  if (!header.is_object() || !header.contains("options") || !header["options"].is_object() ||
      !header.value("seed", json()).is_number_unsigned())
    badInput(path + ": the header lacks its options or seed; the file is damaged");
  Payload p;
  p.bytes.assign(bytes.begin() + 12 + length, bytes.end());
  return {header, p};
}

void replaySender(const std::string& dir, const json& config, size_t count, Compensator& sender) {
  for (size_t i = 0; i < count; ++i) {
    const std::string file = numbered(dir, "input", i, ".npy");
    const auto earlier = tensorOf(readNpy(file));
    checkShape(file, earlier.sizes().vec(), config);
    checkFinite(file, earlier);
    SendReport ignored;
    sender.send(earlier, {}, ignored);
  }
}

void replayReceiver(const std::string& dir, const json& config, size_t count, int64_t maxElements,
                    Compensator& receiver) {
  for (size_t i = 0; i < count; ++i) {
    const std::string file = numbered(dir, "payload", i, ".bin");
    const Payload earlier = readBin(file, maxElements).second;
    try {
      checkShape(file, HeadedPayload(earlier).header.shape, config);
      receiver.receive(earlier, torch::kCPU, {});
    } catch (const PayloadError& e) {
      badInput(file + ": " + e.what() + "; the folder was altered: use a fresh one");
    }
  }
}

}  // namespace ps::cli
