// Instruction-set features a kernel variant can need, and the device-assembly mnemonics that show a
// feature was really used (the ISA audit greps the disassembly for them).
#pragma once
#include <cstdint>

namespace dcukern {

enum class Feature : uint8_t {
  dot2_f32_f16,   // v_dot2_f32_f16 (VOP3P; __builtin_amdgcn_fdot2, which clang may emit as dot2c/dot2acc)
  dot2c_f32_f16,  // v_dot2c_f32_f16 (VOP2, "dot5-insts"); absent on gfx906
  dot4_i32_i8,    // v_dot4_i32_i8 (__builtin_amdgcn_sdot4)
  dot2_f32_bf16,  // v_dot2_f32_bf16 (gfx950)
  pk_fma_f32,     // v_pk_fma_f32 (gfx90a+)
  mfma,           // AMD matrix cores (v_mfma_*)
  hygon_mmac,     // Hygon matrix units (__builtin_hcu_mmac_*), 16x16 f16/bf16/i8
  fp8_fnuz,       // fp8 e4m3/e5m2 "fnuz" conversions (gfx940/942)
  fp8_ocp,        // OCP fp8 conversions (gfx950, sm_89+)
  nv_mma_f16,     // mma.sync m16n8k16 f16/bf16 -> f32 (sm_80+)
  count
};

using FeatureSet = uint32_t;

constexpr FeatureSet feature_bit(Feature f) { return FeatureSet(1) << static_cast<unsigned>(f); }
constexpr FeatureSet features() { return 0; }
template <class... Rest>
constexpr FeatureSet features(Feature first, Rest... rest) {
  return feature_bit(first) | features(rest...);
}
constexpr bool has_all(FeatureSet have, FeatureSet need) { return (have & need) == need; }

struct FeatureInfo {
  Feature feature;
  const char* name;
  // Mnemonics (prefix match on a disassembly line) any one of which proves the feature is used.
  const char* proof[3];
  // A mnemonic that must never appear in code built for a target lacking the feature (nullptr: no check).
  const char* forbidden;
};

constexpr FeatureInfo kFeatureInfo[] = {
    {Feature::dot2_f32_f16, "dot2_f32_f16", {"v_dot2_f32_f16", "v_dot2c_f32_f16", "v_dot2acc_f32_f16"}, nullptr},
    {Feature::dot2c_f32_f16, "dot2c_f32_f16", {"v_dot2c_f32_f16", nullptr, nullptr}, "v_dot2c_f32_f16"},
    {Feature::dot4_i32_i8, "dot4_i32_i8", {"v_dot4_i32_i8", "v_dot4c_i32_i8", nullptr}, nullptr},
    {Feature::dot2_f32_bf16, "dot2_f32_bf16", {"v_dot2_f32_bf16", nullptr, nullptr}, "v_dot2_f32_bf16"},
    {Feature::pk_fma_f32, "pk_fma_f32", {"v_pk_fma_f32", nullptr, nullptr}, "v_pk_fma_f32"},
    {Feature::mfma, "mfma", {"v_mfma_", nullptr, nullptr}, "v_mfma_"},
    {Feature::hygon_mmac, "hygon_mmac", {"v_mmac_", nullptr, nullptr}, nullptr},
    {Feature::fp8_fnuz, "fp8_fnuz", {"v_cvt_pk_fp8_f32", nullptr, nullptr}, nullptr},
    {Feature::fp8_ocp, "fp8_ocp", {"v_cvt_pk_fp8_f32", nullptr, nullptr}, nullptr},
    {Feature::nv_mma_f16, "nv_mma_f16", {"HMMA.16816", nullptr, nullptr}, nullptr},
};
static_assert(sizeof(kFeatureInfo) / sizeof(kFeatureInfo[0]) == static_cast<unsigned>(Feature::count),
              "one FeatureInfo per Feature, in enum order");

constexpr const FeatureInfo& feature_info(Feature f) { return kFeatureInfo[static_cast<unsigned>(f)]; }
constexpr const char* feature_name(Feature f) { return feature_info(f).name; }

}  // namespace dcukern
