// Element storage and conversions: fp16 and bf16 are held as raw 16-bit words and converted to and
// from fp32 here (bf16 by bit shifts with round-to-nearest-even, which works on every toolchain).
#pragma once
#include <cstdint>

#include "dcukern/core/dtype.hpp"
#include "dcukern/platform/runtime.hpp"
#if DCUKERN_PLATFORM_CUDA
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

namespace dcukern {

#if DCUKERN_PLATFORM_HIP
typedef _Float16 half2_t __attribute__((ext_vector_type(2)));
#endif

__device__ __forceinline__ float bf16_to_float(uint16_t u) { return __uint_as_float(uint32_t(u) << 16); }

__device__ __forceinline__ uint16_t float_to_bf16(float f) {
  const uint32_t u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x40u);  // quiet NaN
  return uint16_t((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

__device__ __forceinline__ float f16_to_float(uint16_t u) {
#if DCUKERN_PLATFORM_HIP || DCUKERN_PLATFORM_SIM
  return static_cast<float>(__builtin_bit_cast(_Float16, u));
#else
  return __half2float(__ushort_as_half(u));
#endif
}

__device__ __forceinline__ uint16_t float_to_f16(float f) {
#if DCUKERN_PLATFORM_HIP || DCUKERN_PLATFORM_SIM
  return __builtin_bit_cast(uint16_t, static_cast<_Float16>(f));
#else
  return __half_as_ushort(__float2half_rn(f));
#endif
}

template <DType DT>
__device__ __forceinline__ float to_float(uint16_t u) {
  static_assert(DT == DType::f16 || DT == DType::bf16, "16-bit float types only");
  if constexpr (DT == DType::f16) return f16_to_float(u);
  else return bf16_to_float(u);
}

template <DType DT>
__device__ __forceinline__ uint16_t from_float(float f) {
  static_assert(DT == DType::f16 || DT == DType::bf16, "16-bit float types only");
  if constexpr (DT == DType::f16) return float_to_f16(f);
  else return float_to_bf16(f);
}

// Two packed elements of a 32-bit word to floats (low half is the lower-addressed element).
template <DType DT>
__device__ __forceinline__ void unpack2(uint32_t w, float& lo, float& hi) {
  if constexpr (DT == DType::bf16) {
    lo = __uint_as_float(w << 16);
    hi = __uint_as_float(w & 0xffff0000u);
  } else {
#if DCUKERN_PLATFORM_HIP
    const half2_t h = __builtin_bit_cast(half2_t, w);
    lo = static_cast<float>(h.x);
    hi = static_cast<float>(h.y);
#elif DCUKERN_PLATFORM_SIM
    lo = f16_to_float(uint16_t(w));
    hi = f16_to_float(uint16_t(w >> 16));
#else
    const float2 f = __half22float2(*reinterpret_cast<const __half2*>(&w));
    lo = f.x;
    hi = f.y;
#endif
  }
}
// Two floats rounded to DT and packed into a 32-bit word (lo in the low half: unpack2's inverse).
template <DType DT>
__device__ __forceinline__ uint32_t pack2(float lo, float hi) {
  return uint32_t(from_float<DT>(lo)) | uint32_t(from_float<DT>(hi)) << 16;
}

// The larger of a and b, or a NaN when either is one (one instruction on sm_80 and later).
__device__ __forceinline__ float fmax_nan(float a, float b) {
#if DCUKERN_PLATFORM_CUDA && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  float r;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
#else
  return a != a || b != b ? a + b : fmaxf(a, b);
#endif
}

// Packed bf16 pairs (32-bit words, low half first), two elements per instruction on CUDA (sm_80 and
// later have bf16x2 max and compares); elsewhere through floats, with the same results.
//   bf16x2_max_nan:  per half, the larger, or a NaN when either is one.
//   bf16x2_at_least: bit 0 when the low half >= t, bit 16 when the high half >= t (t a bf16, widened to
//                    both halves; ordered: a NaN is never >= t).
#if DCUKERN_PLATFORM_CUDA && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
__device__ __forceinline__ __nv_bfloat162 as_bf16x2(uint32_t w) { return *reinterpret_cast<const __nv_bfloat162*>(&w); }
__device__ __forceinline__ uint32_t bf16x2_bits(__nv_bfloat162 v) { return *reinterpret_cast<const uint32_t*>(&v); }
__device__ __forceinline__ uint32_t bf16x2_max_nan(uint32_t a, uint32_t b) {
  return bf16x2_bits(__hmax2_nan(as_bf16x2(a), as_bf16x2(b)));
}
__device__ __forceinline__ uint32_t bf16x2_at_least(uint32_t a, uint32_t t2) {
  return __hge2_mask(as_bf16x2(a), as_bf16x2(t2)) & 0x00010001u;
}
#else
__device__ __forceinline__ uint32_t bf16x2_max_nan(uint32_t a, uint32_t b) {
  float a0, a1, b0, b1;
  unpack2<DType::bf16>(a, a0, a1);
  unpack2<DType::bf16>(b, b0, b1);
  return (__float_as_uint(fmax_nan(a0, b0)) >> 16) | (__float_as_uint(fmax_nan(a1, b1)) & 0xffff0000u);
}
__device__ __forceinline__ uint32_t bf16x2_at_least(uint32_t a, uint32_t t2) {
  float a0, a1, t0, t1;
  unpack2<DType::bf16>(a, a0, a1);
  unpack2<DType::bf16>(t2, t0, t1);
  return (a0 >= t0 ? 1u : 0u) | (a1 >= t1 ? 0x10000u : 0u);
}
#endif

}  // namespace dcukern
