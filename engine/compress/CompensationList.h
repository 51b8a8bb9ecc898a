#pragma once
// The error compensations of the lab, one line each: specs in engine/compress/spec/BuiltinCompensationSpecs.cpp
// (torch-free, read by the catalogue), rules in engine/compress/Compensation.cpp. A compensation here is a choice of
// every direction's `feedback` key, in the app's editor and in the codec CLI.
#include "engine/compress/spec/EntryList.h"

#include <memory>

namespace ps {

class CompensationRule;

#define PS_COMPENSATION_ENTRY(Type)                \
  struct Type {                                    \
    static MethodSpec spec();                      \
    static std::unique_ptr<CompensationRule> make(); \
  }

PS_COMPENSATION_ENTRY(NoCompensationEntry);
PS_COMPENSATION_ENTRY(ErrorFeedbackEntry);
PS_COMPENSATION_ENTRY(Ef21Entry);
PS_COMPENSATION_ENTRY(DianaEntry);
PS_COMPENSATION_ENTRY(RandDianaEntry);
PS_COMPENSATION_ENTRY(AqsgdEntry);

#undef PS_COMPENSATION_ENTRY

using CompensationList =
    EntryList<NoCompensationEntry, ErrorFeedbackEntry, Ef21Entry, DianaEntry, RandDianaEntry, AqsgdEntry>;

}  // namespace ps
