// Shared pieces of the GEMV kernels: the argument block and the dot-product policies that turn two
// 16-byte vectors (8 elements each) into an fp32 partial sum.
#pragma once
#include <cstdint>

#include "dcukern/core/dtype.hpp"
#include "dcukern/platform/isa.hpp"
#include "dcukern/platform/numeric.hpp"
#include "dcukern/platform/vec.hpp"
#include "dcukern/platform/warp.hpp"

namespace dcukern::gemv_detail {

// Kernel arguments, by value. Strides in elements; 64-bit so that lm_head-sized W never overflows.
struct GemvArgs {
  const uint16_t* x;
  const uint16_t* w;
  const uint16_t* bias;  // nullptr: no bias
  uint16_t* y;
  int n;
  int64_t m, k;
  int64_t ldx, ldw, ldy;
};

template <DType DT>
__device__ __forceinline__ void store_output(const GemvArgs& a, int n, int64_t m, float acc) {
  if (a.bias) acc += to_float<DT>(a.bias[m]);
  a.y[n * a.ldy + m] = from_float<DT>(acc);
}

// Portable: unpack to fp32, fused multiply-add. Any dtype, any target.
template <DType DT>
struct FmaDot {
  static constexpr bool kAvailable = true;
  __device__ __forceinline__ static float dot(const vec16_t& a, const vec16_t& b, float acc) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      float a0, a1, b0, b1;
      unpack2<DT>(vec16_word(a, i), a0, a1);
      unpack2<DT>(vec16_word(b, i), b0, b1);
      acc = fmaf(a0, b0, acc);
      acc = fmaf(a1, b1, acc);
    }
    return acc;
  }
};

// fp16 pairs through v_dot2_f32_f16 (clang may encode it as dot2c / dot2acc where those exist).
template <DType DT>
struct Fdot2Dot {
  static_assert(DT == DType::f16, "v_dot2_f32_f16 takes fp16 operands");
  static constexpr bool kAvailable = DCUKERN_DEVICE_HAS_DOT2_F32_F16;
  __device__ __forceinline__ static float dot(const vec16_t& a, const vec16_t& b, float acc) {
#if DCUKERN_DEVICE_HAS_DOT2_F32_F16
#pragma unroll
    for (int i = 0; i < 4; ++i)
      acc = __builtin_amdgcn_fdot2(__builtin_bit_cast(half2_t, vec16_word(a, i)),
                                   __builtin_bit_cast(half2_t, vec16_word(b, i)), acc, false);
#endif
    return acc;
  }
};

// fp16 pairs through v_dot2c_f32_f16, written as inline asm so the instruction is guaranteed.
template <DType DT>
struct Dot2cDot {
  static_assert(DT == DType::f16, "v_dot2c_f32_f16 takes fp16 operands");
  static constexpr bool kAvailable = DCUKERN_DEVICE_HAS_DOT2C_F32_F16;
  __device__ __forceinline__ static float dot(const vec16_t& a, const vec16_t& b, float acc) {
#if DCUKERN_DEVICE_HAS_DOT2C_F32_F16
#pragma unroll
    for (int i = 0; i < 4; ++i)
      asm volatile("v_dot2c_f32_f16 %0, %1, %2" : "+v"(acc) : "v"(vec16_word(a, i)), "v"(vec16_word(b, i)));
#endif
    return acc;
  }
};

// Wave index across the grid and the number of waves in it (grid-stride loops over rows).
__device__ __forceinline__ int64_t global_wave() {
  return (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / kWarpSize;
}
__device__ __forceinline__ int64_t grid_waves() {
  return static_cast<int64_t>(gridDim.x) * blockDim.x / kWarpSize;
}

}  // namespace dcukern::gemv_detail
