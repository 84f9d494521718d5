// fp32 exponentials, logarithms, reciprocal and rsqrt for device code through compiler builtins that lower to
// hardware instructions on AMD (v_exp_f32, v_log_f32, v_sqrt_f32: no call into the device libraries,
// which gfx11 builds lack here) and to the CUDA math functions on NVIDIA. Deterministic: the same input
// gives the same bits wherever the code is inlined.
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

// 2^x with results below 2^-126 flushed to zero: one instruction on NVIDIA (exp2f adds a range fix-up
// around it); on AMD the same as device_exp2. For softmax weights relative to a running maximum, where a
// weight below 2^-126 of the largest is invisible in any output.
__device__ __forceinline__ float device_exp2_ftz(float x) {
#if DCUKERN_PLATFORM_HIP
  return __builtin_exp2f(x);
#elif DCUKERN_PLATFORM_SIM
  return x < -126.0f ? 0.0f : exp2f(x);
#else
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
#endif
}

__device__ __forceinline__ float device_log2(float x) {
#if DCUKERN_PLATFORM_HIP
  return __builtin_log2f(x);
#else
  return log2f(x);
#endif
}

__device__ __forceinline__ float device_exp(float x) {
#if DCUKERN_PLATFORM_HIP
  return __builtin_expf(x);
#else
  return expf(x);
#endif
}

__device__ __forceinline__ float device_log(float x) {
#if DCUKERN_PLATFORM_HIP
  return __builtin_logf(x);
#else
  return logf(x);
#endif
}

// 1 / x from the hardware reciprocal (about 1 ulp; no IEEE division sequence). 0 for |x| = inf.
__device__ __forceinline__ float device_fast_rcp(float x) {
#if DCUKERN_PLATFORM_HIP
  return __builtin_amdgcn_rcpf(x);
#else
  return __fdividef(1.0f, x);
#endif
}

__device__ __forceinline__ float device_rsqrt(float x) {
#if DCUKERN_PLATFORM_HIP
  return 1.0f / __builtin_sqrtf(x);
#else
  return rsqrtf(x);
#endif
}

}  // namespace dcukern
