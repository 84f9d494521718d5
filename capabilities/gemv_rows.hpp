// GEMV / skinny GEMM capability rows. Selection order: forced, tuned for the detected target (from
// gemv_tuned_rows.inc, derived from benchmark evidence by bench/derive_tuned_rows.py), then the general
// rows of kGemvRows, top to bottom. The generic row accepts every valid call, so a valid call always runs.
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

constexpr const char* kDeviceEvidence =
    "tests/device/gemv_device_test.cu (sm_90, H200); capabilities/evidence/gemv-sm_90.json";
constexpr const char* kAmdEvidence =
    "AMD: compile + ISA audit only (tools/isa_audit); same kernel body device-tested on sm_90 with the "
    "portable dot policy";

// ---- general rows ----
constexpr GemvRow kRowwiseDot2c{
    "gemv.rowwise.dot2c", "N=1: one wave per W row, fp16 dot products with v_dot2c_f32_f16",
    features(Feature::dot2c_f32_f16), nullptr, vectorised(kF16, 1, 1), {}, kAmdEvidence, "gemv.rowwise.fdot2",
    GemvKernel::rowwise_dot2c, "gemv_rowwise_kernel<dcukern::gemv_detail::Dot2cDot"};
constexpr GemvRow kRowwiseFdot2{
    "gemv.rowwise.fdot2", "N=1: one wave per W row, fp16 dot products with v_dot2_f32_f16",
    features(Feature::dot2_f32_f16), nullptr, vectorised(kF16, 1, 1), {}, kAmdEvidence, "gemv.rowwise",
    GemvKernel::rowwise_fdot2, "gemv_rowwise_kernel<dcukern::gemv_detail::Fdot2Dot"};
constexpr GemvRow kRowwise{
    "gemv.rowwise", "N=1: one wave per W row, 16-byte streaming loads, wave reduction", 0, nullptr,
    vectorised(kHalfs, 1, 1), {}, kDeviceEvidence, "gemv.generic", GemvKernel::rowwise,
    "gemv_rowwise_kernel<dcukern::gemv_detail::FmaDot"};
constexpr GemvRow kMma{
    "gemv.mma", "N<=16: W tiles as the A operand of mma.sync m16n8k16, split-K across a block's 4 warps",
    features(Feature::nv_mma_f16), nullptr, vectorised(kHalfs, 1, 16), {}, kDeviceEvidence, "gemv.splitk",
    GemvKernel::mma, "gemv_mma_kernel<"};
constexpr GemvRow kSplitkDot2c{
    "gemv.splitk.dot2c", "N<=16: x staged in LDS, persistent blocks over M, v_dot2c_f32_f16",
    features(Feature::dot2c_f32_f16), nullptr, vectorised(kF16, 1, 16), {}, kAmdEvidence, "gemv.splitk.fdot2",
    GemvKernel::splitk_dot2c, "gemv_splitk_kernel<dcukern::gemv_detail::Dot2cDot"};
constexpr GemvRow kSplitkFdot2{
    "gemv.splitk.fdot2", "N<=16: x staged in LDS, persistent blocks over M, v_dot2_f32_f16",
    features(Feature::dot2_f32_f16), nullptr, vectorised(kF16, 1, 16), {}, kAmdEvidence, "gemv.splitk",
    GemvKernel::splitk_fdot2, "gemv_splitk_kernel<dcukern::gemv_detail::Fdot2Dot"};
constexpr GemvRow kSplitk{
    "gemv.splitk", "N<=16: x staged in LDS, persistent blocks over M, fp32 FMA", 0, nullptr,
    vectorised(kHalfs, 1, 16), {}, kDeviceEvidence, "gemv.generic", GemvKernel::splitk,
    "gemv_splitk_kernel<dcukern::gemv_detail::FmaDot"};
constexpr GemvRow kGeneric{
    "gemv.generic", "any valid call: scalar loads, one wave per W row", 0, nullptr, GemvContract{kHalfs}, {},
    kDeviceEvidence, "none (accepts every valid call)", GemvKernel::generic, "gemv_generic_kernel<"};

// A tuned row: `base`'s kernel on one target for one dtype, N, M and K, without bias (as measured).
// Its id is "<base id>@<target>:<dtype>:n<N>:m<M>:k<K>"; it falls back to `base`.
constexpr GemvRow tuned(const GemvRow& base, const char* id, const char* target, DType dt, int n, int64_t m,
                        int64_t k, const char* evidence) {
  GemvContract c = base.contract;
  c.dtypes = dtypes(dt);
  c.n_min = c.n_max = n;
  c.m_exact = m;
  c.k_exact = k;
  c.bias_rule = -1;
  return GemvRow{id, base.summary, base.isa_needs, target, c, base.semantics, evidence, base.id, base.kernel,
                 base.kernel_symbol};
}

}  // namespace gemv_rows

inline constexpr GemvRow kGemvRows[] = {
#include "capabilities/gemv_tuned_rows.inc"
    gemv_rows::kRowwiseDot2c, gemv_rows::kRowwiseFdot2, gemv_rows::kRowwise, gemv_rows::kMma,
    gemv_rows::kSplitkDot2c,  gemv_rows::kSplitkFdot2,  gemv_rows::kSplitk,  gemv_rows::kGeneric,
};

}  // namespace dcukern::capabilities
