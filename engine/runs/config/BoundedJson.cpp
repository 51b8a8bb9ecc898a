#include "engine/runs/config/BoundedJson.h"

#include <algorithm>

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

namespace {

// "error at line 3, column 5: unexpected end of input" from a parse error, without the library's codes.
std::string whereAndWhy(const std::string& text, const nlohmann::json::parse_error& e) {
  std::size_t line = 1, column = 1;
  const std::size_t end = std::min(text.size(), e.byte > 0 ? e.byte - 1 : 0);
  for (std::size_t i = 0; i < end; ++i) {
    if (text[i] == '\n')
      ++line, column = 1;
    else
      ++column;
  }
  std::string why = e.what();
  const std::size_t colon = why.rfind(": ");
  if (colon != std::string::npos) why = why.substr(colon + 2);
  const std::size_t dash = why.find(" - ");  // "syntax error while parsing value - invalid literal; ..."
  if (dash != std::string::npos) why = why.substr(dash + 3);
  return "error at line " + std::to_string(line) + ", column " + std::to_string(column) + ": " + why;
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
  } catch (const nlohmann::json::parse_error& e) {
    throw ConfigError(source + " is not valid JSON: " + whereAndWhy(text, e) + "; fix the file or pick another");
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
