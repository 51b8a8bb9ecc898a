#pragma once
// The compression options of a codec test: a method and whatever the test sets on top of the defaults.
#include "engine/compress/spec/CompressionOptions.h"

#include <functional>
#include <string>

namespace ps::test {

inline CompressionOptions opts(const std::string& method, const std::function<void(CompressionOptions&)>& set = {}) {
  CompressionOptions o;
  o.method = method;
  if (set) set(o);
  return o;
}

}  // namespace ps::test
