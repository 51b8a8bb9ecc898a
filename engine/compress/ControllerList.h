#pragma once
// The adaptive controllers of the lab, one line each: specs and option checks in
// engine/compress/spec/BuiltinControllerSpecs.cpp (torch-free, read by the catalogue and the config checks), behaviour in
// engine/compress/Adaptive.cpp. A controller here is a choice of every direction's `adapt` key.
#include "engine/compress/spec/CompressionOptions.h"
#include "engine/compress/spec/EntryList.h"

#include <memory>
#include <string>

namespace ps {

class AdaptiveController;
class AdaptiveSender;
struct AdaptOptions;
struct CodecContext;

// spec(): the catalogue's entry. check(): what is wrong with a direction's options under this controller, "" when
// nothing is (`where` names the direction in the message). make(): the controller, nullptr for "none". makeSender():
// the sending end of a controller with compressors of its own (spec().ownCompressors), nullptr for the others
// (engine/compress/AdaptiveSender.h).
#define PS_CONTROLLER_ENTRY(Type)                                                                                      \
  struct Type {                                                                                                        \
    static MethodSpec spec();                                                                                          \
    static std::string check(const CompressionOptions& options, const std::string& where);                             \
    static std::unique_ptr<AdaptiveController> make(const AdaptOptions& options);                                      \
    static std::unique_ptr<AdaptiveSender> makeSender(const CompressionOptions& options, const CodecContext& context); \
  }

PS_CONTROLLER_ENTRY(FixedFactorEntry);
PS_CONTROLLER_ENTRY(GravacEntry);
PS_CONTROLLER_ENTRY(AccordionEntry);

#undef PS_CONTROLLER_ENTRY

using ControllerList = EntryList<FixedFactorEntry, GravacEntry, AccordionEntry>;

}  // namespace ps
