// What a gfx / sm target is: vendor, wave size, LDS, confirmed and unverified instruction features,
// whether this toolchain builds for it, and how sure the facts are. The table itself lives in
// capabilities/targets.hpp; this header holds the record and the name parsing.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "dcukern/registry/features.hpp"

namespace dcukern {

enum class Vendor : uint8_t { amd, hygon, nvidia };
enum class Confidence : uint8_t { high, medium, low };

constexpr const char* vendor_name(Vendor v) {
  return v == Vendor::amd ? "AMD" : v == Vendor::hygon ? "Hygon" : "NVIDIA";
}
constexpr const char* confidence_name(Confidence c) {
  return c == Confidence::high ? "high" : c == Confidence::medium ? "medium" : "low";
}

struct TargetInfo {
  const char* name;          // "gfx906", "sm_90"; family fallbacks end in "-generic"
  Vendor vendor;
  const char* products;      // what ships with this target (informative only; never opens a row)
  int wave_size;             // 64 on GCN/CDNA/DCU, 32 on RDNA (default) and NVIDIA
  int lds_bytes;             // shared memory / LDS a workgroup may use
  FeatureSet features;       // confirmed features: these may open a row
  FeatureSet unverified;     // claimed by some source, not confirmed: never open a row
  bool debian_toolchain;     // this project's Debian toolchain (clang 15 / nvcc) compiles for it
  Confidence confidence;     // how sure the product mapping and the facts are
  const char* source;        // where the facts come from
  FeatureSet code_lacks = 0;  // the device's features the running code was not built for (DeviceContext only)
};

constexpr bool has_feature(const TargetInfo& t, Feature f) { return (t.features & feature_bit(f)) != 0; }

// `t` as rows are selected for code that lacks `missing` (DeviceContext: code JIT-compiled from older PTX):
// those of its features are taken out and recorded in code_lacks, which row explanations name.
constexpr TargetInfo for_code_lacking(TargetInfo t, FeatureSet missing) {
  t.code_lacks = t.features & missing;
  t.features &= ~t.code_lacks;
  return t;
}

// Strip "gfx906:sramecc+:xnack-" down to "gfx906", lower-case; NVIDIA "9.0", "90", "sm_90a" -> "sm_90".
inline std::string canonical_arch_name(std::string_view raw) {
  std::string s;
  for (char c : raw) {
    if (c == ':' || c == ' ') break;
    s.push_back(static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c));
  }
  auto all_digits = [](std::string_view v) {
    if (v.empty()) return false;
    for (char c : v) if (c < '0' || c > '9') return false;
    return true;
  };
  if (s.rfind("sm_", 0) == 0) {
    std::string digits = s.substr(3);
    while (!digits.empty() && !(digits.back() >= '0' && digits.back() <= '9')) digits.pop_back();  // sm_90a
    return all_digits(digits) ? "sm_" + digits : s;
  }
  const auto dot = s.find('.');
  if (dot != std::string::npos && all_digits(s.substr(0, dot)) && all_digits(s.substr(dot + 1)))
    return "sm_" + s.substr(0, dot) + s.substr(dot + 1);  // compute capability "9.0"
  if (all_digits(s)) return "sm_" + s;
  return s;
}

}  // namespace dcukern
