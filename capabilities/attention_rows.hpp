// Paged-KV decode attention capability rows. Selection order: forced, tuned for the detected target
// (.smem_pipeline on sm_90: the fastest row in 118 of the 120 bench cases there at 44d1289), then the rows
// below, top to bottom: on NVIDIA sm_80+ the tensor-core rows, elsewhere the grouped rows, then the
// per-row rows, which accept every valid call.
//
// Evidence (kEvidence): every row passed tests/device/attention_device_test.cu on the H200 at 44d1289, 9f65660,
// 5efb943, aa01663, 8820378, e27175a, 091deab, 794956c, cb8d9ba, 0f69a9e and 7911277 (11 cases; compute-sanitizer
// memcheck clean; at e2856b0 and 3f69d98 the 6 cases whose names hold a comma did not run:
// capabilities/evidence/attention-sm_90-5efb943.json, device_tests); capabilities/evidence/attention-sm_90.json
// holds the benchmark of .smem_pipeline at 7911277 (attention-sm_90-0f69a9e.json, -ebf05e5.json, -794956c.json,
// -091deab.json, -e27175a.json, -8820378.json, -0bbd077.json, -5efb943.json, -3f69d98.json, -e2856b0.json and
// -9f65660.json: at those commits), attention-sm_90-44d1289.json that of the three split rows at 44d1289
// (attention-sm_90-a2a578e.json: the earlier run of the register-path rows). The rows but .smem_pipeline also
// passed dcukern-audit's smoke run there at a2a578e, .smem_pipeline (forced) at 090f016. AMD / Hygon: the portable
// rows compile for every target (ISA audit); none has run on that hardware.
#pragma once
#include "dcukern/attention/kernel_id.hpp"
#include "dcukern/attention/params.hpp"
#include "dcukern/core/dtype.hpp"
#include "dcukern/registry/row.hpp"

namespace dcukern::capabilities {

using AttentionRow = CapabilityRow<AttentionContract, AttentionKernel>;

namespace attention_rows {
constexpr DTypeMask kHalfs = dtypes(DType::f16, DType::bf16);
constexpr DTypeMask kKv = dtypes(DType::f16, DType::bf16, DType::fp8_e4m3);
constexpr const char* kEvidence =
    "tests/device/attention_device_test.cu (sm_90, H200, 44d1289, 9f65660, 5efb943, 8820378, e27175a, 091deab, "
    "794956c, cb8d9ba, 0f69a9e, 7911277, 4cb433f, 4033bc0, 57d97e6); "
    "capabilities/evidence/attention-sm_90.json, attention-sm_90-d5dc319.json; "
    "AMD / Hygon: compile only (portable HIP, no target instruction)";
constexpr AttentionContract any_call(bool workspace, bool vec8 = false) {
  AttentionContract c{};
  c.q_dtypes = kHalfs;
  c.kv_dtypes = kKv;
  c.needs_workspace = workspace;
  c.needs_vec8 = vec8;
  return c;
}
}  // namespace attention_rows

inline constexpr AttentionRow kAttentionRows[] = {
    {"attention.mma_split.smem_pipeline",
     "attention.mma_split whose K/V rows reach the fragments through a per-warp shared-memory ring that "
     "cp.async fills 2-3 groups ahead, so loads stay in flight during the math; the sector head map at "
     "f16/bf16 too, so its sums run in another order than attention.mma_split's. Its ring takes 96 KiB a "
     "block (192 KiB at f16/bf16 head_dim 256): sized for sm_90's shared memory, hence tuned for sm_90 only; "
     "split plans fill one wave of its resident blocks",
     features(Feature::nv_mma_f16), "sm_90", attention_rows::any_call(true, true), Semantics{true, true, false},
     attention_rows::kEvidence, "attention.mma_split", AttentionKernel::mma_split_pipeline, "attention_mma_kernel<"},
    {"attention.mma_split",
     "NVIDIA tensor cores (mma.sync): S = Q K^T and O^T += V^T P^T per 16 keys for the query rows sharing a "
     "KV head (up to 8), fragments filled by 16-byte loads; split-KV by the plan with an LSE merge (one "
     "chunk: no merge)",
     features(Feature::nv_mma_f16), nullptr, attention_rows::any_call(true, true), Semantics{true, true, false},
     attention_rows::kEvidence, "attention.grouped_split", AttentionKernel::mma_split, "attention_mma_kernel<"},
    {"attention.mma",
     "NVIDIA tensor cores (mma.sync) for the query rows sharing a KV head, one block per (query tile, KV "
     "head, sequence), no workspace",
     features(Feature::nv_mma_f16), nullptr, attention_rows::any_call(false, true), Semantics{true, false, false},
     attention_rows::kEvidence, "attention.grouped", AttentionKernel::mma, "attention_mma_kernel<"},
    {"attention.grouped_split",
     "the query rows sharing a KV head (up to 8: GQA group x tokens) read each K/V vector once, 16-byte "
     "loads, online softmax per key slot; split-KV by the plan with an LSE merge (one chunk: no merge)",
     0, nullptr, attention_rows::any_call(true, true), Semantics{true, true, false}, attention_rows::kEvidence,
     "attention.grouped, then attention.split_kv", AttentionKernel::grouped_split, "attention_grouped_kernel<"},
    {"attention.grouped",
     "the query rows sharing a KV head read each K/V vector once, 16-byte loads, one block per (query "
     "tile, KV head, sequence), no workspace",
     0, nullptr, attention_rows::any_call(false, true), Semantics{true, false, false}, attention_rows::kEvidence,
     "attention.row", AttentionKernel::grouped, "attention_grouped_kernel<"},
    {"attention.split_kv",
     "flash-decoding: blocks per (query row, KV chunk) write fp32 partials, an LSE merge kernel combines "
     "them; any D<=256, page size, GQA ratio",
     0, nullptr, attention_rows::any_call(true), Semantics{true, true, false}, attention_rows::kEvidence,
     "attention.row", AttentionKernel::split_kv, "attention_merge_kernel<"},
    {"attention.row",
     "one block per query row over all its keys, warps split the keys, online softmax; any D<=256, page "
     "size, GQA ratio",
     0, nullptr, attention_rows::any_call(false), Semantics{true, false, false}, attention_rows::kEvidence,
     "none (accepts every valid call)", AttentionKernel::row, "attention_row_kernel<"},
};

}  // namespace dcukern::capabilities
