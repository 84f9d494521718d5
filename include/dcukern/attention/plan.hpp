// Split-KV (flash-decoding) plan, host side: how many chunks each query row's keys are cut into, and the
// workspace that holds the partials. Graph-safe: the plan reads only host values (B, T, Hq, Hkv, the
// host-known context bound and the device's compute-unit count), never context_lens, so the same plan and
// the same workspace size hold for every replay of a captured graph. The chunk count is sized for the
// grouped kernel's grid (B x Hkv x query tiles blocks per chunk); the per-row kernel uses the same plan.
//
// Chunk c of a query row covers absolute key positions [c * chunk_size, (c + 1) * chunk_size), the last
// chunk of the grid everything after it; a chunk with no key of the row writes lse = -inf and is skipped
// by the merge. With fixed_chunk_size set, a sequence's partition and the merge order depend only on its
// own context and the chunk size, so its output has the same bits whatever else is in the batch.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "dcukern/attention/params.hpp"

namespace dcukern {

struct AttentionPlanOptions {
  int64_t fixed_chunk_size = 0;  // > 0: chunks of exactly this many positions (batch-invariant bits)
  bool force_split = false;      // split even where there are enough query rows to fill the device
  int blocks_per_cu = 0;         // automatic plans: blocks aimed at per compute unit (0: the row's
                                 // default, attention_kernel_block_target)
};

struct AttentionPlan {
  int64_t chunk_size = 0;  // positions per chunk
  int num_chunks = 1;      // grid chunks per query row
  int64_t rows = 0;        // B * T * Hq
};

constexpr int64_t kAttnMinChunk = 128;     // automatic plans never cut finer
// Automatic chunk sizes are multiples of kAttnChunkGranule keys (the pipelined kernel's four 16-key teams
// take equal shares). The pipelined row's own one-wave target of one block a CU (head_dim > 128, f16 / bf16
// KV: plan_attention_call) takes whole 16-key groups instead, so that the plan fills every CU: B = 1,
// context 32768, 4 blocks a chunk on 132 CUs gives 33 chunks of 1008 keys (132 blocks) where 64 gives 32 of
// 1024 (128 blocks, 4 CUs idle). Measured on an H100 (24x4x256 bf16, pages 16 / 544 and the head-major
// pool): 0.987-0.992x the time; where a CU holds two blocks (32x8x128 bf16 and fp8; 24x4x256 fp8 at one
// block a CU) the extra chunk took 0.999-1.009x (capabilities/evidence/attention-sm_90-chunk-granule.json).
constexpr int64_t kAttnChunkGranule = 64;
constexpr int64_t kAttnFineChunkGranule = 16;
constexpr int kAttnBlocksPerCu = 4;        // the largest default block target of any row (workspace bound)
constexpr int64_t kAttnMaxGridBlocks = (int64_t(1) << 31) - 1;
constexpr int64_t kAttnMaxChunks = int64_t(1) << 24;  // chunks a row (the merge's chunk loops are int)

// Query rows per grouped-kernel tile: T * group rows share a KV head; tiles hold 1, 2, 4 or 8 of them
// (at most max_tile, a power of two: the row's kernel may cap it, attention_kernel_max_tile).
inline int attention_q_tile(const AttentionCall& c, int max_tile = 8) {
  int tile = 1;
  while (tile < c.q_tokens * c.group && tile < max_tile) tile *= 2;
  return tile;
}
inline int attention_q_tiles(const AttentionCall& c, int max_tile = 8) {
  const int tile = attention_q_tile(c, max_tile);
  return (c.q_tokens * c.group + tile - 1) / tile;
}

// max_tile: the row's query-tile cap. A smaller cap means more blocks per chunk, so never more chunks:
// the workspace of the default cap (attention_workspace_bytes) bounds every row's. one_wave: the block
// target is the kernel's residency, so the chunk count is rounded down (one wave, no partial second
// one); otherwise the target oversubscribes and is rounded up (attention_kernel_block_target).
// granule: automatic chunk sizes are multiples of it (kAttnChunkGranule, or kAttnFineChunkGranule).
inline Status plan_attention(const AttentionCall& c, int compute_units, const AttentionPlanOptions& opt,
                             AttentionPlan* plan, int max_tile = 8, bool one_wave = false,
                             int64_t granule = kAttnChunkGranule) {
  const int64_t rows = int64_t(c.batch) * c.q_tokens * c.num_q_heads;
  const int64_t units = int64_t(c.batch) * c.num_kv_heads * attention_q_tiles(c, max_tile);  // blocks per chunk
  const int64_t ctx = std::max<int64_t>(c.max_context, 1);
  AttentionPlan p;
  p.rows = rows;
  if (opt.fixed_chunk_size < 0) return Status::invalid("attention: fixed_chunk_size must be >= 0");
  if (opt.blocks_per_cu < 0) return Status::invalid("attention: blocks_per_cu must be >= 0");
  if (opt.fixed_chunk_size > 0) {
    p.chunk_size = opt.fixed_chunk_size;
  } else {
    const int64_t target =
        int64_t(opt.blocks_per_cu ? opt.blocks_per_cu : kAttnBlocksPerCu) * std::max(compute_units, 1);
    const int64_t fit = one_wave ? std::max<int64_t>(target / units, 1) : (target + units - 1) / units;
    int64_t wanted = units >= target && !opt.force_split ? 1 : fit;
    if (opt.force_split) wanted = std::max<int64_t>(wanted, 2);
    int64_t size = (ctx + wanted - 1) / wanted;
    size = std::max(kAttnMinChunk, (size + granule - 1) / granule * granule);
    if (opt.force_split && size >= ctx) size = std::max<int64_t>(1, (ctx + 1) / 2);
    p.chunk_size = size;
  }
  const int64_t chunks = ctx / p.chunk_size + (ctx % p.chunk_size != 0);  // (no overflow at any chunk size)
  if (chunks > kAttnMaxChunks)
    return Status::unsupported("attention: split-KV plan needs " + attn_detail::num(chunks) + " chunks a row (> " +
                               attn_detail::num(kAttnMaxChunks) + "): raise fixed_chunk_size");
  if (chunks * rows > kAttnMaxGridBlocks)
    return Status::unsupported("attention: split-KV plan needs " + attn_detail::num(chunks * rows) +
                               " blocks (> 2^31 - 1): raise fixed_chunk_size");
  p.num_chunks = static_cast<int>(std::max<int64_t>(chunks, 1));
  *plan = p;
  return Status::success();
}

// Workspace of a split plan: fp32 partial outputs [rows, chunks, D], then fp32 partial LSEs [rows, chunks].
inline size_t attention_plan_workspace_bytes(const AttentionPlan& p, int head_dim) {
  const size_t n = static_cast<size_t>(p.rows) * static_cast<size_t>(p.num_chunks);
  return n * static_cast<size_t>(head_dim) * sizeof(float) + n * sizeof(float);
}

// Workspace a split-KV row needs for this call on a device with `compute_units` CUs (0 on error).
inline size_t attention_workspace_bytes(const AttentionParams& params, int compute_units,
                                        const AttentionPlanOptions& opt = {}) {
  AttentionCall call;
  AttentionPlan plan;
  if (!validate_attention(params, &call).ok() || !plan_attention(call, compute_units, opt, &plan).ok()) return 0;
  return attention_plan_workspace_bytes(plan, params.head_dim);
}

}  // namespace dcukern
