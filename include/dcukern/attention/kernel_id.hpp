// The attention kernel variants. A capability row names one; attention/launch.hpp maps each to its kernels.
#pragma once
#include <cstdint>

#include "dcukern/core/dtype.hpp"
#include "dcukern/registry/features.hpp"

namespace dcukern {

enum class AttentionKernel : uint8_t {
  row,       // one block per query row, all keys of the row (no workspace)
  split_kv,  // one block per (query row, chunk) writing fp32 partials, then the LSE merge kernel
  grouped,        // one block per (query tile of one KV head, sequence): each K/V read serves the tile
  grouped_split,  // grouped, one block per KV chunk, then the LSE merge kernel (one chunk: no merge)
  mma,            // grouped on NVIDIA tensor cores (mma.sync), no workspace
  mma_split,      // mma, one block per KV chunk, then the LSE merge kernel (one chunk: no merge)
  mma_split_pipeline,  // mma_split whose K/V come through a per-warp shared-memory ring (cp.async)
};

constexpr bool attention_kernel_is_pipeline(AttentionKernel k) {
  return k == AttentionKernel::mma_split_pipeline;
}

// Largest query tile (rows sharing a KV head per block) the kernel's launch uses. The grouped kernels take
// at most 4 rows above head_dim 128: a GQA group of 5-8 then runs as two blocks per KV head (each K/V
// vector read twice, the second time mostly from L2) at about half the registers per thread. On the H200
// (sm_90, d9ab41f: capabilities/evidence/attention-sm_90-d9ab41f.json) that made grouped_split
// 1.17-1.76x faster at 24x4x256 over the bench grid; an 8-row tile at head_dim 256 needs 251 registers
// (one block per SM) and spilled on gfx906 and gfx1030.
constexpr int attention_kernel_max_tile(AttentionKernel k, int head_dim) {
  const bool grouped = k == AttentionKernel::grouped || k == AttentionKernel::grouped_split;
  return grouped && head_dim > 128 ? 4 : 8;
}

// How an automatic split plan fills the device for a kernel (AttentionPlanOptions::blocks_per_cu
// overrides the count). The pipelined kernel: its resident blocks per SM, rounded down to one wave (on
// the H200 that beat twice or half the target at B = 1 and 8: capabilities/evidence/attention-sm_90-0bbd077.json).
// attention() asks the runtime for the residency of the instantiation it launches
// (attention_resident_blocks); the values here are sm_90's, for host-only use. The others: 4, above
// their residency (3 for the mma kernel at bf16 head_dim 128), rounded up, as measured at a2a578e
// (capabilities/evidence/attention-sm_90-a2a578e.json).
struct AttentionBlockTarget {
  int blocks_per_cu;  // never above kAttnBlocksPerCu (the workspace query's target)
  bool one_wave;      // blocks_per_cu is the residency: plan_attention rounds the chunk count down
};
constexpr AttentionBlockTarget attention_kernel_block_target(AttentionKernel k, bool fp8_kv, int head_dim) {
  if (attention_kernel_is_pipeline(k)) return {head_dim > 128 && !fp8_kv ? 1 : 2, true};
  return {4, false};
}

// The pipelined kernel's shallow ring (MmaVariant::smem_pipeline_shallow, 3 stages): instantiated for
// fp8 KV only (attention/launch.hpp), at head_dim bounds 128 and 256.
constexpr DType kShallowRingKv = DType::fp8_e4m3;
constexpr int kShallowRingDim = 128;

// Whether the pipelined kernel takes its shallow ring at head_dim 65..128 (4 blocks per SM instead of 2):
// fp8 KV, when the call's unsplit blocks (`items`: sequences x KV heads x query tiles) fill two blocks per
// compute unit. Measured on the H200 against the 6-stage ring (capabilities/evidence/attention-sm_90-3f69d98.json,
// 32x8x128 fp8): 0.74-0.95x the time at B = 64 and 128 (512 and 1024 items), but 1.04-1.38x at B = 32 (256
// items) with context <= 4096 and 1.06x at B = 1, where the one-wave plan cuts twice as many chunks.
// (Measured since and not kept, capabilities/evidence/attention-sm_90-ebf05e5.json: split calls too where the
// shallow ring's plan cuts chunks of >= 4096 positions, 0.99-1.01x.)
constexpr bool attention_shallow_ring(AttentionKernel k, bool fp8_kv, int head_dim, int64_t items, int compute_units) {
  static_assert(kShallowRingKv == DType::fp8_e4m3, "fp8_kv below stands for the shallow ring's dtype");
  return attention_kernel_is_pipeline(k) && fp8_kv && head_dim > kShallowRingDim / 2 && head_dim <= kShallowRingDim &&
         items >= 2 * int64_t(compute_units);
}

// Whether the pipelined kernel takes its shallow ring at head_dim 129..256 with fp8 KV: there the ring
// splits each head over two warps (kMmaHeadSplit), 8 warps a block and 2 blocks an SM, 16 warps an SM
// against the 6-stage ring's 8. It pays where a block has few keys (`keys_per_block`: the plan's chunk
// size, or the context bound of an unsplit call), whose time is the block's fixed work (q staging, the
// teams' merge) that twice the warps share, and costs where it has many (both warps of a team run the
// softmax). Measured on the H200 against the 6-stage ring (24x4x256 fp8, pages 16 and 544;
// capabilities/evidence/attention-sm_90-ebf05e5.json, ab_measured and tried_and_dropped): 0.87-0.94x the time with
// 128-256 keys a block (B = 1-32, contexts 512 and 4096); with 512, 0.97-1.01x at B 8-128 but 1.02-1.05x at
// B = 1 context 32768 (64 chunks of 512); 0.99-1.01x with 2048-4096; 1.01-1.07x with 16K-32K.
constexpr int64_t kShallowWideMaxKeys = 256;
constexpr bool attention_wide_shallow_ring(AttentionKernel k, bool fp8_kv, int head_dim, int64_t keys_per_block) {
  static_assert(kShallowRingKv == DType::fp8_e4m3, "fp8_kv below stands for the shallow ring's dtype");
  return attention_kernel_is_pipeline(k) && fp8_kv && head_dim > kShallowRingDim && head_dim <= 2 * kShallowRingDim &&
         keys_per_block <= kShallowWideMaxKeys;
}

// Whether a split call's merge takes its sliced kernel (attention_merge_sliced_kernel): fewer query rows
// than the device has compute units (one block per row would leave most of them idle) and at least
// kSlicedMergeChunks chunks a row, on devices with 32-lane waves (where the two merge kernels give the
// same bits, so a fixed chunk size stays batch-invariant). Measured on the H200 against the row kernel,
// B = 1 (24-32 rows): 0.86-0.96x the time of the call at context 4096 and 0.92-1.00x at 32768 (32
// chunks), but 1.00-1.12x at context 512 (4 chunks); B >= 8 (192 rows and more) keeps the row kernel (an
// earlier sliced form: 1.00-1.09x there).
constexpr int kSlicedMergeChunks = 16;
constexpr bool attention_sliced_merge(int64_t rows, int chunks, int compute_units, int wave_size) {
  return wave_size == 32 && rows < compute_units && chunks >= kSlicedMergeChunks;
}

// Whether a split call's merge, once its own wait is over, lets the kernel after it on the stream launch
// (a programmatic dependent launch's early trigger, platform/dependent_launch.hpp): where every block of
// the merge fits on the device at once (kMergeResidentBlocks a compute unit), so the next kernel's blocks
// take only what the merge leaves and never delay it. The mma kernels are themselves dependent launches
// (attention/launch.hpp), so back-to-back calls overlap one's merge with the next one's launch. (H200,
// 091deab against the kernels of e27175a: B = 1 context 32768 0.98-1.00x the time, context 512 0.94-0.99x,
// B x context >= 128K 0.985-1.013x, median 1.000: capabilities/evidence/attention-sm_90-091deab.json.)
constexpr int kMergeResidentBlocks = 8;
constexpr bool attention_merge_starts_next(int64_t merge_blocks, int compute_units) {
  return merge_blocks <= int64_t(kMergeResidentBlocks) * compute_units;
}

// The mma kernels need NVIDIA's mma.sync; the others are portable HIP/CUDA.
constexpr FeatureSet attention_kernel_isa(AttentionKernel k) {
  return k == AttentionKernel::mma || k == AttentionKernel::mma_split || attention_kernel_is_pipeline(k)
             ? features(Feature::nv_mma_f16)
             : 0;
}

}  // namespace dcukern
