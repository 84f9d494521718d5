// Wave-level reductions, correct for wave64 and wave32 (the width is the device pass's kWarpSize).
#pragma once
#include "dcukern/platform/isa.hpp"
#include "dcukern/platform/runtime.hpp"

namespace dcukern {

__device__ __forceinline__ float shfl_xor(float v, int mask) {
#if DCUKERN_PLATFORM_HIP
  return __shfl_xor(v, mask, kWarpSize);
#else
  return __shfl_xor_sync(0xffffffffu, v, mask, kWarpSize);
#endif
}

// Sum over the whole wave; every lane receives the result.
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int mask = kWarpSize / 2; mask > 0; mask /= 2) v += shfl_xor(v, mask);
  return v;
}

// Maximum over the whole wave; every lane receives the result.
__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int mask = kWarpSize / 2; mask > 0; mask /= 2) {
    const float o = shfl_xor(v, mask);
    v = o > v ? o : v;
  }
  return v;
}

__device__ __forceinline__ int lane_id() { return static_cast<int>(threadIdx.x) % kWarpSize; }

// Device-side abort for code compiled out on this target (never selected there by the registry).
__device__ __forceinline__ void unreachable_on_this_target() {
#if DCUKERN_PLATFORM_HIP
  __builtin_trap();
#else
  __trap();
#endif
}

}  // namespace dcukern
