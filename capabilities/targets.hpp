// The target table: every gfx / sm target dcukern knows, with the facts that decide which kernel rows
// may run there. A feature in `features` is confirmed (by this project's compile + disassembly checks
// or by the vendor's ISA documentation and LLVM's target definitions); one in `unverified` is claimed by
// some source only and never opens a row. A name not listed resolves to its family's "-generic" entry,
// which claims no instruction feature at all.
#pragma once
#include <string_view>

#include "dcukern/registry/target.hpp"

namespace dcukern::capabilities {

using F = Feature;

inline constexpr TargetInfo kTargets[] = {
    // ---- AMD CDNA / GCN (wave64) ----
    {"gfx906", Vendor::amd, "AMD MI50/MI60, Radeon VII; Hygon DCU Z100/Z100L", 64, 65536,
     features(F::dot2_f32_f16, F::dot4_i32_i8), 0, true, Confidence::high,
     "LLVM AMDGPU (dot1/dot2-insts); v_dot2c rejected by the assembler here; Z100 mapping: PaddlePaddle cmake"},
    {"gfx908", Vendor::amd, "AMD MI100", 64, 65536,
     features(F::dot2_f32_f16, F::dot2c_f32_f16, F::dot4_i32_i8, F::mfma), 0, true, Confidence::high,
     "LLVM AMDGPU (dot5-insts, mfma); dot2c compiled and disassembled here"},
    {"gfx90a", Vendor::amd, "AMD MI210/MI250/MI250X", 64, 65536,
     features(F::dot2_f32_f16, F::dot2c_f32_f16, F::dot4_i32_i8, F::pk_fma_f32, F::mfma), 0, true,
     Confidence::high, "LLVM AMDGPU; dot2c compiled and disassembled here"},
    {"gfx940", Vendor::amd, "AMD MI300 (early silicon)", 64, 65536,
     features(F::dot2_f32_f16, F::dot2c_f32_f16, F::dot4_i32_i8, F::pk_fma_f32, F::mfma, F::fp8_fnuz), 0,
     true, Confidence::high, "LLVM AMDGPU; dot2c compiled and disassembled here"},
    {"gfx942", Vendor::amd, "AMD MI300X/MI300A/MI325X", 64, 65536,
     features(F::dot2_f32_f16, F::dot2c_f32_f16, F::dot4_i32_i8, F::pk_fma_f32, F::mfma, F::fp8_fnuz), 0,
     false, Confidence::high, "LLVM AMDGPU (same ISA features as gfx940); clang 15 cannot target it"},
    {"gfx950", Vendor::amd, "AMD MI350/MI355", 64, 163840,
     features(F::dot2_f32_f16, F::dot2c_f32_f16, F::dot4_i32_i8, F::dot2_f32_bf16, F::pk_fma_f32, F::mfma,
              F::fp8_ocp),
     0, false, Confidence::high, "LLVM AMDGPU; clang 15 cannot target it"},
    // ---- AMD RDNA (wave32 by default) ----
    {"gfx1030", Vendor::amd, "AMD RX 6800/6900, Radeon PRO W6800", 32, 65536,
     features(F::dot2_f32_f16, F::dot2c_f32_f16), features(F::dot4_i32_i8), true, Confidence::high,
     "LLVM AMDGPU; fdot2 and dot2c compiled and disassembled here"},
    {"gfx1100", Vendor::amd, "AMD RX 7900, Radeon PRO W7900", 32, 65536, features(F::dot2_f32_f16),
     features(F::dot2c_f32_f16), true, Confidence::high,
     "LLVM AMDGPU; fdot2 compiles to v_dot2acc_f32_f16 here (dot2c renamed; the dot2c row's asm does not "
     "cover it); Debian's device libraries predate gfx11: the build generates their one target file; "
     "v_mad_u64_u32 / v_mad_i64_i32 must not overlap a source (hardware bug; the ISA audit checks)"},
    // ---- Hygon DCU (wave64; only Hygon's DTK compiler targets these) ----
    {"gfx926", Vendor::hygon, "Hygon DCU K100", 64, 65536, 0, features(F::dot2_f32_f16, F::dot2c_f32_f16),
     false, Confidence::medium, "public forks; matrix units are f32/f64 MMAC only; dot2 support: sources disagree"},
    {"gfx928", Vendor::hygon, "Hygon DCU K100_AI", 64, 65536, 0,
     features(F::dot2_f32_f16, F::dot2c_f32_f16, F::hygon_mmac), false, Confidence::medium,
     "public forks (one source says gfx926); dot2 support: sources disagree"},
    {"gfx936", Vendor::hygon, "Hygon DCU BW1000/BW200/BW500SM", 64, 65536, 0,
     features(F::dot2_f32_f16, F::dot2c_f32_f16, F::hygon_mmac), false, Confidence::medium,
     "public forks; dot2 support: sources disagree"},
    {"gfx938", Vendor::hygon, "Hygon DCU BW1100", 64, 65536, 0,
     features(F::dot2_f32_f16, F::dot2c_f32_f16, F::hygon_mmac, F::fp8_ocp), false, Confidence::low,
     "one public source"},
    // ---- NVIDIA (warp 32) ----
    {"sm_80", Vendor::nvidia, "NVIDIA A100/A800", 32, 49152, features(F::nv_mma_f16), 0, true, Confidence::high,
     "PTX ISA: mma.sync m16n8k16 from sm_80"},
    {"sm_86", Vendor::nvidia, "NVIDIA RTX 30xx, A10/A40", 32, 49152, features(F::nv_mma_f16), 0, true,
     Confidence::high, "PTX ISA"},
    {"sm_89", Vendor::nvidia, "NVIDIA RTX 40xx, L4/L40", 32, 49152, features(F::nv_mma_f16, F::fp8_ocp), 0,
     true, Confidence::high, "PTX ISA"},
    {"sm_90", Vendor::nvidia, "NVIDIA H100/H200/H800/H20", 32, 49152, features(F::nv_mma_f16, F::fp8_ocp), 0,
     true, Confidence::high, "PTX ISA; device tests and benchmarks run on an H200"},
    // ---- family fallbacks for names not listed above: no instruction features at all ----
    {"gfx9-generic", Vendor::amd, "unlisted gfx9 target", 64, 65536, 0, 0, false, Confidence::low,
     "family default"},
    {"hygon-generic", Vendor::hygon, "unlisted Hygon gfx92x/gfx93x target", 64, 65536, 0, 0, false,
     Confidence::low, "family default"},
    {"gfx10-generic", Vendor::amd, "unlisted RDNA1/2 target", 32, 65536, 0, 0, false, Confidence::low,
     "family default"},
    {"gfx11-generic", Vendor::amd, "unlisted RDNA3 target", 32, 65536, 0, 0, false, Confidence::low,
     "family default"},
    {"gfx12-generic", Vendor::amd, "unlisted RDNA4 target", 32, 65536, 0, 0, false, Confidence::low,
     "family default"},
    {"nvidia-generic", Vendor::nvidia, "unlisted NVIDIA target", 32, 49152, 0, 0, false, Confidence::low,
     "family default"},
};

constexpr bool names_equal(const char* a, const char* b) {
  while (*a && *a == *b) ++a, ++b;
  return *a == *b;
}

// Exact table entry for a canonical name, or nullptr.
constexpr const TargetInfo* find_target(const char* canonical_name) {
  for (const auto& t : kTargets)
    if (names_equal(t.name, canonical_name)) return &t;
  return nullptr;
}

// The family entry an unlisted canonical name falls back to.
inline const TargetInfo* family_target(std::string_view name) {
  auto starts = [&](std::string_view p) { return name.substr(0, p.size()) == p; };
  if (starts("sm_")) return find_target("nvidia-generic");
  if (starts("gfx92") || starts("gfx93")) return find_target("hygon-generic");
  if (starts("gfx9") && name.size() == 6) return find_target("gfx9-generic");
  if (starts("gfx10")) return find_target("gfx10-generic");
  if (starts("gfx11")) return find_target("gfx11-generic");
  if (starts("gfx12")) return find_target("gfx12-generic");
  if (starts("gfx")) return find_target("gfx9-generic");  // older GCN: wave64, nothing claimed
  return nullptr;
}

}  // namespace dcukern::capabilities
