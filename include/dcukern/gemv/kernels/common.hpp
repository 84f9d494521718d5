// Shared pieces of the GEMV kernels: the argument block and the dot-product policies that turn two
// 16-byte vectors (8 elements each) into an fp32 partial sum.
#pragma once
#include <cstdint>

#include "dcukern/core/dtype.hpp"
#include "dcukern/platform/dependent_launch.hpp"
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

// Bytes at the head of a W row that a streaming kernel's block asks L2 for before its dependent-launch wait.
constexpr int kWPrefetchBytes = 2048;

// Where a dependent-launch GEMV kernel lets the next kernel on the stream launch (its blocks then start as
// this one's free their SMs, and wait for it to end in their own prologue): at the start of every block,
// after a block's last loads of W, or not at all (the next kernel launches when this one ends).
enum class NextLaunch : uint8_t { at_start, after_loads, at_exit };

// Prologue of the kernels launched as dependent launches (rowwise, mma; gemv/launch.hpp): the head of W
// row m into L2 (a hint, for the calling lane's row; W is read only, and L2 shows whatever the kernel
// before wrote anyway), then wait for the kernel before (it may write x, or still read y).
// Rows are 16-byte aligned with K * 2 bytes a multiple of 16 (the streaming rows' contract).
template <int kPrefetch, NextLaunch kNext>
__device__ __forceinline__ void begin_gemv(const GemvArgs& a, int64_t m, bool prefetch) {
  if (kPrefetch > 0 && prefetch && m < a.m && a.k > 0) {
    const int64_t row_bytes = a.k * int64_t(sizeof(uint16_t));
    prefetch_l2_bulk(a.w + m * a.ldw, static_cast<uint32_t>(row_bytes < kPrefetch ? row_bytes : kPrefetch));
  }
  grid_dependency_wait();
  if constexpr (kNext == NextLaunch::at_start) grid_dependents_launch();
}
// After a block's last loads of W.
template <NextLaunch kNext>
__device__ __forceinline__ void gemv_loads_done() {
  if constexpr (kNext == NextLaunch::after_loads) grid_dependents_launch();
}

}  // namespace dcukern::gemv_detail
