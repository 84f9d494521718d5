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

inline Status attention(const AttentionParams& p, void* workspace, size_t workspace_bytes, stream_t stream,
                        const AttentionOptions& opt = {}) {
  const DeviceContext* ctx = nullptr;
  if (Status s = current_device_context(&ctx); !s.ok()) return s;
  const capabilities::AttentionRow* row = nullptr;
  AttentionCall call;
  Status s = select_attention(p, workspace != nullptr, *ctx->target.info, opt.row, &row, &call, opt.explain);
  if (!s.ok()) return s;
  attn_detail::AttnArgs a = attn_detail::make_args(p);
  const int max_tile = attention_kernel_max_tile(row->kernel, p.head_dim);
  a.q_tiles = attention_q_tiles(call, max_tile);
  const int64_t rows = int64_t(p.batch) * p.q_tokens * p.num_q_heads;
  const bool fp8_kv = p.kv.dtype == DType::fp8_e4m3;
  const bool shallow = attention_shallow_ring(row->kernel, fp8_kv, p.head_dim,
                                              int64_t(p.batch) * p.num_kv_heads * a.q_tiles, ctx->facts.compute_units);
  if (row->contract.needs_workspace) {
    AttentionBlockTarget target = attention_kernel_block_target(row->kernel, fp8_kv, p.head_dim);
    if (target.one_wave)
      if (const int resident = attn_detail::attention_resident_blocks(row->kernel, p.kv.dtype, p.head_dim, shallow))
        target.blocks_per_cu = std::min(resident, kAttnBlocksPerCu);
    AttentionPlanOptions plan_opt = opt.plan;
    if (plan_opt.blocks_per_cu == 0) plan_opt.blocks_per_cu = target.blocks_per_cu;
    AttentionPlan plan;
    if (s = plan_attention(call, ctx->facts.compute_units, plan_opt, &plan, max_tile, target.one_wave); !s.ok())
      return s;
    const size_t need = attention_plan_workspace_bytes(plan, p.head_dim);
    if (workspace_bytes < need)
      return Status::invalid("attention: workspace of " + std::to_string(workspace_bytes) + " bytes, the plan needs " +
                             std::to_string(need));
    if (reinterpret_cast<uintptr_t>(workspace) % 4) return Status::invalid("attention: workspace not 4-byte aligned");
    // One chunk and no fixed chunk size: the row's kernel finishes every query row itself (no merge).
    // A fixed chunk size always takes the merge, so a sequence's bits never depend on the batch.
    if (plan.num_chunks > 1 || opt.plan.fixed_chunk_size > 0) {
      a.num_chunks = plan.num_chunks;
      a.chunk_size = plan.chunk_size;
      a.part_o = static_cast<float*>(workspace);
      a.part_lse = a.part_o + static_cast<size_t>(rows) * plan.num_chunks * p.head_dim;
    }
  }
  attn_detail::LaunchSetup setup;
  setup.stream = stream, setup.shallow = shallow;
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
