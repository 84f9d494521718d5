#include <doctest/doctest.h>

#include <string>

#include "capabilities/targets.hpp"
#include "dcukern/registry/resolve.hpp"

using namespace dcukern;

TEST_CASE("architecture names are canonicalised") {
  CHECK(canonical_arch_name("gfx906:sramecc+:xnack-") == "gfx906");
  CHECK(canonical_arch_name("gfx90a:xnack+") == "gfx90a");
  CHECK(canonical_arch_name("GFX936") == "gfx936");
  CHECK(canonical_arch_name("sm_90a") == "sm_90");
  CHECK(canonical_arch_name("sm_90") == "sm_90");
  CHECK(canonical_arch_name("9.0") == "sm_90");
  CHECK(canonical_arch_name("86") == "sm_86");
}

TEST_CASE("listed targets resolve exactly") {
  for (const char* raw : {"gfx906:sramecc+:xnack-", "gfx908", "gfx90a:sramecc-:xnack+", "gfx940", "gfx942", "gfx950",
                          "gfx1030", "gfx1100", "gfx926", "gfx928", "gfx936", "gfx938", "sm_80", "8.6", "sm_89",
                          "9.0"}) {
    const ResolvedTarget r = resolve_target(raw);
    INFO(raw);
    REQUIRE(r.info != nullptr);
    CHECK(r.exact);
    CHECK(std::string(r.info->name) == r.canonical);
  }
}

TEST_CASE("unlisted names fall back to a family entry that claims no feature") {
  struct Case { const char* raw; const char* family; };
  for (Case c : {Case{"gfx900", "gfx9-generic"}, Case{"gfx90c:xnack-", "gfx9-generic"}, Case{"gfx927", "hygon-generic"},
                 Case{"gfx939", "hygon-generic"}, Case{"gfx1031", "gfx10-generic"}, Case{"gfx1101", "gfx11-generic"},
                 Case{"gfx1201", "gfx12-generic"}, Case{"sm_100", "nvidia-generic"}, Case{"12.0", "nvidia-generic"}}) {
    const ResolvedTarget r = resolve_target(c.raw);
    INFO(c.raw);
    REQUIRE(r.info != nullptr);
    CHECK_FALSE(r.exact);
    CHECK(std::string(r.info->name) == c.family);
    CHECK(r.info->features == 0);
  }
  CHECK(resolve_target("not-a-gpu").info == nullptr);
}

TEST_CASE("target table facts are consistent") {
  for (const TargetInfo& t : capabilities::kTargets) {
    INFO(t.name);
    CHECK((t.wave_size == 32 || t.wave_size == 64));
    CHECK(t.lds_bytes >= 49152);
    CHECK((t.features & t.unverified) == 0);  // a feature is either confirmed or unverified
    if (t.vendor == Vendor::nvidia) CHECK(t.wave_size == 32);
    if (t.vendor == Vendor::hygon) {
      CHECK(t.wave_size == 64);
      CHECK(t.features == 0);  // nothing confirmed without Hygon's own compiler
      CHECK_FALSE(t.debian_toolchain);
    }
    if (has_feature(t, Feature::dot2c_f32_f16)) CHECK(has_feature(t, Feature::dot2_f32_f16));
    if (has_feature(t, Feature::nv_mma_f16)) CHECK(t.vendor == Vendor::nvidia);
  }
  // The facts TARGETS.md singles out.
  CHECK(has_feature(*capabilities::find_target("gfx906"), Feature::dot2_f32_f16));
  CHECK_FALSE(has_feature(*capabilities::find_target("gfx906"), Feature::dot2c_f32_f16));
  CHECK(has_feature(*capabilities::find_target("gfx90a"), Feature::dot2c_f32_f16));
  CHECK(capabilities::find_target("gfx1100")->wave_size == 32);
  CHECK((capabilities::find_target("gfx936")->unverified & feature_bit(Feature::dot2c_f32_f16)) != 0);
}
