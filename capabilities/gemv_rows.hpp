// GEMV / skinny GEMM capability rows. Selection order: forced, tuned for the detected target (from
// gemv_tuned_rows.inc, derived from benchmark evidence), then the general rows below, top to bottom.
// The generic row accepts every valid call, so a valid call always runs.
#pragma once
#include "dcukern/core/dtype.hpp"
#include "dcukern/gemv/kernel_id.hpp"
#include "dcukern/gemv/params.hpp"
#include "dcukern/registry/row.hpp"

namespace dcukern::capabilities {

using GemvRow = CapabilityRow<GemvContract, GemvKernel>;

namespace gemv_rows {
constexpr DTypeMask kHalfs = dtypes(DType::f16, DType::bf16);
constexpr DTypeMask kF16 = dtypes(DType::f16);
// Vectorised rows read 16 bytes (8 elements) per load.
constexpr GemvContract vectorised(DTypeMask dt, int n_min, int n_max) {
  GemvContract c{};
  c.dtypes = dt;
  c.n_min = n_min;
  c.n_max = n_max;
  c.k_multiple = 8;
  c.align_bytes = 16;
  return c;
}
// A tuned row: the contract of `base`, pinned to one dtype, N, M, K and bias choice.
constexpr GemvContract tuned(DType dt, int n, int64_t m, int64_t k, bool bias) {
  GemvContract c = vectorised(dtypes(dt), n, n);
  c.m_exact = m;
  c.k_exact = k;
  c.bias_rule = bias ? 1 : -1;
  return c;
}
constexpr const char* kDeviceEvidence =
    "tests/device/gemv_device_test.cu (sm_90, H200); capabilities/evidence/gemv-sm_90.json";
constexpr const char* kAmdEvidence =
    "AMD: compile + ISA audit only (tools/isa_audit); same kernel body device-tested on sm_90 with the "
    "portable dot policy";
}  // namespace gemv_rows

inline constexpr GemvRow kGemvRows[] = {
#include "capabilities/gemv_tuned_rows.inc"
    // ---- general rows ----
    {"gemv.rowwise.dot2c", "N=1: one wave per W row, fp16 dot products with v_dot2c_f32_f16",
     features(Feature::dot2c_f32_f16), nullptr, gemv_rows::vectorised(gemv_rows::kF16, 1, 1), {},
     gemv_rows::kAmdEvidence, "gemv.rowwise.fdot2", GemvKernel::rowwise_dot2c,
     "gemv_rowwise_kernel<dcukern::gemv_detail::Dot2cDot"},
    {"gemv.rowwise.fdot2", "N=1: one wave per W row, fp16 dot products with v_dot2_f32_f16",
     features(Feature::dot2_f32_f16), nullptr, gemv_rows::vectorised(gemv_rows::kF16, 1, 1), {},
     gemv_rows::kAmdEvidence, "gemv.rowwise", GemvKernel::rowwise_fdot2,
     "gemv_rowwise_kernel<dcukern::gemv_detail::Fdot2Dot"},
    {"gemv.rowwise", "N=1: one wave per W row, 16-byte streaming loads, wave reduction", 0, nullptr,
     gemv_rows::vectorised(gemv_rows::kHalfs, 1, 1), {}, gemv_rows::kDeviceEvidence, "gemv.generic",
     GemvKernel::rowwise, "gemv_rowwise_kernel<dcukern::gemv_detail::FmaDot"},
    {"gemv.mma", "N<=16: W tiles as the A operand of mma.sync m16n8k16, split-K across 8 warps",
     features(Feature::nv_mma_f16), nullptr, gemv_rows::vectorised(gemv_rows::kHalfs, 1, 16), {},
     gemv_rows::kDeviceEvidence, "gemv.splitk", GemvKernel::mma, "gemv_mma_kernel<"},
    {"gemv.splitk.dot2c", "N<=16: x staged in LDS, persistent blocks over M, v_dot2c_f32_f16",
     features(Feature::dot2c_f32_f16), nullptr, gemv_rows::vectorised(gemv_rows::kF16, 1, 16), {},
     gemv_rows::kAmdEvidence, "gemv.splitk.fdot2", GemvKernel::splitk_dot2c,
     "gemv_splitk_kernel<dcukern::gemv_detail::Dot2cDot"},
    {"gemv.splitk.fdot2", "N<=16: x staged in LDS, persistent blocks over M, v_dot2_f32_f16",
     features(Feature::dot2_f32_f16), nullptr, gemv_rows::vectorised(gemv_rows::kF16, 1, 16), {},
     gemv_rows::kAmdEvidence, "gemv.splitk", GemvKernel::splitk_fdot2,
     "gemv_splitk_kernel<dcukern::gemv_detail::Fdot2Dot"},
    {"gemv.splitk", "N<=16: x staged in LDS, persistent blocks over M, fp32 FMA", 0, nullptr,
     gemv_rows::vectorised(gemv_rows::kHalfs, 1, 16), {}, gemv_rows::kDeviceEvidence, "gemv.generic",
     GemvKernel::splitk, "gemv_splitk_kernel<dcukern::gemv_detail::FmaDot"},
    {"gemv.generic", "any valid call: scalar loads, one wave per W row", 0, nullptr,
     GemvContract{gemv_rows::kHalfs}, {}, gemv_rows::kDeviceEvidence, "none (accepts every valid call)",
     GemvKernel::generic, "gemv_generic_kernel<"},
};

}  // namespace dcukern::capabilities
