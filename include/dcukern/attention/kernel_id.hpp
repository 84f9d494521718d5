// The attention kernel variants. A capability row names one; attention/launch.hpp maps each to its kernels.
#pragma once
#include <cstdint>

#include "dcukern/registry/features.hpp"

namespace dcukern {

enum class AttentionKernel : uint8_t {
  row,       // one block per query row, all keys of the row (no workspace)
  split_kv,  // one block per (query row, chunk) writing fp32 partials, then the LSE merge kernel
};

// Both kernels are portable HIP/CUDA: no instruction feature needed.
constexpr FeatureSet attention_kernel_isa(AttentionKernel) { return 0; }

}  // namespace dcukern
