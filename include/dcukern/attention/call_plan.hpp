// How a call runs once its row is chosen, host side: the split plan (plan.hpp) sized for the kernel the
// launch takes, and the pipelined row's ring depth (attention_shallow_ring, attention_wide_shallow_ring).
// attention() launches exactly this; attention_call_plan() (attention.hpp) reports it. Graph-safe like the
// plan: host values only. `resident(shallow)`: the kernel's resident blocks per compute unit for either ring
// depth (0: unknown; attention.hpp asks the runtime), which one-wave plans take as their block target.
#pragma once
#include <algorithm>
#include <cstdint>

#include "dcukern/attention/kernel_id.hpp"
#include "dcukern/attention/plan.hpp"

namespace dcukern {

struct AttentionCallPlan {
  AttentionPlan plan;         // rows without a workspace: one chunk
  bool split = false;         // partials and a merge: more than one chunk, or a fixed chunk size
  bool shallow_ring = false;  // the pipelined row's 3-stage ring (attention_shallow_ring, attention_wide_shallow_ring)
};

template <class Resident>
Status plan_attention_call(AttentionKernel kernel, bool needs_workspace, const AttentionCall& call, int compute_units,
                           const AttentionPlanOptions& opt, Resident resident, AttentionCallPlan* out) {
  const int max_tile = attention_kernel_max_tile(kernel, call.head_dim);
  const int64_t units = int64_t(call.batch) * call.num_kv_heads * attention_q_tiles(call, max_tile);  // blocks a chunk
  const bool fp8_kv = call.kv_dtype == DType::fp8_e4m3;
  AttentionCallPlan cp;
  cp.plan.rows = int64_t(call.batch) * call.q_tokens * call.num_q_heads;
  cp.shallow_ring = attention_shallow_ring(kernel, fp8_kv, call.head_dim, units, compute_units);
  if (needs_workspace) {
    // The split plan for a ring depth: the row's block target, or the kernel's residency where it fills one wave.
    auto plan_for = [&](bool shallow_ring, AttentionPlan* plan) {
      AttentionBlockTarget target = attention_kernel_block_target(kernel, fp8_kv, call.head_dim);
      if (target.one_wave)
        if (const int blocks = resident(shallow_ring)) target.blocks_per_cu = std::min(blocks, kAttnBlocksPerCu);
      AttentionPlanOptions plan_opt = opt;
      if (plan_opt.blocks_per_cu == 0) plan_opt.blocks_per_cu = target.blocks_per_cu;
      // The row's own one-wave target of one block a CU: whole 16-key groups (kAttnFineChunkGranule).
      const bool fine = opt.blocks_per_cu == 0 && target.one_wave && target.blocks_per_cu == 1;
      return plan_attention(call, compute_units, plan_opt, plan, max_tile, target.one_wave,
                            fine ? kAttnFineChunkGranule : kAttnChunkGranule);
    };
    if (Status s = plan_for(cp.shallow_ring, &cp.plan); !s.ok()) return s;
    // Above head_dim 128 the ring depth follows from the keys a block (attention_wide_shallow_ring), where
    // the two depths' sums differ in rounding: with a fixed chunk size, from the chunk size alone, so that a
    // sequence's bits still do not depend on the batch.
    const int64_t keys_per_block = opt.fixed_chunk_size > 0
                                       ? opt.fixed_chunk_size
                                       : std::min<int64_t>(cp.plan.chunk_size, std::max<int64_t>(call.max_context, 1));
    if (attention_wide_shallow_ring(kernel, fp8_kv, call.head_dim, keys_per_block)) {
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

}  // namespace dcukern
