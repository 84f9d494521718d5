// Public paged-KV decode attention API. Include with hipcc or nvcc. Host-only code (validation, the
// split-KV plan, selection, explain, the capability tables) is in dcukern/attention/select.hpp; the
// double-precision host reference in dcukern/ref/attention.hpp; semantics in dcukern/attention/params.hpp.
//
//   size_t bytes = dcukern::attention_workspace_bytes(p);              // split-KV partials (fixed bound)
//   dcukern::Status s = dcukern::attention(p, workspace, bytes, stream);  // row for the current device
//
// No device allocation, no host synchronisation: capturable in a HIP/CUDA graph (the plan reads host
// values only; a kernel instance's first launch asks the runtime for its attributes once: README, "Using
// it"). A rejected call (validation, plan, workspace) launches nothing and leaves o / lse untouched; a
// launch the runtime refuses leaves them untouched too, but may leave the workspace's partials written.
// Debug mode: attention_check_tables (attention/table_check.hpp) checks context_lens and block_table
// against the pool on the device and reports the first bad entry.
// Rows (capabilities/attention_rows.hpp): on sm_90 the pipelined tensor-core row (.smem_pipeline, tuned
// for it), the other tensor-core rows on NVIDIA sm_80+, the grouped rows on every other target, the
// per-row rows for calls outside their contracts. Speed on the H200: capabilities/evidence/attention-sm_90.json.
#pragma once
#include "dcukern/attention/call_plan.hpp"
#include "dcukern/attention/launch.hpp"
#include "dcukern/attention/table_check.hpp"

namespace dcukern {

// Workspace for a split-KV row on the current device (0 when the call is invalid or there is no device).
// Depends only on host values: the same for every replay of a graph.
inline size_t attention_workspace_bytes(const AttentionParams& p, const AttentionPlanOptions& plan = {}) {
  const DeviceContext* ctx = nullptr;
  if (!current_device_context(&ctx).ok()) return 0;
  return attention_workspace_bytes(p, ctx->facts.compute_units, plan);
}

namespace attn_detail {
// The call's plan on device `ctx` for row `row` (call_plan.hpp), with the runtime's residency of its kernels.
inline Status call_plan(const capabilities::AttentionRow& row, const AttentionCall& call, const DeviceContext& ctx,
                        const AttentionPlanOptions& opt, AttentionCallPlan* out) {
  auto resident = [&](bool shallow) {
    return attention_resident_blocks(row.kernel, call.kv_dtype, call.head_dim, shallow, ctx.device);
  };
  return plan_attention_call(row.kernel, row.contract.needs_workspace, call, ctx.facts.compute_units, opt, resident,
                             out);
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
  return attn_detail::call_plan(*row, call, *ctx, opt.plan, out);
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
  if (s = attn_detail::call_plan(*row, call, *ctx, opt.plan, &cp); !s.ok()) return s;
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
    if (const char* v = first_overlapping(strided_span(workspace, 1, int64_t(need)), attention_views(p)))
      return Status::invalid(std::string("attention: workspace overlaps ") + v);
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
  return attn_detail::launch(row->kernel, attention_q_tile(call, max_tile), p.q.dtype, p.kv.dtype, a, rows, setup);
}

}  // namespace dcukern
