#pragma once
// JSON from outside the process (presets, suites, stored configs, a --set value, a codec file's header) is parsed
// with bounds: at most kMaxJsonDepth levels of nesting and kMaxJsonBytes of text, so a hostile file can neither
// overflow the stack of code that walks the document nor make it allocate without limit. Torch-free.
#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>

namespace ps {

inline constexpr int kMaxJsonDepth = 64;
inline constexpr size_t kMaxJsonBytes = size_t(64) << 20;

// Throws ConfigError naming `source` and what is wrong (not JSON, too deep, too large).
nlohmann::json parseJson(const std::string& text, const std::string& source);
// The same bounds; a discarded value (is_discarded()) instead of an exception.
nlohmann::json parseJsonOrDiscarded(const std::string& text);

// True when `s` is well-formed UTF-8 (what a JSON string must hold).
bool validUtf8(const std::string& s);

}  // namespace ps
