// Wave-level reductions, correct for wave64 and wave32 (the width is the device pass's kWarpSize).
#pragma once
#include <cstdint>

#include "dcukern/platform/isa.hpp"
#include "dcukern/platform/runtime.hpp"

namespace dcukern {

// Orders the shared-memory accesses of the lanes of one wave: a wave-level barrier with a release and an
// acquire fence.
__device__ __forceinline__ void wave_sync() {
#if DCUKERN_PLATFORM_HIP
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "wavefront");
  __builtin_amdgcn_wave_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "wavefront");
#else
  __syncwarp();
#endif
}

// Shuffles of any 4- or 8-byte value, moved as 32-bit words. One spelling per platform for the three
// kinds (xor partner, lane below, given lane).
#if DCUKERN_PLATFORM_HIP
#define DCUKERN_WAVE_SHFL(kind, w, arg) __shfl##kind(w, arg, kWarpSize)
#else
#define DCUKERN_WAVE_SHFL(kind, w, arg) __shfl##kind##_sync(0xffffffffu, w, arg, kWarpSize)
#endif
__device__ __forceinline__ uint32_t shfl_xor_word(uint32_t w, int mask) { return DCUKERN_WAVE_SHFL(_xor, w, mask); }
__device__ __forceinline__ uint32_t shfl_up_word(uint32_t w, int delta) { return DCUKERN_WAVE_SHFL(_up, w, delta); }
__device__ __forceinline__ uint32_t shfl_word(uint32_t w, int src_lane) { return DCUKERN_WAVE_SHFL(, w, src_lane); }
#undef DCUKERN_WAVE_SHFL
__device__ __forceinline__ float shfl_xor(float v, int mask) {
  return __uint_as_float(shfl_xor_word(__float_as_uint(v), mask));
}

__device__ __forceinline__ int lane_id() { return static_cast<int>(threadIdx.x) % kWarpSize; }

template <class T, class Move>
__device__ __forceinline__ T shfl_words(T v, Move move) {
  static_assert(sizeof(T) % 4 == 0 && sizeof(T) <= 8, "4- or 8-byte values");
  uint32_t w[sizeof(T) / 4];
  __builtin_memcpy(w, &v, sizeof(T));
#pragma unroll
  for (int i = 0; i < int(sizeof(T) / 4); ++i) w[i] = move(w[i]);
  __builtin_memcpy(&v, w, sizeof(T));
  return v;
}
template <class T>
__device__ __forceinline__ T shfl_xor_any(T v, int mask) {
  return shfl_words(v, [mask](uint32_t w) { return shfl_xor_word(w, mask); });
}
// Inclusive prefix sum over the wave's lanes (lane order; a fixed order, so float sums are deterministic).
template <class T>
__device__ __forceinline__ T wave_inclusive_sum(T v) {
#pragma unroll
  for (int d = 1; d < kWarpSize; d *= 2) {
    const T up = shfl_words(v, [d](uint32_t w) { return shfl_up_word(w, d); });
    if (lane_id() >= d) v += up;
  }
  return v;
}
// Lane src_lane's value, every lane.
template <class T>
__device__ __forceinline__ T wave_broadcast(T v, int src_lane) {
  return shfl_words(v, [src_lane](uint32_t w) { return shfl_word(w, src_lane); });
}
// The value of the lane below (lane - 1), lane 0's own.
template <class T>
__device__ __forceinline__ T wave_from_lane_below(T v) {
  return shfl_words(v, [](uint32_t w) { return shfl_up_word(w, 1); });
}
// The lanes where pred holds, bit i for lane i (64 bits: wave64 too).
__device__ __forceinline__ uint64_t wave_ballot(bool pred) {
#if DCUKERN_PLATFORM_HIP
  return uint64_t(__ballot(pred));
#else
  return uint64_t(__ballot_sync(0xffffffffu, pred));
#endif
}
// Slots from a shared counter for n items per lane, with one atomic per wave instead of one per item:
// returns this lane's first slot (its items take [first, first + n)). Every lane of the wave calls it;
// the waves' ranges follow the order their atomics ran in.
__device__ __forceinline__ uint32_t wave_reserve(uint32_t* counter, uint32_t n) {
  const uint32_t through = wave_inclusive_sum(n);
  const uint32_t total = shfl_word(through, kWarpSize - 1);
  uint32_t first = 0;
  if (total != 0 && lane_id() == kWarpSize - 1) first = atomicAdd(counter, total);
  return shfl_word(first, kWarpSize - 1) + through - n;
}

// Sum / minimum / maximum over the wave; every lane receives the same result (the XOR butterfly combines
// the same two operands in both partner lanes).
template <class T, class Op>
__device__ __forceinline__ T wave_all_reduce(T v, Op op) {
#pragma unroll
  for (int mask = kWarpSize / 2; mask > 0; mask /= 2) v = op(v, shfl_xor_any(v, mask));
  return v;
}
template <class T>
__device__ __forceinline__ T wave_all_sum(T v) {
  return wave_all_reduce(v, [](T a, T b) { return a + b; });
}
template <class T>
__device__ __forceinline__ T wave_all_min(T v) {
  return wave_all_reduce(v, [](T a, T b) { return b < a ? b : a; });
}
template <class T>
__device__ __forceinline__ T wave_all_max(T v) {
  return wave_all_reduce(v, [](T a, T b) { return b > a ? b : a; });
}

// Maximum of a 32-bit word over the wave, every lane: one redux instruction on sm_80 and later.
__device__ __forceinline__ uint32_t wave_max_word(uint32_t v) {
#if !DCUKERN_PLATFORM_HIP && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  return __reduce_max_sync(0xffffffffu, v);
#else
  return wave_all_max(v);
#endif
}

// The float forms the kernels call.
__device__ __forceinline__ float warp_sum(float v) { return wave_all_sum(v); }
__device__ __forceinline__ float warp_max(float v) { return wave_all_max(v); }

// Device-side abort for code compiled out on this target (never selected there by the registry).
__device__ __forceinline__ void unreachable_on_this_target() {
#if DCUKERN_PLATFORM_HIP
  __builtin_trap();
#else
  __trap();
#endif
}

}  // namespace dcukern
