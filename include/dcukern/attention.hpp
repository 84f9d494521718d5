// Public paged-KV decode attention API. Include with hipcc or nvcc. Host-only code (validation, the
// split-KV plan, selection, explain, the capability tables) is in dcukern/attention/select.hpp; the
// double-precision host reference in dcukern/ref/attention.hpp; semantics in dcukern/attention/params.hpp.
//
//   size_t bytes = dcukern::attention_workspace_bytes(p);              // split-KV partials (fixed bound)
//   dcukern::Status s = dcukern::attention(p, workspace, bytes, stream);  // row for the current device
//
// No allocation, no host synchronisation: capturable in a HIP/CUDA graph (the plan reads host values
// only). On any error nothing is launched and o / lse are untouched.
// Rows (capabilities/attention_rows.hpp): on sm_90 the pipelined tensor-core row (.smem_pipeline, tuned
// for it), the other tensor-core rows on NVIDIA sm_80+, the grouped rows on every other target, the
// per-row rows for calls outside their contracts. Speed on the H200: capabilities/evidence/attention-sm_90.json.
#pragma once
#include "dcukern/attention/launch.hpp"

namespace dcukern {

struct AttentionOptions : RowOptions {
  AttentionPlanOptions plan;  // split-KV plan: fixed chunk size, forced split
};

// Workspace for a split-KV row on the current device (0 when the call is invalid or there is no device).
// Depends only on host values: the same for every replay of a graph.
inline size_t attention_workspace_bytes(const AttentionParams& p, const AttentionPlanOptions& plan = {}) {
  const DeviceContext* ctx = nullptr;
  if (!current_device_context(&ctx).ok()) return 0;
  return attention_workspace_bytes(p, ctx->facts.compute_units, plan);
}

// How a call runs once its row is chosen: the split plan and the pipelined row's ring depth. attention()
// launches exactly this; attention_call_plan() tells callers (and the tests) what a call will do.
struct AttentionCallPlan {
  AttentionPlan plan;         // rows without a workspace: one chunk
  bool split = false;         // partials and a merge: more than one chunk, or a fixed chunk size
  bool shallow_ring = false;  // the pipelined row's 3-stage ring (attention_shallow_ring, attention_wide_shallow_ring)
};

namespace attn_detail {
inline Status call_plan(const capabilities::AttentionRow& row, const AttentionCall& call, const AttentionParams& p,
                        const DeviceContext& ctx, const AttentionPlanOptions& opt, AttentionCallPlan* out) {
  const int max_tile = attention_kernel_max_tile(row.kernel, p.head_dim);
  const int64_t units = int64_t(p.batch) * p.num_kv_heads * attention_q_tiles(call, max_tile);  // blocks a chunk
  const bool fp8_kv = p.kv.dtype == DType::fp8_e4m3;
  const int cus = ctx.facts.compute_units;
  AttentionCallPlan cp;
  cp.plan.rows = int64_t(p.batch) * p.q_tokens * p.num_q_heads;
  cp.shallow_ring = attention_shallow_ring(row.kernel, fp8_kv, p.head_dim, units, cus);
  if (row.contract.needs_workspace) {
    // The split plan for a ring depth: the row's block target, or the kernel's residency where it fills one wave.
    auto plan_for = [&](bool shallow_ring, AttentionPlan* plan) {
      AttentionBlockTarget target = attention_kernel_block_target(row.kernel, fp8_kv, p.head_dim);
      if (target.one_wave)
        if (const int resident = attention_resident_blocks(row.kernel, p.kv.dtype, p.head_dim, shallow_ring))
          target.blocks_per_cu = std::min(resident, kAttnBlocksPerCu);
      AttentionPlanOptions plan_opt = opt;
      if (plan_opt.blocks_per_cu == 0) plan_opt.blocks_per_cu = target.blocks_per_cu;
      return plan_attention(call, cus, plan_opt, plan, max_tile, target.one_wave);
    };
    if (Status s = plan_for(cp.shallow_ring, &cp.plan); !s.ok()) return s;
    // Above head_dim 128 the ring depth follows from the keys a block (attention_wide_shallow_ring), where
    // the two depths' sums differ in rounding: with a fixed chunk size, from the chunk size alone, so that a
    // sequence's bits still do not depend on the batch.
    const int64_t keys_per_block = opt.fixed_chunk_size > 0
                                       ? opt.fixed_chunk_size
                                       : std::min<int64_t>(cp.plan.chunk_size, std::max<int64_t>(call.max_context, 1));
    if (attention_wide_shallow_ring(row.kernel, fp8_kv, p.head_dim, keys_per_block)) {
      cp.shallow_ring = true;
      if (Status s = plan_for(true, &cp.plan); !s.ok()) return s;
    }
    // One chunk and no fixed chunk size: the row's kernel finishes every query row itself (no merge).
    // A fixed chunk size always takes the merge, so a sequence's bits never depend on the batch.
    cp.split = cp.plan.num_chunks > 1 || opt.fixed_chunk_size > 0;
  }
  *out = cp;
  return Status::success();
}
}  // namespace attn_detail

// What attention(p, workspace, ..., opt) would run on the current device: the row's split plan and ring depth
// (`with_workspace`: whether the call passes one, as row selection depends on it). Errors as attention()'s.
inline Status attention_call_plan(const AttentionParams& p, bool with_workspace, AttentionCallPlan* out,
                                  const AttentionOptions& opt = {}) {
  const DeviceContext* ctx = nullptr;
  if (Status s = current_device_context(&ctx); !s.ok()) return s;
  const capabilities::AttentionRow* row = nullptr;
  AttentionCall call;
  if (Status s = select_attention(p, with_workspace, *ctx->target.info, opt.row, &row, &call); !s.ok()) return s;
  return attn_detail::call_plan(*row, call, p, *ctx, opt.plan, out);
}

inline Status attention(const AttentionParams& p, void* workspace, size_t workspace_bytes, stream_t stream,
                        const AttentionOptions& opt = {}) {
  const DeviceContext* ctx = nullptr;
  if (Status s = current_device_context(&ctx); !s.ok()) return s;
  const capabilities::AttentionRow* row = nullptr;
  AttentionCall call;
  Status s = select_attention(p, workspace != nullptr, *ctx->target.info, opt.row, &row, &call, opt.explain);
  if (!s.ok()) return s;
  AttentionCallPlan cp;
  if (s = attn_detail::call_plan(*row, call, p, *ctx, opt.plan, &cp); !s.ok()) return s;
  attn_detail::AttnArgs a = attn_detail::make_args(p);
  const int max_tile = attention_kernel_max_tile(row->kernel, p.head_dim);
  a.q_tiles = attention_q_tiles(call, max_tile);
  const int64_t rows = cp.plan.rows;
  if (row->contract.needs_workspace) {
    const size_t need = attention_plan_workspace_bytes(cp.plan, p.head_dim);
    if (workspace_bytes < need)
      return Status::invalid("attention: workspace of " + std::to_string(workspace_bytes) + " bytes, the plan needs " +
                             std::to_string(need));
    if (reinterpret_cast<uintptr_t>(workspace) % 4) return Status::invalid("attention: workspace not 4-byte aligned");
    if (cp.split) {
      a.num_chunks = cp.plan.num_chunks;
      a.chunk_size = cp.plan.chunk_size;
      a.part_o = static_cast<float*>(workspace);
      a.part_lse = a.part_o + static_cast<size_t>(rows) * cp.plan.num_chunks * p.head_dim;
    }
  }
  attn_detail::LaunchSetup setup;
  setup.stream = stream, setup.shallow = cp.shallow_ring;
  setup.dependent = ctx->facts.dependent_launch, setup.device = ctx->device;
  setup.sliced_merge =
      attention_sliced_merge(rows, a.num_chunks, ctx->facts.compute_units, ctx->target.info->wave_size);
  a.merge_starts_next = attention_merge_starts_next(attn_detail::merge_blocks(rows, p.head_dim, setup.sliced_merge),
                                                    ctx->facts.compute_units);
  s = attn_detail::launch(row->kernel, attention_q_tile(call, max_tile), p.q.dtype, p.kv.dtype, a, rows, setup);
  if (!s.ok()) return s;
  return runtime_status(runtime_last_error(), "attention launch");
}

}  // namespace dcukern
