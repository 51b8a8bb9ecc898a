#include "engine/compress/AdaptiveSender.h"

#include "engine/compress/ControllerList.h"

namespace ps {

std::unique_ptr<AdaptiveSender> FixedFactorEntry::makeSender(const CompressionOptions&, const CodecContext&) {
  return nullptr;
}
std::unique_ptr<AdaptiveSender> AccordionEntry::makeSender(const CompressionOptions&, const CodecContext&) {
  return nullptr;  // Accordion changes K; the direction's own compressor is rebuilt at each change
}

std::unique_ptr<AdaptiveSender> makeAdaptiveSender(const CompressionOptions& options, const CodecContext& context) {
  std::unique_ptr<AdaptiveSender> made;
  ControllerList::named(options.adapt, [&](auto entry) { made = decltype(entry)::makeSender(options, context); });
  return made;
}

}  // namespace ps
