// The GDN kernel variants. A capability row names one; gdn/launch.hpp maps each to its kernel. All are
// portable HIP/CUDA (no target instruction), so none needs an ISA feature.
#pragma once
#include <cstdint>

#include "dcukern/registry/features.hpp"

namespace dcukern {

enum class GdnKernel : uint8_t {
  generic,   // any valid call: one block per (sequence, value head), state updated in the pool per token
  tiled_kv,    // [K, V] layout, K in {64, 128, 256}: 32-column state tile in registers, 16-byte loads along V
  tiled_vk,    // [V, K] layout, K in {64, 128, 256}: 32-row state tile in registers, 16-byte loads along K
  tiled_kv16,  // tiled_kv with 16-column tiles: twice the blocks, half the state per thread
  tiled_vk16,  // tiled_vk with 16-row tiles
};

enum class Conv1dKernel : uint8_t {
  generic,      // any valid call: one thread per (sequence, channel), scalar loads
  vec8,         // 8 channels per thread, 16-byte loads of x, weights, state and bias
  vec8_staged,  // vec8's update; lane-consecutive 16-byte state runs through shared memory, weights once a block
  lanes,        // 4 channels a lane, 32 lanes a sequence; lane-consecutive state runs through shared memory
};

// The instruction features a kernel's code uses (a host test checks that its rows need at least these).
constexpr FeatureSet gdn_kernel_isa(GdnKernel) { return 0; }
constexpr FeatureSet conv1d_kernel_isa(Conv1dKernel) { return 0; }

}  // namespace dcukern
