// Resolve a runtime architecture name ("gfx906:sramecc+:xnack-", "gfx936", "9.0", "sm_90a") to a
// target table entry: the exact entry if listed, else the family's "-generic" entry.
#pragma once
#include <string>
#include <string_view>

#include "capabilities/targets.hpp"

namespace dcukern {

struct ResolvedTarget {
  const TargetInfo* info = nullptr;  // nullptr: not a GPU architecture name at all
  std::string canonical;             // "gfx906", "sm_90"
  bool exact = false;                // false: a family fallback
};

inline ResolvedTarget resolve_target(std::string_view arch_name) {
  ResolvedTarget r;
  r.canonical = canonical_arch_name(arch_name);
  if (const TargetInfo* t = capabilities::find_target(r.canonical.c_str());
      t && std::string_view(t->name).find("-generic") == std::string_view::npos) {
    r.info = t;
    r.exact = true;
  } else {
    r.info = capabilities::family_target(r.canonical);
  }
  return r;
}

}  // namespace dcukern
