// The sampling kernel variants. A capability row names one; sampling/launch.hpp maps each to its kernel.
#pragma once
#include <cstdint>

#include "dcukern/registry/features.hpp"

namespace dcukern {

enum class SamplingKernel : uint8_t {
  block,      // one block per row, scalar loads: any valid call
  block_vec,  // one block per row, 16-byte loads: aligned rows, V and stride multiples of 16 bytes
  split,      // one block per tile of a row, the row's last block draws (workspace), scalar loads
  split_vec,  // one block per tile of a row, the row's last block draws (workspace), 16-byte loads
  stream_vec,  // one block per row streams its tiles and draws (workspace: rows-finished count), 16-byte loads
  unfiltered_vec,  // rows without filters: one block per tile, the row's last block draws (workspace), 16-byte loads
  top_p_vec,  // rows whose only filter is top-p: proposals, then a check kernel (workspace), 16-byte loads
  min_p_vec,  // rows whose only filter is min-p: the row's maximum, then a draw over kept weights (workspace)
};

// Instruction features a kernel's code uses: none (portable HIP / CUDA only).
constexpr FeatureSet sampling_kernel_isa(SamplingKernel) { return 0; }

// The row-transform kernels (softmax, top_k_mask_logits, top_k / top_p renorm): one block per row.
enum class TransformKernel : uint8_t {
  block,      // scalar loads: any valid call
  block_vec,  // 16-byte loads: aligned input rows, V and stride multiples of 16 bytes
};
constexpr FeatureSet transform_kernel_isa(TransformKernel) { return 0; }

}  // namespace dcukern
