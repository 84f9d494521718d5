// Base-2 exponential and logarithm for device code, lowered to hardware instructions on every target
// (v_exp_f32 / v_log_f32 on AMD without the device libraries, which gfx11 builds lack here; exp2f /
// log2f on NVIDIA). Deterministic: the same input gives the same bits wherever the code is inlined.
#pragma once
#include "dcukern/platform/runtime.hpp"

namespace dcukern {

__device__ __forceinline__ float device_exp2(float x) {
#if DCUKERN_PLATFORM_HIP
  return __builtin_exp2f(x);
#else
  return exp2f(x);
#endif
}

__device__ __forceinline__ float device_log2(float x) {
#if DCUKERN_PLATFORM_HIP
  return __builtin_log2f(x);
#else
  return log2f(x);
#endif
}

}  // namespace dcukern
