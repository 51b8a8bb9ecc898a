#include "engine/runs/config/BoundedJson.h"

#include "engine/errors/ConfigError.h"

namespace ps {
namespace {

struct TooDeep {};

nlohmann::json parseBounded(const std::string& text) {
  // The callback sees every container as it opens, with its depth: a document deeper than the bound stops there,
  // before anything walks it (nlohmann's parser itself keeps its stack on the heap).
  return nlohmann::json::parse(text, [](int depth, nlohmann::json::parse_event_t event, nlohmann::json&) {
    if (depth >= kMaxJsonDepth &&
        (event == nlohmann::json::parse_event_t::object_start || event == nlohmann::json::parse_event_t::array_start))
      throw TooDeep{};
    return true;
  });
}

}  // namespace

nlohmann::json parseJson(const std::string& text, const std::string& source) {
  if (text.size() > kMaxJsonBytes)
    throw ConfigError(source + " holds " + std::to_string(text.size() >> 20) + " MiB of JSON, more than the " +
                      std::to_string(kMaxJsonBytes >> 20) + " MiB the lab reads; it is not a preset or a suite");
  try {
    return parseBounded(text);
  } catch (const TooDeep&) {
    throw ConfigError(source + " nests JSON more than " + std::to_string(kMaxJsonDepth) +
                      " levels deep; no setting needs that, so the file is damaged or not meant for the lab");
  } catch (const nlohmann::json::exception& e) {
    throw ConfigError(source + " is not valid JSON (" + e.what() + "); fix the file or pick another");
  }
}

nlohmann::json parseJsonOrDiscarded(const std::string& text) {
  if (text.size() > kMaxJsonBytes) return nlohmann::json(nlohmann::json::value_t::discarded);
  try {
    return parseBounded(text);
  } catch (const TooDeep&) {
  } catch (const nlohmann::json::exception&) {
  }
  return nlohmann::json(nlohmann::json::value_t::discarded);
}

bool validUtf8(const std::string& s) {
  size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    size_t extra = 0;
    uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      extra = 1, cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      extra = 2, cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      extra = 3, cp = c & 0x07;
    } else {
      return false;
    }
    if (i + extra >= s.size()) return false;
    for (size_t k = 1; k <= extra; ++k) {
      const unsigned char d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (d & 0x3F);
    }
    // Overlong forms, surrogates and code points past U+10FFFF are not UTF-8.
    if ((extra == 1 && cp < 0x80) || (extra == 2 && cp < 0x800) || (extra == 3 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF))
      return false;
    i += extra + 1;
  }
  return true;
}

}  // namespace ps
