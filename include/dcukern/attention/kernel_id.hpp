// The attention kernel variants. A capability row names one; attention/launch.hpp maps each to its kernels.
#pragma once
#include <cstdint>

#include "dcukern/registry/features.hpp"

namespace dcukern {

enum class AttentionKernel : uint8_t {
  row,       // one block per query row, all keys of the row (no workspace)
  split_kv,  // one block per (query row, chunk) writing fp32 partials, then the LSE merge kernel
  grouped,        // one block per (query tile of one KV head, sequence): each K/V read serves the tile
  grouped_split,  // grouped, one block per KV chunk, then the LSE merge kernel (one chunk: no merge)
  grouped_split_t4,  // grouped_split with query tiles of at most 4 rows
  mma,            // grouped on NVIDIA tensor cores (mma.sync), no workspace
  mma_split,      // mma, one block per KV chunk, then the LSE merge kernel (one chunk: no merge)
  mma_split_sectors,  // mma_split whose lanes sharing a key load contiguous runs (MmaHeadMap)
};

// Largest query tile (rows sharing a KV head per block) the kernel's launch uses.
constexpr int attention_kernel_max_tile(AttentionKernel k) { return k == AttentionKernel::grouped_split_t4 ? 4 : 8; }

// The mma kernels need NVIDIA's mma.sync; the others are portable HIP/CUDA.
constexpr FeatureSet attention_kernel_isa(AttentionKernel k) {
  return k == AttentionKernel::mma || k == AttentionKernel::mma_split || k == AttentionKernel::mma_split_sectors
             ? features(Feature::nv_mma_f16)
             : 0;
}

}  // namespace dcukern
