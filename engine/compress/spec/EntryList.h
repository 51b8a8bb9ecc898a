#pragma once
// A compile-time list of registry entries (codecs, compensations, controllers): each entry type has a static spec()
// (the catalogue's data, torch-free) and a static make() (the code, in the engine). Iterating the list reads only
// what a caller uses, so torch-free code can list specs without linking a factory.
#include "engine/compress/spec/Catalogue.h"

#include <string>
#include <vector>

namespace ps {

template <class... Entries>
struct EntryList {
  static std::vector<MethodSpec> specs() { return {Entries::spec()...}; }
  // Calls visit(Entry{}) for each entry until it returns true; says whether one did.
  template <class Visit>
  static bool any(Visit&& visit) {
    return (visit(Entries{}) || ...);
  }
  // Calls visit(Entry{}) for the entry whose spec().name is `name`; says whether one has that name.
  template <class Visit>
  static bool named(const std::string& name, Visit&& visit) {
    return any([&](auto entry) {
      if (decltype(entry)::spec().name != name) return false;
      visit(entry);
      return true;
    });
  }
};

}  // namespace ps
